/* check_usage.c - integration: clients get the backend's own token counts, streamed or not; the estimate only when it reports none. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/*
 * User "it" calls the mock as an OpenAI chat backend (endpoint "Mock",
 * whose api type leaves streamIncludeUsage at its default, on); shared
 * workflows call it as an Ollama chat backend, an OpenAI completions
 * backend, an OpenAI chat backend with streamIncludeUsage off
 * ("nousage"), one that removes reasoning ("thinker"), and KoboldCpp,
 * which reports no counts. The mock counts P = the characters of what
 * it was sent / 4 and C = the pieces it sent (tests/mock_llm.md).
 */

static struct it	 T;

#define TEXT		"alpha beta gamma delta"	/* 4 pieces */
#define TEXT_PIECES	4
#define TEXT_ESTIMATE	6	/* int(max(4 * 1.35, 22 / 3.5) * 1.10) */
/* 9 pieces, of which the client sees "alpha beta" */
#define THINK		"<think>one two three four five six seven " \
			"eight</think>alpha beta"
#define THINK_PIECES	9

struct usage {
	long long	 u_prompt;
	long long	 u_completion;
};

/* ---- configuration ------------------------------------------------- */

/* The mock, every backend, the gateway; settings go to sluice.json. */
static void
start(const char *settings)
{
	char	 url[64];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	it_allow_shared(&T);
	it_turns_template(&T);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", T.it_mock_port);
	it_backend(&T, "ollama", "Ollama", "ollamaApiChat", url, "", "");
	it_backend(&T, "completion", "Completion", "openAIV1Completion", url,
	    "", "");
	it_backend(&T, "nousage", "NoUsage", "openAIChatCompletion", url,
	    ", \"streamIncludeUsage\": false", "");
	it_backend(&T, "thinker", "Thinker", "openAIChatCompletion", url, "",
	    ", \"removeThinking\": true, \"startThinkTag\": \"<think>\", "
	    "\"endThinkTag\": \"</think>\"");
	it_backend(&T, "kobold", "Kobold", "koboldCppGenerate", url, "", "");
	it_gateway_start(&T, NULL);
}

/* ---- asking -------------------------------------------------------- */

/* The counts in an OpenAI usage object or an Ollama final line. */
static struct usage
counts(json_t *j, bool ol)
{
	json_t	*u = ol ? j : json_object_get(j, "usage");

	ck_assert_msg(json_is_object(u), "no usage");
	return (struct usage){
	    json_integer_value(json_object_get(u, ol ? "prompt_eval_count" :
	    "prompt_tokens")),
	    json_integer_value(json_object_get(u, ol ? "eval_count" :
	    "completion_tokens")) };
}

/* The event of an SSE body that carries "usage" (there must be one). */
static json_t *
usage_event(char *body)
{
	char	*line, *save = NULL;
	json_t	*j, *found = NULL;

	for (line = strtok_r(body, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "data: {", 7) != 0)
			continue;
		j = it_json(line + 6);
		if (json_object_get(j, "usage") != NULL) {
			json_decref(found);
			found = j;
		} else
			json_decref(j);
	}
	ck_assert_msg(found != NULL, "no usage chunk in the stream");
	return found;
}

/* The usage the client got: the OpenAI whole answer's, the usage chunk
 * of a stream, the last (or only) Ollama line's. */
static struct usage
client_usage(enum it_way way, struct buf *body)
{
	char		*last;
	json_t		*j;
	struct usage	 u;

	if (way == IT_OPENAI_STREAM)
		j = usage_event(body->b_data);
	else {
		while (body->b_len > 0 && body->b_data[body->b_len - 1] == '\n')
			body->b_data[--body->b_len] = '\0';
		last = strrchr(body->b_data, '\n');
		j = it_json(last != NULL ? last + 1 : body->b_data);
	}
	u = counts(j, it_way_ollama(way));
	json_decref(j);
	return u;
}

/* The body of the one backend call the request made. */
static json_t *
backend_body(void)
{
	json_t	*log = it_mock_log(&T, true), *b;

	ck_assert_uint_eq(json_array_size(log), 1);
	b = json_incref(json_object_get(json_array_get(log, 0), "body"));
	json_decref(log);
	return b;
}

/* P as the mock counts it: the characters of every message's content
 * (or of the prompt) / 4, at least 1; the texts here are ASCII. */
static long long
mock_prompt_tokens(json_t *body)
{
	json_t	*msgs = json_object_get(body, "messages"), *m;
	size_t	 i, n = 0;

	if (msgs == NULL)
		n = strlen(json_string_value(json_object_get(body, "prompt")));
	json_array_foreach(msgs, i, m)
		n += strlen(json_string_value(json_object_get(m, "content")));
	return n / 4 > 0 ? (long long)(n / 4) : 1;
}

/* Ask model for text one way (OpenAI streams with include_usage);
 * status 200 or the test fails. r is the caller's to free. */
static void
request(const char *model, enum it_way way, const char *text,
    struct it_resp *r)
{
	char	*s, user[256];

	snprintf(user, sizeof(user), "Hi\n#mock {\"text\": \"%s\"}", text);
	s = it_way_body(way, model, user);
	ck_assert_int_eq(it_request(&T, "POST", it_way_path(way), s, r), 0);
	ck_assert_msg(r->r_status == 200, "%s, %s: %ld %s", model,
	    it_way_name(way), r->r_status, r->r_body.b_data);
	free(s);
}

/* request(), and the usage the client got; *sent is the body of the
 * one backend call it made (caller decrefs). */
static struct usage
ask(const char *model, enum it_way way, const char *text, json_t **sent)
{
	struct it_resp	 r;
	struct usage	 u;

	request(model, way, text, &r);
	u = client_usage(way, &r.r_body);
	it_resp_free(&r);
	*sent = backend_body();
	return u;
}

/* Every way: the client gets the backend's own counts. */
static void
backend_counts_everywhere(const char *model)
{
	struct usage	 u;
	json_t		*sent;
	enum it_way	 w;

	for (w = 0; w < IT_NWAYS; w++) {
		u = ask(model, w, TEXT, &sent);
		ck_assert_msg(u.u_completion == TEXT_PIECES && u.u_prompt ==
		    mock_prompt_tokens(sent), "%s, %s: %lld/%lld, want %lld/%d",
		    model, it_way_name(w), u.u_prompt, u.u_completion,
		    mock_prompt_tokens(sent), TEXT_PIECES);
		json_decref(sent);
	}
}

/* stream_options.include_usage in the backend's body: 1 true, 0
 * absent. */
static int
asked_usage(json_t *sent)
{
	json_t	*so = json_object_get(sent, "stream_options");

	if (so == NULL)
		return 0;
	ck_assert(json_is_true(json_object_get(so, "include_usage")));
	return 1;
}

/* asked_usage() of the backend call that model asked way makes. */
static int
asks_usage(const char *model, enum it_way way)
{
	json_t	*sent;
	int	 r;

	ask(model, way, TEXT, &sent);
	r = asked_usage(sent);
	json_decref(sent);
	return r;
}

/* ---- the tests ----------------------------------------------------- */

/* An OpenAI-compatible backend is asked for its stream usage, and both
 * paths report its figures on both routes. */
START_TEST(openai_backend)
{
	start(NULL);
	backend_counts_everywhere("it");
	ck_assert_int_eq(asks_usage("it", IT_OPENAI_STREAM), 1);
	ck_assert_int_eq(asks_usage("it", IT_OLLAMA_STREAM), 1);
	ck_assert_int_eq(asks_usage("it", IT_OPENAI), 0);
	backend_counts_everywhere("completion");
	ck_assert_int_eq(asks_usage("completion", IT_OPENAI_STREAM), 1);
	it_stop_clean(&T);
}
END_TEST

/* Ollama's prompt_eval_count and eval_count, from the done line of a
 * stream and from a whole answer. */
START_TEST(ollama_backend)
{
	start(NULL);
	backend_counts_everywhere("ollama");
	ck_assert_int_eq(asks_usage("ollama", IT_OPENAI_STREAM), 0);
	it_stop_clean(&T);
}
END_TEST

/* The backend's count covers reasoning the client never sees; the
 * estimate could not. */
START_TEST(reasoning_counted)
{
	struct it_resp	 r;
	struct usage	 u;
	enum it_way	 w;

	start(NULL);
	for (w = 0; w < IT_NWAYS; w++) {
		request("thinker", w, THINK, &r);
		ck_assert_msg(strstr(r.r_body.b_data, "alpha") != NULL &&
		    strstr(r.r_body.b_data, "seven") == NULL, "%s: %s",
		    it_way_name(w), r.r_body.b_data);
		u = client_usage(w, &r.r_body);
		ck_assert_msg(u.u_completion == THINK_PIECES, "%s: %lld",
		    it_way_name(w), u.u_completion);
		it_resp_free(&r);
		json_decref(it_mock_log(&T, true));
	}
	it_stop_clean(&T);
}
END_TEST

/* No counts from the backend: WilmerAI's estimate, streamed or not
 * (KoboldCpp), or streamed only (streamIncludeUsage off, which also
 * keeps stream_options out of the body). */
START_TEST(estimate_without_usage)
{
	struct usage	 u;
	json_t		*sent;
	enum it_way	 w;

	start(NULL);
	for (w = 0; w < IT_NWAYS; w++) {
		u = ask("kobold", w, TEXT, &sent);
		ck_assert_msg(u.u_completion == TEXT_ESTIMATE && u.u_prompt > 0,
		    "kobold, %s: %lld/%lld", it_way_name(w), u.u_prompt,
		    u.u_completion);
		json_decref(sent);
		u = ask("nousage", w, TEXT, &sent);
		ck_assert_int_eq(asked_usage(sent), 0);
		ck_assert_msg(u.u_completion == (it_way_stream(w) ?
		    TEXT_ESTIMATE : TEXT_PIECES), "nousage, %s: %lld",
		    it_way_name(w), u.u_completion);
		json_decref(sent);
	}
	it_stop_clean(&T);
}
END_TEST

/* A cached answer keeps the backend's figures, whichever path stored
 * it and whichever replays it (a stream and a whole request share their
 * entry, stream_options or not). */
START_TEST(cache_keeps_backend_counts)
{
	static const enum it_way replays[] = { IT_OPENAI, IT_OLLAMA,
	    IT_OLLAMA_STREAM };
	struct it_resp		 r;
	struct usage		 a, b;
	json_t			*sent, *log;
	char			 h[16];
	size_t			 i;

	start("\"cache\": {\"enabled\": true, \"cacheable_temperature\": "
	    "0.2}");
	it_file(&T, "Presets/OpenAI/it/Mock.json", "{\"temperature\": 0.1}\n");
	a = ask("it", IT_OPENAI_STREAM, TEXT, &sent);
	ck_assert_int_eq(a.u_completion, TEXT_PIECES);
	ck_assert_int_eq(a.u_prompt, mock_prompt_tokens(sent));
	json_decref(sent);
	for (i = 0; i < sizeof(replays) / sizeof(replays[0]); i++) {
		request("it", replays[i], TEXT, &r);
		ck_assert_str_eq(it_header(&r, "X-Sluice-Cache", h, sizeof(h)),
		    "hit");
		b = client_usage(replays[i], &r.r_body);
		ck_assert_msg(b.u_prompt == a.u_prompt && b.u_completion ==
		    a.u_completion, "%s: %lld/%lld, stored %lld/%lld",
		    it_way_name(replays[i]), b.u_prompt, b.u_completion,
		    a.u_prompt, a.u_completion);
		it_resp_free(&r);
	}
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 0);	/* all hits */
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "openai_backend", openai_backend },
		{ "ollama_backend", ollama_backend },
		{ "reasoning_counted", reasoning_counted },
		{ "estimate_without_usage", estimate_without_usage },
		{ "cache_keeps_backend_counts", cache_keeps_backend_counts },
	};

	return it_main(it_suite_cases("usage", cases, sizeof(cases) /
	    sizeof(cases[0]), 60));
}
