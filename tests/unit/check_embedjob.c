/* check_embedjob.c - the embeddings routes' job: user, endpoint, the neutral JSON answer and its failures, against mock-llm. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../../worker/engine/embed_job.h"
#include "../../worker/llm/transport.h"
#include "../it/harness.h"
#include "../mock_embed.h"
#include "../testmain.h"
#include "fakerq.h"

/* Each test: the mock, it_config's folder (user "it") with an
 * openAIEmbeddings endpoint "Emb" and an ollamaEmbeddings one "OEmb"
 * at the mock, the fake loop. */
static struct it	 T;
static struct fakerq	 R;

static void
setup(void)
{
	char	 url[96];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", T.it_mock_port);
	it_backend(&T, NULL, "Emb", "openAIEmbeddings", url, "", "");
	it_backend(&T, NULL, "OEmb", "ollamaEmbeddings", url, "", "");
	ck_assert_int_eq(transport_init(), 0);
	fakerq_init(&R, "t", -1);
	R.fr_rq.rq_confdir = T.it_dir;
}

static void
teardown(void)
{
	fakerq_free(&R);
	transport_cleanup();
	it_stop(&T, 2000);
}

/* Run the job on n texts as user (NULL: the default, "it"). */
static void
run(const char *user, const char *const *texts, size_t n,
    struct wresult *res)
{
	struct proto_message	 m[8];
	struct proto_req_start	 rs;
	size_t			 i;

	memset(&rs, 0, sizeof(rs));
	memset(m, 0, sizeof(m));
	for (i = 0; i < n; i++) {
		m[i].role = str_from("user");
		m[i].content = str_from(texts[i]);
	}
	rs.api = API_OPENAI_EMBED;
	rs.msgs = m;
	rs.nmsgs = n;
	rs.user = str_from(user);
	memset(res, 0, sizeof(*res));
	res->r_prompt_tokens = res->r_completion_tokens = -1;
	embed_job_run(&R.fr_rq, &rs, "it", res);
}

/* The answer's vectors are the mock's for texts, in order. */
static void
expect_vectors(const json_t *vecs, const char *const *texts, size_t n)
{
	double	 want[MOCK_EMBED_DIM];
	size_t	 i, j;

	ck_assert_uint_eq(json_array_size(vecs), n);
	for (i = 0; i < n; i++) {
		const json_t	*v = json_array_get(vecs, i);

		mock_embed_vector(texts[i], want);
		ck_assert_uint_eq(json_array_size(v), MOCK_EMBED_DIM);
		for (j = 0; j < MOCK_EMBED_DIM; j++)
			ck_assert_double_eq(json_number_value(
			    json_array_get(v, j)), want[j]);
	}
}

static void
use(const char *endpoint)
{
	it_user_set(&T, "embeddingEndpointName", json_string(endpoint));
}

/* Both api types: the vectors in the texts' order (the mock answers
 * OpenAI's in reverse), the backend's model and token count. */
START_TEST(vectors_in_order)
{
	static const char *const texts[] = { "the cat sat", "dogs bark",
	    "a cat and a dog" };
	static const char *const eps[] = { "Emb", "OEmb" };
	struct wresult	 res;
	json_t		*j;
	size_t		 k;

	for (k = 0; k < 2; k++) {
		use(eps[k]);
		buf_reset(&R.fr_text);
		run(NULL, texts, 3, &res);
		ck_assert_msg(res.r_status == RQ_OK, "%s", res.r_message);
		ck_assert_int_eq(res.r_prompt_tokens, 3);
		j = it_json(R.fr_text.b_data);
		ck_assert_str_eq(json_string_value(json_object_get(j, "model")),
		    "m");
		ck_assert_int_eq(json_integer_value(json_object_get(j,
		    "prompt_tokens")), 3);
		expect_vectors(json_object_get(j, "embeddings"), texts, 3);
		json_decref(j);
	}
	ck_assert_str_eq(R.fr_phase, "embeddings: 3 texts to endpoint 'OEmb'");
}
END_TEST

/* No text: no backend call, an empty list. */
START_TEST(no_texts)
{
	struct wresult	 res;

	use("Emb");
	run("it", NULL, 0, &res);
	ck_assert_int_eq(res.r_status, RQ_OK);
	ck_assert_str_eq(R.fr_text.b_data, "{\"model\":null,"
	    "\"prompt_tokens\":0,\"embeddings\":[]}");
	ck_assert_int_eq(it_mock_requests(&T), 0);
}
END_TEST

/* No embeddingEndpointName: 404 saying which key, in which file. */
START_TEST(no_endpoint)
{
	static const char *const texts[] = { "x" };
	struct wresult	 res;

	run(NULL, texts, 1, &res);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 404);
	ck_assert_str_eq(res.r_code, "no_embeddings_endpoint");
	ck_assert_msg(strstr(res.r_message, "\"embeddingEndpointName\" in ") !=
	    NULL && strstr(res.r_message, "/Users/it.json") != NULL &&
	    strstr(res.r_message, "Endpoints/it/") != NULL, "%s",
	    res.r_message);
	ck_assert_uint_eq(R.fr_text.b_len, 0);
	ck_assert_int_eq(it_mock_requests(&T), 0);
}
END_TEST

/* A generation endpoint, a missing one, an unknown user: 500. */
START_TEST(config_errors)
{
	static const char *const texts[] = { "x" };
	struct wresult	 res;

	use("Mock");
	run(NULL, texts, 1, &res);
	ck_assert_int_eq(res.r_http, 500);
	ck_assert_msg(strstr(res.r_message, "not an embeddings type") != NULL,
	    "%s", res.r_message);
	use("Nope");
	run(NULL, texts, 1, &res);
	ck_assert_int_eq(res.r_http, 500);
	ck_assert_msg(strstr(res.r_message, "embeddingEndpointName: ") ==
	    res.r_message, "%s", res.r_message);
	run("nobody", texts, 1, &res);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 500);
}
END_TEST

/* The backend's failure is the request's, with embed_texts' status. */
START_TEST(backend_errors)
{
	static const char *const down[] = { "x #embed-status 503" };
	static const char *const bad[] = { "x #embed-garbage" };
	struct wresult	 res;

	use("Emb");
	run(NULL, down, 1, &res);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 503);
	ck_assert_msg(strstr(res.r_message, "endpoint 'Emb'") != NULL, "%s",
	    res.r_message);
	run(NULL, bad, 1, &res);
	ck_assert_int_eq(res.r_http, 502);
	ck_assert_uint_eq(R.fr_text.b_len, 0);
}
END_TEST

/* Cancelled before the call: nothing sent, nothing emitted. */
START_TEST(cancelled)
{
	static const char *const texts[] = { "x" };
	struct wresult	 res;

	use("Emb");
	R.fr_stopped = true;
	run(NULL, texts, 1, &res);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_eq(R.fr_text.b_len, 0);
	ck_assert_int_eq(it_mock_requests(&T), 0);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "vectors_in_order", vectors_in_order },
		{ "no_texts", no_texts },
		{ "no_endpoint", no_endpoint },
		{ "config_errors", config_errors },
		{ "backend_errors", backend_errors },
		{ "cancelled", cancelled },
	};

	return it_main(it_suite_fixture("embedjob", cases,
	    sizeof(cases) / sizeof(cases[0]), 20, setup, teardown));
}
