/* sup_pool.c - the supervisor's pool: sizing, starts, idle reaping, reload, drain, the timer. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../common/log.h"
#include "../common/xmem.h"
#include "sup_int.h"

static void	maintain(struct sup *);

void
sup_conf_default(struct sup_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->min_workers = 2;
	c->max_workers = 8;
	c->queue_max = 64;
	c->spawn_timeout_ms = 5000;
	c->hang_timeout_ms = 5000;
	c->cancel_grace_ms = 2000;
	c->kill_grace_ms = 2000;
	c->idle_timeout_ms = 10000;
	c->queue_timeout_ms = 300000;
	c->drain_timeout_ms = 30000;
	c->backoff_min_ms = 100;
	c->backoff_max_ms = 30000;
	c->healthy_after_ms = 1000;
	c->crash_threshold = 10;
	c->crash_window_ms = 60000;
	c->pace_after = 5;
	c->pace_ms = 1000;
}

/* Room for 2 x max_workers slots, keeping the existing ones: while
 * workers of a reloaded configuration start, the old ones still finish
 * their requests in their own slots. */
static void
grow_slots(struct sup *s)
{
	unsigned	 want = 2 * s->s_conf.max_workers, i;

	if (want <= s->s_nw)
		return;
	s->s_w = xreallocarray(s->s_w, want, sizeof(*s->s_w));
	memset(&s->s_w[s->s_nw], 0, (want - s->s_nw) * sizeof(*s->s_w));
	for (i = s->s_nw; i < want; i++)
		s->s_w[i].w_slot = i;
	s->s_nw = want;
}

static void
set_conf(struct sup *s, const struct sup_conf *c)
{
	s->s_conf = *c;
	if (s->s_conf.max_workers == 0)
		s->s_conf.max_workers = 1;
	if (s->s_conf.min_workers > s->s_conf.max_workers)
		s->s_conf.min_workers = s->s_conf.max_workers;
	if (s->s_conf.crash_threshold > CRASH_RING_MAX)
		s->s_conf.crash_threshold = CRASH_RING_MAX;
	grow_slots(s);
}

struct sup *
sup_new(const struct sup_conf *c, const struct sup_ops *ops, void *arg)
{
	struct sup	*s = xcalloc(1, sizeof(*s));

	s->s_ops = *ops;
	s->s_arg = arg;
	s->s_maintain = maintain;
	set_conf(s, c);
	TAILQ_INIT(&s->s_queue);
	s->s_pool = POOL_RUNNING;
	return s;
}

void
sup_free(struct sup *s)
{
	if (s == NULL)
		return;
	free(s->s_w);
	free(s);
}

void
sup_start(struct sup *s)
{
	maintain(s);
}

/* ---- counting ---------------------------------------------------------- */

/* A worker that stays: live, of this generation, not leaving. */
static bool
staying(const struct sup *s, const struct worker *w)
{
	return w_live(w) && w->w_gen == s->s_gen && !w->w_leave;
}

/* The pool's size as sizing rules see it: staying workers only. */
static unsigned
live_current(const struct sup *s)
{
	unsigned	 i, n = 0;

	for (i = 0; i < s->s_nw; i++)
		if (staying(s, &s->s_w[i]))
			n++;
	return n;
}

/* Workers of the pool that died unexpectedly and are not buried yet:
 * their respawn delay is decided at the burial (both the exit and the
 * channel's end seen), so their places stay taken until then. Else the
 * first respawn after each crash would come before any backoff. */
static unsigned
unburied(const struct sup *s)
{
	unsigned	 i, n = 0;

	for (i = 0; i < s->s_nw; i++) {
		const struct worker *w = &s->s_w[i];

		if (w->w_state == W_DEAD && !w_expected(w) &&
		    w->w_gen == s->s_gen && !w->w_leave)
			n++;
	}
	return n;
}

static bool
all_empty(const struct sup *s)
{
	unsigned	 i;

	for (i = 0; i < s->s_nw; i++)
		if (s->s_w[i].w_state != W_EMPTY)
			return false;
	return true;
}

/* ---- sizing ------------------------------------------------------------ */

static unsigned
max_requests_for_spawn(const struct sup *s)
{
	unsigned	 j = 0;

	if (s->s_conf.max_requests == 0)
		return 0;
	if (s->s_conf.max_requests_jitter > 0 &&
	    getrandom(&j, sizeof(j), GRND_NONBLOCK) == sizeof(j))
		j %= s->s_conf.max_requests_jitter + 1;
	else
		j = 0;
	return s->s_conf.max_requests + j;
}

/* Paced starts end once a worker has stayed up (backoff_healthy). */
static void
note_healthy(struct sup *s, uint64_t t)
{
	unsigned	 i;

	for (i = 0; i < s->s_nw && backoff_pacing(s); i++)
		if (w_live(&s->s_w[i]) && s->s_w[i].w_ready_at != 0)
			backoff_healthy(s, s->s_w[i].w_ready_at, t);
}

/* Start workers up to min_workers, and more (up to max_workers) while
 * requests wait with no idle or starting worker for them. */
static void
spawn_needed(struct sup *s)
{
	uint64_t	 t = sup_now(s);
	unsigned	 i, live = live_current(s) + unburied(s), avail = 0;
	long		 need;

	if (s->s_broken)	/* config or version: until a reload */
		return;
	note_healthy(s, t);
	for (i = 0; i < s->s_nw; i++)
		if (staying(s, &s->s_w[i]) && (s->s_w[i].w_state == W_IDLE ||
		    s->s_w[i].w_state == W_SPAWNING))
			avail++;
	need = (long)s->s_conf.min_workers - (long)live;
	if ((long)s->s_nqueued - (long)avail > need)
		need = (long)s->s_nqueued - (long)avail;
	for (i = 0; i < s->s_nw && need > 0 &&
	    live < s->s_conf.max_workers; i++) {
		struct worker	*w = &s->s_w[i];

		if (!backoff_may_spawn(s, t))
			break;
		if (w->w_state != W_EMPTY)
			continue;
		w_spawn(s, w, max_requests_for_spawn(s));
		backoff_started(s, t);
		if (w->w_state == W_SPAWNING) {
			live++;
			need--;
		}
	}
}

/* Above max_workers (after SIGTTOU or a reload): idle workers go now,
 * busy ones after their current request (those past their answer
 * first: they are likely to be free soonest). Never a busy one now. */
static void
trim_excess(struct sup *s)
{
	unsigned	 live = live_current(s), i;
	enum w_state	 pass[3] = { W_IDLE, W_AFTER, W_BUSY };
	size_t		 p;

	for (p = 0; p < 3 && live > s->s_conf.max_workers; p++)
		for (i = 0; i < s->s_nw && live > s->s_conf.max_workers; i++) {
			struct worker	*w = &s->s_w[i];

			if (!staying(s, w) || w->w_state != pass[p])
				continue;
			live--;
			if (w->w_state == W_IDLE)
				w_shutdown(s, w, "scaled down");
			else
				w->w_leave = true;
		}
}

/* Idle for idle_timeout above min_workers: the worker goes. */
static void
reap_idle(struct sup *s, struct worker *w, uint64_t t)
{
	if (w->w_state == W_IDLE &&
	    t - w->w_state_at >= s->s_conf.idle_timeout_ms &&
	    live_current(s) > s->s_conf.min_workers)
		w_shutdown(s, w, "idle");
}

/* ---- stopping ---------------------------------------------------------- */

/* Draining: stop workers that have nothing left to do. */
static void
drain_step(struct sup *s)
{
	unsigned	 i;

	dispatch_pending(s);
	if (s->s_nqueued > 0)
		return;
	for (i = 0; i < s->s_nw; i++) {
		struct worker	*w = &s->s_w[i];

		if (w->w_state == W_IDLE)
			w_shutdown(s, w, "drain");
		else if (w->w_state == W_SPAWNING) {
			w->w_cause = SUP_EXIT_SHUTDOWN;
			w_kill(s, w, "drain");
		}
	}
}

static void
terminate_step(struct sup *s)
{
	unsigned	 i;

	queue_fail_all(s, 503, "the server is shutting down");
	for (i = 0; i < s->s_nw; i++) {
		struct worker	*w = &s->s_w[i];

		if (w->w_state == W_EMPTY || w->w_state == W_KILLING)
			continue;
		w->w_cause = SUP_EXIT_SHUTDOWN;
		if (w->w_state == W_BUSY)
			req_fail(s, w_detach(w), 503,
			    "the server is shutting down");
		w_detach(w);
		w_kill(s, w, "shutdown");
	}
}

/* ---- upkeep ------------------------------------------------------------ */

static uint64_t
next_wake(const struct sup *s)
{
	uint64_t	 at, t = sup_now(s);
	unsigned	 i, live = live_current(s);

	at = queue_wake(s);
	for (i = 0; i < s->s_nw; i++) {
		const struct worker *w = &s->s_w[i];

		at = sooner(at, w_wake(s, w));
		if (w->w_state == W_IDLE && live > s->s_conf.min_workers)
			at = sooner(at, w->w_state_at +
			    s->s_conf.idle_timeout_ms);
	}
	if (s->s_pool == POOL_DRAINING)
		at = sooner(at, s->s_drain_deadline);
	if (s->s_pool == POOL_RUNNING)
		at = sooner(at, backoff_wake(s, t));
	return at == UINT64_MAX ? 0 : at;
}

/* After every event: bring the pool to what its state asks for, then
 * arm the timer for the next thing due. */
static void
maintain(struct sup *s)
{
	switch (s->s_pool) {
	case POOL_RUNNING:
		trim_excess(s);
		dispatch_pending(s);
		spawn_needed(s);
		break;
	case POOL_DRAINING:
		drain_step(s);
		break;
	case POOL_TERMINATING:
		terminate_step(s);
		break;
	case POOL_STOPPED:
		return;
	}
	if (s->s_pool != POOL_RUNNING && all_empty(s) && s->s_nqueued == 0) {
		s->s_pool = POOL_STOPPED;
		s->s_ops.arm_timer(s->s_arg, 0);
		s->s_ops.event(s->s_arg, SUP_EV_STOPPED);
		return;
	}
	/* A deadline already behind us still needs a prompt timer. */
	s->s_ops.arm_timer(s->s_arg, next_wake(s));
}

void
sup_timer(struct sup *s)
{
	uint64_t	 t = sup_now(s);
	unsigned	 i;

	for (i = 0; i < s->s_nw; i++) {
		w_timers(s, &s->s_w[i], t);
		reap_idle(s, &s->s_w[i], t);
	}
	queue_expire(s, t);
	if (s->s_pool == POOL_DRAINING && t >= s->s_drain_deadline) {
		log_warnx("drain timeout: stopping %u busy workers",
		    queue_live(s));
		sup_terminate(s);
		return;
	}
	maintain(s);
}

/* ---- settings and stopping, from outside ------------------------------- */

void
sup_reload(struct sup *s, const struct sup_conf *c)
{
	unsigned	 i;

	if (s->s_pool != POOL_RUNNING)
		return;
	set_conf(s, c);
	s->s_gen++;
	s->s_broken = false;	/* the new binary or config may work */
	for (i = 0; i < s->s_nw; i++)
		if (s->s_w[i].w_state == W_IDLE)
			w_shutdown(s, &s->s_w[i], "reload");
	log_info("reload: pool %u..%u workers; old workers leave after their "
	    "current request", s->s_conf.min_workers, s->s_conf.max_workers);
	maintain(s);
}

void
sup_resize(struct sup *s, int delta)
{
	struct sup_conf	 c = s->s_conf;

	if (delta > 0 && c.max_workers < 4096) {
		c.max_workers++;
		c.min_workers++;
	} else if (delta < 0 && c.max_workers > 1) {
		c.max_workers--;
		if (c.min_workers > 1)
			c.min_workers--;
	} else
		return;
	set_conf(s, &c);
	log_info("pool resized to %u..%u workers", s->s_conf.min_workers,
	    s->s_conf.max_workers);
	maintain(s);
}

const struct sup_conf *
sup_get_conf(const struct sup *s)
{
	return &s->s_conf;
}

void
sup_drain(struct sup *s)
{
	if (s->s_pool != POOL_RUNNING)
		return;
	log_info("draining: %u requests queued, %u workers live",
	    s->s_nqueued, queue_live(s));
	s->s_pool = POOL_DRAINING;
	s->s_drain_deadline = sup_now(s) + s->s_conf.drain_timeout_ms;
	maintain(s);
}

void
sup_terminate(struct sup *s)
{
	if (s->s_pool == POOL_TERMINATING || s->s_pool == POOL_STOPPED)
		return;
	s->s_pool = POOL_TERMINATING;
	maintain(s);
}

/* ---- introspection ----------------------------------------------------- */

void
sup_stats(const struct sup *s, struct sup_stats *st)
{
	unsigned	 i;

	*st = s->s_st;
	memset(st->st_count, 0, sizeof(st->st_count));
	for (i = 0; i < s->s_nw; i++)
		st->st_count[s->s_w[i].w_state]++;
	st->st_live = queue_live(s);
	st->st_queued = s->s_nqueued;
	st->st_degraded = backoff_degraded(s);
	st->st_broken = s->s_broken;
	st->st_pool = s->s_pool;
}

size_t
sup_workers(const struct sup *s, struct sup_winfo *out, size_t max)
{
	uint64_t	 t = sup_now(s);
	size_t		 n = 0;
	unsigned	 i;

	for (i = 0; i < s->s_nw && n < max; i++) {
		const struct worker *w = &s->s_w[i];

		if (w->w_state == W_EMPTY)
			continue;
		out[n++] = (struct sup_winfo){ w->w_slot, w->w_state, w->w_pid,
		    w->w_served, t - w->w_started, w->w_phase,
		    w->w_state == W_BUSY || w->w_state == W_AFTER ?
		    w->w_rqid : "" };
	}
	return n;
}
