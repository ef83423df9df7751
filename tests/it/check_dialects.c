/* check_dialects.c - integration: every non-OpenAI-chat backend dialect through the real gateway, workers and mock. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../testmain.h"
#include "harness.h"

/*
 * One gateway serves all five dialects: user "it" lists shared
 * workflows, and the model field names one per dialect, each a single
 * Standard node on an endpoint of that api type (the mock). What the
 * backend receives is compared with tests/golden/<dialect>.<mode>.json
 * as parsed JSON; SLUICE_UPDATE_GOLDEN=1 writes the files instead
 * (then read every change before committing it).
 */

struct dialect {
	const char	*d_model;	/* shared workflow and golden name */
	const char	*d_apitype;	/* ApiTypes/<name>.json */
	const char	*d_type;	/* its "type" */
	const char	*d_preset_type;
	const char	*d_truncate;	/* truncateLengthPropertyName */
	const char	*d_max_new;	/* maxNewTokensPropertyName */
	const char	*d_samplers;	/* samplerFieldMap members */
	const char	*d_path_stream;
	const char	*d_path_whole;
	bool		 d_template;	/* one prompt string from a template */
	bool		 d_claude;	/* x-api-key, anthropic-version */
};

static const struct dialect dialects[] = {
	{ "completion", "Completions", "openAIV1Completion",
	    "OpenAiCompatibleApis", "", "max_tokens",
	    "\"temperature\": \"temperature\", \"top_p\": \"top_p\", "
	    "\"stop\": \"stop\"",
	    "/v1/completions", "/v1/completions", true, false },
	{ "ollama-chat", "OllamaChat", "ollamaApiChat", "OllamaApiChat",
	    "num_ctx", "num_predict",
	    "\"temperature\": \"temperature\", \"top_p\": \"top_p\", "
	    "\"stop\": \"stop\"",
	    "/api/chat", "/api/chat", false, false },
	{ "ollama-generate", "OllamaGenerate", "ollamaApiGenerate",
	    "OllamaApiGenerate", "num_ctx", "num_predict",
	    "\"temperature\": \"temperature\", \"top_p\": \"top_p\", "
	    "\"stop\": \"stop\"",
	    "/api/generate", "/api/generate", true, false },
	{ "kobold", "KoboldCpp", "koboldCppGenerate", "KoboldCpp",
	    "max_context_length", "max_length",
	    "\"temperature\": \"temperature\", \"top_p\": \"top_p\", "
	    "\"stop\": \"stop_sequence\"",
	    "/api/extra/generate/stream", "/api/v1/generate", true, false },
	{ "claude", "Claude", "claudeMessages", "ClaudeMessages", "",
	    "max_tokens",
	    "\"temperature\": \"temperature\", \"top_p\": \"top_p\", "
	    "\"stop\": \"stop_sequences\"",
	    "/v1/messages", "/v1/messages", false, true },
};

#define NDIALECTS	(sizeof(dialects) / sizeof(dialects[0]))
#define JOKE		"Why did the chicken cross the road?"

static struct it	 T;

/* ---- configuration ------------------------------------------------- */

static void
write_dialect(const struct dialect *d)
{
	char	 rel[256], text[2048];

	snprintf(rel, sizeof(rel), "ApiTypes/%s.json", d->d_apitype);
	snprintf(text, sizeof(text), "{\"type\": \"%s\", \"presetType\": "
	    "\"%s\", \"truncateLengthPropertyName\": \"%s\", "
	    "\"maxNewTokensPropertyName\": \"%s\", \"streamPropertyName\": "
	    "\"stream\", \"samplerFieldMap\": {%s}}\n", d->d_type,
	    d->d_preset_type, d->d_truncate, d->d_max_new, d->d_samplers);
	it_file(&T, rel, text);
	snprintf(rel, sizeof(rel), "Endpoints/it/%s.json", d->d_apitype);
	snprintf(text, sizeof(text), "{\"endpoint\": \"http://127.0.0.1:%d/\","
	    " \"apiTypeConfigFileName\": \"%s\", \"modelNameToSendToAPI\": "
	    "\"back-model\", \"promptTemplate\": %s, \"maxContextTokenSize\": "
	    "4096, \"apiKey\": \"sk-test\", \"addGenerationPrompt\": true}\n",
	    T.it_mock_port, d->d_apitype, d->d_template ? "\"turns\"" :
	    "null");
	it_file(&T, rel, text);
	snprintf(rel, sizeof(rel), "Presets/%s/it/Warm.json",
	    d->d_preset_type);
	it_file(&T, rel, "{\"temperature\": 0.5, \"top_p\": 0.75, "
	    "\"top_k\": null}\n");
	snprintf(rel, sizeof(rel), "Workflows/_shared/%s/_DefaultWorkflow.json",
	    d->d_model);
	snprintf(text, sizeof(text), "[{\"title\": \"Answer\", \"type\": "
	    "\"Standard\", \"endpointName\": \"%s\", \"preset\": \"Warm\", "
	    "\"systemPrompt\": \"You are terse. {chat_system_prompt}\", "
	    "\"prompt\": \"\", \"lastMessagesToSendInsteadOfPrompt\": 5, "
	    "\"maxResponseSizeInTokens\": 300}]\n", d->d_apitype);
	it_file(&T, rel, text);
}

/* The mock, a folder with every dialect, the gateway (nworkers). */
static void
start(int nworkers)
{
	char	 settings[128];
	size_t	 i;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	snprintf(settings, sizeof(settings), "\"min_workers\": %d, "
	    "\"max_workers\": %d", nworkers, nworkers);
	it_config(&T, settings, NULL);
	it_allow_shared(&T);
	it_turns_template(&T);
	for (i = 0; i < NDIALECTS; i++)
		write_dialect(&dialects[i]);
	it_gateway_start(&T, NULL);
	it_wait_idle(&T, nworkers);
}

/* ---- requests ------------------------------------------------------ */

/* A conversation for model d ending with the user's text. */
static char *
chat_body(const struct dialect *d, bool stream, const char *user_text)
{
	json_t	*b = json_pack("{s:s,s:b,s:[{s:s,s:s},{s:s,s:s},{s:s,s:s},"
		    "{s:s,s:s}]}", "model", d->d_model, "stream", stream,
		    "messages", "role", "system", "content", "Be brief.",
		    "role", "user", "content", "Hi", "role", "assistant",
		    "content", "Hello!", "role", "user", "content", user_text);
	char	*s = json_dumps(b, 0);

	json_decref(b);
	return s;
}

/* Header name of a logged request (any case), or NULL. */
static const char *
logged_header(json_t *rec, const char *name)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(json_object_get(rec, "headers"), k, v)
		if (strcasecmp(k, name) == 0)
			return json_string_value(v);
	return NULL;
}

/* The text a client received: the SSE content (with [DONE] and no
 * error event) or the message content; status must be 200. */
static char *
answer_text(const struct it_resp *r, bool stream, const char *model)
{
	struct sse_summary	 ss;
	json_t			*j;
	char			*s;

	ck_assert_msg(r->r_status == 200, "%s: %ld %s", model, r->r_status,
	    r->r_body.b_data);
	if (stream) {
		it_sse_parse(r->r_body.b_data, &ss);
		ck_assert_msg(ss.ss_done && !ss.ss_error, "%s: %s", model,
		    r->r_body.b_data);
		ck_assert_int_gt(ss.ss_chunks, 3);	/* streamed */
		return ss.ss_text;
	}
	j = it_json(r->r_body.b_data);
	s = strdup(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(j, "choices"), 0), "message"),
	    "content")));
	json_decref(j);
	return s;
}

/* Ask model d; the client must get want; returns the one request the
 * backend saw. */
static json_t *
ask_ok(const struct dialect *d, bool stream, const char *user_text,
    const char *want)
{
	struct it_resp	 r;
	char		*body = chat_body(d, stream, user_text), *got;
	json_t		*log, *rec;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	got = answer_text(&r, stream, d->d_model);
	ck_assert_msg(strcmp(got, want) == 0, "%s (%s): got '%s', want '%s'",
	    d->d_model, stream ? "stream" : "whole", got, want);
	free(got);
	it_resp_free(&r);
	free(body);
	log = it_mock_log(&T, true);
	ck_assert_msg(json_array_size(log) == 1, "%s: %zu backend calls",
	    d->d_model, json_array_size(log));
	rec = json_incref(json_array_get(log, 0));
	json_decref(log);
	return rec;
}

/* ---- golden files -------------------------------------------------- */

/* a (golden) against b (received), both pretty-printed: the lines
 * between their common head and tail, with three lines of context.
 * Both strings are cut up. */
static void
print_diff(const char *name, char *a, char *b)
{
	char	*la[4096], *lb[4096];
	size_t	 na = 0, nb = 0, pre = 0, suf = 0, i;

	for (la[na] = strtok(a, "\n"); la[na] != NULL && na + 1 < 4096;)
		la[++na] = strtok(NULL, "\n");
	for (lb[nb] = strtok(b, "\n"); lb[nb] != NULL && nb + 1 < 4096;)
		lb[++nb] = strtok(NULL, "\n");
	while (pre < na && pre < nb && strcmp(la[pre], lb[pre]) == 0)
		pre++;
	while (suf < na - pre && suf < nb - pre &&
	    strcmp(la[na - 1 - suf], lb[nb - 1 - suf]) == 0)
		suf++;
	fprintf(stderr, "--- tests/golden/%s.json\n+++ received by the "
	    "backend\n", name);
	for (i = pre > 3 ? pre - 3 : 0; i < pre; i++)
		fprintf(stderr, " %s\n", la[i]);
	for (i = pre; i < na - suf; i++)
		fprintf(stderr, "-%s\n", la[i]);
	for (i = pre; i < nb - suf; i++)
		fprintf(stderr, "+%s\n", lb[i]);
	for (i = na - suf; i < na && i < na - suf + 3; i++)
		fprintf(stderr, " %s\n", la[i]);
}

/* The body the backend got equals tests/golden/<name>.json. */
static void
assert_golden(json_t *got, const char *name)
{
	const char	*src = getenv("SLUICE_SRC");
	char		 path[512], *a, *b;
	json_error_t	 je;
	json_t		*want;
	size_t		 fl = JSON_INDENT(2) | JSON_SORT_KEYS;
	FILE		*f;

	snprintf(path, sizeof(path), "%s/tests/golden/%s.json",
	    src != NULL ? src : ".", name);
	if (getenv("SLUICE_UPDATE_GOLDEN") != NULL) {
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		a = json_dumps(got, JSON_INDENT(2));
		fprintf(f, "%s\n", a);
		free(a);
		ck_assert_int_eq(fclose(f), 0);
		return;
	}
	want = json_load_file(path, 0, &je);
	ck_assert_msg(want != NULL, "%s: %s", path, je.text);
	if (!json_equal(want, got)) {
		a = json_dumps(want, fl);
		b = json_dumps(got, fl);
		print_diff(name, a, b);
		free(a);
		free(b);
		ck_abort_msg("the body sent for %s differs from %s (diff on "
		    "stderr)", name, path);
	}
	json_decref(want);
}

/* Path, headers and body of one backend request. */
static void
assert_request(const struct dialect *d, json_t *rec, bool stream)
{
	char		 name[64];
	const char	*path = json_string_value(json_object_get(rec,
			    "path"));

	ck_assert_str_eq(path, stream ? d->d_path_stream : d->d_path_whole);
	ck_assert_str_eq(logged_header(rec, "Content-Type"),
	    "application/json");
	if (d->d_claude) {
		ck_assert_str_eq(logged_header(rec, "x-api-key"), "sk-test");
		ck_assert_str_eq(logged_header(rec, "anthropic-version"),
		    "2023-06-01");
		ck_assert_ptr_null(logged_header(rec, "Authorization"));
	} else {
		ck_assert_str_eq(logged_header(rec, "Authorization"),
		    "Bearer sk-test");
		ck_assert_ptr_null(logged_header(rec, "x-api-key"));
	}
	snprintf(name, sizeof(name), "%s.%s", d->d_model, stream ? "stream" :
	    "whole");
	assert_golden(json_object_get(rec, "body"), name);
}

/* ---- the tests ----------------------------------------------------- */

/* Streamed and whole: the exact request, and the client's answer. */
static void
golden_pair(const struct dialect *d)
{
	json_t	*rec;
	int	 i;

	for (i = 0; i < 2; i++) {
		rec = ask_ok(d, i == 0, "Tell me a joke\n#mock {\"text\": \""
		    JOKE "\", \"chunk\": 4}", JOKE);
		assert_request(d, rec, i == 0);
		json_decref(rec);
	}
}

/* Events cut in pieces of a few bytes (through UTF-8 and JSON), and
 * lines ending in CRLF, parse to the same text. */
static void
split_and_crlf(const struct dialect *d)
{
	static const char	*text = "Déjà vu, naïve café: \"quoted\" "
				    "{braces} and a tab\t.";
	char			 user[512], *esc;
	json_t			*rec, *js = json_string(text);

	esc = json_dumps(js, JSON_ENCODE_ANY);
	json_decref(js);
	snprintf(user, sizeof(user), "x\n#mock {\"text\": %s, \"chunk\": 3, "
	    "\"split\": 5}", esc);
	rec = ask_ok(d, true, user, text);
	json_decref(rec);
	snprintf(user, sizeof(user), "x\n#mock {\"text\": %s, \"chunk\": 2, "
	    "\"crlf\": true}", esc);
	rec = ask_ok(d, true, user, text);
	json_decref(rec);
	snprintf(user, sizeof(user), "x\n#mock {\"text\": %s, \"crlf\": true, "
	    "\"split\": 7}", esc);
	rec = ask_ok(d, true, user, text);
	json_decref(rec);
	free(esc);
}

/* A clean error naming what: HTTP want (502 unless the backend's status
 * keeps its meaning: docs/api.md) with a JSON error; or, for a stream
 * whose head went out while the call was retried, no text, an error
 * event and [DONE]. */
static void
assert_clean_error(const char *model, long status, const char *body,
    bool stream, long want, const char *what)
{
	struct sse_summary	 ss;
	json_t			*j;
	const char		*msg;

	if (stream && status == 200) {
		it_sse_parse(body, &ss);
		ck_assert_msg(*ss.ss_text == '\0' && ss.ss_error && ss.ss_done &&
		    strstr(body, what) != NULL, "%s: %s", model, body);
		free(ss.ss_text);
		return;
	}
	ck_assert_msg(status == want, "%s: %ld %s", model, status, body);
	j = it_json(body);
	msg = json_string_value(json_object_get(json_object_get(j, "error"),
	    "message"));
	ck_assert_msg(msg != NULL && strstr(msg, what) != NULL, "%s: %s",
	    model, body);
	json_decref(j);
}

/* A call the mock fails as script says: a clean error with status
 * want, naming what. */
static void
ask_error(const struct dialect *d, bool stream, const char *script,
    long want, const char *what)
{
	struct it_resp	 r;
	char		 user[256], *body;

	snprintf(user, sizeof(user), "x\n#mock %s", script);
	body = chat_body(d, stream, user);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	assert_clean_error(d->d_model, r.r_status, r.r_body.b_data, stream,
	    want, what);
	it_resp_free(&r);
	free(body);
	json_decref(it_mock_log(&T, true));
}

/* Cut after three pieces: the client keeps them, then gets an error
 * event and a proper end; garbage and a 4xx are clean errors. */
static void
failures(const struct dialect *d)
{
	struct it_resp		 r;
	struct sse_summary	 ss;
	char			*body;

	body = chat_body(d, true, "x\n#mock {\"text\": \"a b c d e f\", "
	    "\"disconnect_after\": 3, \"delay_ms\": 5}");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_sse_parse(r.r_body.b_data, &ss);
	ck_assert_msg(strcmp(ss.ss_text, "a b c") == 0 && ss.ss_error &&
	    ss.ss_done, "%s: %s", d->d_model, r.r_body.b_data);
	free(ss.ss_text);
	it_resp_free(&r);
	free(body);
	json_decref(it_mock_log(&T, true));
	ask_error(d, false, "{\"disconnect_after\": 0}", 502, d->d_apitype);
	ask_error(d, false, "{\"garbage\": true}", 502, d->d_apitype);
	ask_error(d, true, "{\"garbage\": true}", 502, d->d_apitype);
	/* The dialect's error body gives the message. */
	ask_error(d, false, "{\"status\": 400}",
	    400, "answered HTTP 400: mock error 400");
	ask_error(d, true, "{\"status\": 404}", 502,
	    "answered HTTP 404: mock error 404");
}

static void
one_dialect(const struct dialect *d)
{
	start(1);
	golden_pair(d);
	split_and_crlf(d);
	failures(d);
	it_stop_clean(&T);
}

START_TEST(openai_completion)
{
	one_dialect(&dialects[0]);
}
END_TEST

START_TEST(ollama_chat)
{
	one_dialect(&dialects[1]);
}
END_TEST

START_TEST(ollama_generate)
{
	one_dialect(&dialects[2]);
}
END_TEST

START_TEST(kobold)
{
	one_dialect(&dialects[3]);
}
END_TEST

START_TEST(claude)
{
	one_dialect(&dialects[4]);
}
END_TEST

/* A 500 is tried three times (1 s, then 2 s apart: WilmerAI's retries
 * for an endpoint without backup), then the client gets a clean 502,
 * streamed or not. All dialects at once, to keep it to three seconds. */
START_TEST(server_errors)
{
	struct it_stream	 s[NDIALECTS * 2];
	char			*bodies[NDIALECTS * 2];
	json_t			*log;
	size_t			 i;

	start((int)NDIALECTS * 2);
	memset(s, 0, sizeof(s));
	for (i = 0; i < NDIALECTS * 2; i++) {
		bodies[i] = chat_body(&dialects[i / 2], i % 2 == 0,
		    "x\n#mock {\"status\": 500}");
		s[i].s_body = bodies[i];
	}
	it_streams(&T, s, NDIALECTS * 2, 20000, NULL, NULL);
	for (i = 0; i < NDIALECTS * 2; i++) {
		assert_clean_error(dialects[i / 2].d_model, s[i].s_status,
		    s[i].s_out.b_data, i % 2 == 0, 502, "answered HTTP 500");
		buf_free(&s[i].s_out);
		free(bodies[i]);
	}
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), NDIALECTS * 2 * 3);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* Ask model through Ollama's /api/chat, whole, with "think": think
 * (JSON text); the client must get the joke. Returns the one request
 * the backend saw. */
static json_t *
ask_think(const char *model, const char *think)
{
	struct it_resp	 r;
	char		 body[1024];
	json_t		*log, *rec, *j;

	snprintf(body, sizeof(body), "{\"model\": \"%s\", \"stream\": false, "
	    "\"think\": %s, \"messages\": [{\"role\": \"system\", "
	    "\"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": "
	    "\"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello!\"}, "
	    "{\"role\": \"user\", \"content\": \"Tell me a joke\\n#mock "
	    "{\\\"text\\\": \\\"" JOKE "\\\", \\\"chunk\\\": 4}\"}]}",
	    model, think);
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat", body, &r), 0);
	ck_assert_msg(r.r_status == 200, "%s: %ld %s", model, r.r_status,
	    r.r_body.b_data);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "content")), JOKE);
	json_decref(j);
	it_resp_free(&r);
	log = it_mock_log(&T, true);
	ck_assert_msg(json_array_size(log) == 1, "%s: %zu backend calls",
	    model, json_array_size(log));
	rec = json_incref(json_array_get(log, 0));
	json_decref(log);
	return rec;
}

/* An Ollama client's "think" reaches an Ollama backend as it was sent
 * (tests/golden/<dialect>.think.json), and no other dialect:
 * OpenAI-compatible chat and completions have no such field. */
START_TEST(think_reaches_ollama_only)
{
	json_t	*rec;

	start(1);
	rec = ask_think("ollama-chat", "false");
	assert_golden(json_object_get(rec, "body"), "ollama-chat.think");
	json_decref(rec);
	rec = ask_think("ollama-generate", "\"high\"");
	assert_golden(json_object_get(rec, "body"), "ollama-generate.think");
	json_decref(rec);
	rec = ask_think("it", "false");		/* the OpenAI chat endpoint */
	ck_assert_str_eq(json_string_value(json_object_get(rec, "path")),
	    "/v1/chat/completions");
	ck_assert_ptr_null(json_object_get(json_object_get(rec, "body"),
	    "think"));
	json_decref(rec);
	rec = ask_think("completion", "true");
	ck_assert_ptr_nonnull(json_object_get(json_object_get(rec, "body"),
	    "prompt"));
	ck_assert_ptr_null(json_object_get(json_object_get(rec, "body"),
	    "think"));
	json_decref(rec);
	it_stop_clean(&T);
}
END_TEST

/* ---- structured output (addendum A8.5) ----------------------------- */

/* A shared workflow "so-<name>" whose one node, on api type <at> (the
 * mock, with at_extra), asks for the schema file schema. */
static void
write_so(const char *name, const char *type, const char *at_extra,
    const char *schema)
{
	char	 rel[256], text[1024];

	snprintf(rel, sizeof(rel), "ApiTypes/So-%s.json", name);
	snprintf(text, sizeof(text), "{\"type\": \"%s\", \"presetType\": "
	    "\"OpenAiCompatibleApis\", \"truncateLengthPropertyName\": \"\","
	    " \"maxNewTokensPropertyName\": \"max_tokens\", "
	    "\"streamPropertyName\": \"stream\"%s}\n", type, at_extra);
	it_file(&T, rel, text);
	snprintf(rel, sizeof(rel), "Endpoints/it/So-%s.json", name);
	snprintf(text, sizeof(text), "{\"endpoint\": \"http://127.0.0.1:%d/\","
	    " \"apiTypeConfigFileName\": \"So-%s\", \"modelNameToSendToAPI\":"
	    " \"m\", \"promptTemplate\": null, \"maxContextTokenSize\": "
	    "4096}\n", T.it_mock_port, name);
	it_file(&T, rel, text);
	snprintf(rel, sizeof(rel), "Workflows/_shared/so-%s/_DefaultWorkflow.json",
	    name);
	snprintf(text, sizeof(text), "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"So-%s\", \"prompt\": \"\", "
	    "\"lastMessagesToSendInsteadOfPrompt\": 2, "
	    "\"structuredOutputFile\": \"%s\"}]\n", name, schema);
	it_file(&T, rel, text);
}

/* POST body to the OpenAI chat route: its HTTP status must be want.
 * Returns the one backend request it made (caller decrefs) when want
 * is 200, else NULL with the answer's body in *err_body (caller frees;
 * err_body may be NULL then). */
static json_t *
post_chat(const char *body, long want, char **err_body)
{
	struct it_resp	 r;
	json_t		*log, *rec = NULL;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == want, "%ld %s", r.r_status,
	    r.r_body.b_data);
	if (want != 200) {
		if (err_body != NULL)
			*err_body = strdup(r.r_body.b_data);
		it_resp_free(&r);
		return NULL;
	}
	it_resp_free(&r);
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 1);
	rec = json_incref(json_array_get(log, 0));
	json_decref(log);
	return rec;
}

/* POST a chat for model; 200 and the one backend request it made, or
 * the status when it is not 200 (the request record NULL then). */
static json_t *
so_ask(const char *model, long want)
{
	char		 body[256], *err = NULL;
	json_t		*rec;

	snprintf(body, sizeof(body), "{\"model\": \"%s\", \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"Weather?\"}]}", model);
	rec = post_chat(body, want, &err);
	if (want != 200) {
		ck_assert_ptr_nonnull(strstr(err, "structuredOutputFile"));
		free(err);
	}
	return rec;
}

/* The schema a node names reaches the backend where its api type says,
 * as tests/golden/structured.<name>.json shows: OpenAI's wrapper,
 * strict or not, Ollama's raw "format", a dotted path through a value
 * that was not an object. The user's sub-folder comes first. */
START_TEST(structured_output_attached)
{
	json_t	*rec;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1", NULL);
	it_allow_shared(&T);
	it_file(&T, "StructuredOutputs/weather.json", "{\"type\": \"object\","
	    " \"properties\": {\"root\": {\"type\": \"string\"}}}");
	it_file(&T, "StructuredOutputs/it/weather.json", "{\"type\": "
	    "\"object\", \"properties\": {\"city\": {\"type\": "
	    "\"string\"}}, \"required\": [\"city\"]}");
	it_file(&T, "StructuredOutputs/empty.json", "{}");
	write_so("openai", "openAIChatCompletion", ", \"structuredOutput\": "
	    "{\"field\": \"response_format\", \"style\": "
	    "\"openaiJsonSchema\", \"strict\": false}", "weather");
	write_so("ollama", "ollamaApiChat", ", \"structuredOutput\": "
	    "{\"field\": \"format\", \"style\": \"raw\"}", "weather");
	write_so("dotted", "openAIChatCompletion", ", \"structuredOutput\": "
	    "{\"field\": \"stream.extra.schema\", \"style\": "
	    "\"openaiJsonSchema\"}", "weather");
	write_so("noblock", "openAIChatCompletion", "", "weather");
	write_so("missing", "openAIChatCompletion", "", "nope");
	write_so("empty", "openAIChatCompletion", "", "empty");
	write_so("unsafe", "openAIChatCompletion", "", "../weather");
	it_gateway_start(&T, NULL);
	rec = so_ask("so-openai", 200);
	assert_golden(json_object_get(rec, "body"), "structured.openai");
	json_decref(rec);
	rec = so_ask("so-ollama", 200);
	assert_golden(json_object_get(rec, "body"), "structured.ollama");
	json_decref(rec);
	rec = so_ask("so-dotted", 200);
	assert_golden(json_object_get(rec, "body"), "structured.dotted");
	json_decref(rec);
	/* no block: the request goes out without the schema */
	rec = so_ask("so-noblock", 200);
	ck_assert_ptr_null(json_object_get(json_object_get(rec, "body"),
	    "response_format"));
	json_decref(rec);
	so_ask("so-missing", 500);
	so_ask("so-empty", 500);
	so_ask("so-unsafe", 500);
	rec = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(rec), 0);
	json_decref(rec);
	it_stop_clean(&T);
}
END_TEST

/* ---- appendNativeToolExchange (addendum A8.2) ------------------------ */

/* A conversation that ends with a tool exchange, as an OpenAI client
 * sends it, asking for model. */
static const char *
exchange_body(const char *model, char *buf, size_t len)
{
	snprintf(buf, len, "{\"model\": \"%s\", \"messages\": ["
	    "{\"role\": \"system\", \"content\": \"Be brief.\"}, "
	    "{\"role\": \"user\", \"content\": \"What is in /tmp?\"}, "
	    "{\"role\": \"assistant\", \"content\": null, \"tool_calls\": "
	    "[{\"id\": \"call_1\", \"type\": \"function\", \"function\": "
	    "{\"name\": \"ls\", \"arguments\": \"{\\\"path\\\": "
	    "\\\"/tmp\\\"}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": "
	    "\"call_1\", \"content\": \"a.txt b.txt\"}]}", model);
	return buf;
}

/* The exchange after the node's prompt, in each backend's own shape:
 * tests/golden/exchange.<dialect>.json. The prompt's variable speaks of
 * the turn before the exchange. */
START_TEST(tool_exchange_appended)
{
	static const char *const eps[] = { "openai", "ollama" };
	static const char *const types[] = { "openAIChatCompletion",
	    "ollamaApiChat" };
	char		 rel[128], text[1024], body[1024], golden[64];
	json_t		*rec;
	size_t		 i;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1", NULL);
	it_allow_shared(&T);
	for (i = 0; i < 2; i++) {
		write_so(eps[i], types[i], "", "unused");
		snprintf(rel, sizeof(rel), "Workflows/_shared/so-%s/"
		    "_DefaultWorkflow.json", eps[i]);
		snprintf(text, sizeof(text), "[{\"type\": \"Standard\", "
		    "\"endpointName\": \"So-%s\", \"systemPrompt\": "
		    "\"{chat_system_prompt}\", \"prompt\": \"Answer: "
		    "{chat_user_prompt_last_one}\", "
		    "\"appendNativeToolExchange\": true}]\n", eps[i]);
		it_file(&T, rel, text);
	}
	it_gateway_start(&T, NULL);
	for (i = 0; i < 2; i++) {
		snprintf(rel, sizeof(rel), "so-%s", eps[i]);
		rec = post_chat(exchange_body(rel, body, sizeof(body)), 200,
		    NULL);
		snprintf(golden, sizeof(golden), "exchange.%s", eps[i]);
		assert_golden(json_object_get(rec, "body"), golden);
		json_decref(rec);
	}
	it_stop_clean(&T);
}
END_TEST

/* ---- tool_choice enforced through structured output (A8.6) ---------- */

/* Two tools, one without parameters; the request demands choice (JSON
 * text). The user text scripts the mock's answer (script: JSON text). */
static const char *
force_body(const char *model, const char *choice, bool stream,
    const char *script, char *buf, size_t len)
{
	char	 content[512], *t;
	json_t	*o;

	snprintf(content, sizeof(content), "Weather in Paris?\n#mock %s",
	    script);
	o = json_pack("{s:s,s:b,s:o,s:[{s:s,s:{s:s,s:s,s:{s:s,s:{s:{s:s}}}}},"
	    "{s:s,s:{s:s}}],s:[{s:s,s:s}]}", "model", model, "stream", stream,
	    "tool_choice", json_loads(choice, JSON_DECODE_ANY, NULL),
	    "tools", "type", "function", "function", "name", "get_weather",
	    "description", "Weather in a city:", "parameters", "type",
	    "object", "properties", "city", "type", "string",
	    "type", "function", "function", "name", "now",
	    "messages", "role", "user", "content", content);
	ck_assert_ptr_nonnull(o);
	t = json_dumps(o, JSON_COMPACT);
	snprintf(buf, len, "%s", t);
	free(t);
	json_decref(o);
	return buf;
}

/* POST it; the answer (status 200 asserted) and the backend's
 * requests. */
static json_t *
force_ask(const char *body, struct it_resp *r)
{
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    r), 0);
	ck_assert_msg(r->r_status == 200, "%ld %s", r->r_status,
	    r->r_body.b_data);
	return it_mock_log(&T, true);
}

#define FORCE_CALL	"{\"text\": \"  {\\\"name\\\": \\\"get_weather\\\", " \
	"\\\"arguments\\\": {\\\"city\\\": \\\"Par\\u00eds\\\"}} \"}"

/* The one call of a whole answer, as the client sees it. */
static void
assert_whole_call(const struct it_resp *r)
{
	json_t	*o = json_loads(r->r_body.b_data, 0, NULL);
	json_t	*ch = json_array_get(json_object_get(o, "choices"), 0);
	json_t	*m = json_object_get(ch, "message");
	json_t	*c = json_array_get(json_object_get(m, "tool_calls"), 0);
	json_t	*f = json_object_get(c, "function");

	ck_assert_msg(c != NULL, "%s", r->r_body.b_data);
	ck_assert(json_is_null(json_object_get(m, "content")));
	ck_assert_str_eq(json_string_value(json_object_get(ch,
	    "finish_reason")), "tool_calls");
	ck_assert_str_eq(json_string_value(json_object_get(f, "name")),
	    "get_weather");
	ck_assert_str_eq(json_string_value(json_object_get(f, "arguments")),
	    "{\"city\": \"Par\\u00eds\"}");
	ck_assert_int_eq(strncmp(json_string_value(json_object_get(c, "id")),
	    "wilmer-", 7), 0);
	ck_assert_uint_eq(json_string_length(json_object_get(c, "id")), 39);
	json_decref(o);
}

/* A node that forwards tools, on a backend with structured output,
 * enforces a forced or required tool_choice: the tools leave the
 * request for a schema and a description in the system prompt
 * (tests/golden/toolchoice.*.json), and the JSON answer comes back as
 * the call, whole or streamed. A miss is asked once more, then its text
 * is the answer. "auto" and a backend without the block keep the
 * native tools; a structuredOutputFile beside an enforced round is an
 * error. */
START_TEST(a8_6_tool_choice_enforced)
{
	static const char *forced = "{\"type\": \"function\", \"function\": "
	    "{\"name\": \"get_weather\"}}";
	char		 body[2048], rel[128], text[512];
	struct it_resp	 r;
	json_t		*log, *b;
	struct sse_summary ss;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1", NULL);
	it_allow_shared(&T);
	write_so("openai", "openAIChatCompletion", ", \"structuredOutput\": "
	    "{\"field\": \"response_format\", \"style\": "
	    "\"openaiJsonSchema\", \"strict\": false}", "unused");
	write_so("ollama", "ollamaApiChat", ", \"structuredOutput\": "
	    "{\"field\": \"format\", \"style\": \"raw\"}", "unused");
	write_so("noblock", "openAIChatCompletion", "", "unused");
	write_so("clash", "openAIChatCompletion", ", \"structuredOutput\": "
	    "{\"field\": \"response_format\", \"style\": "
	    "\"openaiJsonSchema\"}", "weather");
	it_file(&T, "StructuredOutputs/weather.json", "{\"type\": \"object\"}");
	static const char *const eps[] = { "openai", "ollama", "noblock" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(rel, sizeof(rel), "Workflows/_shared/so-%s/"
		    "_DefaultWorkflow.json", eps[i]);
		snprintf(text, sizeof(text), "[{\"type\": \"Standard\", "
		    "\"endpointName\": \"So-%s\", \"systemPrompt\": \"Be "
		    "useful.\", \"prompt\": \"\", \"allowTools\": true}]\n",
		    eps[i]);
		it_file(&T, rel, text);
	}
	it_file(&T, "Workflows/_shared/so-clash/_DefaultWorkflow.json",
	    "[{\"type\": \"Standard\", \"endpointName\": \"So-clash\", "
	    "\"prompt\": \"\", \"allowTools\": true, "
	    "\"structuredOutputFile\": \"weather\"}]\n");
	it_gateway_start(&T, NULL);

	/* forced, whole: the call */
	log = force_ask(force_body("so-openai", forced, false, FORCE_CALL,
	    body, sizeof(body)), &r);
	ck_assert_uint_eq(json_array_size(log), 1);
	assert_golden(json_object_get(json_array_get(log, 0), "body"),
	    "toolchoice.forced");
	assert_whole_call(&r);
	it_resp_free(&r);
	json_decref(log);

	/* required, streamed, raw style: the call as a delta */
	log = force_ask(force_body("so-ollama", "\"required\"", true,
	    FORCE_CALL, body, sizeof(body)), &r);
	ck_assert_uint_eq(json_array_size(log), 1);
	assert_golden(json_object_get(json_array_get(log, 0), "body"),
	    "toolchoice.required");
	it_sse_parse(r.r_body.b_data, &ss);
	ck_assert_msg(ss.ss_done && strcmp(ss.ss_finish, "tool_calls") == 0 &&
	    strcmp(ss.ss_text, "") == 0, "%s", r.r_body.b_data);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"tool_calls\":[{"));
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data,
	    "\"arguments\":\"{\\\"city\\\": \\\"Par\\\\u00eds\\\"}\""));
	free(ss.ss_text);
	it_resp_free(&r);
	json_decref(log);

	/* prose twice: asked once more, then the text is the answer */
	log = force_ask(force_body("so-openai", forced, true,
	    "{\"text\": \"It is sunny.\"}", body, sizeof(body)), &r);
	ck_assert_uint_eq(json_array_size(log), 2);
	ck_assert(json_equal(json_object_get(json_array_get(log, 0), "body"),
	    json_object_get(json_array_get(log, 1), "body")));
	it_sse_parse(r.r_body.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "It is sunny.");
	ck_assert_str_eq(ss.ss_finish, "stop");
	free(ss.ss_text);
	it_resp_free(&r);
	json_decref(log);

	/* an unknown tool's name is a miss too */
	log = force_ask(force_body("so-openai", "\"required\"", false,
	    "{\"text\": \"{\\\"name\\\": \\\"nope\\\", \\\"arguments\\\": "
	    "{}}\"}", body, sizeof(body)), &r);
	ck_assert_uint_eq(json_array_size(log), 2);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "nope"));
	it_resp_free(&r);
	json_decref(log);

	/* a native call is taken as it is, whole or streamed */
	for (int st = 0; st < 2; st++) {
		log = force_ask(force_body("so-openai", forced, st == 1,
		    "{\"tool_calls\": [{\"name\": \"get_weather\", "
		    "\"arguments\": {\"city\": \"Rome\"}}]}", body,
		    sizeof(body)), &r);
		ck_assert_uint_eq(json_array_size(log), 1);
		ck_assert_msg(strstr(r.r_body.b_data, "call_mock_0") != NULL &&
		    strstr(r.r_body.b_data, "Rome") != NULL &&
		    strstr(r.r_body.b_data, "\"finish_reason\":\"tool_calls\"")
		    != NULL, "%s", r.r_body.b_data);
		it_resp_free(&r);
		json_decref(log);
	}

	/* "auto", and a backend without the block: native tools */
	log = force_ask(force_body("so-openai", "\"auto\"", false, "{}",
	    body, sizeof(body)), &r);
	b = json_object_get(json_array_get(log, 0), "body");
	ck_assert_ptr_nonnull(json_object_get(b, "tools"));
	ck_assert_ptr_null(json_object_get(b, "response_format"));
	it_resp_free(&r);
	json_decref(log);
	log = force_ask(force_body("so-noblock", forced, false, "{}", body,
	    sizeof(body)), &r);
	b = json_object_get(json_array_get(log, 0), "body");
	ck_assert_ptr_nonnull(json_object_get(b, "tool_choice"));
	ck_assert_ptr_null(json_object_get(b, "response_format"));
	it_resp_free(&r);
	json_decref(log);

	/* both constraints on one node */
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    force_body("so-clash", forced, false, "{}", body, sizeof(body)),
	    &r), 0);
	ck_assert_int_eq(r.r_status, 500);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "tool-enforcement "
	    "round is active"));
	it_resp_free(&r);
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 0);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* ---- what the tool settings send (addendum A8.4, A8.7) -------------- */

/* includeToolCallsInConversation (A8.4) puts the client's tool exchange
 * into the prompt's conversation variable as text; the user's
 * livenessToolCall (A8.7) takes its own calls and their results out of
 * the conversation sent: tests/golden/tooltext.json and
 * tests/golden/liveness.json. */
START_TEST(a8_4_a8_7_tool_text_and_liveness)
{
	static const char body[] = "{\"model\": \"so-%s\", \"messages\": ["
	    "{\"role\": \"user\", \"content\": \"ls?\"}, "
	    "{\"role\": \"assistant\", \"content\": null, \"tool_calls\": "
	    "[{\"id\": \"c1\", \"type\": \"function\", \"function\": "
	    "{\"name\": \"bash\", \"arguments\": \"{\\\"command\\\": "
	    "\\\"ls\\\"}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": \"c1\", "
	    "\"content\": \"a.txt\"}, "
	    "{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": "
	    "[{\"id\": \"wilmer_liveness_1a2b3c4d\", \"type\": \"function\", "
	    "\"function\": {\"name\": \"keep_going\", \"arguments\": "
	    "\"{\\\"note\\\": \\\"[Wilmer] go on\\\"}\"}}]}, "
	    "{\"role\": \"tool\", \"tool_call_id\": \"wilmer_liveness_1a2b3c4d\","
	    " \"content\": \"ok\"}, {\"role\": \"user\", \"content\": \"and?\"}]}";
	static const char *const wf[] = { "tooltext", "liveness" };
	char		 b[2048];
	json_t		*rec;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1", NULL);
	it_allow_shared(&T);
	it_user_set(&T, "livenessToolCall", json_pack("{s:s,s:{s:s}}",
	    "toolName", "keep_going", "arguments", "note", "[Wilmer] go on"));
	write_so("tooltext", "openAIChatCompletion", "", "unused");
	write_so("liveness", "openAIChatCompletion", "", "unused");
	it_file(&T, "Workflows/_shared/so-tooltext/_DefaultWorkflow.json",
	    "[{\"type\": \"Standard\", \"endpointName\": \"So-tooltext\", "
	    "\"prompt\": \"{chat_user_prompt_last_four}\", "
	    "\"includeToolCallsInConversation\": true}]\n");
	it_file(&T, "Workflows/_shared/so-liveness/_DefaultWorkflow.json",
	    "[{\"type\": \"Standard\", \"endpointName\": \"So-liveness\", "
	    "\"prompt\": \"\", \"lastMessagesToSendInsteadOfPrompt\": 10}]\n");
	it_gateway_start(&T, NULL);
	for (size_t i = 0; i < 2; i++) {
		snprintf(b, sizeof(b), body, wf[i]);
		rec = post_chat(b, 200, NULL);
		assert_golden(json_object_get(rec, "body"), wf[i]);
		json_decref(rec);
	}
	it_stop_clean(&T);
}
END_TEST

static Suite *
dialects_suite(void)
{
	Suite	*s = suite_create("dialects");
	TCase	*tc = tcase_create("dialects");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, openai_completion);
	tcase_add_test(tc, ollama_chat);
	tcase_add_test(tc, ollama_generate);
	tcase_add_test(tc, kobold);
	tcase_add_test(tc, claude);
	tcase_add_test(tc, server_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("think");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, think_reaches_ollama_only);
	suite_add_tcase(s, tc);
	test_case(s, "structured", structured_output_attached, 30);
	test_case(s, "exchange", tool_exchange_appended, 30);
	test_case(s, "toolchoice", a8_6_tool_choice_enforced, 30);
	test_case(s, "tooltext", a8_4_a8_7_tool_text_and_liveness, 30);
	return s;
}

int
main(void)
{
	return check_main(dialects_suite());
}
