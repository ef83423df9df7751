/* check_embed_it.c - integration: POST /v1/embeddings, /api/embed and /api/embeddings through the real gateway, workers and mock-llm. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../common/base64.h"
#include "../mock_embed.h"
#include "../testmain.h"
#include "harness.h"

/*
 * User "it" has an openAIEmbeddings endpoint "Emb" and an
 * ollamaEmbeddings one "OEmb", both at the mock (model "m"); each test
 * names one as embeddingEndpointName (the worker reads the user file
 * afresh for every request). The mock answers OpenAI's items in
 * reverse order and gives each text its bag-of-words vector.
 */

static struct it	 T;

static const char *const TEXTS[] = { "the cat sat", "dogs bark loudly",
	"a cat and a dog" };
#define NTEXTS	3
#define TEXTS_JSON	"[\"the cat sat\", \"dogs bark loudly\", " \
			"\"a cat and a dog\"]"

/* The folder, without the gateway. */
static void
config(const char *settings, const char *endpoint)
{
	char	 url[96];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", T.it_mock_port);
	it_backend(&T, NULL, "Emb", "openAIEmbeddings", url, "",
	    ", \"apiKey\": \"sk-embeddings\"");
	it_backend(&T, NULL, "OEmb", "ollamaEmbeddings", url, "", "");
	if (endpoint != NULL)
		it_user_set(&T, "embeddingEndpointName", json_string(endpoint));
}

static void
start(const char *settings, const char *endpoint)
{
	config(settings, endpoint);
	it_gateway_start(&T, NULL);
}

/* POST body to path; the answer parsed when it is JSON (else NULL). */
static json_t *
post(const char *path, const char *body, long *status)
{
	struct it_resp	 r;
	json_t		*j;

	ck_assert_int_eq(it_request(&T, "POST", path, body, &r), 0);
	*status = r.r_status;
	j = json_loadb(r.r_body.b_data ? r.r_body.b_data : "", r.r_body.b_len,
	    0, NULL);
	ck_assert_msg(j != NULL, "%s: not JSON: %s", path, r.r_body.b_data);
	it_resp_free(&r);
	return j;
}

static void
expect_vector(const json_t *v, const char *text)
{
	double	 want[MOCK_EMBED_DIM];
	size_t	 j;

	mock_embed_vector(text, want);
	ck_assert_msg(json_array_size(v) == MOCK_EMBED_DIM, "'%s': %zu dims",
	    text, json_array_size(v));
	for (j = 0; j < MOCK_EMBED_DIM; j++)
		ck_assert_double_eq(json_number_value(json_array_get(v, j)),
		    want[j]);
}

/* OpenAI base64: little-endian float32s. */
static void
expect_base64(const json_t *s, const char *text)
{
	double		 want[MOCK_EMBED_DIM];
	const char	*p = json_string_value(s);
	unsigned char	 raw[4 * MOCK_EMBED_DIM + 3] = { 0 };
	size_t		 n = 0, i, bits = 0;
	uint32_t	 acc = 0, u;
	float		 f;

	ck_assert_ptr_nonnull(p);
	ck_assert(base64_valid(p, strlen(p)));
	for (; *p != '\0' && *p != '='; p++) {
		acc = acc << 6 | (uint32_t)base64_digit((unsigned char)*p);
		if ((bits += 6) >= 8) {
			bits -= 8;
			ck_assert_uint_lt(n, sizeof(raw));
			raw[n++] = (unsigned char)(acc >> bits & 0xff);
		}
	}
	ck_assert_uint_eq(n, 4 * MOCK_EMBED_DIM);
	mock_embed_vector(text, want);
	for (i = 0; i < MOCK_EMBED_DIM; i++) {
		u = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
		    (uint32_t)raw[4 * i + 2] << 16 |
		    (uint32_t)raw[4 * i + 3] << 24;
		memcpy(&f, &u, sizeof(f));
		ck_assert_double_eq((double)f, want[i]);
	}
}

/* The one request the backend got: its path and body, the log
 * cleared. "Emb" (the one at /v1/embeddings) sends its key. */
static void
expect_backend(const char *path, const char *body)
{
	json_t		*log = it_mock_log(&T, true), *rec, *v;
	json_t		*want = it_json(body);
	const char	*k, *auth = NULL;

	ck_assert_uint_eq(json_array_size(log), 1);
	rec = json_array_get(log, 0);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "path")), path);
	json_object_foreach(json_object_get(rec, "headers"), k, v)
		if (strcasecmp(k, "Authorization") == 0)
			auth = json_string_value(v);
	if (strcmp(path, "/v1/embeddings") == 0)
		ck_assert_str_eq(auth, "Bearer sk-embeddings");
	ck_assert_msg(json_equal(json_object_get(rec, "body"), want),
	    "the backend got %s", json_dumps(json_object_get(rec, "body"),
	    JSON_COMPACT));
	json_decref(want);
	json_decref(log);
}

/* OpenAI's list: item i is text i's vector, whatever order the
 * backend answered in; usage is the backend's. */
static void
expect_openai(json_t *j, bool b64)
{
	json_t	*data = json_object_get(j, "data"), *it;
	size_t	 i;

	ck_assert_str_eq(json_string_value(json_object_get(j, "object")),
	    "list");
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")), "it");
	ck_assert_uint_eq(json_array_size(data), NTEXTS);
	json_array_foreach(data, i, it) {
		ck_assert_str_eq(json_string_value(json_object_get(it,
		    "object")), "embedding");
		ck_assert_int_eq(json_integer_value(json_object_get(it,
		    "index")), (json_int_t)i);
		if (b64)
			expect_base64(json_object_get(it, "embedding"),
			    TEXTS[i]);
		else
			expect_vector(json_object_get(it, "embedding"),
			    TEXTS[i]);
	}
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "usage"), "prompt_tokens")), NTEXTS);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "usage"), "total_tokens")), NTEXTS);
}

/* /v1/embeddings on an openAIEmbeddings endpoint: float (asked and by
 * default) and base64, the backend's body as A9.2 says. */
START_TEST(openai_route)
{
	static const char *const fmts[] = { ", \"encoding_format\": \"float\"",
	    "", ", \"encoding_format\": \"base64\"" };
	char		 body[512];
	json_t		*j;
	long		 st;
	size_t		 k;

	start(NULL, "Emb");
	for (k = 0; k < 3; k++) {
		snprintf(body, sizeof(body), "{\"model\": \"it\", \"input\": "
		    TEXTS_JSON "%s, \"dimensions\": 8, \"user\": \"u\"}",
		    fmts[k]);
		j = post("/v1/embeddings", body, &st);
		ck_assert_int_eq(st, 200);
		expect_openai(j, k == 2);
		json_decref(j);
		expect_backend("/v1/embeddings", "{\"input\": " TEXTS_JSON
		    ", \"model\": \"m\"}");
	}
	j = post("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "\"the cat sat\"}", &st);
	ck_assert_int_eq(st, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "data")), 1);
	expect_vector(json_object_get(json_array_get(json_object_get(j,
	    "data"), 0), "embedding"), TEXTS[0]);
	json_decref(j);
	expect_backend("/v1/embeddings", "{\"input\": [\"the cat sat\"], "
	    "\"model\": \"m\"}");
	it_stop_clean(&T);
}
END_TEST

/* Whole answers are not cached and carry the request id. */
START_TEST(headers)
{
	struct it_resp	 r;
	char		 v[64];

	start("\"cache\": {\"enabled\": true}", "Emb");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/embeddings",
	    "{\"model\": \"it\", \"input\": \"x\"}", &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	ck_assert_ptr_nonnull(it_header(&r, "X-Request-Id", v, sizeof(v)));
	ck_assert_ptr_null(it_header(&r, "X-Sluice-Cache", v, sizeof(v)));
	ck_assert_str_eq(it_header(&r, "Content-Type", v, sizeof(v)),
	    "application/json");
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* /api/embed on an openAIEmbeddings endpoint: the vectors in order in
 * Ollama's shape, though the backend answered them reversed. */
START_TEST(ollama_route_openai_backend)
{
	json_t	*j, *e;
	long	 st;
	size_t	 i;

	start(NULL, "Emb");
	j = post("/api/embed", "{\"model\": \"it\", \"input\": " TEXTS_JSON
	    ", \"truncate\": true, \"keep_alive\": \"5m\"}", &st);
	ck_assert_int_eq(st, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")), "it");
	e = json_object_get(j, "embeddings");
	ck_assert_uint_eq(json_array_size(e), NTEXTS);
	for (i = 0; i < NTEXTS; i++)
		expect_vector(json_array_get(e, i), TEXTS[i]);
	ck_assert_int_gt(json_integer_value(json_object_get(j,
	    "total_duration")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "load_duration")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "prompt_eval_count")), NTEXTS);
	json_decref(j);
	expect_backend("/v1/embeddings", "{\"input\": " TEXTS_JSON
	    ", \"model\": \"m\"}");
	/* a string; "" is no text, answered without the backend */
	j = post("/api/embed", "{\"model\": \"it\", \"input\": \"dogs bark "
	    "loudly\"}", &st);
	ck_assert_int_eq(st, 200);
	expect_vector(json_array_get(json_object_get(j, "embeddings"), 0),
	    TEXTS[1]);
	json_decref(j);
	expect_backend("/v1/embeddings", "{\"input\": [\"dogs bark loudly\"], "
	    "\"model\": \"m\"}");
	j = post("/api/embed", "{\"model\": \"it\", \"input\": \"\"}", &st);
	ck_assert_int_eq(st, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "embeddings")),
	    0);
	json_decref(j);
	ck_assert_int_eq(it_mock_requests(&T), 2);
	it_stop_clean(&T);
}
END_TEST

/* /v1/embeddings on an ollamaEmbeddings endpoint: the backend gets
 * /api/embed, the client OpenAI's list. */
START_TEST(openai_route_ollama_backend)
{
	json_t	*j;
	long	 st;

	start(NULL, "OEmb");
	j = post("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    TEXTS_JSON ", \"encoding_format\": \"float\"}", &st);
	ck_assert_int_eq(st, 200);
	expect_openai(j, false);
	json_decref(j);
	expect_backend("/api/embed", "{\"input\": " TEXTS_JSON
	    ", \"model\": \"m\"}");
	it_stop_clean(&T);
}
END_TEST

/* Ollama's older /api/embeddings: {"prompt"} → {"embedding"}. */
START_TEST(ollama_legacy_route)
{
	json_t	*j;
	long	 st;

	start(NULL, "OEmb");
	j = post("/api/embeddings", "{\"model\": \"it\", \"prompt\": \"a cat "
	    "and a dog\"}", &st);
	ck_assert_int_eq(st, 200);
	ck_assert_uint_eq(json_object_size(j), 1);
	expect_vector(json_object_get(j, "embedding"), TEXTS[2]);
	json_decref(j);
	expect_backend("/api/embed", "{\"input\": [\"a cat and a dog\"], "
	    "\"model\": \"m\"}");
	j = post("/api/embeddings", "{\"model\": \"it\", \"prompt\": \"\"}",
	    &st);
	ck_assert_int_eq(st, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "embedding")), 0);
	json_decref(j);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	it_stop_clean(&T);
}
END_TEST

/* The error's message, from either shape. */
static const char *
message(const json_t *j)
{
	const json_t	*e = json_object_get(j, "error");

	return json_is_string(e) ? json_string_value(e) :
	    json_string_value(json_object_get(e, "message"));
}

static void
expect_error(const char *path, const char *body, long status,
    const char *needle)
{
	json_t	*j;
	long	 st;

	j = post(path, body, &st);
	ck_assert_msg(st == status, "%s %s: %ld, not %ld", path, body, st,
	    status);
	ck_assert_ptr_nonnull(message(j));
	ck_assert_msg(strstr(message(j), needle) != NULL, "%s %s: '%s'",
	    path, body, message(j));
	/* the route's own shape: Ollama's a string, OpenAI's an object */
	ck_assert(json_is_string(json_object_get(j, "error")) ==
	    (strncmp(path, "/api/", 5) == 0));
	if (!json_is_string(json_object_get(j, "error")))
		ck_assert_int_eq(json_integer_value(json_object_get(
		    json_object_get(j, "error"), "code")), status);
	json_decref(j);
}

/* Bodies the gateway refuses itself: 400, and no backend call. */
START_TEST(bad_requests)
{
	start(NULL, "Emb");
	expect_error("/v1/embeddings", "{\"model\": \"it\"}", 400,
	    "'input' field is required");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": 5}",
	    400, "a string or a list of strings");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "[\"a\", 5]}", 400, "a string or a list of strings");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": []}",
	    400, "empty");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "[1, 2, 3]}", 400, "token ids is not supported");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "[[1, 2], [3]]}", 400, "token ids is not supported");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": \"x\", "
	    "\"encoding_format\": \"hex\"}", 400, "'encoding_format'");
	expect_error("/v1/embeddings", "{\"input\": ", 400, "Invalid JSON");
	expect_error("/api/embed", "{\"input\": \"x\"}", 400,
	    "model is required");
	expect_error("/api/embed", "{\"model\": \"it\", \"input\": 5}", 400,
	    "invalid input type");
	expect_error("/api/embed", "{\"model\": \"it\", \"input\": [\"a\", "
	    "null]}", 400, "invalid input type");
	expect_error("/api/embeddings", "{\"model\": \"it\", \"prompt\": 5}",
	    400, "'prompt' must be a string");
	expect_error("/api/embeddings", "[]", 400, "Invalid JSON");
	expect_error("/api/embed", "{\"model\": \"../x\", \"input\": \"x\"}",
	    400, "Invalid model name");
	ck_assert_int_eq(it_mock_requests(&T), 0);
	it_stop_clean(&T);
}
END_TEST

/* No embeddingEndpointName: 404 naming the key and the file, on every
 * route in its shape. */
START_TEST(no_endpoint)
{
	start(NULL, NULL);
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": \"x\"}",
	    404, "set \"embeddingEndpointName\" in ");
	expect_error("/api/embed", "{\"model\": \"it\", \"input\": \"x\"}",
	    404, "/Users/it.json");
	expect_error("/api/embeddings", "{\"model\": \"it\", \"prompt\": "
	    "\"x\"}", 404, "ollamaEmbeddings");
	it_user_set(&T, "embeddingEndpointName", json_string("Mock"));
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": \"x\"}",
	    500, "not an embeddings type");
	ck_assert_int_eq(it_mock_requests(&T), 0);
	it_stop_clean(&T);
}
END_TEST

/* The backend's failures: its 503 (with Retry-After), garbage and a
 * vector short are 502, each message naming the endpoint. */
START_TEST(backend_errors)
{
	struct it_resp	 r;
	char		 v[16];

	start(NULL, "Emb");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/embeddings",
	    "{\"model\": \"it\", \"input\": \"x #embed-status 503\"}", &r), 0);
	ck_assert_int_eq(r.r_status, 503);
	ck_assert_str_eq(it_header(&r, "Retry-After", v, sizeof(v)), "1");
	ck_assert_msg(strstr(r.r_body.b_data, "endpoint 'Emb'") != NULL, "%s",
	    r.r_body.b_data);
	it_resp_free(&r);
	expect_error("/api/embed", "{\"model\": \"it\", \"input\": \"x "
	    "#embed-status 503\"}", 503, "endpoint 'Emb'");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "\"x #embed-garbage\"}", 502, "endpoint 'Emb'");
	expect_error("/api/embeddings", "{\"model\": \"it\", \"prompt\": "
	    "\"x #embed-garbage\"}", 502, "endpoint 'Emb'");
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "[\"a\", \"b #embed-short\"]}", 502, "count");
	/* the worker that failed serves the next request */
	expect_error("/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "\"x #embed-status 429\"}", 429, "endpoint 'Emb'");
	ck_assert_int_eq(it_mock_requests(&T), 6);
	it_stop_clean(&T);
}
END_TEST

/* A client that leaves stops the backend call: the endpoint never
 * takes the connection (a 30 s connect timeout), yet the worker is
 * free again at once, stopped, not killed. */
START_TEST(client_leaves)
{
	struct it_stuck	 st;
	char		 url[96];
	uint64_t	 t0;
	size_t		 from = 0;
	int		 fd;
	pid_t		 w;

	start("\"min_workers\": 1, \"max_workers\": 1", "Late");
	it_stuck_open(&st);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", st.s_port);
	it_backend(&T, NULL, "Late", "openAIEmbeddings", url, "", "");
	it_user_set(&T, "connectTimeoutInSeconds", json_integer(30));
	fd = it_connect(&T);
	it_send_post(fd, "/v1/embeddings", "{\"model\": \"it\", \"input\": "
	    "\"x\"}", NULL);
	it_sleep(300);
	ck_assert_int_ne(w = it_worker_in(&T, "busy"), 0);
	close(fd);
	t0 = it_now();
	ck_assert(it_log_wait(&T, "client went away", &from, 2000));
	while (it_worker_in(&T, "busy") != 0 ||
	    it_worker_in(&T, "cancelling") != 0) {
		ck_assert_msg(it_now() - t0 < 1000, "the worker is still busy "
		    "after %llu ms", (unsigned long long)(it_now() - t0));
		it_sleep(10);
	}
	ck_assert_int_eq(it_worker_in(&T, "idle"), w);	/* not killed */
	it_stuck_close(&st);
	it_stop_clean(&T);
}
END_TEST

/* Several users: the model field picks the user whose endpoint
 * serves (a workflow part changes nothing), as on the chat routes. */
START_TEST(multi_user)
{
	json_t	*j;
	long	 st;

	config(NULL, "OEmb");
	it_file(&T, "Users/other.json", "{\"chatCompleteAddUserAssistant\": "
	    "false, \"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"endpointConfigsSubDirectory\": \"it\"}\n");
	snprintf(T.it_users, sizeof(T.it_users), "it other");
	it_gateway_start(&T, NULL);
	j = post("/v1/embeddings", "{\"model\": \"it:anything\", \"input\": "
	    "\"x\"}", &st);
	ck_assert_int_eq(st, 200);
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")),
	    "it:anything");
	json_decref(j);
	expect_backend("/api/embed", "{\"input\": [\"x\"], \"model\": "
	    "\"m\"}");
	expect_error("/api/embed", "{\"model\": \"other\", \"input\": "
	    "\"x\"}", 404, "user 'other' has no embeddings endpoint");
	expect_error("/v1/embeddings", "{\"model\": \"nobody\", \"input\": "
	    "\"x\"}", 400, "Multi-user mode is active");
	ck_assert_int_eq(it_mock_requests(&T), 1);
	it_stop_clean(&T);
}
END_TEST

/* The API keys guard these routes like the chat routes. */
START_TEST(api_key)
{
	static const char *const hdrs[] = { "Authorization: Bearer key-embeddings",
	    "Content-Type: application/json", NULL };
	struct it_resp	 r;
	char		 url[128];

	start("\"api_keys\": [\"key-embeddings\"]", "Emb");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/embed", T.it_port);
	ck_assert_int_eq(it_request_url("POST", url, NULL, "{\"model\": "
	    "\"it\", \"input\": \"x\"}", &r), 0);
	ck_assert_int_eq(r.r_status, 401);
	it_resp_free(&r);
	ck_assert_int_eq(it_request_url("POST", url, hdrs, "{\"model\": "
	    "\"it\", \"input\": \"x\"}", &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	it_stop_clean(&T);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "openai_route", openai_route },
		{ "headers", headers },
		{ "ollama_route_openai_backend", ollama_route_openai_backend },
		{ "openai_route_ollama_backend", openai_route_ollama_backend },
		{ "ollama_legacy_route", ollama_legacy_route },
		{ "bad_requests", bad_requests },
		{ "no_endpoint", no_endpoint },
		{ "backend_errors", backend_errors },
		{ "client_leaves", client_leaves },
		{ "multi_user", multi_user },
		{ "api_key", api_key },
	};

	return it_main(it_suite_cases("embed_it", cases,
	    sizeof(cases) / sizeof(cases[0]), 30));
}
