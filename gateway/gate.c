/* gate.c - the global request limit (--concurrency): beyond N, requests wait in order. */
#include <stdlib.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "../common/xmem.h"
#include "gate.h"

struct gate_waiter {
	TAILQ_ENTRY(gate_waiter) gw_entry;
	struct gate		*gw_gate;
	void			*gw_owner;
	gate_fn			 gw_fn;
	struct event		*gw_timer;
};

TAILQ_HEAD(waiters, gate_waiter);

struct gate {
	struct event_base	*g_base;
	unsigned		 g_limit;
	uint64_t		 g_timeout_ms;
	unsigned		 g_active;
	unsigned		 g_nwait;
	struct waiters		 g_wait;
};

struct gate *
gate_new(struct event_base *base, unsigned limit, uint64_t timeout_ms)
{
	struct gate	*g = xcalloc(1, sizeof(*g));

	g->g_base = base;
	g->g_limit = limit;
	g->g_timeout_ms = timeout_ms;
	TAILQ_INIT(&g->g_wait);
	return g;
}

static void
forget(struct gate *g, struct gate_waiter *w)
{
	TAILQ_REMOVE(&g->g_wait, w, gw_entry);
	g->g_nwait--;
	event_free(w->gw_timer);
	free(w);
}

void
gate_free(struct gate *g)
{
	if (g == NULL)
		return;
	while (!TAILQ_EMPTY(&g->g_wait))
		forget(g, TAILQ_FIRST(&g->g_wait));
	free(g);
}

static void
timed_out(evutil_socket_t fd, short what, void *arg)
{
	struct gate_waiter	*w = arg;
	void			*owner = w->gw_owner;
	gate_fn			 fn = w->gw_fn;

	forget(w->gw_gate, w);
	fn(owner, false);
}

/* Admit waiters while there is room. */
static void
admit(struct gate *g)
{
	struct gate_waiter	*w;
	void			*owner;
	gate_fn			 fn;

	while ((w = TAILQ_FIRST(&g->g_wait)) != NULL &&
	    (g->g_limit == 0 || g->g_active < g->g_limit)) {
		owner = w->gw_owner;
		fn = w->gw_fn;
		forget(g, w);
		g->g_active++;
		fn(owner, true);
	}
}

void
gate_set(struct gate *g, unsigned limit, uint64_t timeout_ms)
{
	g->g_limit = limit;
	g->g_timeout_ms = timeout_ms;
	admit(g);
}

bool
gate_enter(struct gate *g, void *owner, gate_fn fn, struct gate_waiter **wp)
{
	struct gate_waiter	*w;
	struct timeval		 tv = { (time_t)(g->g_timeout_ms / 1000),
				    (suseconds_t)(g->g_timeout_ms % 1000) * 1000 };

	*wp = NULL;
	if (TAILQ_EMPTY(&g->g_wait) &&
	    (g->g_limit == 0 || g->g_active < g->g_limit)) {
		g->g_active++;
		return true;
	}
	w = xcalloc(1, sizeof(*w));
	w->gw_gate = g;
	w->gw_owner = owner;
	w->gw_fn = fn;
	w->gw_timer = evtimer_new(g->g_base, timed_out, w);
	if (w->gw_timer == NULL)
		abort();
	evtimer_add(w->gw_timer, &tv);
	TAILQ_INSERT_TAIL(&g->g_wait, w, gw_entry);
	g->g_nwait++;
	*wp = w;
	return false;
}

void
gate_cancel(struct gate *g, struct gate_waiter *w)
{
	if (w != NULL)
		forget(g, w);
}

void
gate_leave(struct gate *g)
{
	if (g->g_active > 0)
		g->g_active--;
	admit(g);
}

unsigned
gate_active(const struct gate *g)
{
	return g->g_active;
}

unsigned
gate_waiting(const struct gate *g)
{
	return g->g_nwait;
}
