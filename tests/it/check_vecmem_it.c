/* check_vecmem_it.c - integration: QualityMemory's vector memories written by workers into the shared database, VectorMemorySearch reading them, and the two keyword search tools. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "../../common/buf.h"
#include "../../common/sha256.h"
#include "../testmain.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;

/* Chunks of 10 estimated tokens: every message of the test
 * conversations is a chunk of its own; the last message is held back. */
static const char settings[] = "{\"endpointName\": \"Mock\", \"preset\":"
    " \"Mock\", \"useVectorForQualityMemory\": true,"
    " \"vectorMemoryChunkEstimatedTokenSize\": 10,"
    " \"vectorMemoryMaxMessagesBetweenChunks\": 2,"
    " \"vectorMemoryIndexTopics\": true, \"lookbackStartTurn\": 1,"
    " \"embeddingEndpointName\": \"Nowhere\"}\n";

static const char user[] = "{\"customWorkflowOverride\": true,"
    " \"customWorkflow\": \"Main\", \"chatCompleteAddUserAssistant\": false,"
    " \"chatCompletionAddMissingAssistantGenerator\": false,"
    " \"endpointConfigsSubDirectory\": \"it\","
    " \"discussionIdMemoryFileWorkflowSettings\": \"MemSettings\"}\n";

static const char writer[] = "{\"nodes\": ["
    "{\"type\": \"StaticResponse\", \"content\": \"ok\", \"returnToUser\":"
    " true}, {\"type\": \"QualityMemory\"}]}\n";

/* The facts the mock answers for the user messages: the script rides
 * in the message, so it reaches the memory call's prompt. */
#define REX_FACT "[{\\\"title\\\": \\\"Dog\\\", \\\"summary\\\": " \
	"\\\"The user adopted a dog named Rex.\\\", \\\"entities\\\": " \
	"[\\\"Rex\\\"], \\\"key_phrases\\\": [\\\"adopted dog\\\"], " \
	"\\\"topics\\\": [\\\"pets\\\"]}]"
#define SARAH_FACT "{\\\"title\\\": \\\"Family\\\", \\\"summary\\\": \\\"The " \
	"user's sister Sarah is a nurse.\\\", \\\"entities\\\": " \
	"[\\\"Sarah\\\"], \\\"key_phrases\\\": [\\\"sister\\\", \\\"nurse\\\"]}"
#define BALL_FACT "[{\\\"title\\\": \\\"Rex\\\", \\\"summary\\\": \\\"Rex " \
	"loves chasing tennis balls.\\\", \\\"entities\\\": [\\\"Rex\\\"], " \
	"\\\"key_phrases\\\": [\\\"tennis balls\\\"]}, {\\\"title\\\": " \
	"\\\"incomplete\\\"}]"

static const char *const convo[] = {
	"I adopted a dog named Rex.\n#mock {\"head_delay_ms\": 300, \"text\":"
	    " \"Sure:\\n```json\\n" REX_FACT "\\n```\"}",
	"How lovely, tell me more.",
	"My sister Sarah works as a nurse.\n#mock {\"text\": \"" SARAH_FACT
	    "\"}",
	"Nice.",
	"Rex loves chasing tennis balls all day.\n#mock {\"text\": \""
	    BALL_FACT "\"}",
	"Good to know.",
	"What do you remember?",
};

static void
start(const char *main_wf)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 2, \"max_workers\": 2", NULL);
	it_file(&T, "Users/it.json", user);
	it_file(&T, "Workflows/it/MemSettings.json", settings);
	it_file(&T, "Workflows/it/Main.json", main_wf);
	it_gateway_start(&T, NULL);
}

/* The request body for a conversation of the n messages of msgs, in
 * discussion id (none when NULL). Caller frees. */
static char *
turn_body(const char *id, const char *const *msgs, int n, bool stream)
{
	json_t		*a = json_array(), *b;
	char		 sys[128], *body;
	int		 k;

	if (id != NULL)
		snprintf(sys, sizeof(sys), "Be kind. [DiscussionId]%s"
		    "[/DiscussionId]", id);
	else
		snprintf(sys, sizeof(sys), "Be kind.");
	json_array_append_new(a, json_pack("{s:s,s:s}", "role", "system",
	    "content", sys));
	for (k = 0; k < n; k++)
		json_array_append_new(a, json_pack("{s:s,s:s}", "role",
		    k % 2 == 0 ? "user" : "assistant", "content", msgs[k]));
	b = json_pack("{s:s,s:b,s:o}", "model", "it", "stream", stream,
	    "messages", a);
	body = json_dumps(b, 0);
	json_decref(b);
	return body;
}

/* The answer to that conversation, not streamed. Caller frees. */
static char *
turn(const char *id, const char *const *msgs, int n)
{
	char		*body = turn_body(id, msgs, n, false), *ans;
	struct it_resp	 r;
	json_t		*j;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status,
	    r.r_body.b_data);
	j = it_json(r.r_body.b_data);
	ans = strdup(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(j, "choices"), 0), "message"),
	    "content")));
	json_decref(j);
	it_resp_free(&r);
	free(body);
	return ans;
}

static void
turn_ok(const char *id, int n)
{
	char	*a = turn(id, convo, n);

	ck_assert_str_eq(a, "ok");
	free(a);
}

/* Content of message m of backend request i. */
static const char *
sent(json_t *log, size_t i, size_t m)
{
	return json_string_value(json_object_get(json_array_get(
	    json_object_get(json_object_get(json_array_get(log, i), "body"),
	    "messages"), m), "content"));
}

static void
wait_rows(const char *table, const char *id, long long n)
{
	char	 sql[256];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE discussion "
	    "= '%s'", table, id);
	ck_assert_msg(it_db_wait(&T, sql, n, 5000), "%s of '%s': not %lld "
	    "rows (%lld)", table, id, n, it_db_int(&T, sql));
	it_wait_idle(&T, 2);
}

/* The hash log of id, newest first, joined by ','. */
static char *
hash_log(const char *id)
{
	char	 sql[256];

	snprintf(sql, sizeof(sql), "SELECT coalesce(group_concat(message_hash,"
	    " ','), '') FROM (SELECT message_hash FROM vector_hash_log WHERE "
	    "discussion = '%s' ORDER BY id DESC)", id);
	return it_db_text(&T, sql);
}

static char *
hashes_of(const int *k, int n, char *out, size_t outlen)
{
	char	 h[65];
	size_t	 len = 0;
	int	 i;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		sha256_hex(convo[k[i]], strlen(convo[k[i]]), h);
		len += (size_t)snprintf(out + len, outlen - len, "%s%s",
		    i > 0 ? "," : "", h);
	}
	return out;
}

/* Five messages, the last held back: one chunk per message, four LLM
 * calls; the user messages' answers hold facts (one as a fenced list,
 * one as a bare object), the assistants' none. */
START_TEST(vector_memories_written)
{
	json_t	*log;
	char	*t, want[512];
	size_t	 from = 0;

	start(writer);
	turn_ok("vec1", 5);
	wait_rows("vector_memories", "vec1", 2);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 4);
	ck_assert_ptr_eq(strstr(sent(log, 0, 0), "You are an expert AI "
	    "assistant that analyzes text"), sent(log, 0, 0));
	ck_assert_ptr_nonnull(strstr(sent(log, 0, 1), "extract the facts"));
	ck_assert_ptr_nonnull(strstr(sent(log, 0, 1), "Memory Text:\nI adopted "
	    "a dog named Rex.\n#mock "));
	ck_assert_ptr_nonnull(strstr(sent(log, 1, 1), "Memory Text:\nHow "
	    "lovely, tell me more.\nJSON Output:"));
	ck_assert_ptr_nonnull(strstr(sent(log, 3, 1), "\nNice.\n"));
	json_decref(log);
	t = it_db_text(&T, "SELECT group_concat(memory_text, '|') FROM (SELECT "
	    "memory_text FROM vector_memories ORDER BY id)");
	ck_assert_str_eq(t, "The user adopted a dog named Rex.|The user's "
	    "sister Sarah is a nurse.");
	free(t);
	t = it_db_text(&T, "SELECT metadata_json FROM vector_memories WHERE "
	    "memory_text LIKE '%Rex%'");
	ck_assert_str_eq(t, "{\"title\": \"Dog\", \"summary\": \"The user "
	    "adopted a dog named Rex.\", \"entities\": [\"Rex\"], "
	    "\"key_phrases\": [\"adopted dog\"], \"topics\": [\"pets\"]}");
	free(t);
	t = it_db_text(&T, "SELECT title || '|' || entities || '|' || "
	    "key_phrases FROM vector_fts WHERE rowid = (SELECT id FROM "
	    "vector_memories WHERE memory_text LIKE '%Rex%')");
	ck_assert_str_eq(t, "Dog|Rex|adopted dog pets");
	free(t);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM vector_fts"), 2);
	t = hash_log("vec1");
	ck_assert_str_eq(t, hashes_of((int[]){ 2, 0 }, 2, want, sizeof(want)));
	free(t);
	ck_assert_msg(it_log_wait(&T, "embeddingEndpointName: ", &from, 1000),
	    "no warning about the missing embeddings endpoint");
	it_stop_clean(&T);
}
END_TEST

/* A later turn: the new messages start after the newest logged hash.
 * The same turn again: nothing new. Another discussion starts afresh. */
START_TEST(vector_memories_resume)
{
	json_t	*log;
	char	*t, want[512];

	start(writer);
	turn_ok("vec1", 5);
	wait_rows("vector_memories", "vec1", 2);
	json_decref(it_mock_log(&T, true));
	turn_ok("vec1", 7);
	wait_rows("vector_memories", "vec1", 3);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 3);
	ck_assert_ptr_nonnull(strstr(sent(log, 0, 1), "Memory Text:\nNice.\n"));
	json_decref(log);
	t = hash_log("vec1");
	ck_assert_str_eq(t, hashes_of((int[]){ 4, 2, 0 }, 3, want,
	    sizeof(want)));
	free(t);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM vector_memories "
	    "WHERE memory_text = 'Rex loves chasing tennis balls.'"), 1);

	turn_ok("vec1", 7);
	it_wait_idle(&T, 2);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 0);
	json_decref(log);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM vector_memories"),
	    3);

	turn_ok("vec2", 3);
	wait_rows("vector_memories", "vec2", 1);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM vector_memories "
	    "WHERE discussion = 'vec1'"), 3);
	t = it_db_text(&T, "PRAGMA integrity_check");
	ck_assert_str_eq(t, "ok");
	free(t);
	it_stop_clean(&T);
}
END_TEST

/* A later turn's VectorMemorySearch nodes find the facts: plain, with
 * entity expansion, with dates, hostile keywords, topics with weights
 * and recency, a hybrid search that falls back to keywords. */
static const char searcher[] = "{\"word\": \"tennis\", \"nodes\": ["
    "{\"type\": \"VectorMemorySearch\", \"input\": \"dog\"},"
    "{\"type\": \"VectorMemorySearch\", \"input\": \"dog\","
    " \"useEntityExpansion\": true},"
    "{\"type\": \"VectorMemorySearch\", \"input\": \"nurse\","
    " \"includeDates\": true},"
    "{\"type\": \"VectorMemorySearch\", \"input\": \"\\\"; *; NEAR(; -;"
    " ^x:y; AND OR NOT; (((; title: dog*\", \"limit\": 3},"
    "{\"type\": \"VectorMemorySearch\", \"input\": \"pets\", \"limit\": \"2\","
    " \"bm25Weights\": [3.0, 2.0, 2.0, 2.0, 0.5],"
    " \"useRecencyScoring\": true},"
    "{\"type\": \"VectorMemorySearch\", \"input\": \"{word}\","
    " \"searchMode\": \"hybrid\", \"bm25Weights\": [1, 2]},"
    "{\"type\": \"StaticResponse\", \"content\": \"1[{agent1Output}]"
    " 2[{agent2Output}] 3[{agent3Output}] 4[{agent4Output}]"
    " 5[{agent5Output}] 6[{agent6Output}]\"}]}\n";

START_TEST(vector_search_reads_them)
{
	char	*a, *day, want[1024];
	size_t	 from = 0;
	int	 i;

	start(writer);
	turn_ok("s", 7);
	wait_rows("vector_memories", "s", 3);
	it_file(&T, "Workflows/it/Main.json", searcher);
	a = turn("s", convo, 7);
	day = it_db_text(&T, "SELECT substr(date_added, 1, 10) FROM "
	    "vector_memories WHERE memory_text LIKE '%nurse%'");
	ck_assert_int_eq(strlen(day), 10);
	snprintf(want, sizeof(want), "1[The user adopted a dog named Rex.] "
	    "2[The user adopted a dog named Rex.\n\n---\n\nRex loves chasing "
	    "tennis balls.] 3[[%s] The user's sister Sarah is a nurse.] "
	    "4[No relevant memories found in the vector database for the "
	    "given keywords.] 5[The user adopted a dog named Rex.] 6[Rex "
	    "loves chasing tennis balls.]", day);
	ck_assert_str_eq(a, want);
	free(a);
	free(day);
	ck_assert_msg(it_log_wait(&T, "bm25Weights must be a list of exactly 5 "
	    "numbers", &from, 1000), "no warning about the weights");
	ck_assert_msg(it_log_wait(&T, "searchMode 'hybrid' needs an "
	    "embeddingEndpointName", &from, 1000), "no warning about the "
	    "search mode");

	a = turn(NULL, convo, 3);
	want[0] = '\0';
	for (i = 1; i <= 6; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
		    "%s%d[Cannot perform VectorMemorySearch without a "
		    "discussionId.]", i > 1 ? " " : "", i);
	ck_assert_str_eq(a, want);
	free(a);
	a = turn("empty", convo, 1);
	ck_assert_ptr_nonnull(strstr(a, "1[No relevant memories found in the "
	    "vector database for the given keywords.] 2[No relevant"));
	free(a);
	it_stop_clean(&T);
}
END_TEST

/* A9.4 and A9.5 through the gateway: each chunk's memories are
 * embedded by the settings' endpoint (one /v1/embeddings request each),
 * and a later turn's semantic and hybrid searches rank by them. */
static const char semantic[] = "{\"nodes\": ["
    "{\"type\": \"VectorMemorySearch\", \"input\": \"zzz\","
    " \"searchMode\": \"semantic\", \"embeddingEndpointName\": \"Emb\","
    " \"semanticQuery\": \"sister nurse\", \"limit\": 1},"
    "{\"type\": \"VectorMemorySearch\", \"input\": \"dog\","
    " \"searchMode\": \"hybrid\", \"embeddingEndpointName\": \"Emb\","
    " \"semanticQuery\": \"tennis balls\", \"limit\": 2},"
    "{\"type\": \"StaticResponse\", \"content\": \"1[{agent1Output}]"
    " 2[{agent2Output}]\"}]}\n";

/* The inputs of the mock's /v1/embeddings requests, '|' between. */
static char *
embed_inputs(json_t *log)
{
	struct buf	 b = BUF_INIT;
	json_t		*r;
	size_t		 i;
	char		*s;

	json_array_foreach(log, i, r) {
		if (strcmp(json_string_value(json_object_get(r, "path")),
		    "/v1/embeddings") != 0)
			continue;
		s = json_dumps(json_object_get(r, "body"), JSON_COMPACT |
		    JSON_SORT_KEYS);
		buf_printf(&b, "%s%s", b.b_len ? "|" : "", s);
		free(s);
	}
	buf_adds(&b, "");
	return buf_take(&b);
}

START_TEST(a9_embeddings_through_the_gateway)
{
	char	 url[64], *set, *t, *a;
	json_t	*log;

	set = strdup(settings);
	memcpy(strstr(set, "\"Nowhere\""), "\"Emb\"    ", 9);
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 2, \"max_workers\": 2", NULL);
	it_file(&T, "Users/it.json", user);
	it_file(&T, "Workflows/it/MemSettings.json", set);
	it_file(&T, "Workflows/it/Main.json", writer);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", T.it_mock_port);
	it_backend(&T, NULL, "Emb", "openAIEmbeddings", url, "", "");
	it_gateway_start(&T, NULL);
	free(set);

	turn_ok("e", 7);
	wait_rows("vector_memories", "e", 3);
	ck_assert_msg(it_db_wait(&T, "SELECT count(*) FROM memory_embeddings "
	    "WHERE model = 'm' AND dim = 64", 3, 5000), "not 3 embeddings");
	log = it_mock_log(&T, true);
	t = embed_inputs(log);
	ck_assert_str_eq(t, "{\"input\":[\"The user adopted a dog named "
	    "Rex.\"],\"model\":\"m\"}|{\"input\":[\"The user's sister Sarah "
	    "is a nurse.\"],\"model\":\"m\"}|{\"input\":[\"Rex loves chasing "
	    "tennis balls.\"],\"model\":\"m\"}");
	free(t);
	json_decref(log);

	it_file(&T, "Workflows/it/Main.json", semantic);
	a = turn("e", convo, 7);
	ck_assert_str_eq(a, "1[The user's sister Sarah is a nurse.] 2[The "
	    "user adopted a dog named Rex.\n\n---\n\nRex loves chasing "
	    "tennis balls.]");
	free(a);
	log = it_mock_log(&T, true);
	t = embed_inputs(log);
	ck_assert_str_eq(t, "{\"input\":[\"sister nurse\"],\"model\":"
	    "\"m\"}|{\"input\":[\"tennis balls\"],\"model\":\"m\"}");
	free(t);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* ---- sluice-gateway --backfill-embeddings (A9.6) ---- */

struct offline {
	int	 o_status;
	char	*o_out;
	char	*o_err;
};

/* sluice-gateway on the test's folder with args (NULL-terminated, at
 * most 8), run to its end. */
static void
offline(const char *const *args, struct offline *o)
{
	char		 state[300], out[300], err[300];
	const char	*argv[16] = { "--config-dir", T.it_dir, "--state-dir",
			    state };
	int		 n = 4;

	snprintf(state, sizeof(state), "%s/state", T.it_dir);
	snprintf(out, sizeof(out), "%s/offline.out", T.it_dir);
	snprintf(err, sizeof(err), "%s/offline.err", T.it_dir);
	for (; *args != NULL && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	o->o_status = it_gateway_once(argv, out, err);
	o->o_out = it_file_text(out);
	o->o_err = it_file_text(err);
}

/* --backfill-embeddings ep, with --backfill-batch-size batch unless
 * it is NULL. */
static void
backfill(const char *ep, const char *batch, struct offline *o)
{
	const char	*args[] = { "--backfill-embeddings", ep,
			    batch != NULL ? "--backfill-batch-size" : NULL,
			    batch, NULL };

	offline(args, o);
}

static void
offline_free(struct offline *o)
{
	free(o->o_out);
	free(o->o_err);
}

#define ck_in(hay, needle)	ck_assert_msg(strstr(hay, needle) != NULL, \
	"'%s' not in:\n%s", needle, hay)

/* Older facts that lack a vector by the endpoint's model (one has it,
 * one has another model's) are embedded discussion by discussion,
 * oldest first, a batch a request; the run ends with nothing left.
 * A batch the backend keeps refusing stops the run after three tries,
 * keeping what was done; an endpoint that does not embed is refused. */
START_TEST(a9_6_backfill_embeddings)
{
	struct offline	 o;
	char		 url[64], dir[400], *t;
	const char	*import[] = { "--import-wilmer", dir, NULL };
	json_t		*log;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1", NULL);
	it_file(&T, "Users/it.json", user);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", T.it_mock_port);
	it_backend(&T, NULL, "Emb", "openAIEmbeddings", url, "", "");
	/* the database, made by an import as a WilmerAI user's would be */
	snprintf(dir, sizeof(dir), "%s/w/DiscussionIds/o", T.it_dir);
	it_file(&T, "w/DiscussionIds/o/memories.json", "[]");
	offline(import, &o);
	ck_assert_msg(o.o_status == 0, "%s%s", o.o_out, o.o_err);
	offline_free(&o);
	backfill("Emb", NULL, &o);
	ck_assert_int_eq(o.o_status, 0);
	ck_in(o.o_out, "total: 0 memories embedded by 'Emb' (model 'm'); 0 "
	    "left\n");
	offline_free(&o);
	it_db_exec(&T, "INSERT INTO discussions VALUES ('p', 0), ('q', 0);"
	    "INSERT INTO vector_memories (id, discussion, memory_text, "
	    "date_added) VALUES (1, 'p', 'one', 'd'), (2, 'p', 'two', 'd'), "
	    "(3, 'q', 'three', 'd'), (4, 'p', 'four', 'd'), "
	    "(5, 'p', 'five', 'd'), (6, 'p', 'six', 'd');"
	    "INSERT INTO memory_embeddings VALUES (2, 'm', 1, x'0000803F'),"
	    " (4, 'z', 1, x'0000803F');");
	backfill("Emb", "2", &o);
	ck_assert_msg(o.o_status == 0, "%s%s", o.o_out, o.o_err);
	ck_in(o.o_out, "\np: 4 memories embedded\nq: 1 memory embedded\n"
	    "total: 5 memories embedded by 'Emb' (model 'm'); 0 left\n");
	offline_free(&o);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM "
	    "memory_embeddings WHERE model = 'm' AND dim = 64"), 5);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM "
	    "memory_embeddings"), 7);
	log = it_mock_log(&T, true);
	t = embed_inputs(log);
	ck_assert_str_eq(t, "{\"input\":[\"one\",\"four\"],\"model\":\"m\"}|"
	    "{\"input\":[\"five\",\"six\"],\"model\":\"m\"}|{\"input\":"
	    "[\"three\"],\"model\":\"m\"}");
	free(t);
	json_decref(log);

	it_db_exec(&T, "INSERT INTO discussions VALUES ('r', 0);"
	    "INSERT INTO vector_memories (id, discussion, memory_text, "
	    "date_added) VALUES (7, 'r', '#embed-status 500', 'd');");
	backfill("Emb", NULL, &o);
	ck_assert_int_eq(o.o_status, 69);
	ck_in(o.o_out, "total: 0 memories embedded by 'Emb' (model 'm'); 1 "
	    "left\n");
	ck_in(o.o_err, "error: stopped after 3 failed requests in a row\n");
	ck_in(o.o_err, "error: discussion 'r': ");
	offline_free(&o);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 3);
	json_decref(log);

	it_file(&T, "ApiTypes/Chat.json", "{\"type\": \"openAIChatCompletion\"}");
	it_file(&T, "Endpoints/it/Chat.json", "{\"endpoint\": \"http://"
	    "127.0.0.1:1\", \"apiTypeConfigFileName\": \"Chat\", "
	    "\"modelNameToSendToAPI\": \"m\"}");
	backfill("Chat", NULL, &o);
	ck_assert_int_eq(o.o_status, 78);
	ck_in(o.o_err, "which is not an embeddings type");
	offline_free(&o);
	it_stop_clean(&T);
}
END_TEST

/* Two workers answer the same turn at once: one writes the memories,
 * the other finds them written; no chunk is stored twice. */
START_TEST(vector_memories_concurrent)
{
	struct it_stream	 st[2];
	char			*body = turn_body("c", convo, 5, true);
	json_t			*log;
	int			 i;

	start(writer);
	memset(st, 0, sizeof(st));
	for (i = 0; i < 2; i++)
		st[i].s_body = body;
	it_streams(&T, st, 2, 20000, NULL, NULL);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(st[i].s_status, 200);
		ck_assert_msg(strstr(st[i].s_out.b_data, "[DONE]") != NULL,
		    "stream %d did not end", i);
		buf_free(&st[i].s_out);
	}
	wait_rows("vector_memories", "c", 2);
	it_sleep(500);
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM vector_memories"),
	    2);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM vector_hash_log"),
	    2);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 4);
	json_decref(log);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* ---- the keyword tools ------------------------------------------- */

/* Message k of the keyword conversation: about 380 estimated tokens,
 * so each is a chunk of its own. Caller frees. */
static char *
long_msg(const char *head)
{
	struct buf	 b = BUF_INIT;
	int		 i;

	buf_adds(&b, head);
	for (i = 0; i < 250; i++)
		buf_adds(&b, i > 0 ? " la" : "la");
	return buf_take(&b);
}

static const char kw_flow[] = "{\"nodes\": ["
    "{\"type\": \"ConversationalKeywordSearchPerformerTool\", \"keywords\":"
    " \"User bicycle cat {who}\"},"
    "{\"type\": \"ConversationalKeywordSearchPerformerTool\", \"keywords\":"
    " \"Tom\", \"lookbackStartTurn\": 2},"
    "{\"type\": \"MemoryKeywordSearchPerformerTool\", \"keywords\":"
    " \"Rex bicycle\", \"searchTarget\": \"RecentMemories\"},"
    "{\"type\": \"MemoryKeywordSearchPerformerTool\", \"keywords\": \"Rex\"},"
    "{\"type\": \"ConversationalKeywordSearchPerformerTool\"},"
    "{\"type\": \"ConversationalKeywordSearchPerformerTool\", \"keywords\":"
    " \"la\", \"lookbackStartTurn\": 50},"
    "{\"type\": \"StaticResponse\", \"content\": \"1[{agent1Output}]"
    " 2[{agent2Output}] 3[{agent3Output}] 4[{agent4Output}]"
    " 5[{agent5Output}] 6[{agent6Output}]\"}], \"who\": \"Tom\"}\n";

START_TEST(keyword_tools)
{
	char		*m[5], *a, *body[4];
	struct buf	 want = BUF_INIT;
	int		 i;

	start(kw_flow);
	m[0] = long_msg("User: I bought a red bicycle yesterday. ");
	m[1] = long_msg("Assistant: Bicycles are great for you. ");
	m[2] = long_msg("User: My cat is called Tom. ");
	m[3] = long_msg("Assistant: Tom is a nice name. ");
	m[4] = strdup("User: Which one did I buy?");
	for (i = 0; i < 4; i++)		/* what the search returns */
		body[i] = strchr(m[i], ':') + 2;
	a = turn("kw", (const char *const *)m, 5);	/* makes the store */
	free(a);
	it_db_exec(&T, "INSERT INTO discussions VALUES ('kw', 0);"
	    "INSERT INTO memories (discussion, text, hash, created_at) VALUES"
	    " ('kw', 'User: Rex is a dog', 'h1', 0),"
	    " ('kw', 'Tom likes bicycle rides', 'h2', 0),"
	    " ('kw', 'nothing', 'h3', 0),"
	    " ('kw', 'Rex again', 'h4', 0),"
	    " ('kw', 'bicycle four', 'h5', 0),"
	    " ('other', 'Rex elsewhere', 'h6', 0)");
	a = turn("kw", (const char *const *)m, 5);
	buf_printf(&want, "1[%s--ChunkBreak--%s--ChunkBreak--%s] 2[%s] "
	    "3[Rex is a dog\n\nTom likes bicycle rides] 4[] 5[No keywords "
	    "specified in Keyword Search node] 6[There are no memories. This "
	    "conversation has not gone long enough for there to be memories.]",
	    body[2], body[0], body[3], body[3]);
	ck_assert_str_eq(a, want.b_data);
	free(a);
	a = turn(NULL, (const char *const *)m, 5);	/* no discussion */
	ck_assert_ptr_nonnull(strstr(a, "] 3[] 4[] 5["));
	free(a);
	for (i = 0; i < 5; i++)
		free(m[i]);
	buf_free(&want);
	it_stop_clean(&T);
}
END_TEST

/* The facts of each stored chunk are merged into the state document by
 * the user's workflow (here: the mock echoes the merge prompt);
 * GetCurrentStateDocument reads it back, and the one before is kept. */
START_TEST(state_document)
{
	char	*t, *a;

	start(writer);
	it_file(&T, "Workflows/it/MemSettings.json", "{\"endpointName\":"
	    " \"Mock\", \"preset\": \"Mock\", \"useVectorForQualityMemory\":"
	    " true, \"vectorMemoryChunkEstimatedTokenSize\": 10,"
	    " \"vectorMemoryMaxMessagesBetweenChunks\": 2,"
	    " \"lookbackStartTurn\": 1, \"useStateDocument\": true,"
	    " \"stateDocumentWorkflowName\": \"StateDoc\"}\n");
	it_file(&T, "Workflows/it/StateDoc.json", "{\"nodes\": [{\"type\":"
	    " \"Standard\", \"endpointName\": \"Mock\", \"preset\": \"Mock\","
	    " \"prompt\": \"Doc: {agent2Input} + {agent1Input}\\n#mock"
	    " {\\\"echo\\\": true}\", \"maxResponseSizeInTokens\": 100}]}\n");
	turn_ok("sd", 3);
	wait_rows("state_documents", "sd", 1);
	t = it_db_text(&T, "SELECT text FROM state_documents");
	ck_assert_str_eq(t, "Doc:  + - The user adopted a dog named Rex.");
	free(t);
	turn_ok("sd", 5);
	ck_assert(it_db_wait(&T, "SELECT count(*) FROM state_documents WHERE "
	    "previous IS NOT NULL", 1, 5000));
	it_wait_idle(&T, 2);
	it_file(&T, "Workflows/it/Main.json", "{\"nodes\": [{\"type\":"
	    " \"GetCurrentStateDocument\"}, {\"type\": \"StaticResponse\","
	    " \"content\": \"{agent1Output}\"}]}\n");
	a = turn("sd", convo, 5);
	ck_assert_str_eq(a, "Doc: Doc:  + - The user adopted a dog named Rex. "
	    "+ - The user's sister Sarah is a nurse.");
	free(a);
	t = it_db_text(&T, "SELECT previous FROM state_documents");
	ck_assert_str_eq(t, "Doc:  + - The user adopted a dog named Rex.");
	free(t);
	a = turn("no-doc-yet", convo, 1);
	ck_assert_str_eq(a, "No state document has been created yet");
	free(a);
	it_stop_clean(&T);
}
END_TEST

static Suite *
vecmem_it_suite(void)
{
	Suite	*s = suite_create("vecmem_it");
	TCase	*tc;

	tc = tcase_create("write");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, vector_memories_written);
	tcase_add_test(tc, vector_memories_resume);
	tcase_add_test(tc, vector_memories_concurrent);
	tcase_add_test(tc, state_document);
	suite_add_tcase(s, tc);

	tc = tcase_create("search");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, vector_search_reads_them);
	tcase_add_test(tc, a9_embeddings_through_the_gateway);
	tcase_add_test(tc, a9_6_backfill_embeddings);
	suite_add_tcase(s, tc);

	tc = tcase_create("keywords");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, keyword_tools);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(vecmem_it_suite());
}
