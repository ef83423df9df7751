/* check_pace.c - mock-llm --pace, the bench's paced backend: the first event no sooner than asked, the events counted and spaced. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "harness.h"
#include "../testmain.h"

#define FIRST_MS	600
#define EVENTS		6
#define GAP_MS		40
#define NSTREAMS	8
#define BODY		"{\"model\":\"m\",\"stream\":true,\"messages\":" \
			"[{\"role\":\"user\",\"content\":\"hi\"}]}"

static struct it	 T;

/* The mock with --pace FIRST_MS,EVENTS,GAP_MS; the streams of
 * it_streams go to it. */
static void
setup(void)
{
	static const char *const args[] = { "--listen", "127.0.0.1:0",
	    "--quiet", "--text", "one two three", "--pace", "600,6,40", NULL };

	memset(&T, 0, sizeof(T));
	T.it_mock = it_double_start("mock-llm", args, &T.it_mock_port);
	T.it_port = T.it_mock_port;
}

static void
teardown(void)
{
	it_double_stop(T.it_mock);
}

/* SSE events ("data:" lines) in s. */
static int
count_events(const char *s)
{
	const char	*p;
	int		 n = 0;

	for (p = s; (p = strstr(p, "data:")) != NULL; p += 5)
		if (p == s || p[-1] == '\n')
			n++;
	return n;
}

/* Concurrent streams each wait FIRST_MS for their first byte, then get
 * the role event, EVENTS word events (the text's words over and over),
 * the finish event and [DONE], no sooner than the gaps allow. */
START_TEST(pace_paces_every_stream)
{
	struct it_stream	 s[NSTREAMS];
	struct sse_summary	 ss;
	size_t			 i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < NSTREAMS; i++) {
		s[i].s_body = BODY;
		buf_init(&s[i].s_out);
	}
	it_streams(&T, s, NSTREAMS, it_slow(10000), NULL, NULL);
	for (i = 0; i < NSTREAMS; i++) {
		ck_assert_msg(s[i].s_finished, "stream %zu did not finish", i);
		ck_assert_int_eq(s[i].s_status, 200);
		ck_assert_msg(s[i].s_first_ms >= FIRST_MS,
		    "stream %zu: first byte after %llu ms, want >= %d", i,
		    (unsigned long long)s[i].s_first_ms, FIRST_MS);
		ck_assert_msg(s[i].s_end_ms >= FIRST_MS + (EVENTS - 1) *
		    GAP_MS, "stream %zu: ended after %llu ms, want >= %d", i,
		    (unsigned long long)s[i].s_end_ms,
		    FIRST_MS + (EVENTS - 1) * GAP_MS);
		ck_assert_int_eq(count_events(s[i].s_out.b_data), EVENTS + 3);
		memset(&ss, 0, sizeof(ss));
		it_sse_parse(s[i].s_out.b_data, &ss);
		ck_assert(ss.ss_done);
		ck_assert(ss.ss_first_has_role);
		ck_assert_int_eq(ss.ss_chunks, EVENTS + 2);
		ck_assert_str_eq(ss.ss_text, "one two three one two three");
		ck_assert_str_eq(ss.ss_finish, "stop");
		free(ss.ss_text);
		buf_free(&s[i].s_out);
	}
}
END_TEST

/* The pace is only a default: a request's own script still wins. */
START_TEST(pace_yields_to_the_script)
{
	struct it_stream	 s;
	struct sse_summary	 ss;

	memset(&s, 0, sizeof(s));
	s.s_body = "{\"stream\":true,\"messages\":[{\"role\":\"user\","
	    "\"content\":\"#mock {\\\"first_ms\\\":0,\\\"delay_ms\\\":0,"
	    "\\\"text\\\":\\\"quick\\\"}\"}]}";
	buf_init(&s.s_out);
	it_streams(&T, &s, 1, it_slow(5000), NULL, NULL);
	ck_assert(s.s_finished);
	ck_assert_msg(s.s_end_ms < FIRST_MS, "took %llu ms",
	    (unsigned long long)s.s_end_ms);
	memset(&ss, 0, sizeof(ss));
	it_sse_parse(s.s_out.b_data, &ss);
	ck_assert(ss.ss_done);
	ck_assert_str_eq(ss.ss_text, "quick");
	free(ss.ss_text);
	buf_free(&s.s_out);
}
END_TEST

static Suite *
pace_suite(void)
{
	Suite	*s = suite_create("pace");
	TCase	*tc = test_case(s, "pace", pace_paces_every_stream, 30);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pace_yields_to_the_script);
	return s;
}

int
main(void)
{
	return check_main(pace_suite());
}
