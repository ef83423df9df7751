/* sup.h - worker pool supervisor: per-slot state machine, queue, timers. */
#ifndef SLUICE_SUP_H
#define SLUICE_SUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "../proto/proto.h"

enum w_state {
	W_EMPTY = 0,	/* no process; may wait for a respawn time */
	W_SPAWNING,	/* started, waiting for HELLO */
	W_IDLE,
	W_BUSY,		/* a request is running */
	W_AFTER,	/* answered; nodes after the responder still run */
	W_CANCELLING,	/* CANCEL sent, waiting for REQ_DONE */
	W_RETIRING,	/* will exit 0 by itself (RETIRE or SHUTDOWN) */
	W_KILLING,	/* SIGTERM sent, SIGKILL after the grace */
	W_DEAD,		/* one of channel EOF / exit seen, not both */
	W_NSTATES	/* the number of states, not a state */
};

enum pool_state { POOL_RUNNING, POOL_DRAINING, POOL_TERMINATING,
    POOL_STOPPED };

/* Why a worker process ended (for metrics). */
enum sup_exit {
	SUP_EXIT_NONE = 0,	/* unexplained clean exit */
	SUP_EXIT_CRASH,		/* died by itself, or broke the protocol */
	SUP_EXIT_HANG,		/* killed for silence */
	SUP_EXIT_RECYCLE,	/* max_requests */
	SUP_EXIT_CANCEL_KILL,	/* did not answer CANCEL in time */
	SUP_EXIT_IDLE,		/* idle above min_workers */
	SUP_EXIT_CONFIG,	/* EX_CONFIG or protocol version */
	SUP_EXIT_SHUTDOWN,	/* drain or terminate */
};

enum sup_event {
	SUP_EV_READY,	/* a worker said HELLO for the first time */
	SUP_EV_STOPPED,	/* drain finished: no process left */
};

struct sup_conf {
	unsigned	 min_workers;		/* kept alive: 2 */
	unsigned	 max_workers;		/* upper bound: 8 */
	unsigned	 max_requests;		/* per worker, 0 = unlimited */
	unsigned	 max_requests_jitter;	/* + random [0, jitter] */
	unsigned	 queue_max;		/* waiting requests: 64 */
	uint64_t	 spawn_timeout_ms;	/* HELLO due: 5000 */
	uint64_t	 hang_timeout_ms;	/* busy and silent: 5000 */
	uint64_t	 cancel_grace_ms;	/* REQ_DONE after CANCEL: 2000 */
	uint64_t	 kill_grace_ms;		/* SIGTERM to SIGKILL: 2000 */
	uint64_t	 idle_timeout_ms;	/* reap idle above min: 10000 */
	uint64_t	 queue_timeout_ms;	/* wait for a worker: 300000 */
	uint64_t	 drain_timeout_ms;	/* graceful stop: 30000 */
	uint64_t	 backoff_min_ms;	/* 100 */
	uint64_t	 backoff_max_ms;	/* 30000 */
	uint64_t	 healthy_after_ms;	/* lived this long: reset: 1000 */
	unsigned	 crash_threshold;	/* crashes within window: 10 */
	uint64_t	 crash_window_ms;	/* = degraded: 60000 */
	unsigned	 pace_after;		/* failures in a row: 5 (0: never) */
	uint64_t	 pace_ms;		/* then a start at most per: 1000 */
};

/* Fill c with the defaults quoted above. */
void	sup_conf_default(struct sup_conf *c);

/* The supervisor's view of one client request. The owner embeds it,
 * fills sr_id, sr_start/sr_start_len (an encoded REQ_START frame that
 * stays valid while the request is known to the supervisor) and
 * sr_deadline (absolute ms by ops->now, 0 = none), and sets
 * sr_forwarded once any byte of the answer reached the client (from then
 * on the request is never retried on another worker). */
struct sup_req {
	char			 sr_id[PROTO_MAX_RQID + 1];
	const void		*sr_start;
	size_t			 sr_start_len;
	uint64_t		 sr_deadline;
	bool			 sr_forwarded;
	pid_t			 sr_pid;	/* the worker last given it */
	/* supervisor-private */
	uint64_t		 sr_queued_at;
	int			 sr_slot;	/* -1 unless on a worker */
	bool			 sr_queued;
	unsigned		 sr_attempts;
	TAILQ_ENTRY(sup_req)	 sr_entry;
};

/* Every side effect goes through this table so that tests can drive all
 * transitions with fake pids and a fake clock. */
struct sup_ops {
	/* Start a worker for slot with its channel; 0 and *pid, or -1. */
	int		(*spawn)(void *arg, unsigned slot, unsigned max_requests,
			    pid_t *pid);
	void		(*kill)(void *arg, pid_t pid, int sig);
	/* Queue a frame on slot's channel: 0, or -1 if the channel broke. */
	int		(*send)(void *arg, unsigned slot, const void *frame,
			    size_t len);
	/* Stop reading from and close slot's channel. */
	void		(*close_chan)(void *arg, unsigned slot);
	/* Pause or resume reading frames from slot's channel. */
	void		(*pause_chan)(void *arg, unsigned slot, bool paused);
	uint64_t	(*now)(void *arg);		/* monotonic ms */
	void		(*arm_timer)(void *arg, uint64_t at);	/* 0: disarm */
	/* Upward calls for requests. After rq_done and rq_fail the
	 * supervisor forgets the request; the owner may free it inside.
	 * An early answer (REQ_DONE with background) is an rq_done like
	 * any other, although its worker stays busy until POST_DONE. */
	void		(*rq_chunk)(void *arg, struct sup_req *,
			    const struct proto_msg *);
	void		(*rq_done)(void *arg, struct sup_req *,
			    const struct proto_msg *);
	void		(*rq_fail)(void *arg, struct sup_req *, int http_status,
			    const char *why);
	void		(*event)(void *arg, enum sup_event);
	/* A worker's slot was emptied; cause says why. */
	void		(*exited)(void *arg, enum sup_exit cause);
	/* SLOT_ACQUIRE / SLOT_RELEASE from the worker in slot (checked to
	 * belong to its current request). */
	void		(*slot_frame)(void *arg, unsigned slot, pid_t pid,
			    const struct proto_msg *);
	/* The worker's request is over (REQ_DONE, or POST_DONE after an
	 * early answer) or the worker is gone: whatever it still holds
	 * must be given back. */
	void		(*freed)(void *arg, unsigned slot, pid_t pid);
	/* CACHE from a worker (checked to name its current request): one
	 * lookup of the response cache. req is that request while its
	 * client is still being answered (busy), NULL after the answer
	 * or once the request was cancelled. */
	void		(*cache_frame)(void *arg, struct sup_req *req,
			    const struct proto_msg *);
	/* STORE from a worker (checked to name its current request): how
	 * its calls to the shared database went. NULL: ignored. */
	void		(*store_frame)(void *arg, const struct proto_msg *);
};

struct sup_stats {
	unsigned	 st_count[W_NSTATES];	/* slots per state */
	unsigned	 st_live;		/* SPAWNING..CANCELLING */
	unsigned	 st_queued;
	uint64_t	 st_served;		/* REQ_DONE received */
	uint64_t	 st_spawned;
	uint64_t	 st_crashes;
	uint64_t	 st_hung;		/* killed for silence */
	uint64_t	 st_retried;
	uint64_t	 st_bad_moves;		/* state moves refused: bugs */
	bool		 st_degraded;		/* crash loop within window */
	bool		 st_broken;		/* config/version: no respawn */
	enum pool_state	 st_pool;
};

struct sup_winfo {
	unsigned	 wi_slot;
	enum w_state	 wi_state;
	pid_t		 wi_pid;
	unsigned	 wi_served;
	uint64_t	 wi_age_ms;
	const char	*wi_phase;	/* last HEARTBEAT phase, borrowed */
	const char	*wi_rqid;	/* current request id or "" */
};

struct sup;

/* Create a supervisor; conf and ops are copied. Nothing is spawned
 * before sup_start. */
struct sup	*sup_new(const struct sup_conf *, const struct sup_ops *,
		    void *arg);
void		 sup_free(struct sup *);	/* no callbacks; NULL-safe */

void		 sup_start(struct sup *);	/* spawn min_workers */

/* Accept a request: dispatched now or queued. Returns 0, or -1 with
 * *status (503) and *why set when it cannot be accepted (queue full,
 * stopping, no worker can start). */
int		 sup_submit(struct sup *, struct sup_req *, int *status,
		    const char **why);

/* The owner gives up on a request (client gone): no further callbacks
 * for it; a running worker gets CANCEL. Safe inside rq_chunk. */
void		 sup_cancel(struct sup *, struct sup_req *);

/* The owner's output for the request is full (true) or drained (false):
 * frames from its worker stop being read, and silence while paused does
 * not count as a hang. */
void		 sup_pause(struct sup *, struct sup_req *, bool paused);

/* Channel and process events, from the real or the fake world. */
void		 sup_chan_frame(struct sup *, unsigned slot,
		    const struct proto_msg *);
/* Answer worker (slot, pid)'s SLOT_ACQUIRE for ep. Returns 0 when sent,
 * -1 when that worker is no longer busy on a request or the send failed
 * (the slot should then be given back). */
int		 sup_slot_answer(struct sup *, unsigned slot, pid_t pid,
		    const char *ep, bool granted);
/* A frame from slot could not be read: its worker is killed, its
 * request fails. bad_version (the frame was of another protocol
 * version) disables the slot and stops respawns until a reload, but
 * only before the worker's HELLO; afterwards it is a violation. */
void		 sup_chan_error(struct sup *, unsigned slot, bool bad_version,
		    const char *why);
void		 sup_chan_eof(struct sup *, unsigned slot);
void		 sup_child_exit(struct sup *, pid_t, int wstatus);
void		 sup_timer(struct sup *);	/* the armed timer fired */

/* New settings (SIGHUP): workers of the old configuration leave, idle
 * ones at once and busy ones after their current request; new workers
 * start. No request fails because of it. Slots grow as needed. */
void		 sup_reload(struct sup *, const struct sup_conf *);

/* SIGTTIN (+1) / SIGTTOU (-1): min and max workers up or down by one.
 * Scaling down never stops a busy worker before its request ends,
 * including the work after an early answer. */
void		 sup_resize(struct sup *, int delta);

/* The settings in force (after reloads and resizes). */
const struct sup_conf *sup_get_conf(const struct sup *);

/* Graceful stop: queued and running requests finish, work after early
 * answers too (up to drain_timeout), then every worker is stopped;
 * SUP_EV_STOPPED follows. */
void		 sup_drain(struct sup *);
/* Stop now: requests fail with 503, workers are killed. */
void		 sup_terminate(struct sup *);

void		 sup_stats(const struct sup *, struct sup_stats *);
/* Fill up to max entries for slots that hold a process; returns count. */
size_t		 sup_workers(const struct sup *, struct sup_winfo *, size_t max);
const char	*sup_state_name(enum w_state);

#endif
