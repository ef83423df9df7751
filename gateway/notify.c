/* notify.c - talking to systemd: readiness, status, reload, stop, watchdog. */
#include <stdio.h>
#include <time.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "../common/clock.h"
#include "../common/log.h"
#include "gw.h"
#include "notify.h"
#include "sup.h"

#define STATUS_EVERY_MS		2000
#define TICK_STALE_MS		3000	/* maintenance silent this long */

static void
send_status(struct gw *g)
{
	struct sup_stats st;
	char		 s[192];

	sup_stats(g->g_sup, &st);
	snprintf(s, sizeof(s), "STATUS=%u busy, %u idle, %u workers, "
	    "%u queued, %llu served%s", st.st_count[W_BUSY] +
	    st.st_count[W_AFTER] + st.st_count[W_CANCELLING],
	    st.st_count[W_IDLE], st.st_live,
	    st.st_queued, (unsigned long long)st.st_served,
	    st.st_degraded ? " (degraded: workers keep crashing)" : "");
	sd_notify(0, s);
}

static void
status_cb(evutil_socket_t fd, short what, void *arg)
{
	send_status(arg);
}

/* Ping only while the supervisor's bookkeeping runs: its maintenance
 * tick must be recent. A wedged loop or supervisor stops the pings and
 * systemd restarts us. */
static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw	*g = arg;

	if (clock_mono_ms() - g->g_last_tick_ms < TICK_STALE_MS)
		sd_notify(0, "WATCHDOG=1");
	else
		log_warnx("supervisor tick is %llu ms old: withholding the "
		    "watchdog ping", (unsigned long long)(clock_mono_ms() -
		    g->g_last_tick_ms));
}

static struct event *
every(struct gw *g, uint64_t ms, event_callback_fn fn)
{
	struct event	*ev = event_new(g->g_base, -1, EV_PERSIST, fn, g);
	struct timeval	 tv = { (time_t)(ms / 1000),
			    (suseconds_t)(ms % 1000) * 1000 };

	if (ev != NULL)
		event_add(ev, &tv);
	return ev;
}

int
notify_init(struct gw *g)
{
	uint64_t	 usec = 0;

	if ((g->g_status_ev = every(g, STATUS_EVERY_MS, status_cb)) == NULL)
		return -1;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		log_info("systemd watchdog: pinging every %llu ms",
		    (unsigned long long)(usec / 2000));
		g->g_watchdog_ev = every(g, usec / 2000 ? usec / 2000 : 1,
		    watchdog_cb);
		if (g->g_watchdog_ev == NULL)
			return -1;
	}
	return 0;
}

void
notify_free(struct gw *g)
{
	if (g->g_status_ev != NULL)
		event_free(g->g_status_ev);
	if (g->g_watchdog_ev != NULL)
		event_free(g->g_watchdog_ev);
	g->g_status_ev = g->g_watchdog_ev = NULL;
}

void
notify_ready(struct gw *g)
{
	sd_notify(0, "READY=1");
	send_status(g);
}

void
notify_reloading(struct gw *g)
{
	struct timespec	 ts;
	char		 s[64];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(s, sizeof(s), "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000);
	sd_notify(0, s);
}

void
notify_stopping(struct gw *g)
{
	sd_notify(0, "STOPPING=1\nSTATUS=draining");
}
