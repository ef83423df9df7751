/* sup_frames.c - frames from a worker: checked against its state and request, and the moves they cause. */
#include <stdio.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "sup_int.h"

/* The gateway never trusts a worker: anything unexpected kills it. */
static void
violation(struct sup *s, struct worker *w, const char *why)
{
	log_warnx("worker %u pid %d protocol violation: %s", w->w_slot,
	    (int)w->w_pid, why);
	if (w->w_state == W_BUSY)
		req_fail(s, w_detach(w), 502, "the worker broke the protocol");
	else
		w_detach(w);
	w_kill(s, w, "protocol violation");
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
	if (w_set_state(s, w, W_IDLE, 0) == -1)
		return;
	w->w_ready_at = sup_now(s);
	log_info("worker %u pid %d ready in %llu ms (build %.*s)", w->w_slot,
	    (int)w->w_pid, (unsigned long long)(w->w_ready_at - w->w_started),
	    (int)h->build.n, h->build.p ? h->build.p : "");
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
		if (w_set_state(s, w, W_RETIRING, s->s_conf.kill_grace_ms) == -1)
			return;
		w->w_cause = SUP_EXIT_RECYCLE;
		w->w_why = "retired after max_requests";
	} else if (w_set_state(s, w, W_IDLE, 0) == 0 &&
	    (w->w_gen != s->s_gen || w->w_leave))
		w_shutdown(s, w, w->w_leave ? "scaled down" : "reload");
}

/* The client has its answer, but the worker goes on with the request
 * (nodes after the responder) until POST_DONE: it keeps the request id
 * and is watched for hangs like a busy worker. Nobody reads the answer
 * any more, so nothing may hold its channel paused. */
static void
w_after(struct sup *s, struct worker *w)
{
	if (w_set_state(s, w, W_AFTER, 0) == 0)
		w_unpause(s, w);
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
	bool		 was_busy = w->w_state == W_BUSY;

	if (w->w_state == W_RETIRING)
		return;
	if (w->w_state != W_IDLE && !was_busy) {
		violation(s, w, "RETIRE while not idle");
		return;
	}
	if (was_busy && (w->w_seq != 0 || w->w_req == NULL)) {
		violation(s, w, "RETIRE in the middle of a request");
		return;
	}
	if (w_set_state(s, w, W_RETIRING, s->s_conf.kill_grace_ms) == -1)
		return;
	if (was_busy) {
		sr = w_detach(w);
		sr->sr_attempts--;
		queue_requeue(s, sr);
	}
	w->w_why = "retired";
	w->w_cause = SUP_EXIT_RECYCLE;
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

/* The request's store report: for /health and /metrics, whatever the
 * state the request is in. */
static void
on_store(struct sup *s, struct worker *w, const struct proto_msg *m)
{
	if (rq_matches(s, w, m) && s->s_ops.store_frame != NULL)
		s->s_ops.store_frame(s->s_arg, m);
}

int
sup_slot_answer(struct sup *s, unsigned slot, pid_t pid, const char *ep,
    bool granted)
{
	struct worker	*w;
	struct proto_msg m;

	if (slot >= s->s_nw)
		return -1;
	w = &s->s_w[slot];
	if (w->w_pid != pid || (w->w_state != W_BUSY &&
	    w->w_state != W_AFTER && w->w_state != W_CANCELLING))
		return -1;
	proto_msg_init(&m, PROTO_SLOT_GRANT, w->w_rqid);
	m.m_u.slot.endpoint = str_from(ep);
	m.m_u.slot.granted = granted;
	return w_send(s, w, &m);
}

void
sup_chan_frame(struct sup *s, unsigned slot, const struct proto_msg *m)
{
	struct worker	*w;
	enum w_state	 st0;

	if (slot >= s->s_nw || s->s_w[slot].w_state == W_EMPTY)
		return;
	w = &s->s_w[slot];
	if (w->w_state == W_KILLING || w->w_state == W_DEAD)
		return;		/* draining a channel we gave up on */
	w->w_last_frame = sup_now(s);
	if (proto_type_dir(m->m_type) != W2G) {
		violation(s, w, "message in the wrong direction");
		s->s_maintain(s);
		return;
	}
	st0 = w->w_state;
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
	case PROTO_STORE:	on_store(s, w, m);	break;
	default:		violation(s, w, "unexpected message"); break;
	}
	/* A chunk or heartbeat that changed no state only moves the hang
	 * deadline later: the timer armed before fires early at worst, and
	 * sup_timer re-arms it then. Most frames are these, so the walk
	 * over every slot and the timer re-add are saved per event. */
	if ((m->m_type == PROTO_REQ_CHUNK || m->m_type == PROTO_HEARTBEAT) &&
	    w->w_state == st0)
		return;
	s->s_maintain(s);
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
		s->s_broken = true;
		w->w_cause = SUP_EXIT_CONFIG;
		req_fail(s, w_detach(w), 502, "worker version mismatch");
		w_kill(s, w, "protocol version mismatch");
	} else
		violation(s, w, why);
	s->s_maintain(s);
}
