/* check_crypt_it.c - integration: encryptUsingApiKey, memories written by a real worker as Fernet tokens in the shared database, read back with the same API key, isolated from another (addendum A10). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/fernet.h"
#include "../testmain.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;

/* Memory calls echo their prompt (the mock's "echo"), so a memory's
 * text is its chunk's message; the system prompt shows the memories
 * already there. One message a chunk. */
static const char settings[] = "{\"endpointName\": \"Mock\", \"preset\":"
    " \"Mock\", \"maxResponseSizeInTokens\": 100,"
    " \"systemPrompt\": \"Memories so far: [Memory_file]\","
    " \"prompt\": \"Summarise [TextChunk]\\n#mock {\\\"echo\\\": true}\","
    " \"chunkEstimatedTokenSize\": 10, \"maxMessagesBetweenChunks\": 2,"
    " \"lookbackStartTurn\": 2}\n";

static const char user[] = "{\"customWorkflowOverride\": true,"
    " \"customWorkflow\": \"Main\", \"chatCompleteAddUserAssistant\": false,"
    " \"chatCompletionAddMissingAssistantGenerator\": false,"
    " \"endpointConfigsSubDirectory\": \"it\","
    " \"discussionIdMemoryFileWorkflowSettings\": \"MemSettings\","
    " \"encryptUsingApiKey\": %s}\n";

/* The answer, then memories, with timestamps on. */
static const char writer[] = "{\"nodes\": ["
    "{\"type\": \"StaticResponse\", \"content\": \"ok\", \"returnToUser\":"
    " true, \"addDiscussionIdTimestampsForLLM\": true},"
    " {\"type\": \"QualityMemory\"}]}\n";

/* One user "it", or two ("it", "it2") with the same files; gw: the
 * gateway's settings. */
static void
start_with(bool encrypt, bool two, const char *gw)
{
	char	 u[1024];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, gw, NULL);
	snprintf(u, sizeof(u), user, encrypt ? "true" : "false");
	it_file(&T, "Users/it.json", u);
	it_file(&T, "Workflows/it/MemSettings.json", settings);
	it_file(&T, "Workflows/it/Main.json", writer);
	if (two) {
		it_file(&T, "Users/it2.json", u);
		it_file(&T, "Workflows/it2/MemSettings.json", settings);
		it_file(&T, "Workflows/it2/Main.json", writer);
		snprintf(T.it_users, sizeof(T.it_users), "it it2");
	}
	it_gateway_start(&T, NULL);
}

static void
start(bool encrypt, bool two)
{
	start_with(encrypt, two, "\"min_workers\": 1, \"max_workers\": 1");
}

/* n turns of discussion id for user (model) model, sent with
 * "Authorization: Bearer key". */
static void
turn_as(const char *model, const char *key, const char *id, int n)
{
	json_t		*msgs = json_array(), *b;
	char		 sys[128], text[64], url[128], auth[128], *body;
	const char	*hdrs[2] = { key != NULL ? auth : NULL, NULL };
	struct it_resp	 r;
	int		 k;

	snprintf(sys, sizeof(sys), "You are kind. [DiscussionId]%s"
	    "[/DiscussionId]", id);
	json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system",
	    "content", sys));
	for (k = 1; k <= n; k++) {
		snprintf(text, sizeof(text), "Msg %d alpha beta gamma delta "
		    "epsilon zeta", k);
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    k % 2 ? "user" : "assistant", "content", text));
	}
	b = json_pack("{s:s,s:b,s:o}", "model", model, "stream", false,
	    "messages", msgs);
	body = json_dumps(b, 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions",
	    T.it_port);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
	    key != NULL ? key : "");
	ck_assert_int_eq(it_request_url("POST", url, hdrs, body, &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status,
	    r.r_body.b_data);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"ok\""));
	it_resp_free(&r);
	json_decref(b);
	free(body);
}

static void
turn(const char *key, const char *id, int n)
{
	turn_as("it", key, id, n);
}

/* The store's key of discussion id under API key key (A10.1). */
static void
disc(const char *key, const char *id, char *out, size_t outlen)
{
	char	 dir[FERNET_DIRLEN];

	fernet_dir(key, dir);
	snprintf(out, outlen, "%s/%s", dir, id);
}

static void
wait_count(const char *d, long long n)
{
	char	 sql[256];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM memories WHERE "
	    "discussion = '%s'", d);
	ck_assert_msg(it_db_wait(&T, sql, n, 5000), "discussion %s: not %lld "
	    "memories (%lld)", d, n, it_db_int(&T, sql));
	it_wait_idle(&T, 1);
}

/* How many of d's rows in table (column col) are tokens (want true)
 * or plain text (false), checked against the whole count. */
static void
rows_are(const char *table, const char *col, const char *d, bool tokens)
{
	char		 sql[512];
	long long	 all, tok;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE discussion "
	    "= '%s'", table, d);
	all = it_db_int(&T, sql);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE discussion "
	    "= '%s' AND %s GLOB 'gAAAAA*' AND length(%s) >= 100 AND %s NOT "
	    "LIKE '%% %%'", table, d, col, col, col);
	tok = it_db_int(&T, sql);
	ck_assert_msg(all > 0, "%s: no rows of %s", table, d);
	ck_assert_msg(tok == (tokens ? all : 0), "%s of %s: %lld of %lld "
	    "rows are tokens", table, d, tok, all);
}

/* The system prompt of the first memory call since the log was last
 * cleared (it shows the memories already there). */
static char *
first_memory_prompt(void)
{
	json_t	*log = it_mock_log(&T, true), *m;
	char	*s;

	ck_assert_int_gt(json_array_size(log), 0);
	m = json_array_get(json_object_get(json_object_get(json_array_get(log,
	    0), "body"), "messages"), 0);
	s = strdup(json_string_value(json_object_get(m, "content")));
	json_decref(log);
	return s;
}

/* A10.1/A10.4: with encryptUsingApiKey and a Bearer key, the memories
 * and timestamps a worker writes are tokens in the database, nothing of
 * their text in plain sight; the same key reads them back (the next
 * memory call's prompt shows them); another key is another discussion
 * that sees none of them. */
START_TEST(a10_encrypted_memories)
{
	char		 d1[64], d2[64], sql[256], *p;
	long long	 n;

	start(true, false);
	disc("k1", "conv1", d1, sizeof(d1));
	disc("k2", "conv1", d2, sizeof(d2));
	turn("k1", "conv1", 5);
	wait_count(d1, 3);
	rows_are("memories", "text", d1, true);
	rows_are("timestamps", "stamp", d1, true);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories WHERE "
	    "text LIKE '%alpha%'"), 0);
	json_decref(it_mock_log(&T, true));

	turn("k1", "conv1", 7);		/* read back with the same key */
	wait_count(d1, 5);
	p = first_memory_prompt();
	ck_assert_msg(strstr(p, "Memories so far: Summarise Msg 1 alpha") !=
	    NULL && strstr(p, "Summarise Msg 3 alpha") != NULL, "%s", p);
	free(p);
	rows_are("memories", "text", d1, true);

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM memories WHERE "
	    "discussion = '%s'", d1);
	n = it_db_int(&T, sql);
	turn("k2", "conv1", 5);		/* another key: its own, empty */
	wait_count(d2, 3);
	p = first_memory_prompt();
	ck_assert_msg(strstr(p, "No preceding memories") != NULL, "%s", p);
	free(p);
	rows_are("memories", "text", d2, true);
	ck_assert_int_eq(it_db_int(&T, sql), n);
	it_stop_clean(&T);
}
END_TEST

/* A10.1: a key without encryptUsingApiKey only scopes the discussion;
 * its rows stay plain text. */
START_TEST(a10_key_without_encryption)
{
	char	 d[64];

	start(false, false);
	disc("k1", "conv1", d, sizeof(d));
	turn("k1", "conv1", 5);
	wait_count(d, 3);
	rows_are("memories", "text", d, false);
	rows_are("timestamps", "stamp", d, false);
	it_stop_clean(&T);
}
END_TEST

/* A10.2/A10.5: the same key under another user name derives another
 * Fernet key: that user's request cannot read the discussion's tokens,
 * the memory step fails with a message naming the discussion, and the
 * rows stay as they were. */
START_TEST(a10_other_user_refused)
{
	char	 d[64], sql[256], *before, *after;
	size_t	 from = 0;

	start(true, true);
	disc("k1", "conv1", d, sizeof(d));
	turn_as("it", "k1", "conv1", 5);
	wait_count(d, 3);
	snprintf(sql, sizeof(sql), "SELECT group_concat(text, '|') FROM "
	    "(SELECT text FROM memories WHERE discussion = '%s' ORDER BY id)",
	    d);
	before = it_db_text(&T, sql);
	turn_as("it2", "k1", "conv1", 7);
	ck_assert(it_log_wait(&T, "cannot be decrypted with this request's "
	    "API key and user name", &from, 5000));
	it_wait_idle(&T, 1);
	after = it_db_text(&T, sql);
	ck_assert_str_eq(after, before);
	free(before);
	free(after);
	turn_as("it", "k1", "conv1", 7);	/* its owner still can */
	wait_count(d, 5);
	it_stop_clean(&T);
}
END_TEST

/* WilmerAI's memories.json for discussion conv1 of API key k1, written
 * encrypted for user "it" as WilmerAI would. */
static void
wilmer_folder(const char *dir)
{
	static const char	 mem[] = "[{\"text_block\": \"Imported fact: "
				    "Dora likes tea\", \"hash\": \"x\"}]";
	struct fernet_key	 k;
	struct buf		 tok = BUF_INIT;
	char			 rel[256];

	ck_assert_int_eq(fernet_derive(&k, "k1", "it"), 0);
	ck_assert_int_eq(fernet_encrypt(&k, mem, strlen(mem), 1700000000,
	    NULL, &tok), 0);
	snprintf(rel, sizeof(rel), "Wilmer/DiscussionIds/%s/conv1/"
	    "memories.json", dir);
	it_file(&T, rel, tok.b_data);
	it_file(&T, "key.txt", "k1\n");
	buf_free(&tok);
	fernet_wipe(&k);
}

/* A10.4 through --import-wilmer: with the key given and the user
 * setting encryptUsingApiKey, the imported memories are stored as
 * tokens, and a request with the same key reads them (the first memory
 * prompt shows them). */
START_TEST(a10_import_then_serve)
{
	char		 dir[FERNET_DIRLEN], d[64], cmd[2048], *p;
	const char	*b = getenv("SLUICE_BUILD");
	char		 u[1024];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1", NULL);
	snprintf(u, sizeof(u), user, "true");
	it_file(&T, "Users/it.json", u);
	it_file(&T, "Workflows/it/MemSettings.json", settings);
	it_file(&T, "Workflows/it/Main.json", writer);
	fernet_dir("k1", dir);
	wilmer_folder(dir);
	snprintf(cmd, sizeof(cmd), "%s/sluice-gateway --config-dir %s "
	    "--state-dir %s/state --user it --import-wilmer "
	    "%s/Wilmer/DiscussionIds --import-key-file %s/key.txt "
	    ">%s/import.out 2>&1", b != NULL ? b : "build", T.it_dir,
	    T.it_dir, T.it_dir, T.it_dir, T.it_dir);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	it_gateway_start(&T, NULL);
	disc("k1", "conv1", d, sizeof(d));
	rows_are("memories", "text", d, true);

	turn("k1", "conv1", 5);
	wait_count(d, 4);
	p = first_memory_prompt();
	ck_assert_msg(strstr(p, "Memories so far: Imported fact: Dora likes "
	    "tea") != NULL, "%s", p);
	free(p);
	rows_are("memories", "text", d, true);
	it_stop_clean(&T);
}
END_TEST

/* The response cache never keeps an encrypted request's calls (their
 * answers are memories, which would lie there in plain text); a
 * request without a key still is cached. */
START_TEST(a10_not_cached)
{
	char	 d[64];

	start_with(true, false, "\"min_workers\": 1, \"max_workers\": 1, "
	    "\"cache\": {\"enabled\": true, \"max_entries\": 50, "
	    "\"ttl_minutes\": 60, \"cacheable_temperature\": 1.0}");
	it_file(&T, "Presets/OpenAI/it/Mock.json", "{\"temperature\": 0}\n");
	disc("k1", "conv1", d, sizeof(d));
	turn("k1", "conv1", 5);
	wait_count(d, 3);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM "
	    "response_cache"), 0);
	turn(NULL, "conv1", 5);
	wait_count("conv1", 3);
	ck_assert_int_gt(it_db_int(&T, "SELECT count(*) FROM "
	    "response_cache"), 0);
	it_stop_clean(&T);
}
END_TEST

/* A10.1: a request encrypted with its key has its worker's log lines
 * redacted as with redactLogOutput (not set here); one without a key
 * logs as before. */
START_TEST(a10_redacted_log)
{
	char	*log;
	size_t	 from;

	start_with(true, false, "\"min_workers\": 1, \"max_workers\": 1, "
	    "\"log_level\": \"debug\"");
	turn(NULL, "plain1", 3);
	it_wait_idle(&T, 1);
	from = it_log_size(&T);
	log = it_file_text(T.it_log);
	ck_assert_ptr_null(strstr(log, "[redacted"));
	free(log);
	turn("k1", "conv1", 3);
	ck_assert(it_log_wait(&T, "[redacted", &from, 5000));
	it_stop_clean(&T);
}
END_TEST

/* The gateway's "failed:" line of an encrypted request (a backend's
 * error, which may echo the prompt) is redacted too; without the key
 * it is not. */
START_TEST(a10_gateway_failure_redacted)
{
	char		 url[128], body[256];
	const char	*hdrs[2] = { "Authorization: Bearer k1", NULL };
	const char	*plain[1] = { NULL };
	struct it_resp	 r;
	size_t		 from;

	start_with(true, false, "\"min_workers\": 1, \"max_workers\": 1");
	it_file(&T, "Workflows/it/Main.json", "[{\"endpointName\": \"Mock\","
	    " \"returnToUser\": true}]\n");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions",
	    T.it_port);
	snprintf(body, sizeof(body), "{\"model\": \"it\", \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"hi #mock {\\\"status\\\": "
	    "400, \\\"error\\\": \\\"SECRET-4711\\\"}\"}]}");
	from = it_log_size(&T);
	ck_assert_int_eq(it_request_url("POST", url, plain, body, &r), 0);
	ck_assert_int_eq(r.r_status, 400);
	it_resp_free(&r);
	ck_assert(it_log_wait(&T, "failed: endpoint 'Mock'", &from, 5000));
	ck_assert(it_log_wait(&T, "SECRET-4711", &from, 1000));
	from = it_log_size(&T);
	ck_assert_int_eq(it_request_url("POST", url, hdrs, body, &r), 0);
	ck_assert_int_eq(r.r_status, 400);
	it_resp_free(&r);
	ck_assert(it_log_wait(&T, "failed: [redacted", &from, 5000));
	ck_assert(!it_log_wait(&T, "SECRET-4711", &from, 300));
	it_stop_clean(&T);
}
END_TEST

static Suite *
crypt_suite(void)
{
	Suite	*s = suite_create("crypt_it");

	test_case(s, "a10_encrypted", a10_encrypted_memories, 60);
	test_case(s, "a10_plain", a10_key_without_encryption, 60);
	test_case(s, "a10_other_user", a10_other_user_refused, 60);
	test_case(s, "a10_import", a10_import_then_serve, 60);
	test_case(s, "a10_cache", a10_not_cached, 60);
	test_case(s, "a10_redact", a10_redacted_log, 60);
	test_case(s, "a10_gateway_redact", a10_gateway_failure_redacted, 60);
	return s;
}

int
main(void)
{
	return check_main(crypt_suite());
}
