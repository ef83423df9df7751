/* check_browser.c - integration: what a web page may do (Host check against DNS rebinding, Origin check, CORS), in raw HTTP. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

#define KEY		"browser-test-key-1"
#define CHAT_TEXT	"{\"model\":\"x\",\"messages\":[{\"role\":\"user\"," \
			"\"content\":\"hi\"}]}"
#define GEN_TEXT	"{\"model\":\"x\",\"prompt\":\"hi\",\"stream\":false}"

static struct it	 T;

static void
start(const char *settings, const char *listen)
{
	memset(&T, 0, sizeof(T));
	if (listen != NULL)
		snprintf(T.it_listen, sizeof(T.it_listen), "%s", listen);
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	it_gateway_start(&T, NULL);
}

/* ---- raw HTTP ------------------------------------------------------ */

struct raw {
	int		 rw_status;	/* -1: no answer */
	struct buf	 rw_text;	/* head and body */
};

/* req (which should ask to close) to ip:port on a new connection; the
 * answer is read to EOF. */
static void
raw_at(const char *ip, int port, const char *req, struct raw *out)
{
	struct sockaddr_in	 sa;
	struct pollfd		 pfd;
	char			 tmp[4096];
	ssize_t			 n;
	int			 fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(out, 0, sizeof(*out));
	out->rw_status = -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	pfd = (struct pollfd){ fd, POLLIN, 0 };
	while (poll(&pfd, 1, 15000) == 1 &&
	    (n = read(fd, tmp, sizeof(tmp))) > 0)
		buf_add(&out->rw_text, tmp, (size_t)n);
	close(fd);
	buf_adds(&out->rw_text, "");
	if (sscanf(out->rw_text.b_data, "HTTP/1.1 %d ", &out->rw_status) != 1)
		out->rw_status = -1;
}

/* The same to the gateway on 127.0.0.1. */
static void
raw(const char *req, struct raw *out)
{
	raw_at("127.0.0.1", T.it_port, req, out);
}

static void
raw_free(struct raw *r)
{
	buf_free(&r->rw_text);
}

/* The value of header name in the head of r, into v; NULL if absent. */
static const char *
raw_header(const struct raw *r, const char *name, char *v, size_t len)
{
	const char	*t = r->rw_text.b_data, *end = strstr(t, "\r\n\r\n");
	const char	*p = t, *e;
	size_t		 n = strlen(name);

	while ((p = strstr(p, "\r\n")) != NULL && (end == NULL || p < end)) {
		p += 2;
		if (strncasecmp(p, name, n) != 0 || p[n] != ':')
			continue;
		for (p += n + 1; *p == ' '; p++)
			;
		e = strstr(p, "\r\n");
		snprintf(v, len, "%.*s", (int)(e - p), p);
		return v;
	}
	return NULL;
}

static const char *
raw_body(const struct raw *r)
{
	const char	*p = strstr(r->rw_text.b_data, "\r\n\r\n");

	return p != NULL ? p + 4 : "";
}

/* A request to close after its answer: header lines (CRLF-ended, or
 * ""), then a body with its type when body is not NULL. Caller frees. */
static char *
req_make(const char *method, const char *path, const char *headers,
    const char *ctype, const char *body)
{
	char	*s;

	if (body == NULL)
		ck_assert_int_gt(asprintf(&s, "%s %s HTTP/1.1\r\n%sConnection: "
		    "close\r\n\r\n", method, path, headers), 0);
	else
		ck_assert_int_gt(asprintf(&s, "%s %s HTTP/1.1\r\n%sConnection: "
		    "close\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n"
		    "%s", method, path, headers, ctype, strlen(body), body), 0);
	return s;
}

/* req_make, sent to the gateway; the status is returned. */
static int
send_req(const char *method, const char *path, const char *headers,
    const char *ctype, const char *body, struct raw *out)
{
	char	*s = req_make(method, path, headers, ctype, body);

	raw(s, out);
	free(s);
	return out->rw_status;
}

/* "Host: 127.0.0.1:PORT\r\n" and other lines, as one string (static,
 * the next call overwrites it). */
static const char *
lines(const char *fmt, ...)
{
	static char	 b[1024];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	return b;
}

/* An error answer in the route's shape: {"error":"..."} under /api/,
 * OpenAI's error object elsewhere, its message holding needle. */
static void
assert_error(const struct raw *r, int status, bool ollama,
    const char *needle)
{
	json_t		*j = it_json(raw_body(r));
	json_t		*e = json_object_get(j, "error");
	const char	*msg = ollama ? json_string_value(e) :
			    json_string_value(json_object_get(e, "message"));

	ck_assert_msg(r->rw_status == status, "want %d: %.300s", status,
	    r->rw_text.b_data);
	ck_assert_msg(msg != NULL, "not the %s shape: %s", ollama ? "Ollama" :
	    "OpenAI", raw_body(r));
	if (!ollama)
		ck_assert_int_eq(json_integer_value(json_object_get(e, "code")),
		    status);
	ck_assert_msg(strstr(msg, needle) != NULL, "'%s' lacks '%s'", msg,
	    needle);
	json_decref(j);
}

/* ---- Host ---------------------------------------------------------- */

/* DNS rebinding: a page of evil.example whose name now resolves to
 * 127.0.0.1 sends its own name as Host. Refused with 421 before
 * anything runs, in each route's error shape. */
START_TEST(evil_host_refused)
{
	static const char *const hosts[] = { "evil.example:%d",
	    "localhost.evil.example:%d", "127.0.0.1.nip.io:%d",
	    "evil.example" };
	struct raw	 r;
	long long	 before;
	size_t		 i, from = 0;

	start(NULL, NULL);
	before = it_mock_requests(&T);
	for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		char	 h[128];

		snprintf(h, sizeof(h), "Host: %s\r\n", hosts[i]);
		send_req("POST", "/v1/chat/completions", lines(h, T.it_port),
		    "text/plain", CHAT_TEXT, &r);
		assert_error(&r, 421, false, "allowed_hosts");
		raw_free(&r);
		send_req("POST", "/api/generate", lines(h, T.it_port),
		    "application/json", GEN_TEXT, &r);
		assert_error(&r, 421, true, "does not name this gateway");
		raw_free(&r);
		send_req("GET", "/v1/models", lines(h, T.it_port), NULL, NULL,
		    &r);
		assert_error(&r, 421, false, "allowed_hosts");
		raw_free(&r);
	}
	ck_assert_int_eq(it_mock_requests(&T), before);
	ck_assert(it_log_wait(&T, "refused POST /v1/chat/completions", &from,
	    2000));
	it_stop_clean(&T);
}
END_TEST

/* What curl, browsers and people send for a loopback gateway; and
 * /health answers whatever Host a probe sends. */
START_TEST(own_host_forms_accepted)
{
	static const char *const hosts[] = { "127.0.0.1:%d", "127.0.0.1",
	    "localhost:%d", "LocalHost:%d", "localhost.:%d", "[::1]:%d",
	    "localhost", "app.localhost:%d", "127.0.0.2:%d" };
	struct raw	 r;
	char		 h[128];
	size_t		 i;

	start(NULL, NULL);
	for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		snprintf(h, sizeof(h), "Host: %s\r\n", hosts[i]);
		ck_assert_msg(send_req("GET", "/v1/models", lines(h,
		    T.it_port), NULL, NULL, &r) == 200, "%s: %.200s", hosts[i],
		    r.rw_text.b_data);
		raw_free(&r);
	}
	raw("GET /v1/models HTTP/1.0\r\n\r\n", &r);	/* no Host at all */
	ck_assert_int_eq(r.rw_status, 200);
	raw_free(&r);
	ck_assert_int_eq(send_req("GET", "/health", "Host: evil.example\r\n",
	    NULL, NULL, &r), 200);
	raw_free(&r);
	ck_assert_int_eq(send_req("GET", "/health", "", NULL, NULL, &r), 200);
	raw_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* RFC 9112 3.2: HTTP/1.1 without Host, two Hosts or a broken one: 400. */
START_TEST(bad_host_is_400)
{
	static const char *const heads[] = { "",
	    "Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n",
	    "Host: evil.example@127.0.0.1\r\n", "Host: 127.0.0.1:99999\r\n",
	    "Host: [::1\r\n" };
	struct raw	 r;
	size_t		 i;

	start(NULL, NULL);
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		send_req("POST", "/v1/chat/completions", heads[i],
		    "application/json", CHAT_TEXT, &r);
		assert_error(&r, 400, false, "Host");
		raw_free(&r);
	}
	ck_assert_int_eq(it_mock_requests(&T), 0);
	it_stop_clean(&T);
}
END_TEST

/* allowed_hosts: names behind a proxy; a port only when the entry has
 * one. A reload replaces the list. */
START_TEST(allowed_hosts_and_reload)
{
	struct raw	 r;
	uint64_t	 t0;
	int		 st = 0;

	start("\"allowed_hosts\": [\"sluice.example.com\", \"box.lan:8080\"]",
	    NULL);
	ck_assert_int_eq(send_req("GET", "/v1/models", "Host: "
	    "SLUICE.example.com.:443\r\n", NULL, NULL, &r), 200);
	raw_free(&r);
	ck_assert_int_eq(send_req("GET", "/v1/models", "Host: box.lan:8080\r\n",
	    NULL, NULL, &r), 200);
	raw_free(&r);
	ck_assert_int_eq(send_req("GET", "/v1/models", "Host: box.lan:8081\r\n",
	    NULL, NULL, &r), 421);
	raw_free(&r);
	ck_assert_int_eq(send_req("GET", "/v1/models", "Host: other.example\r\n",
	    NULL, NULL, &r), 421);
	raw_free(&r);
	it_settings(&T, "\"allowed_hosts\": [\"other.example\"]");
	kill(T.it_gw, SIGHUP);
	for (t0 = it_now(); it_now() - t0 < 5000 && st != 200; it_sleep(50)) {
		st = send_req("GET", "/v1/models", "Host: other.example\r\n",
		    NULL, NULL, &r);
		raw_free(&r);
	}
	ck_assert_int_eq(st, 200);
	ck_assert_int_eq(send_req("GET", "/v1/models", "Host: "
	    "sluice.example.com\r\n", NULL, NULL, &r), 421);
	raw_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* An IPv4 address of this machine other than loopback, into out;
 * false when there is none. */
static bool
lan_address(char *out, size_t len)
{
	struct ifaddrs	*ifs, *i;
	bool		 found = false;

	ck_assert_int_eq(getifaddrs(&ifs), 0);
	for (i = ifs; i != NULL && !found; i = i->ifa_next)
		if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
		    (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK))
			found = inet_ntop(AF_INET, &((struct sockaddr_in *)
			    i->ifa_addr)->sin_addr, out, len) != NULL;
	freeifaddrs(ifs);
	return found;
}

/* Bound to 0.0.0.0: the address a client reached is ours (with or
 * without the port); names still need allowed_hosts. */
START_TEST(wildcard_bind)
{
	char		 ip[INET_ADDRSTRLEN], *req;
	struct raw	 r;

	start("\"api_keys\": [\"" KEY "\"]", "0.0.0.0:0");
	ck_assert_int_eq(send_req("GET", "/v1/models", lines("Host: 127.0.0.1:"
	    "%d\r\nAuthorization: Bearer " KEY "\r\n", T.it_port), NULL, NULL,
	    &r), 200);
	raw_free(&r);
	if (!lan_address(ip, sizeof(ip))) {
		fprintf(stderr, "wildcard_bind: no address besides loopback; "
		    "the reached-address case is not run\n");
		it_stop_clean(&T);
		return;
	}
	req = req_make("GET", "/v1/models", lines("Host: %s:%d\r\n"
	    "Authorization: Bearer " KEY "\r\n", ip, T.it_port), NULL, NULL);
	raw_at(ip, T.it_port, req, &r);
	ck_assert_msg(r.rw_status == 200, "%s: %.200s", ip, r.rw_text.b_data);
	raw_free(&r);
	free(req);
	req = req_make("GET", "/v1/models", lines("Host: %s\r\n"
	    "Authorization: Bearer " KEY "\r\n", ip), NULL, NULL);
	raw_at(ip, T.it_port, req, &r);
	ck_assert_int_eq(r.rw_status, 200);
	raw_free(&r);
	free(req);
	req = req_make("GET", "/v1/models", lines("Host: mybox:%d\r\n"
	    "Authorization: Bearer " KEY "\r\n", T.it_port), NULL, NULL);
	raw_at(ip, T.it_port, req, &r);
	ck_assert_int_eq(r.rw_status, 421);
	raw_free(&r);
	free(req);
	it_stop_clean(&T);
}
END_TEST

/* ---- Origin ------------------------------------------------------- */

/* A cross-site "simple" POST (text/plain, no preflight) and its
 * friends: 403, and no request reaches the backend. */
START_TEST(evil_origin_refused)
{
	static const char *const origins[] = { "https://evil.example",
	    "null", "http://127.0.0.1:1", "http://localhost:%d.evil.example" };
	struct raw	 r;
	char		 o[128];
	size_t		 i;

	start(NULL, NULL);
	for (i = 0; i < sizeof(origins) / sizeof(origins[0]); i++) {
		snprintf(o, sizeof(o), "Host: 127.0.0.1:%%d\r\nOrigin: %s\r\n",
		    origins[i]);
		send_req("POST", "/v1/chat/completions", lines(o, T.it_port,
		    T.it_port), "text/plain", CHAT_TEXT, &r);
		assert_error(&r, 403, false, "may not call this gateway");
		ck_assert_ptr_null(raw_header(&r, "Access-Control-Allow-Origin",
		    o, sizeof(o)));
		raw_free(&r);
	}
	send_req("POST", "/api/generate", lines("Host: 127.0.0.1:%d\r\nOrigin: "
	    "https://evil.example\r\n", T.it_port), "application/x-www-form-"
	    "urlencoded", GEN_TEXT, &r);
	assert_error(&r, 403, true, "may not call this gateway");
	raw_free(&r);
	send_req("GET", "/v1/models", lines("Host: 127.0.0.1:%d\r\nOrigin: "
	    "https://evil.example\r\n", T.it_port), NULL, NULL, &r);
	assert_error(&r, 403, false, "https://evil.example");
	raw_free(&r);
	send_req("POST", "/v1/chat/completions", lines("Host: 127.0.0.1:%d\r\n"
	    "Origin: http://127.0.0.1:%d\r\nOrigin: https://evil.example\r\n",
	    T.it_port, T.it_port), "text/plain", CHAT_TEXT, &r);
	assert_error(&r, 403, false, "more than one");
	raw_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 0);
	it_stop_clean(&T);
}
END_TEST

/* The CORS headers an admitted page needs, on each reply. */
static void
assert_cors(const struct raw *r, const char *origin)
{
	char	 v[256];

	ck_assert_msg(raw_header(r, "Access-Control-Allow-Origin", v,
	    sizeof(v)) != NULL, "no CORS: %.300s", r->rw_text.b_data);
	ck_assert_str_eq(v, origin);
	ck_assert_ptr_nonnull(raw_header(r, "Vary", v, sizeof(v)));
	ck_assert_ptr_nonnull(strstr(v, "Origin"));
	ck_assert_ptr_nonnull(raw_header(r, "Access-Control-Expose-Headers",
	    v, sizeof(v)));
	ck_assert_ptr_nonnull(strstr(v, "X-Request-Id"));
}

/* allowed_origins: answers (whole, streamed, errors) carry the CORS
 * headers for that origin. */
START_TEST(allowed_origin_gets_cors)
{
	static const char	 origin[] = "http://localhost:3000";
	struct raw		 r;

	start("\"allowed_origins\": [\"http://LOCALHOST:3000/\"]", NULL);
	ck_assert_int_eq(send_req("POST", "/v1/chat/completions", lines("Host: "
	    "127.0.0.1:%d\r\nOrigin: %s\r\n", T.it_port, origin),
	    "application/json", CHAT_TEXT, &r), 200);
	assert_cors(&r, origin);
	ck_assert_ptr_nonnull(strstr(raw_body(&r), "quick brown"));
	raw_free(&r);
	ck_assert_int_eq(send_req("POST", "/v1/chat/completions", lines("Host: "
	    "127.0.0.1:%d\r\nOrigin: %s\r\n", T.it_port, origin),
	    "application/json", "{\"model\":\"x\",\"stream\":true,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &r), 200);
	assert_cors(&r, origin);
	ck_assert_ptr_nonnull(strstr(raw_body(&r), "[DONE]"));
	raw_free(&r);
	send_req("POST", "/api/chat", lines("Host: localhost:%d\r\nOrigin: "
	    "%s\r\n", T.it_port, origin), "application/json", "{not json", &r);
	ck_assert_int_eq(r.rw_status, 400);
	assert_cors(&r, origin);
	raw_free(&r);
	send_req("GET", "/nowhere", lines("Host: localhost:%d\r\nOrigin: %s\r\n",
	    T.it_port, origin), NULL, NULL, &r);
	ck_assert_int_eq(r.rw_status, 404);
	assert_cors(&r, origin);
	raw_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* A page of the gateway's own site (as the Host names it) may call;
 * the same page on another port may not. */
START_TEST(same_origin_passes)
{
	struct raw	 r;
	char		 o[64];

	start(NULL, NULL);
	snprintf(o, sizeof(o), "http://127.0.0.1:%d", T.it_port);
	ck_assert_int_eq(send_req("POST", "/v1/chat/completions", lines("Host: "
	    "127.0.0.1:%d\r\nOrigin: %s\r\n", T.it_port, o), "text/plain",
	    CHAT_TEXT, &r), 200);
	assert_cors(&r, o);
	raw_free(&r);
	ck_assert_int_eq(send_req("GET", "/v1/models", lines("Host: "
	    "localhost:%d\r\nOrigin: http://localhost:%d\r\n", T.it_port,
	    T.it_port), NULL, NULL, &r), 200);
	raw_free(&r);
	ck_assert_int_eq(send_req("GET", "/v1/models", lines("Host: "
	    "localhost:%d\r\nOrigin: http://localhost:%d\r\n", T.it_port,
	    T.it_port + 1), NULL, NULL, &r), 403);
	raw_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* Preflights: 204 with the CORS answer for an allowed origin, 403 for
 * another; OPTIONS that is no preflight is still no route. */
START_TEST(preflight)
{
	struct raw	 r;
	char		 v[256];

	start("\"allowed_origins\": [\"https://chat.example.com\"]", NULL);
	ck_assert_int_eq(send_req("OPTIONS", "/v1/chat/completions",
	    lines("Host: 127.0.0.1:%d\r\nOrigin: https://chat.example.com\r\n"
	    "Access-Control-Request-Method: POST\r\nAccess-Control-Request-"
	    "Headers: authorization, content-type, x-stainless-os\r\n",
	    T.it_port), NULL, NULL, &r), 204);
	ck_assert_str_eq(raw_header(&r, "Access-Control-Allow-Origin", v,
	    sizeof(v)), "https://chat.example.com");
	ck_assert_ptr_nonnull(strstr(raw_header(&r,
	    "Access-Control-Allow-Methods", v, sizeof(v)), "POST"));
	ck_assert_str_eq(raw_header(&r, "Access-Control-Allow-Headers", v,
	    sizeof(v)), "authorization, content-type, x-stainless-os");
	ck_assert_str_eq(raw_header(&r, "Access-Control-Max-Age", v,
	    sizeof(v)), "600");
	ck_assert_ptr_nonnull(strstr(raw_header(&r, "Vary", v, sizeof(v)),
	    "Origin"));
	raw_free(&r);
	/* without a list of headers, the ones our clients use */
	send_req("OPTIONS", "/api/chat", lines("Host: 127.0.0.1:%d\r\nOrigin: "
	    "https://chat.example.com\r\nAccess-Control-Request-Method: "
	    "POST\r\n", T.it_port), NULL, NULL, &r);
	ck_assert_int_eq(r.rw_status, 204);
	ck_assert_ptr_nonnull(strstr(raw_header(&r,
	    "Access-Control-Allow-Headers", v, sizeof(v)), "Authorization"));
	raw_free(&r);
	send_req("OPTIONS", "/api/chat", lines("Host: 127.0.0.1:%d\r\nOrigin: "
	    "https://evil.example\r\nAccess-Control-Request-Method: POST\r\n",
	    T.it_port), NULL, NULL, &r);
	assert_error(&r, 403, true, "allowed_origins");
	ck_assert_ptr_null(raw_header(&r, "Access-Control-Allow-Origin", v,
	    sizeof(v)));
	raw_free(&r);
	ck_assert_int_eq(send_req("OPTIONS", "/v1/chat/completions",
	    lines("Host: 127.0.0.1:%d\r\n", T.it_port), NULL, NULL, &r), 405);
	raw_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* Ollama's documented curl examples send no Content-Type of their own
 * (curl says application/x-www-form-urlencoded) and no Origin: they
 * keep working. */
START_TEST(curl_form_post_works)
{
	struct raw	 r;
	json_t		*j;

	start(NULL, NULL);
	ck_assert_int_eq(send_req("POST", "/api/generate", lines("Host: "
	    "localhost:%d\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n",
	    T.it_port), "application/x-www-form-urlencoded", GEN_TEXT, &r),
	    200);
	j = it_json(raw_body(&r));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j,
	    "response")), "quick brown"));
	json_decref(j);
	raw_free(&r);
	ck_assert_int_eq(send_req("POST", "/api/chat", lines("Host: "
	    "localhost:%d\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n",
	    T.it_port), "application/x-www-form-urlencoded", "{\"model\":\"x\","
	    "\"stream\":false,\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"hi\"}]}", &r), 200);
	ck_assert_ptr_nonnull(strstr(raw_body(&r), "quick brown"));
	raw_free(&r);
	it_stop_clean(&T);
}
END_TEST

static Suite *
browser_suite(void)
{
	const struct {
		const char	*name;
		const TTest	*fn;
	} cases[] = {
		{ "evil_host", evil_host_refused },
		{ "own_host_forms", own_host_forms_accepted },
		{ "bad_host", bad_host_is_400 },
		{ "allowed_hosts", allowed_hosts_and_reload },
		{ "wildcard_bind", wildcard_bind },
		{ "evil_origin", evil_origin_refused },
		{ "allowed_origin", allowed_origin_gets_cors },
		{ "same_origin", same_origin_passes },
		{ "preflight", preflight },
		{ "curl_form_post", curl_form_post_works },
	};
	Suite	*s = suite_create("browser");
	TCase	*tc;
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tc = tcase_create(cases[i].name);
		tcase_set_timeout(tc, 60);
		tcase_add_test(tc, cases[i].fn);
		suite_add_tcase(s, tc);
	}
	return s;
}

int
main(void)
{
	return it_main(browser_suite());
}
