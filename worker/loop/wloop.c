/* wloop.c - the worker's request loop: frames from the gateway, chunks back, cancel, heartbeats. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../../proto/frame.h"
#include "../engine/embed_job.h"
#include "../engine/flow.h"
#include "../llm/callcache.h"
#include "keycache.h"
#include "wloop.h"
#include "wloop_store.h"

#define HEARTBEAT_MS	1000

static struct frame_rd *
reader(struct wctx *wc)
{
	return wc->wc_priv;
}

int
wloop_init(struct wctx *wc, int fd)
{
	struct stat	 st;
	struct frame_rd	*rd;

	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
		return -1;
	wc->wc_fd = fd;
	rd = xmalloc(sizeof(*rd));
	frame_rd_init(rd, 0);
	wc->wc_priv = rd;
	wc->wc_keys = keycache_new();
	return 0;
}

void
wloop_free(struct wctx *wc)
{
	if (wc->wc_priv != NULL) {
		frame_rd_free(reader(wc));
		free(wc->wc_priv);
		wc->wc_priv = NULL;
	}
	keycache_free(wc->wc_keys);
	wc->wc_keys = NULL;
	buf_free(&wc->wc_out);
}

static struct wctx *
wctx_of(struct rq *rq)
{
	return rq->rq_loop;
}

/* Frames are encoded into one buffer kept between them (a streamed
 * chunk costs no malloc and free for it); one that grew past this is
 * given back after use. */
#define SEND_KEEP	(64 * 1024)

/* The gateway is our only reason to live: if it is gone, so are we. */
static void
wloop_write(struct wctx *wc, struct buf *b)
{
	if (frame_write_all(wc->wc_fd, b->b_data, b->b_len) == -1) {
		if (errno == EPIPE || errno == ECONNRESET)
			fatalx_code(0, "gateway channel closed; exiting");
		fatal("write to gateway");
	}
	buf_reset(b);
	if (b->b_cap > SEND_KEEP)
		buf_free(b);
	wc->wc_last_sent = clock_mono_ms();
}

/* The frames gathered so far, in one write. */
static void
wloop_flush(struct wctx *wc)
{
	if (wc->wc_out.b_len > 0)
		wloop_write(wc, &wc->wc_out);
}

/* A chunk gathers (rq.h, ro_flush); any other frame leaves at once with
 * what gathered before it, in order. A stream's events read together,
 * and the last text of an answer with its REQ_DONE, share one write:
 * one wake-up of the gateway instead of one per frame. */
static void
wloop_send(struct wctx *wc, const struct proto_msg *m)
{
	struct buf	*b = &wc->wc_out;

	if (proto_encode(b, m) == -1)
		fatalx("%s frame too large", proto_type_name(m->m_type));
	if (m->m_type != PROTO_REQ_CHUNK || b->b_len >= SEND_KEEP)
		wloop_write(wc, b);
}

static void
send_simple(struct wctx *wc, uint32_t type, const char *phase)
{
	struct proto_msg m;

	proto_msg_init(&m, type, wc->wc_busy ? wc->wc_rqid : NULL);
	if (type == PROTO_HEARTBEAT)
		m.m_u.heartbeat.phase = str_from(phase);
	else if (type == PROTO_RETIRE)
		m.m_u.retire.reason = str_from(phase);
	wloop_send(wc, &m);
}

/* False once the client's answer is complete and gone. */
static bool
may_emit(struct wctx *wc)
{
	if (!wc->wc_answered)
		return true;
	if (!wc->wc_dropping)
		log_debug("[rq %s] output after the answer dropped",
		    wc->wc_rqid);
	wc->wc_dropping = true;
	return false;
}

static void
op_emit(struct rq *rq, struct str content, struct str reasoning)
{
	struct wctx	*wc = wctx_of(rq);
	struct proto_msg m;

	if ((content.n == 0 && reasoning.n == 0) || !may_emit(wc))
		return;
	proto_msg_init(&m, PROTO_REQ_CHUNK, wc->wc_rqid);
	m.m_u.req_chunk.seq = wc->wc_seq++;
	if (content.n > 0)
		m.m_u.req_chunk.content = content;
	if (reasoning.n > 0)
		m.m_u.req_chunk.reasoning = reasoning;
	wloop_send(wc, &m);
}

static void
op_emit_tools(struct rq *rq, struct str tool_calls)
{
	struct wctx	*wc = wctx_of(rq);
	struct proto_msg m;

	if (tool_calls.n == 0 || !may_emit(wc))
		return;
	proto_msg_init(&m, PROTO_REQ_CHUNK, wc->wc_rqid);
	m.m_u.req_chunk.seq = wc->wc_seq++;
	m.m_u.req_chunk.tool_calls = tool_calls;
	wloop_send(wc, &m);
}

static void
set_phase(struct wctx *wc, const char *phase)
{
	snprintf(wc->wc_phase, sizeof(wc->wc_phase), "%s", phase);
	log_debug("[rq %s] %s", wc->wc_rqid, wc->wc_phase);
	if (wc->wc_busy)
		send_simple(wc, PROTO_HEARTBEAT, wc->wc_phase);
}

/* A message that arrives while a request runs. */
static void
busy_frame(struct wctx *wc, const struct proto_msg *m)
{
	switch (m->m_type) {
	case PROTO_CANCEL:
		/* Sent before our answer reached the gateway: there is no
		 * client left to stop for, and the work after the answer
		 * goes on. */
		if (str_eq(m->m_rqid, wc->wc_rqid) && wc->wc_answered)
			log_debug("[rq %s] CANCEL after the answer ignored",
			    wc->wc_rqid);
		else if (str_eq(m->m_rqid, wc->wc_rqid) && !wc->wc_cancelled) {
			log_debug("[rq %s] cancelled by the gateway",
			    wc->wc_rqid);
			wc->wc_cancelled = true;
		}
		break;
	case PROTO_SHUTDOWN:
		wc->wc_shutdown = true;
		break;
	case PROTO_SLOT_GRANT:
		slot_granted(&wc->wc_slot_wait, wc->wc_rqid, m);
		break;
	default:
		fatalx("gateway sent %s during a request",
		    proto_type_name(m->m_type));
	}
}

/* Decode every whole frame in the reader; fn handles each. */
static void
drain_frames(struct wctx *wc, void (*fn)(struct wctx *,
    const struct proto_msg *))
{
	const unsigned char	*p;
	size_t			 n;
	struct proto_msg	 m;
	char			 err[PROTO_ERRLEN];
	int			 r;

	while ((r = frame_rd_next(reader(wc), &p, &n)) == 1) {
		if (proto_decode(p, n, &m, err) == -1)
			fatalx("bad frame from gateway: %s", err);
		if (proto_type_dir(m.m_type) != G2W)
			fatalx("gateway sent %s", proto_type_name(m.m_type));
		fn(wc, &m);
		if (m.m_type == PROTO_REQ_START &&
		    m.m_u.req_start.api_key.n > 0)
			explicit_bzero((void *)(uintptr_t)p, n); /* the key */
		proto_msg_free(&m);
	}
	if (r == -1)
		fatalx("oversize frame from gateway");
}

static int
on_wake(struct wctx *wc, bool readable)
{
	uint64_t	 now = clock_mono_ms();
	ssize_t		 n;

	wloop_flush(wc);	/* nothing gathers while we look or wait */
	if (readable) {
		n = frame_rd_fill(reader(wc), wc->wc_fd);
		if (n == 0)
			fatalx_code(0, "gateway channel closed; exiting");
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			fatal("read from gateway");
	}
	/* Also frames that arrived together with REQ_START. */
	drain_frames(wc, busy_frame);
	if (wc->wc_busy && now - wc->wc_last_sent >= HEARTBEAT_MS)
		send_simple(wc, PROTO_HEARTBEAT, wc->wc_phase);
	if (wc->wc_deadline != 0 && now >= wc->wc_deadline && !wc->wc_cancelled)
		wc->wc_cancelled = wc->wc_expired = true;
	return wc->wc_cancelled ? 1 : 0;
}

static bool
stopped(struct wctx *wc)
{
	struct pollfd	 pfd = { wc->wc_fd, POLLIN, 0 };
	bool		 readable = poll(&pfd, 1, 0) == 1 &&
			    (pfd.revents & (POLLIN | POLLHUP));

	return on_wake(wc, readable) == 1;
}

/* The request being sent now is the worker's last one. Said in
 * REQ_DONE or POST_DONE, so the gateway never hands us another. */
static bool
last_request(const struct wctx *wc)
{
	return wc->wc_max_requests != 0 &&
	    wc->wc_served + 1 >= wc->wc_max_requests;
}

/* REQ_DONE; with background, an early answer (POST_DONE follows). */
static void
send_done(struct wctx *wc, const struct wresult *r, bool background)
{
	static const struct wresult expired = { .r_status = RQ_ERROR,
	    .r_http = 504, .r_code = PROTO_CODE_DEADLINE,
	    .r_message = "the request exceeded its deadline",
	    .r_prompt_tokens = -1, .r_completion_tokens = -1 };
	struct proto_msg	 m;
	struct proto_req_done	*d = &m.m_u.req_done;

	proto_msg_init(&m, PROTO_REQ_DONE, wc->wc_rqid);
	d->status = wc->wc_cancelled ? RQ_CANCELLED : r->r_status;
	if (wc->wc_expired) {
		/* Our own clock ran out before the gateway's CANCEL came. */
		d->status = RQ_ERROR;
		r = &expired;
	}
	d->finish = str_from(r->r_finish[0] ? r->r_finish : "stop");
	d->prompt_tokens = r->r_prompt_tokens;
	d->completion_tokens = r->r_completion_tokens;
	d->usage_estimated = r->r_usage_estimated;
	d->background = background;
	d->retiring = !background && last_request(wc);
	if (d->status == RQ_ERROR) {
		d->http_status = r->r_http ? r->r_http : 502;
		d->code = str_from(r->r_code[0] ? r->r_code : "error");
		d->message = str_from(r->r_message);
		if (r->r_endpoint[0] != '\0')
			d->endpoint = str_from(r->r_endpoint);
		if (r->r_retry_after[0] != '\0')
			d->retry_after = str_from(r->r_retry_after);
	}
	wloop_send(wc, &m);
}

/* The end of the work after an early answer. */
static void
send_post_done(struct wctx *wc, const struct wresult *r)
{
	struct proto_msg	 m;
	struct proto_post_done	*p = &m.m_u.post_done;

	proto_msg_init(&m, PROTO_POST_DONE, wc->wc_rqid);
	p->retiring = last_request(wc);
	if (wc->wc_expired) {
		p->failed = true;
		p->message = str_from("deadline: the request exceeded its "
		    "deadline");
	} else if (r->r_status != RQ_OK) {
		p->failed = true;
		p->message = str_from(log_text(r->r_message[0] != '\0' ?
		    r->r_message : "failed"));	/* for the gateway's log */
	}
	wloop_send(wc, &m);
}

static void
answer(struct wctx *wc, const struct wresult *res)
{
	if (!wc->wc_busy || wc->wc_answered)
		fatalx("[rq %s] answered twice or outside a request",
		    wc->wc_rqid);
	if (res->r_status != RQ_OK || wc->wc_cancelled) {
		log_debug("[rq %s] not answering early: %s", wc->wc_rqid,
		    wc->wc_cancelled ? "stopped" : "not a success");
		return;
	}
	send_done(wc, res, true);
	wc->wc_answered = true;
}

/* ---- the seam: the ops the layers below reach the request by ---- */

static void
op_phase(struct rq *rq, const char *phase)
{
	set_phase(wctx_of(rq), phase);
}

static bool
op_stopped(struct rq *rq)
{
	return stopped(wctx_of(rq));
}

static int
op_wake(struct rq *rq, bool readable)
{
	return on_wake(wctx_of(rq), readable);
}

static void
op_send(struct rq *rq, const struct proto_msg *m)
{
	wloop_send(wctx_of(rq), m);
}

static void
op_flush(struct rq *rq)
{
	wloop_flush(wctx_of(rq));
}

/* The gateway's slot, then (PostgreSQL store) a turn counted across
 * gateways, both within the request's wait for a slot. */
static enum rq_slot
op_slot_take(struct rq *rq, const char *ep, unsigned limit)
{
	struct wctx	*wc = wctx_of(rq);
	uint64_t	 end = clock_mono_ms() + rq->rq_ep_wait_ms;
	char		 was[96];
	enum rq_slot	 r;

	snprintf(was, sizeof(was), "%s", wc->wc_phase);
	r = slot_take(rq, &wc->wc_slot_wait, wc->wc_phase, ep, limit);
	if (r != RQ_SLOT_OK)
		return r;
	if ((r = turn_take(rq, &wc->wc_turns, ep, limit, end)) != RQ_SLOT_OK)
		slot_give(rq, ep, limit);
	if (strcmp(was, wc->wc_phase) != 0)
		rq_phase(rq, "%s", was);
	return r;
}

static void
op_slot_give(struct rq *rq, const char *ep, unsigned limit)
{
	turn_give(rq, &wctx_of(rq)->wc_turns, ep);
	slot_give(rq, ep, limit);
}

static void
op_answer(struct rq *rq, const struct wresult *res)
{
	answer(wctx_of(rq), res);
}

static bool
op_answered(struct rq *rq)
{
	return wctx_of(rq)->wc_answered;
}

static const struct rq_ops ops = {
	.ro_emit = op_emit,
	.ro_emit_tools = op_emit_tools,
	.ro_phase = op_phase,
	.ro_stopped = op_stopped,
	.ro_wake = op_wake,
	.ro_send = op_send,
	.ro_flush = op_flush,
	.ro_slot_take = op_slot_take,
	.ro_slot_give = op_slot_give,
	.ro_store = wloop_store,
	.ro_answer = op_answer,
	.ro_answered = op_answered,
};

/* SLUICE_FAULT=after_ms=N: answer as soon as the workflow returns, as if
 * its last node were the responder, then work N ms after the answer,
 * kept informed and stoppable like real nodes. */
static void
fault_after(struct wctx *wc, const struct wresult *res)
{
	uint64_t	 ms = wc->wc_faults.wf_after_ms, end, t;
	char		 phase[96];

	if (ms == 0)
		return;
	if (!wc->wc_answered)
		answer(wc, res);
	if (!wc->wc_answered)
		return;
	snprintf(phase, sizeof(phase), "fault: %llu ms of work after the "
	    "answer", (unsigned long long)ms);
	set_phase(wc, phase);
	end = clock_mono_ms() + ms;
	while ((t = clock_mono_ms()) < end && !stopped(wc))
		(void)poll(NULL, 0, (int)(end - t < 200 ? end - t : 200));
}

static void
serve(struct wctx *wc, const struct proto_msg *m)
{
	const struct proto_req_start	*rs = &m->m_u.req_start;
	struct wresult			 res;
	uint64_t			 t0 = clock_mono_ms();

	snprintf(wc->wc_rqid, sizeof(wc->wc_rqid), "%.*s", (int)m->m_rqid.n,
	    m->m_rqid.p ? m->m_rqid.p : "");
	wc->wc_busy = true;
	wc->wc_cancelled = wc->wc_expired = false;
	wc->wc_answered = wc->wc_dropping = false;
	wc->wc_seq = 0;
	wc->wc_deadline = rs->deadline_ms ? t0 + rs->deadline_ms : 0;
	wc->wc_slot_wait.sw_ep[0] = '\0';
	wc->wc_rq = (struct rq){ .rq_ops = &ops, .rq_loop = wc,
	    .rq_id = wc->wc_rqid, .rq_wake_fd = wc->wc_fd,
	    .rq_ep_limit = rs->ep_limit, .rq_ep_wait_ms = rs->ep_wait_ms,
	    .rq_cache = &wc->wc_cache, .rq_confdir = wc->wc_confdir };
	memset(&res, 0, sizeof(res));
	res.r_prompt_tokens = res.r_completion_tokens = -1;
	wloop_store_begin(wc);
	if (wc->wc_faults.wf_on_request != NULL)
		wc->wc_faults.wf_on_request();
	if (rs->api == API_CACHE_CLEAR)
		callcache_clear_request(&wc->wc_rq, &res);
	else if (rs->api == API_OPENAI_EMBED || rs->api == API_OLLAMA_EMBED)
		embed_job_run(&wc->wc_rq, rs, wc->wc_user, &res);
	else if (wloop_store_key(wc, rs, &res) == 0)
		flow_run(&wc->wc_rq, rs, wc->wc_user, &res);
	turn_give_all(&wc->wc_rq, &wc->wc_turns);
	wloop_store_end(wc);	/* WorkflowLock: the run's locks go */
	wloop_store_report(wc);
	fault_after(wc, &res);
	if (wc->wc_answered)
		send_post_done(wc, &res);
	else
		send_done(wc, &res, false);
	log_debug("[rq %s] done in %llu ms%s", wc->wc_rqid,
	    (unsigned long long)(clock_mono_ms() - t0),
	    wc->wc_answered ? ", answered early" : "");
	wc->wc_busy = false;
	wc->wc_phase[0] = '\0';
	wc->wc_served++;
}

static void
idle_frame(struct wctx *wc, const struct proto_msg *m)
{
	switch (m->m_type) {
	case PROTO_REQ_START:
		if (m->m_rqid.p == NULL)
			fatalx("REQ_START without a request id");
		serve(wc, m);
		break;
	case PROTO_CANCEL:		/* late: that request is over */
	case PROTO_SLOT_GRANT:		/* late: dropped with REQ_DONE */
		break;
	case PROTO_SHUTDOWN:
		wc->wc_shutdown = true;
		break;
	default:
		fatalx("gateway sent %s", proto_type_name(m->m_type));
	}
}

int
wloop_run(struct wctx *wc)
{
	struct proto_msg m;
	ssize_t		 n;

	proto_msg_init(&m, PROTO_HELLO, NULL);
	m.m_u.hello.version = PROTO_VERSION;
	m.m_version = PROTO_VERSION + (uint32_t)wc->wc_faults.wf_version_skew;
	m.m_u.hello.pid = getpid();
	m.m_u.hello.build = str_from(SLUICE_VERSION "+" SLUICE_BUILD);
	wloop_send(wc, &m);
	while (!wc->wc_shutdown) {
		if (wc->wc_max_requests != 0 &&
		    wc->wc_served >= wc->wc_max_requests)
			return 0;	/* announced in the last REQ_DONE */
		n = frame_rd_fill(reader(wc), wc->wc_fd);
		if (n == 0)
			return 0;	/* gateway gone: nothing left to do */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("read from gateway");
		}
		drain_frames(wc, idle_frame);
	}
	return 0;
}
