/* wloop.c - the worker's request loop: frames from the gateway, chunks back, cancel, heartbeats. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "../proto/frame.h"
#include "callcache.h"
#include "fault.h"
#include "flow.h"
#include "wloop.h"

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
}

/* The gateway is our only reason to live: if it is gone, so are we. */
void
wloop_send(struct wctx *wc, const struct proto_msg *m)
{
	struct buf	 b = BUF_INIT;

	if (proto_encode(&b, m) == -1)
		fatalx("%s frame too large", proto_type_name(m->m_type));
	if (frame_write_all(wc->wc_fd, b.b_data, b.b_len) == -1) {
		if (errno == EPIPE || errno == ECONNRESET)
			fatalx_code(0, "gateway channel closed; exiting");
		fatal("write to gateway");
	}
	buf_free(&b);
	wc->wc_last_sent = clock_mono_ms();
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

void
wloop_emit(struct wctx *wc, struct str content, struct str reasoning)
{
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

void
wloop_cache(struct wctx *wc, bool hit, bool answer, int64_t entries)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_CACHE, wc->wc_rqid);
	m.m_u.cache.hit = hit;
	m.m_u.cache.answer = answer;
	m.m_u.cache.entries = entries;
	wloop_send(wc, &m);
}

void
wloop_emit_tools(struct wctx *wc, struct str tool_calls)
{
	struct proto_msg m;

	if (tool_calls.n == 0 || !may_emit(wc))
		return;
	proto_msg_init(&m, PROTO_REQ_CHUNK, wc->wc_rqid);
	m.m_u.req_chunk.seq = wc->wc_seq++;
	m.m_u.req_chunk.tool_calls = tool_calls;
	wloop_send(wc, &m);
}

void
wloop_phase(struct wctx *wc, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(wc->wc_phase, sizeof(wc->wc_phase), fmt, ap);
	va_end(ap);
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
		/* An answer for a wait we gave up crossed our SLOT_RELEASE;
		 * the gateway takes that release for the grant too. */
		if (str_eq(m->m_rqid, wc->wc_rqid) &&
		    str_eq(m->m_u.slot.endpoint, wc->wc_slot_ep) &&
		    wc->wc_slot_answer == 0)
			wc->wc_slot_answer = m->m_u.slot.granted ? 1 : -1;
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
		proto_msg_free(&m);
	}
	if (r == -1)
		fatalx("oversize frame from gateway");
}

int
wloop_on_wake(void *arg, bool readable)
{
	struct wctx	*wc = arg;
	uint64_t	 now = clock_mono_ms();
	ssize_t		 n;

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

bool
wloop_stopped(struct wctx *wc)
{
	struct pollfd	 pfd = { wc->wc_fd, POLLIN, 0 };
	bool		 readable = poll(&pfd, 1, 0) == 1 &&
			    (pfd.revents & (POLLIN | POLLHUP));

	return wloop_on_wake(wc, readable) == 1;
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
		p->message = str_from(r->r_message[0] != '\0' ?
		    r->r_message : "failed");
	}
	wloop_send(wc, &m);
}

void
wloop_answer(struct wctx *wc, const struct wresult *res)
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

bool
wloop_answered(const struct wctx *wc)
{
	return wc->wc_answered;
}

/* SLUICE_FAULT=after_ms=N: answer as soon as the workflow returns, as if
 * its last node were the responder, then work N ms after the answer,
 * kept informed and stoppable like real nodes. */
static void
fault_after(struct wctx *wc, const struct wresult *res)
{
	uint64_t	 ms = fault_after_ms(), end, t;

	if (ms == 0)
		return;
	if (!wc->wc_answered)
		wloop_answer(wc, res);
	if (!wc->wc_answered)
		return;
	wloop_phase(wc, "fault: %llu ms of work after the answer",
	    (unsigned long long)ms);
	end = clock_mono_ms() + ms;
	while ((t = clock_mono_ms()) < end && !wloop_stopped(wc))
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
	wc->wc_ep_limit = rs->ep_limit;
	wc->wc_ep_wait_ms = rs->ep_wait_ms;
	wc->wc_slot_ep[0] = '\0';
	memset(&res, 0, sizeof(res));
	res.r_prompt_tokens = res.r_completion_tokens = -1;
	fault_on_request();
	if (rs->api == API_CACHE_CLEAR)
		callcache_clear_request(wc, &res);
	else
		flow_run(wc, rs, &res);
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
	m.m_version = PROTO_VERSION + (uint32_t)fault_version_skew();
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
