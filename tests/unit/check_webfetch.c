/* check_webfetch.c - WebFetch (node_webfetch.c, tools/webfetch.c, webtext.c, htmlstrip.c) against tests/mock-web: fields, outputs, errors, redirects, the address guard, the cap, cancellation. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../../common/xmem.h"
#include "../../worker/engine/registry.h"
#include "../../worker/llm/transport.h"
#include "../../worker/nodes/nodes.h"
#include "../../worker/tools/htmlstrip.h"
#include "../../worker/tools/netguard.h"
#include "../../worker/tools/webfetch.h"
#include "../testmain.h"
#include "netnames.h"
#include "nodefix.h"

static struct nodefix	 F;
static pid_t		 mock;
static int		 port;
static char		 U[512];	/* the last url() */

#define FAILPFX	"workflow 'wf' node 3 (WebFetch): "
#define BLOCKED	"WebFetch blocked a request to a disallowed address: "

static void
setup(void)
{
	nodefix_init(&F, false);
	mock = it_double_start("mock-web", NULL, &port);
	ck_assert_int_eq(transport_init(), 0);
	json_object_set_new(F.nf_node, "type", json_string("WebFetch"));
}

static void
teardown(void)
{
	transport_cleanup();
	it_double_stop(mock);
	nodefix_free(&F);
}

/* "http://127.0.0.1:PORT" + the formatted path, into U. */
static const char *
url(const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(U, sizeof(U), "http://127.0.0.1:%d", port);
	va_start(ap, fmt);
	vsnprintf(U + n, sizeof(U) - (size_t)n, fmt, ap);
	va_end(ap);
	return U;
}

/* GET path of the mock: its JSON answer. Caller decrefs. */
static json_t *
mock_get(const char *path)
{
	return it_double_json(port, path);
}

/* The mock as a proxy: "http://127.0.0.1:PORT", into px. */
static const char *
mock_proxy(char px[64])
{
	snprintf(px, 64, "http://127.0.0.1:%d", port);
	return px;
}

static long
mock_count(void)
{
	json_t	*v = mock_get("/_log");
	long	 n = (long)json_integer_value(json_object_get(v, "count"));

	json_decref(v);
	return n;
}

/* Request i (0: first; -1: last) of the mock's log. Caller decrefs. */
static json_t *
mock_req(int i)
{
	json_t	*v = mock_get("/_log"), *a = json_object_get(v, "requests"),
		*r;

	if (i < 0)
		i += (int)json_array_size(a);
	r = json_incref(json_array_get(a, (size_t)i));
	json_decref(v);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* The node's outcome: 0 and the output, or -1 and res. */
static int
run(struct buf *out, struct wresult *res)
{
	const struct node_type	*t = node_type_find("WebFetch");
	bool			 streamed = false;

	ck_assert_ptr_nonnull(t);
	memset(res, 0, sizeof(*res));
	buf_reset(out);
	return t->nt_run(&F.nf_x, out, &streamed, res);
}

/* Set the node's members (json_pack fmt, ap). */
static void
members(const char *fmt, va_list ap)
{
	json_t	*m = json_vpack_ex(NULL, 0, fmt, ap);

	ck_assert_ptr_nonnull(m);
	json_object_update(F.nf_node, m);
	json_decref(m);
}

/* Run with the node's members (json_pack fmt): it must succeed; its
 * output. Caller frees. */
static char *
go(const char *fmt, ...)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	va_list		 ap;

	va_start(ap, fmt);
	members(fmt, ap);
	va_end(ap);
	ck_assert_msg(run(&out, &res) == 0, "failed: %s", res.r_message);
	if (out.b_data == NULL)
		buf_adds(&out, "");
	return buf_take(&out);
}

/* The same; the output must be want. */
static void
ck_out(const char *want, const char *fmt, ...)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	va_list		 ap;

	va_start(ap, fmt);
	members(fmt, ap);
	va_end(ap);
	ck_assert_msg(run(&out, &res) == 0, "failed: %s", res.r_message);
	ck_assert_str_eq(out.b_data != NULL ? out.b_data : "", want);
	buf_free(&out);
}

/* Run; the node must fail with HTTP 500 and exactly FAILPFX + want. */
static void
ck_fail(const char *want, const char *fmt, ...)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	char		 full[2048];
	va_list		 ap;

	va_start(ap, fmt);
	members(fmt, ap);
	va_end(ap);
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 500);
	snprintf(full, sizeof(full), FAILPFX "%s", want);
	ck_assert_str_eq(res.r_message, full);
	buf_free(&out);
}

/* The node failed with HTTP 500, a message naming it and holding
 * needle (for texts that hold a variable part). */
static void
ck_failed(const struct wresult *res, const char *needle)
{
	ck_assert_int_eq(res->r_status, RQ_ERROR);
	ck_assert_int_eq(res->r_http, 500);
	ck_assert_msg(strncmp(res->r_message, FAILPFX, strlen(FAILPFX)) == 0 &&
	    strstr(res->r_message, needle) != NULL, "message '%s' lacks '%s'",
	    res->r_message, needle);
}

/* The header name of the request r (case-insensitive) or NULL. */
static const char *
req_header(json_t *r, const char *name)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(json_object_get(r, "headers"), k, v)
		if (strcasecmp(k, name) == 0)
			return json_string_value(v);
	return NULL;
}

/* Request r was method with body. */
static void
ck_req(json_t *r, const char *method, const char *body)
{
	ck_assert_str_eq(json_string_value(json_object_get(r, "method")),
	    method);
	ck_assert_str_eq(json_string_value(json_object_get(r, "body")), body);
}

/* ---- requests sent ---- */

/* A GET sends nothing of its own: no body, no type, no credentials. */
START_TEST(get_default)
{
	json_t	*r;

	ck_out("hello", "{s:s}", "url", url("/r?body=hello"));
	r = mock_req(-1);
	ck_req(r, "GET", "");
	ck_assert_ptr_null(req_header(r, "Content-Type"));
	ck_assert_ptr_null(req_header(r, "Content-Length"));
	ck_assert_ptr_null(req_header(r, "Authorization"));
	ck_assert_ptr_null(req_header(r, "Cookie"));
	ck_assert_str_eq(req_header(r, "Accept-Encoding"), "gzip, deflate");
	json_decref(r);
	ck_assert_int_eq(mock_count(), 1);
}
END_TEST

/* The method is upper-cased, the body and header values substituted,
 * header names not; no Content-Type is added. */
START_TEST(post_substitution)
{
	json_t	*r;

	ck_out("", "{s:s, s:s, s:s, s:{s:s}}", "url", url("/r?body="),
	    "method", "post", "body", "a={name}", "headers", "X-{name}",
	    "v-{name}");
	r = mock_req(-1);
	ck_req(r, "POST", "a=Ann");
	ck_assert_str_eq(req_header(r, "X-{name}"), "v-Ann");
	ck_assert_str_eq(req_header(r, "Content-Length"), "5");
	ck_assert_ptr_null(req_header(r, "Content-Type"));
	json_decref(r);
}
END_TEST

/* Any method; a body of JSON is sent as its Python str(); the url is
 * substituted; a POST without body says Content-Length: 0; an empty
 * header value is sent empty. */
START_TEST(methods_and_bodies)
{
	json_t	*r;
	char	 u[600];

	snprintf(u, sizeof(u), "http://127.0.0.1:%d/r?body={name}", port);
	ck_out("Ann", "{s:s, s:s, s:{s:i}, s:{s:s}}", "url", u, "method",
	    "put", "body", "k", 1, "headers", "X-Empty", "");
	r = mock_req(-1);
	ck_req(r, "PUT", "{'k': 1}");
	ck_assert_str_eq(req_header(r, "X-Empty"), "");
	json_decref(r);
	json_object_del(F.nf_node, "body");
	json_object_del(F.nf_node, "headers");
	ck_out("", "{s:s, s:s}", "url", url("/r"), "method", "POST");
	r = mock_req(-1);
	ck_assert_str_eq(req_header(r, "Content-Length"), "0");
	json_decref(r);
	ck_out("", "{s:s, s:s}", "url", url("/r?body=x"), "method", "HEAD");
	r = mock_req(-1);
	ck_req(r, "HEAD", "");
	json_decref(r);
}
END_TEST

/* A header name or value requests refuses is a failed request. */
START_TEST(invalid_header)
{
	ck_out("Invalid leading whitespace, reserved character(s), or return "
	    "character(s) in header value: ' lead'", "{s:s, s:s, s:{s:s}}",
	    "url", url("/r"), "onError", "return", "headers", "X-A", " lead");
	ck_fail("Invalid leading whitespace, reserved character(s), or return "
	    "character(s) in header name: 'X:B'", "{s:s, s:{s:s}}",
	    "onError", "raise", "headers", "X:B", "v");
	ck_assert_int_eq(mock_count(), 0);
}
END_TEST

/* proxy: every request goes to it (here the mock itself, so nothing
 * leaves the machine); empty means none; not a string fails. */
START_TEST(proxy)
{
	char	 px[64];
	json_t	*r;

	ck_out("via", "{s:s, s:s}", "url", "http://webfetch.invalid/r?body=via",
	    "proxy", mock_proxy(px));
	r = mock_req(-1);
	ck_assert_str_eq(json_string_value(json_object_get(r, "uri")),
	    "http://webfetch.invalid/r?body=via");
	json_decref(r);
	ck_out("direct", "{s:s, s:s}", "url", url("/r?body=direct"), "proxy",
	    "");
	ck_fail("WebFetch 'proxy' must be a string URL (e.g., "
	    "'socks5://host:1080').", "{s:i}", "proxy", 1080);
}
END_TEST

/* ---- outputs ---- */

START_TEST(format_json)
{
	ck_out("{\"x\": 1, \"u\": \"\\u00e9\", \"l\": [1.5, null, true]}",
	    "{s:s, s:s}", "url", url("/r?ctype=application/json&body=%%20%%20"
	    "%%7B%%22x%%22%%20:1,%%22u%%22:%%22%%C3%%A9%%22,%%22l%%22:"
	    "%%5B1.50,null,true%%5D%%7D%%20%%20"), "outputFormat", "json");
}
END_TEST

/* json with a body that is not JSON: the parser's error, or under
 * onError "return" the raw body. */
START_TEST(format_json_invalid)
{
	ck_out("not json", "{s:s, s:s, s:s}", "url",
	    url("/r?body=not%%20json"), "outputFormat", "json", "onError",
	    "return");
	json_object_set_new(F.nf_node, "onError", json_string("raise"));
	{
		struct buf	 out = BUF_INIT;
		struct wresult	 res;

		ck_assert_int_eq(run(&out, &res), -1);
		ck_assert_str_eq(res.r_message, FAILPFX "invalid token near "
		    "'not': line 1 column 3 (char 3)");
		buf_free(&out);
	}
}
END_TEST

/* full: status, headers (first name's case, repeats joined), body. */
START_TEST(format_full)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*v;
	char		 want[1024];

	json_object_set_new(F.nf_node, "url", json_string(url("/r?status=201"
	    "&reason=Created&ctype=text/plain;%%20charset=utf-8&hdr=X-A:1"
	    "&hdr=x-a:2&body=%%C3%%A9t%%C3%%A9")));
	json_object_set_new(F.nf_node, "outputFormat", json_string("full"));
	ck_assert_int_eq(run(&out, &res), 0);
	ck_assert_ptr_nonnull(v = json_loads(out.b_data, 0, NULL));
	snprintf(want, sizeof(want), "{\"status_code\": 201, \"headers\": "
	    "{\"Content-Type\": \"text/plain; charset=utf-8\", \"X-A\": "
	    "\"1, 2\", \"Date\": \"%s\", \"Content-Length\": \"5\"}, "
	    "\"body\": \"\\u00e9t\\u00e9\"}", json_string_value(
	    json_object_get(json_object_get(v, "headers"), "Date")));
	ck_assert_str_eq(out.b_data, want);
	json_decref(v);
	buf_free(&out);
}
END_TEST

/* Text decoding: the charset, ISO-8859-1 for text without one (the
 * mojibake requests makes), UTF-8 for JSON, a guess otherwise. */
START_TEST(decoding)
{
	ck_out("\xc3\x83\xc2\xa9", "{s:s}", "url",
	    url("/r?ctype=text/html&body=%%C3%%A9"));
	ck_out("\xc3\xa9", "{s:s}", "url",
	    url("/r?ctype=text/html;charset=UTF-8&body=%%C3%%A9"));
	ck_out("\xc3\xa9", "{s:s}", "url",
	    url("/r?ctype=text/html;%%20charset=%%22latin-1%%22&body=%%E9"));
	ck_out("\xe2\x82\xac", "{s:s}", "url",
	    url("/r?ctype=text/plain;charset=windows-1252&body=%%80"));
	ck_out("\"\xc3\xa9\"", "{s:s}", "url",
	    url("/r?ctype=application/json&body=%%22%%C3%%A9%%22"));
	ck_out("a\xef\xbf\xbd" "b", "{s:s}", "url",
	    url("/r?ctype=application/json&body=a%%FFb"));
	/* one U+FFFD per maximal invalid prefix, as Python's "replace" */
	ck_out("\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy",
	    "{s:s}", "url", url("/r?ctype=application/json&body=%%E2%%82x"
	    "%%ED%%A0%%80y"));
	ck_out("\xc3\xa9", "{s:s}", "url", url("/r?body=%%C3%%A9"));
	ck_out("\xc3\xa9", "{s:s}", "url", url("/r?body=%%E9"));
}
END_TEST

#define PAGE	"<!DOCTYPE html><html><head><title>T</title><style>p{}" \
		"</style></head><body><h1>Hi &amp; bye</h1><script>var a=" \
		"'<p>x</p>';</script><noscript>no</noscript><iframe>f" \
		"</iframe><p>First paragraph with <strong>bold</strong> " \
		"text.</p><p>&lt;tag&gt; &copy; &#169; &#x41;&nbsp;</p>" \
		"</body></html>"

#define S(s, b)	htmlstrip((s), strlen(s), (b))

START_TEST(format_html_stripped)
{
	struct buf	 b = BUF_INIT;

	htmlstrip(PAGE, strlen(PAGE), &b);
	ck_assert_str_eq(b.b_data, "Hi & bye\nFirst paragraph with\nbold\n"
	    "text.\n<tag> \xc2\xa9 \xc2\xa9 A");
	buf_reset(&b);
	S("<p>broken <b>bold <i>it</p> </div> <<>> <p", &b);
	ck_assert_str_eq(b.b_data, "broken\nbold\nit\n<\n<\n>>\n<\np");
	buf_reset(&b);
	S("<p>seen</p><script>never closed <p>gone</p>", &b);
	ck_assert_str_eq(b.b_data, "seen");
	buf_reset(&b);
	S("<title>outside</title><script/>visible <style/>too", &b);
	ck_assert_str_eq(b.b_data, "outside\nvisible\ntoo");
	buf_reset(&b);
	S("&AMP; &amp &ampx &apos &notin; &notit; &#128; &#0; &#1;x &#xD800; "
	    "&bigstar;", &b);
	/* &bigstar; is HTML5's only: not in the table (Python: U+2605) */
	ck_assert_str_eq(b.b_data, "& & &x &apos \xe2\x88\x89 \xc2\xacit; "
	    "\xe2\x82\xac \xef\xbf\xbd x \xef\xbf\xbd &bigstar;");
	buf_free(&b);
	ck_out("Hi\nthere", "{s:s, s:s}", "url", url("/r?ctype=text/html;"
	    "charset=utf-8&body=%%3Chead%%3Ex%%3C/head%%3E%%3Cp%%3EHi%%3C/p"
	    "%%3E%%20there"), "outputFormat", "html-stripped");
}
END_TEST

/* ---- errors ---- */

/* 4xx and 5xx: requests' HTTPError text; under onError "return" the
 * body, its stripped text or the envelope. */
START_TEST(http_errors)
{
	char	 msg[1024], want[2048];

	url("/r?status=500&reason=Internal%%20Server%%20Error&body=boom");
	snprintf(msg, sizeof(msg), "500 Server Error: Internal Server Error "
	    "for url: %s", U);
	ck_fail(msg, "{s:s}", "url", U);
	url("/r?status=404&reason=Not%%20Found&ctype=text/html&body=%%3Cp%%3E"
	    "nope%%3C/p%%3E");
	snprintf(msg, sizeof(msg), "404 Client Error: Not Found for url: %s",
	    U);
	ck_fail(msg, "{s:s}", "url", U);
	ck_out("<p>nope</p>", "{s:s}", "onError", "return");
	ck_out("<p>nope</p>", "{s:s}", "outputFormat", "json");
	ck_out("nope", "{s:s}", "outputFormat", "html-stripped");
	json_object_set_new(F.nf_node, "outputFormat", json_string("full"));
	{
		struct buf	 out = BUF_INIT;
		struct wresult	 res;
		json_t		*v;

		ck_assert_int_eq(run(&out, &res), 0);
		v = json_loads(out.b_data, 0, NULL);
		snprintf(want, sizeof(want), "{\"error\": \"%s\", "
		    "\"status_code\": 404, \"headers\": {\"Content-Type\": "
		    "\"text/html\", \"Date\": \"%s\", \"Content-Length\": "
		    "\"11\"}, \"body\": \"<p>nope</p>\"}", msg,
		    json_string_value(json_object_get(json_object_get(v,
		    "headers"), "Date")));
		ck_assert_str_eq(out.b_data, want);
		json_decref(v);
		buf_free(&out);
	}
}
END_TEST

/* Nothing answers: the message, or the envelope without a response. */
START_TEST(connect_error)
{
	char	 u[64], want[512];
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	snprintf(u, sizeof(u), "http://127.0.0.1:%d/x", it_dead_port());
	json_object_set_new(F.nf_node, "url", json_string(u));
	ck_assert_int_eq(run(&out, &res), -1);
	snprintf(want, sizeof(want), FAILPFX "WebFetch could not fetch url: "
	    "%s (connection refused", u);
	ck_assert_msg(strncmp(res.r_message, want, strlen(want)) == 0, "%s",
	    res.r_message);
	json_object_set_new(F.nf_node, "onError", json_string("return"));
	ck_assert_int_eq(run(&out, &res), 0);
	ck_assert_msg(strncmp(out.b_data, want + strlen(FAILPFX),
	    strlen(want) - strlen(FAILPFX)) == 0, "%s", out.b_data);
	json_object_set_new(F.nf_node, "outputFormat", json_string("full"));
	ck_assert_int_eq(run(&out, &res), 0);
	ck_assert_msg(strncmp(out.b_data, "{\"error\": \"WebFetch could not "
	    "fetch url: ", 39) == 0, "%s", out.b_data);
	ck_assert_msg(strstr(out.b_data, "\", \"status_code\": null, "
	    "\"headers\": null, \"body\": null}") != NULL, "%s", out.b_data);
	buf_free(&out);
}
END_TEST

/* URLs requests has no adapter for fail as a request (onError). */
START_TEST(bad_urls)
{
	ck_out("Invalid URL 'example.com/x': No scheme supplied. Perhaps you "
	    "meant https://example.com/x?", "{s:s, s:s}", "url", "example.com/x",
	    "onError", "return");
	ck_out("No connection adapters were found for 'ftp://127.0.0.1/x'",
	    "{s:s}", "url", "ftp://127.0.0.1/x");
	ck_out("No connection adapters were found for 'localhost:80/x'",
	    "{s:s}", "url", "localhost:80/x");
	ck_assert_int_eq(mock_count(), 0);
}
END_TEST

/* A read timeout: no byte for `timeout` seconds. */
START_TEST(read_timeout)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	uint64_t	 t0 = it_now();

	json_object_set_new(F.nf_node, "url", json_string(
	    url("/slow?n=3&ms=4000")));
	json_object_set_new(F.nf_node, "timeout", json_integer(1));
	ck_assert_int_eq(run(&out, &res), -1);
	ck_failed(&res, "WebFetch read timed out for url: ");
	ck_failed(&res, "/slow?n=3&ms=4000 (read timeout=1)");
	ck_assert_uint_lt(it_now() - t0, 3500);
	buf_free(&out);
}
END_TEST

/* A3.1 and A3.3's checks, before anything is sent, whatever onError. */
START_TEST(validation)
{
	json_object_set_new(F.nf_node, "onError", json_string("return"));
	ck_fail("WebFetch node requires a 'url' field.", "{}");
	ck_fail("WebFetch node requires a 'url' field.", "{s:s}", "url", "");
	json_object_set_new(F.nf_node, "url", json_string(url("/r")));
	ck_fail("WebFetch 'timeout' must be a number of seconds; got True.",
	    "{s:b}", "timeout", 1);
	ck_fail("WebFetch 'timeout' must be a positive number of seconds; "
	    "got 0.", "{s:i}", "timeout", 0);
	ck_fail("WebFetch 'timeout' must be a number of seconds; got 'abc'.",
	    "{s:s}", "timeout", "abc");
	json_object_del(F.nf_node, "timeout");
	ck_fail("WebFetch 'allowRedirects' must be a boolean (true/false); "
	    "got 'yes'.", "{s:s}", "allowRedirects", "yes");
	json_object_del(F.nf_node, "allowRedirects");
	ck_fail("WebFetch 'maxResponseBytes' must be an integer; got '1.5'.",
	    "{s:s}", "maxResponseBytes", "1.5");
	json_object_del(F.nf_node, "maxResponseBytes");
	ck_fail("WebFetch 'allowedHosts' must be a JSON list of host strings.",
	    "{s:s}", "allowedHosts", "x");
	ck_fail("WebFetch 'allowedHosts' was configured but contains no "
	    "usable host entries; refusing to run with no effective host "
	    "restriction.", "{s:[s]}", "allowedHosts", "  ");
	json_object_del(F.nf_node, "allowedHosts");
	ck_fail("WebFetch 'outputFormat' must be one of ('text', 'json', "
	    "'full', 'html-stripped'); got 'xml'.", "{s:s}", "outputFormat",
	    "xml");
	json_object_del(F.nf_node, "outputFormat");
	ck_fail("WebFetch 'onError' must be one of ('raise', 'return'); got "
	    "'ignore'.", "{s:s}", "onError", "ignore");
	json_object_set_new(F.nf_node, "onError", json_string("return"));
	ck_fail("WebFetch 'headers' must be a JSON object.", "{s:[s]}",
	    "headers", "a");
	json_object_del(F.nf_node, "headers");
	ck_fail("WebFetch 'verify' must be a boolean (true/false); got 1.",
	    "{s:i}", "verify", 1);
	ck_fail("WebFetch 'caBundle' must be a string path to a CA bundle "
	    "(PEM) file.", "{s:b, s:i}", "verify", 1, "caBundle", 5);
	ck_fail("WebFetch 'caBundle' file not found: '/nonexistent/ca.pem'.",
	    "{s:s}", "caBundle", "/nonexistent/ca.pem");
	/* verify false wins over caBundle, which is not even looked at */
	ck_out("", "{s:b, s:i}", "verify", 0, "caBundle", 5);
	ck_assert_int_eq(mock_count(), 1);
}
END_TEST

/* ---- the byte cap ---- */

START_TEST(cap)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_fail("WebFetch response exceeded the 10000-byte cap "
	    "(maxResponseBytes).", "{s:s, s:i}", "url", url("/big?n=20000"),
	    "maxResponseBytes", 10000);
	ck_out("WebFetch response exceeded the 10000-byte cap "
	    "(maxResponseBytes).", "{s:s}", "onError", "return");
	ck_out("{\"error\": \"WebFetch response exceeded the 10000-byte cap "
	    "(maxResponseBytes).\", \"status_code\": null, \"headers\": null, "
	    "\"body\": null}", "{s:s}", "outputFormat", "full");
	json_object_set_new(F.nf_node, "outputFormat", json_string("text"));
	json_object_set_new(F.nf_node, "maxResponseBytes", json_integer(0));
	ck_assert_int_eq(run(&out, &res), 0);
	ck_assert_uint_eq(out.b_len, 20000);
	json_object_set_new(F.nf_node, "maxResponseBytes", json_integer(20000));
	ck_assert_int_eq(run(&out, &res), 0);
	ck_assert_uint_eq(out.b_len, 20000);
	/* the default, 10 MiB */
	json_object_del(F.nf_node, "maxResponseBytes");
	json_object_set_new(F.nf_node, "url", json_string(
	    url("/big?n=10485761")));
	ck_assert_int_eq(run(&out, &res), 0);
	ck_assert_str_eq(out.b_data, "WebFetch response exceeded the "
	    "10485760-byte cap (maxResponseBytes).");
	/* an error page is cut at the cap, no error of its own */
	ck_out("0123", "{s:s, s:i}", "url", url("/r?status=500&body="
	    "0123456789"), "maxResponseBytes", 4);
	buf_free(&out);
}
END_TEST

/* ---- redirects without the guard: requests' rules ---- */

START_TEST(redirects_plain)
{
	json_t	*r;
	char	 loc[128];

	ck_out("end of chain", "{s:s}", "url", url("/chain/30"));
	ck_assert_int_eq(mock_count(), 31);
	ck_fail("Exceeded 30 redirects.", "{s:s}", "url", url("/chain/31"));
	ck_out("to 0", "{s:s}", "onError", "return");
	/* allowRedirects false: the 3xx is the answer */
	ck_out("moved", "{s:s, s:s, s:b}", "url", url("/r?status=302&loc=/echo"
	    "&body=moved"), "onError", "raise", "allowRedirects", 0);
	json_object_set_new(F.nf_node, "allowRedirects", json_true());
	/* 302 makes a POST a GET without body; Cookie always goes;
	 * Authorization goes with the host */
	snprintf(loc, sizeof(loc), "http://127.0.0.2:%d/echo", port);
	json_object_set_new(F.nf_node, "url", json_string(url("/r?status=302"
	    "&loc=%s", loc)));
	json_object_set_new(F.nf_node, "method", json_string("POST"));
	json_object_set_new(F.nf_node, "body", json_string("data"));
	json_object_set_new(F.nf_node, "headers", json_pack("{s:s, s:s, s:s, "
	    "s:s}", "Authorization", "Bearer t", "Cookie", "c=1", "X-Keep",
	    "k", "Content-Type", "text/plain"));
	json_decref(mock_get("/_reset"));
	free(go("{s:s}", "outputFormat", "text"));
	r = mock_req(0);
	ck_assert_str_eq(req_header(r, "Authorization"), "Bearer t");
	ck_assert_str_eq(req_header(r, "Cookie"), "c=1");
	json_decref(r);
	r = mock_req(1);
	ck_req(r, "GET", "");
	ck_assert_ptr_null(req_header(r, "Authorization"));
	ck_assert_ptr_null(req_header(r, "Cookie"));
	ck_assert_ptr_null(req_header(r, "Content-Type"));
	ck_assert_str_eq(req_header(r, "X-Keep"), "k");
	json_decref(r);
	/* 307 keeps method, body and type; the same host keeps
	 * Authorization */
	json_decref(mock_get("/_reset"));
	free(go("{s:s}", "url", url("/r?status=307&loc=/echo")));
	r = mock_req(1);
	ck_req(r, "POST", "data");
	ck_assert_str_eq(req_header(r, "Content-Type"), "text/plain");
	ck_assert_str_eq(req_header(r, "Authorization"), "Bearer t");
	ck_assert_ptr_null(req_header(r, "Cookie"));
	json_decref(r);
}
END_TEST

/* ---- the address guard ---- */

/* blockPrivateAddresses refuses before anything is sent. */
START_TEST(guard_private)
{
	char	 want[256];

	json_object_set_new(F.nf_node, "blockPrivateAddresses", json_true());
	ck_fail(BLOCKED "host '127.0.0.1' is a loopback address.", "{s:s}",
	    "url", url("/r"));
	ck_fail(BLOCKED "host '169.254.169.254' is a link-local address.",
	    "{s:s}", "url", "http://169.254.169.254/latest/meta-data/");
	ck_fail(BLOCKED "host '10.0.0.1' is a private address.", "{s:s}",
	    "url", "http://10.0.0.1/");
	ck_fail(BLOCKED "host '::ffff:127.0.0.1' is a loopback address.",
	    "{s:s}", "url", "http://[::ffff:127.0.0.1]/");
	ck_fail(BLOCKED "host '127.0.0.1' is a loopback address.", "{s:s}",
	    "url", "http://2130706433/");
	snprintf(want, sizeof(want), "http://localhost:%d/r", port);
	{
		struct buf	 out = BUF_INIT;
		struct wresult	 res;

		json_object_set_new(F.nf_node, "url", json_string(want));
		ck_assert_int_eq(run(&out, &res), -1);
		ck_failed(&res, localhost_refusal(want, sizeof(want)));
		buf_free(&out);
	}
	/* onError applies to a guard violation */
	ck_out(BLOCKED "host '10.0.0.1' is a private address.", "{s:s, s:s}",
	    "url", "http://10.0.0.1/", "onError", "return");
	ck_assert_int_eq(mock_count(), 0);
}
END_TEST

/* A public address passes (reached here through a proxy that is the
 * mock, so nothing leaves the machine). */
START_TEST(guard_public)
{
	char	 px[64];
	json_t	*r;

	ck_out("pub", "{s:s, s:b, s:s}", "url", "http://93.184.216.34/r?body="
	    "pub", "blockPrivateAddresses", 1, "proxy", mock_proxy(px));
	r = mock_req(-1);
	ck_assert_str_eq(json_string_value(json_object_get(r, "uri")),
	    "http://93.184.216.34/r?body=pub");
	json_decref(r);
}
END_TEST

/* allowedHosts: case and port do not matter; another host is refused
 * without DNS; a redirect to a host not on the list is refused. */
START_TEST(guard_allowlist)
{
	char	 loc[128], px[64];

	ck_out("ok", "{s:s, s:[s]}", "url", url("/r?body=ok"), "allowedHosts",
	    " 127.0.0.1 ");
	/* a name, reached through the mock as a proxy (no DNS needed) */
	ck_out("named", "{s:s, s:[s], s:s}", "url",
	    "http://Docs.Example.COM:8080/r?body=named", "allowedHosts",
	    "DOCS.example.com", "proxy", mock_proxy(px));
	ck_fail(BLOCKED "host '127.0.0.1' is not in the configured "
	    "allowedHosts list.", "{s:s, s:[s]}", "url", url("/r"),
	    "allowedHosts", "example.com");
	ck_assert_int_eq(mock_count(), 2);
	snprintf(loc, sizeof(loc), "http://localhost:%d/echo", port);
	ck_fail(BLOCKED "host 'localhost' is not in the configured "
	    "allowedHosts list.", "{s:s, s:[s]}", "url", url("/r?status=302"
	    "&loc=%s", loc), "allowedHosts", "127.0.0.1");
	ck_assert_int_eq(mock_count(), 3);
}
END_TEST

/* Under the guard: a cross-host redirect drops Authorization, Cookie
 * and Proxy-Authorization (seen at the mock); 303 makes a POST a GET
 * without body and type; 307 keeps them; at most 10 redirects. */
START_TEST(guard_redirects)
{
	char	 loc[128];
	json_t	*r;

	snprintf(loc, sizeof(loc), "http://127.0.0.2:%d/echo", port);
	json_object_set_new(F.nf_node, "allowedHosts", json_pack("[s, s]",
	    "127.0.0.1", "127.0.0.2"));
	json_object_set_new(F.nf_node, "headers", json_pack("{s:s, s:s, s:s, "
	    "s:s, s:s}", "authorization", "Bearer t", "COOKIE", "c=1",
	    "Proxy-Authorization", "Basic p", "X-Keep", "k", "Content-Type",
	    "text/plain"));
	free(go("{s:s, s:s, s:s}", "url", url("/r?status=307&loc=%s", loc),
	    "method", "POST", "body", "data"));
	r = mock_req(0);
	ck_assert_str_eq(req_header(r, "Authorization"), "Bearer t");
	ck_assert_str_eq(req_header(r, "Cookie"), "c=1");
	ck_assert_str_eq(req_header(r, "Proxy-Authorization"), "Basic p");
	json_decref(r);
	r = mock_req(1);
	ck_assert_int_eq(strncmp(json_string_value(json_object_get(r,
	    "host")), loc + 7, strlen(loc + 7) - 5), 0);
	ck_assert_ptr_null(req_header(r, "Authorization"));
	ck_assert_ptr_null(req_header(r, "Cookie"));
	ck_assert_ptr_null(req_header(r, "Proxy-Authorization"));
	ck_assert_str_eq(req_header(r, "X-Keep"), "k");
	ck_req(r, "POST", "data");
	ck_assert_str_eq(req_header(r, "Content-Type"), "text/plain");
	json_decref(r);
	/* same host, 303: credentials stay, the POST becomes a GET */
	json_decref(mock_get("/_reset"));
	free(go("{s:s}", "url", url("/r?status=303&loc=/echo")));
	r = mock_req(1);
	ck_req(r, "GET", "");
	ck_assert_ptr_null(req_header(r, "Content-Type"));
	ck_assert_str_eq(req_header(r, "Authorization"), "Bearer t");
	ck_assert_str_eq(req_header(r, "Cookie"), "c=1");
	json_decref(r);
	/* 10 redirects are followed (relative Locations), 11 are not */
	json_object_set_new(F.nf_node, "method", json_string("GET"));
	json_object_del(F.nf_node, "body");
	json_decref(mock_get("/_reset"));
	ck_out("end of chain", "{s:s}", "url", url("/chain/10"));
	ck_assert_int_eq(mock_count(), 11);
	json_decref(mock_get("/_reset"));
	ck_fail("WebFetch exceeded the maximum of 10 redirects.", "{s:s}",
	    "url", url("/chain/11"));
	ck_assert_int_eq(mock_count(), 11);
	ck_out("{\"error\": \"WebFetch exceeded the maximum of 10 redirects.\", "
	    "\"status_code\": null, \"headers\": null, \"body\": null}",
	    "{s:s, s:s}", "onError", "return", "outputFormat", "full");
}
END_TEST

/* The loop itself with blockPrivateAddresses: the test's check lets
 * the mock's own URLs through (they are loopback, which the real check
 * refuses) and judges every other URL with the real netguard_check. */
static int
check_but_mock(const struct netguard *g, const char *u, struct buf *why)
{
	char	 own[64];

	snprintf(own, sizeof(own), "http://127.0.0.1:%d/", port);
	if (strncmp(u, own, strlen(own)) == 0)
		return 0;
	return netguard_check(g, u, why);
}

static int
connect_but_mock(const struct netguard *g, const char *host,
    const struct sockaddr *sa, struct buf *why)
{
	const struct sockaddr_in	*in = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET && ntohs(in->sin_port) == port &&
	    ntohl(in->sin_addr.s_addr) == INADDR_LOOPBACK)
		return 0;
	return netguard_connect(g, host, sa, why);
}

static enum webfetch_result
fetch(const char *u, int (*check)(const struct netguard *, const char *,
    struct buf *), struct webfetch_resp *resp, struct buf *err)
{
	static const struct netguard	 g = { true, NULL };
	struct webfetch_req		 q;

	memset(&q, 0, sizeof(q));
	q.wq_url = u;
	q.wq_method = "GET";
	q.wq_timeout_ms = 5000;
	q.wq_verify = true;
	q.wq_redirects = true;
	q.wq_cap = 1000;
	q.wq_guard = &g;
	q.wq_check = check;
	q.wq_connect = check == check_but_mock ? connect_but_mock : NULL;
	memset(resp, 0, sizeof(*resp));
	buf_reset(err);
	return webfetch_run(&q, NULL, resp, err);
}

START_TEST(guard_loop_private)
{
	struct webfetch_resp	 r;
	struct buf		 err = BUF_INIT;

	ck_assert_int_eq(fetch(url("/r?body=mine"), check_but_mock, &r, &err),
	    WEBFETCH_OK);
	ck_assert_str_eq(r.wr_body.b_data, "mine");
	webfetch_resp_free(&r);
	ck_assert_int_eq(fetch(url("/r?status=302&loc=http://169.254.169.254"
	    "/latest/meta-data/"), check_but_mock, &r, &err), WEBFETCH_FAILED);
	ck_assert_str_eq(err.b_data, BLOCKED "host '169.254.169.254' is a "
	    "link-local address.");
	ck_assert_int_eq(fetch(url("/r?status=301&loc=http://10.0.0.1:8080/"),
	    check_but_mock, &r, &err), WEBFETCH_FAILED);
	ck_assert_str_eq(err.b_data, BLOCKED "host '10.0.0.1' is a private "
	    "address.");
	ck_assert_int_eq(fetch(url("/r?status=308&loc=http://2130706433/"),
	    check_but_mock, &r, &err), WEBFETCH_FAILED);
	ck_assert_str_eq(err.b_data, BLOCKED "host '127.0.0.1' is a loopback "
	    "address.");
	ck_assert_int_eq(mock_count(), 4);
	buf_free(&err);
}
END_TEST

/* Beyond WilmerAI: the address libcurl connects to is judged too, so
 * a check that was fooled (DNS rebinding; here a check that lets
 * everything pass) still does not reach a loopback address. */
static int
check_nothing(const struct netguard *g, const char *u, struct buf *why)
{
	return 0;
}

START_TEST(guard_connect)
{
	struct webfetch_resp	 r;
	struct buf		 err = BUF_INIT;
	char			 want[128];

	ck_assert_int_eq(fetch(url("/r"), check_nothing, &r, &err),
	    WEBFETCH_FAILED);
	snprintf(want, sizeof(want), BLOCKED "host '127.0.0.1' resolves to a "
	    "loopback address (127.0.0.1).");
	ck_assert_str_eq(err.b_data, want);
	ck_assert_int_eq(mock_count(), 0);
	buf_free(&err);
}
END_TEST

/* ---- cancellation, streaming ---- */

/* The request stops while the body trickles in: the node ends at once
 * and the mock sees the connection go. */
START_TEST(cancel_mid_body)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	uint64_t	 t0 = it_now();
	json_t		*v;
	int		 i;

	json_object_set_new(F.nf_node, "url", json_string(
	    url("/slow?n=1000&ms=50")));
	F.nf_rq.fr_cancel_at = 3;
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_lt(it_now() - t0, 2000);
	for (i = 0; i < 100; i++) {
		v = mock_get("/_stats");
		if (json_integer_value(json_object_get(v, "gone")) == 1)
			break;
		json_decref(v);
		v = NULL;
		it_sleep(20);
	}
	ck_assert_ptr_nonnull(v);
	json_decref(v);
	buf_free(&out);
}
END_TEST

START_TEST(cancel_before)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	json_object_set_new(F.nf_node, "url", json_string(url("/r")));
	F.nf_rq.fr_stopped = true;
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_int_eq(mock_count(), 0);
	buf_free(&out);
}
END_TEST

/* The responder's output goes out word by word, as StaticResponse's. */
START_TEST(word_stream)
{
	ck_assert(node_type_find("WebFetch")->nt_word_stream);
	ck_assert(node_webfetch.nt_word_stream);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "get_default", get_default },
		{ "post_substitution", post_substitution },
		{ "methods_and_bodies", methods_and_bodies },
		{ "invalid_header", invalid_header },
		{ "proxy", proxy },
		{ "format_json", format_json },
		{ "format_json_invalid", format_json_invalid },
		{ "format_full", format_full },
		{ "decoding", decoding },
		{ "format_html_stripped", format_html_stripped },
		{ "http_errors", http_errors },
		{ "connect_error", connect_error },
		{ "bad_urls", bad_urls },
		{ "read_timeout", read_timeout },
		{ "validation", validation },
		{ "cap", cap },
		{ "redirects_plain", redirects_plain },
		{ "guard_private", guard_private },
		{ "guard_public", guard_public },
		{ "guard_allowlist", guard_allowlist },
		{ "guard_redirects", guard_redirects },
		{ "guard_loop_private", guard_loop_private },
		{ "guard_connect", guard_connect },
		{ "cancel_mid_body", cancel_mid_body },
		{ "cancel_before", cancel_before },
		{ "word_stream", word_stream },
	};

	return it_main(it_suite_fixture("webfetch", cases,
	    sizeof(cases) / sizeof(cases[0]), 20, setup, teardown));
}
