/* http.c - HTTP/1.1 server: listener, connections, deadlines, replies. */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "bevwrite.h"
#include "http.h"

#define HTTP_BACKLOG	511
#define HTTP_RETRY_MS	1000	/* listener pause after EMFILE/ENFILE */
#define HTTP_LINGER_MS	2000	/* read and discard after our FIN */
#define HTTP_PEND_KEEP	(16 * 1024)	/* c_pend kept between passes */
#define HTTP_FLUSH_MS	30000	/* last reply must drain by then */
#define HTTP_BATCH	16	/* pipelined requests per loop pass */
#define HTTP_ADDRLEN	(INET6_ADDRSTRLEN + 8)
#define HTTP_IP_BUCKETS	1024	/* hash buckets of the per-address counts */

/*
 * A connection is in exactly one state. Only the reaper (an event run
 * after the current callbacks) and http_server_free free one, so every
 * callback may close the socket and keep using the struct.
 */
enum conn_state {
	CS_READ,	/* reading a request, or idle between requests */
	CS_BUSY,	/* the handler owns the request, reply not begun */
	CS_STREAM,	/* streamed reply under way */
	CS_CLOSING,	/* last reply queued: flush, half-close, linger */
	CS_ZOMBIE,	/* socket gone, handler still holds the request */
	CS_DEAD,	/* waiting for the reaper */
};

enum feed_result { FEED_STOP, FEED_MORE, FEED_DISPATCHED };
enum body_mode { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_EOF };

/* A client address: what max_conns_per_ip counts connections by. */
struct ip_key {
	sa_family_t	 k_family;	/* AF_INET, AF_INET6; 0: not counted */
	uint8_t		 k_addr[16];
};

/* Open connections from one address; entries exist while n > 0. */
struct ip_count {
	struct ip_count	*ic_next;
	struct ip_key	 ic_key;
	unsigned	 ic_n;
};

struct http_conn {
	TAILQ_ENTRY(http_conn)	 c_entry;
	struct http_conn	*c_reap_next;
	struct http_server	*c_srv;
	struct bufferevent	*c_bev;		/* NULL once the socket is closed */
	struct event		*c_timer;	/* deadline of the current phase */
	struct event		*c_resume;	/* parse pipelined bytes later */
	struct http_parser	*c_parser;
	struct http_request	*c_req;		/* owned by c_parser */
	enum conn_state		 c_state;
	enum http_parse_phase	 c_phase;	/* timer armed for this phase */
	char			 c_peer[HTTP_ADDRLEN];
	char			 c_local[HTTP_ADDRLEN];	/* our end */
	char			*c_hdrs;	/* http_set_headers, or NULL */
	void			*c_owner;
	http_gone_cb		 c_gone;
	http_drain_cb		 c_drain;
	bool			 c_counted;	/* included in hs_nconns */
	bool			 c_ip_counted;	/* included in its ip_count */
	struct ip_key		 c_ip;
	bool			 c_in_process;
	bool			 c_close_after;
	bool			 c_chunked_out;
	bool			 c_head_only;
	bool			 c_want_drain;	/* write low-watermark armed */
	bool			 c_eof;
	bool			 c_lingering;
	bool			 c_reaping;
	bool			 c_call_gone;	/* reaper runs c_gone first */
	/* for the done hook */
	uint64_t		 c_t0_us;	/* request handed over */
	int64_t			 c_ttfb_us;
	int			 c_status;	/* 0 until a head is written */
	size_t			 c_bytes;
	const char		*c_route;
	long			 c_tag;
	unsigned		 c_nserved;	/* requests handed over */
	struct buf		 c_pend;	/* stream bytes for hs_flush */
	bool			 c_pending;	/* on hs_pend */
	TAILQ_ENTRY(http_conn)	 c_pend_entry;
};

TAILQ_HEAD(conn_list, http_conn);

struct http_server {
	struct event_base	*hs_base;
	struct http_limits	 hs_lim;
	http_handler		 hs_handler;
	http_error_fmt		 hs_errfmt;
	void			*hs_arg;
	struct evconnlistener	*hs_lev;
	struct event		*hs_retry;
	struct event		*hs_reap_ev;
	struct http_conn	*hs_reap;
	struct conn_list	 hs_conns;
	unsigned		 hs_nconns;
	unsigned		 hs_nbusy;
	struct ip_count		*hs_ip[HTTP_IP_BUCKETS];
	bool			 hs_stopping;
	char			 hs_addr[HTTP_ADDRLEN];
	http_done_cb		 hs_done;
	void			*hs_done_arg;
	struct event		*hs_flush;	/* writes out hs_pend */
	struct conn_list	 hs_pend;	/* stream bytes waiting */
};

static void	conn_process(struct http_conn *);
static void	out_add(struct http_conn *, const void *, size_t);
static void	conn_send_error(struct http_conn *, int, const char *,
		    const char *);

/* ---- small helpers ------------------------------------------------- */

void
http_limits_default(struct http_limits *l)
{
	l->max_header_bytes = 16 * 1024;
	l->max_headers = 100;
	l->max_url = 8 * 1024;
	l->max_body = 4 * 1024 * 1024;
	l->header_timeout_ms = 10 * 1000;
	l->body_timeout_ms = 60 * 1000;
	l->keepalive_timeout_ms = 75 * 1000;
	l->max_conns = 1024;
	l->out_high_water = 1024 * 1024;
	l->max_conns_per_ip = 512;
}

static const char *
http_reason(int status)
{
	static const struct {
		int		 st;
		const char	*why;
	} tab[] = {
		{ 100, "Continue" }, { 200, "OK" }, { 201, "Created" },
		{ 202, "Accepted" }, { 204, "No Content" },
		{ 301, "Moved Permanently" }, { 302, "Found" },
		{ 304, "Not Modified" }, { 400, "Bad Request" },
		{ 401, "Unauthorized" }, { 403, "Forbidden" },
		{ 404, "Not Found" }, { 405, "Method Not Allowed" },
		{ 408, "Request Timeout" }, { 409, "Conflict" },
		{ 411, "Length Required" }, { 413, "Content Too Large" },
		{ 414, "URI Too Long" }, { 415, "Unsupported Media Type" },
		{ 417, "Expectation Failed" }, { 422, "Unprocessable Content" },
		{ 429, "Too Many Requests" },
		{ 431, "Request Header Fields Too Large" },
		{ 499, "Client Closed Request" },
		{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
		{ 502, "Bad Gateway" }, { 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" }, { 505, "HTTP Version Not Supported" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].st == status)
			return tab[i].why;
	return "Unknown";
}

static bool
status_has_body(int status)
{
	return status >= 200 && status != 204 && status != 304;
}

/* JSON error body used when the server has no http_error_fmt. */
static char *
default_error_body(int status, const char *msg)
{
	struct buf	 b = BUF_INIT;
	const char	*p;

	buf_adds(&b, "{\"error\":{\"message\":\"");
	for (p = msg; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\') {
			buf_addc(&b, '\\');
			buf_addc(&b, *p);
		} else if ((unsigned char)*p < 0x20)
			buf_printf(&b, "\\u%04x", (unsigned char)*p);
		else
			buf_addc(&b, *p);
	}
	buf_printf(&b, "\",\"code\":%d}}", status);
	return buf_take(&b);
}

static char *
srv_error_body(struct http_server *srv, const char *path, int status,
    const char *msg)
{
	char	*body = NULL;

	if (srv->hs_errfmt != NULL)
		body = srv->hs_errfmt(path, status, msg, srv->hs_arg);
	return body != NULL ? body : default_error_body(status, msg);
}

/* Arm the connection timer; 0 ms means no deadline. libevent times a
 * timer from the time it cached when the loop woke, which may be tens
 * of ms old in a busy pass: refresh it so no deadline fires early. */
static void
conn_arm(struct http_conn *c, unsigned ms)
{
	struct timeval	 tv;

	if (ms == 0) {
		evtimer_del(c->c_timer);
		return;
	}
	event_base_update_cache_time(c->c_srv->hs_base);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(c->c_timer, &tv);
}

static struct evbuffer *
conn_out(const struct http_conn *c)
{
	return bufferevent_get_output(c->c_bev);
}

static uint64_t
now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Tell the done hook how the current request ended. */
static void
conn_report(struct http_conn *c, bool gone)
{
	struct http_server	*srv = c->c_srv;
	struct http_done	 d;

	if (srv->hs_done == NULL || c->c_t0_us == 0)
		return;
	d.hd_status = c->c_status != 0 ? c->c_status : 499;
	d.hd_bytes = c->c_bytes;
	d.hd_total_us = now_us() - c->c_t0_us;
	d.hd_ttfb_us = c->c_ttfb_us;
	d.hd_route = c->c_route;
	d.hd_tag = c->c_tag;
	d.hd_client_gone = gone;
	c->c_t0_us = 0;
	srv->hs_done(c->c_req, &d, srv->hs_done_arg);
}

/* Body bytes of the reply: counted, and the first one timed. */
static void
body_note(struct http_conn *c, size_t n)
{
	if (n > 0 && c->c_ttfb_us < 0 && c->c_t0_us != 0)
		c->c_ttfb_us = (int64_t)(now_us() - c->c_t0_us);
	c->c_bytes += n;
}

static void
out_add(struct http_conn *c, const void *p, size_t n)
{
	if (n > 0 && evbuffer_add(conn_out(c), p, n) == -1)
		fatalx("http: evbuffer_add of %zu bytes failed", n);
}

/* ---- connections per client address ------------------------------- */

static void
ip_key_of(const struct sockaddr *sa, struct ip_key *k)
{
	memset(k, 0, sizeof(*k));
	if (sa != NULL && sa->sa_family == AF_INET) {
		k->k_family = AF_INET;
		memcpy(k->k_addr, &((const struct sockaddr_in *)sa)->sin_addr,
		    sizeof(struct in_addr));
	} else if (sa != NULL && sa->sa_family == AF_INET6) {
		k->k_family = AF_INET6;
		memcpy(k->k_addr, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		    sizeof(struct in6_addr));
	}
}

/* Where the count of k is (*slot NULL when there is none). */
static struct ip_count **
ip_slot(struct http_server *srv, const struct ip_key *k)
{
	struct ip_count	**pp;
	uint32_t	  h = 2166136261u;	/* FNV-1a */
	size_t		  i;

	for (i = 0; i < sizeof(k->k_addr); i++)
		h = (h ^ k->k_addr[i]) * 16777619u;
	for (pp = &srv->hs_ip[h % HTTP_IP_BUCKETS]; *pp != NULL;
	    pp = &(*pp)->ic_next)
		if (memcmp(&(*pp)->ic_key, k, sizeof(*k)) == 0)
			break;
	return pp;
}

/* Count c against its address. False, and c not counted, when the
 * address already holds max_conns_per_ip connections. Counting goes on
 * with the cap off (0), so a reload that sets one finds true counts. */
static bool
ip_take(struct http_server *srv, struct http_conn *c)
{
	unsigned	  cap = srv->hs_lim.max_conns_per_ip;
	struct ip_count	**pp, *ic;

	if (c->c_ip.k_family == 0)
		return true;
	pp = ip_slot(srv, &c->c_ip);
	if ((ic = *pp) != NULL && cap != 0 && ic->ic_n >= cap)
		return false;
	if (ic == NULL) {
		ic = xcalloc(1, sizeof(*ic));
		ic->ic_key = c->c_ip;
		*pp = ic;
	}
	ic->ic_n++;
	c->c_ip_counted = true;
	return true;
}

static void
ip_give(struct http_server *srv, struct http_conn *c)
{
	struct ip_count	**pp, *ic;

	if (!c->c_ip_counted)
		return;
	c->c_ip_counted = false;
	pp = ip_slot(srv, &c->c_ip);
	if ((ic = *pp) != NULL && --ic->ic_n == 0) {
		*pp = ic->ic_next;
		free(ic);
	}
}

/* ---- connection lifetime ------------------------------------------- */

static void
conn_reap(struct http_conn *c)
{
	struct http_server	*srv = c->c_srv;

	if (c->c_reaping)
		return;
	c->c_reaping = true;
	c->c_reap_next = srv->hs_reap;
	srv->hs_reap = c;
	event_active(srv->hs_reap_ev, EV_TIMEOUT, 1);
}

/* Stream bytes of c not written yet go to the bufferevent's output,
 * after nothing (they were first), unless the socket is closed. */
static void
conn_pend_out(struct http_conn *c, size_t sent)
{
	if (!c->c_pending)
		return;
	TAILQ_REMOVE(&c->c_srv->hs_pend, c, c_pend_entry);
	c->c_pending = false;
	if (c->c_bev != NULL && sent < c->c_pend.b_len)
		out_add(c, c->c_pend.b_data + sent, c->c_pend.b_len - sent);
	buf_reset(&c->c_pend);
	if (c->c_pend.b_cap > HTTP_PEND_KEEP)
		buf_free(&c->c_pend);
}

/* Bytes for the client after those already owed: they gather in
 * c_pend for this pass's flush (srv_flush_cb) while nothing is queued
 * in the bufferevent, else they are queued there, in order. */
static void
pend_add(struct http_conn *c, const void *p, size_t n)
{
	struct http_server	*srv = c->c_srv;

	if (!c->c_pending && evbuffer_get_length(conn_out(c)) > 0) {
		out_add(c, p, n);
		return;
	}
	if (!c->c_pending) {
		if (TAILQ_EMPTY(&srv->hs_pend))
			event_active(srv->hs_flush, EV_TIMEOUT, 1);
		TAILQ_INSERT_TAIL(&srv->hs_pend, c, c_pend_entry);
		c->c_pending = true;
	}
	buf_add(&c->c_pend, p, n);
}

/* What gathered in c_pend, in one write; the rest to the bufferevent. */
static void
conn_pend_write(struct http_conn *c)
{
	if (c->c_pending)
		conn_pend_out(c, bev_write_now(c->c_bev, c->c_pend.b_data,
		    c->c_pend.b_len));
}

static void
conn_close_socket(struct http_conn *c)
{
	if (c->c_pending) {
		TAILQ_REMOVE(&c->c_srv->hs_pend, c, c_pend_entry);
		c->c_pending = false;
	}
	buf_free(&c->c_pend);
	if (c->c_bev != NULL) {
		bufferevent_free(c->c_bev);
		c->c_bev = NULL;
	}
	if (c->c_counted) {
		c->c_counted = false;
		c->c_srv->hs_nconns--;
	}
	ip_give(c->c_srv, c);
	event_del(c->c_timer);
	event_del(c->c_resume);
}

static void
conn_close_now(struct http_conn *c)
{
	conn_close_socket(c);
	c->c_state = CS_DEAD;
	conn_reap(c);
}

/* The client went away (or the server is going). Tells the owner of a
 * pending request; without an owner the request stays with the handler
 * as a zombie until it ends the reply. */
static void
conn_lost(struct http_conn *c)
{
	http_gone_cb	 gone = c->c_gone;
	void		*owner = c->c_owner;

	conn_close_socket(c);
	if (c->c_state != CS_BUSY && c->c_state != CS_STREAM) {
		c->c_state = CS_DEAD;
		conn_reap(c);
		return;
	}
	conn_report(c, true);
	c->c_srv->hs_nbusy--;
	c->c_owner = NULL;
	c->c_gone = NULL;
	c->c_drain = NULL;
	if (gone == NULL) {
		c->c_state = CS_ZOMBIE;
		return;
	}
	c->c_state = CS_DEAD;
	conn_reap(c);
	gone(owner);
}

static void
conn_free(struct http_conn *c)
{
	TAILQ_REMOVE(&c->c_srv->hs_conns, c, c_entry);
	conn_close_socket(c);
	event_free(c->c_timer);
	event_free(c->c_resume);
	http_parser_free(c->c_parser);
	free(c->c_hdrs);
	free(c);
}

static void
srv_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_server	*srv = arg;
	struct http_conn	*c, *next;

	c = srv->hs_reap;
	srv->hs_reap = NULL;
	for (; c != NULL; c = next) {
		next = c->c_reap_next;
		if (c->c_call_gone && c->c_gone != NULL) {
			c->c_call_gone = false;
			c->c_gone(c->c_owner);
		}
		conn_free(c);
	}
}

/* Our output is flushed: half-close and read until the client closes,
 * so that unread request bytes do not turn our FIN into a reset that
 * destroys the reply before the client has read it. */
static void
conn_flushed(struct http_conn *c)
{
	if (c->c_eof || shutdown(bufferevent_getfd(c->c_bev), SHUT_WR) == -1) {
		conn_close_now(c);
		return;
	}
	c->c_lingering = true;
	conn_arm(c, HTTP_LINGER_MS);
}

static void
conn_begin_close(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->c_bev);

	c->c_state = CS_CLOSING;
	c->c_close_after = true;
	c->c_want_drain = false;
	bufferevent_setwatermark(c->c_bev, EV_WRITE, 0, 0);
	conn_arm(c, HTTP_FLUSH_MS);
	evbuffer_drain(in, evbuffer_get_length(in));
	if (evbuffer_get_length(conn_out(c)) == 0)
		conn_flushed(c);
}

static void
conn_want_drain(struct http_conn *c)
{
	if (c->c_want_drain)
		return;
	c->c_want_drain = true;
	bufferevent_setwatermark(c->c_bev, EV_WRITE,
	    c->c_srv->hs_lim.out_high_water / 2, 0);
}

static bool
conn_out_over(const struct http_conn *c)
{
	return evbuffer_get_length(conn_out(c)) >
	    c->c_srv->hs_lim.out_high_water;
}

static void
conn_note_output(struct http_conn *c)
{
	if (conn_out_over(c))
		conn_want_drain(c);
}

/* ---- parsing driver ------------------------------------------------ */

/* Keep the deadline in step with the parser: the head of a request that
 * follows another is timed from its first byte, a body from the end of
 * its head. The first head is timed from accept (c_phase starts there). */
static void
conn_sync_phase(struct http_conn *c)
{
	const struct http_limits *l = &c->c_srv->hs_lim;
	enum http_parse_phase	 ph = http_parser_phase(c->c_parser);

	if (ph == c->c_phase)
		return;
	c->c_phase = ph;
	if (ph == HTTP_PHASE_HEAD)
		conn_arm(c, l->header_timeout_ms);
	else if (ph == HTTP_PHASE_BODY)
		conn_arm(c, l->body_timeout_ms);
}

static void
conn_dispatch(struct http_conn *c)
{
	struct http_server	*srv = c->c_srv;

	event_del(c->c_timer);
	c->c_req->peer = c->c_peer;
	c->c_req->local = c->c_local;
	c->c_t0_us = now_us();
	c->c_nserved++;
	c->c_ttfb_us = -1;
	c->c_status = 0;
	c->c_bytes = 0;
	c->c_route = NULL;
	c->c_tag = 0;
	c->c_close_after = !c->c_req->keep_alive || srv->hs_stopping;
	c->c_state = CS_BUSY;
	srv->hs_nbusy++;
	srv->hs_handler(c, c->c_req, srv->hs_arg);
}

/* Parse the first contiguous block of input and drain exactly what the
 * parser consumed; it stops right after a complete request. */
static enum feed_result
conn_feed(struct http_conn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->c_bev);
	struct evbuffer_iovec	 v;
	enum http_parse_result	 r;
	const char		*msg;
	size_t			 used;
	int			 status;

	if (evbuffer_peek(in, -1, NULL, &v, 1) < 1 || v.iov_len == 0)
		return FEED_STOP;
	r = http_parser_feed(c->c_parser, v.iov_base, v.iov_len, &used);
	evbuffer_drain(in, used);
	conn_sync_phase(c);
	switch (r) {
	case HTTP_PARSE_MORE:
		return FEED_MORE;
	case HTTP_PARSE_EXPECT:
		/* no need for it once body bytes have arrived */
		if (evbuffer_get_length(in) == 0)
			out_add(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		return FEED_MORE;
	case HTTP_PARSE_REQUEST:
		conn_dispatch(c);
		return FEED_DISPATCHED;
	default:
		status = http_parser_error(c->c_parser, &msg);
		conn_send_error(c, status, msg, NULL);
		return FEED_STOP;
	}
}

/* Parse and dispatch while the connection is reading. A reply ended
 * inside the handler brings us back to CS_READ and the loop goes on with
 * pipelined bytes; otherwise reply end schedules c_resume. */
static void
conn_process(struct http_conn *c)
{
	enum feed_result	 r;
	int			 nreq = 0;

	if (c->c_in_process)
		return;
	c->c_in_process = true;
	while (c->c_state == CS_READ) {
		if (c->c_phase == HTTP_PHASE_IDLE && conn_out_over(c)) {
			/* the client does not read its replies: wait */
			conn_want_drain(c);
			break;
		}
		if (nreq == HTTP_BATCH) {
			event_active(c->c_resume, EV_TIMEOUT, 1);
			break;
		}
		if ((r = conn_feed(c)) == FEED_STOP)
			break;
		if (r == FEED_DISPATCHED)
			nreq++;
	}
	c->c_in_process = false;
}

/* ---- bufferevent and timer callbacks ------------------------------- */

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);

	if (c->c_state == CS_READ)
		conn_process(c);
	else if (c->c_state == CS_CLOSING)
		evbuffer_drain(in, evbuffer_get_length(in));
	/* CS_BUSY/CS_STREAM: pipelined bytes wait for the reply to end */
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct http_conn	*c = arg;
	size_t			 left;

	left = evbuffer_get_length(bufferevent_get_output(bev));
	if (c->c_state == CS_CLOSING) {
		if (left == 0 && !c->c_lingering)
			conn_flushed(c);
		return;
	}
	if (!c->c_want_drain || left > c->c_srv->hs_lim.out_high_water / 2)
		return;
	c->c_want_drain = false;
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	if (c->c_state == CS_READ)
		conn_process(c);
	else if (c->c_drain != NULL)
		c->c_drain(c->c_owner);
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct http_conn	*c = arg;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	switch (c->c_state) {
	case CS_BUSY:
	case CS_STREAM:
		conn_lost(c);
		break;
	case CS_CLOSING:
		if ((what & BEV_EVENT_ERROR) || c->c_lingering)
			conn_close_now(c);
		else
			c->c_eof = true;	/* keep flushing the reply */
		break;
	case CS_READ:
		if ((what & BEV_EVENT_EOF) &&
		    evbuffer_get_length(conn_out(c)) > 0) {
			c->c_eof = true;
			conn_begin_close(c);
		} else
			conn_close_now(c);
		break;
	default:
		break;
	}
}

static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	if (c->c_state == CS_CLOSING) {
		conn_close_now(c);
		return;
	}
	if (c->c_state != CS_READ)
		return;
	switch (c->c_phase) {
	case HTTP_PHASE_IDLE:
		if (evbuffer_get_length(conn_out(c)) > 0)
			conn_begin_close(c);	/* still sending: give it time */
		else
			conn_close_now(c);
		break;
	case HTTP_PHASE_HEAD:
		conn_send_error(c, 408, "request header timeout", NULL);
		break;
	case HTTP_PHASE_BODY:
		conn_send_error(c, 408, "request body timeout", NULL);
		break;
	}
}

static void
conn_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	if (c->c_state == CS_READ)
		conn_process(c);
}

/* ---- replies ------------------------------------------------------- */

/* The response head, appended to out. */
static void
conn_write_head(struct http_conn *c, struct buf *out, int status,
    const char *ctype, const char *extra, enum body_mode mode, size_t len)
{
	c->c_status = status;
	buf_printf(out, "HTTP/1.1 %d %s\r\nServer: sluice\r\n"
	    "X-Request-Id: %s\r\nContent-Type: %s\r\n", status,
	    http_reason(status), c->c_req->id,
	    ctype != NULL ? ctype : "application/octet-stream");
	if (mode == BODY_LENGTH)
		buf_printf(out, "Content-Length: %zu\r\n", len);
	else if (mode == BODY_CHUNKED)
		buf_adds(out, "Transfer-Encoding: chunked\r\n");
	buf_printf(out, "Connection: %s\r\n%s%s\r\n",
	    c->c_close_after ? "close" : "keep-alive",
	    extra != NULL ? extra : "", c->c_hdrs != NULL ? c->c_hdrs : "");
}

/* A whole reply's bytes (b), after anything still owed: written at once
 * while nothing is queued (bev_write_now), the rest queued. */
static void
conn_send(struct http_conn *c, const struct buf *b)
{
	size_t	 w;

	conn_pend_write(c);
	w = bev_write_now(c->c_bev, b->b_data, b->b_len);
	out_add(c, b->b_data + w, b->b_len - w);
}

/* An error the server answers by itself, then closes the connection. */
static void
conn_send_error(struct http_conn *c, int status, const char *msg,
    const char *extra)
{
	struct buf	 b = BUF_INIT;
	char		*body;
	size_t		 len;

	log_debug("http: %s: %d %s", c->c_peer, status, msg);
	if (c->c_req->id[0] == '\0')
		uuid_new(c->c_req->id);
	body = srv_error_body(c->c_srv, c->c_req->path, status, msg);
	len = strlen(body);
	c->c_close_after = true;
	if (c->c_t0_us == 0) {		/* refused before the handler */
		c->c_t0_us = now_us();
		c->c_ttfb_us = -1;
		c->c_bytes = 0;
		c->c_route = NULL;
		c->c_tag = 0;
	}
	conn_write_head(c, &b, status, "application/json", extra,
	    BODY_LENGTH, len);
	if (c->c_req->method != HTTP_HEAD) {
		body_note(c, len);
		buf_add(&b, body, len);
	}
	conn_send(c, &b);
	buf_free(&b);
	free(body);
	conn_report(c, false);
	conn_begin_close(c);
}

static void
conn_reply_done(struct http_conn *c)
{
	struct http_server	*srv = c->c_srv;

	conn_report(c, false);
	srv->hs_nbusy--;
	http_set_headers(c, NULL);
	c->c_owner = NULL;
	c->c_gone = NULL;
	c->c_drain = NULL;
	if (c->c_close_after || srv->hs_stopping) {
		conn_begin_close(c);
		return;
	}
	http_parser_next(c->c_parser);
	c->c_chunked_out = c->c_head_only = false;
	c->c_state = CS_READ;
	c->c_phase = HTTP_PHASE_IDLE;
	conn_arm(c, srv->hs_lim.keepalive_timeout_ms);
	if (!c->c_in_process)
		event_active(c->c_resume, EV_TIMEOUT, 1);
}

/* Is the reply in state want? If not, the client is gone (or the call is
 * out of order). An ending call releases a zombie and cancels a gone
 * callback that was not delivered yet. */
static bool
conn_check(struct http_conn *c, enum conn_state want, bool ending)
{
	if (c->c_state == want)
		return true;
	if (c->c_state == CS_ZOMBIE && ending) {
		c->c_state = CS_DEAD;
		conn_reap(c);
	} else if (c->c_state == CS_DEAD && ending)
		c->c_call_gone = false;
	else if (c->c_state != CS_ZOMBIE && c->c_state != CS_DEAD)
		log_warnx("http: reply call out of order (state %d)",
		    (int)c->c_state);
	return false;
}

int
http_reply(struct http_conn *c, int status, const char *content_type,
    const char *extra_headers, const void *body, size_t len)
{
	bool		 has_body = status_has_body(status);
	struct buf	 b = BUF_INIT;

	if (!conn_check(c, CS_BUSY, true))
		return -1;
	conn_write_head(c, &b, status, content_type, extra_headers,
	    has_body ? BODY_LENGTH : BODY_NONE, has_body ? len : 0);
	if (has_body && c->c_req->method != HTTP_HEAD) {
		body_note(c, len);
		buf_add(&b, body, len);
	} else if (c->c_ttfb_us < 0 && c->c_t0_us != 0)
		c->c_ttfb_us = (int64_t)(now_us() - c->c_t0_us);
	conn_send(c, &b);
	buf_free(&b);
	conn_note_output(c);
	conn_reply_done(c);
	return 0;
}

int
http_reply_error(struct http_conn *c, int status, const char *message,
    const char *extra_headers)
{
	char	*body;
	int	 rc;

	if (!conn_check(c, CS_BUSY, true))
		return -1;
	body = srv_error_body(c->c_srv, c->c_req->path, status, message);
	rc = http_reply(c, status, "application/json", extra_headers, body,
	    strlen(body));
	free(body);
	return rc;
}

int
http_stream_begin(struct http_conn *c, int status, const char *content_type,
    const char *extra_headers)
{
	enum body_mode	 mode;
	struct buf	 b = BUF_INIT;

	if (!conn_check(c, CS_BUSY, false))
		return -1;
	c->c_chunked_out = c->c_req->version_minor >= 1;
	if (!c->c_chunked_out)
		c->c_close_after = true;	/* body ends at close */
	mode = c->c_chunked_out ? BODY_CHUNKED : BODY_EOF;
	c->c_head_only = c->c_req->method == HTTP_HEAD;
	if (!status_has_body(status)) {
		mode = BODY_NONE;
		c->c_head_only = true;
	}
	conn_write_head(c, &b, status, content_type, extra_headers, mode, 0);
	pend_add(c, b.b_data, b.b_len);	/* leaves with the first events */
	buf_free(&b);
	c->c_state = CS_STREAM;
	return 0;
}

/*
 * Stream events go out in one write per connection and loop pass.
 * Through the bufferevent, each event would arm the write event, wake
 * the loop once more when the socket is writable, write, and disarm it:
 * two epoll_ctl and a wake-up per event. So while nothing is queued in
 * the bufferevent, events gather in c_pend, and hs_flush (made active,
 * run once after this pass's callbacks) writes each connection's with
 * one write: all the events that arrived together leave together. What
 * the socket does not take, and all of it after a failure, goes to the
 * bufferevent as before, which writes it and reports the failure.
 */
static void
srv_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_server	*srv = arg;
	struct http_conn	*c;

	while ((c = TAILQ_FIRST(&srv->hs_pend)) != NULL) {
		conn_pend_write(c);
		conn_note_output(c);
	}
}

int
http_stream_write(struct http_conn *c, const void *data, size_t len)
{
	struct http_server	*srv = c->c_srv;
	struct buf		*p = &c->c_pend;
	char			 size[24];
	int			 k;

	if (!conn_check(c, CS_STREAM, false))
		return -1;
	if (len == 0 || c->c_head_only)
		return 0;
	body_note(c, len);
	if (c->c_chunked_out) {
		k = snprintf(size, sizeof(size), "%zx\r\n", len);
		pend_add(c, size, (size_t)k);
	}
	pend_add(c, data, len);
	if (c->c_chunked_out)
		pend_add(c, "\r\n", 2);
	if (!c->c_pending)
		conn_note_output(c);
	else if (p->b_len > srv->hs_lim.out_high_water) {
		conn_pend_out(c, 0);	/* the bufferevent's, with its drain */
		conn_note_output(c);
	}
	return 0;
}

int
http_stream_end(struct http_conn *c)
{
	if (!conn_check(c, CS_STREAM, true))
		return -1;
	if (c->c_chunked_out && !c->c_head_only)
		pend_add(c, "0\r\n\r\n", 5);
	conn_pend_write(c);	/* the end at once, with what gathered */
	buf_free(&c->c_pend);
	conn_note_output(c);
	conn_reply_done(c);
	return 0;
}

void
http_server_set_limits(struct http_server *srv, const struct http_limits *l)
{
	srv->hs_lim = *l;
}

void
http_server_on_done(struct http_server *srv, http_done_cb cb, void *arg)
{
	srv->hs_done = cb;
	srv->hs_done_arg = arg;
}

void
http_set_route(struct http_conn *c, const char *route)
{
	c->c_route = route;
}

void
http_set_tag(struct http_conn *c, long tag)
{
	c->c_tag = tag;
}

void
http_set_headers(struct http_conn *c, const char *lines)
{
	free(c->c_hdrs);
	c->c_hdrs = lines != NULL ? xstrdup(lines) : NULL;
}

void
http_set_owner(struct http_conn *c, void *owner, http_gone_cb gone,
    http_drain_cb drain)
{
	if (c->c_state == CS_BUSY || c->c_state == CS_STREAM) {
		c->c_owner = owner;
		c->c_gone = gone;
		c->c_drain = drain;
	} else if (c->c_state == CS_ZOMBIE && gone != NULL) {
		/* the client left before anyone was told: tell now, later */
		c->c_owner = owner;
		c->c_gone = gone;
		c->c_call_gone = true;
		c->c_state = CS_DEAD;
		conn_reap(c);
	}
}

bool
http_out_full(const struct http_conn *c)
{
	if (c->c_bev == NULL)
		return false;
	return conn_out_over(c);
}

const struct http_request *
http_conn_request(const struct http_conn *c)
{
	return c->c_req;
}

/* ---- server -------------------------------------------------------- */

/* Our end of an accepted connection: on a wildcard listener, the
 * address the client chose. */
static void
local_addr(int fd, char *out, size_t len)
{
	struct sockaddr_storage	 ss;
	socklen_t		 slen = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	out[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &slen) == 0)
		http_addr_fmt((struct sockaddr *)&ss, out, len);
}

static struct http_conn *
conn_new(struct http_server *srv, struct bufferevent *bev,
    const struct sockaddr *sa)
{
	const struct http_limits *l = &srv->hs_lim;
	struct http_conn	*c;
	size_t			 cap;

	c = xcalloc(1, sizeof(*c));
	c->c_srv = srv;
	c->c_bev = bev;
	c->c_timer = evtimer_new(srv->hs_base, conn_timer_cb, c);
	c->c_resume = event_new(srv->hs_base, -1, 0, conn_resume_cb, c);
	if (c->c_timer == NULL || c->c_resume == NULL)
		fatalx("http: event_new failed");
	c->c_parser = http_parser_new(&srv->hs_lim);
	c->c_req = http_parser_request(c->c_parser);
	http_addr_fmt(sa, c->c_peer, sizeof(c->c_peer));
	local_addr(bufferevent_getfd(bev), c->c_local, sizeof(c->c_local));
	ip_key_of(sa, &c->c_ip);
	c->c_state = CS_READ;
	c->c_phase = HTTP_PHASE_HEAD;
	cap = l->max_header_bytes + l->max_body;
	if (cap < l->max_body)
		cap = 0;	/* overflow: no cap */
	bufferevent_setcb(bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_setwatermark(bev, EV_READ, 0, cap);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&srv->hs_conns, c, c_entry);
	return c;
}

static void
srv_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int slen, void *arg)
{
	struct http_server	*srv = arg;
	struct bufferevent	*bev;
	struct http_conn	*c;
	int			 one = 1;

	if (sa != NULL && (sa->sa_family == AF_INET ||
	    sa->sa_family == AF_INET6))
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	bev = bufferevent_socket_new(srv->hs_base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		log_warnx("http: bufferevent_socket_new failed");
		close(fd);
		return;
	}
	c = conn_new(srv, bev, sa);
	if (srv->hs_nconns >= srv->hs_lim.max_conns) {
		conn_send_error(c, 503, "too many connections",
		    "Retry-After: 1\r\n");
		return;
	}
	if (!ip_take(srv, c)) {
		conn_send_error(c, 429, "too many connections from this "
		    "address", "Retry-After: 1\r\n");
		return;
	}
	c->c_counted = true;
	srv->hs_nconns++;
	conn_arm(c, srv->hs_lim.header_timeout_ms);
}

static void
srv_accept_error_cb(struct evconnlistener *lev, void *arg)
{
	struct http_server	*srv = arg;
	struct timeval		 tv = { HTTP_RETRY_MS / 1000,
				    (HTTP_RETRY_MS % 1000) * 1000 };
	int			 e = EVUTIL_SOCKET_ERROR();

	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		log_warnx("http: accept: %s; pausing for %d ms",
		    strerror(e), HTTP_RETRY_MS);
		evconnlistener_disable(lev);
		evtimer_add(srv->hs_retry, &tv);
		return;
	}
	log_warnx("http: accept: %s", strerror(e));
}

static void
srv_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_server	*srv = arg;

	if (srv->hs_lev != NULL && !srv->hs_stopping)
		evconnlistener_enable(srv->hs_lev);
}

struct http_server *
http_server_new(struct event_base *base, const struct http_limits *lim,
    http_handler h, http_error_fmt ef, void *arg)
{
	struct http_server	*srv;

	srv = xcalloc(1, sizeof(*srv));
	srv->hs_base = base;
	if (lim != NULL)
		srv->hs_lim = *lim;
	else
		http_limits_default(&srv->hs_lim);
	srv->hs_handler = h;
	srv->hs_errfmt = ef;
	srv->hs_arg = arg;
	TAILQ_INIT(&srv->hs_conns);
	TAILQ_INIT(&srv->hs_pend);
	srv->hs_retry = evtimer_new(base, srv_retry_cb, srv);
	srv->hs_reap_ev = event_new(base, -1, 0, srv_reap_cb, srv);
	srv->hs_flush = event_new(base, -1, 0, srv_flush_cb, srv);
	if (srv->hs_retry == NULL || srv->hs_reap_ev == NULL ||
	    srv->hs_flush == NULL) {
		if (srv->hs_retry != NULL)
			event_free(srv->hs_retry);
		if (srv->hs_reap_ev != NULL)
			event_free(srv->hs_reap_ev);
		if (srv->hs_flush != NULL)
			event_free(srv->hs_flush);
		free(srv);
		return NULL;
	}
	return srv;
}

static int
srv_attach(struct http_server *srv, struct evconnlistener *lev)
{
	struct sockaddr_storage	 ss;
	socklen_t		 slen = sizeof(ss);

	srv->hs_lev = lev;
	evconnlistener_set_error_cb(lev, srv_accept_error_cb);
	memset(&ss, 0, sizeof(ss));
	if (getsockname(evconnlistener_get_fd(lev), (struct sockaddr *)&ss,
	    &slen) == 0)
		http_addr_fmt((struct sockaddr *)&ss, srv->hs_addr,
		    sizeof(srv->hs_addr));
	return 0;
}

int
http_server_listen(struct http_server *srv, const char *addr, char *err,
    size_t errlen)
{
	struct sockaddr_storage	 ss;
	struct evconnlistener	*lev;
	size_t			 slen;

	if (srv->hs_lev != NULL || srv->hs_stopping) {
		snprintf(err, errlen, "already listening");
		return -1;
	}
	if (http_addr_parse(addr, &ss, &slen) == -1) {
		snprintf(err, errlen, "bad listen address \"%s\"", addr);
		return -1;
	}
	errno = 0;
	lev = evconnlistener_new_bind(srv->hs_base, srv_accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    HTTP_BACKLOG, (struct sockaddr *)&ss, (int)slen);
	if (lev == NULL) {
		snprintf(err, errlen, "listen on %s: %s", addr,
		    errno ? strerror(errno) : "failed");
		return -1;
	}
	return srv_attach(srv, lev);
}

int
http_server_adopt(struct http_server *srv, int fd, char *err, size_t errlen)
{
	struct evconnlistener	*lev;
	int			 acc = 0;
	socklen_t		 alen = sizeof(acc);

	if (srv->hs_lev != NULL || srv->hs_stopping) {
		snprintf(err, errlen, "already listening");
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &alen) == -1 ||
	    acc == 0) {
		snprintf(err, errlen, "fd %d is not a listening socket", fd);
		return -1;
	}
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    evutil_make_socket_closeonexec(fd) == -1) {
		snprintf(err, errlen, "fd %d: %s", fd, strerror(errno));
		return -1;
	}
	lev = evconnlistener_new(srv->hs_base, srv_accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    0, fd);
	if (lev == NULL) {
		snprintf(err, errlen, "fd %d: evconnlistener_new failed", fd);
		return -1;
	}
	return srv_attach(srv, lev);
}

const char *
http_server_addr(const struct http_server *srv)
{
	return srv->hs_addr;
}

void
http_server_stop_accepting(struct http_server *srv)
{
	struct http_conn	*c;
	struct evbuffer		*in;

	srv->hs_stopping = true;
	if (srv->hs_lev != NULL) {
		evconnlistener_free(srv->hs_lev);
		srv->hs_lev = NULL;
	}
	evtimer_del(srv->hs_retry);
	for (c = TAILQ_FIRST(&srv->hs_conns); c != NULL;
	    c = TAILQ_NEXT(c, c_entry)) {
		if (c->c_state == CS_BUSY || c->c_state == CS_STREAM) {
			c->c_close_after = true;
			continue;
		}
		if (c->c_state != CS_READ)
			continue;
		in = bufferevent_get_input(c->c_bev);
		/* A request under way is answered, then closed. So is the
		 * first request of a connection accepted just now: its bytes
		 * may still be on the way (its deadline closes it if not).
		 * Only idle keep-alive connections close at once. */
		if (c->c_nserved > 0 &&
		    http_parser_phase(c->c_parser) == HTTP_PHASE_IDLE &&
		    evbuffer_get_length(in) == 0)
			conn_begin_close(c);
	}
}

unsigned
http_server_nconns(const struct http_server *srv)
{
	return srv->hs_nconns;
}

unsigned
http_server_nbusy(const struct http_server *srv)
{
	return srv->hs_nbusy;
}

void
http_server_free(struct http_server *srv)
{
	struct http_conn	*c;

	if (srv == NULL)
		return;
	if (srv->hs_lev != NULL)
		evconnlistener_free(srv->hs_lev);
	srv->hs_lev = NULL;
	srv->hs_stopping = true;
	/* first tell every owner, then free: a gone callback may still
	 * call http_* on any connection */
	for (c = TAILQ_FIRST(&srv->hs_conns); c != NULL;
	    c = TAILQ_NEXT(c, c_entry)) {
		if (c->c_state == CS_DEAD && c->c_call_gone) {
			c->c_call_gone = false;
			c->c_gone(c->c_owner);
		} else
			conn_lost(c);
	}
	srv->hs_reap = NULL;
	while ((c = TAILQ_FIRST(&srv->hs_conns)) != NULL)
		conn_free(c);
	event_free(srv->hs_retry);
	event_free(srv->hs_reap_ev);
	event_free(srv->hs_flush);
	free(srv);
}

const char *
http_header(const struct http_request *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}
