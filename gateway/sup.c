/* sup.c - worker pool supervisor: per-slot state machine, queue, timers. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <sysexits.h>

#include "../common/log.h"
#include "../common/xmem.h"
#include "sup.h"

#define CRASH_RING_MAX	64
#define PHASE_LEN	96

struct worker {
	unsigned	 w_slot;
	enum w_state	 w_state;
	pid_t		 w_pid;
	bool		 w_eof;		/* channel closed */
	bool		 w_exited;	/* waitpid seen */
	int		 w_wstatus;
	bool		 w_expected;	/* we asked it to go: not a crash */
	bool		 w_disabled;	/* never respawn this slot */
	bool		 w_sigkilled;
	bool		 w_paused;
	bool		 w_ready;	/* said HELLO */
	uint64_t	 w_started;
	uint64_t	 w_ready_at;
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
	struct worker	*s_w;		/* s_conf.max_workers slots */
	unsigned	 s_nw;		/* slots: room for a reload's overlap */
	unsigned	 s_gen;		/* bumped by every reload */
	uint64_t	 s_backoff;	/* respawn delay after a crash */
	uint64_t	 s_hold_until;	/* no spawn before (pool-wide, so a
					   crash loop cannot hop slots) */
	struct sr_queue	 s_queue;
	unsigned	 s_nqueued;
	enum pool_state	 s_pool;
	uint64_t	 s_drain_deadline;
	bool		 s_was_ready;
	bool		 s_broken;	/* EX_CONFIG or version mismatch */
	uint64_t	 s_crash_ring[CRASH_RING_MAX];
	unsigned	 s_crash_pos;
	struct sup_stats s_st;
};

static void	maintain(struct sup *);
static void	w_kill(struct sup *, struct worker *, const char *);

static const char *const state_names[] = {
	"empty", "spawning", "idle", "busy", "after", "cancelling",
	"retiring", "killing", "dead",
};

const char *
sup_state_name(enum w_state s)
{
	return (unsigned)s <= W_DEAD ? state_names[s] : "?";
}

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
}

static uint64_t
now(struct sup *s)
{
	return s->s_ops.now(s->s_arg);
}

static void
set_state(struct sup *s, struct worker *w, enum w_state st, uint64_t timeout)
{
	uint64_t	 t = now(s);

	log_debug("worker %u pid %d: %s -> %s", w->w_slot, (int)w->w_pid,
	    sup_state_name(w->w_state), sup_state_name(st));
	w->w_state = st;
	w->w_state_at = t;
	w->w_deadline = timeout ? t + timeout : 0;
}

struct sup *
sup_new(const struct sup_conf *c, const struct sup_ops *ops, void *arg)
{
	struct sup	*s = xcalloc(1, sizeof(*s));
	unsigned	 i;

	s->s_conf = *c;
	if (s->s_conf.max_workers == 0)
		s->s_conf.max_workers = 1;
	if (s->s_conf.min_workers > s->s_conf.max_workers)
		s->s_conf.min_workers = s->s_conf.max_workers;
	if (s->s_conf.crash_threshold > CRASH_RING_MAX)
		s->s_conf.crash_threshold = CRASH_RING_MAX;
	s->s_ops = *ops;
	s->s_arg = arg;
	/* Twice the pool: while workers of a reloaded configuration start,
	 * the old ones still finish their requests in their own slots. */
	s->s_nw = 2 * s->s_conf.max_workers;
	s->s_w = xcalloc(s->s_nw, sizeof(*s->s_w));
	for (i = 0; i < s->s_nw; i++)
		s->s_w[i].w_slot = i;
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

/* ---- requests -------------------------------------------------------- */

/* Forget the request on w and return it (NULL if already detached). */
static struct sup_req *
w_detach(struct worker *w)
{
	struct sup_req	*sr = w->w_req;

	w->w_req = NULL;
	if (sr != NULL)
		sr->sr_slot = -1;
	return sr;
}

static void
queue_remove(struct sup *s, struct sup_req *sr)
{
	TAILQ_REMOVE(&s->s_queue, sr, sr_entry);
	sr->sr_queued = false;
	s->s_nqueued--;
}

static void
rq_fail(struct sup *s, struct sup_req *sr, int status, const char *why)
{
	if (sr != NULL)
		s->s_ops.rq_fail(s->s_arg, sr, status, why);
}

static struct worker *
pick_idle(struct sup *s)
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

static unsigned
max_requests_for_spawn(struct sup *s)
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

/* Send the request to an idle worker. On a broken channel the worker
 * is killed and the request goes back to the head of the queue. */
static void
assign(struct sup *s, struct worker *w, struct sup_req *sr)
{
	sr->sr_slot = (int)w->w_slot;
	sr->sr_pid = w->w_pid;
	sr->sr_attempts++;
	w->w_req = sr;
	snprintf(w->w_rqid, sizeof(w->w_rqid), "%s", sr->sr_id);
	w->w_seq = 0;
	w->w_last_frame = now(s);
	w->w_phase[0] = '\0';
	w->w_paused = false;
	set_state(s, w, W_BUSY, 0);
	if (s->s_ops.send(s->s_arg, w->w_slot, sr->sr_start,
	    sr->sr_start_len) == -1) {
		w_detach(w);
		sr->sr_attempts--;
		TAILQ_INSERT_HEAD(&s->s_queue, sr, sr_entry);
		sr->sr_queued = true;
		s->s_nqueued++;
		w_kill(s, w, "channel broken at dispatch");
	}
}

static void
dispatch_pending(struct sup *s)
{
	struct sup_req	*sr;
	struct worker	*w;

	while ((sr = TAILQ_FIRST(&s->s_queue)) != NULL &&
	    (w = pick_idle(s)) != NULL) {
		queue_remove(s, sr);
		assign(s, w, sr);
	}
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
	if (s->s_broken && s->s_st.st_live == 0) {
		*why = "no worker can start (configuration or version error; "
		    "see the gateway log)";
		return -1;
	}
	if (s->s_nqueued >= s->s_conf.queue_max && pick_idle(s) == NULL) {
		*why = "all workers are busy and the queue is full";
		return -1;
	}
	sr->sr_queued_at = now(s);
	TAILQ_INSERT_TAIL(&s->s_queue, sr, sr_entry);
	sr->sr_queued = true;
	s->s_nqueued++;
	dispatch_pending(s);
	maintain(s);
	return 0;
}

void
sup_cancel(struct sup *s, struct sup_req *sr)
{
	struct worker	*w;
	struct proto_msg m;
	struct buf	 b = BUF_INIT;

	if (sr->sr_queued) {
		queue_remove(s, sr);
		maintain(s);
		return;
	}
	if (sr->sr_slot < 0 || (unsigned)sr->sr_slot >= s->s_nw)
		return;
	w = &s->s_w[sr->sr_slot];
	w_detach(w);
	if (w->w_state != W_BUSY)
		return;
	if (w->w_paused) {
		w->w_paused = false;
		s->s_ops.pause_chan(s->s_arg, w->w_slot, false);
	}
	proto_msg_init(&m, PROTO_CANCEL, w->w_rqid);
	if (proto_encode(&b, &m) == -1 ||
	    s->s_ops.send(s->s_arg, w->w_slot, b.b_data, b.b_len) == -1)
		w_kill(s, w, "channel broken at cancel");
	else
		set_state(s, w, W_CANCELLING, s->s_conf.cancel_grace_ms);
	buf_free(&b);
	maintain(s);
}

void
sup_pause(struct sup *s, struct sup_req *sr, bool paused)
{
	struct worker	*w;

	if (sr->sr_slot < 0 || (unsigned)sr->sr_slot >= s->s_nw)
		return;
	w = &s->s_w[sr->sr_slot];
	if (w->w_paused == paused || w->w_state != W_BUSY)
		return;
	w->w_paused = paused;
	if (!paused)
		w->w_last_frame = now(s);	/* silence while paused is ours */
	s->s_ops.pause_chan(s->s_arg, w->w_slot, paused);
	maintain(s);
}

/* ---- killing and reaping --------------------------------------------- */

static void
w_kill(struct sup *s, struct worker *w, const char *why)
{
	if (w->w_state == W_KILLING || w->w_state == W_EMPTY)
		return;
	if (w->w_cause == SUP_EXIT_NONE)
		w->w_cause = SUP_EXIT_CRASH;
	if (w->w_exited) {
		/* Already gone: only the channel is left to close. */
		set_state(s, w, W_DEAD, s->s_conf.kill_grace_ms);
		return;
	}
	log_warnx("killing worker %u pid %d: %s", w->w_slot, (int)w->w_pid,
	    why);
	w->w_why = why;
	s->s_ops.kill(s->s_arg, w->w_pid, SIGTERM);
	set_state(s, w, W_KILLING, s->s_conf.kill_grace_ms);
}

/* The request on a worker that died or hung. Not yet answered and not
 * forwarded: try once more on another worker. */
static void
w_lose_request(struct sup *s, struct worker *w, int status, const char *why)
{
	struct sup_req	*sr = w_detach(w);

	if (sr == NULL)
		return;
	if (!sr->sr_forwarded && sr->sr_attempts < 2 &&
	    s->s_pool == POOL_RUNNING) {
		log_warnx("[rq %s] %s; retrying on another worker", sr->sr_id,
		    why);
		s->s_st.st_retried++;
		TAILQ_INSERT_HEAD(&s->s_queue, sr, sr_entry);
		sr->sr_queued = true;
		s->s_nqueued++;
		return;
	}
	rq_fail(s, sr, status, why);
}

static void
note_crash(struct sup *s)
{
	s->s_crash_ring[s->s_crash_pos] = now(s);
	s->s_crash_pos = (s->s_crash_pos + 1) % s->s_conf.crash_threshold;
	s->s_st.st_crashes++;
}

/* After a crash: a worker that had been healthy for a while starts the
 * delay over at backoff_min; a young one doubles it, up to backoff_max.
 * The hold is pool-wide. */
static void
backoff(struct sup *s, bool was_healthy)
{
	note_crash(s);
	if (was_healthy || s->s_backoff < s->s_conf.backoff_min_ms)
		s->s_backoff = s->s_conf.backoff_min_ms;
	else
		s->s_backoff *= 2;
	if (s->s_backoff > s->s_conf.backoff_max_ms)
		s->s_backoff = s->s_conf.backoff_max_ms;
	s->s_hold_until = now(s) + s->s_backoff;
}

static bool
degraded(const struct sup *s)
{
	uint64_t	 t = s->s_ops.now(s->s_arg);
	unsigned	 i, n = 0;

	for (i = 0; i < s->s_conf.crash_threshold; i++)
		if (s->s_crash_ring[i] != 0 &&
		    t - s->s_crash_ring[i] < s->s_conf.crash_window_ms)
			n++;
	return s->s_conf.crash_threshold > 0 && n >= s->s_conf.crash_threshold;
}

static void
describe_exit(const struct worker *w, char *out, size_t len)
{
	if (WIFSIGNALED(w->w_wstatus))
		snprintf(out, len, "exited on signal %d",
		    WTERMSIG(w->w_wstatus));
	else if (WIFEXITED(w->w_wstatus))
		snprintf(out, len, "exited with code %d",
		    WEXITSTATUS(w->w_wstatus));
	else
		snprintf(out, len, "ended");
}

/* Both the exit and the channel EOF have been seen: empty the slot and
 * decide on the respawn delay. */
static void
w_bury(struct sup *s, struct worker *w)
{
	uint64_t	 t = now(s), age = t - w->w_started;
	bool		 clean = WIFEXITED(w->w_wstatus) &&
			    WEXITSTATUS(w->w_wstatus) == 0;
	bool		 crash = !w->w_expected && !clean;
	char		 how[64];

	describe_exit(w, how, sizeof(how));
	if (WIFEXITED(w->w_wstatus) && WEXITSTATUS(w->w_wstatus) == EX_CONFIG) {
		w->w_disabled = s->s_broken = true;
		log_warnx("worker %u pid %d %s (configuration error); "
		    "not respawning", w->w_slot, (int)w->w_pid, how);
	} else if (crash) {
		backoff(s, w->w_ready && t - w->w_ready_at >=
		    s->s_conf.healthy_after_ms);
		log_warnx("worker %u pid %d %s after %.1fs (%s); respawn in "
		    "%llu ms", w->w_slot, (int)w->w_pid, how, age / 1000.0,
		    w->w_why ? w->w_why : "unexpected",
		    (unsigned long long)s->s_backoff);
	} else {
		log_info("worker %u pid %d %s after %.1fs, %u requests (%s)",
		    w->w_slot, (int)w->w_pid, how, age / 1000.0, w->w_served,
		    w->w_why ? w->w_why : "exit");
	}
	if (WIFEXITED(w->w_wstatus) && WEXITSTATUS(w->w_wstatus) == EX_CONFIG)
		w->w_cause = SUP_EXIT_CONFIG;
	else if (w->w_cause == SUP_EXIT_NONE && crash)
		w->w_cause = SUP_EXIT_CRASH;
	s->s_ops.exited(s->s_arg, w->w_cause);
	s->s_ops.freed(s->s_arg, w->w_slot, w->w_pid);
	s->s_ops.close_chan(s->s_arg, w->w_slot);
	w->w_pid = 0;
	w->w_req = NULL;
	w->w_ready = false;
	set_state(s, w, W_EMPTY, 0);
}

/* The worker is gone once its channel reached EOF: the request it held
 * is lost then, not at exit, because frames it wrote before exiting
 * (often its REQ_DONE) may still be waiting in the channel. The slot is
 * emptied when both the exit and the EOF have been seen. */
static void
w_gone(struct sup *s, struct worker *w, const char *why)
{
	if (!w->w_eof) {
		/* Exited first: give the channel a grace to drain. */
		w->w_deadline = now(s) + s->s_conf.kill_grace_ms;
		return;
	}
	if (w->w_state == W_BUSY)
		w_lose_request(s, w, 502, why);
	else
		w_detach(w);
	if (w->w_exited) {
		w_bury(s, w);
		return;
	}
	if (w->w_state != W_KILLING && w->w_state != W_DEAD)
		set_state(s, w, W_DEAD, s->s_conf.kill_grace_ms);
}

void
sup_chan_eof(struct sup *s, unsigned slot)
{
	struct worker	*w;

	if (slot >= s->s_nw || s->s_w[slot].w_state == W_EMPTY)
		return;
	w = &s->s_w[slot];
	w->w_eof = true;
	w_gone(s, w, "the worker handling the request died");
	maintain(s);
}

void
sup_child_exit(struct sup *s, pid_t pid, int wstatus)
{
	struct worker	*w = NULL;
	unsigned	 i;

	for (i = 0; i < s->s_nw; i++)
		if (s->s_w[i].w_state != W_EMPTY && s->s_w[i].w_pid == pid &&
		    !s->s_w[i].w_exited)
			w = &s->s_w[i];
	if (w == NULL) {
		log_warnx("reaped unknown child pid %d", (int)pid);
		return;
	}
	w->w_exited = true;
	w->w_wstatus = wstatus;
	w_gone(s, w, "the worker handling the request died");
	maintain(s);
}

/* ---- frames from workers --------------------------------------------- */

/* The gateway never trusts a worker: anything unexpected kills it. */
static void
violation(struct sup *s, struct worker *w, const char *why)
{
	log_warnx("worker %u pid %d protocol violation: %s", w->w_slot,
	    (int)w->w_pid, why);
	if (w->w_state == W_BUSY)
		rq_fail(s, w_detach(w), 502, "the worker broke the protocol");
	else
		w_detach(w);
	w_kill(s, w, "protocol violation");
}

static void
w_shutdown(struct sup *s, struct worker *w, const char *why)
{
	struct proto_msg m;
	struct buf	 b = BUF_INIT;

	w->w_expected = true;
	w->w_why = why;
	w->w_cause = strcmp(why, "idle") == 0 ? SUP_EXIT_IDLE :
	    SUP_EXIT_SHUTDOWN;
	proto_msg_init(&m, PROTO_SHUTDOWN, NULL);
	if (proto_encode(&b, &m) == -1 ||
	    s->s_ops.send(s->s_arg, w->w_slot, b.b_data, b.b_len) == -1)
		w_kill(s, w, why);
	else
		set_state(s, w, W_RETIRING, s->s_conf.kill_grace_ms);
	buf_free(&b);
}

static void
on_hello(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	const struct proto_hello *h = &m->m_u.hello;

	if (w->w_state != W_SPAWNING) {
		violation(s, w, "HELLO after start");
		return;
	}
	if (h->version != PROTO_VERSION) {
		sup_chan_error(s, w->w_slot, true, "HELLO version mismatch");
		return;
	}
	w->w_ready = true;
	w->w_ready_at = now(s);
	log_info("worker %u pid %d ready in %llu ms (build %.*s)", w->w_slot,
	    (int)w->w_pid, (unsigned long long)(w->w_ready_at - w->w_started),
	    (int)h->build.n, h->build.p ? h->build.p : "");
	set_state(s, w, W_IDLE, 0);
	if (!s->s_was_ready) {
		s->s_was_ready = true;
		s->s_ops.event(s->s_arg, SUP_EV_READY);
	}
	if (w->w_gen != s->s_gen)	/* a reload came while it started */
		w_shutdown(s, w, "reload");
}

/* Frames about a request must name the worker's current request. */
static bool
rq_matches(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	if ((w->w_state != W_BUSY && w->w_state != W_AFTER &&
	    w->w_state != W_CANCELLING) ||
	    !str_eq(m->m_rqid, w->w_rqid)) {
		violation(s, w, "frame for a request the worker does not own");
		return false;
	}
	return true;
}

static void
on_chunk(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	if (!rq_matches(s, w, m) || w->w_state == W_CANCELLING)
		return;
	if (w->w_state == W_AFTER) {
		violation(s, w, "REQ_CHUNK after the answer");
		return;
	}
	if (m->m_u.req_chunk.seq != w->w_seq) {
		violation(s, w, "REQ_CHUNK out of sequence");
		return;
	}
	w->w_seq++;
	if (w->w_req != NULL)
		s->s_ops.rq_chunk(s->s_arg, w->w_req, m);
}

/* The worker's request is over: what it holds is given back, and it is
 * idle again or on its way out. */
static void
w_finish(struct sup *s, struct worker *w, bool retiring)
{
	w->w_phase[0] = '\0';
	s->s_ops.freed(s->s_arg, w->w_slot, w->w_pid);
	if (retiring) {
		w->w_expected = true;
		w->w_cause = SUP_EXIT_RECYCLE;
		w->w_why = "retired after max_requests";
		set_state(s, w, W_RETIRING, s->s_conf.kill_grace_ms);
	} else if (w->w_gen != s->s_gen || w->w_leave) {
		set_state(s, w, W_IDLE, 0);
		w_shutdown(s, w, w->w_leave ? "scaled down" : "reload");
	} else
		set_state(s, w, W_IDLE, 0);
}

/* The client has its answer, but the worker goes on with the request
 * (nodes after the responder) until POST_DONE: it keeps the request id
 * and is watched for hangs like a busy worker. Nobody reads the answer
 * any more, so nothing may hold its channel paused. */
static void
w_after(struct sup *s, struct worker *w)
{
	if (w->w_paused) {
		w->w_paused = false;
		s->s_ops.pause_chan(s->s_arg, w->w_slot, false);
	}
	set_state(s, w, W_AFTER, 0);
}

static void
on_done(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	const struct proto_req_done *d = &m->m_u.req_done;
	struct sup_req	*sr;
	bool		 was_busy = w->w_state == W_BUSY;

	if (!rq_matches(s, w, m))
		return;
	if (w->w_state == W_AFTER) {
		violation(s, w, "REQ_DONE after the answer");
		return;
	}
	w->w_served++;
	s->s_st.st_served++;
	sr = w_detach(w);
	/* Also when cancelling: a CANCEL that crossed the answer is
	 * ignored by the worker, which goes on and sends POST_DONE. */
	if (d->background && d->status == RQ_OK)
		w_after(s, w);
	else
		w_finish(s, w, d->retiring);
	if (was_busy && sr != NULL)
		s->s_ops.rq_done(s->s_arg, sr, m);
}

/* The work after an early answer is over. The client has long had its
 * answer, so a failure here is only worth a log line. */
static void
on_post_done(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	const struct proto_post_done *p = &m->m_u.post_done;

	if (w->w_state != W_AFTER || !str_eq(m->m_rqid, w->w_rqid)) {
		violation(s, w, "POST_DONE without an answered request");
		return;
	}
	if (p->failed)
		log_info("[rq %s] after the answer: %.*s", w->w_rqid,
		    (int)(p->message.n < 512 ? p->message.n : 512),
		    p->message.p != NULL ? p->message.p : "failed");
	w_finish(s, w, p->retiring);
}

static void
on_heartbeat(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	const struct str *ph = &m->m_u.heartbeat.phase;

	if (m->m_rqid.p != NULL && !rq_matches(s, w, m))
		return;
	snprintf(w->w_phase, sizeof(w->w_phase), "%.*s",
	    (int)(ph->n < PHASE_LEN ? ph->n : PHASE_LEN - 1),
	    ph->p ? ph->p : "");
}

/* An idle worker leaving on its own. If a request crossed its RETIRE
 * on the way, the worker never read it: back to the head of the queue. */
static void
on_retire(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	struct sup_req	*sr;

	if (w->w_state == W_RETIRING)
		return;
	if (w->w_state != W_IDLE && w->w_state != W_BUSY) {
		violation(s, w, "RETIRE while not idle");
		return;
	}
	if (w->w_state == W_BUSY && w->w_seq == 0 &&
	    (sr = w_detach(w)) != NULL) {
		sr->sr_attempts--;
		TAILQ_INSERT_HEAD(&s->s_queue, sr, sr_entry);
		sr->sr_queued = true;
		s->s_nqueued++;
	} else if (w->w_state == W_BUSY) {
		violation(s, w, "RETIRE in the middle of a request");
		return;
	}
	w->w_expected = true;
	w->w_why = "retired";
	w->w_cause = SUP_EXIT_RECYCLE;
	set_state(s, w, W_RETIRING, s->s_conf.kill_grace_ms);
}

static void
on_slot(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	if (rq_matches(s, w, m))
		s->s_ops.slot_frame(s->s_arg, w->w_slot, w->w_pid, m);
}

/* A response-cache lookup: counted whatever the state (busy, after the
 * answer, cancelling), told to the request only while it is answered.
 * w_req is NULL in the other states (detached at REQ_DONE or CANCEL). */
static void
on_cache(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	if (rq_matches(s, w, m))
		s->s_ops.cache_frame(s->s_arg, w->w_state == W_BUSY ?
		    w->w_req : NULL, m);
}

int
sup_slot_answer(struct sup *s, unsigned slot, pid_t pid, const char *ep,
    bool granted)
{
	struct worker	*w;
	struct proto_msg m;
	struct buf	 b = BUF_INIT;
	int		 r = -1;

	if (slot >= s->s_nw)
		return -1;
	w = &s->s_w[slot];
	if (w->w_pid != pid || (w->w_state != W_BUSY &&
	    w->w_state != W_AFTER && w->w_state != W_CANCELLING))
		return -1;
	proto_msg_init(&m, PROTO_SLOT_GRANT, w->w_rqid);
	m.m_u.slot.endpoint = str_from(ep);
	m.m_u.slot.granted = granted;
	if (proto_encode(&b, &m) == 0 &&
	    s->s_ops.send(s->s_arg, w->w_slot, b.b_data, b.b_len) == 0)
		r = 0;
	buf_free(&b);
	return r;
}

void
sup_chan_frame(struct sup *s, unsigned slot, const struct proto_msg *m)
{
	struct worker	*w;

	if (slot >= s->s_nw || s->s_w[slot].w_state == W_EMPTY)
		return;
	w = &s->s_w[slot];
	if (w->w_state == W_KILLING || w->w_state == W_DEAD)
		return;		/* draining a channel we gave up on */
	w->w_last_frame = now(s);
	if (proto_type_dir(m->m_type) != W2G) {
		violation(s, w, "message in the wrong direction");
		maintain(s);
		return;
	}
	switch (m->m_type) {
	case PROTO_HELLO:	on_hello(s, w, m);	break;
	case PROTO_REQ_CHUNK:	on_chunk(s, w, m);	break;
	case PROTO_REQ_DONE:	on_done(s, w, m);	break;
	case PROTO_POST_DONE:	on_post_done(s, w, m);	break;
	case PROTO_HEARTBEAT:	on_heartbeat(s, w, m);	break;
	case PROTO_RETIRE:	on_retire(s, w, m);	break;
	case PROTO_SLOT_ACQUIRE:
	case PROTO_SLOT_RELEASE: on_slot(s, w, m);	break;
	case PROTO_CACHE:	on_cache(s, w, m);	break;
	default:		violation(s, w, "unexpected message"); break;
	}
	maintain(s);
}

void
sup_chan_error(struct sup *s, unsigned slot, bool bad_version, const char *why)
{
	struct worker	*w;

	if (slot >= s->s_nw || s->s_w[slot].w_state == W_EMPTY)
		return;
	w = &s->s_w[slot];
	if (w->w_state == W_KILLING || w->w_state == W_DEAD)
		return;
	/* Only a worker that has not said HELLO yet can be of another
	 * build; later, another version is a rogue frame like any other,
	 * and must not stop the pool from respawning. */
	if (bad_version && w->w_state == W_SPAWNING) {
		log_warnx("worker %u pid %d: %s (gateway speaks version %d); "
		    "not respawning: restart the gateway after an upgrade",
		    w->w_slot, (int)w->w_pid, why, PROTO_VERSION);
		w->w_disabled = s->s_broken = true;
		w->w_expected = true;
		w->w_cause = SUP_EXIT_CONFIG;
		rq_fail(s, w_detach(w), 502, "worker version mismatch");
		w_kill(s, w, "protocol version mismatch");
	} else
		violation(s, w, why);
	maintain(s);
}

/* ---- timers ---------------------------------------------------------- */

static void
busy_timers(struct sup *s, struct worker *w, uint64_t t)
{
	struct sup_req	*sr = w->w_req;
	char		 why[96];

	if (!w->w_paused && t - w->w_last_frame >= s->s_conf.hang_timeout_ms) {
		snprintf(why, sizeof(why), "the worker stopped responding "
		    "(no frame for %.1f s)", (t - w->w_last_frame) / 1000.0);
		s->s_st.st_hung++;
		w->w_cause = SUP_EXIT_HANG;
		if (w->w_state == W_AFTER)
			log_warnx("[rq %s] %s after the answer", w->w_rqid,
			    why);
		rq_fail(s, w_detach(w), 502, why);
		w_kill(s, w, "hung");
		return;
	}
	if (sr != NULL && sr->sr_deadline != 0 && t >= sr->sr_deadline) {
		log_warnx("[rq %s] deadline exceeded; cancelling", sr->sr_id);
		sup_cancel(s, sr);	/* detaches before the callback */
		rq_fail(s, sr, 504, "the request exceeded its deadline");
	}
}

static void
dead_timer(struct sup *s, struct worker *w)
{
	if (w->w_exited) {
		/* Exited but the channel never closed: close it ourselves. */
		w->w_eof = true;
		w_bury(s, w);
		return;
	}
	log_warnx("worker %u pid %d closed its channel but did not exit",
	    w->w_slot, (int)w->w_pid);
	s->s_ops.kill(s->s_arg, w->w_pid, SIGKILL);
	w->w_sigkilled = true;
	set_state(s, w, W_KILLING, s->s_conf.kill_grace_ms);
}

static void
killing_timer(struct sup *s, struct worker *w)
{
	if (w->w_exited) {
		dead_timer(s, w);
		return;
	}
	if (w->w_sigkilled) {
		/* SIGKILL cannot be ignored: the kernel will let us reap it;
		 * sending it again changes nothing. Wait quietly. */
		log_warnx("worker %u pid %d still not reaped %llu ms after "
		    "SIGKILL", w->w_slot, (int)w->w_pid,
		    (unsigned long long)s->s_conf.kill_grace_ms);
		w->w_deadline = 0;
		return;
	}
	log_warnx("worker %u pid %d ignored SIGTERM for %llu ms; sending "
	    "SIGKILL", w->w_slot, (int)w->w_pid,
	    (unsigned long long)s->s_conf.kill_grace_ms);
	s->s_ops.kill(s->s_arg, w->w_pid, SIGKILL);
	w->w_sigkilled = true;
	w->w_deadline = now(s) + s->s_conf.kill_grace_ms;
}

static unsigned
live_count(const struct sup *s)
{
	unsigned	 i, n = 0;

	for (i = 0; i < s->s_nw; i++)
		if (s->s_w[i].w_state >= W_SPAWNING &&
		    s->s_w[i].w_state <= W_CANCELLING)
			n++;
	return n;
}

/* A worker that stays: live, of this generation, not leaving. */
static bool
staying(const struct sup *s, const struct worker *w)
{
	return w->w_state >= W_SPAWNING && w->w_state <= W_CANCELLING &&
	    w->w_gen == s->s_gen && !w->w_leave;
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

static void
w_timers(struct sup *s, struct worker *w, uint64_t t)
{
	bool	 due = w->w_deadline != 0 && t >= w->w_deadline;

	if (w->w_exited && due && w->w_state != W_EMPTY) {
		/* Exited, but the channel never reached EOF. */
		w->w_eof = true;
		w_gone(s, w, "the worker handling the request died");
		return;
	}
	switch (w->w_state) {
	case W_SPAWNING:
		if (due)
			w_kill(s, w, "no HELLO within the spawn timeout");
		break;
	case W_BUSY:
	case W_AFTER:
		busy_timers(s, w, t);
		break;
	case W_IDLE:
		if (t - w->w_state_at >= s->s_conf.idle_timeout_ms &&
		    live_current(s) > s->s_conf.min_workers)
			w_shutdown(s, w, "idle");
		break;
	case W_CANCELLING:
		if (due) {
			w->w_cause = SUP_EXIT_CANCEL_KILL;
			w_kill(s, w, "no answer to CANCEL within the grace");
		}
		break;
	case W_RETIRING:
		if (due)
			w_kill(s, w, "did not exit after SHUTDOWN or RETIRE");
		break;
	case W_KILLING:
		if (due)
			killing_timer(s, w);
		break;
	case W_DEAD:
		if (due)
			dead_timer(s, w);
		break;
	case W_EMPTY:
		break;
	}
}

/* Fail one overdue queued request; true if one was found (callbacks may
 * change the queue, so the caller rescans from the head). */
static bool
queue_expire_one(struct sup *s, uint64_t t)
{
	struct sup_req	*sr;
	char		 why[96];

	TAILQ_FOREACH(sr, &s->s_queue, sr_entry) {
		if (sr->sr_deadline != 0 && t >= sr->sr_deadline) {
			queue_remove(s, sr);
			rq_fail(s, sr, 504, "the request exceeded its deadline "
			    "while waiting for a worker");
			return true;
		}
		if (t - sr->sr_queued_at >= s->s_conf.queue_timeout_ms) {
			queue_remove(s, sr);
			snprintf(why, sizeof(why), "no worker became free within "
			    "%llu s", (unsigned long long)
			    (s->s_conf.queue_timeout_ms / 1000));
			rq_fail(s, sr, 503, why);
			return true;
		}
	}
	return false;
}

void
sup_timer(struct sup *s)
{
	uint64_t	 t = now(s);
	unsigned	 i;

	for (i = 0; i < s->s_nw; i++)
		w_timers(s, &s->s_w[i], t);
	while (queue_expire_one(s, t))
		;
	if (s->s_pool == POOL_DRAINING && t >= s->s_drain_deadline) {
		log_warnx("drain timeout: stopping %u busy workers",
		    live_count(s));
		sup_terminate(s);
		return;
	}
	maintain(s);
}

/* ---- pool maintenance ------------------------------------------------- */

static void
w_spawn(struct sup *s, struct worker *w)
{
	uint64_t	 t = now(s);
	pid_t		 pid;

	w->w_eof = w->w_exited = w->w_expected = w->w_sigkilled = false;
	w->w_ready = w->w_paused = false;
	w->w_served = 0;
	w->w_why = NULL;
	w->w_cause = SUP_EXIT_NONE;
	w->w_gen = s->s_gen;
	w->w_leave = false;
	w->w_phase[0] = '\0';
	w->w_rqid[0] = '\0';
	w->w_started = t;
	if (s->s_ops.spawn(s->s_arg, w->w_slot, max_requests_for_spawn(s),
	    &pid) == -1) {
		backoff(s, false);
		log_warnx("worker %u: spawn failed; retry in %llu ms",
		    w->w_slot, (unsigned long long)s->s_backoff);
		return;
	}
	w->w_pid = pid;
	s->s_st.st_spawned++;
	set_state(s, w, W_SPAWNING, s->s_conf.spawn_timeout_ms);
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

		if (w->w_state == W_DEAD && !w->w_expected &&
		    w->w_gen == s->s_gen && !w->w_leave)
			n++;
	}
	return n;
}

static void
spawn_needed(struct sup *s)
{
	uint64_t	 t = now(s);
	unsigned	 i, live = live_current(s) + unburied(s), avail = 0;
	long		 need;

	if (s->s_broken)	/* config or version: until a reload */
		return;
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

		if (t < s->s_hold_until)
			break;
		if (w->w_state != W_EMPTY || w->w_disabled)
			continue;
		w_spawn(s, w);
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
			w->w_expected = true;
			w->w_cause = SUP_EXIT_SHUTDOWN;
			w_kill(s, w, "drain");
		}
	}
}

static void
terminate_step(struct sup *s)
{
	struct sup_req	*sr;
	unsigned	 i;

	while ((sr = TAILQ_FIRST(&s->s_queue)) != NULL) {
		queue_remove(s, sr);
		rq_fail(s, sr, 503, "the server is shutting down");
	}
	for (i = 0; i < s->s_nw; i++) {
		struct worker	*w = &s->s_w[i];

		if (w->w_state == W_EMPTY || w->w_state == W_KILLING)
			continue;
		w->w_expected = true;
		w->w_cause = SUP_EXIT_SHUTDOWN;
		if (w->w_state == W_BUSY)
			rq_fail(s, w_detach(w), 503,
			    "the server is shutting down");
		w_detach(w);
		w_kill(s, w, "shutdown");
	}
}

static uint64_t
next_wake(const struct sup *s)
{
	uint64_t		 at = UINT64_MAX, x, t = s->s_ops.now(s->s_arg);
	const struct sup_req	*sr;
	unsigned		 i, live = live_current(s);

#define SOONER(v)	do { x = (v); if (x < at) at = x; } while (0)
	for (i = 0; i < s->s_nw; i++) {
		const struct worker *w = &s->s_w[i];

		if (w->w_deadline != 0)
			SOONER(w->w_deadline);
		if ((w->w_state == W_BUSY || w->w_state == W_AFTER) &&
		    !w->w_paused)
			SOONER(w->w_last_frame + s->s_conf.hang_timeout_ms);
		if (w->w_state == W_BUSY && w->w_req != NULL &&
		    w->w_req->sr_deadline != 0)
			SOONER(w->w_req->sr_deadline);
		if (w->w_state == W_IDLE && live > s->s_conf.min_workers)
			SOONER(w->w_state_at + s->s_conf.idle_timeout_ms);


	}
	TAILQ_FOREACH(sr, &s->s_queue, sr_entry) {
		SOONER(sr->sr_queued_at + s->s_conf.queue_timeout_ms);
		if (sr->sr_deadline != 0)
			SOONER(sr->sr_deadline);
	}
	if (s->s_pool == POOL_DRAINING)
		SOONER(s->s_drain_deadline);
	/* Only a future hold: a past one was already considered. */
	if (s->s_hold_until > t && s->s_pool == POOL_RUNNING)
		SOONER(s->s_hold_until);
#undef SOONER
	return at == UINT64_MAX ? 0 : at;
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

static void
maintain(struct sup *s)
{
	uint64_t	 at;

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
	at = next_wake(s);
	/* A deadline already behind us still needs a prompt timer. */
	s->s_ops.arm_timer(s->s_arg, at);
}

/* Room for 2 x max_workers slots, keeping the existing ones. */
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

void
sup_reload(struct sup *s, const struct sup_conf *c)
{
	unsigned	 i;

	if (s->s_pool != POOL_RUNNING)
		return;
	set_conf(s, c);
	s->s_gen++;
	s->s_broken = false;	/* the new binary or config may work */
	for (i = 0; i < s->s_nw; i++) {
		struct worker	*w = &s->s_w[i];

		w->w_disabled = false;
		if (w->w_state == W_IDLE)
			w_shutdown(s, w, "reload");
	}
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
	    s->s_nqueued, live_count(s));
	s->s_pool = POOL_DRAINING;
	s->s_drain_deadline = now(s) + s->s_conf.drain_timeout_ms;
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
	st->st_live = live_count(s);
	st->st_queued = s->s_nqueued;
	st->st_degraded = degraded(s);
	st->st_broken = s->s_broken;
	st->st_pool = s->s_pool;
}

size_t
sup_workers(const struct sup *s, struct sup_winfo *out, size_t max)
{
	uint64_t	 t = s->s_ops.now(s->s_arg);
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
