/* check_transport.c - the libcurl transport against mock-llm: bodies, error bodies, Retry-After, connect failures, timeouts, cancellation. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../../worker/llm/transport.h"
#include "../it/harness.h"
#include "../testmain.h"

/* The mock, started for every test (each runs in its own process). */
static struct it	 T;

static void
setup(void)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	ck_assert_int_eq(transport_init(), 0);
}

static void
teardown(void)
{
	transport_cleanup();
	it_stop(&T, 2000);
}

/* What a call saw, and how its hooks answer. */
struct seen {
	struct buf	 s_data;	/* on_data's bytes */
	int		 s_pieces;	/* on_data calls */
	int		 s_abort_at;	/* on_data returns -1 on this call
					   (0: never) */
	int		 s_cancel_after;	/* on_wake cancels once this
						   many pieces came (0:
						   never) */
	int		 s_wakes;
	int		 s_readable;	/* wakes with readable set */
	bool		 s_cancel_readable;	/* cancel on a readable
						   wake_fd */
	int		 s_fd;		/* drained on a readable wake */
	int		 s_poke_fd;	/* written to on a tick once the
					   mock is answering (-1: never) */
};

static int
on_data(void *arg, const char *p, size_t n)
{
	struct seen	*s = arg;

	buf_add(&s->s_data, p, n);
	s->s_pieces++;
	return s->s_abort_at > 0 && s->s_pieces >= s->s_abort_at ? -1 : 0;
}

static int
on_wake(void *arg, bool readable)
{
	struct seen	*s = arg;
	char		 c;

	s->s_wakes++;
	if (readable) {
		s->s_readable++;
		ck_assert_int_eq(read(s->s_fd, &c, 1), 1);
		if (s->s_cancel_readable)
			return 1;
	} else if (s->s_poke_fd >= 0 && it_mock_stat(&T, "active") > 0) {
		ck_assert_int_eq(write(s->s_poke_fd, "x", 1), 1);
		s->s_poke_fd = -1;
	}
	return s->s_cancel_after > 0 && s->s_pieces >= s->s_cancel_after;
}

/* A chat request body for the mock with script in its user message.
 * Caller frees. */
static char *
chat_body(bool stream, const char *script)
{
	json_t	*j = json_pack("{s:b, s:[{s:s, s:s}]}", "stream", stream,
		    "messages", "role", "user", "content", script);
	char	*s;

	ck_assert_ptr_nonnull(j);
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}

/* POST body (GET when NULL) to path of url base (NULL: the mock), with
 * the hooks (NULL: none) and extra headers (NULL: none). Returns what
 * transport_perform returned; res->err_body is the caller's. */
static int
perform_at(const char *base, const char *path, const char *body,
    const char *const *hdrs, struct seen *s, const struct transport_hooks *h,
    long connect_ms, long total_ms, struct transport_result *res)
{
	char			 url[256];
	struct transport_call	 c;

	if (base != NULL)
		snprintf(url, sizeof(url), "%s%s", base, path);
	else
		snprintf(url, sizeof(url), "http://127.0.0.1:%d%s",
		    T.it_mock_port, path);
	memset(&c, 0, sizeof(c));
	c.url = url;
	c.headers = hdrs;
	c.body = body;
	c.body_len = body != NULL ? strlen(body) : 0;
	c.connect_timeout_ms = connect_ms;
	c.total_timeout_ms = total_ms;
	c.on_data = on_data;
	c.arg = s;
	memset(res, 0, sizeof(*res));
	buf_init(&res->err_body);
	return transport_perform(&c, h, res);
}

/* The same to the mock's chat route with script, streamed or not. */
static int
perform_chat(bool stream, const char *script, struct seen *s,
    const struct transport_hooks *h, long total_ms,
    struct transport_result *res)
{
	char	*body = chat_body(stream, script);
	int	 r;

	r = perform_at(NULL, "/v1/chat/completions", body, NULL, s, h, 2000,
	    total_ms, res);
	free(body);
	return r;
}

static void
seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	buf_init(&s->s_data);
	s->s_fd = s->s_poke_fd = -1;
}

/* ---- answers ---- */

/* A streamed 2xx answer reaches on_data as it comes, all of it; the
 * request carries the caller's headers, a JSON Content-Type and no
 * Expect. */
START_TEST(stream_reaches_on_data)
{
	const char *const	 hdrs[] = { "X-Test: one", NULL };
	char			*body = chat_body(true, "#mock {\"text\": "
				    "\"a b c d\", \"delay_ms\": 5}");
	struct seen		 s;
	struct transport_result	 res;
	json_t			*log, *h;

	seen_init(&s);
	ck_assert_int_eq(perform_at(NULL, "/v1/chat/completions", body, hdrs,
	    &s, NULL, 2000, 0, &res), 0);
	ck_assert_int_eq(res.outcome, XFER_OK);
	ck_assert_int_eq(res.status, 200);
	ck_assert_str_eq(res.error, "");
	ck_assert_uint_eq(res.err_body.b_len, 0);
	buf_addc(&s.s_data, '\0');
	ck_assert_msg(strstr(s.s_data.b_data, "\" d\"") != NULL &&
	    strstr(s.s_data.b_data, "data: [DONE]") != NULL, "%s",
	    s.s_data.b_data);
	ck_assert_int_gt(s.s_pieces, 1);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 1);
	h = json_object_get(json_array_get(log, 0), "headers");
	ck_assert_str_eq(json_string_value(json_object_get(h, "X-Test")),
	    "one");
	ck_assert_str_eq(json_string_value(json_object_get(h, "Content-Type")),
	    "application/json");
	ck_assert_ptr_null(json_object_get(h, "Expect"));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(log,
	    0), "method")), "POST");
	json_decref(log);
	buf_free(&s.s_data);
	buf_free(&res.err_body);
	free(body);
}
END_TEST

/* Without a body the call is a GET. */
START_TEST(get_without_body)
{
	struct seen		 s;
	struct transport_result	 res;
	json_t			*log;

	seen_init(&s);
	ck_assert_int_eq(perform_at(NULL, "/v1/models", NULL, NULL, &s, NULL,
	    2000, 0, &res), 0);
	ck_assert_int_eq(res.status, 200);
	buf_addc(&s.s_data, '\0');
	ck_assert_ptr_nonnull(strstr(s.s_data.b_data, "\"id\":\"mock\""));
	log = it_mock_log(&T, false);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(log,
	    0), "method")), "GET");
	json_decref(log);
	buf_free(&s.s_data);
	buf_free(&res.err_body);
}
END_TEST

/* A non-2xx answer is a finished transfer: its status, its body in
 * err_body, nothing through on_data. */
START_TEST(error_body_kept_apart)
{
	struct seen		 s;
	struct transport_result	 res;

	seen_init(&s);
	ck_assert_int_eq(perform_chat(true, "#mock {\"status\": 500, "
	    "\"error\": \"boom\"}", &s, NULL, 0, &res), 0);
	ck_assert_int_eq(res.outcome, XFER_OK);
	ck_assert_int_eq(res.status, 500);
	ck_assert_int_eq(s.s_pieces, 0);
	buf_addc(&res.err_body, '\0');
	ck_assert_str_eq(res.err_body.b_data,
	    "{\"error\":{\"message\":\"boom\",\"type\":\"server_error\","
	    "\"code\":500}}");
	ck_assert_str_eq(res.retry_after, "");
	buf_free(&res.err_body);
}
END_TEST

/* A huge error page is cut at 64 KiB: the status and the start are
 * kept, the rest is not read. */
START_TEST(error_body_capped)
{
	struct seen		 s;
	struct transport_result	 res;
	struct buf		 script = BUF_INIT;
	size_t			 i;

	seen_init(&s);
	buf_adds(&script, "#mock {\"status\": 502, \"error\": \"");
	for (i = 0; i < 100 * 1024; i++)
		buf_addc(&script, 'x');
	buf_adds(&script, "\"}");
	ck_assert_int_eq(perform_chat(false, script.b_data, &s, NULL, 0, &res),
	    0);
	ck_assert_int_eq(res.outcome, XFER_OK);
	ck_assert_int_eq(res.status, 502);
	ck_assert_uint_eq(res.err_body.b_len, 64 * 1024);
	ck_assert_msg(strstr(res.error, "cut") != NULL, "%s", res.error);
	buf_free(&res.err_body);
	buf_free(&script);
}
END_TEST

/* Retry-After as the backend sent it, blanks trimmed; "" when absent
 * or too long to keep. */
START_TEST(retry_after_header)
{
	struct seen		 s;
	struct transport_result	 res;
	struct buf		 script = BUF_INIT;
	size_t			 i;

	seen_init(&s);
	perform_chat(false, "#mock {\"status\": 429, \"retry_after\": \"7\"}",
	    &s, NULL, 0, &res);
	ck_assert_int_eq(res.status, 429);
	ck_assert_str_eq(res.retry_after, "7");
	buf_free(&res.err_body);
	perform_chat(false, "#mock {\"status\": 503, \"retry_after\": "
	    "\"Wed, 21 Oct 2037 07:28:00 GMT \\t\"}", &s, NULL, 0, &res);
	ck_assert_int_eq(res.status, 503);
	ck_assert_str_eq(res.retry_after, "Wed, 21 Oct 2037 07:28:00 GMT");
	buf_free(&res.err_body);
	perform_chat(false, "#mock {\"status\": 429}", &s, NULL, 0, &res);
	ck_assert_str_eq(res.retry_after, "");
	buf_free(&res.err_body);
	buf_adds(&script, "#mock {\"status\": 429, \"retry_after\": \"");
	for (i = 0; i < 64; i++)
		buf_addc(&script, '9');
	buf_adds(&script, "\"}");
	perform_chat(false, script.b_data, &s, NULL, 0, &res);
	ck_assert_int_eq(res.status, 429);
	ck_assert_str_eq(res.retry_after, "");
	buf_free(&res.err_body);
	buf_free(&script);
}
END_TEST

/* ---- failures before an answer ---- */

START_TEST(connect_refused)
{
	struct seen		 s;
	struct transport_result	 res;
	char			 base[64];

	seen_init(&s);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", it_dead_port());
	ck_assert_int_eq(perform_at(base, "/v1/models", NULL, NULL, &s, NULL,
	    2000, 0, &res), -1);
	ck_assert_int_eq(res.outcome, XFER_CONNECT);
	ck_assert_int_eq(res.status, 0);
	ck_assert_msg(strncmp(res.error, "connection refused", 18) == 0, "%s",
	    res.error);
	buf_free(&res.err_body);
}
END_TEST

/* A backend that does not take the connection: connect times out. */
START_TEST(connect_timeout)
{
	struct it_stuck		 st;
	struct seen		 s;
	struct transport_result	 res;
	char			 base[64];

	seen_init(&s);
	it_stuck_open(&st);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", st.s_port);
	ck_assert_int_eq(perform_at(base, "/v1/models", NULL, NULL, &s, NULL,
	    300, 0, &res), -1);
	ck_assert_int_eq(res.outcome, XFER_TIMEOUT);
	ck_assert_int_eq(res.status, 0);
	ck_assert_msg(strcasestr(res.error, "timeout") != NULL, "%s",
	    res.error);
	it_stuck_close(&st);
	buf_free(&res.err_body);
}
END_TEST

/* The total timeout ends a backend that never answers, and the backend
 * sees the connection close. */
START_TEST(total_timeout)
{
	struct seen		 s;
	struct transport_result	 res;

	seen_init(&s);
	ck_assert_int_eq(perform_chat(false, "#mock {\"hang\": true}", &s, NULL,
	    300, &res), -1);
	ck_assert_int_eq(res.outcome, XFER_TIMEOUT);
	ck_assert_msg(it_mock_wait(&T, "client_gone", 1, 5000),
	    "the backend did not see the client leave");
	buf_free(&res.err_body);
}
END_TEST

/* A header with a line break is refused before anything is sent. */
START_TEST(header_line_break)
{
	const char *const	 hdrs[] = { "X-A: b\r\nX-Evil: c", NULL };
	struct seen		 s;
	struct transport_result	 res;

	seen_init(&s);
	ck_assert_int_eq(perform_at(NULL, "/v1/models", NULL, hdrs, &s, NULL,
	    2000, 0, &res), -1);
	ck_assert_msg(strstr(res.error, "line break") != NULL, "%s",
	    res.error);
	ck_assert_int_eq(it_mock_stat(&T, "requests"), 0);
	buf_free(&res.err_body);
}
END_TEST

START_TEST(needs_init)
{
	struct seen		 s;
	struct transport_result	 res;

	seen_init(&s);
	transport_cleanup();
	ck_assert_int_eq(perform_at(NULL, "/v1/models", NULL, NULL, &s, NULL,
	    2000, 0, &res), -1);
	ck_assert_msg(strstr(res.error, "transport_init") != NULL, "%s",
	    res.error);
	ck_assert_int_eq(it_mock_stat(&T, "requests"), 0);
	buf_free(&res.err_body);
}
END_TEST

/* ---- leaving early ---- */

/* on_wake cancels mid-stream: XFER_CANCELLED at once, and the backend
 * sees its client leave (the connection is closed, not pooled). */
START_TEST(cancel_mid_stream)
{
	struct transport_hooks	 h = { -1, 20, on_wake, NULL };
	struct seen		 s;
	struct transport_result	 res;

	seen_init(&s);
	h.arg = &s;
	s.s_cancel_after = 3;
	ck_assert_int_eq(perform_chat(true, "#mock {\"forever\": true, "
	    "\"delay_ms\": 10}", &s, &h, 0, &res), -1);
	ck_assert_int_eq(res.outcome, XFER_CANCELLED);
	ck_assert_str_eq(res.error, "cancelled");
	ck_assert_int_ge(s.s_pieces, 3);
	ck_assert_msg(it_mock_wait(&T, "client_gone", 1, 5000),
	    "the backend did not see the client leave");
	ck_assert_int_eq(it_mock_stat(&T, "active"), 0);
	buf_free(&s.s_data);
	buf_free(&res.err_body);
}
END_TEST

/* wake_fd turning readable while the backend is silent calls on_wake
 * at once (readable); its answer 1 cancels the call, and the backend
 * sees its client leave. */
START_TEST(wake_fd_cancels)
{
	struct transport_hooks	 h = { -1, 20, on_wake, NULL };
	struct seen		 s;
	struct transport_result	 res;
	int			 p[2];

	seen_init(&s);
	ck_assert_int_eq(pipe(p), 0);
	h.wake_fd = s.s_fd = p[0];
	s.s_poke_fd = p[1];
	h.arg = &s;
	s.s_cancel_readable = true;
	ck_assert_int_eq(perform_chat(false, "#mock {\"hang\": true}", &s, &h,
	    0, &res), -1);
	ck_assert_int_eq(res.outcome, XFER_CANCELLED);
	ck_assert_int_eq(s.s_readable, 1);
	ck_assert_msg(it_mock_wait(&T, "client_gone", 1, 5000),
	    "the backend did not see the client leave");
	close(p[0]);
	close(p[1]);
	buf_free(&res.err_body);
}
END_TEST

/* Without anything to read, on_wake still runs every tick (readable
 * false) while the backend keeps the caller waiting; answering 0 lets
 * the call finish. */
START_TEST(wake_ticks)
{
	struct transport_hooks	 h = { -1, 20, on_wake, NULL };
	struct seen		 s;
	struct transport_result	 res;
	int			 p[2];

	seen_init(&s);
	ck_assert_int_eq(pipe(p), 0);
	h.wake_fd = s.s_fd = p[0];
	h.arg = &s;
	ck_assert_int_eq(perform_chat(false, "#mock {\"head_delay_ms\": 300}",
	    &s, &h, 0, &res), 0);
	ck_assert_int_eq(res.status, 200);
	ck_assert_int_ge(s.s_wakes, 2);
	ck_assert_int_eq(s.s_readable, 0);
	close(p[0]);
	close(p[1]);
	buf_free(&s.s_data);
	buf_free(&res.err_body);
}
END_TEST

/* on_data refusing a piece aborts the call and closes the connection. */
START_TEST(abort_from_on_data)
{
	struct seen		 s;
	struct transport_result	 res;

	seen_init(&s);
	s.s_abort_at = 2;
	ck_assert_int_eq(perform_chat(true, "#mock {\"forever\": true, "
	    "\"delay_ms\": 10}", &s, NULL, 0, &res), -1);
	ck_assert_int_eq(res.outcome, XFER_ABORTED);
	ck_assert_int_eq(res.status, 200);
	ck_assert_int_eq(s.s_pieces, 2);
	ck_assert_msg(it_mock_wait(&T, "client_gone", 1, 5000),
	    "the backend did not see the client leave");
	buf_free(&s.s_data);
	buf_free(&res.err_body);
}
END_TEST

/* A backend that cuts the stream: a network failure, what came is
 * kept. */
START_TEST(cut_mid_stream)
{
	struct seen		 s;
	struct transport_result	 res;

	seen_init(&s);
	ck_assert_int_eq(perform_chat(true, "#mock {\"text\": \"a b c d\", "
	    "\"disconnect_after\": 2}", &s, NULL, 0, &res), -1);
	ck_assert_int_eq(res.outcome, XFER_NETWORK);
	ck_assert_int_eq(res.status, 200);
	ck_assert_int_ge(s.s_pieces, 1);
	ck_assert_str_ne(res.error, "");
	buf_free(&s.s_data);
	buf_free(&res.err_body);
}
END_TEST

/* ---- a transfer in the background ---- */

static bool
three_pieces(void *arg)
{
	const struct seen	*s = arg;

	return s->s_pieces >= 3;
}

/* A stream left running beside a call goes on after the call; while
 * transport_bg_wait drives it, the wait ends when its
 * function says so, at its deadline, or when the stream ends; stopping
 * it closes the connection. The kept headers and a DELETE ride along. */
START_TEST(background_stream)
{
	struct transport_hdr	 keep[] = { { "Content-Type", "" },
				    { NULL, "" } };
	struct transport_call	 c;
	struct transport_result	 bres, res;
	struct transport_bg	*bg;
	struct seen		 bs, s;
	char			 url[128], *body;

	seen_init(&bs);
	seen_init(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions",
	    T.it_mock_port);
	body = chat_body(true, "#mock {\"forever\": true, \"delay_ms\": 10}");
	memset(&c, 0, sizeof(c));
	c = (struct transport_call){ .url = url, .body = body,
	    .body_len = strlen(body), .connect_timeout_ms = 2000,
	    .on_data = on_data, .arg = &bs, .keep = keep };
	memset(&bres, 0, sizeof(bres));
	buf_init(&bres.err_body);
	ck_assert_ptr_nonnull(bg = transport_bg_start(&c, &bres));
	ck_assert_int_eq(transport_bg_wait(bg, NULL, clock_mono_ms() + 5000,
	    three_pieces, &bs), 1);
	ck_assert_int_eq(bres.status, 200);
	ck_assert_str_eq(keep[0].th_value, "text/event-stream");
	ck_assert_int_eq(perform_chat(false, "#mock {\"text\": \"x\"}", &s,
	    NULL, 0, &res), 0);
	ck_assert_int_eq(res.status, 200);
	bs.s_pieces = 0;	/* three more */
	ck_assert_int_eq(transport_bg_wait(bg, NULL, clock_mono_ms() + 5000,
	    three_pieces, &bs), 1);
	ck_assert_int_eq(transport_bg_wait(bg, NULL, clock_mono_ms() + 100,
	    NULL, NULL), -1);
	ck_assert_int_eq(bres.outcome, XFER_TIMEOUT);
	transport_bg_stop(bg);
	ck_assert_msg(it_mock_wait(&T, "client_gone", 1, 5000),
	    "the backend did not see the stream's client leave");
	buf_free(&res.err_body);
	free(body);
	/* one that ends by itself */
	body = chat_body(true, "#mock {\"text\": \"a b c\"}");
	c.body = body;
	c.body_len = strlen(body);
	ck_assert_ptr_nonnull(bg = transport_bg_start(&c, &bres));
	ck_assert_int_eq(transport_bg_wait(bg, NULL, clock_mono_ms() + 5000,
	    NULL, NULL), 0);
	ck_assert_int_eq(bres.outcome, XFER_OK);
	ck_assert_int_eq(bres.status, 200);
	transport_bg_stop(bg);
	/* a DELETE */
	memset(&c, 0, sizeof(c));
	c.url = url;
	c.method = "DELETE";
	ck_assert_int_eq(transport_perform(&c, NULL, &res), 0);
	ck_assert_int_eq(res.status, 405);
	free(body);
	buf_free(&bs.s_data);
	buf_free(&s.s_data);
	buf_free(&bres.err_body);
	buf_free(&res.err_body);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "stream_reaches_on_data", stream_reaches_on_data },
		{ "get_without_body", get_without_body },
		{ "error_body_kept_apart", error_body_kept_apart },
		{ "error_body_capped", error_body_capped },
		{ "retry_after_header", retry_after_header },
		{ "connect_refused", connect_refused },
		{ "connect_timeout", connect_timeout },
		{ "total_timeout", total_timeout },
		{ "header_line_break", header_line_break },
		{ "needs_init", needs_init },
		{ "cancel_mid_stream", cancel_mid_stream },
		{ "wake_fd_cancels", wake_fd_cancels },
		{ "wake_ticks", wake_ticks },
		{ "abort_from_on_data", abort_from_on_data },
		{ "cut_mid_stream", cut_mid_stream },
		{ "background_stream", background_stream },
	};

	return it_main(it_suite_fixture("transport", cases,
	    sizeof(cases) / sizeof(cases[0]), 15, setup, teardown));
}
