/* epslots.c - the per-endpoint slot table wired to the supervisor and a deadline timer. */
#include <stdint.h>
#include <stdlib.h>

#include <event2/event.h>

#include "../common/buf.h"
#include "../common/clock.h"
#include "../common/log.h"
#include "../proto/proto.h"
#include "epslots.h"
#include "gw.h"
#include "slots.h"
#include "sup.h"

/* Waiters' deadlines need a timer of their own: the supervisor's is
 * rearmed for other reasons all the time. */
static void
rearm(struct gw *g)
{
	uint64_t	 next = slots_tick(g->g_slots, clock_mono_ms());
	uint64_t	 now = clock_mono_ms(), d;
	struct timeval	 tv;

	if (next == 0) {
		evtimer_del(g->g_slots_timer);
		return;
	}
	d = next > now ? next - now : 0;
	tv.tv_sec = (time_t)(d / 1000);
	tv.tv_usec = (suseconds_t)(d % 1000) * 1000;
	evtimer_add(g->g_slots_timer, &tv);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	rearm(arg);
}

static void
grant_cb(void *arg, unsigned wslot, pid_t pid, const char *ep, bool granted)
{
	struct gw	*g = arg;

	/* If the worker cannot be told, its channel is broken: the
	 * supervisor buries it and epslots_freed gives the slot back. */
	if (sup_slot_answer(g->g_sup, wslot, pid, ep, granted) == -1)
		log_debug("slots: worker %u gone before its answer for %s",
		    wslot, ep);
	else if (!granted)
		log_info("slots: worker %u waited too long for %s", wslot, ep);
}

int
epslots_init(struct gw *g)
{
	g->g_slots = slots_new(grant_cb, g);
	g->g_slots_timer = evtimer_new(g->g_base, timer_cb, g);
	if (g->g_slots_timer == NULL) {
		log_warnx("cannot set up the slot timer");
		return -1;
	}
	return 0;
}

void
epslots_free(struct gw *g)
{
	slots_free(g->g_slots);
	g->g_slots = NULL;
	if (g->g_slots_timer != NULL)
		event_free(g->g_slots_timer);
	g->g_slots_timer = NULL;
}

void
epslots_frame(void *arg, unsigned wslot, pid_t pid, const struct proto_msg *m)
{
	struct gw		*g = arg;
	const struct proto_slot	*sl = &m->m_u.slot;
	char			*ep;

	if (sl->endpoint.n == 0 || g->g_slots == NULL)
		return;
	ep = str_dup(sl->endpoint);
	if (m->m_type == PROTO_SLOT_ACQUIRE)
		slots_acquire(g->g_slots, wslot, pid, ep, sl->limit,
		    clock_mono_ms(), sl->timeout_ms);
	else
		slots_release(g->g_slots, wslot, pid, ep);
	free(ep);
	rearm(g);
}

void
epslots_freed(void *arg, unsigned wslot, pid_t pid)
{
	struct gw	*g = arg;
	unsigned	 held;

	if (g->g_slots == NULL)
		return;
	if ((held = slots_drop_worker(g->g_slots, wslot, pid)) > 0)
		log_debug("slots: worker %u gave back %u slot%s on leaving",
		    wslot, held, held == 1 ? "" : "s");
	rearm(g);
}
