/* http_parse.c - request parser (llhttp plus our limits) and addresses. */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* llhttp's enum llhttp_method and our enum http_method (http.h) share six
 * enumerator names: give llhttp's the LL_ prefix in this file. */
#define HTTP_DELETE	LL_HTTP_DELETE
#define HTTP_GET	LL_HTTP_GET
#define HTTP_HEAD	LL_HTTP_HEAD
#define HTTP_POST	LL_HTTP_POST
#define HTTP_PUT	LL_HTTP_PUT
#define HTTP_OPTIONS	LL_HTTP_OPTIONS
#include <llhttp.h>
#undef HTTP_DELETE
#undef HTTP_GET
#undef HTTP_HEAD
#undef HTTP_POST
#undef HTTP_PUT
#undef HTTP_OPTIONS

#include "../common/buf.h"
#include "../common/xmem.h"
#include "http.h"

#define PARSE_SHRINK	65536	/* free request buffers above this */

enum parse_pause { PAUSE_NONE, PAUSE_HEADERS, PAUSE_MESSAGE };

struct hdr_span {
	size_t	 sp_name;	/* offsets into p_hbuf */
	size_t	 sp_value;
};

struct http_parser {
	llhttp_t		 p_ll;
	const struct http_limits *p_lim;
	enum http_parse_phase	 p_phase;
	enum parse_pause	 p_pause;
	int			 p_status;	/* error to answer, or 0 */
	const char		*p_msg;
	char			 p_reason[160];
	size_t			 p_head_bytes;	/* request line + headers */
	struct buf		 p_url;
	struct buf		 p_hbuf;	/* names and values, NUL-ended */
	struct hdr_span		*p_spans;
	size_t			 p_nhdr;	/* complete headers */
	size_t			 p_hcap;
	struct http_header	*p_hdrs;
	struct buf		 p_body;
	bool			 p_in_field;
	bool			 p_in_value;
	struct http_request	 p_req;
};

static int
parse_fail(struct http_parser *p, int status, const char *msg)
{
	p->p_status = status;
	p->p_msg = msg;
	return HPE_USER;
}

static enum http_method
method_map(uint8_t m)
{
	switch (m) {
	case LL_HTTP_GET:
		return HTTP_GET;
	case LL_HTTP_HEAD:
		return HTTP_HEAD;
	case LL_HTTP_POST:
		return HTTP_POST;
	case LL_HTTP_PUT:
		return HTTP_PUT;
	case LL_HTTP_DELETE:
		return HTTP_DELETE;
	case LL_HTTP_OPTIONS:
		return HTTP_OPTIONS;
	default:
		return HTTP_OTHER;
	}
}

/* RFC 9110 token. llhttp's lenient build lets spaces into names
 * ("X : y"), which a proxy in front of us might read differently. */
static bool
is_token(const char *s, size_t n)
{
	static const char	 extra[] = "!#$%&'*+-.^_`|~";
	size_t			 i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    (s[i] != '\0' && strchr(extra, s[i]) != NULL)))
			return false;
	return n > 0;
}

/* Split the finished target at '?' in place. */
static void
split_url(struct http_parser *p)
{
	char	*q;

	buf_add(&p->p_url, "", 0);
	p->p_req.path = p->p_url.b_data;
	p->p_req.query = "";
	if ((q = strchr(p->p_url.b_data, '?')) != NULL) {
		*q = '\0';
		p->p_req.query = q + 1;
	}
}

/* Value of the last header called name, and how many there are. */
static const char *
find_header(const struct http_parser *p, const char *name, size_t *count)
{
	const char	*found = NULL;
	size_t		 i;

	*count = 0;
	for (i = 0; i < p->p_nhdr; i++) {
		if (strcasecmp(p->p_hbuf.b_data + p->p_spans[i].sp_name,
		    name) != 0)
			continue;
		(*count)++;
		found = p->p_hbuf.b_data + p->p_spans[i].sp_value;
	}
	return found;
}

/* ---- llhttp callbacks ---------------------------------------------- */

static int
on_message_begin(llhttp_t *ll)
{
	struct http_parser	*p = ll->data;

	p->p_phase = HTTP_PHASE_HEAD;
	uuid_new(p->p_req.id);
	return 0;
}

static int
on_url(llhttp_t *ll, const char *at, size_t n)
{
	struct http_parser	*p = ll->data;

	if (n > p->p_lim->max_url - p->p_url.b_len)
		return parse_fail(p, 414, "request target too long");
	buf_add(&p->p_url, at, n);
	return 0;
}

static int
on_url_done(llhttp_t *ll)
{
	split_url(ll->data);
	return 0;
}

static int
hbuf_add(struct http_parser *p, const char *at, size_t n)
{
	if (n > p->p_lim->max_header_bytes - p->p_hbuf.b_len)
		return parse_fail(p, 431, "request header too large");
	buf_add(&p->p_hbuf, at, n);
	return 0;
}

static int
hdr_begin(struct http_parser *p)
{
	if (p->p_nhdr >= p->p_lim->max_headers)
		return parse_fail(p, 431, "too many header fields");
	if (p->p_nhdr == p->p_hcap) {
		p->p_hcap = p->p_hcap ? p->p_hcap * 2 : 16;
		p->p_spans = xreallocarray(p->p_spans, p->p_hcap,
		    sizeof(*p->p_spans));
	}
	p->p_spans[p->p_nhdr].sp_name = p->p_hbuf.b_len;
	p->p_spans[p->p_nhdr].sp_value = p->p_hbuf.b_len;
	p->p_in_field = true;
	return 0;
}

static int
on_hfield(llhttp_t *ll, const char *at, size_t n)
{
	struct http_parser	*p = ll->data;

	if (!p->p_in_field && hdr_begin(p) != 0)
		return HPE_USER;
	return hbuf_add(p, at, n);
}

static int
on_hfield_done(llhttp_t *ll)
{
	struct http_parser	*p = ll->data;
	size_t			 start;

	if (!p->p_in_field && hdr_begin(p) != 0)
		return HPE_USER;
	p->p_in_field = false;
	start = p->p_spans[p->p_nhdr].sp_name;
	if (!is_token(p->p_hbuf.b_data + start, p->p_hbuf.b_len - start))
		return parse_fail(p, 400, "bad request: invalid header name");
	return hbuf_add(p, "", 1);
}

static int
on_hvalue(llhttp_t *ll, const char *at, size_t n)
{
	struct http_parser	*p = ll->data;

	if (p->p_nhdr >= p->p_hcap)
		return parse_fail(p, 400, "bad request: value without name");
	if (!p->p_in_value) {
		p->p_in_value = true;
		p->p_spans[p->p_nhdr].sp_value = p->p_hbuf.b_len;
	}
	return hbuf_add(p, at, n);
}

/* The value is complete: trim optional white space on both ends. */
static int
on_hvalue_done(llhttp_t *ll)
{
	struct http_parser	*p = ll->data;
	struct hdr_span		*sp;
	char			*d;

	if (on_hvalue(ll, "", 0) != 0)
		return HPE_USER;
	p->p_in_value = false;
	sp = &p->p_spans[p->p_nhdr];
	d = p->p_hbuf.b_data;
	while (p->p_hbuf.b_len > sp->sp_value &&
	    (d[p->p_hbuf.b_len - 1] == ' ' || d[p->p_hbuf.b_len - 1] == '\t'))
		p->p_hbuf.b_len--;
	while (sp->sp_value < p->p_hbuf.b_len &&
	    (d[sp->sp_value] == ' ' || d[sp->sp_value] == '\t'))
		sp->sp_value++;
	p->p_nhdr++;
	return hbuf_add(p, "", 1);
}

/* Pause here so the head can be checked before any body byte is read
 * (and so we know exactly how long the head was). */
static int
on_headers_complete(llhttp_t *ll)
{
	struct http_parser	*p = ll->data;

	p->p_pause = PAUSE_HEADERS;
	return HPE_PAUSED;
}

static int
on_body(llhttp_t *ll, const char *at, size_t n)
{
	struct http_parser	*p = ll->data;

	if (n > p->p_lim->max_body - p->p_body.b_len)
		return parse_fail(p, 413, "request body too large");
	buf_add(&p->p_body, at, n);
	return 0;
}

/* Pause so the caller answers this request before we parse the next. */
static int
on_message_complete(llhttp_t *ll)
{
	struct http_parser	*p = ll->data;

	/* an upgrade (or CONNECT) is not followed: answer, then close */
	p->p_req.keep_alive = llhttp_should_keep_alive(ll) != 0 &&
	    ll->upgrade == 0;
	p->p_pause = PAUSE_MESSAGE;
	return HPE_PAUSED;
}

static const llhttp_settings_t parse_settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_url_complete = on_url_done,
	.on_header_field = on_hfield,
	.on_header_field_complete = on_hfield_done,
	.on_header_value = on_hvalue,
	.on_header_value_complete = on_hvalue_done,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

/* ---- driver -------------------------------------------------------- */

static bool
te_is_chunked(const struct http_parser *p)
{
	size_t		 n;
	const char	*v = find_header(p, "Transfer-Encoding", &n);

	return n == 1 && strcasecmp(v, "chunked") == 0;
}

/* The head is complete: check what needs all of it. Returns ERROR,
 * EXPECT, or MORE to go on. */
static enum http_parse_result
head_done(struct http_parser *p)
{
	const struct http_limits *l = p->p_lim;
	llhttp_t		*ll = &p->p_ll;
	const char		*expect;
	size_t			 n;

	if (p->p_req.path == NULL)
		split_url(p);
	p->p_req.method = method_map(ll->method);
	p->p_req.method_name = llhttp_method_name(ll->method);
	p->p_req.version_minor = ll->http_minor;
	if (p->p_head_bytes > l->max_header_bytes)
		parse_fail(p, 431, "request header too large");
	else if (ll->http_major != 1)
		parse_fail(p, 505, "only HTTP/1.x is supported");
	else if ((ll->flags & F_TRANSFER_ENCODING) && !te_is_chunked(p))
		parse_fail(p, 501, "unsupported Transfer-Encoding");
	else if ((ll->flags & F_CONTENT_LENGTH) &&
	    ll->content_length > l->max_body)
		parse_fail(p, 413, "request body too large");
	if (p->p_status != 0)
		return HTTP_PARSE_ERROR;
	if (!(ll->flags & F_CHUNKED) && ll->content_length == 0)
		return HTTP_PARSE_MORE;
	p->p_phase = HTTP_PHASE_BODY;
	if (ll->flags & F_CONTENT_LENGTH)
		buf_reserve(&p->p_body, ll->content_length);
	expect = find_header(p, "Expect", &n);
	if (expect != NULL && strcasecmp(expect, "100-continue") == 0 &&
	    ll->http_minor >= 1)
		return HTTP_PARSE_EXPECT;
	return HTTP_PARSE_MORE;
}

static void
set_llhttp_error(struct http_parser *p)
{
	if (p->p_status != 0)
		return;
	snprintf(p->p_reason, sizeof(p->p_reason), "bad request: %s",
	    llhttp_get_error_reason(&p->p_ll));
	parse_fail(p, 400, p->p_reason);
}

static void
build_request(struct http_parser *p)
{
	struct http_request	*r = &p->p_req;
	size_t			 i;

	p->p_hdrs = xreallocarray(p->p_hdrs, p->p_nhdr + 1,
	    sizeof(*p->p_hdrs));
	for (i = 0; i < p->p_nhdr; i++) {
		p->p_hdrs[i].name = p->p_hbuf.b_data + p->p_spans[i].sp_name;
		p->p_hdrs[i].value = p->p_hbuf.b_data + p->p_spans[i].sp_value;
	}
	r->headers = p->p_hdrs;
	r->nheaders = p->p_nhdr;
	r->body = p->p_body.b_data != NULL ? p->p_body.b_data : "";
	r->body_len = p->p_body.b_len;
}

enum http_parse_result
http_parser_feed(struct http_parser *p, const char *data, size_t len,
    size_t *used)
{
	enum http_parse_result	 r;
	llhttp_errno_t		 rc;
	size_t			 n;

	*used = 0;
	for (;;) {
		rc = llhttp_execute(&p->p_ll, data, len);
		if (rc != HPE_OK && (rc != HPE_PAUSED ||
		    p->p_pause == PAUSE_NONE)) {
			set_llhttp_error(p);
			return HTTP_PARSE_ERROR;
		}
		n = rc == HPE_OK ? len :
		    (size_t)(llhttp_get_error_pos(&p->p_ll) - data);
		*used += n;
		if (p->p_phase != HTTP_PHASE_BODY)
			p->p_head_bytes += n;
		if (rc == HPE_OK) {
			if (p->p_head_bytes <= p->p_lim->max_header_bytes ||
			    p->p_phase == HTTP_PHASE_BODY)
				return HTTP_PARSE_MORE;
			parse_fail(p, 431, "request header too large");
			return HTTP_PARSE_ERROR;
		}
		data += n;
		len -= n;
		llhttp_resume(&p->p_ll);
		if (p->p_pause == PAUSE_MESSAGE) {
			p->p_pause = PAUSE_NONE;
			build_request(p);
			return HTTP_PARSE_REQUEST;
		}
		p->p_pause = PAUSE_NONE;
		/* go on even with no bytes left: a bodiless request
		 * completes on the next execute */
		if ((r = head_done(p)) != HTTP_PARSE_MORE)
			return r;
	}
}

/* ---- lifetime ------------------------------------------------------ */

struct http_parser *
http_parser_new(const struct http_limits *lim)
{
	struct http_parser	*p = xcalloc(1, sizeof(*p));

	llhttp_init(&p->p_ll, HTTP_REQUEST, &parse_settings);
	p->p_ll.data = p;
	p->p_lim = lim;
	return p;
}

void
http_parser_free(struct http_parser *p)
{
	if (p == NULL)
		return;
	buf_free(&p->p_url);
	buf_free(&p->p_hbuf);
	buf_free(&p->p_body);
	free(p->p_spans);
	free(p->p_hdrs);
	free(p);
}

static void
buf_recycle(struct buf *b)
{
	if (b->b_cap > PARSE_SHRINK)
		buf_free(b);
	else
		buf_reset(b);
}

void
http_parser_next(struct http_parser *p)
{
	buf_recycle(&p->p_url);
	buf_recycle(&p->p_hbuf);
	buf_recycle(&p->p_body);
	p->p_nhdr = 0;
	p->p_in_field = p->p_in_value = false;
	p->p_pause = PAUSE_NONE;
	p->p_phase = HTTP_PHASE_IDLE;
	p->p_head_bytes = 0;
	p->p_status = 0;
	p->p_msg = NULL;
	memset(&p->p_req, 0, sizeof(p->p_req));
}

struct http_request *
http_parser_request(struct http_parser *p)
{
	return &p->p_req;
}

enum http_parse_phase
http_parser_phase(const struct http_parser *p)
{
	return p->p_phase;
}

int
http_parser_error(const struct http_parser *p, const char **msg)
{
	*msg = p->p_msg != NULL ? p->p_msg : "bad request";
	return p->p_status != 0 ? p->p_status : 400;
}

/* ---- addresses ----------------------------------------------------- */

/* "1.2.3.4:port" or "[v6]:port"; port 0 is allowed (pick a free one). */
int
http_addr_parse(const char *addr, struct sockaddr_storage *ss, size_t *slen)
{
	struct sockaddr_in	*s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*s6 = (struct sockaddr_in6 *)ss;
	char			 host[INET6_ADDRSTRLEN], *end;
	const char		*colon, *hs = addr;
	size_t			 hlen;
	long			 port;

	if (*addr == '[') {
		hs = addr + 1;
		if ((colon = strchr(hs, ']')) == NULL || colon[1] != ':')
			return -1;
		hlen = (size_t)(colon - hs);
		colon++;
	} else {
		if ((colon = strrchr(addr, ':')) == NULL)
			return -1;
		hlen = (size_t)(colon - addr);
	}
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 0 ||
	    port > 65535 || hlen == 0 || hlen >= sizeof(host))
		return -1;
	memcpy(host, hs, hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (*addr != '[' && inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*slen = sizeof(*s4);
	} else if (*addr == '[' &&
	    inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*slen = sizeof(*s6);
	} else
		return -1;
	return 0;
}

void
http_addr_fmt(const struct sockaddr *sa, char *out, size_t len)
{
	char	 host[INET6_ADDRSTRLEN];

	out[0] = '\0';
	if (sa == NULL)
		return;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		if (inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host)))
			snprintf(out, len, "%s:%u", host, ntohs(s4->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 =
		    (const struct sockaddr_in6 *)sa;

		if (inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host)))
			snprintf(out, len, "[%s]:%u", host,
			    ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_UNIX)
		snprintf(out, len, "unix");
}
