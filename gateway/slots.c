/* slots.c - per-endpoint concurrency slots the gateway grants to workers, first come first served. */
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../common/xmem.h"
#include "slots.h"

struct party {			/* a holder or a waiter */
	unsigned	 p_wslot;
	pid_t		 p_pid;
	uint64_t	 p_deadline;	/* waiters only */
};

struct endpoint {
	char		*e_name;
	unsigned	 e_limit;
	struct party	*e_hold;
	size_t		 e_nhold;
	struct party	*e_wait;	/* FIFO: index 0 is first */
	size_t		 e_nwait;
};

struct slots {
	struct endpoint	*s_ep;
	size_t		 s_nep;
	slots_grant_fn	 s_grant;
	void		*s_arg;
};

struct slots *
slots_new(slots_grant_fn grant, void *arg)
{
	struct slots	*s = xcalloc(1, sizeof(*s));

	s->s_grant = grant;
	s->s_arg = arg;
	return s;
}

void
slots_free(struct slots *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->s_nep; i++) {
		free(s->s_ep[i].e_name);
		free(s->s_ep[i].e_hold);
		free(s->s_ep[i].e_wait);
	}
	free(s->s_ep);
	free(s);
}

static struct endpoint *
find(struct slots *s, const char *name, bool create)
{
	size_t	 i;

	for (i = 0; i < s->s_nep; i++)
		if (strcmp(s->s_ep[i].e_name, name) == 0)
			return &s->s_ep[i];
	if (!create)
		return NULL;
	s->s_ep = xreallocarray(s->s_ep, s->s_nep + 1, sizeof(*s->s_ep));
	memset(&s->s_ep[s->s_nep], 0, sizeof(s->s_ep[0]));
	s->s_ep[s->s_nep].e_name = xstrdup(name);
	return &s->s_ep[s->s_nep++];
}

static void
push(struct party **v, size_t *n, struct party p)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = p;
}

static void
take(struct party *v, size_t *n, size_t i)
{
	memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
	(*n)--;
}

/* Hand free slots to the waiters in order. */
static void
promote(struct slots *s, struct endpoint *e)
{
	struct party	 p;

	while (e->e_nwait > 0 && e->e_nhold < e->e_limit) {
		p = e->e_wait[0];
		take(e->e_wait, &e->e_nwait, 0);
		push(&e->e_hold, &e->e_nhold, p);
		s->s_grant(s->s_arg, p.p_wslot, p.p_pid, e->e_name, true);
	}
}

void
slots_acquire(struct slots *s, unsigned wslot, pid_t pid, const char *ep,
    unsigned limit, uint64_t now, uint64_t timeout_ms)
{
	struct endpoint	*e = find(s, ep, true);
	struct party	 p = { wslot, pid, now + timeout_ms };

	e->e_limit = limit > 0 ? limit : 1;
	push(&e->e_wait, &e->e_nwait, p);
	if (e->e_nwait > 1 || e->e_nhold >= e->e_limit)
		log_debug("slots: worker %u waits for %s (%zu in use, %zu "
		    "waiting)", wslot, ep, e->e_nhold, e->e_nwait);
	promote(s, e);
}

/* Remove worker (wslot, pid) from v; returns how many went. */
static size_t
remove_party(struct party *v, size_t *n, unsigned wslot, pid_t pid)
{
	size_t	 i, k = 0;

	for (i = *n; i > 0; i--)
		if (v[i - 1].p_wslot == wslot && v[i - 1].p_pid == pid) {
			take(v, n, i - 1);
			k++;
		}
	return k;
}

void
slots_release(struct slots *s, unsigned wslot, pid_t pid, const char *ep)
{
	struct endpoint	*e = find(s, ep, false);
	size_t		 i;

	if (e == NULL)
		return;
	/* One hold at a time: a worker releases what it acquired. */
	for (i = 0; i < e->e_nhold; i++)
		if (e->e_hold[i].p_wslot == wslot && e->e_hold[i].p_pid == pid) {
			take(e->e_hold, &e->e_nhold, i);
			promote(s, e);
			return;
		}
	remove_party(e->e_wait, &e->e_nwait, wslot, pid);
}

unsigned
slots_drop_worker(struct slots *s, unsigned wslot, pid_t pid)
{
	size_t		 i, held = 0;

	for (i = 0; i < s->s_nep; i++) {
		struct endpoint	*e = &s->s_ep[i];

		remove_party(e->e_wait, &e->e_nwait, wslot, pid);
		held += remove_party(e->e_hold, &e->e_nhold, wslot, pid);
		promote(s, e);
	}
	return (unsigned)held;
}

uint64_t
slots_tick(struct slots *s, uint64_t now)
{
	uint64_t	 next = 0;
	size_t		 i, j;

	for (i = 0; i < s->s_nep; i++) {
		struct endpoint	*e = &s->s_ep[i];

		for (j = 0; j < e->e_nwait; ) {
			struct party	 p = e->e_wait[j];

			if (p.p_deadline > now) {
				if (next == 0 || p.p_deadline < next)
					next = p.p_deadline;
				j++;
				continue;
			}
			take(e->e_wait, &e->e_nwait, j);
			s->s_grant(s->s_arg, p.p_wslot, p.p_pid, e->e_name,
			    false);
		}
	}
	return next;
}

void
slots_foreach(const struct slots *s, void (*fn)(void *, const char *,
    unsigned, unsigned), void *arg)
{
	size_t	 i;

	for (i = 0; i < s->s_nep; i++)
		fn(arg, s->s_ep[i].e_name, (unsigned)s->s_ep[i].e_nhold,
		    (unsigned)s->s_ep[i].e_nwait);
}
