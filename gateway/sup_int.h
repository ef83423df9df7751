/* sup_int.h - the supervisor's private parts, shared by its files and no one else. */
#ifndef SLUICE_SUP_INT_H
#define SLUICE_SUP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "sup.h"

/*
 * The supervisor's files, each calling only the ones listed before it:
 *
 *   sup_queue.c    the request queue: admission, order, time limits
 *   sup_backoff.c  after failures: respawn delay, paced starts, crash ring
 *   sup.c          the worker state machine: moves, deaths, timers
 *   sup_frames.c   frames from a worker, and the moves they cause
 *   sup_pool.c     the pool: sizing, spawning, reload, drain, the timer
 *
 * The files before sup_pool.c reach it only through s_maintain, which
 * they call at the end of every event they handle.
 */

#define CRASH_RING_MAX	64
#define PHASE_LEN	96

/*
 * A worker slot. Its state says what the worker does; the few booleans
 * left beside it are facts that no single state holds:
 *
 * w_eof, w_exited	the two halves of a worker's end, which come in
 *			either order and in any state: one makes it DEAD
 *			(or waits for the other), both bury it.
 * w_sigkilled		KILLING after SIGKILL rather than SIGTERM: the
 *			next grace only waits for the reaping.
 * w_paused		BUSY with the client's output full: frames are
 *			not read and silence is not a hang.
 * w_leave		BUSY or AFTER, but scaled down: it still serves
 *			(and its crash still counts), then it goes.
 *
 * Whether it said HELLO is w_ready_at != 0 (the clock is never 0 by
 * then), and whether we asked it to go is its w_cause (w_expected).
 * Slots are not disabled one by one: s_broken stops every start.
 */
struct worker {
	unsigned	 w_slot;
	enum w_state	 w_state;
	pid_t		 w_pid;
	bool		 w_eof;		/* channel reached EOF */
	bool		 w_exited;	/* waitpid seen: w_wstatus */
	int		 w_wstatus;
	bool		 w_sigkilled;	/* KILLING: SIGKILL sent */
	bool		 w_paused;	/* BUSY: not reading frames */
	uint64_t	 w_started;
	uint64_t	 w_ready_at;	/* its HELLO; 0 before */
	uint64_t	 w_state_at;
	uint64_t	 w_last_frame;
	uint64_t	 w_deadline;	/* state timer, 0 = none */
	unsigned	 w_served;
	uint64_t	 w_seq;		/* next REQ_CHUNK seq expected */
	struct sup_req	*w_req;		/* NULL when idle or detached */
	char		 w_rqid[PROTO_MAX_RQID + 1];
	char		 w_phase[PHASE_LEN];
	const char	*w_why;		/* reason for KILLING/RETIRING */
	enum sup_exit	 w_cause;	/* why it is going, once known */
	unsigned	 w_gen;		/* pool generation it was started in */
	bool		 w_leave;	/* go after the current request */
};

TAILQ_HEAD(sr_queue, sup_req);

struct sup {
	struct sup_conf	 s_conf;
	struct sup_ops	 s_ops;
	void		*s_arg;
	/* sup_pool.c's upkeep, called after every event (see above). */
	void		(*s_maintain)(struct sup *);
	struct worker	*s_w;		/* s_conf.max_workers slots */
	unsigned	 s_nw;		/* slots: room for a reload's overlap */
	unsigned	 s_gen;		/* bumped by every reload */
	struct sr_queue	 s_queue;
	unsigned	 s_nqueued;
	enum pool_state	 s_pool;
	uint64_t	 s_drain_deadline;
	bool		 s_was_ready;
	bool		 s_broken;	/* EX_CONFIG or version mismatch */
	uint16_t	 s_bad_seen[W_NSTATES];	/* refused moves logged, a
					   bit per target state */
	/* sup_backoff.c's */
	uint64_t	 s_backoff;	/* respawn delay after a crash */
	uint64_t	 s_hold_until;	/* no spawn before (pool-wide, so a
					   crash loop cannot hop slots) */
	unsigned	 s_fails;	/* failures in a row */
	uint64_t	 s_fail_at;	/* the last one */
	uint64_t	 s_start_at;	/* the last start, for pacing */
	uint64_t	 s_crash_ring[CRASH_RING_MAX];
	unsigned	 s_crash_pos;
	struct sup_stats s_st;
};

static inline uint64_t
sup_now(const struct sup *s)
{
	return s->s_ops.now(s->s_arg);
}

static inline uint64_t
sooner(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* We asked w to go (or it had to: configuration): its end is not a
 * crash. Every such request sets w_cause first. */
static inline bool
w_expected(const struct worker *w)
{
	return w->w_cause == SUP_EXIT_RECYCLE || w->w_cause == SUP_EXIT_IDLE ||
	    w->w_cause == SUP_EXIT_SHUTDOWN || w->w_cause == SUP_EXIT_CONFIG;
}

/* Live: a process that serves or may serve (SPAWNING..CANCELLING). */
static inline bool
w_live(const struct worker *w)
{
	return w->w_state >= W_SPAWNING && w->w_state <= W_CANCELLING;
}

/* ---- sup_queue.c ---- */

/* The owner's rq_fail for sr (which it may free); NULL is a no-op. */
void		 req_fail(struct sup *, struct sup_req *, int status,
		    const char *why);
/* Take sr out of the queue. */
void		 queue_remove(struct sup *, struct sup_req *);
/* Put sr at the head of the queue, first for the next free worker
 * (a retry, or a request its worker never read). */
void		 queue_requeue(struct sup *, struct sup_req *);
/* The idle worker for the next request (the most recently idle), or
 * NULL when none is idle. */
struct worker	*queue_pick_idle(const struct sup *);
/* Fail every queued request whose deadline or queue timeout is past. */
void		 queue_expire(struct sup *, uint64_t t);
/* Fail every queued request with status and why. */
void		 queue_fail_all(struct sup *, int status, const char *why);
/* The earliest time a queued request expires, or UINT64_MAX. */
uint64_t	 queue_wake(const struct sup *);
/* Workers alive now (spawning to cancelling, w_live): those a request
 * may still reach. */
unsigned	 queue_live(const struct sup *);

/* ---- sup_backoff.c ---- */

/* A worker failed (crashed, hung, broke the protocol, or could not be
 * started): note it in the crash ring and hold every start of the pool
 * for the respawn delay, doubled, or backoff_min when was_healthy (which
 * also begins a new run of failures). */
void		 backoff_fail(struct sup *, bool was_healthy);
/* Whether the pool may start a worker at t: not during a hold, and
 * after pace_after failures in a row not within pace_ms of the last
 * start. */
bool		 backoff_may_spawn(const struct sup *, uint64_t t);
/* The pool starts a worker at t. */
void		 backoff_started(struct sup *, uint64_t t);
/* Whether starts are paced (a run of pace_after failures). */
bool		 backoff_pacing(const struct sup *);
/* A live worker said HELLO at ready_at. Up for healthy_after at t, all
 * of it since the last failure: the run of failures is over. */
void		 backoff_healthy(struct sup *, uint64_t ready_at, uint64_t t);
/* When a start held back at t becomes possible, or UINT64_MAX. */
uint64_t	 backoff_wake(const struct sup *, uint64_t t);
/* crash_threshold failures within crash_window. */
bool		 backoff_degraded(const struct sup *);

/* ---- sup.c ---- */

/* Move w to state st, arming its state timer timeout ms from now (0:
 * none). Returns 0, or -1 when the move is not in the table of allowed
 * moves: a bug, logged and counted in st_bad_moves, and w is left as it
 * was. The caller then does nothing the move would have caused. */
int		 w_set_state(struct sup *, struct worker *, enum w_state st,
		    uint64_t timeout);
/* Forget the request on w and return it (NULL if already detached). */
struct sup_req	*w_detach(struct worker *);
/* Give queued requests to idle workers, oldest first. */
void		 dispatch_pending(struct sup *);
/* Start a worker in the empty slot w, allowed max_requests (0: no
 * limit). A failed start is a failure for the backoff; w stays empty. */
void		 w_spawn(struct sup *, struct worker *, unsigned max_requests);
/* SIGTERM, then SIGKILL after kill_grace; why is a literal. */
void		 w_kill(struct sup *, struct worker *, const char *why);
/* Ask w (idle) to exit by itself; why is a literal ("idle" counts as
 * idle reaping). Killed instead if the channel broke. */
void		 w_shutdown(struct sup *, struct worker *, const char *why);
/* The output of w's request drained: read its frames again. */
void		 w_unpause(struct sup *, struct worker *);
/* Encode m (borrowed) and send it to w. Returns 0, or -1 when it could
 * not be encoded or the channel broke. */
int		 w_send(struct sup *, const struct worker *,
		    const struct proto_msg *m);
/* Fire what is due of w's timers at t, idle reaping aside. */
void		 w_timers(struct sup *, struct worker *, uint64_t t);
/* The earliest of w's timers, or UINT64_MAX. */
uint64_t	 w_wake(const struct sup *, const struct worker *);

#endif
