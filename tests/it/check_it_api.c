/* check_it_api.c - integration: Ollama and legacy front doors, and every way to cancel. */
#include <check.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

static struct it	 T;

static void
start(const char *settings)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	it_gateway_start(&T, NULL);
}

static json_int_t
mock_stat(const char *key)
{
	json_t		*j = it_get_json(&T, "mock:/mock/stats");
	json_int_t	 v = json_integer_value(json_object_get(j, key));

	json_decref(j);
	return v;
}

/* Wait until the mock has seen n clients leave; returns ms waited. */
static long
wait_gone(json_int_t n, int timeout_ms)
{
	uint64_t	 t0 = it_now();

	while (mock_stat("client_gone") < n) {
		if (it_now() - t0 > (uint64_t)timeout_ms)
			return -1;
		it_sleep(2);
	}
	return (long)(it_now() - t0);
}

/* NDJSON lines of an Ollama stream: concatenated text, done seen. */
static char *
ndjson_text(const char *body, const char *field, int *ndone, int *nerr,
    char *rid, size_t ridlen)
{
	struct buf	 t = BUF_INIT;
	const char	*p = body, *nl;
	json_t		*j, *v;

	*ndone = *nerr = 0;
	buf_adds(&t, "");
	for (; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		if ((j = json_loadb(p, (size_t)(nl - p), 0, NULL)) == NULL)
			continue;
		v = strcmp(field, "response") == 0 ? json_object_get(j, field) :
		    json_object_get(json_object_get(j, "message"), "content");
		if (json_is_string(v))
			buf_adds(&t, json_string_value(v));
		if (json_is_true(json_object_get(j, "done")))
			(*ndone)++;
		if (json_object_get(j, "error") != NULL)
			(*nerr)++;
		if (rid != NULL && json_is_string(json_object_get(j,
		    "request_id")))
			snprintf(rid, ridlen, "%s", json_string_value(
			    json_object_get(j, "request_id")));
		json_decref(j);
	}
	return buf_take(&t);
}

START_TEST(ollama_chat_streams_ndjson)
{
	struct it_resp	 r;
	char		*text, rid[64] = "", h[64];
	int		 ndone, nerr;

	start(NULL);
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat", "{\"model\":"
	    "\"it\",\"messages\":[{\"role\":\"user\",\"content\":\"#mock "
	    "{\\\"text\\\": \\\"alpha beta gamma\\\"}\"}]}", &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	ck_assert_str_eq(it_header(&r, "Content-Type", h, sizeof(h)),
	    "application/x-ndjson");
	text = ndjson_text(r.r_body.b_data, "content", &ndone, &nerr, rid,
	    sizeof(rid));
	ck_assert_str_eq(text, "alpha beta gamma");
	ck_assert_int_eq(ndone, 1);
	ck_assert_int_eq(nerr, 0);
	ck_assert_str_eq(rid, it_header(&r, "X-Request-Id", h, sizeof(h)));
	free(text);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* The default config, with reasoning in <think> tags separated into
 * its own field (reasoningOutput "field"). */
static void
start_reasoning(void)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	it_mock_endpoint(&T, "\"reasoningTags\": true, \"reasoningOutput\": "
	    "\"field\"");
	it_gateway_start(&T, NULL);
}

/* POST an Ollama chat whose backend answers "<think>plan</think>answer"
 * in 3-character pieces; think is "" (not sent) or its JSON. */
static void
think_chat(const char *path, bool stream, const char *think,
    struct it_resp *r)
{
	char	 body[512];
	bool	 chat = strcmp(path, "/api/chat") == 0;

	snprintf(body, sizeof(body), "{\"model\":\"it\",\"stream\":%s%s%s,"
	    "%s\"#mock {\\\"text\\\": \\\"<think>plan</think>answer\\\", "
	    "\\\"chunk\\\": 3}\"%s}", stream ? "true" : "false",
	    *think ? ",\"think\":" : "", think, chat ?
	    "\"messages\":[{\"role\":\"user\",\"content\":" : "\"prompt\":",
	    chat ? "}]" : "");
	ck_assert_int_eq(it_request(&T, "POST", path, body, r), 0);
	ck_assert_msg(r->r_status == 200, "%ld %s", r->r_status,
	    r->r_body.b_data);
}

/* Reasoning the cleaner separates goes out as "thinking", except when
 * the client said "think": false: then no stream line and no whole
 * answer has it, on /api/chat and /api/generate. */
START_TEST(ollama_think_false_hides_thinking)
{
	struct it_resp	 r;
	char		*text;
	int		 ndone, nerr;
	json_t		*j;

	start_reasoning();
	think_chat("/api/chat", true, "", &r);	/* the test can tell */
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"thinking\":\"pl"));
	it_resp_free(&r);
	think_chat("/api/chat", true, "false", &r);
	ck_assert_ptr_null(strstr(r.r_body.b_data, "thinking"));
	text = ndjson_text(r.r_body.b_data, "content", &ndone, &nerr, NULL, 0);
	ck_assert_str_eq(text, "answer");
	ck_assert_int_eq(ndone, 1);
	free(text);
	it_resp_free(&r);
	think_chat("/api/chat", false, "false", &r);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "content")), "answer");
	ck_assert_ptr_null(json_object_get(json_object_get(j, "message"),
	    "thinking"));
	json_decref(j);
	it_resp_free(&r);
	think_chat("/api/chat", false, "true", &r);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "thinking")), "plan");
	json_decref(j);
	it_resp_free(&r);
	think_chat("/api/generate", true, "false", &r);
	ck_assert_ptr_null(strstr(r.r_body.b_data, "thinking"));
	text = ndjson_text(r.r_body.b_data, "response", &ndone, &nerr, NULL,
	    0);
	ck_assert_str_eq(text, "answer");
	free(text);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

#define TWO_CALLS "\"#mock {\\\"text\\\": \\\"Let me check.\\\", "	\
	"\\\"tool_calls\\\": [{\\\"name\\\": \\\"get_weather\\\", "	\
	"\\\"arguments\\\": {\\\"city\\\": \\\"Paris\\\", "		\
	"\\\"unit\\\": \\\"celsius\\\"}}, {\\\"name\\\": "		\
	"\\\"get_time\\\", \\\"arguments\\\": {\\\"tz\\\": "		\
	"\\\"CET\\\"}}]}\""

/* The Ollama tool calls of one line or answer: two, whole, arguments
 * as objects. */
static void
assert_two_calls(json_t *msg)
{
	json_t	*calls = json_object_get(msg, "tool_calls"), *fn;

	ck_assert_uint_eq(json_array_size(calls), 2);
	fn = json_object_get(json_array_get(calls, 0), "function");
	ck_assert_str_eq(json_string_value(json_object_get(fn, "name")),
	    "get_weather");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(fn,
	    "arguments"), "unit")), "celsius");
	fn = json_object_get(json_array_get(calls, 1), "function");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(fn,
	    "arguments"), "tz")), "CET");
}

/* Streamed tool calls (their arguments reach the gateway in 8-byte
 * fragments) come whole on a done:false line with empty content, just
 * before the final line, which has none, as Ollama streams them; a
 * whole answer has them in its one object. */
START_TEST(ollama_tool_calls_before_the_final_line)
{
	struct it_resp	 r;
	const char	*p, *nl, *last = NULL;
	json_t		*j, *calls_line = NULL;
	char		*text;
	int		 ncalls = 0, ndone, nerr, nlines = 0, calls_at = -1;

	start(NULL);
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat", "{\"model\":"
	    "\"it\",\"messages\":[{\"role\":\"user\",\"content\":"
	    TWO_CALLS "}]}", &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	for (p = r.r_body.b_data; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		j = json_loadb(p, (size_t)(nl - p), 0, NULL);
		ck_assert_msg(j != NULL, "not JSON: %.*s", (int)(nl - p), p);
		if (json_object_get(json_object_get(j, "message"),
		    "tool_calls") != NULL) {
			ncalls++;
			calls_at = nlines;
			json_decref(calls_line);
			calls_line = json_incref(j);
		}
		last = p;
		nlines++;
		json_decref(j);
	}
	ck_assert_msg(ncalls == 1, "%d lines with calls: %s", ncalls,
	    r.r_body.b_data);
	text = ndjson_text(r.r_body.b_data, "content", &ndone, &nerr, NULL, 0);
	ck_assert_str_eq(text, "Let me check.");
	ck_assert_int_eq(ndone, 1);
	free(text);
	ck_assert(json_is_false(json_object_get(calls_line, "done")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    calls_line, "message"), "content")), "");
	assert_two_calls(json_object_get(calls_line, "message"));
	json_decref(calls_line);
	/* The next line is the last, and the final one. */
	ck_assert_int_eq(calls_at, nlines - 2);
	ck_assert_ptr_nonnull(last);
	j = it_json(last);
	ck_assert(json_is_true(json_object_get(j, "done")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "done_reason")),
	    "stop");
	json_decref(j);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat", "{\"model\":"
	    "\"it\",\"stream\":false,\"messages\":[{\"role\":\"user\","
	    "\"content\":" TWO_CALLS "}]}", &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "content")), "Let me check.");
	assert_two_calls(json_object_get(j, "message"));
	json_decref(j);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

START_TEST(ollama_chat_whole_and_generate)
{
	struct it_resp	 r;
	json_t		*j, *sent;

	start(NULL);
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat", "{\"model\":"
	    "\"it\",\"stream\":false,\"messages\":[{\"role\":\"user\","
	    "\"content\":\"#mock {\\\"text\\\": \\\"one\\\"}\"}]}", &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "content")), "one");
	ck_assert(json_is_true(json_object_get(j, "done")));
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")), "it");
	json_decref(j);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "POST", "/api/generate", "{\"model\":"
	    "\"it\",\"stream\":false,\"system\":\"[Beg_Sys]Be brief.\","
	    "\"prompt\":\"[Beg_User]#mock {\\\"text\\\": \\\"gen\\\"}\"}", &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(j, "response")),
	    "gen");
	json_decref(j);
	it_resp_free(&r);
	/* The tags became a system and a user message for the backend. */
	j = it_get_json(&T, "mock:/mock/requests");
	sent = json_object_get(json_array_get(j, json_array_size(j) - 1),
	    "body");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(sent, "messages"), 0), "content")), "Be brief.");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(sent, "messages"), 1), "role")), "user");
	json_decref(j);
	it_stop_clean(&T);
}
END_TEST

/* Open WebUI's tool-choosing request, with a system prompt holding
 * its sentence (interceptOpenWebUIToolRequests, addendum A8.8). */
#define OWUI_ASK(stream) "{\"model\":\"it\",\"stream\":" stream "," \
	"\"messages\":[{\"role\":\"system\",\"content\":\"Available " \
	"Tools: []\\nYour task is to choose and return the correct tool(s) " \
	"from the list of available tools based on the query. Answer " \
	"in JSON.\"},{\"role\":\"user\",\"content\":\"#mock " \
	"{\\\"text\\\": \\\"ran\\\"}\"}]}"

/* The body of the answer to path with body: status 200 and JSON
 * whatever "stream" said. Caller frees. */
static char *
owui_answer(const char *path, const char *body)
{
	struct it_resp	 r;
	char		 ct[64], *s;

	ck_assert_int_eq(it_request(&T, "POST", path, body, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	ck_assert_str_eq(it_header(&r, "Content-Type", ct, sizeof(ct)),
	    "application/json");
	s = strdup(r.r_body.b_data);
	it_resp_free(&r);
	return s;
}

/* WilmerAI's answers, byte for byte (Flask's jsonify: keys sorted,
 * compact, a newline at the end), with the time a carries. */
static void
owui_expect(const char *a, bool ollama)
{
	char		 want[600], at[40] = "";
	long long	 t = 0;
	const char	*p;

	if (ollama) {
		if ((p = strstr(a, "\"created_at\":\"")) != NULL)
			sscanf(p + 14, "%39[^\"]", at);
		snprintf(want, sizeof(want), "{\"created_at\":\"%s\",\"done\":"
		    "true,\"done_reason\":\"stop\",\"eval_count\":0,"
		    "\"eval_duration\":0,\"load_duration\":0,\"message\":"
		    "{\"content\":\"\",\"role\":\"assistant\"},\"model\":"
		    "\"it\",\"prompt_eval_count\":0,\"prompt_eval_duration\":0,"
		    "\"total_duration\":0}\n", at);
		ck_assert_uint_eq(strlen(at), 27);
	} else {
		if ((p = strstr(a, "\"created\":")) != NULL)
			t = atoll(p + 10);
		snprintf(want, sizeof(want), "{\"choices\":[{\"finish_reason\":"
		    "\"tool_calls\",\"index\":0,\"logprobs\":null,"
		    "\"message\":{\"content\":null,\"role\":\"assistant\","
		    "\"tool_calls\":[]}}],\"created\":%lld,\"id\":"
		    "\"chatcmpl-opnwui-tool-%lld\",\"model\":\"it\",\"object\":"
		    "\"chat.completion\",\"system_fingerprint\":"
		    "\"wmr_123456789\",\"usage\":{}}\n", t, t);
		ck_assert_int_ge(t, (long long)time(NULL) - 60);
	}
	ck_assert_str_eq(a, want);
}

START_TEST(owui_tool_requests_answered_at_once)
{
	char	*a;
	int	 i;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	it_user_set(&T, "interceptOpenWebUIToolRequests", json_true());
	it_gateway_start(&T, NULL);
	for (i = 0; i < 2; i++) {
		a = owui_answer("/v1/chat/completions", i ? OWUI_ASK("true") :
		    OWUI_ASK("false"));
		owui_expect(a, false);
		free(a);
		a = owui_answer("/api/chat", i ? OWUI_ASK("true") :
		    OWUI_ASK("false"));
		owui_expect(a, true);
		free(a);
	}
	/* No workflow ran for them. */
	ck_assert_int_eq(mock_stat("requests"), 0);
	it_stop_clean(&T);
}
END_TEST

/* The same requests for a user without the flag run the workflow. */
START_TEST(owui_tool_requests_run_without_the_flag)
{
	struct it_resp	 r;

	start(NULL);
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat",
	    OWUI_ASK("false"), &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"content\":\"ran\""));
	it_resp_free(&r);
	ck_assert_int_eq(mock_stat("requests"), 1);
	it_stop_clean(&T);
}
END_TEST

START_TEST(tags_version_and_completions)
{
	struct it_resp	 r;
	json_t		*j;
	struct sse_summary ss;

	start(NULL);
	j = it_get_json(&T, "/api/tags");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "models"), 0), "name")), "it");
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(
	    json_array_get(json_object_get(j, "models"), 0), "digest"))), 64);
	json_decref(j);
	j = it_get_json(&T, "/api/version");
	ck_assert_str_eq(json_string_value(json_object_get(j, "version")),
	    "0.9");
	json_decref(j);
	/* Legacy completions answer whole JSON without "stream", as the
	 * OpenAI spec says (WilmerAI streams them). */
	ck_assert_int_eq(it_request(&T, "POST", "/v1/completions", "{\"model\":"
	    "\"it\",\"prompt\":\"#mock {\\\"text\\\": \\\"x y\\\"}\"}", &r), 0);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"text_completion\""));
	ck_assert_ptr_null(strstr(r.r_body.b_data, "data: "));
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "choices"), 0), "text")), "x y");
	json_decref(j);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/completions", "{\"model\":"
	    "\"it\",\"stream\":true,\"prompt\":\"#mock {\\\"text\\\": "
	    "\\\"x y\\\"}\"}", &r), 0);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"text_completion\""));
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "data: [DONE]"));
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"text\":\"x\""));
	it_sse_parse(r.r_body.b_data, &ss);
	ck_assert(ss.ss_done);
	free(ss.ss_text);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "POST", "/completions", "{\"model\":"
	    "\"it\",\"stream\":false,\"prompt\":\"#mock {\\\"text\\\": "
	    "\\\"whole\\\"}\"}", &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "choices"), 0), "text")), "whole");
	json_decref(j);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* POST /api/show with body: the status, and the body's "error" when
 * want_error is not NULL. */
static void
show_fails(const char *body, long want_status, const char *want_error)
{
	struct it_resp	 r;
	json_t		*j;

	ck_assert_int_eq(it_request(&T, "POST", "/api/show", body, &r), 0);
	ck_assert_msg(r.r_status == want_status, "%s: %ld %s", body,
	    r.r_status, r.r_body.b_data);
	j = it_json(r.r_body.b_data);
	ck_assert_msg(json_is_string(json_object_get(j, "error")), "%s",
	    r.r_body.b_data);	/* Ollama's error shape */
	if (want_error != NULL)
		ck_assert_str_eq(json_string_value(json_object_get(j, "error")),
		    want_error);
	json_decref(j);
	it_resp_free(&r);
}

/* /api/ps and /api/show describe the models /api/tags lists, with the
 * same details, in Ollama's shapes; show knows only those. */
START_TEST(ps_and_show)
{
	struct it_resp	 r;
	json_t		*tags, *ps, *show, *tag, *run, *caps;

	start(NULL);
	tags = it_get_json(&T, "/api/tags");
	tag = json_array_get(json_object_get(tags, "models"), 0);
	ps = it_get_json(&T, "/api/ps");
	ck_assert_uint_eq(json_array_size(json_object_get(ps, "models")), 1);
	run = json_array_get(json_object_get(ps, "models"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(run, "name")), "it");
	ck_assert_str_eq(json_string_value(json_object_get(run, "model")),
	    "it:latest");
	ck_assert(json_equal(json_object_get(run, "digest"),
	    json_object_get(tag, "digest")));
	ck_assert(json_equal(json_object_get(run, "size"),
	    json_object_get(tag, "size")));
	ck_assert(json_equal(json_object_get(run, "details"),
	    json_object_get(tag, "details")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(run,
	    "details"), "family")), "sluice");
	ck_assert(json_is_string(json_object_get(run, "expires_at")));
	ck_assert_int_eq(json_integer_value(json_object_get(run, "size_vram")),
	    0);
	json_decref(ps);
	ck_assert_int_eq(it_request(&T, "POST", "/api/show",
	    "{\"model\":\"it\"}", &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	show = it_json(r.r_body.b_data);
	it_resp_free(&r);
	ck_assert(json_equal(json_object_get(show, "details"),
	    json_object_get(tag, "details")));
	ck_assert(json_is_string(json_object_get(show, "modelfile")));
	ck_assert_str_eq(json_string_value(json_object_get(show, "parameters")),
	    "");
	ck_assert(json_is_string(json_object_get(show, "template")));
	ck_assert(json_is_object(json_object_get(show, "model_info")));
	caps = json_object_get(show, "capabilities");
	ck_assert_str_eq(json_string_value(json_array_get(caps, 0)),
	    "completion");
	json_decref(show);
	json_decref(tags);
	/* The older "name", and the ":latest" of the tags' "model". */
	ck_assert_int_eq(it_request(&T, "POST", "/api/show",
	    "{\"name\":\"it:latest\"}", &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
	show_fails("{\"model\":\"nope\"}", 404, "model 'nope' not found");
	show_fails("{}", 400, "model is required");
	show_fails("{\"model\":\"\"}", 400, "model is required");
	show_fails("{\"model\":5}", 400, "'model' must be a string.");
	show_fails("{", 400, NULL);
	show_fails("[\"it\"]", 400, NULL);
	ck_assert_int_eq(it_request(&T, "GET", "/api/show", NULL, &r), 0);
	ck_assert_int_eq(r.r_status, 405);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* An Ollama chat on T that streams until stopped, its first line read
 * into out and its request id into rid. Returns the connection. */
static int
endless_chat(struct buf *out, char rid[64])
{
	int	 fd = it_connect(&T);

	it_send_post(fd, "/api/chat", "{\"model\":\"it\",\"messages\":[{\"role\""
	    ":\"user\",\"content\":\"#mock {\\\"forever\\\": true, "
	    "\\\"delay_ms\\\": 20}\"}]}", NULL);
	ck_assert(it_read_until(fd, out, "\"request_id\":\"", 3000));
	sscanf(strstr(out->b_data, "\"request_id\":\"") + 14, "%63[^\"]", rid);
	return fd;
}

START_TEST(delete_cancels_by_request_id)
{
	int		 fd;
	struct buf	 out = BUF_INIT;
	struct it_resp	 r;
	char		 rid[64] = "", body[160], *text;
	int		 ndone, nerr;
	long		 ms;
	json_t		*j;

	start(NULL);
	fd = endless_chat(&out, rid);
	snprintf(body, sizeof(body), "{\"request_id\":\"%s\"}", rid);
	ck_assert_int_eq(it_request(&T, "DELETE", "/api/chat", body, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")),
	    "cancelled");
	ck_assert_str_eq(json_string_value(json_object_get(j, "request_id")),
	    rid);
	json_decref(j);
	it_resp_free(&r);
	ms = wait_gone(1, 2000);
	ck_assert_msg(ms >= 0 && ms < 250, "backend closed after %ld ms", ms);
	/* The cancelled stream ends with an error line. */
	ck_assert(it_read_until(fd, &out, "cancelled by DELETE", 2000));
	text = ndjson_text(out.b_data, "content", &ndone, &nerr, NULL, 0);
	ck_assert_int_eq(nerr, 1);
	free(text);
	close(fd);
	ck_assert_int_eq(it_request(&T, "DELETE", "/api/generate",
	    "{\"request_id\":\"nope\"}", &r), 0);
	ck_assert_int_eq(r.r_status, 404);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "DELETE", "/api/chat", "{}", &r), 0);
	ck_assert_int_eq(r.r_status, 400);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "The 'request_id' field "
	    "is required."));
	it_resp_free(&r);
	buf_free(&out);
	it_stop_clean(&T);
}
END_TEST

/* DELETE sent to gateway `to` for rid: its status, and the time it
 * took in *ms. */
static long
delete_at(struct it *to, const char *rid, long *ms)
{
	struct it_resp	 r;
	char		 body[160];
	uint64_t	 t0 = it_now();
	long		 st;

	snprintf(body, sizeof(body), "{\"request_id\":\"%s\"}", rid);
	ck_assert_int_eq(it_request(to, "DELETE", "/api/chat", body, &r), 0);
	*ms = (long)(it_now() - t0);
	st = r.r_status;
	it_resp_free(&r);
	return st;
}

/* Gateway B, whose peers are A, a dead port and one that never answers,
 * cancels A's stream at once; an id that runs nowhere is 404 once the
 * silent peer's time is up, and A asking B back makes no loop. */
START_TEST(delete_reaches_peers)
{
	static struct it B;
	struct it_stuck	 stuck;
	struct buf	 out = BUF_INIT;
	char		 rid[64] = "", set[256];
	json_t		*j;
	long		 ms;
	int		 fd;

	start(NULL);
	memset(&B, 0, sizeof(B));
	it_mock_start(&B);
	it_stuck_open(&stuck);
	snprintf(set, sizeof(set), "\"node_name\": \"b\", \"peers\": "
	    "[\"http://127.0.0.1:%d\", \"http://127.0.0.1:%d\", "
	    "\"http://127.0.0.1:%d\"]", T.it_port, it_dead_port(),
	    stuck.s_port);
	it_config(&B, set, NULL);
	it_gateway_start(&B, NULL);
	fd = endless_chat(&out, rid);

	ck_assert_int_eq(delete_at(&B, rid, &ms), 200);
	ck_assert_msg(ms < 1000, "answered after %ld ms", ms);
	ck_assert(it_read_until(fd, &out, "cancelled by DELETE", 2000));
	close(fd);
	ck_assert_int_eq(delete_at(&B, "nope", &ms), 404);
	ck_assert_msg(ms >= 1900 && ms < 3500, "answered after %ld ms", ms);
	it_stuck_close(&stuck);
	/* A asks B, B does not ask again: no loop. */
	snprintf(set, sizeof(set), "\"peers\": [\"http://127.0.0.1:%d\"]",
	    B.it_port);
	it_settings(&T, set);
	kill(T.it_gw, SIGHUP);
	it_sleep(300);
	ck_assert_int_eq(delete_at(&T, "nope", &ms), 404);
	ck_assert_msg(ms < 1000, "answered after %ld ms", ms);
	j = it_get_json(&B, "/admin/workers");
	ck_assert_str_eq(json_string_value(json_object_get(j, "node")), "b");
	json_decref(j);
	buf_free(&out);
	it_stop_clean(&B);
	it_stop_clean(&T);
}
END_TEST

START_TEST(idempotency_key_displaces_older_request)
{
	int		 fd;
	struct buf	 out = BUF_INIT;
	struct it_resp	 r;
	struct sse_summary ss;

	start(NULL);
	fd = it_connect(&T);
	it_send_post(fd, "/v1/chat/completions", "{\"stream\":true,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"#mock "
	    "{\\\"forever\\\": true, \\\"delay_ms\\\": 20}\"}]}",
	    "X-Idempotency-Key: k-42\r\n");
	ck_assert(it_read_until(fd, &out, "\"content\":\"The\"", 3000));
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"messages\":[{\"role\":\"user\",\"content\":\"#mock "
	    "{\\\"text\\\": \\\"fresh\\\"}\"}]}", &r), 0);
	it_resp_free(&r);	/* no key: no displacement */
	ck_assert_int_eq(mock_stat("client_gone"), 0);
	close(fd);
	ck_assert(wait_gone(1, 2000) >= 0);
	buf_reset(&out);
	/* Same key again, through a raw connection so the header is set. */
	fd = it_connect(&T);
	it_send_post(fd, "/v1/chat/completions", "{\"stream\":true,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"#mock "
	    "{\\\"forever\\\": true, \\\"delay_ms\\\": 20}\"}]}",
	    "X-Idempotency-Key: k-43\r\n");
	ck_assert(it_read_until(fd, &out, "\"content\":\"The\"", 3000));
	{
		int	 fd2 = it_connect(&T);
		struct buf b2 = BUF_INIT;

		it_send_post(fd2, "/v1/chat/completions", "{\"stream\":true,"
		    "\"messages\":[{\"role\":\"user\",\"content\":\"#mock "
		    "{\\\"text\\\": \\\"second wins\\\"}\"}]}",
		    "X-Idempotency-Key: k-43\r\n");
		ck_assert(it_read_until(fd2, &b2, "data: [DONE]", 3000));
		it_sse_parse(strstr(b2.b_data, "\r\n\r\n") + 4, &ss);
		ck_assert_str_eq(ss.ss_text, "second wins");
		free(ss.ss_text);
		buf_free(&b2);
		close(fd2);
	}
	ck_assert(it_read_until(fd, &out, "superseded", 2000));
	ck_assert(it_read_until(fd, &out, "data: [DONE]", 2000));
	ck_assert(wait_gone(2, 2000) >= 0);	/* both long calls closed */
	close(fd);
	buf_free(&out);
	it_stop_clean(&T);
}
END_TEST

/* A non-streaming request whose client leaves before any byte of the
 * answer: the backend call is closed too. */
START_TEST(nonstream_disconnect_cancels)
{
	int	 fd;
	long	 ms;

	start(NULL);
	fd = it_connect(&T);
	it_send_post(fd, "/v1/chat/completions", "{\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"#mock {\\\"head_delay_ms\\\": 30000}\"}]}",
	    NULL);
	it_sleep(300);
	close(fd);
	ms = wait_gone(1, 3000);
	ck_assert_msg(ms >= 0 && ms < 250, "backend closed after %ld ms", ms);
	it_stop_clean(&T);
}
END_TEST

START_TEST(silent_phase_disconnect_cancels)
{
	int		 fd;
	struct buf	 out = BUF_INIT;
	long		 ms;

	start(NULL);
	fd = it_connect(&T);
	it_send_post(fd, "/api/chat", "{\"model\":\"it\",\"messages\":[{\"role\""
	    ":\"user\",\"content\":\"#mock {\\\"silent_ms\\\": 60000}\"}]}",
	    NULL);
	/* Heartbeat lines arrive while the backend says nothing. */
	ck_assert(it_read_until(fd, &out, "\"done\":false", 3000));
	close(fd);
	ms = wait_gone(1, 5000);
	ck_assert_msg(ms >= 0 && ms < 2000, "backend closed after %ld ms", ms);
	buf_free(&out);
	it_stop_clean(&T);
}
END_TEST

static int
cmp_long(const void *a, const void *b)
{
	long	 x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* 200 mid-stream disconnects: p99 of "client closed" to "backend
 * connection closed" under 250 ms; fds and workers back to idle. */
START_TEST(midstream_disconnect_latency)
{
	long		 ms[200];
	int		 i, fd, fds0, fds1;
	struct buf	 out = BUF_INIT;
	json_t		*h;

	start("\"min_workers\": 2, \"max_workers\": 2");
	fds0 = it_fd_count(T.it_gw);
	for (i = 0; i < 200; i++) {
		fd = it_connect(&T);
		it_send_post(fd, "/v1/chat/completions", "{\"stream\":true,"
		    "\"messages\":[{\"role\":\"user\",\"content\":\"#mock "
		    "{\\\"forever\\\": true, \\\"delay_ms\\\": 5}\"}]}", NULL);
		ck_assert(it_read_until(fd, &out, "\"content\":\"The\"", 3000));
		close(fd);
		ms[i] = wait_gone(i + 1, 3000);
		ck_assert_msg(ms[i] >= 0, "run %d: backend never closed", i);
		buf_reset(&out);
	}
	qsort(ms, 200, sizeof(ms[0]), cmp_long);
	ck_assert_msg(ms[197] < 250, "p99 %ld ms (max %ld)", ms[197], ms[199]);
	h = it_get_json(&T, "/health");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(h,
	    "workers"), "busy")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "crashes")), 0);
	json_decref(h);
	/* Our own test connections close asynchronously: let them. */
	for (i = 0; i < 100 && (fds1 = it_fd_count(T.it_gw)) != fds0; i++)
		it_sleep(20);
	ck_assert_int_eq(fds0, fds1);	/* nothing leaked */
	buf_free(&out);
	it_stop_clean(&T);
}
END_TEST

/* The streamed text must be exactly this request's three nonces. */
static void
check_nonce(const char *raw, const char *nonce, int cycle)
{
	struct sse_summary	 ss;
	char			 want[128];
	const char		*body = strstr(raw, "\r\n\r\n");

	ck_assert_ptr_nonnull(body);
	it_sse_parse(body + 4, &ss);
	snprintf(want, sizeof(want), "%s %s %s", nonce, nonce, nonce);
	ck_assert_msg(strcmp(ss.ss_text, want) == 0 && ss.ss_done,
	    "cycle %d got '%s'", cycle, ss.ss_text);
	free(ss.ss_text);
}

/* Read a random prefix of a stream, hang up, go again at once; every
 * complete answer holds only its own nonce. */
START_TEST(no_leak_between_requests)
{
	char		 body[256], nonce[32];
	struct buf	 out = BUF_INIT;
	int		 i, fd, cycles = getenv("IT_NONCE_CYCLES") ?
			    atoi(getenv("IT_NONCE_CYCLES")) : 10000;
	unsigned	 seed = 42;

	start("\"min_workers\": 1, \"max_workers\": 1");
	for (i = 0; i < cycles; i++) {
		snprintf(nonce, sizeof(nonce), "N%06dX", i);
		snprintf(body, sizeof(body), "{\"stream\":true,\"messages\":"
		    "[{\"role\":\"user\",\"content\":\"%s %s %s\\n#mock "
		    "{\\\"echo\\\": true, \\\"chunk\\\": 3}\"}]}", nonce, nonce,
		    nonce);
		fd = it_connect(&T);
		it_send_post(fd, "/v1/chat/completions", body, NULL);
		if (i % 2 == 0) {	/* cut at a random point */
			char	 tmp[512];
			size_t	 want = 1 + rand_r(&seed) % 900, got = 0;
			ssize_t	 k;

			while (got < want && (k = read(fd, tmp, want - got <
			    sizeof(tmp) ? want - got : sizeof(tmp))) > 0)
				got += (size_t)k;
		} else {
			ck_assert(it_read_until(fd, &out, "data: [DONE]", 5000));
			check_nonce(out.b_data, nonce, i);
			buf_reset(&out);
		}
		close(fd);
	}
	buf_free(&out);
	it_stop_clean(&T);
}
END_TEST

START_TEST(metrics_and_access_log_move)
{
	struct it_resp	 r;
	char		 h[64];
	size_t		 from = 0;
	int		 i;

	start(NULL);
	it_wait_idle(&T, 2);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
		    "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
		    &r), 0);
		it_resp_free(&r);
	}
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", "{",
	    &r), 0);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "DELETE", "/api/chat",
	    "{\"request_id\":\"x\"}", &r), 0);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "GET", "/metrics", NULL, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	ck_assert_ptr_nonnull(strstr(it_header(&r, "Content-Type", h,
	    sizeof(h)), "text/plain"));
	ck_assert(it_metric_in(r.r_body.b_data, "sluice_http_requests_total{route="
	    "\"chat\",status=\"200\"}") == 3);
	ck_assert(it_metric_in(r.r_body.b_data, "sluice_http_requests_total{route="
	    "\"chat\",status=\"400\"}") == 1);
	ck_assert(it_metric_in(r.r_body.b_data, "sluice_http_requests_total{route="
	    "\"cancel\",status=\"404\"}") == 1);
	ck_assert(it_metric_in(r.r_body.b_data, "sluice_http_request_duration_"
	    "seconds_count{route=\"chat\"}") == 4);
	ck_assert(it_metric_in(r.r_body.b_data, "sluice_workers{state=\"idle\"}")
	    == 2);
	ck_assert(it_metric_in(r.r_body.b_data, "sluice_worker_restarts_total{"
	    "cause=\"crash\"}") == 0);
	it_resp_free(&r);
	/* One access-log line per request, with the worker that served it. */
	ck_assert(it_log_wait(&T, "\"POST /v1/chat/completions\" 200", &from,
	    1000));
	ck_assert(it_log_wait(&T, "route=chat worker=", &from, 1000));
	it_stop_clean(&T);
}
END_TEST

static Suite *
it_api_suite(void)
{
	Suite	*s = suite_create("integration-api");

	test_case(s, "ollama_stream", ollama_chat_streams_ndjson, 60);
	test_case(s, "ollama_whole", ollama_chat_whole_and_generate, 60);
	test_case(s, "ollama_think", ollama_think_false_hides_thinking, 60);
	test_case(s, "ollama_tool_calls", ollama_tool_calls_before_the_final_line, 60);
	test_case(s, "tags_completions", tags_version_and_completions, 60);
	test_case(s, "ps_show", ps_and_show, 60);
	test_case(s, "owui", owui_tool_requests_answered_at_once, 60);
	test_case(s, "owui_off", owui_tool_requests_run_without_the_flag, 60);
	test_case(s, "delete", delete_cancels_by_request_id, 60);
	test_case(s, "peers", delete_reaches_peers, 60);
	test_case(s, "idempotency", idempotency_key_displaces_older_request, 60);
	test_case(s, "nonstream_disconnect", nonstream_disconnect_cancels, 60);
	test_case(s, "silent_disconnect", silent_phase_disconnect_cancels, 60);
	test_case(s, "disconnect_latency", midstream_disconnect_latency, 120);
	test_case(s, "no_leak", no_leak_between_requests, 600);
	test_case(s, "metrics", metrics_and_access_log_move, 60);
	return s;
}

int
main(void)
{
	return it_main(it_api_suite());
}
