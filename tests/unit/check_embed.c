/* check_embed.c - the embeddings client (A9.1, A9.2) against mock-llm's /v1/embeddings and /api/embed: URLs, bodies, parsing, failures. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../../worker/llm/embed.h"
#include "../../worker/llm/transport.h"
#include "../it/harness.h"
#include "../mock_embed.h"
#include "../testmain.h"
#include "fakerq.h"

/* Each test: the mock, it_config's folder (user "it"), the fake loop. */
static struct it	 T;
static struct fakerq	 R;
static struct conf_user	*U;

static void
setup(void)
{
	char	 err[CONF_ERRLEN];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	ck_assert_int_eq(transport_init(), 0);
	fakerq_init(&R, "t", -1);
	ck_assert_msg(conf_user_load(T.it_dir, "it", &U, err) == 0, "%s", err);
}

static void
teardown(void)
{
	conf_user_free(U);
	fakerq_free(&R);
	transport_cleanup();
	it_stop(&T, 2000);
}

/* Endpoint name of api type type at the mock (url suffix tail), with
 * extra endpoint members ("" or ", \"key\": value"). */
static void
endpoint(const char *name, const char *type, const char *tail,
    const char *extra)
{
	char	 url[96];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", T.it_mock_port,
	    tail);
	it_backend(&T, NULL, name, type, url, "", extra);
}

static void
target(const char *name, struct embed_target *t)
{
	char	 err[CONF_ERRLEN];

	ck_assert_msg(embed_target_load(T.it_dir, U, name, t, err) == 0, "%s",
	    err);
}

/* Embed n texts through endpoint name; the call's return. */
static int
run(const char *name, const char *const *texts, size_t n,
    struct embed_vecs *v, struct wresult *res)
{
	struct embed_target	 t;
	int			 r;

	target(name, &t);
	memset(res, 0, sizeof(*res));
	r = embed_texts(&R.fr_rq, U, &t, texts, n, v, res);
	embed_target_free(&t);
	return r;
}

/* v[i] is what the mock gives texts[i]. */
static void
ck_vectors(const struct embed_vecs *v, const char *const *texts, size_t n)
{
	double	 want[MOCK_EMBED_DIM];
	size_t	 i, k;

	ck_assert_uint_eq(v->ev_n, n);
	for (i = 0; i < n; i++) {
		mock_embed_vector(texts[i], want);
		ck_assert_uint_eq(v->ev_dim[i], MOCK_EMBED_DIM);
		for (k = 0; k < MOCK_EMBED_DIM; k++)
			ck_assert_msg(v->ev_v[i][k] == want[k], "text %zu "
			    "dimension %zu: %g, want %g", i, k, v->ev_v[i][k],
			    want[k]);
	}
}

/* The mock's last request: its path and body (borrowed from log, which
 * the caller decrefs). */
static json_t *
last_request(json_t **log, const char **path)
{
	json_t	*r;

	*log = it_mock_log(&T, true);
	ck_assert_uint_ge(json_array_size(*log), 1);
	r = json_array_get(*log, json_array_size(*log) - 1);
	*path = json_string_value(json_object_get(r, "path"));
	return r;
}

/* OpenAI: POST {endpoint}/v1/embeddings (a trailing slash dropped),
 * {"input": [...], "model": ...} as WilmerAI sends it, a Bearer
 * header even without a key; the answer's items sorted by index. */
START_TEST(a9_2_openai_request_and_order)
{
	const char *const	 tx[] = { "the cat sat", "a dog ran", "cat" };
	struct embed_vecs	 v;
	struct wresult		 res;
	json_t			*log, *r, *want;
	const char		*path;

	endpoint("E", "openAIEmbeddings", "/", "");
	ck_assert_int_eq(run("E", tx, 3, &v, &res), 0);
	ck_vectors(&v, tx, 3);
	ck_assert_int_eq(v.ev_prompt_tokens, 3);
	ck_assert_str_eq(v.ev_model, "m");
	r = last_request(&log, &path);
	ck_assert_str_eq(path, "/v1/embeddings");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r,
	    "headers"), "Authorization")), "Bearer");
	want = it_json("{\"input\": [\"the cat sat\", \"a dog ran\", "
	    "\"cat\"], \"model\": \"m\"}");
	ck_assert_int_eq(json_equal(json_object_get(r, "body"), want), 1);
	json_decref(want);
	json_decref(log);
	embed_vecs_free(&v);
}
END_TEST

/* Ollama: /api/embed, "embeddings"; dontIncludeModel leaves the model
 * out; the key goes as a Bearer token. */
START_TEST(a9_2_ollama_request)
{
	const char *const	 tx[] = { "hello there" };
	struct embed_vecs	 v;
	struct wresult		 res;
	json_t			*log, *r;
	const char		*path;

	endpoint("O", "ollamaEmbeddings", "", ", \"dontIncludeModel\": true, "
	    "\"apiKey\": \"sk-1\"");
	ck_assert_int_eq(run("O", tx, 1, &v, &res), 0);
	ck_vectors(&v, tx, 1);
	r = last_request(&log, &path);
	ck_assert_str_eq(path, "/api/embed");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r,
	    "headers"), "Authorization")), "Bearer sk-1");
	ck_assert_ptr_null(json_object_get(json_object_get(r, "body"),
	    "model"));
	json_decref(log);
	embed_vecs_free(&v);
}
END_TEST

/* An endpoint without modelNameToSendToAPI sends "model": "". */
START_TEST(a9_1_missing_model_is_empty)
{
	const char *const	 tx[] = { "x" };
	struct embed_vecs	 v;
	struct wresult		 res;
	json_t			*log, *r;
	const char		*path;
	char			*ep;

	it_file(&T, "ApiTypes/NoModel.json", "{\"type\": \"ollamaEmbeddings\"}");
	ep = xasprintf("{\"endpoint\": \"http://127.0.0.1:%d\", "
	    "\"apiTypeConfigFileName\": \"NoModel\"}", T.it_mock_port);
	it_file(&T, "Endpoints/it/NoModel.json", ep);
	free(ep);
	ck_assert_int_eq(run("NoModel", tx, 1, &v, &res), 0);
	r = last_request(&log, &path);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r,
	    "body"), "model")), "");
	json_decref(log);
	embed_vecs_free(&v);
}
END_TEST

/* No text: no vectors, no request. */
START_TEST(a9_2_empty_input_no_request)
{
	struct embed_vecs	 v;
	struct wresult		 res;

	endpoint("E", "openAIEmbeddings", "", "");
	ck_assert_int_eq(run("E", NULL, 0, &v, &res), 0);
	ck_assert_uint_eq(v.ev_n, 0);
	ck_assert_int_eq(it_mock_requests(&T), 0);
}
END_TEST

/* A cancelled request sends nothing. */
START_TEST(a9_2_cancelled_before_sending)
{
	const char *const	 tx[] = { "x" };
	struct embed_vecs	 v;
	struct wresult		 res;

	endpoint("E", "openAIEmbeddings", "", "");
	R.fr_stopped = true;
	ck_assert_int_eq(run("E", tx, 1, &v, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_int_eq(it_mock_requests(&T), 0);
}
END_TEST

static void
ck_fails(const char *ep, const char *text, int http, const char *needle)
{
	const char *const	 tx[] = { text, "second" };
	struct embed_vecs	 v;
	struct wresult		 res;

	ck_assert_int_eq(run(ep, tx, 2, &v, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, http);
	ck_assert_str_eq(res.r_endpoint, ep);
	ck_assert_msg(strstr(res.r_message, needle) != NULL, "'%s' lacks '%s'",
	    res.r_message, needle);
	ck_assert_uint_eq(v.ev_n, 0);
}

/* Errors, missing data, a vector count that differs: each an error
 * naming the endpoint, after exactly one attempt. */
START_TEST(a9_2_failures_one_attempt)
{
	endpoint("E", "openAIEmbeddings", "", "");
	endpoint("O", "ollamaEmbeddings", "", "");
	ck_fails("E", "#embed-status 503", 503, "answered HTTP 503");
	ck_assert_int_eq(it_mock_requests(&T), 1);
	ck_fails("E", "#embed-status 500", 502, "answered HTTP 500");
	ck_fails("E", "#embed-garbage", 502, "no 'data' list");
	ck_fails("O", "#embed-garbage", 502, "no 'embeddings' list");
	ck_fails("E", "#embed-short", 502, "vector count");
	ck_fails("O", "#embed-short", 502, "vector count");
	ck_assert_int_eq(it_mock_requests(&T), 6);
}
END_TEST

/* A9.1: only an embeddings type serves as one; WilmerAI's message. */
START_TEST(a9_1_not_an_embeddings_type)
{
	struct embed_target	 t;
	char			 err[CONF_ERRLEN];

	ck_assert_int_eq(embed_target_load(T.it_dir, U, "Mock", &t, err), -1);
	ck_assert_msg(strstr(err, "Endpoint 'Mock' has API type "
	    "'openAIChatCompletion', which is not an embeddings type") !=
	    NULL, "%s", err);
	ck_assert_ptr_null(t.et_ep);
	ck_assert_int_eq(embed_target_load(T.it_dir, U, "Nope", &t, err), -1);
	ck_assert_msg(strstr(err, "Nope") != NULL, "%s", err);
	ck_assert(conf_apitype_embeds(APIT_OLLAMA_EMBED));
	ck_assert(conf_apitype_embeds(APIT_OPENAI_EMBED));
	ck_assert(!conf_apitype_embeds(APIT_OLLAMA_CHAT));
}
END_TEST

/* A backend that is not there: 502, naming it. */
START_TEST(a9_2_unreachable)
{
	char	 url[64], text[] = "x";
	const char *const tx[] = { text };
	struct embed_vecs v;
	struct wresult	 res;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", it_dead_port());
	it_backend(&T, NULL, "Gone", "openAIEmbeddings", url, "", "");
	ck_assert_int_eq(run("Gone", tx, 1, &v, &res), -1);
	ck_assert_int_eq(res.r_http, 502);
	ck_assert_str_eq(res.r_code, "backend_unavailable");
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "a9_2_openai_request_and_order",
		    a9_2_openai_request_and_order },
		{ "a9_2_ollama_request", a9_2_ollama_request },
		{ "a9_2_empty_input_no_request", a9_2_empty_input_no_request },
		{ "a9_1_missing_model_is_empty", a9_1_missing_model_is_empty },
		{ "a9_2_cancelled_before_sending",
		    a9_2_cancelled_before_sending },
		{ "a9_2_failures_one_attempt", a9_2_failures_one_attempt },
		{ "a9_1_not_an_embeddings_type", a9_1_not_an_embeddings_type },
		{ "a9_2_unreachable", a9_2_unreachable },
	};

	return it_main(it_suite_fixture("embed", cases,
	    sizeof(cases) / sizeof(cases[0]), 15, setup, teardown));
}
