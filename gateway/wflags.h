/* wflags.h - WilmerAI's directory and logging flags (addendum A11.1): the folders they choose and the log file they ask for. */
#ifndef SLUICE_WFLAGS_H
#define SLUICE_WFLAGS_H

#include <stdbool.h>

struct conf_user;
struct gw_conf;

/* What the flags said; NULL or false when absent (a blank value counts
 * as absent, as in WilmerAI). */
struct gw_wilmer {
	char	*w_public;	/* --PublicDirectory, without trailing / and \ */
	char	*w_logdir;	/* --LoggingDirectory, stripped */
	char	*w_discussions;	/* --DiscussionDirectory, without trailing / \ */
	char	*w_sqlite;	/* --UserLevelSqlLiteDirectory, the same */
	bool	 w_file_logging;	/* --file-logging */
	bool	 w_config_given;	/* a config folder on the command line */
};

/* Record a directory flag's value (Python-stripped; trim: trailing '/'
 * and '\' removed too) in *dst, unless it is blank. */
void	 wflags_set(char **dst, const char *v, bool trim);

/* The folder defaults --PublicDirectory P gives, after the command
 * line: the configuration in P/Configs unless a folder was given, and
 * P/SqlLiteDBs for state_dir (set_state is called with it; sluice.json
 * may still choose another). */
void	 wflags_defaults(struct gw_conf *c, void (*set_state)(struct gw_conf *,
	    const char *));

/* The log file (A11.1, A11.3), once the users are known: on with
 * --file-logging, or for a single user whose file says useFileLogging
 * (Python truthiness); in --LoggingDirectory (its "<user>" token
 * replaced by the one user, or removed with a warning when there are
 * several), else P/logs, else <state_dir>/logs. Returns the path of
 * the file (caller frees) or NULL when off. */
char	*wflags_log_file(const struct gw_conf *c, const struct conf_user *u);

/* Write the log to c's file from now on (or stop, when it has none);
 * nothing changes when it is the file in use. Returns 0, or -1 (logged)
 * when the file cannot be opened. */
int	 wflags_open_log(const struct gw_conf *c);

/* At start: say where --DiscussionDirectory's discussions are instead
 * (Sluice keeps them in its database). */
void	 wflags_note(const struct gw_conf *c);

void	 wflags_free(struct gw_wilmer *w);

#endif
