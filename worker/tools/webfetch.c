/* webfetch.c - WebFetch's HTTP client: one request and its redirects by WilmerAI's rules, the address guard on every hop, cancellable. */
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/utf8.h"
#include "../../common/xmem.h"
#include "../llm/url.h"
#include "webfetch.h"

/*
 * WilmerAI calls requests.request once per node: a new session, so no
 * connection, cookie or credential outlives the call. Here every hop is
 * one transport_perform (the cancellable libcurl loop the LLM calls
 * use) on a fresh connection that is closed afterwards, and redirects
 * are always followed by this file, never by libcurl, so that both of
 * WilmerAI's paths keep their own rules:
 *
 * - guard off: requests' own redirect handling (up to 30; 302 and 303
 *   make any method but HEAD a GET, 301 a POST; the body and its
 *   Content-* headers go unless 307/308; Cookie is dropped on every
 *   hop, Authorization when the host, or the scheme other than
 *   http -> https, changes). Past 30, "Exceeded 30 redirects." with
 *   the last response.
 * - guard on: WilmerAI's loop of at most 11 requests, the URL checked
 *   before each; 301/302/303 make a non-GET/HEAD a GET without body,
 *   Content-Length and Content-Type; a host change drops
 *   Authorization, Cookie and Proxy-Authorization. Past 10, an error
 *   without a response.
 *
 * Beyond WilmerAI: with the guard on and no proxy in the way, every
 * address libcurl is about to connect to is judged again
 * (netguard_connect from CURLOPT_OPENSOCKETFUNCTION), so a name that
 * resolves to a public address for the check and a private one for the
 * connection (DNS rebinding) is still refused.
 */

#define WF_ENCODINGS	"gzip, deflate"	/* what requests accepts */
#define WF_TICK_MS	100		/* how often the read timeout and
					   the caller's hooks are looked at */

/* One hop's transfer. */
struct hop {
	const struct webfetch_req	*h_req;
	const char			*h_url;
	char				 h_host[256];
	struct webfetch_resp		*h_resp;
	struct curl_slist		*h_dummy;
	bool				 h_follow;	/* a redirect now is
							   followed: its body
							   is not wanted */
	bool				 h_started;	/* first body byte */
	bool				 h_skip;	/* body not kept */
	bool				 h_early;	/* stopped on purpose */
	bool				 h_over;	/* cap exceeded */
	bool				 h_refused;	/* netguard_connect */
	bool				 h_check_conn;
	struct buf			 h_why;
	const char			*h_method;
	bool				 h_body;	/* one is sent */
	const struct transport_hooks	*h_hooks;	/* the caller's */
	uint64_t			 h_last;	/* connected, or the
							   last byte came */
	bool				 h_connected;
	bool				 h_timedout;	/* read timeout */
};

/* ---- small helpers ---- */

static bool
is_redirect(long status)
{
	return status == 301 || status == 302 || status == 303 ||
	    status == 307 || status == 308;
}

/* Latin-1 bytes s[0..n) as UTF-8 (how http.client reads header bytes). */
static char *
latin1_dup(const char *s, size_t n)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	for (i = 0; i < n; i++)
		utf8_put(&b, (unsigned char)s[i]);
	if (b.b_data == NULL)
		buf_adds(&b, "");
	return buf_take(&b);
}

static void
hdrs_free(struct webfetch_hdr *h, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(h[i].wh_name);
		free(h[i].wh_value);
	}
	free(h);
}

void
webfetch_resp_free(struct webfetch_resp *r)
{
	if (r == NULL)
		return;
	free(r->wr_reason);
	hdrs_free(r->wr_hdrs, r->wr_nhdrs);
	buf_free(&r->wr_body);
	free(r->wr_url);
	memset(r, 0, sizeof(*r));
}

const char *
webfetch_header(const struct webfetch_resp *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->wr_nhdrs; i++)
		if (strcasecmp(r->wr_hdrs[i].wh_name, name) == 0)
			return r->wr_hdrs[i].wh_value;
	return NULL;
}

/* Add a received header; a repeat joins the first with ", ". */
static void
resp_hdr_add(struct webfetch_resp *r, char *name, char *value)
{
	struct webfetch_hdr	*h;
	size_t			 i;
	char			*j;

	for (i = 0; i < r->wr_nhdrs; i++) {
		h = &r->wr_hdrs[i];
		if (strcasecmp(h->wh_name, name) != 0)
			continue;
		j = xasprintf("%s, %s", h->wh_value, value);
		free(h->wh_value);
		h->wh_value = j;
		free(name);
		free(value);
		return;
	}
	r->wr_hdrs = xreallocarray(r->wr_hdrs, r->wr_nhdrs + 1,
	    sizeof(*r->wr_hdrs));
	r->wr_hdrs[r->wr_nhdrs++] = (struct webfetch_hdr){ name, value };
}

/* ---- libcurl callbacks ---- */

/* A status line starts the headers of a response (a redirect libcurl
 * does not follow, a 100 Continue): what came before is forgotten. */
static void
hop_status_line(struct hop *h, const char *p, size_t n)
{
	struct webfetch_resp	*r = h->h_resp;
	const char		*sp, *end = p + n;

	hdrs_free(r->wr_hdrs, r->wr_nhdrs);
	r->wr_hdrs = NULL;
	r->wr_nhdrs = 0;
	free(r->wr_reason);
	r->wr_reason = NULL;
	r->wr_status = 0;
	if ((sp = memchr(p, ' ', n)) == NULL)
		return;
	r->wr_status = strtol(sp + 1, NULL, 10);
	if ((sp = memchr(sp + 1, ' ', (size_t)(end - sp - 1))) != NULL)
		r->wr_reason = latin1_dup(sp + 1, (size_t)(end - sp - 1));
}

static size_t
hop_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct hop	*h = arg;
	size_t		 n = size * nmemb, len = n, k;
	const char	*colon, *v;

	h->h_last = clock_mono_ms();
	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n'))
		len--;
	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		hop_status_line(h, p, len);
		return n;
	}
	if (len == 0 || (colon = memchr(p, ':', len)) == NULL ||
	    p[0] == ' ' || p[0] == '\t')
		return n;
	for (v = colon + 1; v < p + len && (*v == ' ' || *v == '\t'); v++)
		;
	k = (size_t)(colon - p);
	resp_hdr_add(h->h_resp, latin1_dup(p, k), latin1_dup(v,
	    (size_t)(p + len - v)));
	return n;
}

/* Body bytes: kept up to the cap (past it: an error for a success, the
 * end for an error page), or not wanted (a redirect to follow). */
static int
hop_data(void *arg, const char *p, size_t n)
{
	struct hop		*h = arg;
	struct webfetch_resp	*r = h->h_resp;
	long long		 cap = h->h_req->wq_cap;
	size_t			 room;

	h->h_last = clock_mono_ms();
	if (!h->h_started) {
		h->h_started = true;
		h->h_skip = h->h_follow && is_redirect(r->wr_status) &&
		    webfetch_header(r, "Location") != NULL &&
		    *webfetch_header(r, "Location") != '\0';
	}
	if (h->h_skip) {
		h->h_early = true;
		return -1;
	}
	if (cap <= 0 || r->wr_body.b_len + n <= (unsigned long long)cap) {
		buf_add(&r->wr_body, p, n);
		return 0;
	}
	if (r->wr_status < 400) {
		h->h_over = true;
		return -1;
	}
	room = (size_t)cap - r->wr_body.b_len;
	buf_add(&r->wr_body, p, room);
	h->h_early = true;
	return -1;
}

static curl_socket_t
hop_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct hop	*h = arg;
	int		(*judge)(const struct netguard *, const char *,
			    const struct sockaddr *, struct buf *);

	judge = h->h_req->wq_connect != NULL ? h->h_req->wq_connect :
	    netguard_connect;
	if (purpose == CURLSOCKTYPE_IPCXN && judge(h->h_req->wq_guard,
	    h->h_host, &a->addr, &h->h_why) == -1) {
		h->h_refused = true;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* Connected, the request about to go: the read timeout runs from now. */
static int
hop_prereq(void *arg, char *ip, char *local, int port, int lport)
{
	struct hop	*h = arg;

	h->h_connected = true;
	h->h_last = clock_mono_ms();
	return CURL_PREREQFUNC_OK;
}

/* The caller's hooks, and requests' read timeout: once connected, no
 * byte for wq_timeout_ms ends the transfer. libcurl's own low-speed
 * limit averages over several seconds, so it would wait longer. */
static int
hop_wake(void *arg, bool readable)
{
	struct hop			*h = arg;
	const struct transport_hooks	*o = h->h_hooks;

	if (o != NULL && o->on_wake != NULL && o->on_wake(o->arg,
	    readable) == 1)
		return 1;
	if (h->h_connected && clock_mono_ms() - h->h_last >
	    (uint64_t)h->h_req->wq_timeout_ms) {
		h->h_timedout = true;
		return 1;
	}
	return 0;
}

/* The method: GET and POST as libcurl has them from the body, any
 * other (and a GET with a body) by name; HEAD asks for no body. */
static CURLcode
hop_method(CURL *e, const struct webfetch_req *q, const char *method,
    bool body)
{
	if (strcmp(method, "HEAD") == 0)
		return curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	if ((strcmp(method, "GET") == 0 && !body) ||
	    (strcmp(method, "POST") == 0 && body))
		return CURLE_OK;
	return curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
}

static CURLcode
hop_tls(CURL *e, const struct webfetch_req *q)
{
	CURLcode	 rc;

	if (!q->wq_verify) {
		if ((rc = curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L)))
			return rc;
		return curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (q->wq_cabundle != NULL)
		return curl_easy_setopt(e, CURLOPT_CAINFO, q->wq_cabundle);
	return CURLE_OK;
}

static int
hop_easy(void *arg, void *easy)
{
	struct hop			*h = arg;
	const struct webfetch_req	*q = h->h_req;
	CURL				*e = easy;

	if (hop_method(e, q, h->h_method, h->h_body) ||
	    hop_tls(e, q) ||
	    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
	    (long)CURL_HTTP_VERSION_1_1) ||
	    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L) ||
	    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L) ||
	    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, WF_ENCODINGS) ||
	    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, hop_header) ||
	    curl_easy_setopt(e, CURLOPT_HEADERDATA, h) ||
	    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, hop_prereq) ||
	    curl_easy_setopt(e, CURLOPT_PREREQDATA, h) ||
	    (q->wq_proxy != NULL &&
	    curl_easy_setopt(e, CURLOPT_PROXY, q->wq_proxy)))
		return -1;
	if (h->h_check_conn && (curl_easy_setopt(e,
	    CURLOPT_OPENSOCKETFUNCTION, hop_socket) ||
	    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, h)))
		return -1;
	return 0;
}

/* ---- the chain of requests ---- */

/* What the next request sends; changes from hop to hop. */
struct chain {
	char			*c_url;
	const char		*c_method;
	const char		*c_body;
	struct webfetch_hdr	*c_hdrs;	/* borrowed strings */
	size_t			 c_nhdrs;
};

/* "Name: value" lines for libcurl ("Name;" sends an empty value). */
static char **
chain_lines(const struct chain *c)
{
	char	**v = xcalloc(c->c_nhdrs + 1, sizeof(*v));
	size_t	  i;

	for (i = 0; i < c->c_nhdrs; i++)
		v[i] = c->c_hdrs[i].wh_value[0] == '\0' ?
		    xasprintf("%s;", c->c_hdrs[i].wh_name) :
		    xasprintf("%s: %s", c->c_hdrs[i].wh_name,
		    c->c_hdrs[i].wh_value);
	return v;
}

static void
lines_free(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* Drop the headers named in names (a NULL-terminated list, no case). */
static void
chain_drop(struct chain *c, const char *const *names)
{
	size_t	 i, j, k;

	for (i = j = 0; i < c->c_nhdrs; i++) {
		for (k = 0; names[k] != NULL; k++)
			if (strcasecmp(c->c_hdrs[i].wh_name, names[k]) == 0)
				break;
		if (names[k] == NULL)
			c->c_hdrs[j++] = c->c_hdrs[i];
	}
	c->c_nhdrs = j;
}

/* Whether the transport would not connect with the default: a proxy
 * from the node or the environment stands between us and the host,
 * and the address libcurl connects to is the proxy's. */
static bool
proxied(const struct webfetch_req *q)
{
	static const char *const env[] = { "http_proxy", "https_proxy",
	    "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL };
	size_t	 i;

	if (q->wq_proxy != NULL)
		return true;
	for (i = 0; env[i] != NULL; i++)
		if (getenv(env[i]) != NULL && *getenv(env[i]) != '\0')
			return true;
	return false;
}

/* The error text of a transfer that failed (no response). */
static void
hop_failed(const struct hop *h, const struct transport_result *tr,
    struct buf *err)
{
	if (h->h_refused)
		buf_printf(err, "WebFetch blocked a request to a disallowed "
		    "address: %s.", h->h_why.b_data);
	else if (h->h_over)
		buf_printf(err, "WebFetch response exceeded the %lld-byte cap "
		    "(maxResponseBytes).", h->h_req->wq_cap);
	else if (h->h_timedout)
		buf_printf(err, "WebFetch read timed out for url: %s (read "
		    "timeout=%g)", h->h_url, h->h_req->wq_timeout_ms / 1000.0);
	else if (tr->outcome == XFER_TIMEOUT)
		buf_printf(err, "WebFetch timed out for url: %s (%s)", h->h_url,
		    tr->error);
	else
		buf_printf(err, "WebFetch could not fetch url: %s (%s)",
		    h->h_url, tr->error);
}

/* One request of the chain. */
static enum webfetch_result
hop_run(struct hop *h, const struct chain *c,
    const struct transport_hooks *hooks, struct buf *err)
{
	const struct webfetch_req	*q = h->h_req;
	struct transport_call		 call;
	struct transport_result		 tr;
	struct transport_hooks		 mine;
	char				**lines = chain_lines(c);
	const char			*body = c->c_body;

	if (body == NULL && strcmp(c->c_method, "GET") != 0 &&
	    strcmp(c->c_method, "HEAD") != 0)
		body = "";	/* requests sends Content-Length: 0 */
	h->h_method = c->c_method;
	h->h_body = body != NULL;
	memset(&call, 0, sizeof(call));
	call.url = c->c_url;
	call.headers = (const char *const *)lines;
	call.body = body;
	call.body_len = body != NULL ? strlen(body) : 0;
	call.connect_timeout_ms = q->wq_timeout_ms;
	call.on_data = hop_data;
	call.on_easy = hop_easy;
	call.arg = h;
	memset(&tr, 0, sizeof(tr));
	buf_init(&tr.err_body);
	h->h_hooks = hooks;
	h->h_last = clock_mono_ms();
	mine = (struct transport_hooks){ hooks != NULL ? hooks->wake_fd : -1,
	    WF_TICK_MS, hop_wake, h };
	transport_perform(&call, &mine, &tr);
	lines_free(lines);
	buf_free(&tr.err_body);
	if (tr.outcome == XFER_CANCELLED && !h->h_timedout)
		return WEBFETCH_CANCELLED;
	if (tr.outcome == XFER_OK || (tr.outcome == XFER_ABORTED &&
	    h->h_early)) {
		if (h->h_resp->wr_status == 0)
			h->h_resp->wr_status = tr.status;
		return WEBFETCH_OK;
	}
	hop_failed(h, &tr, err);
	return WEBFETCH_FAILED;
}

/* url's scheme, host and port (NULL when not written) as libcurl
 * parses them; 0 or -1. Caller frees with curl_free. */
static int
url_parts(const char *url, char **scheme, char **host, char **port)
{
	CURLU	*u = curl_url();
	int	 r = -1;

	*scheme = *host = *port = NULL;
	if (u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, host, 0) == CURLUE_OK) {
		curl_url_get(u, CURLUPART_PORT, port, 0);
		r = 0;
	}
	curl_url_cleanup(u);
	return r;
}

/* Location resolved against url (urljoin); NULL when either does not
 * parse. Caller frees. */
static char *
url_join(const char *url, const char *loc)
{
	CURLU	*u = curl_url();
	char	*s = NULL, *r = NULL;

	if (u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_URL, loc, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK)
		r = xstrdup(s);
	curl_free(s);
	curl_url_cleanup(u);
	return r;
}

/* url as requests shows it (response.url): libcurl's normal form. */
static char *
url_norm(const char *url)
{
	char	*r = url_join(url, url);

	return r != NULL ? r : xstrdup(url);
}

static bool
same_host(const char *a, const char *b)
{
	char	 ha[256], hb[256];

	if (url_host(a, ha, sizeof(ha)) == -1)
		ha[0] = '\0';
	if (url_host(b, hb, sizeof(hb)) == -1)
		hb[0] = '\0';
	return strcasecmp(ha, hb) == 0;
}

/* requests' should_strip_auth: a new host, or a new scheme or port
 * other than http on 80 to https on 443. */
static bool
strip_auth(const char *from, const char *to)
{
	char	*s1, *h1, *p1, *s2, *h2, *p2;
	bool	 strip, defp;

	if (url_parts(from, &s1, &h1, &p1) == -1 ||
	    url_parts(to, &s2, &h2, &p2) == -1)
		strip = true;
	else if (strcasecmp(h1, h2) != 0)
		strip = true;
	else if (strcmp(s1, "http") == 0 && (p1 == NULL || strcmp(p1,
	    "80") == 0) && strcmp(s2, "https") == 0 && (p2 == NULL ||
	    strcmp(p2, "443") == 0))
		strip = false;
	else {
		defp = (p1 == NULL || strcmp(p1, strcmp(s1, "https") == 0 ?
		    "443" : "80") == 0) && (p2 == NULL || strcmp(p2,
		    strcmp(s1, "https") == 0 ? "443" : "80") == 0);
		strip = strcmp(s1, s2) != 0 || (!defp && (p1 == NULL ||
		    p2 == NULL || strcmp(p1, p2) != 0));
	}
	curl_free(s1);
	curl_free(h1);
	curl_free(p1);
	curl_free(s2);
	curl_free(h2);
	curl_free(p2);
	return strip;
}

static const char *const hdr_ctype[] = { "Content-Length", "Content-Type",
    NULL };
static const char *const hdr_body[] = { "Content-Length", "Content-Type",
    "Transfer-Encoding", NULL };
static const char *const hdr_cred[] = { "Authorization", "Cookie",
    "Proxy-Authorization", NULL };
static const char *const hdr_cookie[] = { "Cookie", NULL };
static const char *const hdr_auth[] = { "Authorization", NULL };

/* The next request after a redirect to next: WilmerAI's loop (guard)
 * or requests' own handling. */
static void
chain_redirect(struct chain *c, bool guard, long status, const char *next)
{
	bool	 get = strcmp(c->c_method, "GET") == 0;
	bool	 head = strcmp(c->c_method, "HEAD") == 0;

	if (guard) {
		if (status <= 303 && !get && !head) {
			c->c_method = "GET";
			c->c_body = NULL;
			chain_drop(c, hdr_ctype);
		}
		if (!same_host(c->c_url, next))
			chain_drop(c, hdr_cred);
		return;
	}
	if ((status == 302 || status == 303) && !head)
		c->c_method = "GET";
	if (status == 301 && strcmp(c->c_method, "POST") == 0)
		c->c_method = "GET";
	if (status != 307 && status != 308) {
		chain_drop(c, hdr_body);
		c->c_body = NULL;
	}
	chain_drop(c, hdr_cookie);
	if (strip_auth(c->c_url, next))
		chain_drop(c, hdr_auth);
}

/* The guard's verdict on url: 0, or -1 with the error in err. */
static int
chain_check(const struct webfetch_req *q, const char *url, struct buf *err)
{
	struct buf	 why = BUF_INIT;
	int		 r;

	r = (q->wq_check != NULL ? q->wq_check : netguard_check)(q->wq_guard,
	    url, &why);
	if (r == -1)
		buf_printf(err, "WebFetch blocked a request to a disallowed "
		    "address: %s.", why.b_data != NULL ? why.b_data : "");
	buf_free(&why);
	return r;
}

/* requests' refusals of a URL it has no adapter for: 0, or -1 with
 * its message in err. */
static int
url_scheme(const char *url, struct buf *err)
{
	if (strncasecmp(url, "http://", 7) == 0 ||
	    strncasecmp(url, "https://", 8) == 0)
		return 0;
	if (strchr(url, ':') != NULL && strncasecmp(url, "http", 4) != 0) {
		buf_adds(err, "No connection adapters were found for ");
		pyfmt_repr_str(err, url, strlen(url));
		return -1;
	}
	buf_adds(err, "Invalid URL ");
	pyfmt_repr_str(err, url, strlen(url));
	buf_printf(err, ": No scheme supplied. Perhaps you meant https://%s?",
	    url);
	return -1;
}

/* One hop of the chain into resp. */
static enum webfetch_result
chain_hop(const struct webfetch_req *q, const struct chain *c, bool guard,
    bool follow, const struct transport_hooks *hooks,
    struct webfetch_resp *resp, struct buf *err)
{
	struct hop		 h;
	enum webfetch_result	 r;

	webfetch_resp_free(resp);
	memset(&h, 0, sizeof(h));
	h.h_req = q;
	h.h_url = c->c_url;
	h.h_resp = resp;
	h.h_follow = follow;
	h.h_check_conn = guard && !proxied(q);
	if (url_host(c->c_url, h.h_host, sizeof(h.h_host)) == -1)
		h.h_host[0] = '\0';
	r = hop_run(&h, c, hooks, err);
	buf_free(&h.h_why);
	if (r == WEBFETCH_OK)
		resp->wr_url = url_norm(c->c_url);
	return r;
}

/* The HTTPError of a status of 400 to 599 (requests' raise_for_status);
 * 0 when there is none. */
static int
http_error(const struct webfetch_resp *r, struct buf *err)
{
	if (r->wr_status < 400 || r->wr_status >= 600)
		return 0;
	buf_printf(err, "%ld %s Error: %s for url: %s", r->wr_status,
	    r->wr_status < 500 ? "Client" : "Server",
	    r->wr_reason != NULL ? r->wr_reason : "", r->wr_url);
	return -1;
}

enum webfetch_result
webfetch_run(const struct webfetch_req *q, const struct transport_hooks *hooks,
    struct webfetch_resp *resp, struct buf *err)
{
	struct chain		 c;
	enum webfetch_result	 r;
	bool			 guard = q->wq_guard != NULL &&
				    netguard_active(q->wq_guard);
	int			 n, max = guard ? 10 : 30;
	const char		*loc;
	char			*next;

	memset(&c, 0, sizeof(c));
	c.c_url = xstrdup(q->wq_url);
	c.c_method = q->wq_method;
	c.c_body = q->wq_body;
	c.c_hdrs = xcalloc(q->wq_nhdrs + 1, sizeof(*c.c_hdrs));
	if (q->wq_nhdrs > 0)
		memcpy(c.c_hdrs, q->wq_hdrs, q->wq_nhdrs * sizeof(*c.c_hdrs));
	c.c_nhdrs = q->wq_nhdrs;
	for (n = 0;; n++) {
		if ((guard && chain_check(q, c.c_url, err) == -1) ||
		    url_scheme(c.c_url, err) == -1) {
			r = WEBFETCH_FAILED;
			break;
		}
		r = chain_hop(q, &c, guard, q->wq_redirects && (guard ||
		    n < max), hooks, resp, err);
		if (r != WEBFETCH_OK)
			break;
		loc = webfetch_header(resp, "Location");
		if (!q->wq_redirects || !is_redirect(resp->wr_status) ||
		    loc == NULL || *loc == '\0')
			break;
		if (n == max) {
			r = guard ? WEBFETCH_FAILED : WEBFETCH_HTTP;
			if (guard)
				buf_printf(err, "WebFetch exceeded the maximum "
				    "of %d redirects.", max);
			else
				buf_printf(err, "Exceeded %d redirects.", max);
			break;
		}
		if ((next = url_join(c.c_url, loc)) == NULL) {
			buf_printf(err, "WebFetch could not follow the "
			    "redirect to '%s'", loc);
			r = WEBFETCH_FAILED;
			break;
		}
		chain_redirect(&c, guard, resp->wr_status, next);
		free(c.c_url);
		c.c_url = next;
	}
	if (r == WEBFETCH_OK && http_error(resp, err) == -1)
		r = WEBFETCH_HTTP;
	if (r != WEBFETCH_OK && r != WEBFETCH_HTTP)
		webfetch_resp_free(resp);
	free(c.c_url);
	free(c.c_hdrs);
	return r;
}
