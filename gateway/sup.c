/* sup.c - the supervisor's worker state machine: moves, deaths, per-worker timers. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "sup_int.h"

static const char *const state_names[W_NSTATES] = {
	"empty", "spawning", "idle", "busy", "after", "cancelling",
	"retiring", "killing", "dead",
};

const char *
sup_state_name(enum w_state s)
{
	return (unsigned)s < W_NSTATES ? state_names[s] : "?";
}

/*
 * The moves a worker may make: docs/HACKING.md's "Worker states" as a
 * table. A process that ends always passes DEAD (even when its exit and
 * its channel's end come at once), and only DEAD empties a slot.
 */
static const bool allowed[W_NSTATES][W_NSTATES] = {
	[W_EMPTY] =	 { [W_SPAWNING] = true },
	[W_SPAWNING] =	 { [W_IDLE] = true, [W_KILLING] = true,
			   [W_DEAD] = true },
	[W_IDLE] =	 { [W_BUSY] = true, [W_RETIRING] = true,
			   [W_KILLING] = true, [W_DEAD] = true },
	[W_BUSY] =	 { [W_IDLE] = true, [W_AFTER] = true,
			   [W_CANCELLING] = true, [W_RETIRING] = true,
			   [W_KILLING] = true, [W_DEAD] = true },
	[W_AFTER] =	 { [W_IDLE] = true, [W_RETIRING] = true,
			   [W_KILLING] = true, [W_DEAD] = true },
	[W_CANCELLING] = { [W_IDLE] = true, [W_AFTER] = true,
			   [W_RETIRING] = true, [W_KILLING] = true,
			   [W_DEAD] = true },
	[W_RETIRING] =	 { [W_KILLING] = true, [W_DEAD] = true },
	[W_KILLING] =	 { [W_DEAD] = true },
	[W_DEAD] =	 { [W_KILLING] = true, [W_EMPTY] = true },
};

/* 0 if w may move to st; else the bug is counted, logged the first
 * time for this pair of states, and -1 returned. */
static int
check_move(struct sup *s, const struct worker *w, enum w_state st)
{
	unsigned	 from = w->w_state, bit = 1u << st;

	if (from < W_NSTATES && st < W_NSTATES && allowed[from][st])
		return 0;
	s->s_st.st_bad_moves++;
	if (from < W_NSTATES && st < W_NSTATES &&
	    (s->s_bad_seen[from] & bit) == 0) {
		s->s_bad_seen[from] |= bit;
		log_warnx("bug: worker %u pid %d may not move from %s to %s; "
		    "left %s", w->w_slot, (int)w->w_pid, sup_state_name(from),
		    sup_state_name(st), sup_state_name(from));
	}
	return -1;
}

int
w_set_state(struct sup *s, struct worker *w, enum w_state st,
    uint64_t timeout)
{
	uint64_t	 t = sup_now(s);

	if (check_move(s, w, st) == -1)
		return -1;
	log_debug("worker %u pid %d: %s -> %s", w->w_slot, (int)w->w_pid,
	    sup_state_name(w->w_state), sup_state_name(st));
	w->w_state = st;
	w->w_state_at = t;
	w->w_deadline = timeout ? t + timeout : 0;
	return 0;
}

struct sup_req *
w_detach(struct worker *w)
{
	struct sup_req	*sr = w->w_req;

	w->w_req = NULL;
	if (sr != NULL)
		sr->sr_slot = -1;
	return sr;
}

int
w_send(struct sup *s, const struct worker *w, const struct proto_msg *m)
{
	struct buf	 b = BUF_INIT;
	int		 r = -1;

	if (proto_encode(&b, m) == 0 &&
	    s->s_ops.send(s->s_arg, w->w_slot, b.b_data, b.b_len) == 0)
		r = 0;
	buf_free(&b);
	return r;
}

void
w_unpause(struct sup *s, struct worker *w)
{
	if (w->w_paused) {
		w->w_paused = false;
		s->s_ops.pause_chan(s->s_arg, w->w_slot, false);
	}
}

/* Send the request to an idle worker. On a broken channel the worker
 * is killed and the request goes back to the head of the queue.
 * Returns -1 if w could not take it. */
static int
assign(struct sup *s, struct worker *w, struct sup_req *sr)
{
	if (w_set_state(s, w, W_BUSY, 0) == -1)
		return -1;
	sr->sr_slot = (int)w->w_slot;
	sr->sr_pid = w->w_pid;
	sr->sr_attempts++;
	w->w_req = sr;
	snprintf(w->w_rqid, sizeof(w->w_rqid), "%s", sr->sr_id);
	w->w_seq = 0;
	w->w_last_frame = sup_now(s);
	w->w_phase[0] = '\0';
	w->w_paused = false;
	if (s->s_ops.send(s->s_arg, w->w_slot, sr->sr_start,
	    sr->sr_start_len) == -1) {
		w_detach(w);
		sr->sr_attempts--;
		queue_requeue(s, sr);
		w_kill(s, w, "channel broken at dispatch");
	}
	return 0;
}

void
dispatch_pending(struct sup *s)
{
	struct sup_req	*sr;
	struct worker	*w;

	while ((sr = TAILQ_FIRST(&s->s_queue)) != NULL &&
	    (w = queue_pick_idle(s)) != NULL) {
		queue_remove(s, sr);
		if (assign(s, w, sr) == -1) {
			queue_requeue(s, sr);
			break;
		}
	}
}

void
w_spawn(struct sup *s, struct worker *w, unsigned max_requests)
{
	uint64_t	 t = sup_now(s);
	pid_t		 pid;

	if (check_move(s, w, W_SPAWNING) == -1)
		return;
	w->w_eof = w->w_exited = w->w_sigkilled = w->w_paused = false;
	w->w_ready_at = 0;
	w->w_served = 0;
	w->w_why = NULL;
	w->w_cause = SUP_EXIT_NONE;
	w->w_gen = s->s_gen;
	w->w_leave = false;
	w->w_phase[0] = '\0';
	w->w_rqid[0] = '\0';
	w->w_started = t;
	if (s->s_ops.spawn(s->s_arg, w->w_slot, max_requests, &pid) == -1) {
		backoff_fail(s, false);
		log_warnx("worker %u: spawn failed; retry in %llu ms",
		    w->w_slot, (unsigned long long)s->s_backoff);
		return;
	}
	w->w_pid = pid;
	s->s_st.st_spawned++;
	w_set_state(s, w, W_SPAWNING, s->s_conf.spawn_timeout_ms);
}

void
w_kill(struct sup *s, struct worker *w, const char *why)
{
	if (w->w_state == W_KILLING || w->w_state == W_EMPTY)
		return;
	if (w->w_exited) {
		/* Already gone: only the channel is left to close, which
		 * the dead timer does if it is not DEAD's already. */
		if (w->w_state == W_DEAD ||
		    w_set_state(s, w, W_DEAD, s->s_conf.kill_grace_ms) == -1)
			return;
	} else {
		if (w_set_state(s, w, W_KILLING, s->s_conf.kill_grace_ms) == -1)
			return;
		log_warnx("killing worker %u pid %d: %s", w->w_slot,
		    (int)w->w_pid, why);
		w->w_why = why;
		s->s_ops.kill(s->s_arg, w->w_pid, SIGTERM);
	}
	if (w->w_cause == SUP_EXIT_NONE)
		w->w_cause = SUP_EXIT_CRASH;
}

void
w_shutdown(struct sup *s, struct worker *w, const char *why)
{
	struct proto_msg m;

	if (w_set_state(s, w, W_RETIRING, s->s_conf.kill_grace_ms) == -1)
		return;
	w->w_why = why;
	w->w_cause = strcmp(why, "idle") == 0 ? SUP_EXIT_IDLE :
	    SUP_EXIT_SHUTDOWN;
	proto_msg_init(&m, PROTO_SHUTDOWN, NULL);
	if (w_send(s, w, &m) == -1)
		w_kill(s, w, why);
}

void
sup_cancel(struct sup *s, struct sup_req *sr)
{
	struct worker	*w;
	struct proto_msg m;

	if (sr->sr_queued) {
		queue_remove(s, sr);
		s->s_maintain(s);
		return;
	}
	if (sr->sr_slot < 0 || (unsigned)sr->sr_slot >= s->s_nw)
		return;
	w = &s->s_w[sr->sr_slot];
	w_detach(w);
	if (w->w_state != W_BUSY ||
	    w_set_state(s, w, W_CANCELLING, s->s_conf.cancel_grace_ms) == -1)
		return;
	w_unpause(s, w);
	proto_msg_init(&m, PROTO_CANCEL, w->w_rqid);
	if (w_send(s, w, &m) == -1)
		w_kill(s, w, "channel broken at cancel");
	s->s_maintain(s);
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
		w->w_last_frame = sup_now(s);	/* silence while paused is ours */
	s->s_ops.pause_chan(s->s_arg, w->w_slot, paused);
	s->s_maintain(s);
}

/* ---- deaths ------------------------------------------------------------ */

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
		queue_requeue(s, sr);
		return;
	}
	req_fail(s, sr, status, why);
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
	uint64_t	 t = sup_now(s), age = t - w->w_started;
	bool		 clean = WIFEXITED(w->w_wstatus) &&
			    WEXITSTATUS(w->w_wstatus) == 0;
	bool		 crash = !w_expected(w) && !clean;
	char		 how[64];

	if (w->w_state != W_DEAD && w_set_state(s, w, W_DEAD, 0) == -1)
		return;
	describe_exit(w, how, sizeof(how));
	if (WIFEXITED(w->w_wstatus) && WEXITSTATUS(w->w_wstatus) == EX_CONFIG) {
		s->s_broken = true;
		log_warnx("worker %u pid %d %s (configuration error); "
		    "not respawning", w->w_slot, (int)w->w_pid, how);
	} else if (crash) {
		backoff_fail(s, w->w_ready_at != 0 && t - w->w_ready_at >=
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
	w_set_state(s, w, W_EMPTY, 0);
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
		w->w_deadline = sup_now(s) + s->s_conf.kill_grace_ms;
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
		w_set_state(s, w, W_DEAD, s->s_conf.kill_grace_ms);
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
	s->s_maintain(s);
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
	s->s_maintain(s);
}

/* ---- timers ------------------------------------------------------------ */

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
		req_fail(s, w_detach(w), 502, why);
		w_kill(s, w, "hung");
		return;
	}
	if (sr != NULL && sr->sr_deadline != 0 && t >= sr->sr_deadline) {
		log_warnx("[rq %s] deadline exceeded; cancelling", sr->sr_id);
		sup_cancel(s, sr);	/* detaches before the callback */
		req_fail(s, sr, 504, "the request exceeded its deadline");
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
	if (w_set_state(s, w, W_KILLING, s->s_conf.kill_grace_ms) == -1)
		return;
	log_warnx("worker %u pid %d closed its channel but did not exit",
	    w->w_slot, (int)w->w_pid);
	s->s_ops.kill(s->s_arg, w->w_pid, SIGKILL);
	w->w_sigkilled = true;
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
	w->w_deadline = sup_now(s) + s->s_conf.kill_grace_ms;
}

void
w_timers(struct sup *s, struct worker *w, uint64_t t)
{
	bool	 due = w->w_deadline != 0 && t >= w->w_deadline;

	if (w->w_exited && due && w->w_state != W_EMPTY) {
		/* Exited, but the channel never reached EOF. */
		w->w_eof = true;
		w_gone(s, w, "the worker handling the request died");
		return;
	}
	if (!due && w->w_state != W_BUSY && w->w_state != W_AFTER)
		return;
	switch (w->w_state) {
	case W_SPAWNING:
		w_kill(s, w, "no HELLO within the spawn timeout");
		break;
	case W_BUSY:
	case W_AFTER:
		busy_timers(s, w, t);
		break;
	case W_CANCELLING:
		w->w_cause = SUP_EXIT_CANCEL_KILL;
		w_kill(s, w, "no answer to CANCEL within the grace");
		break;
	case W_RETIRING:
		w_kill(s, w, "did not exit after SHUTDOWN or RETIRE");
		break;
	case W_KILLING:
		killing_timer(s, w);
		break;
	case W_DEAD:
		dead_timer(s, w);
		break;
	case W_EMPTY:
	case W_IDLE:		/* idle reaping is the pool's */
	case W_NSTATES:
		break;
	}
}

uint64_t
w_wake(const struct sup *s, const struct worker *w)
{
	uint64_t	 at = UINT64_MAX;

	if (w->w_deadline != 0)
		at = w->w_deadline;
	if ((w->w_state == W_BUSY || w->w_state == W_AFTER) && !w->w_paused)
		at = sooner(at, w->w_last_frame + s->s_conf.hang_timeout_ms);
	if (w->w_state == W_BUSY && w->w_req != NULL &&
	    w->w_req->sr_deadline != 0)
		at = sooner(at, w->w_req->sr_deadline);
	return at;
}
