/* browser.c - what a web page may do here: Host and Origin checks, CORS preflights and headers, ahead of the routes. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "browser.h"
#include "gw.h"
#include "origin.h"

/* Browsers keep a preflight's answer this long (s); short, so that a
 * reload that drops an origin takes effect soon. */
#define PREFLIGHT_MAX_AGE	600
/* Allowed request headers when the preflight's list cannot be repeated. */
#define ALLOW_HEADERS	"Authorization, Content-Type, X-Idempotency-Key"
/* Reply headers a page may read besides the safelisted ones. */
#define EXPOSE_HEADERS	"X-Request-Id, X-Sluice-Cache, Retry-After"

/* The value of the only header called name: NULL when there is none or
 * more than one; *n says how many there are. */
static const char *
only_header(const struct http_request *r, const char *name, size_t *n)
{
	const char	*v = NULL;
	size_t		 i;

	*n = 0;
	for (i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0) {
			v = r->headers[i].value;
			(*n)++;
		}
	return *n == 1 ? v : NULL;
}

static void
refuse(struct http_conn *c, const struct http_request *r, int status,
    const char *msg)
{
	http_set_route(c, "refused");
	log_info("refused %s %.128s from %s with %d: %s [rq %s]",
	    r->method_name, r->path, r->peer, status, msg, r->id);
	http_reply_error(c, status, msg, NULL);
}

/* Against DNS rebinding: the Host must name this gateway (origin.c).
 * /health is exempt: probes and load balancers send what Host they
 * like, and it runs nothing. A request without Host is HTTP/1.0 or
 * malformed (RFC 9112 3.2), from no browser either way. *kind: how the
 * Host fared. */
static bool
host_ok(struct gw *g, struct http_conn *c, const struct http_request *r,
    enum origin_host *kind)
{
	char		 msg[256];
	size_t		 n;
	const char	*host = only_header(r, "Host", &n);

	*kind = host == NULL ? ORIGIN_HOST_MALFORMED :
	    origin_host_judge(host, r->local, g->g_conf.c_allowed_hosts);
	if (*kind >= ORIGIN_HOST_ANY || strcmp(r->path, "/health") == 0 ||
	    (n == 0 && r->version_minor == 0))
		return true;
	if (n != 1 || *kind == ORIGIN_HOST_MALFORMED) {
		refuse(c, r, 400, n == 0 ? "bad request: an HTTP/1.1 request "
		    "needs a Host header" : n > 1 ? "bad request: more than "
		    "one Host header" : "bad request: malformed Host header");
		return false;
	}
	snprintf(msg, sizeof(msg), "Host '%.100s' does not name this gateway; "
	    "if it should, add it to \"allowed_hosts\" in sluice.json", host);
	refuse(c, r, 421, msg);
	return false;
}

/* Against cross-site requests (browsers send Origin with every one
 * that can change something, simple text/plain POSTs included): a
 * request with an Origin is served for an allowed_origins entry, or
 * for the gateway's own site when the Host named it (not when only
 * "*" admitted the Host: a rebound name would pass as its own site).
 * *origin: the Origin, NULL when none came. */
static bool
origin_ok(struct gw *g, const struct http_request *r, enum origin_host kind,
    const char **origin)
{
	size_t		 n;
	const char	*host = http_header(r, "Host");

	*origin = only_header(r, "Origin", &n);
	if (n == 0)
		return true;
	if (*origin == NULL)
		return false;
	return origin_listed(*origin, g->g_conf.c_allowed_origins) ||
	    (kind >= ORIGIN_HOST_LISTED && host != NULL &&
	    origin_same_site(*origin, host));
}

static void
refuse_origin(struct http_conn *c, const struct http_request *r)
{
	const char	*origin = http_header(r, "Origin");
	char		 msg[256];
	size_t		 n;

	if (only_header(r, "Origin", &n) != NULL && origin_well_formed(origin))
		snprintf(msg, sizeof(msg), "Origin '%.100s' may not call this "
		    "gateway; to let its web pages call, add it to "
		    "\"allowed_origins\" in sluice.json", origin);
	else
		snprintf(msg, sizeof(msg), "a malformed Origin header (or "
		    "more than one) may not call this gateway");
	refuse(c, r, 403, msg);
}

/* A list of header names, safe to repeat in a header. */
static bool
name_list(const char *s)
{
	static const char	 ok[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				    "!#$%&'*+-.^_`|~, \t";
	size_t			 n = strlen(s);

	return n > 0 && n <= 1024 && strspn(s, ok) == n;
}

/* The answer to a CORS preflight from an admitted origin: the methods
 * of our routes, and the headers asked for (the origin is trusted, so
 * whatever its client library sends may come). */
static void
preflight(struct http_conn *c, const struct http_request *r,
    const char *origin)
{
	const char	*want = http_header(r, "Access-Control-Request-Headers");
	struct buf	 b = BUF_INIT;

	http_set_route(c, "preflight");
	buf_printf(&b, "Access-Control-Allow-Origin: %s\r\n"
	    "Access-Control-Allow-Methods: GET, POST, DELETE\r\n"
	    "Access-Control-Allow-Headers: %s\r\n"
	    "Access-Control-Max-Age: %d\r\n"
	    "Vary: Origin, Access-Control-Request-Method, "
	    "Access-Control-Request-Headers\r\n", origin,
	    want != NULL && name_list(want) ? want : ALLOW_HEADERS,
	    PREFLIGHT_MAX_AGE);
	http_reply(c, 204, "text/plain", b.b_data, NULL, 0);
	buf_free(&b);
}

bool
browser_gate(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	enum origin_host	 kind;
	const char		*origin;
	struct buf		 b = BUF_INIT;

	if (!host_ok(g, c, r, &kind))
		return false;
	if (!origin_ok(g, r, kind, &origin)) {
		refuse_origin(c, r);
		return false;
	}
	if (origin == NULL)
		return true;
	if (r->method == HTTP_OPTIONS &&
	    http_header(r, "Access-Control-Request-Method") != NULL) {
		preflight(c, r, origin);
		return false;
	}
	buf_printf(&b, "Access-Control-Allow-Origin: %s\r\nVary: Origin\r\n"
	    "Access-Control-Expose-Headers: " EXPOSE_HEADERS "\r\n", origin);
	http_set_headers(c, b.b_data);
	buf_free(&b);
	return true;
}
