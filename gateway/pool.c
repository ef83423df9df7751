/* pool.c - the supervisor wired to the real world: fork+exec, signals, timers, channels. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "../common/clock.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "chan.h"
#include "epslots.h"
#include "greq.h"
#include "gw.h"
#include "http.h"
#include "notify.h"
#include "pool.h"
#include "stats.h"
#include "storehealth.h"
#include "sup.h"
#include "wenv.h"

/* The worker's end must not land on fd 3 before the dup2, or the dup2
 * would be a no-op that leaves close-on-exec set. */
static int
child_end(int fd)
{
	int	 nfd;

	if (fd != 3)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 4);
	close(fd);
	return nfd;
}

static int
spawn_attrs(posix_spawnattr_t *at, posix_spawn_file_actions_t *fa, int fd)
{
	sigset_t	 none, def;

	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGCHLD);
	if (posix_spawnattr_init(at) != 0)
		return -1;
	posix_spawnattr_setsigmask(at, &none);
	posix_spawnattr_setsigdefault(at, &def);
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	if (posix_spawn_file_actions_init(fa) != 0)
		return -1;
	posix_spawn_file_actions_adddup2(fa, fd, 3);
	posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
	return 0;
}

/* A worker's command line and the number strings it points into. */
struct wargv {
	char	*wa_argv[32];
	char	 wa_slot[16], wa_max[16], wa_ppid[16];
	char	 wa_cmax[16], wa_cttl[24], wa_ctemp[40];
};

/* The response cache's settings, when it is on; without them the
 * worker never caches. */
static void
cache_argv(const struct gw_conf *c, struct wargv *wa, size_t *n)
{
	char	**v = wa->wa_argv;

	if (!c->c_cache.cc_enabled)
		return;
	snprintf(wa->wa_cmax, sizeof(wa->wa_cmax), "%u",
	    c->c_cache.cc_max_entries);
	snprintf(wa->wa_cttl, sizeof(wa->wa_cttl), "%llu",
	    (unsigned long long)c->c_cache.cc_ttl_min * 60);
	snprintf(wa->wa_ctemp, sizeof(wa->wa_ctemp), "%.17g",
	    c->c_cache.cc_temp);
	v[(*n)++] = "--cache-max";
	v[(*n)++] = wa->wa_cmax;
	v[(*n)++] = "--cache-ttl-s";
	v[(*n)++] = wa->wa_cttl;
	v[(*n)++] = "--cache-temp";
	v[(*n)++] = wa->wa_ctemp;
}

/* Fill wa for a worker in slot under the running configuration. */
static void
worker_argv(struct gw *g, unsigned slot, unsigned maxreq, struct wargv *wa)
{
	const struct gw_conf	*c = &g->g_conf;
	char			**v = wa->wa_argv;
	size_t			 n = 0;

	snprintf(wa->wa_slot, sizeof(wa->wa_slot), "%u", slot);
	snprintf(wa->wa_max, sizeof(wa->wa_max), "%u", maxreq);
	snprintf(wa->wa_ppid, sizeof(wa->wa_ppid), "%d", (int)getpid());
	v[n++] = g->g_worker_bin;
	v[n++] = "--slot";
	v[n++] = wa->wa_slot;
	v[n++] = "--config-dir";
	v[n++] = c->c_config_dir;
	v[n++] = "--user";
	v[n++] = c->c_user;
	v[n++] = "--max-requests";
	v[n++] = wa->wa_max;
	v[n++] = "--parent";
	v[n++] = wa->wa_ppid;
	v[n++] = "--state-dir";
	v[n++] = c->c_state_dir;
	v[n++] = "--db-sync";
	v[n++] = c->c_db_sync_full ? "full" : "normal";
	cache_argv(c, wa, &n);
	if (c->c_log_file != NULL) {
		v[n++] = "--log-file";
		v[n++] = c->c_log_file;
	}
	if (c->c_log_level >= LOG_LVL_DEBUG)
		v[n++] = "--verbose";
	v[n] = NULL;
}

static int
op_spawn(void *arg, unsigned slot, unsigned maxreq, pid_t *pid)
{
	struct gw		*g = arg;
	posix_spawnattr_t	 at;
	posix_spawn_file_actions_t fa;
	struct wargv		 wa;
	struct wenv		 we;
	int			 sv[2], r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair");
		return -1;
	}
	if ((sv[1] = child_end(sv[1])) == -1 ||
	    spawn_attrs(&at, &fa, sv[1]) == -1) {
		log_warn("spawn setup");
		close(sv[0]);
		if (sv[1] != -1)
			close(sv[1]);
		return -1;
	}
	worker_argv(g, slot, maxreq, &wa);
	wenv_build(&we, g->g_conf.c_store_url);
	r = posix_spawn(pid, g->g_worker_bin, &fa, &at, wa.wa_argv,
	    we.we_env);
	wenv_free(&we);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	if (r != 0) {
		errno = r;
		log_warn("spawn %s", g->g_worker_bin);
		close(sv[0]);
		return -1;
	}
	if (slot >= g->g_nchans) {	/* the pool grew (reload, SIGTTIN) */
		g->g_chans = xreallocarray(g->g_chans, slot + 1,
		    sizeof(*g->g_chans));
		memset(&g->g_chans[g->g_nchans], 0, (slot + 1 - g->g_nchans) *
		    sizeof(*g->g_chans));
		g->g_nchans = slot + 1;
	}
	chan_close(g->g_chans[slot]);
	g->g_chans[slot] = chan_new(g->g_base, sv[0], slot, g->g_sup);
	log_debug("worker %u pid %d spawned", slot, (int)*pid);
	return g->g_chans[slot] != NULL ? 0 : -1;
}

static void
op_kill(void *arg, pid_t pid, int sig)
{
	if (pid <= 0)
		return;
	if (kill(pid, sig) == -1 && errno != ESRCH)
		log_warn("kill %d", (int)pid);
	/* A stopped worker (SIGSTOP, job control) keeps SIGTERM pending
	 * until it runs again: wake it so that it dies now, not after
	 * kill_grace (systemd does the same). */
	if (sig == SIGTERM)
		(void)kill(pid, SIGCONT);
}

static int
op_send(void *arg, unsigned slot, const void *frame, size_t len)
{
	struct gw	*g = arg;

	return slot < g->g_nchans ? chan_send(g->g_chans[slot], frame, len) :
	    -1;
}

static void
op_close(void *arg, unsigned slot)
{
	struct gw	*g = arg;

	if (slot < g->g_nchans) {
		chan_close(g->g_chans[slot]);
		g->g_chans[slot] = NULL;
	}
}

static void
op_pause(void *arg, unsigned slot, bool paused)
{
	struct gw	*g = arg;

	if (slot < g->g_nchans)
		chan_pause(g->g_chans[slot], paused);
}

static uint64_t
op_now(void *arg)
{
	return clock_mono_ms();
}

static void
op_arm(void *arg, uint64_t at)
{
	struct gw	*g = arg;
	uint64_t	 t = clock_mono_ms(), d = at > t ? at - t : 0;
	struct timeval	 tv = { (time_t)(d / 1000), (suseconds_t)(d % 1000) * 1000 };

	if (at == 0)
		evtimer_del(g->g_sup_timer);
	else
		evtimer_add(g->g_sup_timer, &tv);
}

static void
op_event(void *arg, enum sup_event ev)
{
	struct gw	*g = arg;

	if (ev == SUP_EV_READY) {
		g->g_ready = true;
		log_info("ready: serving on %s", http_server_addr(g->g_http));
		notify_ready(g);
	} else {
		log_info("all workers stopped");
		event_base_loopbreak(g->g_base);
	}
}

static void
op_exited(void *arg, enum sup_exit cause)
{
	stats_worker_exit(arg, cause);
}

static void
sup_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw	*g = arg;

	sup_timer(g->g_sup);
}

static void
sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct gw	*g = arg;
	pid_t		 pid;
	int		 st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		sup_child_exit(g->g_sup, pid, st);
}

static const struct sup_ops real_ops = {
	op_spawn, op_kill, op_send, op_close, op_pause, op_now, op_arm,
	greq_sup_chunk, greq_sup_done, greq_sup_fail, op_event, op_exited,
	epslots_frame, epslots_freed, greq_sup_cache, storehealth_frame,
};

int
pool_init(struct gw *g)
{
	struct event	*sigchld;

	if (gwconf_worker_path(&g->g_conf, g->g_worker_bin,
	    sizeof(g->g_worker_bin)) == -1)
		return -1;
	g->g_nchans = 2 * g->g_conf.c_sup.max_workers;
	g->g_chans = xcalloc(g->g_nchans, sizeof(*g->g_chans));
	if (epslots_init(g) == -1)
		return -1;
	g->g_sup = sup_new(&g->g_conf.c_sup, &real_ops, g);
	g->g_sup_timer = evtimer_new(g->g_base, sup_timer_cb, g);
	sigchld = evsignal_new(g->g_base, SIGCHLD, sigchld_cb, g);
	g->g_sigchld = sigchld;
	if (g->g_sup_timer == NULL || sigchld == NULL ||
	    evsignal_add(sigchld, NULL) == -1) {
		log_warnx("cannot set up the supervisor events");
		return -1;
	}
	return 0;
}

void
pool_start(struct gw *g)
{
	sup_start(g->g_sup);
}

void
pool_free(struct gw *g)
{
	unsigned	 i;

	for (i = 0; i < g->g_nchans; i++)
		chan_close(g->g_chans[i]);
	free(g->g_chans);
	g->g_chans = NULL;
	sup_free(g->g_sup);
	g->g_sup = NULL;
	epslots_free(g);
	if (g->g_sup_timer != NULL)
		event_free(g->g_sup_timer);
	if (g->g_sigchld != NULL)
		event_free(g->g_sigchld);
	g->g_sup_timer = g->g_sigchld = NULL;
}
