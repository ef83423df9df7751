/* check_vecembed.c - embeddings of vector memories against mock-llm: the table (A9.3), the write path with its backlog (A9.4), semantic and hybrid VectorMemorySearch (A9.5). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../../worker/engine/registry.h"
#include "../../worker/llm/transport.h"
#include "../../worker/memory/memory.h"
#include "../../worker/memory/vecbackfill.h"
#include "../../worker/memory/vecembed.h"
#include "../../worker/memory/vecmem.h"
#include "../../worker/store/store_stmt.h"
#include "../it/harness.h"
#include "../testmain.h"
#include "nodectx.h"

#define VMS	"VectorMemorySearch"
#define SEP	VECMEM_SEP
#define NONE	"No relevant memories found in the vector database for the " \
		"given keywords."

static struct it	 T;
static struct nodectx	 C;
static struct store	*S;

/* Embeddings endpoint name of api type type at port (0: the mock). */
static void
endpoint(const char *name, const char *type, int port)
{
	char	 path[64], *t;

	snprintf(path, sizeof(path), "ApiTypes/%s.json", name);
	t = xasprintf("{\"type\": \"%s\"}", type);
	nodectx_write(&C, path, t);
	free(t);
	snprintf(path, sizeof(path), "Endpoints/%s.json", name);
	t = xasprintf("{\"endpoint\": \"http://127.0.0.1:%d\", "
	    "\"apiTypeConfigFileName\": \"%s\", \"modelNameToSendToAPI\": "
	    "\"emb-%s\"}", port ? port : T.it_mock_port, name, name);
	nodectx_write(&C, path, t);
	free(t);
}

static void
setup(void)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	ck_assert_int_eq(transport_init(), 0);
	nodectx_open(&C, "vecembed");
	C.nc_user.u_endpoint_subdir = "";
	C.nc_user.u_connect_timeout_s = 5;
	S = C.nc_db.sd_store;
	C.nc_discussion = "d";
	endpoint("E", "openAIEmbeddings", 0);
	endpoint("O", "ollamaEmbeddings", 0);
	endpoint("Gone", "openAIEmbeddings", it_dead_port());
}

static void
teardown(void)
{
	nodectx_close(&C);
	transport_cleanup();
	it_stop(&T, 2000);
}

/* Facts of discussion "d" from a JSON array; their ids into ids. */
static size_t
facts(const char *json, int64_t *ids)
{
	json_t	*a = it_json(json), *f[8];
	size_t	 i, n = json_array_size(a);
	static int hash;
	char	 h[16];

	ck_assert_uint_le(n, 8);
	for (i = 0; i < n; i++)
		f[i] = json_array_get(a, i);
	snprintf(h, sizeof(h), "h%d", hash++);
	ck_assert_int_eq(vecmem_store_chunk(S, "d", f, n, false, h, 0, 0,
	    clock_wall_ms(), ids), (long)n);
	json_decref(a);
	return n;
}

#define FACT(t, s)	"{\"title\": \"" t "\", \"summary\": \"" s "\", " \
			"\"entities\": [], \"key_phrases\": []}"
#define THREE	"[" FACT("Tea", "Ann likes green tea") "," \
		FACT("Age", "Bob is forty") "," \
		FACT("Cat", "cats purr softly") "]"

static long long
q_int(const char *sql)
{
	struct store_q	*st = store_stmt(S, sql);
	long long	 v;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(store_step(S, st), 1);
	v = store_col_int(st, 0);
	ck_assert_int_eq(store_step(S, st), 0);
	return v;
}

/* The texts of every /v1/embeddings or /api/embed request, one JSON
 * array per request, joined by '|'. Caller frees. */
static char *
embed_inputs(void)
{
	json_t		*log = it_mock_log(&T, true), *r;
	struct buf	 b = BUF_INIT;
	char		*s;
	size_t		 i;

	json_array_foreach(log, i, r) {
		s = json_dumps(json_object_get(json_object_get(r, "body"),
		    "input"), JSON_COMPACT);
		buf_printf(&b, "%s%s", b.b_len ? "|" : "", s);
		free(s);
	}
	json_decref(log);
	return b.b_data != NULL ? buf_take(&b) : xstrdup("");
}

#define ck_inputs(want) do {						\
	char	*s_ = embed_inputs();					\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

/* After a chunk of n memories (ids, with texts "text <id>" unless
 * given): settings with embeddingEndpointName ep (and extra). */
static int
after_texts(const char *ep, const char *extra, const int64_t *ids,
    const char *const *given, size_t n)
{
	struct memory_settings	 ms;
	struct wresult		 res;
	char			*texts[8];
	json_t			*set, *node;
	size_t			 i;
	int			 rc;

	set = it_json(extra);
	json_object_set_new(set, "embeddingEndpointName", json_string(ep));
	nodectx_settings(&C, set);
	memset(&res, 0, sizeof(res));
	node = it_json("{\"type\": \"QualityMemory\"}");
	ck_assert_int_eq(memory_settings_load(nodectx_ctx(&C, node), &ms,
	    &res), 0);
	for (i = 0; i < n; i++)
		texts[i] = given != NULL ? xstrdup(given[i]) :
		    xasprintf("text %lld", (long long)ids[i]);
	rc = vecembed_after_chunk(&C.nc_x, &ms, "d", ids, texts, n, &res);
	for (i = 0; i < n; i++)
		free(texts[i]);
	memory_settings_free(&ms);
	json_decref(node);
	return rc;
}

static int
after(const char *extra, const int64_t *ids, size_t n)
{
	return after_texts("E", extra, ids, NULL, n);
}

/* A9.4: the chunk's new memories first, then the oldest memories that
 * have no embedding by the model, each once; rows keyed by model. */
START_TEST(a9_4_new_then_backlog)
{
	int64_t	 old[3], nw[1];

	facts(THREE, old);
	facts("[" FACT("New", "a new fact") "]", nw);
	ck_assert_int_eq(after("{\"embeddingBackfillBatchSize\": 2}", nw, 1),
	    0);
	ck_inputs("[\"text 4\",\"Ann likes green tea\",\"Bob is forty\"]");
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings WHERE "
	    "model = 'emb-E' AND dim = 64 AND length(vector) = 256"), 3);
	/* the next chunk: its own and the one still missing */
	ck_assert_int_eq(after("{}", old, 1), 0);
	ck_inputs("[\"text 1\",\"cats purr softly\"]");
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings"), 4);
}
END_TEST

/* A batch size of 0, true or "5": only the chunk's own memories. */
START_TEST(a9_4_batch_size_not_an_integer)
{
	int64_t	 old[3], nw[1];

	facts(THREE, old);
	facts("[" FACT("New", "a new fact") "]", nw);
	ck_assert_int_eq(after("{\"embeddingBackfillBatchSize\": 0}", nw, 1),
	    0);
	ck_assert_int_eq(after("{\"embeddingBackfillBatchSize\": true}", nw,
	    1), 0);
	ck_assert_int_eq(after("{\"embeddingBackfillBatchSize\": \"5\"}", nw,
	    1), 0);
	ck_inputs("[\"text 4\"]|[\"text 4\"]|[\"text 4\"]");
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings"), 1);
}
END_TEST

/* Nothing new: no request. A failing endpoint is logged, not an
 * error; without the setting nothing happens. */
START_TEST(a9_4_best_effort)
{
	int64_t	 ids[3] = { 0, 0, 0 };
	struct memory_settings ms;
	struct wresult	 res;
	char	 one[] = "x", *x[] = { one };
	json_t	*node;

	ck_assert_int_eq(after("{}", ids, 0), 0);
	ck_assert_int_eq(it_mock_requests(&T), 0);
	facts(THREE, ids);
	ck_assert_int_eq(after_texts("Gone", "{}", ids, NULL, 1), 0);
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings"), 0);
	nodectx_settings(&C, json_object());
	memset(&res, 0, sizeof(res));
	node = it_json("{\"type\": \"QualityMemory\"}");
	ck_assert_int_eq(memory_settings_load(nodectx_ctx(&C, node), &ms,
	    &res), 0);
	ck_assert_int_eq(vecembed_after_chunk(&C.nc_x, &ms, "d", ids, x, 1,
	    &res), 0);
	memory_settings_free(&ms);
	json_decref(node);
	ck_assert_int_eq(it_mock_requests(&T), 0);
}
END_TEST

/* A9.3: several models coexist; the same model replaces its row. */
START_TEST(a9_3_models_coexist_and_replace)
{
	int64_t	 ids[3];
	double	 v[2] = { 1, 2 }, w[3] = { 3, 4, 5 };

	facts(THREE, ids);
	ck_assert_int_eq(vecembed_put(S, ids[0], "a", v, 2), 0);
	ck_assert_int_eq(vecembed_put(S, ids[0], "b", v, 2), 0);
	ck_assert_int_eq(vecembed_put(S, ids[0], "a", w, 3), 0);
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings"), 2);
	ck_assert_int_eq(q_int("SELECT dim FROM memory_embeddings WHERE "
	    "model = 'a'"), 3);
	/* a memory's embeddings go with it */
	ck_assert_int_eq(store_exec(S, "DELETE FROM vector_memories WHERE "
	    "id = ?", "i", ids[0]), 1);
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings"), 0);
}
END_TEST

/* Run a VectorMemorySearch node; its output. Caller frees. */
static char *
search(json_t *node)
{
	const struct node_type	*t = node_type_find(VMS);
	struct buf		 out = BUF_INIT;
	struct wresult		 res;
	bool			 streamed;

	memset(&res, 0, sizeof(res));
	ck_assert_msg(nodectx_run(&C, t, node, &out, &streamed, &res) == 0,
	    "%s", res.r_message);
	return out.b_data != NULL ? buf_take(&out) : xstrdup("");
}

#define ck_search(node, want) do {					\
	char	*s_ = search(node);					\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

/* Three memories with their embeddings by E's model. */
static void
embedded(void)
{
	const char *const	 texts[] = { "Ann likes green tea",
				    "Bob is forty", "cats purr softly" };
	int64_t			 ids[3];

	facts(THREE, ids);
	ck_assert_int_eq(after_texts("E", "{}", ids, texts, 3), 0);
	json_decref(it_mock_log(&T, true));
}

/* A9.5: semantic ranks by the embedding of semanticQuery (else the
 * keywords with ';' made spaces). The mock's vectors (a dimension a
 * word): "forty bob" shares two words with Bob's memory and none with
 * the others, whose zero scores keep the order they were stored in. */
START_TEST(a9_5_semantic)
{
	embedded();
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s, s:i, s:s}", "type", VMS,
	    "input", "nothing matches", "searchMode", "Semantic",
	    "embeddingEndpointName", "E", "limit", 2, "semanticQuery",
	    "forty bob"), "Bob is forty" SEP "Ann likes green tea");
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s, s:i}", "type", VMS,
	    "input", "purr;softly", "searchMode", "semantic",
	    "embeddingEndpointName", "E", "limit", 1), "cats purr softly");
	ck_inputs("[\"forty bob\"]|[\"purr softly\"]");
}
END_TEST

/* A9.5 fallbacks to keywords: no endpoint, an endpoint that fails, a
 * blank query (no request), nothing stored. */
START_TEST(a9_5_semantic_falls_back)
{
	facts(THREE, (int64_t[3]){ 0 });
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s}", "type", VMS, "input",
	    "forty", "searchMode", "semantic", "embeddingEndpointName", "E"),
	    "Bob is forty");		/* nothing embedded yet */
	ck_search(nodectx_json("{s:s, s:s, s:s}", "type", VMS, "input",
	    "forty", "searchMode", "semantic"), "Bob is forty");
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s}", "type", VMS, "input",
	    "forty", "searchMode", "hybrid", "embeddingEndpointName", "Gone"),
	    "Bob is forty");
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s}", "type", VMS, "input",
	    ";;", "searchMode", "semantic", "embeddingEndpointName", "E"),
	    NONE);
	ck_inputs("[\"forty\"]");
}
END_TEST

/* A9.5 hybrid: Reciprocal Rank Fusion of the keyword and the semantic
 * lists, cut to the limit; semantic-only finds are read by id. */
START_TEST(a9_5_hybrid)
{
	embedded();
	/* kw [Bob]; ranked [Ann, Bob, cats]: Bob 1/61 + 1/62, Ann 1/61,
	 * cats 1/63 */
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s, s:s}", "type", VMS,
	    "input", "forty", "searchMode", "hybrid", "embeddingEndpointName",
	    "E", "semanticQuery", "green tea"), "Bob is forty" SEP
	    "Ann likes green tea" SEP "cats purr softly");
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s, s:s, s:i}", "type", VMS,
	    "input", "forty", "searchMode", "hybrid", "embeddingEndpointName",
	    "E", "semanticQuery", "green tea", "limit", 2), "Bob is forty" SEP
	    "Ann likes green tea");
	/* an unknown mode is keyword search */
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s}", "type", VMS, "input",
	    "forty", "searchMode", "fuzzy", "embeddingEndpointName", "E"),
	    "Bob is forty");
}
END_TEST

/* A9.5 step 5: entity expansion applies to the fused list. Its seed
 * rows (Bob, Ann's tea) name Bob and Ann; the second search finds
 * "Ann visits Paris", which takes the reserved last slot. */
START_TEST(a9_5_expansion_after_hybrid)
{
	const char *const	 texts[] = { "Ann likes green tea",
				    "Bob is forty", "cats purr softly",
				    "Ann visits Paris" };
	int64_t			 ids[4];

	facts("[{\"title\": \"Tea\", \"summary\": \"Ann likes green tea\", "
	    "\"entities\": [\"Ann\"], \"key_phrases\": []}, {\"title\": "
	    "\"Age\", \"summary\": \"Bob is forty\", \"entities\": "
	    "[\"Bob\"], \"key_phrases\": []}," FACT("Cat", "cats purr softly")
	    "," FACT("Trip", "Ann visits Paris") "]", ids);
	ck_assert_int_eq(after_texts("E", "{}", ids, texts, 4), 0);
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s, s:s, s:i}", "type", VMS,
	    "input", "forty", "searchMode", "hybrid", "embeddingEndpointName",
	    "E", "semanticQuery", "green tea", "limit", 3), "Bob is forty" SEP
	    "Ann likes green tea" SEP "cats purr softly");
	ck_search(nodectx_json("{s:s, s:s, s:s, s:s, s:s, s:i, s:b}", "type",
	    VMS, "input", "forty", "searchMode", "hybrid",
	    "embeddingEndpointName", "E", "semanticQuery", "green tea", "limit",
	    3, "useEntityExpansion", 1), "Bob is forty" SEP
	    "Ann likes green tea" SEP "Ann visits Paris");
}
END_TEST

/* A cancelled request stops the search. */
START_TEST(a9_5_cancelled)
{
	const struct node_type	*t = node_type_find(VMS);
	struct buf		 out = BUF_INIT;
	struct wresult		 res;
	bool			 streamed;

	embedded();
	C.nc_rq.fr_stopped = true;
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(nodectx_run(&C, t, nodectx_json("{s:s, s:s, s:s, "
	    "s:s}", "type", VMS, "input", "forty", "searchMode", "semantic",
	    "embeddingEndpointName", "E"), &out, &streamed, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	buf_free(&out);
}
END_TEST

/* A9.6: the offline backfill embeds, a batch a request, every memory
 * without a vector by the endpoint's model, for either API type; an
 * endpoint that cannot be reached stops it after three tries with
 * nothing kept. */
START_TEST(a9_6_backfill_run)
{
	struct backfill_opts	 o;
	int64_t			 ids[8];
	int			 fd = dup(1);

	facts(THREE, ids);
	nodectx_write(&C, "Users/u.json", "{\"chatCompleteAddUserAssistant\": "
	    "false, \"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"endpointConfigsSubDirectory\": \"\"}");
	o = (struct backfill_opts){ C.nc_db.sd_dir, "u", "E", C.nc_db.sd_path,
	    false, 2 };
	ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
	ck_assert_int_eq(vecbackfill_run(&o), 0);
	ck_inputs("[\"Ann likes green tea\",\"Bob is forty\"]|"
	    "[\"cats purr softly\"]");
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings WHERE "
	    "model = 'emb-E'"), 3);
	o.bo_endpoint = "O";
	o.bo_batch = VECBACKFILL_BATCH;
	ck_assert_int_eq(vecbackfill_run(&o), 0);
	ck_inputs("[\"Ann likes green tea\",\"Bob is forty\","
	    "\"cats purr softly\"]");
	ck_assert_int_eq(vecbackfill_run(&o), 0);	/* nothing left */
	ck_inputs("");
	o.bo_endpoint = "Gone";
	ck_assert_int_eq(vecbackfill_run(&o), EX_UNAVAILABLE);
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings WHERE "
	    "model = 'emb-Gone'"), 0);
	ck_assert_int_eq(q_int("SELECT count(*) FROM memory_embeddings"), 6);
	o.bo_store = "/nonexistent/sluice.db";
	o.bo_endpoint = "E";
	ck_assert_int_eq(vecbackfill_run(&o), EX_NOINPUT);
	fflush(stdout);
	dup2(fd, 1);
	close(fd);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "a9_4_new_then_backlog", a9_4_new_then_backlog },
		{ "a9_4_batch_size_not_an_integer",
		    a9_4_batch_size_not_an_integer },
		{ "a9_4_best_effort", a9_4_best_effort },
		{ "a9_3_models_coexist_and_replace",
		    a9_3_models_coexist_and_replace },
		{ "a9_5_semantic", a9_5_semantic },
		{ "a9_5_semantic_falls_back", a9_5_semantic_falls_back },
		{ "a9_5_hybrid", a9_5_hybrid },
		{ "a9_5_expansion_after_hybrid", a9_5_expansion_after_hybrid },
		{ "a9_5_cancelled", a9_5_cancelled },
		{ "a9_6_backfill_run", a9_6_backfill_run },
	};

	return it_main(it_suite_fixture("vecembed", cases,
	    sizeof(cases) / sizeof(cases[0]), 20, setup, teardown));
}
