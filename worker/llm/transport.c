/* transport.c - one backend HTTP call at a time over libcurl, cancellable. */
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/buf.h"
#include "../../common/clock.h"
#include "../../common/log.h"
#include "transport.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION	"unknown"
#endif

#define LLM_ERR_BODY_MAX	(64 * 1024)	/* kept of a non-2xx body */
#define LLM_MAXAGE_CONN_S	60L		/* under backends' keep-alive */
#define LLM_IDLE_WAIT_MS	1000		/* poll cap when tick_ms is 0 */

/*
 * How it works
 *
 * One CURLM for the process holds the connection pool, so fresh easy
 * handles reuse a kept-alive backend connection. transport_perform runs its own
 * loop on libcurl's socket interface: curl tells us its sockets and its
 * timer (tp_sock_cb, tp_timer_cb); we poll them plus wake_fd, with a
 * timeout that never passes curl's timer or the next tick, and hand
 * curl each ready socket with what it is ready for
 * (curl_multi_socket_action). Unlike curl_multi_perform, that spares
 * libcurl its own zero-timeout poll of the socket before every read: a
 * streamed event costs one poll fewer. After each wait the
 * CLOCK_MONOTONIC time decides whether on_wake is due, so it runs at
 * least every tick_ms however often poll returns (data, curl timers)
 * and also while DNS (threaded resolver) or connect are pending.
 *
 * Cancel happens in that loop, never in a curl callback: the easy handle
 * gets CURLOPT_FORBID_REUSE (only then, so normal calls keep their pooled
 * connection) and leaves the multi while unfinished. libcurl
 * then disconnects instead of pooling (an HTTP/1.1 connection removed
 * mid-transfer is closed anyway; FORBID_REUSE also closes an HTTP/2 one),
 * so the backend sees the TCP close at once. CURLOPT_QUICK_EXIT keeps a
 * cancel or a timeout during DNS from blocking (no on_wake) until the
 * resolver thread returns; the thread is detached and frees itself. An abort from on_data fails the transfer inside
 * libcurl (CURLE_WRITE_ERROR), which closes the HTTP/1.1 connection too.
 *
 * A non-2xx body is kept up to LLM_ERR_BODY_MAX; past that the transfer
 * is aborted (connection closed, no time spent on a huge error page) and
 * the outcome is still XFER_OK with the status and the first 64 KiB.
 * Its Retry-After header (429, 503) is read from the finished handle
 * with curl_easy_header (libcurl 7.84 or newer).
 *
 * wake_fd must report POLLIN when it has data or EOF (a socket, eventfd;
 * libcurl does not pass POLLHUP through), and on_wake must drain it, or
 * the loop spins. tick_ms 0 means no periodic calls, only wake-ups;
 * without on_wake, wake_fd is not watched.
 */

struct xfer_state {
	const struct transport_call	*x_call;
	struct transport_result	*x_res;
	CURL			*x_easy;
	struct curl_slist	*x_hdrs;
	bool			 x_have_status;
	bool			 x_aborted;	/* on_data returned -1 */
	bool			 x_errfull;	/* error body reached its cap */
	char			 x_errbuf[CURL_ERROR_SIZE];
	bool			 x_done;	/* libcurl said it ended */
	CURLcode		 x_rc;		/* ...with this */
};

/* When tp_drive stops besides its transfer ending. */
struct tp_until {
	bool		(*u_fn)(void *);	/* NULL: never */
	void		 *u_arg;
	uint64_t	  u_deadline;		/* clock_mono_ms */
};

static const struct tp_until	 tp_never = { NULL, NULL, UINT64_MAX };

static CURLM	*multi;

/* The sockets libcurl wants watched, and its timer (UINT64_MAX: none). */
struct tp_sock {
	curl_socket_t	 s_fd;
	short		 s_events;	/* POLLIN, POLLOUT */
};

static struct tp_sock	*tp_socks;
static size_t		 tp_nsocks, tp_socks_cap;
static uint64_t		 tp_timer_at = UINT64_MAX;
static void		(*tp_idle_fn)(void *);
static void		*tp_idle_arg;

void
transport_set_idle(void (*fn)(void *), void *arg)
{
	tp_idle_fn = fn;
	tp_idle_arg = arg;
}

static int
tp_sock_cb(CURL *e, curl_socket_t fd, int what, void *uarg, void *sarg)
{
	size_t	 i;
	short	 ev = 0;

	for (i = 0; i < tp_nsocks && tp_socks[i].s_fd != fd; i++)
		;
	if (what == CURL_POLL_REMOVE) {
		if (i < tp_nsocks)
			tp_socks[i] = tp_socks[--tp_nsocks];
		return 0;
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= POLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= POLLOUT;
	if (i == tp_nsocks) {
		if (tp_nsocks == tp_socks_cap) {
			struct tp_sock	*n;
			size_t		 cap = tp_socks_cap ? 2 * tp_socks_cap : 8;

			if ((n = reallocarray(tp_socks, cap, sizeof(*n))) ==
			    NULL)
				return -1;
			tp_socks = n;
			tp_socks_cap = cap;
		}
		tp_socks[tp_nsocks++].s_fd = fd;
	}
	tp_socks[i].s_events = ev;
	return 0;
}

static int
tp_timer_cb(CURLM *m, long ms, void *arg)
{
	tp_timer_at = ms < 0 ? UINT64_MAX : clock_mono_ms() + (uint64_t)ms;
	return 0;
}

int
transport_init(void)
{
	if (multi != NULL)
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_warnx("transport: curl_global_init failed");
		return -1;
	}
	if ((multi = curl_multi_init()) == NULL) {
		log_warnx("transport: curl_multi_init failed");
		curl_global_cleanup();
		return -1;
	}
	if (curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, tp_sock_cb) ||
	    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, tp_timer_cb)) {
		log_warnx("transport: curl_multi_setopt failed");
		transport_cleanup();
		return -1;
	}
	return 0;
}

void
transport_cleanup(void)
{
	if (multi == NULL)
		return;
	curl_multi_cleanup(multi);
	multi = NULL;
	free(tp_socks);
	tp_socks = NULL;
	tp_nsocks = tp_socks_cap = 0;
	tp_timer_at = UINT64_MAX;
	curl_global_cleanup();
}

/* res->error, cut to fit: the texts are for logs and error replies. */
static void __attribute__((format(printf, 2, 3)))
tp_err(struct transport_result *res, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
}

/* One header of the answer so far, blanks trimmed, into v (size vsz);
 * "" when absent or longer than v. */
static void
tp_header(CURL *e, const char *name, char *v, size_t vsz)
{
	struct curl_header	*h;
	const char		*p;
	size_t			 n;

	v[0] = '\0';
	if (curl_easy_header(e, name, 0, CURLH_HEADER, -1, &h) != CURLHE_OK ||
	    h->value == NULL)
		return;
	for (p = h->value; *p == ' ' || *p == '\t'; p++)
		;
	for (n = strlen(p); n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t');)
		n--;
	if (n > 0 && n < vsz)
		snprintf(v, vsz, "%.*s", (int)n, p);
}

/* The headers the caller asked to keep (transport_call.keep). */
static void
tp_keep(struct xfer_state *x)
{
	struct transport_hdr	*k;

	for (k = x->x_call->keep; k != NULL && k->th_name != NULL; k++)
		tp_header(x->x_easy, k->th_name, k->th_value,
		    sizeof(k->th_value));
}

static bool
tp_is_2xx(long status)
{
	return status >= 200 && status < 300;
}

static size_t
tp_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct xfer_state		*x = arg;
	const struct transport_call	*c = x->x_call;
	struct buf		*eb = &x->x_res->err_body;
	size_t			 n = size * nmemb, room;
	long			 status = 0;

	if (!x->x_have_status) {
		curl_easy_getinfo(x->x_easy, CURLINFO_RESPONSE_CODE, &status);
		x->x_res->status = status;
		x->x_have_status = true;
		tp_keep(x);
	}
	if (tp_is_2xx(x->x_res->status) || c->on_easy != NULL) {
		if (c->on_data != NULL && c->on_data(c->arg, p, n) == -1) {
			x->x_aborted = true;
			return CURL_WRITEFUNC_ERROR;
		}
		return n;
	}
	room = LLM_ERR_BODY_MAX - eb->b_len;
	buf_add(eb, p, n < room ? n : room);
	if (n > room) {
		x->x_errfull = true;
		return CURL_WRITEFUNC_ERROR;
	}
	return n;
}

/* The caller's headers, a JSON Content-Type for bodies that lack one (not
 * curl's form default) and an empty Expect: (no 100-continue wait). */
static struct curl_slist *
tp_headers(const struct transport_call *c, char *err, size_t errlen)
{
	struct curl_slist	*l = NULL, *t;
	const char		*h;
	bool			 ctype = false;
	size_t			 i;

	for (i = 0; c->headers != NULL && (h = c->headers[i]) != NULL; i++) {
		if (strpbrk(h, "\r\n") != NULL) {
			snprintf(err, errlen, "header %zu has a line break", i);
			curl_slist_free_all(l);
			return NULL;
		}
		if (strncasecmp(h, "Content-Type:", 13) == 0)
			ctype = true;
		if ((t = curl_slist_append(l, h)) == NULL)
			goto oom;
		l = t;
	}
	if (c->body != NULL && !ctype) {
		/* on_easy's callers send no type of their own: the empty
		 * header keeps curl's form type away too */
		if ((t = curl_slist_append(l, c->on_easy != NULL ?
		    "Content-Type:" : "Content-Type: application/json")) == NULL)
			goto oom;
		l = t;
	}
	if ((t = curl_slist_append(l, "Expect:")) != NULL)
		return t;
oom:
	snprintf(err, errlen, "out of memory for headers");
	curl_slist_free_all(l);
	return NULL;
}

/* A read timeout in libcurl's whole seconds, rounded up, at least 1. */
static long
tp_secs(long ms)
{
	return ms < 1000 ? 1 : (ms + 999) / 1000;
}

static CURLcode
tp_setopts(struct xfer_state *x)
{
	const struct transport_call	*c = x->x_call;
	CURL			*e = x->x_easy;
	CURLcode		 rc;

	if ((rc = curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->x_errbuf)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_URL, c->url)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https")) ||
	    (rc = curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_MAXAGE_CONN,
	    LLM_MAXAGE_CONN_S)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_USERAGENT,
	    "sluice/" SLUICE_VERSION)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->x_hdrs)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_PRIVATE, x)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, tp_write)) ||
	    (rc = curl_easy_setopt(e, CURLOPT_WRITEDATA, x)))
		return rc;
	if (c->connect_timeout_ms > 0 && (rc = curl_easy_setopt(e,
	    CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms)))
		return rc;
	if (c->total_timeout_ms > 0 && (rc = curl_easy_setopt(e,
	    CURLOPT_TIMEOUT_MS, c->total_timeout_ms)))
		return rc;
	if (c->read_timeout_ms > 0 && ((rc = curl_easy_setopt(e,
	    CURLOPT_LOW_SPEED_LIMIT, 1L)) || (rc = curl_easy_setopt(e,
	    CURLOPT_LOW_SPEED_TIME, tp_secs(c->read_timeout_ms)))))
		return rc;
	if (c->method != NULL && (rc = curl_easy_setopt(e,
	    CURLOPT_CUSTOMREQUEST, c->method)))
		return rc;
	if (c->body == NULL)
		rc = c->method != NULL ? CURLE_OK :
		    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	else if ((rc = curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)c->body_len)) == CURLE_OK)
		rc = curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
	if (rc != CURLE_OK || c->on_easy == NULL)
		return rc;
	return c->on_easy(c->arg, e) == 0 ? CURLE_OK : CURLE_ABORTED_BY_CALLBACK;
}

/* Easy handle with every option, added to the multi. 0 or -1 (error in
 * res->error, outcome set). */
static int
tp_xfer_start(struct xfer_state *x)
{
	struct transport_result	*res = x->x_res;
	CURLcode		 rc;
	CURLMcode		 mc;

	res->outcome = XFER_CONNECT;
	if (multi == NULL) {
		tp_err(res, "transport_init not called");
		return -1;
	}
	if ((x->x_hdrs = tp_headers(x->x_call, res->error,
	    sizeof(res->error))) == NULL)
		return -1;
	if ((x->x_easy = curl_easy_init()) == NULL) {
		tp_err(res, "curl_easy_init failed");
		return -1;
	}
	if ((rc = tp_setopts(x)) != CURLE_OK) {
		tp_err(res, "curl option: %s",
		    curl_easy_strerror(rc));
		return -1;
	}
	if ((mc = curl_multi_add_handle(multi, x->x_easy)) != CURLM_OK) {
		tp_err(res, "curl multi: %s",
		    curl_multi_strerror(mc));
		return -1;
	}
	return 0;
}

/* 1 and *rc set when our transfer is done, 0 otherwise. A background
 * transfer that ended meanwhile is marked (x_done) for its owner. */
static int
tp_done(struct xfer_state *x, CURLcode *rc)
{
	struct xfer_state	*o;
	CURLMsg			*m;
	char			*priv;
	int			 left;

	while ((m = curl_multi_info_read(multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE || curl_easy_getinfo(m->easy_handle,
		    CURLINFO_PRIVATE, &priv) != CURLE_OK || priv == NULL)
			continue;
		o = (struct xfer_state *)(void *)priv;
		o->x_done = true;
		o->x_rc = m->data.result;
	}
	*rc = x->x_rc;
	return x->x_done;
}

static int
tp_wait_ms(uint64_t due)
{
	uint64_t	 now = clock_mono_ms();

	if (now >= due)
		return 0;
	return due - now > LLM_IDLE_WAIT_MS ? LLM_IDLE_WAIT_MS :
	    (int)(due - now);
}

static uint64_t
tp_next_tick(const struct transport_hooks *h)
{
	if (h->on_wake == NULL || h->tick_ms == 0)
		return UINT64_MAX;
	return clock_mono_ms() + h->tick_ms;
}

/* Wait for curl's sockets, wake_fd (when want_wake) or the first of
 * curl's timer and due, and tell curl what happened. wake_readable set
 * when wake_fd has data or EOF. 0, or -1 with *mc set. */
static int
tp_wait(int wake_fd, bool want_wake, uint64_t due, bool *wake_readable,
    CURLMcode *mc)
{
	struct pollfd	 stackfds[8], *pfd = stackfds;
	size_t		 i, n = tp_nsocks + (want_wake ? 1 : 0);
	int		 running, bits, r;

	*wake_readable = false;
	if (n > sizeof(stackfds) / sizeof(stackfds[0]) &&
	    (pfd = reallocarray(NULL, n, sizeof(*pfd))) == NULL) {
		*mc = CURLM_OUT_OF_MEMORY;
		return -1;
	}
	for (i = 0; i < tp_nsocks; i++) {
		pfd[i].fd = tp_socks[i].s_fd;
		pfd[i].events = tp_socks[i].s_events;
		pfd[i].revents = 0;
	}
	if (want_wake) {
		pfd[i].fd = wake_fd;
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	r = poll(pfd, (nfds_t)n, tp_wait_ms(due < tp_timer_at ? due :
	    tp_timer_at));
	*mc = CURLM_OK;
	for (i = 0; r > 0 && i < n && *mc == CURLM_OK; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (want_wake && i == n - 1) {
			*wake_readable = true;
			continue;
		}
		bits = 0;
		if (pfd[i].revents & (POLLIN | POLLHUP))
			bits |= CURL_CSELECT_IN;
		if (pfd[i].revents & POLLOUT)
			bits |= CURL_CSELECT_OUT;
		if (pfd[i].revents & (POLLERR | POLLNVAL))
			bits |= CURL_CSELECT_ERR;
		*mc = curl_multi_socket_action(multi, pfd[i].fd, bits,
		    &running);
	}
	if (*mc == CURLM_OK && clock_mono_ms() >= tp_timer_at) {
		tp_timer_at = UINT64_MAX;
		*mc = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0,
		    &running);
	}
	if (pfd != stackfds)
		free(pfd);
	return *mc == CURLM_OK ? 0 : -1;
}

/* Run until done (1, *rc set), cancelled by on_wake (0), a multi
 * error (-1, *mc set), or u says stop (2: its function said so, 3: its
 * deadline passed). */
static int
tp_drive(struct xfer_state *x, const struct transport_hooks *h,
    const struct tp_until *u, CURLcode *rc, CURLMcode *mc)
{
	uint64_t	 due = tp_next_tick(h);
	bool		 want_wake, readable;

	want_wake = h->wake_fd >= 0 && h->on_wake != NULL;
	for (;;) {
		if (tp_done(x, rc))
			return 1;
		if (u->u_fn != NULL && u->u_fn(u->u_arg))
			return 2;
		if (clock_mono_ms() >= u->u_deadline)
			return 3;
		if (tp_idle_fn != NULL)
			tp_idle_fn(tp_idle_arg);
		if (tp_wait(h->wake_fd, want_wake, due < u->u_deadline ? due :
		    u->u_deadline, &readable, mc) == -1)
			return -1;
		if (h->on_wake == NULL || (!readable && clock_mono_ms() < due))
			continue;
		if (h->on_wake(h->arg, readable) == 1)
			return 0;
		due = tp_next_tick(h);
	}
}

static const char *
tp_errno_text(long oserr)
{
	switch (oserr) {
	case ECONNREFUSED:
		return "connection refused";
	case EHOSTUNREACH:
		return "host unreachable";
	case ENETUNREACH:
		return "network unreachable";
	case ETIMEDOUT:
		return "connect timed out";
	default:
		return "could not connect";
	}
}

static enum transport_outcome
tp_outcome_of(const struct xfer_state *x, CURLcode rc)
{
	switch (rc) {
	case CURLE_OK:
		return XFER_OK;
	case CURLE_WRITE_ERROR:
		if (x->x_aborted)
			return XFER_ABORTED;
		return x->x_errfull ? XFER_OK : XFER_NETWORK;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
		return XFER_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		return XFER_TIMEOUT;
	default:
		return XFER_NETWORK;
	}
}

/* The answer's Retry-After header (the last response's, after any
 * redirect), blanks trimmed; left "" when absent or longer than the
 * field. */
static void
tp_retry_after(struct xfer_state *x)
{
	tp_header(x->x_easy, "Retry-After", x->x_res->retry_after,
	    sizeof(x->x_res->retry_after));
}

/* Outcome and error text of a finished transfer. */
static void
tp_finish(struct xfer_state *x, CURLcode rc)
{
	struct transport_result	*res = x->x_res;
	const char		*why;
	long			 oserr = 0;

	res->outcome = tp_outcome_of(x, rc);
	why = x->x_errbuf[0] != '\0' ? x->x_errbuf : curl_easy_strerror(rc);
	switch (res->outcome) {
	case XFER_OK:
		if (x->x_errfull)
			tp_err(res, "error body cut at %d bytes",
			    LLM_ERR_BODY_MAX);
		break;
	case XFER_ABORTED:
		tp_err(res, "aborted by the data handler");
		break;
	case XFER_CONNECT:
		if (rc == CURLE_COULDNT_CONNECT) {
			curl_easy_getinfo(x->x_easy, CURLINFO_OS_ERRNO, &oserr);
			tp_err(res, "%s (%s)", tp_errno_text(oserr), why);
			break;
		}
		/* FALLTHROUGH */
	default:
		tp_err(res, "%s", why);
		break;
	}
}

int
transport_perform(const struct transport_call *c, const struct transport_hooks *h,
    struct transport_result *res)
{
	static const struct transport_hooks	 nohooks = { -1, 0, NULL, NULL };
	struct xfer_state			 x;
	CURLcode			 rc = CURLE_OK;
	CURLMcode			 mc = CURLM_OK;
	int				 r = -1;

	memset(&x, 0, sizeof(x));
	x.x_call = c;
	x.x_res = res;
	res->status = 0;
	res->error[0] = '\0';
	res->retry_after[0] = '\0';
	buf_reset(&res->err_body);
	if (tp_xfer_start(&x) == 0)
		r = tp_drive(&x, h != NULL ? h : &nohooks, &tp_never, &rc,
		    &mc);
	if (r == 1) {
		tp_finish(&x, rc);
		tp_retry_after(&x);
		tp_keep(&x);
	}
	else if (r == 0) {
		res->outcome = XFER_CANCELLED;
		tp_err(res, "cancelled");
	} else if (x.x_easy != NULL && res->error[0] == '\0') {
		res->outcome = XFER_NETWORK;
		tp_err(res, "curl multi: %s", curl_multi_strerror(mc));
	}
	if (x.x_easy != NULL) {
		/* Unfinished (cancel, multi error): leaving the multi now
		 * makes libcurl close the connection instead of pooling it. */
		if (r != 1)
			curl_easy_setopt(x.x_easy, CURLOPT_FORBID_REUSE, 1L);
		curl_multi_remove_handle(multi, x.x_easy);
		if (!x.x_have_status)
			curl_easy_getinfo(x.x_easy, CURLINFO_RESPONSE_CODE,
			    &res->status);
		curl_easy_cleanup(x.x_easy);
	}
	curl_slist_free_all(x.x_hdrs);
	return res->outcome == XFER_OK ? 0 : -1;
}

/* ---- a transfer left running beside the others ---- */

struct transport_bg {
	struct xfer_state	 b_x;
};

struct transport_bg *
transport_bg_start(const struct transport_call *c,
    struct transport_result *res)
{
	struct transport_bg	*b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->b_x.x_call = c;
	b->b_x.x_res = res;
	res->status = 0;
	res->error[0] = '\0';
	res->retry_after[0] = '\0';
	buf_reset(&res->err_body);
	if (tp_xfer_start(&b->b_x) == -1)
		b->b_x.x_done = true;	/* outcome and error set */
	return b;
}

int
transport_bg_wait(struct transport_bg *b, const struct transport_hooks *h,
    uint64_t deadline, bool (*until)(void *), void *arg)
{
	static const struct transport_hooks	 nohooks = { -1, 0, NULL, NULL };
	struct tp_until		 u = { until, arg, deadline };
	struct xfer_state	*x = &b->b_x;
	CURLcode		 rc = CURLE_OK;
	CURLMcode		 mc = CURLM_OK;
	int			 r;

	if (x->x_easy == NULL)
		return 0;
	if (until != NULL && until(arg))
		return 1;
	r = tp_drive(x, h != NULL ? h : &nohooks, &u, &rc, &mc);
	switch (r) {
	case 1:
		tp_finish(x, rc);
		return 0;
	case 2:
		return 1;
	case 0:
		x->x_res->outcome = XFER_CANCELLED;
		tp_err(x->x_res, "cancelled");
		return -1;
	case 3:
		x->x_res->outcome = XFER_TIMEOUT;
		tp_err(x->x_res, "deadline passed");
		return -1;
	default:
		x->x_res->outcome = XFER_NETWORK;
		tp_err(x->x_res, "curl multi: %s", curl_multi_strerror(mc));
		return -1;
	}
}

void
transport_bg_stop(struct transport_bg *b)
{
	if (b == NULL)
		return;
	if (b->b_x.x_easy != NULL) {
		curl_easy_setopt(b->b_x.x_easy, CURLOPT_FORBID_REUSE, 1L);
		curl_multi_remove_handle(multi, b->b_x.x_easy);
		curl_easy_cleanup(b->b_x.x_easy);
	}
	curl_slist_free_all(b->b_x.x_hdrs);
	free(b);
}
