/* check_sse.c - tests for the incremental SSE parser (worker/sse.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../worker/llm/sse.h"
#include "../testmain.h"

/* Every event as "<event>=<data>;" (data may hold "\n" and NUL). */
struct rec {
	struct buf	 r_log;
	size_t		 r_n;
	size_t		 r_stop_at;	/* callback returns -1 at this event */
	int		 r_bad;		/* a callback saw a bad argument */
};

static int
rec_cb(void *arg, const char *ev, size_t evn, const char *data, size_t n)
{
	struct rec	*r = arg;

	/* No ck_assert here: each one is a write(2) in fork mode. */
	if (strlen(ev) != evn || data[n] != '\0')
		r->r_bad = 1;
	buf_add(&r->r_log, ev, evn);
	buf_addc(&r->r_log, '=');
	buf_add(&r->r_log, data, n);
	buf_addc(&r->r_log, ';');
	r->r_n++;
	return r->r_n == r->r_stop_at ? -1 : 0;
}

static void
rec_free(struct rec *r)
{
	ck_assert_int_eq(r->r_bad, 0);
	buf_free(&r->r_log);
}

/* Feed in at most three pieces cut at a <= b; the log goes to *log and
 * sse_finish's answer is returned. Every sse_feed must succeed. */
static int
run3(const char *in, size_t n, size_t a, size_t b, struct buf *log)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;
	int		 fin;

	s = sse_new(1024, rec_cb, &r);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(sse_feed(s, in, a), 0);
	ck_assert_int_eq(sse_feed(s, in + a, b - a), 0);
	ck_assert_int_eq(sse_feed(s, in + b, n - b), 0);
	fin = sse_finish(s);
	sse_free(s);
	ck_assert_int_eq(r.r_bad, 0);
	*log = r.r_log;
	return fin;
}

static int
run_bytes(const char *in, size_t n, struct buf *log)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;
	size_t		 i;
	int		 fin;

	s = sse_new(1024, rec_cb, &r);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(sse_feed(s, in + i, 1), 0);
	fin = sse_finish(s);
	sse_free(s);
	ck_assert_int_eq(r.r_bad, 0);
	*log = r.r_log;
	return fin;
}

static void
expect_log(struct buf *got, const char *want, size_t wantn, const char *how,
    size_t a, size_t b)
{
	ck_assert_msg(got->b_len == wantn &&
	    (wantn == 0 || memcmp(got->b_data, want, wantn) == 0),
	    "%s %zu/%zu: got \"%s\" want \"%s\"", how, a, b,
	    got->b_data != NULL ? got->b_data : "", want);
	buf_free(got);
}

/* The input split at every pair of positions (so also at every single
 * position, and whole) and fed byte by byte gives the expected log. */
static void
expect_any_split(const char *in, size_t n, const char *want, size_t wantn,
    int want_fin)
{
	struct buf	 got;
	size_t		 a, b;

	for (a = 0; a <= n; a++) {
		for (b = a; b <= n; b++) {
			ck_assert_int_eq(run3(in, n, a, b, &got), want_fin);
			expect_log(&got, want, wantn, "split", a, b);
		}
	}
	ck_assert_int_eq(run_bytes(in, n, &got), want_fin);
	expect_log(&got, want, wantn, "bytewise", 0, 0);
}

#define EXPECT(in, want, fin)						\
	expect_any_split((in), sizeof(in) - 1, (want), sizeof(want) - 1, (fin))

START_TEST(test_lf)
{
	EXPECT("data: a\n\ndata: b\n\n", "=a;=b;", 0);
}
END_TEST

START_TEST(test_crlf)
{
	EXPECT("data: a\r\n\r\ndata: b\r\n\r\n", "=a;=b;", 0);
}
END_TEST

START_TEST(test_cr)
{
	EXPECT("data: a\r\rdata: b\r\r", "=a;=b;", 0);
}
END_TEST

START_TEST(test_mixed)
{
	EXPECT("data: a\r\ndata: b\ndata: c\r\r\ndata: d\n\r\n"
	    "data: e\n\rdata: f\r\n\n",
	    "=a\nb\nc;=d;=e;=f;", 0);
	/* "\n\r" is two line ends, "\r\n" one. */
	EXPECT("data: x\n\r", "=x;", 0);
	EXPECT("data: x\r\n", "", 1);
}
END_TEST

START_TEST(test_cr_at_boundary)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;

	s = sse_new(64, rec_cb, &r);
	ck_assert_int_eq(sse_feed(s, "data: a\r", 8), 0);
	ck_assert_int_eq(sse_feed(s, "\ndata: b\r", 9), 0);
	ck_assert_uint_eq(r.r_n, 0);
	ck_assert_int_eq(sse_feed(s, "\n", 1), 0);
	ck_assert_uint_eq(r.r_n, 0);
	/* A CR ends the blank line at once: no need to wait for more. */
	ck_assert_int_eq(sse_feed(s, "\r", 1), 0);
	ck_assert_uint_eq(r.r_n, 1);
	ck_assert_str_eq(r.r_log.b_data, "=a\nb;");
	ck_assert_int_eq(sse_feed(s, "\n", 1), 0);
	ck_assert_uint_eq(r.r_n, 1);
	ck_assert_int_eq(sse_finish(s), 0);
	sse_free(s);
	rec_free(&r);
}
END_TEST

START_TEST(test_multiline)
{
	EXPECT("data: one\ndata: two\ndata:three\n\n", "=one\ntwo\nthree;", 0);
	EXPECT("data: a\ndata\ndata:\ndata: \n\n", "=a\n\n\n;", 0);
	EXPECT("data\n\n", "=;", 0);
	EXPECT("data:  two spaces\n\n", "= two spaces;", 0);
	EXPECT("data:a:b: c\n\n", "=a:b: c;", 0);
}
END_TEST

START_TEST(test_fields)
{
	EXPECT("event: delta\ndata: x\n\ndata: y\n\n", "delta=x;=y;", 0);
	EXPECT("event: lost\n\ndata: y\n\n", "=y;", 0);
	EXPECT("event:a\nevent: b\ndata: z\n\n", "b=z;", 0);
	EXPECT("id: 7\nretry: 10\nfoo: bar\nData: no\ndata: d\n\n", "=d;", 0);
	EXPECT("id: 7\n\nretry: 5\n\n", "", 0);
	EXPECT("data: a\0b\n\n", "=a\0b;", 0);
}
END_TEST

START_TEST(test_comments)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;
	const char	*in = ": ping\n:\ndata: a\n: mid\r\ndata: b\n\n:x\r";

	EXPECT(": ping\n:\ndata: a\n: mid\r\ndata: b\n\n", "=a\nb;", 0);
	s = sse_new(64, rec_cb, &r);
	ck_assert_int_eq(sse_feed(s, in, strlen(in)), 0);
	ck_assert_uint_eq(sse_comments(s), 4);
	ck_assert_str_eq(r.r_log.b_data, "=a\nb;");
	ck_assert_int_eq(sse_finish(s), 0);
	sse_free(s);
	rec_free(&r);
}
END_TEST

START_TEST(test_bom)
{
	EXPECT("\xef\xbb\xbf" "data: a\n\n", "=a;", 0);
	/* Only one BOM, and only at the very start. */
	EXPECT("\xef\xbb\xbf\xef\xbb\xbf" "data: a\n\ndata: b\n\n", "=b;", 0);
	EXPECT("data: a\n\n\xef\xbb\xbf" "data: b\n\n", "=a;", 0);
	/* A cut BOM is not a BOM: it joins the field name. */
	EXPECT("\xef\xbb" "data: a\n\ndata: b\n\n", "=b;", 0);
	EXPECT("\xef\xbb\xbf", "", 0);
	EXPECT("\xef\xbb", "", 1);
}
END_TEST

START_TEST(test_unterminated)
{
	EXPECT("data: a\n\ndata: b\n", "=a;", 1);
	EXPECT("data: a\n\ndata: b", "=a;", 1);
	EXPECT("data: a\n\n: keep", "=a;", 1);
	EXPECT("data: a\n\nevent: e\n", "=a;", 0);
	EXPECT("data: a\r\n\r\n", "=a;", 0);
	EXPECT("", "", 0);
}
END_TEST

START_TEST(test_finish_resets)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;

	s = sse_new(64, rec_cb, &r);
	ck_assert_int_eq(sse_feed(s, "event: e\ndata: old", 18), 0);
	ck_assert_int_eq(sse_finish(s), 1);
	ck_assert_int_eq(sse_feed(s, "\xef\xbb\xbf" "data: new\n\n", 14), 0);
	ck_assert_str_eq(r.r_log.b_data, "=new;");
	ck_assert_int_eq(sse_finish(s), 0);
	sse_free(s);
	rec_free(&r);
}
END_TEST

static int
feed_cap(size_t max, const char *in, size_t chunk)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;
	size_t		 i, n = strlen(in), k;
	int		 rc = 0;

	s = sse_new(max, rec_cb, &r);
	for (i = 0; i < n && rc == 0; i += k) {
		k = n - i < chunk ? n - i : chunk;
		rc = sse_feed(s, in + i, k);
	}
	if (rc == -1)	/* sticky */
		ck_assert_int_eq(sse_feed(s, "\n\n", 2), -1);
	sse_free(s);
	rec_free(&r);
	return rc;
}

START_TEST(test_line_too_long)
{
	/* "data: 0123456789" is 16 bytes. */
	ck_assert_int_eq(feed_cap(16, "data: 0123456789\n\n", 100), 0);
	ck_assert_int_eq(feed_cap(16, "data: 0123456789\n\n", 1), 0);
	ck_assert_int_eq(feed_cap(15, "data: 0123456789\n\n", 100), -1);
	ck_assert_int_eq(feed_cap(15, "data: 0123456789\n\n", 1), -1);
	ck_assert_int_eq(feed_cap(15, "data: 0123456789\n\n", 7), -1);
	/* Caught before any line end arrives. */
	ck_assert_int_eq(feed_cap(15, "data: 0123456789", 1), -1);
	ck_assert_int_eq(feed_cap(15, "data: 0123456789", 100), -1);
	/* Data of one event: 5 + 1 + 5 + 1 + 5 = 17 bytes. */
	ck_assert_int_eq(feed_cap(17, "data:aaaaa\ndata:bbbbb\ndata:ccccc\n\n",
	    3), 0);
	ck_assert_int_eq(feed_cap(16, "data:aaaaa\ndata:bbbbb\ndata:ccccc\n\n",
	    3), -1);
	ck_assert_int_eq(feed_cap(16, "data:aaaaa\ndata:bbbbb\n\n"
	    "data:ccccc\n\n", 3), 0);
}
END_TEST

/* The bytes of a cut BOM count toward the cap, however small it is
 * (backend_fuzz found max - held underflowing when they exceed it). */
START_TEST(test_cut_bom_cap)
{
	ck_assert_int_eq(feed_cap(2, "\xef\xbb\x02", 100), -1);
	ck_assert_int_eq(feed_cap(2, "\xef\xbb\x02", 1), -1);
	ck_assert_int_eq(feed_cap(2, "\xef\xbbx\n\n", 100), -1);
	ck_assert_int_eq(feed_cap(1, "\xef\xbb\n\n", 100), -1);
	ck_assert_int_eq(feed_cap(3, "\xef\xbbx\n\n", 1), 0);
}
END_TEST

START_TEST(test_callback_stop)
{
	struct rec	 r = { BUF_INIT, 0, 2, 0 };
	struct sse	*s;
	const char	*in = "data: 1\n\ndata: 2\n\ndata: 3\n\n";

	s = sse_new(64, rec_cb, &r);
	ck_assert_int_eq(sse_feed(s, in, strlen(in)), -1);
	ck_assert_uint_eq(r.r_n, 2);
	ck_assert_str_eq(r.r_log.b_data, "=1;=2;");
	ck_assert_int_eq(sse_feed(s, "data: 4\n\n", 9), -1);
	ck_assert_uint_eq(r.r_n, 2);
	sse_free(s);
	rec_free(&r);
}
END_TEST

static const char openai_stream[] =
    ": OPENROUTER PROCESSING\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"content\":\"lo\\n\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,"
    "\"delta\":{},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}\n\n"
    "data: [DONE]\n\n";

static void
check_openai(const char *log, size_t n)
{
	const char	*p = log, *q;
	size_t		 ev = 0;

	ck_assert_uint_eq(n, 5);
	while ((q = strchr(p, ';')) != NULL && ev < 4) {
		ck_assert(p[0] == '=');
		ck_assert(strncmp(p, "={\"id\":\"chatcmpl-1\"", 19) == 0);
		ck_assert(q[-1] == '}');
		p = q + 1;
		ev++;
	}
	ck_assert_uint_eq(ev, 4);
	ck_assert(strstr(log, "{\"content\":\"Hel\"}") != NULL);
	ck_assert(strstr(log, "{\"content\":\"lo\\n\"}") != NULL);
	ck_assert_str_eq(p, "=[DONE];");
}

START_TEST(test_openai)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;
	size_t		 n = sizeof(openai_stream) - 1, i, step;

	for (step = 1; step <= n; step = step * 3 + 1) {
		s = sse_new(4096, rec_cb, &r);
		for (i = 0; i < n; i += step)
			ck_assert_int_eq(sse_feed(s, openai_stream + i,
			    n - i < step ? n - i : step), 0);
		ck_assert_int_eq(sse_finish(s), 0);
		ck_assert_uint_eq(sse_comments(s), 1);
		check_openai(r.r_log.b_data, r.r_n);
		sse_free(s);
		buf_reset(&r.r_log);
		r.r_n = 0;
	}
	rec_free(&r);
}
END_TEST

/* A 4 MiB line in 1-byte pieces: a parser that rescans or recopies its
 * buffer per piece needs ~10^13 steps and hits the timeout. */
START_TEST(test_linear)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;
	size_t		 i, n = 4 * 1024 * 1024;
	int		 rc;

	s = sse_new(n + 16, rec_cb, &r);
	ck_assert_int_eq(sse_feed(s, "data: ", 6), 0);
	for (i = 0, rc = 0; i < n; i++)
		rc |= sse_feed(s, "x", 1);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(sse_feed(s, "\r\n\r\n", 4), 0);
	ck_assert_uint_eq(r.r_n, 1);
	ck_assert_uint_eq(r.r_log.b_len, n + 2);
	sse_free(s);
	rec_free(&r);
}
END_TEST

/* Many CR-ended lines in one chunk with no LF anywhere: the search for
 * an LF must not restart at every line. */
START_TEST(test_linear_cr)
{
	struct rec	 r = { BUF_INIT, 0, 0, 0 };
	struct sse	*s;
	struct buf	 in = BUF_INIT;
	size_t		 i, lines = 1024 * 1024;

	for (i = 0; i < lines; i++)
		buf_add(&in, "data:x\r\r", 8);
	s = sse_new(64, rec_cb, &r);
	ck_assert_int_eq(sse_feed(s, in.b_data, in.b_len), 0);
	ck_assert_uint_eq(r.r_n, lines);
	sse_free(s);
	buf_free(&in);
	rec_free(&r);
}
END_TEST

START_TEST(test_free_null)
{
	sse_free(NULL);
}
END_TEST

static Suite *
sse_suite(void)
{
	Suite		*s = suite_create("sse");
	TCase		*tc;
	const struct {
		const char	*name;
		const TTest	*fn;
	} t[] = {
		{ "lf", test_lf }, { "crlf", test_crlf }, { "cr", test_cr },
		{ "mixed", test_mixed }, { "cr_boundary", test_cr_at_boundary },
		{ "multiline", test_multiline }, { "fields", test_fields },
		{ "comments", test_comments }, { "bom", test_bom },
		{ "unterminated", test_unterminated },
		{ "finish_resets", test_finish_resets },
		{ "line_too_long", test_line_too_long },
		{ "cut_bom_cap", test_cut_bom_cap },
		{ "callback_stop", test_callback_stop },
		{ "openai", test_openai }, { "linear", test_linear },
		{ "linear_cr", test_linear_cr },
		{ "free_null", test_free_null },
	};
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		tc = tcase_create(t[i].name);
		tcase_set_timeout(tc, 30);
		tcase_add_test(tc, t[i].fn);
		suite_add_tcase(s, tc);
	}
	return s;
}

int
main(void)
{
	return check_main(sse_suite());
}
