/* check_compactor_it.c - integration: ContextCompactor through the real gateway and workers against the mock backend: the three calls as sent, the state in the shared database, no second compaction of an unchanged conversation. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/sha256.h"
#include "../testmain.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;

#define FOX	"The quick brown fox jumps over the lazy dog."
#define SYS	"You are a summarization AI."

/* Each test message is 13 estimated tokens: budgets of 26 hold two. */
static const char settings[] = "{\"endpointName\": \"Mock\", \"preset\":"
    " \"Mock\", \"maxResponseSizeInTokens\": 100,"
    " \"recentContextTokens\": 26, \"oldContextTokens\": 26,"
    " \"lookbackStartTurn\": 1,"
    " \"oldSectionPrompt\": \"Old:\\n[MESSAGES_TO_SUMMARIZE]\\nNow:\\n"
    "[RECENT_MESSAGES]\"}\n";

/* The compactor, then the answer with its output in the prompt. */
static const char main_wf[] = "{\"nodes\": [{\"type\": \"ContextCompactor\"},"
    " {\"type\": \"Standard\", \"endpointName\": \"Mock\", \"preset\":"
    " \"Mock\", \"systemPrompt\": \"\", \"prompt\": \"Context: "
    "{agent1Output}\", \"maxResponseSizeInTokens\": 300,"
    " \"returnToUser\": true}]}\n";

static void
start_with(const char *sluice)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, sluice, NULL);
	it_user_set(&T, "contextCompactorSettingsFile", json_string("Cc"));
	it_file(&T, "Workflows/it/Cc.json", settings);
	it_file(&T, "Workflows/it/Main.json", main_wf);
	it_gateway_start(&T, NULL);
}

static void
start(void)
{
	start_with(NULL);
}

static char *
msg(int k, char *out, size_t outlen)
{
	snprintf(out, outlen, "Msg %d alpha beta gamma delta epsilon zeta", k);
	return out;
}

/* The body of a chat of n messages after the system one, in
 * discussion "cc". Caller frees. */
static char *
chat_body(int n, bool stream)
{
	json_t		*msgs = json_array(), *b;
	char		 text[64], *body;
	int		 k;

	json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system",
	    "content", "You are kind.[DiscussionId]cc[/DiscussionId]"));
	for (k = 1; k <= n; k++)
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    k % 2 ? "user" : "assistant", "content",
		    msg(k, text, sizeof(text))));
	b = json_pack("{s:s,s:b,s:o}", "model", "it", "stream", stream,
	    "messages", msgs);
	body = json_dumps(b, 0);
	json_decref(b);
	return body;
}

/* A conversation of n messages; the answer is the mock's. Returns the
 * backend requests. */
static json_t *
turn(int n)
{
	char		*body = chat_body(n, false);
	struct it_resp	 r;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status,
	    r.r_body.b_data);
	ck_assert_msg(strstr(r.r_body.b_data, FOX) != NULL, "%s",
	    r.r_body.b_data);
	it_resp_free(&r);
	free(body);
	return it_mock_log(&T, true);
}

/* Request i of log has exactly this body: the settings' preset and
 * size, not streamed, system then user. */
static void
ck_call(json_t *log, size_t i, const char *system, const char *user,
    int max_tokens)
{
	json_t	*got = json_object_get(json_array_get(log, i), "body");
	json_t	*want;
	char	*g, *w;

	want = json_pack("{s:s,s:[],s:b,s:i,s:f}", "model", "mock-model",
	    "messages", "stream", false, "max_tokens", max_tokens, "temperature", 0.5);
	if (system != NULL)
		json_array_append_new(json_object_get(want, "messages"),
		    json_pack("{s:s,s:s}", "role", "system", "content",
		    system));
	json_array_append_new(json_object_get(want, "messages"),
	    json_pack("{s:s,s:s}", "role", "user", "content", user));
	g = json_dumps(got, JSON_SORT_KEYS);
	w = json_dumps(want, JSON_SORT_KEYS);
	ck_assert_msg(json_equal(got, want), "request %zu:\n got %s\nwant %s",
	    i, g, w);
	free(g);
	free(w);
	json_decref(want);
}

START_TEST(a5_it_compacts_once)
{
	json_t	*log;
	char	 t[8][64], *rows, *want;
	char	 h0[SHA256_HEXLEN], h3[SHA256_HEXLEN], h4[SHA256_HEXLEN];
	char	*old, *neutral;
	int	 k;

	start();
	for (k = 1; k < 8; k++)
		msg(k, t[k], sizeof(t[k]));
	/* W = the system message and messages 1-6 (7 is the lookback):
	 * Recent 5-6, Old 3-4, Oldest the system message and 1-2. */
	log = turn(7);
	ck_assert_uint_eq(json_array_size(log), 4);
	old = NULL;
	ck_assert_int_ne(asprintf(&old, "Old:\nuser: %s\nassistant: %s\n"
	    "Now:\nuser: %s\nassistant: %s", t[3], t[4], t[5], t[6]), -1);
	ck_call(log, 0, SYS, old, 100);
	ck_assert_int_ne(asprintf(&neutral, "system: You are kind.\n"
	    "user: %s\nassistant: %s", t[1], t[2]), -1);
	ck_call(log, 1, SYS, neutral, 100);
	ck_call(log, 2, SYS, "\n\n" FOX, 100);
	ck_call(log, 3, NULL, "Context: <context_compactor_old>" FOX
	    "</context_compactor_old>\n<context_compactor_oldest>" FOX
	    "</context_compactor_oldest>", 300);
	json_decref(log);
	free(old);
	free(neutral);
	/* Old: the summary by the hash of message 4 (the Old window's
	 * last), the boundary at W[3] (message 3); Oldest by the hash of
	 * the system message as the workflow holds it. */
	rows = it_db_text(&T, "SELECT group_concat(section || pos || ':' || "
	    "text || ':' || hash, '|') FROM (SELECT * FROM "
	    "compactor_sections WHERE discussion = 'cc' ORDER BY section, "
	    "pos)");
	sha256_hex(t[4], strlen(t[4]), h4);
	sha256_hex(t[3], strlen(t[3]), h3);
	sha256_hex("You are kind.", 13, h0);
	ck_assert_int_ne(asprintf(&want, "old0:" FOX ":%s|old1:__boundary__:"
	    "3:%s|oldest0:" FOX ":%s", h4, h3, h0), -1);
	ck_assert_str_eq(rows, want);
	free(rows);
	free(want);
	/* The same conversation again: nothing moved, nothing asked but
	 * the answer. */
	log = turn(7);
	ck_assert_uint_eq(json_array_size(log), 1);
	json_decref(log);
	/* Two more: messages 3-4 leave the Old window, only they are
	 * folded into the rolling summary. */
	log = turn(9);
	ck_assert_uint_eq(json_array_size(log), 4);
	ck_assert_int_ne(asprintf(&neutral, "user: %s\nassistant: %s", t[3],
	    t[4]), -1);
	ck_call(log, 1, SYS, neutral, 100);
	ck_call(log, 2, SYS, FOX "\n\n" FOX, 100);
	free(neutral);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* A completions endpoint gets the calls through its prompt template,
 * the prompt in a user turn, then the assistant's turn as the
 * endpoint's addGenerationPrompt asks (WilmerAI sends the bare
 * strings). */
START_TEST(a5_it_completions_template)
{
	char	 url[64], t[8][64], *want;
	json_t	*log;
	int	 k;

	start();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", T.it_mock_port);
	it_turns_template(&T);
	it_backend(&T, NULL, "Comp", "openAIV1Completion", url, "",
	    ", \"addGenerationPrompt\": true");
	it_file(&T, "Workflows/it/Cc.json", "{\"endpointName\": \"Comp\", "
	    "\"recentContextTokens\": 26, \"oldContextTokens\": 1000, "
	    "\"lookbackStartTurn\": 1, \"oldSectionSystemPrompt\": "
	    "\"Sum {up}.\"}\n");
	for (k = 1; k < 8; k++)
		msg(k, t[k], sizeof(t[k]));
	log = turn(7);
	ck_assert_uint_eq(json_array_size(log), 2);
	ck_assert_int_ne(asprintf(&want, "<|system|>\nSum {up}.\n<|end|>\n"
	    "<|user|>\nsystem: You are kind.\nuser: %s\nassistant: %s\n"
	    "user: %s\nassistant: %s\n<|end|>\n<|assistant|>", t[1], t[2],
	    t[3], t[4]),
	    -1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(log, 0), "body"), "prompt")), want);
	free(want);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* Two requests of one discussion at once, on two workers: the one
 * that takes the compactor lock makes the three calls (the first is
 * slow), the other does not wait and answers without summaries. */
START_TEST(a5_it_one_compaction_at_a_time)
{
	struct it_stream	 s[2];
	json_t			*log, *req;
	char			*body;
	size_t			 i, summaries = 0, empty = 0;
	const char		*first;

	start_with("\"min_workers\": 2, \"max_workers\": 2");
	it_file(&T, "Workflows/it/Cc.json", "{\"endpointName\": \"Mock\", "
	    "\"recentContextTokens\": 26, \"oldContextTokens\": 26, "
	    "\"lookbackStartTurn\": 1, \"oldSectionPrompt\": "
	    "\"[MESSAGES_TO_SUMMARIZE]\\n#mock {\\\"head_delay_ms\\\": "
	    "1500}\"}\n");
	it_wait_idle(&T, 2);
	body = chat_body(7, true);
	memset(s, 0, sizeof(s));
	s[0].s_body = s[1].s_body = body;
	it_streams(&T, s, 2, it_slow(15000), NULL, NULL);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(s[i].s_status, 200);
		ck_assert(s[i].s_finished);
		buf_free(&s[i].s_out);
	}
	free(body);
	it_wait_idle(&T, 2);
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 5);
	/* The first message: the summariser's system prompt, or the
	 * answer's prompt (it has no system prompt). */
	json_array_foreach(log, i, req) {
		first = json_string_value(json_object_get(json_array_get(
		    json_object_get(json_object_get(req, "body"), "messages"),
		    0), "content"));
		if (first != NULL && strcmp(first, SYS) == 0)
			summaries++;
		else if (first != NULL && strcmp(first, "Context: ") == 0)
			empty++;
	}
	ck_assert_uint_eq(summaries, 3);
	ck_assert_uint_eq(empty, 1);
	json_decref(log);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM "
	    "compactor_sections WHERE discussion = 'cc'"), 3);
	it_stop_clean(&T);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "a5_it_compacts_once", a5_it_compacts_once },
		{ "a5_it_completions_template", a5_it_completions_template },
		{ "a5_it_one_compaction_at_a_time",
		    a5_it_one_compaction_at_a_time },
	};

	return it_main(it_suite_cases("compactor_it", cases,
	    sizeof(cases) / sizeof(cases[0]), 60));
}
