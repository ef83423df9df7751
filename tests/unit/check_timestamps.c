/* check_timestamps.c - message timestamps: stamp text, relative wording, history resolution, placeholder, decoration, time context summary. */
#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../../worker/core/msgs.h"
#include "../../worker/memory/timestamps.h"
#include "../../worker/store/store.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "scratchdb.h"

#define KEY	"disc-1"
#define END	((const char *)NULL)	/* ends a convo() list */

static struct scratchdb	 D;
static struct store	*S;
static time_t		 T0;	/* Saturday, 2025-09-20 16:30:05 (TZ=UTC) */

static time_t
utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm	 tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	return timegm(&tm);
}

static void
setup(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	T0 = utc(2025, 9, 20, 16, 30, 5);
	scratchdb_open(&D, "ts");
	S = D.sd_store;
}

static void
teardown(void)
{
	scratchdb_close(&D);
	S = NULL;
}

/* ---- helpers ---- */

static char *
fmt(time_t t)
{
	static char	 b[4][TS_LEN];
	static int	 k;

	k = (k + 1) % 4;
	ts_format(ts_wall(t), b[k]);
	return b[k];
}

/* The stored stamp of content under key, or NULL (caller frees). */
static char *
stamp_of(const char *key, const char *content)
{
	char		 h[SHA256_HEXLEN];
	struct store_q	*st = store_stmt(S, "SELECT stamp FROM timestamps "
			    "WHERE discussion = ? AND msg_hash = ?");
	char		*r = NULL;

	if (strcmp(content, TS_PLACEHOLDER) == 0)
		snprintf(h, sizeof(h), "%s", TS_PLACEHOLDER);
	else
		sha256_hex(content, strlen(content), h);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(store_bind(S, st, "tt", key, h), 0);
	if (store_step(S, st) == 1) {
		r = xstrdup(store_col_text(st, 0));
		store_end(st);
	}
	return r;
}

static void
stamp_is(const char *content, const char *want)
{
	char	*got = stamp_of(KEY, content);

	if (want == NULL)
		ck_assert_msg(got == NULL, "'%s' has stamp %s", content, got);
	else {
		ck_assert_msg(got != NULL, "'%s' has no stamp", content);
		ck_assert_str_eq(got, want);
	}
	free(got);
}

static void
stamp_set(const char *content, const char *stamp)
{
	char	 h[SHA256_HEXLEN];

	sha256_hex(content, strlen(content), h);
	ck_assert_int_ge(store_exec(S, "INSERT INTO discussions VALUES (?, 0) "
	    "ON CONFLICT DO NOTHING", "t", KEY), 0);
	ck_assert_int_eq(store_exec(S, "INSERT INTO timestamps VALUES (?, ?, "
	    "?) ON CONFLICT (discussion, msg_hash) DO UPDATE SET stamp = "
	    "excluded.stamp", "ttt", KEY, strcmp(content, TS_PLACEHOLDER) ==
	    0 ? TS_PLACEHOLDER : h, stamp), 1);
}

static long long
count(const char *sql)
{
	struct store_q	*st = store_stmt(S, sql);
	long long	 n;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(store_step(S, st), 1);
	n = store_col_int(st, 0);
	store_end(st);
	return n;
}

/* A conversation from "role", "content", ... pairs, NULL-terminated. */
static void
convo(struct wmsgs *l, ...)
{
	va_list		 ap;
	const char	*role;

	memset(l, 0, sizeof(*l));
	va_start(ap, l);
	while ((role = va_arg(ap, const char *)) != NULL)
		wmsgs_add(l, role, va_arg(ap, const char *));
	va_end(ap);
}

static void
resolve_ok(const struct wmsgs *l, time_t now)
{
	ck_assert_msg(ts_resolve(S, KEY, l, now) == 0, "%s", store_err(S));
}

static void
decorate_ok(struct wmsgs *l, bool relative, time_t now)
{
	ck_assert_msg(ts_decorate(S, KEY, l, relative, now) == 0, "%s",
	    store_err(S));
}

/* ---- stamp text ---- */

START_TEST(format_exact)
{
	char	 b[TS_LEN];

	ck_assert_str_eq(fmt(T0), "(Saturday, 2025-09-20 16:30:05)");
	ts_format(ts_wall(utc(2025, 9, 20, 0, 0, 0)) - 1, b);
	ck_assert_str_eq(b, "(Friday, 2025-09-19 23:59:59)");
	ts_format(ts_wall(utc(2025, 1, 1, 0, 0, 0)) - 1, b);
	ck_assert_str_eq(b, "(Tuesday, 2024-12-31 23:59:59)");
	ck_assert_str_eq(fmt(utc(2024, 2, 29, 7, 8, 9)),
	    "(Thursday, 2024-02-29 07:08:09)");
	ck_assert_str_eq(fmt(utc(2025, 9, 21, 12, 0, 0)),
	    "(Sunday, 2025-09-21 12:00:00)");
	ck_assert_str_eq(fmt(utc(2025, 9, 17, 12, 0, 0)),
	    "(Wednesday, 2025-09-17 12:00:00)");
}
END_TEST

/* The worker's local time, without a zone, as WilmerAI's datetime.now(). */
START_TEST(format_local_time)
{
	setenv("TZ", "EST5", 1);
	tzset();
	ck_assert_int_eq(ts_wall(T0), (int64_t)T0 - 5 * 3600);
	ck_assert_str_eq(fmt(T0), "(Saturday, 2025-09-20 11:30:05)");
	setenv("TZ", "UTC", 1);
	tzset();
}
END_TEST

START_TEST(parse_stamps)
{
	int64_t	 w, want = ts_wall(T0);

	ck_assert_int_eq(ts_parse("(Saturday, 2025-09-20 16:30:05)", &w), 0);
	ck_assert_int_eq(w, want);
	w = 0;
	ck_assert_int_eq(ts_parse("Saturday, 2025-09-20 16:30:05", &w), 0);
	ck_assert_int_eq(w, want);
	w = 0;
	ck_assert_int_eq(ts_parse(" (sat,  2025-9-20  16:30:5) ", &w), 0);
	ck_assert_int_eq(w, want);
	/* The day name is not checked against the date (Python's). */
	w = 0;
	ck_assert_int_eq(ts_parse("(Monday, 2025-09-20 16:30:05)", &w), 0);
	ck_assert_int_eq(w, want);
	ck_assert_int_eq(ts_parse("(Saturday, 2024-02-29 00:00:00)", &w), 0);
	ck_assert_int_eq(w, utc(2024, 2, 29, 0, 0, 0));
}
END_TEST

START_TEST(parse_refuses)
{
	static const char *const bad[] = {
		"", "()", "garbage", "(Someday, 2025-09-20 16:30:05)",
		"(Saturday 2025-09-20 16:30:05)",
		"(Saturday,2025-09-20 16:30:05)",
		"(Saturday, 2025-02-29 16:30:05)",
		"(Saturday, 2025-09-31 16:30:05)",
		"(Saturday, 2025-13-20 16:30:05)",
		"(Saturday, 2025-09-20 24:00:00)",
		"(Saturday, 2025-09-20 16:60:00)",
		"(Saturday, 2025-09-20 16:30:60)",
		"(Saturday, 2025-09-20 16:30:05) x",
		"(Saturday, 25-09-20 16:30:05)",
		"(Saturday, 2025-09-20 16:30)",
		"[Sent 5 minutes ago]",
	};
	size_t	 i;
	int64_t	 w;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(ts_parse(bad[i], &w) == -1, "'%s' parsed",
		    bad[i]);
	ck_assert_int_eq(ts_parse(NULL, &w), -1);
}
END_TEST

/* ---- relative wording ---- */

START_TEST(ago_words)
{
	static const struct { int64_t s; const char *want; } c[] = {
		{ 0, "less than a minute" },
		{ 59, "less than a minute" },
		{ -3600, "less than a minute" },
		{ 60, "1 minute" },
		{ 119, "1 minute" },
		{ 120, "2 minutes" },
		{ 3600, "1 hour" },
		{ 3660, "1 hour, 1 minute" },
		{ 7200 + 59, "2 hours" },
		{ 86400, "1 day" },
		{ 86400 + 60, "1 day, 1 minute" },
		{ 86400 + 3600, "1 day, 1 hour" },
		{ 2 * 86400 + 2 * 3600 + 5 * 60 + 59,
		    "2 days, 2 hours, 5 minutes" },
		{ 400 * 86400LL, "400 days" },
	};
	char	 b[TS_AGO_LEN];
	size_t	 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ts_ago(c[i].s, b);
		ck_assert_msg(strcmp(b, c[i].want) == 0, "%lld s: '%s', want "
		    "'%s'", (long long)c[i].s, b, c[i].want);
	}
}
END_TEST

START_TEST(sent_ago)
{
	char	 b[128];

	ts_sent_ago(fmt(T0 - 300), T0, b, sizeof(b));
	ck_assert_str_eq(b, "[Sent 5 minutes ago]");
	ts_sent_ago(fmt(T0 - 30), T0, b, sizeof(b));
	ck_assert_str_eq(b, "[Sent less than a minute ago]");
	ts_sent_ago(fmt(T0 - 86400 - 3600 - 60), T0, b, sizeof(b));
	ck_assert_str_eq(b, "[Sent 1 day, 1 hour, 1 minute ago]");
	ts_sent_ago(fmt(T0 + 600), T0, b, sizeof(b));	/* clock skew */
	ck_assert_str_eq(b, "[Sent less than a minute ago]");
	ts_sent_ago("(not a stamp)", T0, b, sizeof(b));
	ck_assert_str_eq(b, "");
}
END_TEST

/* ---- generation prompts ---- */

static bool
gp(const char *content)
{
	struct wmsg	 m;

	memset(&m, 0, sizeof(m));
	m.m_role = (char *)(uintptr_t)"assistant";
	m.m_content = (char *)(uintptr_t)content;
	return ts_gen_prompt(&m);
}

START_TEST(generation_prompt)
{
	char	 s[256];
	int	 i;

	ck_assert(gp("Roland:"));
	ck_assert(gp("  Roland:  \n"));
	ck_assert(!gp("Roland"));
	ck_assert(!gp(""));
	ck_assert(!gp(":) hi"));
	memset(s, 'x', 98);
	strcpy(s + 98, ":");		/* 99 characters */
	ck_assert(gp(s));
	memset(s, 'x', 99);
	strcpy(s + 99, ":");		/* 100 */
	ck_assert(!gp(s));
	for (i = 0; i < 98; i++)	/* 98 two-byte characters and ':' */
		memcpy(s + 2 * i, "\xc3\xa9", 2);
	strcpy(s + 196, ":");
	ck_assert(gp(s));
}
END_TEST

/* ---- resolution ---- */

/* A new conversation: newest message now, each older one a second
 * earlier; system messages get none. */
START_TEST(resolve_new_conversation)
{
	struct wmsgs	 l;

	convo(&l, "system", "You are helpful.", "user", "u1", "assistant",
	    "a1", "user", "u2", END);
	resolve_ok(&l, T0);
	stamp_is("u2", "(Saturday, 2025-09-20 16:30:05)");
	stamp_is("a1", "(Saturday, 2025-09-20 16:30:04)");
	stamp_is("u1", "(Saturday, 2025-09-20 16:30:03)");
	stamp_is("You are helpful.", NULL);
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 3);
	ck_assert_int_eq(count("SELECT count(*) FROM discussions WHERE "
	    "key = 'disc-1'"), 1);
	/* Known messages keep their stamps. */
	resolve_ok(&l, T0 + 100);
	stamp_is("u2", "(Saturday, 2025-09-20 16:30:05)");
	stamp_is("u1", "(Saturday, 2025-09-20 16:30:03)");
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 3);
	wmsgs_free(&l);
}
END_TEST

/* A stamped message anchors the older unknown ones: its stamp, then a
 * second earlier per message, across midnight. */
START_TEST(resolve_backfill_anchor)
{
	struct wmsgs	 l;

	stamp_set("a1", "(Friday, 2025-09-19 00:00:01)");
	convo(&l, "user", "u0", "assistant", "a0", "user", "u1", "assistant",
	    "a1", "user", "u2", END);
	resolve_ok(&l, T0);
	stamp_is("u2", "(Saturday, 2025-09-20 16:30:05)");
	stamp_is("a1", "(Friday, 2025-09-19 00:00:01)");
	stamp_is("u1", "(Friday, 2025-09-19 00:00:00)");
	stamp_is("a0", "(Thursday, 2025-09-18 23:59:59)");
	stamp_is("u0", "(Thursday, 2025-09-18 23:59:58)");
	wmsgs_free(&l);
}
END_TEST

/* A stored stamp that does not parse stays the anchor as it is. */
START_TEST(resolve_bad_anchor)
{
	struct wmsgs	 l;

	stamp_set("a1", "(imported)");
	convo(&l, "user", "u1", "assistant", "a1", "user", "u2", END);
	resolve_ok(&l, T0);
	stamp_is("u1", "(imported)");
	stamp_is("u2", fmt(T0));
	wmsgs_free(&l);
}
END_TEST

/* The previous answer's placeholder goes to the newest assistant
 * message; the new user message is stamped now. */
START_TEST(resolve_placeholder)
{
	struct wmsgs	 l;

	convo(&l, "user", "hi", END);
	resolve_ok(&l, T0);
	ck_assert_int_eq(ts_placeholder(S, KEY, T0 + 2), 0);
	stamp_is(TS_PLACEHOLDER, fmt(T0 + 2));
	wmsgs_free(&l);

	convo(&l, "user", "hi", "assistant", "hello", "user", "how?",
	    END);
	resolve_ok(&l, T0 + 60);
	stamp_is(TS_PLACEHOLDER, NULL);
	stamp_is("hi", fmt(T0));
	stamp_is("hello", fmt(T0 + 2));
	stamp_is("how?", fmt(T0 + 60));
	wmsgs_free(&l);
}
END_TEST

/* The newest assistant message already has a stamp: the placeholder is
 * dropped, nothing else moves. */
START_TEST(resolve_placeholder_tracked)
{
	struct wmsgs	 l;

	stamp_set("a1", fmt(T0 - 500));
	stamp_set(TS_PLACEHOLDER, fmt(T0 - 10));
	convo(&l, "user", "u1", "assistant", "a0", "assistant", "a1", "user",
	    "u2", END);
	resolve_ok(&l, T0);
	stamp_is("a1", fmt(T0 - 500));
	stamp_is("a0", fmt(T0 - 501));
	stamp_is(TS_PLACEHOLDER, NULL);
	wmsgs_free(&l);
}
END_TEST

/* A trailing generation prompt is neither the placeholder's message nor
 * stamped; decoration leaves it alone. */
START_TEST(resolve_skips_generation_prompt)
{
	struct wmsgs	 l;

	stamp_set(TS_PLACEHOLDER, fmt(T0 - 20));
	convo(&l, "user", "hi", "assistant", "hello", "user", "more",
	    "assistant", "Roland:", END);
	resolve_ok(&l, T0);
	stamp_is("Roland:", NULL);
	stamp_is("more", fmt(T0));
	stamp_is("hello", fmt(T0 - 20));
	stamp_is("hi", fmt(T0 - 21));
	decorate_ok(&l, false, T0);
	ck_assert_str_eq(l.v[3].m_content, "Roland:");
	ck_assert_str_eq(l.v[2].m_content, "(Saturday, 2025-09-20 16:30:05) "
	    "more");
	wmsgs_free(&l);

	/* Not the last message: an ordinary one. */
	convo(&l, "user", "Bob:", "assistant", "x", END);
	resolve_ok(&l, T0);
	stamp_is("Bob:", fmt(T0 - 1));
	wmsgs_free(&l);
}
END_TEST

/* No assistant message to take it: the placeholder just goes. */
START_TEST(resolve_placeholder_orphan)
{
	struct wmsgs	 l;

	stamp_set(TS_PLACEHOLDER, fmt(T0 - 20));
	convo(&l, "system", "s", "user", "hi", END);
	resolve_ok(&l, T0);
	stamp_is(TS_PLACEHOLDER, NULL);
	stamp_is("hi", fmt(T0));
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 1);
	wmsgs_free(&l);
}
END_TEST

/* Discussions under other keys (another API key's scope) are apart. */
START_TEST(resolve_keys_apart)
{
	struct wmsgs	 l;
	char		*s;

	convo(&l, "user", "hi", END);
	resolve_ok(&l, T0);
	ck_assert_int_eq(ts_resolve(S, "0123456789abcdef/" KEY, &l, T0 + 99),
	    0);
	stamp_is("hi", fmt(T0));
	ck_assert_ptr_nonnull(s = stamp_of("0123456789abcdef/" KEY, "hi"));
	ck_assert_str_eq(s, fmt(T0 + 99));
	free(s);
	wmsgs_free(&l);
}
END_TEST

/* ---- decoration ---- */

START_TEST(decorate_absolute_and_relative)
{
	struct wmsgs	 l, r;
	size_t		 i;

	stamp_set("u1", fmt(T0 - 2 * 86400 - 3 * 3600));
	stamp_set("a1", fmt(T0 - 300));
	convo(&l, "system", "sys", "systemMes", "sm", "user", "u1",
	    "assistant", "a1", "user", "u2", END);
	memset(&r, 0, sizeof(r));
	for (i = 0; i < l.n; i++)
		wmsgs_add_copy(&r, &l.v[i]);
	resolve_ok(&l, T0);
	decorate_ok(&l, false, T0 + 30);
	ck_assert_str_eq(l.v[0].m_content, "sys");
	ck_assert_str_eq(l.v[1].m_content, "sm");
	ck_assert_str_eq(l.v[2].m_content,
	    "(Thursday, 2025-09-18 13:30:05) u1");
	ck_assert_str_eq(l.v[3].m_content,
	    "(Saturday, 2025-09-20 16:25:05) a1");
	ck_assert_str_eq(l.v[4].m_content,
	    "(Saturday, 2025-09-20 16:30:05) u2");
	decorate_ok(&r, true, T0 + 30);
	ck_assert_str_eq(r.v[0].m_content, "sys");
	ck_assert_str_eq(r.v[2].m_content, "[Sent 2 days, 3 hours ago] u1");
	ck_assert_str_eq(r.v[3].m_content, "[Sent 5 minutes ago] a1");
	ck_assert_str_eq(r.v[4].m_content, "[Sent less than a minute ago] u2");
	wmsgs_free(&l);
	wmsgs_free(&r);
}
END_TEST

/* A message that starts with its own stamp is not stamped twice; one
 * whose stamp does not parse gets nothing in the relative form. */
START_TEST(decorate_no_double)
{
	struct wmsgs	 l;
	char		 c[128];

	snprintf(c, sizeof(c), "%s already", fmt(T0 - 60));
	stamp_set(c, fmt(T0 - 60));
	stamp_set("odd", "(imported)");
	convo(&l, "user", c, "user", "odd", "user", "unknown", END);
	decorate_ok(&l, false, T0);
	ck_assert_str_eq(l.v[0].m_content, c);
	ck_assert_str_eq(l.v[1].m_content, "(imported) odd");
	ck_assert_str_eq(l.v[2].m_content, "unknown");
	wmsgs_free(&l);
	convo(&l, "user", "odd", END);
	decorate_ok(&l, true, T0);
	ck_assert_str_eq(l.v[0].m_content, "odd");
	wmsgs_free(&l);
}
END_TEST

/* ---- the answer ---- */

START_TEST(commit_answer)
{
	ck_assert_int_eq(ts_placeholder(S, KEY, T0), 0);
	ck_assert_int_eq(ts_commit(S, KEY, "Roland: Hello there.", T0 + 30),
	    0);
	stamp_is("Roland: Hello there.", fmt(T0));
	stamp_is(TS_PLACEHOLDER, NULL);
	/* Without a placeholder: stamped now. */
	ck_assert_int_eq(ts_commit(S, KEY, "second", T0 + 40), 0);
	stamp_is("second", fmt(T0 + 40));
	/* An empty answer only drops the placeholder. */
	ck_assert_int_eq(ts_placeholder(S, KEY, T0 + 50), 0);
	ck_assert_int_eq(ts_commit(S, KEY, "", T0 + 60), 0);
	stamp_is(TS_PLACEHOLDER, NULL);
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 2);
}
END_TEST

/* A second placeholder replaces the first. */
START_TEST(placeholder_replaced)
{
	ck_assert_int_eq(ts_placeholder(S, KEY, T0), 0);
	ck_assert_int_eq(ts_placeholder(S, KEY, T0 + 9), 0);
	stamp_is(TS_PLACEHOLDER, fmt(T0 + 9));
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 1);
}
END_TEST

/* ---- time context summary ---- */

static void
summary_is(time_t now, const char *want)
{
	char	*s = NULL;

	ck_assert_msg(ts_summary(S, KEY, now, &s) == 0, "%s", store_err(S));
	ck_assert_str_eq(s, want);
	free(s);
}

START_TEST(summary_sentences)
{
	summary_is(T0, "");
	stamp_set(TS_PLACEHOLDER, fmt(T0 - 3600));
	summary_is(T0, "");		/* the placeholder does not count */
	stamp_set("a", fmt(T0 - 600));
	summary_is(T0, "[Time Context: The conversation started 10 minutes "
	    "ago.]");
	stamp_set("b", fmt(T0 - 2 * 3600 - 30 * 60));
	stamp_set("c", fmt(T0 - 300));
	stamp_set("d", "(not a stamp)");
	summary_is(T0, "[Time Context: This conversation started 2 hours, "
	    "30 minutes ago. The most recent message was sent 5 minutes "
	    "ago.]");
	summary_is(T0 - 300, "[Time Context: This conversation started 2 "
	    "hours, 25 minutes ago. The most recent message was sent less "
	    "than a minute ago.]");
}
END_TEST

/* ---- the database busy ---- */

static int
give_up(void *arg)
{
	return 1;
}

/* Another process holds the write lock: nothing is written, and a wait
 * given up (the request was cancelled) says so. */
START_TEST(busy_database)
{
	struct store_opts	 o = { .so_busy_ms = 300 };
	struct store_opts	 o2 = { .so_busy_ms = 5000,
				    .so_on_wait = give_up };
	char			 err[STORE_ERRLEN];
	struct wmsgs		 l;
	struct store		*db, *s2, *s3;

	convo(&l, "user", "hi", END);
	ck_assert_ptr_nonnull(s2 = store_open(D.sd_path, &o, err));
	ck_assert_ptr_nonnull(s3 = store_open(D.sd_path, &o2, err));
	db = scratchdb_hold(D.sd_path);
	ck_assert_int_eq(ts_resolve(s2, KEY, &l, T0), -1);
	ck_assert(!store_gave_up(s2));
	ck_assert_int_eq(ts_placeholder(s3, KEY, T0), -1);
	ck_assert(store_gave_up(s3));
	ck_assert_int_eq(ts_commit(s3, KEY, "x", T0), -1);
	store_close(s2);
	store_close(s3);
	store_close(db);	/* rolled back */
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 0);
	wmsgs_free(&l);
}
END_TEST

static Suite *
timestamps_suite(void)
{
	Suite	*s = suite_create("timestamps");
	TCase	*tc;

	tc = tcase_create("text");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, format_exact);
	tcase_add_test(tc, format_local_time);
	tcase_add_test(tc, parse_stamps);
	tcase_add_test(tc, parse_refuses);
	tcase_add_test(tc, ago_words);
	tcase_add_test(tc, sent_ago);
	tcase_add_test(tc, generation_prompt);
	suite_add_tcase(s, tc);

	tc = tcase_create("resolve");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, resolve_new_conversation);
	tcase_add_test(tc, resolve_backfill_anchor);
	tcase_add_test(tc, resolve_bad_anchor);
	tcase_add_test(tc, resolve_placeholder);
	tcase_add_test(tc, resolve_placeholder_tracked);
	tcase_add_test(tc, resolve_skips_generation_prompt);
	tcase_add_test(tc, resolve_placeholder_orphan);
	tcase_add_test(tc, resolve_keys_apart);
	suite_add_tcase(s, tc);

	tc = tcase_create("decorate");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, decorate_absolute_and_relative);
	tcase_add_test(tc, decorate_no_double);
	suite_add_tcase(s, tc);

	tc = tcase_create("answer");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, commit_answer);
	tcase_add_test(tc, placeholder_replaced);
	suite_add_tcase(s, tc);

	tc = tcase_create("summary");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, summary_sentences);
	suite_add_tcase(s, tc);

	tc = tcase_create("busy");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, busy_database);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(timestamps_suite());
}
