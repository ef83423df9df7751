/* storeconf.h - the "store" setting: where the workers' shared database is (a PostgreSQL URL, or SQLite in state_dir). */
#ifndef SLUICE_STORECONF_H
#define SLUICE_STORECONF_H

#include <jansson.h>

#include "../common/conf.h"

/* The "store" object v (a member of the settings object parent, in
 * jf): {"url": "postgresql://..."} sets *url (freed with xfree_secret:
 * it may hold a password); {"url": null} or {} sets it back to NULL
 * (SQLite in state_dir). Returns 0, or -1 with err "file:line:col:
 * message"; *url is unchanged on an error. */
int	storeconf_json(char **url, const struct jfile *jf, json_t *parent,
	    json_t *v, char err[CONF_ERRLEN]);

/* --store URL: sets *url. A password in it is refused (every user of
 * the machine can read a command line in /proc/PID/cmdline): 0, or -1
 * after a message on stderr saying where a password goes instead. */
int	storeconf_flag(char **url, const char *arg);

/* A store URL given on the command line (what names it: "--store",
 * "--copy-store: the FROM URL") must not hold a password, which every
 * user of the machine can read in /proc/PID/cmdline: 0, or -1 after
 * saying so on stderr with where the password goes instead, and hint
 * (NULL: none) after that. */
int	storeconf_no_password(const char *what, const char *url,
	    const char *hint);

/* What names the store in logs: "PostgreSQL postgresql://ann@db/x"
 * (no password) or "SQLite <state_dir>/sluice.db". Caller frees. */
char	*storeconf_name(const char *url, const char *state_dir);

#endif
