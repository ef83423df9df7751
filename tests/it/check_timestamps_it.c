/* check_timestamps_it.c - integration: message timestamps (addDiscussionIdTimestampsForLLM) over two turns through the gateway, workers and mock backend. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/sha256.h"
#include "../testmain.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;

#define DISC		"[DiscussionId]ts-1[/DiscussionId]"
#define SYS		DISC "You are kind."
#define USER1		"Hello\n#mock {\"text\": \"Hi there.\"}"
#define ANSWER1		"Hi there."
#define USER2		"And now?\n#mock {\"text\": \"Fine.\"}"
#define SUMMARY_NODE	"{\"type\": \"Standard\", \"endpointName\": \"Mock\"," \
    " \"preset\": \"Mock\", \"systemPrompt\": \"\", \"prompt\":" \
    " \"Summary: {time_context_summary}\", \"maxResponseSizeInTokens\": 50}"

/* A summary node, then the responder with the flag (and extra keys). */
static char *
workflow(const char *extra)
{
	char	*s;

	if (asprintf(&s, "{\"nodes\": [" SUMMARY_NODE ", {\"type\": "
	    "\"Standard\", \"endpointName\": \"Mock\", \"preset\": \"Mock\", "
	    "\"systemPrompt\": \"sys\", \"prompt\": \"\", "
	    "\"lastMessagesToSendInsteadOfPrompt\": 20, "
	    "\"maxResponseSizeInTokens\": 100, "
	    "\"addDiscussionIdTimestampsForLLM\": true%s}]}", extra) == -1)
		abort();
	return s;
}

static void
start(const char *main_workflow)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 2, \"max_workers\": 2", NULL);
	it_file(&T, "Workflows/it/Main.json", main_workflow);
}

static void
go(void)
{
	it_gateway_start(&T, "TZ=UTC");
}

/* ---- time (the workers run with TZ=UTC) ---- */

static void
stamp_at(time_t t, char *out, size_t outlen)
{
	struct tm	 tm;

	gmtime_r(&t, &tm);
	strftime(out, outlen, "(%A, %Y-%m-%d %H:%M:%S)", &tm);
}

/* s is "<stamp of a second in [t0, t1]><rest>"; returns rest. */
static const char *
after_stamp(const char *s, time_t t0, time_t t1)
{
	char	 st[64];
	time_t	 t;

	for (t = t0; t <= t1; t++) {
		stamp_at(t, st, sizeof(st));
		if (strncmp(s, st, strlen(st)) == 0)
			return s + strlen(st);
	}
	ck_abort_msg("'%s' does not start with a stamp of now", s);
	return NULL;
}

/* ---- the database ---- */

static char *
hash_of(const char *content, char out[SHA256_HEXLEN])
{
	sha256_hex(content, strlen(content), out);
	return out;
}

/* The stamp of content in discussion ts-1, or NULL. Caller frees. */
static char *
db_stamp(const char *content)
{
	char		 sql[256], h[SHA256_HEXLEN];
	long long	 n;

	if (strcmp(content, "PLACEHOLDER_TIMESTAMP_HASH_0000") == 0)
		snprintf(h, sizeof(h), "%s", content);
	else
		hash_of(content, h);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM timestamps WHERE "
	    "discussion = 'ts-1' AND msg_hash = '%s'", h);
	if ((n = it_db_int(&T, sql)) == 0)
		return NULL;
	snprintf(sql, sizeof(sql), "SELECT stamp FROM timestamps WHERE "
	    "discussion = 'ts-1' AND msg_hash = '%s'", h);
	return it_db_text(&T, sql);
}

static void
db_set_stamp(const char *content, const char *stamp)
{
	char	 sql[512], h[SHA256_HEXLEN];

	if (strcmp(content, "PLACEHOLDER_TIMESTAMP_HASH_0000") == 0)
		snprintf(h, sizeof(h), "%s", content);
	else
		hash_of(content, h);
	snprintf(sql, sizeof(sql), "UPDATE timestamps SET stamp = '%s' WHERE "
	    "discussion = 'ts-1' AND msg_hash = '%s'", stamp, h);
	it_db_exec(&T, sql);
}

/* ---- requests ---- */

/* Turn 1 (turn2 false) or turn 2 of the conversation; returns the
 * answer's text (caller frees). */
static char *
turn(bool turn2, bool stream)
{
	json_t			*b, *msgs = json_pack("[{s:s,s:s},{s:s,s:s}]",
				    "role", "system", "content", SYS, "role",
				    "user", "content", USER1);
	char			*body, *out;
	struct it_resp		 r;
	struct sse_summary	 ss;
	json_t			*j;

	if (turn2) {
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    "assistant", "content", ANSWER1));
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    "user", "content", USER2));
	}
	b = json_pack("{s:s,s:b,s:o}", "model", "x", "stream", stream,
	    "messages", msgs);
	body = json_dumps(b, 0);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "status %ld: %s", r.r_status,
	    r.r_body.b_data);
	if (stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert(ss.ss_done && !ss.ss_error);
		out = ss.ss_text;
	} else {
		j = it_json(r.r_body.b_data);
		out = strdup(json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0),
		    "message"), "content")));
		json_decref(j);
	}
	it_resp_free(&r);
	json_decref(b);
	free(body);
	return out;
}

/* Content of message i of backend request k ("" when absent). */
static const char *
sent(json_t *log, size_t k, size_t i)
{
	json_t		*m = json_array_get(json_object_get(json_object_get(
			    json_array_get(log, k), "body"), "messages"), i);
	const char	*s = json_string_value(json_object_get(m, "content"));

	ck_assert_msg(s != NULL, "backend request %zu has no message %zu", k,
	    i);
	return s;
}

static size_t
sent_count(json_t *log, size_t k)
{
	return json_array_size(json_object_get(json_object_get(
	    json_array_get(log, k), "body"), "messages"));
}

/* Turn 1: the user message is stamped now, the answer gets a
 * placeholder. Returns the user message's stamp (caller frees). */
static char *
first_turn(bool stream, bool relative)
{
	time_t	 t0 = time(NULL), t1;
	char	*a, *st;
	json_t	*log;

	a = turn(false, stream);
	t1 = time(NULL);
	ck_assert_str_eq(a, ANSWER1);
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_int_eq(json_array_size(log), 2);
	ck_assert_str_eq(sent(log, 0, 0), "Summary: [Time Context: The "
	    "conversation started less than a minute ago.]");
	ck_assert_int_eq(sent_count(log, 1), 2);
	ck_assert_str_eq(sent(log, 1, 0), "sys");
	ck_assert_ptr_nonnull(st = db_stamp(USER1));
	ck_assert_str_eq(after_stamp(st, t0, t1), "");
	if (relative)
		ck_assert_str_eq(sent(log, 1, 1), "[Sent less than a minute "
		    "ago] " USER1);
	else
		ck_assert_str_eq(after_stamp(sent(log, 1, 1), t0, t1),
		    " " USER1);
	json_decref(log);
	return st;
}

/* Between the turns the conversation ages: its user message 2 h 5 min,
 * the answer's placeholder 1 h (the seconds leave room for slow runs). */
static void
age(char *user1, char *answer1, size_t len)
{
	time_t	 now = time(NULL);
	char	*p;

	ck_assert_ptr_nonnull(p = db_stamp("PLACEHOLDER_TIMESTAMP_HASH_0000"));
	free(p);
	stamp_at(now - 2 * 3600 - 5 * 60 - 20, user1, len);
	stamp_at(now - 3600 - 20, answer1, len);
	db_set_stamp(USER1, user1);
	db_set_stamp("PLACEHOLDER_TIMESTAMP_HASH_0000", answer1);
	json_decref(it_mock_log(&T, true));
}

/* Absolute stamps over two turns; the answer of turn 1 gets its stamp
 * from the placeholder at the start of turn 2. */
START_TEST(absolute_two_turns)
{
	char	*wf = workflow(""), *st, *a, u1[64], a1[64], want[256];
	time_t	 t0, t1;
	json_t	*log;

	start(wf);
	go();
	free(first_turn(false, false));
	age(u1, a1, sizeof(u1));
	t0 = time(NULL);
	a = turn(true, false);
	t1 = time(NULL);
	ck_assert_str_eq(a, "Fine.");
	free(a);
	ck_assert_ptr_nonnull(st = db_stamp(ANSWER1));
	ck_assert_str_eq(st, a1);
	free(st);
	log = it_mock_log(&T, false);
	ck_assert_str_eq(sent(log, 0, 0), "Summary: [Time Context: This "
	    "conversation started 2 hours, 5 minutes ago. The most recent "
	    "message was sent less than a minute ago.]");
	ck_assert_int_eq(sent_count(log, 1), 4);
	snprintf(want, sizeof(want), "%s %s", u1, USER1);
	ck_assert_str_eq(sent(log, 1, 1), want);
	snprintf(want, sizeof(want), "%s %s", a1, ANSWER1);
	ck_assert_str_eq(sent(log, 1, 2), want);
	ck_assert_str_eq(after_stamp(sent(log, 1, 3), t0, t1), " " USER2);
	json_decref(log);
	/* This turn's answer waits for the next one. */
	ck_assert_ptr_nonnull(st = db_stamp("PLACEHOLDER_TIMESTAMP_HASH_0000"));
	after_stamp(st, t0, t1);
	free(st);
	ck_assert_ptr_null(db_stamp("Fine."));
	it_stop_clean(&T);
	free(wf);
}
END_TEST

/* useRelativeTimestamps, streamed. */
START_TEST(relative_streaming)
{
	char	*wf = workflow(", \"useRelativeTimestamps\": true"), *a;
	char	 u1[64], a1[64];
	json_t	*log;

	start(wf);
	go();
	free(first_turn(true, true));
	age(u1, a1, sizeof(u1));
	a = turn(true, true);
	ck_assert_str_eq(a, "Fine.");
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_int_eq(sent_count(log, 1), 4);
	ck_assert_str_eq(sent(log, 1, 1), "[Sent 2 hours, 5 minutes ago] "
	    USER1);
	ck_assert_str_eq(sent(log, 1, 2), "[Sent 1 hour ago] " ANSWER1);
	ck_assert_str_eq(sent(log, 1, 3), "[Sent less than a minute ago] "
	    USER2);
	json_decref(log);
	it_stop_clean(&T);
	free(wf);
}
END_TEST

/* useGroupChatTimestampLogic: the answer is stamped at once, with the
 * time its generation started. */
START_TEST(group_chat_commits_at_once)
{
	char	*wf = workflow(", \"useGroupChatTimestampLogic\": true");
	char	*st;
	time_t	 t0, t1;

	start(wf);
	go();
	t0 = time(NULL);
	free(first_turn(false, false));
	t1 = time(NULL);
	ck_assert_ptr_null(db_stamp("PLACEHOLDER_TIMESTAMP_HASH_0000"));
	ck_assert_ptr_nonnull(st = db_stamp(ANSWER1));
	ck_assert_str_eq(after_stamp(st, t0, t1), "");
	free(st);
	it_stop_clean(&T);
	free(wf);
}
END_TEST

/* A non-streaming child workflow runs as a non-responder: its node with
 * the flag sends the messages as they are (WilmerAI's non_responder). */
START_TEST(child_run_not_stamped)
{
	char	*child = workflow("");
	json_t	*log;
	char	*a;

	start("{\"nodes\": [{\"type\": \"CustomWorkflow\", \"workflowName\":"
	    " \"Child\", \"returnToUser\": true}]}");
	it_file(&T, "Workflows/it/Child.json", child);
	go();
	a = turn(false, false);
	ck_assert_str_eq(a, ANSWER1);
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_str_eq(sent(log, 1, 1), USER1);
	json_decref(log);
	a = db_stamp(USER1);	/* the history is tracked all the same */
	ck_assert_ptr_nonnull(a);
	free(a);
	it_stop_clean(&T);
	free(child);
}
END_TEST

/* Without a discussion id nothing is stamped or stored. */
START_TEST(no_discussion_id)
{
	char		*wf = workflow(""), *body;
	json_t		*log;
	struct it_resp	 r;
	long long	 n = 0;
	char		 err[128];

	start(wf);
	go();
	body = strdup("{\"model\": \"x\", \"messages\": [{\"role\": \"user\", "
	    "\"content\": \"Plain\"}]}");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
	free(body);
	log = it_mock_log(&T, false);
	ck_assert_str_eq(sent(log, 0, 0), "Summary: ");
	ck_assert_str_eq(sent(log, 1, 1), "Plain");
	json_decref(log);
	if (it_db_try(&T, "SELECT count(*) FROM timestamps", &n, err,
	    sizeof(err)) == 0)
		ck_assert_int_eq(n, 0);
	it_stop_clean(&T);
	free(wf);
}
END_TEST

/* A database that cannot be opened: a warning, and the request goes on
 * without timestamps. */
START_TEST(database_error_is_not_fatal)
{
	char	*wf = workflow(""), path[512], *a;
	json_t	*log;
	size_t	 from = 0;

	start(wf);
	snprintf(path, sizeof(path), "%s/state", T.it_dir);
	ck_assert_int_eq(mkdir(path, 0750), 0);
	snprintf(path, sizeof(path), "%s/state/sluice.db", T.it_dir);
	ck_assert_int_eq(mkdir(path, 0750), 0);	/* not a database */
	go();
	a = turn(false, false);
	ck_assert_str_eq(a, ANSWER1);
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_str_eq(sent(log, 0, 0), "Summary: ");
	ck_assert_str_eq(sent(log, 1, 1), USER1);
	json_decref(log);
	ck_assert_msg(it_log_wait(&T, "message timestamps are off for this "
	    "request", &from, 3000), "no warning logged");
	it_stop_clean(&T);
	free(wf);
}
END_TEST

static Suite *
timestamps_it_suite(void)
{
	Suite	*s = suite_create("timestamps_it");
	TCase	*tc = tcase_create("turns");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, absolute_two_turns);
	tcase_add_test(tc, relative_streaming);
	tcase_add_test(tc, group_chat_commits_at_once);
	tcase_add_test(tc, child_run_not_stamped);
	tcase_add_test(tc, no_discussion_id);
	tcase_add_test(tc, database_error_is_not_fatal);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(timestamps_it_suite());
}
