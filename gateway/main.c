/* main.c - sluice-gateway: set up the loop, the HTTP server and the worker pool. */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "../common/clock.h"
#include "../common/conf.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "confcheck.h"
#include "greq.h"
#include "gw.h"
#include "gwcopy.h"
#include "gwimport.h"
#include "notify.h"
#include "peers.h"
#include "pool.h"
#include "reload.h"
#include "route.h"
#include "stats.h"
#include "storeconf.h"
#include "sup.h"
#include "users.h"

/* A daemon started with a closed stdin/stdout/stderr would hand those
 * numbers to sockets; keep 0-2 occupied. Whatever else our parent left
 * open (a socket-activation fd, a test runner's files) must not reach
 * the workers: everything above stderr becomes close-on-exec. */
static void
sane_stdio(void)
{
	int	 fd;

	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		log_warn("close_range");
}

/* Stopping, first phase: no new connections, but the ones already
 * accepted still send their requests and are served (as nginx does);
 * once no connection is left (or the drain time is up) the pool drains. */
static void
drain_check(evutil_socket_t fd, short what, void *arg)
{
	struct gw	*g = arg;

	if (g->g_pool_draining)
		return;
	if (http_server_nconns(g->g_http) > 0 &&
	    clock_mono_ms() < g->g_drain_deadline)
		return;
	g->g_pool_draining = true;
	event_del(g->g_drain_ev);
	sup_drain(g->g_sup);
}

static void
on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
	struct gw	*g = arg;
	struct timeval	 tv = { 0, 50000 };

	if (g->g_stopping) {
		log_warnx("second %s: stopping now", strsignal((int)sig));
		sup_terminate(g->g_sup);
		return;
	}
	g->g_stopping = true;
	g->g_drain_deadline = clock_mono_ms() + g->g_conf.c_sup.drain_timeout_ms;
	log_info("%s: graceful stop (drain up to %llu s; send again to stop "
	    "now)", strsignal((int)sig), (unsigned long long)
	    (g->g_conf.c_sup.drain_timeout_ms / 1000));
	notify_stopping(g);
	http_server_stop_accepting(g->g_http);
	g->g_drain_ev = event_new(g->g_base, -1, EV_PERSIST, drain_check, g);
	if (g->g_drain_ev == NULL)
		fatalx("event_new");
	event_add(g->g_drain_ev, &tv);
	drain_check(-1, 0, g);
}

static void
on_hup(evutil_socket_t sig, short what, void *arg)
{
	struct gw	*g = arg;

	if (!g->g_stopping)
		reload_run(g);
}

static void
on_resize(evutil_socket_t sig, short what, void *arg)
{
	struct gw	*g = arg;

	if (!g->g_stopping)
		sup_resize(g->g_sup, sig == SIGTTIN ? +1 : -1);
}

/* The supervisor's once-a-second maintenance; the watchdog pings only
 * while it runs. */
static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct gw	*g = arg;

	if (g->g_wedge_test && g->g_ready)
		return;		/* SLUICE_FAULT=wedge_gateway: pretend */
	g->g_last_tick_ms = clock_mono_ms();
	sup_timer(g->g_sup);
}

static int
start_tick(struct gw *g)
{
	struct timeval	 tv = { 1, 0 };
	const char	*f = getenv("SLUICE_FAULT");

	g->g_wedge_test = f != NULL && strstr(f, "wedge_gateway") != NULL;
	g->g_last_tick_ms = clock_mono_ms();
	g->g_tick_ev = event_new(g->g_base, -1, EV_PERSIST, on_tick, g);
	return g->g_tick_ev != NULL && event_add(g->g_tick_ev, &tv) == 0 ?
	    0 : -1;
}

static int
add_signal(struct gw *g, unsigned i, int sig, event_callback_fn fn)
{
	g->g_sigs[i] = evsignal_new(g->g_base, sig, fn, g);
	return g->g_sigs[i] != NULL && evsignal_add(g->g_sigs[i], NULL) == 0 ?
	    0 : -1;
}

/* Under systemd socket activation the listening socket is inherited. */
static int
open_listener(struct gw *g)
{
	char	 err[256];
	int	 n = sd_listen_fds(1);

	if (n > 1) {
		log_warnx("expected one socket from systemd, got %d", n);
		return -1;
	}
	if (n == 1) {
		if (http_server_adopt(g->g_http, SD_LISTEN_FDS_START, err,
		    sizeof(err)) == -1) {
			log_warnx("inherited socket: %s", err);
			return -1;
		}
		/* The rule for "listen" holds for a socket systemd passes. */
		if (!gwconf_is_loopback(http_server_addr(g->g_http)) &&
		    g->g_conf.c_api_keys[0] == NULL &&
		    !g->g_conf.c_allow_open_remote) {
			log_warnx("refusing the inherited socket %s: it is not "
			    "loopback and no \"api_keys\" are set",
			    http_server_addr(g->g_http));
			return -1;
		}
	} else if (http_server_listen(g->g_http, g->g_conf.c_listen, err,
	    sizeof(err)) == -1) {
		log_warnx("cannot listen on %s: %s", g->g_conf.c_listen, err);
		return -1;
	}
	log_info("listening on %s", http_server_addr(g->g_http));
	return 0;
}

/* The workers keep their database in state_dir. It is made here (not
 * its parents), so a wrong path fails at start rather than at the first
 * request that needs the database. */
static int
make_state_dir(const char *dir)
{
	struct stat	 st;

	if (mkdir(dir, 0750) == 0) {
		log_info("created the state directory %s", dir);
		return 0;
	}
	if (errno != EEXIST) {
		log_warn("cannot create the state directory %s (state_dir, "
		    "--state-dir)", dir);
		return -1;
	}
	if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		log_warnx("the state directory %s (state_dir, --state-dir) "
		    "exists but is not a directory", dir);
		return -1;
	}
	if (access(dir, R_OK | W_OK | X_OK) == -1) {
		log_warn("the state directory %s (state_dir, --state-dir) is "
		    "not usable", dir);
		return -1;
	}
	return 0;
}

/* Say where the workers' shared database is (without a password). */
static void
note_store(const struct gw_conf *c)
{
	char	*n = storeconf_name(c->c_store_url, c->c_state_dir);

	log_info("the shared database: %s", n);
	free(n);
}

static int
setup(struct gw *g)
{
	g->g_started_ms = clock_mono_ms();
	if (make_state_dir(g->g_conf.c_state_dir) == -1)
		return EX_CONFIG;
	note_store(&g->g_conf);
	if (users_load(g, "") == -1)
		return EX_CONFIG;
	if ((g->g_base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	g->g_http = http_server_new(g->g_base, &g->g_conf.c_http,
	    route_request, route_error_body, g);
	if (g->g_http == NULL || greq_init(g) == -1 || pool_init(g) == -1 ||
	    stats_init(g) == -1)
		return EX_SOFTWARE;
	http_server_on_done(g->g_http, stats_http_done, g);
	if (add_signal(g, 0, SIGTERM, on_stop_signal) == -1 ||
	    add_signal(g, 1, SIGINT, on_stop_signal) == -1 ||
	    add_signal(g, 2, SIGHUP, on_hup) == -1 ||
	    add_signal(g, 3, SIGTTIN, on_resize) == -1 ||
	    add_signal(g, 4, SIGTTOU, on_resize) == -1)
		fatalx("cannot install signal handlers");
	if (start_tick(g) == -1 || notify_init(g) == -1)
		fatalx("cannot set up the maintenance timers");
	if (open_listener(g) == -1)
		return EX_UNAVAILABLE;
	return 0;
}

static void
teardown(struct gw *g)
{
	unsigned	 i;
	sigset_t	 late;

	/* Freeing the signal events restores the default actions; a late
	 * SIGTERM must not kill a gateway that is already exiting, so it
	 * stays blocked (and is dropped at exit). */
	sigemptyset(&late);
	sigaddset(&late, SIGTERM);
	sigaddset(&late, SIGINT);
	sigprocmask(SIG_BLOCK, &late, NULL);

	if (g->g_http != NULL)
		http_server_free(g->g_http);
	peers_free(g);
	greq_shutdown(g);
	pool_free(g);
	stats_free(g);
	notify_free(g);
	if (g->g_tick_ev != NULL)
		event_free(g->g_tick_ev);
	if (g->g_drain_ev != NULL)
		event_free(g->g_drain_ev);
	for (i = 0; i < sizeof(g->g_sigs) / sizeof(g->g_sigs[0]); i++)
		if (g->g_sigs[i] != NULL)
			event_free(g->g_sigs[i]);
	if (g->g_base != NULL)
		event_base_free(g->g_base);
	users_free(g);
	gwconf_free(&g->g_conf);
}

/*
 * A large chat body's buffers (the body, its messages, the REQ_START
 * frame: hundreds of KB each) are above glibc's default mmap threshold
 * or make the heap's top shrink when freed, so each such request
 * faulted its memory in afresh: for a 1,000-message body that was more
 * time than parsing it (bench/PROFILE.md, issue 20). Chunks up to 1 MiB
 * come from the heap and up to 4 MiB of free top is kept for the next
 * request.
 */
static void
heap_keep(void)
{
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
}

int
main(int argc, char **argv)
{
	struct gw	 g;
	char		 err[CONF_ERRLEN];
	int		 r;

	memset(&g, 0, sizeof(g));
	heap_keep();
	sane_stdio();
	log_init(LOG_LVL_INFO);
	log_procinit("gateway");
	if ((r = gwconf_args(&g.g_conf, argc, argv)) != 0) {
		gwconf_free(&g.g_conf);
		return r > 0 ? 0 : EX_USAGE;
	}
	log_init(g.g_conf.c_log_level);
	if (g.g_conf.c_copy_from != NULL) {	/* no configuration needed */
		r = gwcopy_run(&g.g_conf);
		gwconf_free(&g.g_conf);
		return r;
	}
	if (gwconf_load(&g.g_conf, err) == -1) {
		log_warnx("%s", err);
		gwconf_free(&g.g_conf);
		return EX_CONFIG;
	}
	log_init(g.g_conf.c_log_level);	/* sluice.json may set log_level */
	g.g_argc = argc;
	g.g_argv = argv;
	/* The worker imports, exports or backfills; nothing is served.
	 * An export or a backfill reads a database that must be there
	 * already. */
	if (g.g_conf.c_import_dir != NULL || g.g_conf.c_export_dir != NULL ||
	    g.g_conf.c_backfill_ep != NULL) {
		r = g.g_conf.c_import_dir != NULL &&
		    make_state_dir(g.g_conf.c_state_dir) == -1 ? EX_CONFIG :
		    gwimport_run(&g.g_conf);
		gwconf_free(&g.g_conf);
		return r;
	}
	if (g.g_conf.c_check_only) {
		r = confcheck_run(&g.g_conf, NULL);
		gwconf_free(&g.g_conf);
		return r;
	}
	if (wflags_open_log(&g.g_conf) == -1) {
		gwconf_free(&g.g_conf);
		return EX_CANTCREAT;
	}
	wflags_note(&g.g_conf);
	signal(SIGPIPE, SIG_IGN);
	if ((r = setup(&g)) == 0) {
		pool_start(&g);
		event_base_dispatch(g.g_base);
		log_info("stopped after %llu requests",
		    (unsigned long long)g.g_cnt.gc_requests);
	}
	teardown(&g);
	return r;
}
