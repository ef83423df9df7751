/* check_lines.c - the NDJSON line splitter (worker/lines.c): any split, CRLF, blank lines, the cap, stopping. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../worker/llm/lines.h"
#include "../testmain.h"

/* What the callback saw: each line followed by '|'. */
struct seen {
	struct buf	 s_out;
	int		 s_calls;
	int		 s_stop_at;	/* return -1 on this call (1-based) */
};

static int
collect(void *arg, const char *line, size_t n)
{
	struct seen	*s = arg;

	s->s_calls++;
	buf_add(&s->s_out, line, n);
	buf_addc(&s->s_out, '|');
	return s->s_calls == s->s_stop_at ? -1 : 0;
}

/* Feed text in pieces of the sizes in cuts (0-terminated; the rest in
 * one piece), then finish; returns what was delivered ("" for none).
 * *rc is the first -1 from lines_feed or lines_finish, else 0. */
static char *
run(const char *text, size_t max, const size_t *cuts, int stop_at, int *rc)
{
	struct lines	 l;
	struct seen	 s;
	size_t		 off = 0, n, len = strlen(text);

	memset(&s, 0, sizeof(s));
	s.s_stop_at = stop_at;
	buf_adds(&s.s_out, "");
	lines_init(&l, max, collect, &s);
	*rc = 0;
	for (; cuts != NULL && *cuts != 0 && off < len; cuts++) {
		n = *cuts < len - off ? *cuts : len - off;
		if (lines_feed(&l, text + off, n) == -1 && *rc == 0)
			*rc = -1;
		off += n;
	}
	if (off < len && lines_feed(&l, text + off, len - off) == -1)
		*rc = -1;
	if (lines_finish(&l) == -1)
		*rc = -1;
	lines_free(&l);
	return buf_take(&s.s_out);
}

#define NDJSON	"{\"a\":1}\n\n{\"b\":\"x\\ny\"}\r\n\r\n{\"c\":3}"
#define WANT	"{\"a\":1}|{\"b\":\"x\\ny\"}|{\"c\":3}|"

/* Every way to cut the stream in two or three gives the same lines:
 * "\r" before "\n" dropped, blank lines skipped, the last line without
 * "\n" delivered by lines_finish. */
START_TEST(any_split)
{
	size_t	 len = strlen(NDJSON), i, j, cuts[3];
	char	*got;
	int	 rc;

	for (i = 1; i < len; i++)
		for (j = 0; j < len - i; j++) {
			cuts[0] = i;
			cuts[1] = j;
			cuts[2] = 0;
			got = run(NDJSON, 64, cuts, 0, &rc);
			ck_assert_msg(strcmp(got, WANT) == 0 && rc == 0,
			    "cut at %zu+%zu: '%s' rc %d", i, j, got, rc);
			free(got);
		}
}
END_TEST

START_TEST(byte_by_byte)
{
	static const size_t	 ones[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				    1, 1, 1, 1, 0 };
	char			*got;
	int			 rc;

	ck_assert_uint_lt(strlen(NDJSON), sizeof(ones) / sizeof(ones[0]));
	got = run(NDJSON, 64, ones, 0, &rc);
	ck_assert_str_eq(got, WANT);
	ck_assert_int_eq(rc, 0);
	free(got);
}
END_TEST

/* Only "\r\n", "\r" alone and "\n" alone: nothing to deliver. A "\r"
 * inside a line is kept; one at the very end (no "\n") is dropped. */
START_TEST(blank_and_cr)
{
	static const size_t	 two[] = { 2, 0 };
	char			*got;
	int			 rc;

	got = run("\r\n\n\r\n", 8, NULL, 0, &rc);
	ck_assert_str_eq(got, "");
	free(got);
	got = run("a\rb\r\nc\r", 8, two, 0, &rc);
	ck_assert_str_eq(got, "a\rb|c|");
	ck_assert_int_eq(rc, 0);
	free(got);
}
END_TEST

/* A line of exactly max bytes passes; a longer one that arrives in
 * pieces fails, and the failure sticks (nothing more is delivered). */
START_TEST(cap)
{
	static const size_t	 cut4[] = { 4, 0 };
	static const size_t	 cut8[] = { 8, 0 };
	char			*got;
	int			 rc;

	got = run("12345678\nab\n", 8, cut4, 0, &rc);
	ck_assert_str_eq(got, "12345678|ab|");
	ck_assert_int_eq(rc, 0);
	free(got);
	got = run("ok\n123456789\nafter\n", 8, cut8, 0, &rc);
	ck_assert_str_eq(got, "ok|");
	ck_assert_int_eq(rc, -1);
	free(got);
	/* Unfinished at the end and too long: refused by lines_feed. */
	got = run("123456789", 8, cut4, 0, &rc);
	ck_assert_str_eq(got, "");
	ck_assert_int_eq(rc, -1);
	free(got);
}
END_TEST

/* A line longer than max is refused however it arrives, also whole in
 * one lines_feed call with its "\n" (it used to be delivered then). */
START_TEST(cap_whole_line)
{
	char	*got;
	int	 rc;

	got = run("123456789012\n", 8, NULL, 0, &rc);
	ck_assert_msg(rc == -1 && *got == '\0', "a 12-byte line with max 8 "
	    "was delivered: '%s' rc %d", got, rc);
	free(got);
}
END_TEST

/* The callback's -1 stops the splitter for good. */
START_TEST(callback_stops)
{
	static const size_t	 cut3[] = { 3, 0 };
	char			*got;
	int			 rc;

	got = run("a\nb\nc\nd", 8, cut3, 2, &rc);
	ck_assert_str_eq(got, "a|b|");
	ck_assert_int_eq(rc, -1);
	free(got);
	got = run("a\nb", 8, NULL, 2, &rc);	/* the stop in lines_finish */
	ck_assert_str_eq(got, "a|b|");
	ck_assert_int_eq(rc, -1);
	free(got);
}
END_TEST

static Suite *
lines_suite(void)
{
	Suite	*s = suite_create("lines");
	TCase	*tc = tcase_create("split");

	tcase_add_test(tc, any_split);
	tcase_add_test(tc, byte_by_byte);
	tcase_add_test(tc, blank_and_cr);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_add_test(tc, cap);
	tcase_add_test(tc, callback_stops);
	tcase_add_test(tc, cap_whole_line);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(lines_suite());
}
