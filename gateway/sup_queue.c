/* sup_queue.c - the supervisor's request queue: admission, order, time limits. */
#include <stdio.h>

#include "sup_int.h"

void
req_fail(struct sup *s, struct sup_req *sr, int status, const char *why)
{
	if (sr != NULL)
		s->s_ops.rq_fail(s->s_arg, sr, status, why);
}

void
queue_remove(struct sup *s, struct sup_req *sr)
{
	TAILQ_REMOVE(&s->s_queue, sr, sr_entry);
	sr->sr_queued = false;
	s->s_nqueued--;
}

void
queue_requeue(struct sup *s, struct sup_req *sr)
{
	TAILQ_INSERT_HEAD(&s->s_queue, sr, sr_entry);
	sr->sr_queued = true;
	s->s_nqueued++;
}

struct worker *
queue_pick_idle(const struct sup *s)
{
	struct worker	*best = NULL;
	unsigned	 i;

	/* Most recently idle first: keeps warm workers busy and lets the
	 * others age into idle reaping. */
	for (i = 0; i < s->s_nw; i++) {
		struct worker	*w = &s->s_w[i];

		if (w->w_state == W_IDLE &&
		    (best == NULL || w->w_state_at >= best->w_state_at))
			best = w;
	}
	return best;
}

int
sup_submit(struct sup *s, struct sup_req *sr, int *status, const char **why)
{
	*status = 503;
	sr->sr_slot = -1;
	sr->sr_queued = false;
	sr->sr_attempts = 0;
	if (s->s_pool != POOL_RUNNING) {
		*why = "the server is shutting down";
		return -1;
	}
	if (s->s_broken && queue_live(s) == 0) {
		*why = "no worker can start (configuration or version error; "
		    "see the gateway log)";
		return -1;
	}
	if (s->s_nqueued >= s->s_conf.queue_max && queue_pick_idle(s) == NULL) {
		*why = "all workers are busy and the queue is full";
		return -1;
	}
	sr->sr_queued_at = sup_now(s);
	TAILQ_INSERT_TAIL(&s->s_queue, sr, sr_entry);
	sr->sr_queued = true;
	s->s_nqueued++;
	/* The pool's upkeep dispatches it, or starts a worker for it. */
	s->s_maintain(s);
	return 0;
}

/* Fail one overdue queued request; true if one was found (callbacks may
 * change the queue, so the caller rescans from the head). */
static bool
expire_one(struct sup *s, uint64_t t)
{
	struct sup_req	*sr;
	char		 why[96];

	TAILQ_FOREACH(sr, &s->s_queue, sr_entry) {
		if (sr->sr_deadline != 0 && t >= sr->sr_deadline) {
			queue_remove(s, sr);
			req_fail(s, sr, 504, "the request exceeded its deadline "
			    "while waiting for a worker");
			return true;
		}
		if (t - sr->sr_queued_at >= s->s_conf.queue_timeout_ms) {
			queue_remove(s, sr);
			snprintf(why, sizeof(why), "no worker became free within "
			    "%llu s", (unsigned long long)
			    (s->s_conf.queue_timeout_ms / 1000));
			req_fail(s, sr, 503, why);
			return true;
		}
	}
	return false;
}

void
queue_expire(struct sup *s, uint64_t t)
{
	while (expire_one(s, t))
		;
}

void
queue_fail_all(struct sup *s, int status, const char *why)
{
	struct sup_req	*sr;

	while ((sr = TAILQ_FIRST(&s->s_queue)) != NULL) {
		queue_remove(s, sr);
		req_fail(s, sr, status, why);
	}
}

uint64_t
queue_wake(const struct sup *s)
{
	const struct sup_req	*sr;
	uint64_t		 at = UINT64_MAX;

	TAILQ_FOREACH(sr, &s->s_queue, sr_entry) {
		at = sooner(at, sr->sr_queued_at + s->s_conf.queue_timeout_ms);
		if (sr->sr_deadline != 0)
			at = sooner(at, sr->sr_deadline);
	}
	return at;
}

unsigned
queue_live(const struct sup *s)
{
	unsigned	 i, n = 0;

	for (i = 0; i < s->s_nw; i++)
		if (w_live(&s->s_w[i]))
			n++;
	return n;
}
