/* wflags.c - WilmerAI's directory and logging flags (addendum A11.1): the folders they choose and the log file they ask for. */
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/conf.h"
#include "../common/log.h"
#include "../common/logfile.h"
#include "../common/pyfmt.h"
#include "../common/pystr.h"
#include "../common/xmem.h"
#include "gwconf.h"
#include "storeconf.h"
#include "wflags.h"

void
wflags_set(char **dst, const char *v, bool trim)
{
	const char	*p = v;
	size_t		 n = strlen(v);

	pystr_trim(&p, &n);
	if (n == 0)
		return;
	while (trim && n > 0 && (p[n - 1] == '/' || p[n - 1] == '\\'))
		n--;
	free(*dst);
	*dst = xstrndup(p, n);
}

void
wflags_defaults(struct gw_conf *c, void (*set_state)(struct gw_conf *,
    const char *))
{
	const struct gw_wilmer	*w = &c->c_wilmer;
	char			*s;

	if (w->w_public == NULL)
		return;
	if (!w->w_config_given) {
		free(c->c_config_dir);
		c->c_config_dir = xasprintf("%s/Configs", w->w_public);
	}
	s = xasprintf("%s/SqlLiteDBs", w->w_public);
	set_state(c, s);
	free(s);
}

/* How many users the gateway serves. */
static size_t
nusers(const struct gw_conf *c)
{
	size_t	 n = 0;

	while (c->c_users[n] != NULL)
		n++;
	return n;
}

/* --LoggingDirectory with its "<user>" token resolved. */
static char *
log_dir(const struct gw_conf *c)
{
	const char	*d = c->c_wilmer.w_logdir, *t;
	struct buf	 b = BUF_INIT;
	bool		 one = nusers(c) == 1;

	if (strstr(d, "<user>") != NULL && !one)
		log_warnx("the <user> token in --LoggingDirectory is not "
		    "supported with several users; it is removed");
	buf_adds(&b, "");
	while ((t = strstr(d, "<user>")) != NULL) {
		buf_add(&b, d, (size_t)(t - d));
		if (one)
			buf_adds(&b, c->c_users[0]);
		d = t + strlen("<user>");
	}
	buf_adds(&b, d);
	if (!one)
		while (b.b_len > 1 && b.b_data[b.b_len - 1] == '/')
			b.b_data[--b.b_len] = '\0';
	return buf_take(&b);
}

char *
wflags_log_file(const struct gw_conf *c, const struct conf_user *u)
{
	const struct gw_wilmer	*w = &c->c_wilmer;
	char			*d, *f;
	bool			 on = w->w_file_logging;

	if (!on && nusers(c) == 1 && u != NULL)
		on = pyfmt_truthy(json_object_get(u->u_file.jf_root,
		    "useFileLogging"));
	if (!on)
		return NULL;
	if (w->w_logdir != NULL)
		d = log_dir(c);
	else if (w->w_public != NULL)
		d = xasprintf("%s/logs", w->w_public);
	else
		d = xasprintf("%s/logs", c->c_state_dir);
	f = xasprintf("%s/" LOGFILE_NAME, d);
	free(d);
	return f;
}

int
wflags_open_log(const struct gw_conf *c)
{
	const char	*now = logfile_path();

	if (c->c_log_file == NULL) {
		if (now != NULL)
			log_info("file logging ends (was %s)", now);
		logfile_close();
		return 0;
	}
	if (now != NULL && strcmp(now, c->c_log_file) == 0)
		return 0;
	if (logfile_open(c->c_log_file) == -1) {
		log_warn("cannot write the log file %s (--file-logging, "
		    "--LoggingDirectory, useFileLogging)", c->c_log_file);
		return -1;
	}
	log_info("logging to %s too", c->c_log_file);
	return 0;
}

void
wflags_note(const struct gw_conf *c)
{
	char	*db;

	if (c->c_wilmer.w_discussions == NULL)
		return;
	db = storeconf_name(c->c_store_url, c->c_state_dir);
	log_info("--DiscussionDirectory %s: Sluice keeps discussion memory "
	    "in its database (%s); bring WilmerAI's files over with "
	    "--import-wilmer %s", c->c_wilmer.w_discussions, db,
	    c->c_wilmer.w_discussions);
	free(db);
}

void
wflags_free(struct gw_wilmer *w)
{
	free(w->w_public);
	free(w->w_logdir);
	free(w->w_discussions);
	free(w->w_sqlite);
	memset(w, 0, sizeof(*w));
}
