/* reload.c - SIGHUP: read the configuration again, check it, apply it without dropping a request. */
#include <stdlib.h>
#include <string.h>

#include "../common/conf.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "confcheck.h"
#include "gate.h"
#include "greq.h"
#include "gw.h"
#include "http.h"
#include "notify.h"
#include "reload.h"
#include "sup.h"
#include "users.h"

static void
report(const char *line, bool warning)
{
	log_warnx("reload: %s%s", warning ? "warning: " : "", line);
}

/* Two settings that may be NULL are the same. */
static bool
same_str(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/* Settings that only a restart can change keep their running value. */
static void
keep_restart_only(struct gw *g, struct gw_conf *nc)
{
	if (strcmp(nc->c_listen, g->g_conf.c_listen) != 0) {
		log_warnx("reload: the listen address changed (%s -> %s); "
		    "that takes a restart", g->g_conf.c_listen, nc->c_listen);
		free(nc->c_listen);
		nc->c_listen = xstrdup(g->g_conf.c_listen);
	}
	if (strcmp(nc->c_state_dir, g->g_conf.c_state_dir) != 0) {
		log_warnx("reload: state_dir changed; that takes a restart");
		free(nc->c_state_dir);
		nc->c_state_dir = xstrdup(g->g_conf.c_state_dir);
	}
	if (!same_str(nc->c_store_url, g->g_conf.c_store_url)) {
		log_warnx("reload: the store changed; that takes a restart");
		xfree_secret(nc->c_store_url);
		nc->c_store_url = g->g_conf.c_store_url != NULL ?
		    xstrdup(g->g_conf.c_store_url) : NULL;
	}
}

static void
apply(struct gw *g, struct gw_conf *nc)
{
	keep_restart_only(g, nc);
	gwconf_free(&g->g_conf);
	g->g_conf = *nc;	/* takes the strings */
	memset(nc, 0, sizeof(*nc));
	log_init(g->g_conf.c_log_level);
	(void)wflags_open_log(&g->g_conf);
	http_server_set_limits(g->g_http, &g->g_conf.c_http);
	users_load(g, "reload: ");
	sup_reload(g->g_sup, &g->g_conf.c_sup);
	gate_set(g->g_gate, greq_gate_limit(&g->g_conf),
	    g->g_conf.c_concurrency_timeout_ms);
}

int
reload_run(struct gw *g)
{
	struct gw_conf	 nc;
	char		 err[CONF_ERRLEN];
	int		 r = -1;

	log_info("SIGHUP: reloading the configuration");
	notify_reloading(g);
	if (gwconf_args(&nc, g->g_argc, g->g_argv) != 0)
		log_warnx("reload: the command line no longer parses");
	else if (gwconf_load(&nc, err) == -1)
		log_warnx("reload: %s", err);
	else if (confcheck_run(&nc, report) != 0)
		log_warnx("reload: the configuration has problems (above)");
	else {
		apply(g, &nc);
		r = 0;
	}
	if (r == -1)
		log_warnx("reload refused: still serving with the running "
		    "configuration");
	gwconf_free(&nc);
	notify_ready(g);
	return r;
}
