/* check_import.c - integration: sluice-gateway --import-wilmer reads a WilmerAI discussion folder into the database, idempotently. */
#include <check.h>
#include <ftw.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../testmain.h"
#include "harness.h"

/* The test's folder: conf/ (sluice.json puts the state in state/),
 * Public/DiscussionIds/ (the WilmerAI data), out and err of the run. */
static char	 T[64];
static char	 Root[512];	/* T/Public/DiscussionIds */
static char	 Db[512];	/* T/state/sluice.db */

#define KEYDIR	"0123456789abcdef"	/* an API key's folder */

struct run {
	int	 r_status;
	char	*r_out;
	char	*r_err;
};

/* T/rel, valid until the next call. */
static char *
tpath(const char *rel)
{
	static char	 p[512];

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	return p;
}

/* Write T/rel, making its folders. */
static void
put(const char *rel, const char *text)
{
	char	 path[512], *slash;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", T, rel);
	for (slash = strchr(path + strlen(T) + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		(void)mkdir(path, 0755);
		*slash = '/';
	}
	ck_assert_msg((f = fopen(path, "w")) != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static char *
slurp(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	*s;
	long	 n;

	ck_assert_msg(f != NULL, "cannot read %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

/* Run a SQL script on a database (created if needed). */
static void
sql_script(const char *path, const char *sql)
{
	sqlite3	*db;
	char	*msg = NULL;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK,
	    "%s: %s", path, msg);
	sqlite3_close(db);
}

/* Every row of sql as "a|b|c\n" lines (NULL shows as NULL). Caller
 * frees. */
static char *
rows(const char *db_path, const char *sql)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	struct buf	 b = BUF_INIT;
	int		 i;

	ck_assert_int_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
	buf_adds(&b, "");
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < sqlite3_column_count(st); i++) {
			if (i > 0)
				buf_addc(&b, '|');
			buf_adds(&b, sqlite3_column_type(st, i) == SQLITE_NULL ?
			    "NULL" : (const char *)sqlite3_column_text(st, i));
		}
		buf_addc(&b, '\n');
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return buf_take(&b);
}

static void
check_rows(const char *db_path, const char *sql, const char *want)
{
	char	*got = rows(db_path, sql);

	ck_assert_msg(strcmp(got, want) == 0, "%s\n got:\n%s\nwant:\n%s", sql,
	    got, want);
	free(got);
}

/* Everything the import may write, in a stable order. */
static char *
dump(const char *db_path)
{
	static const char *const q[] = {
		"SELECT * FROM discussions ORDER BY key",
		"SELECT * FROM memories ORDER BY id",
		"SELECT * FROM memory_ledgers ORDER BY discussion",
		"SELECT * FROM summaries ORDER BY discussion",
		"SELECT * FROM timestamps ORDER BY discussion, msg_hash",
		"SELECT * FROM vector_memories ORDER BY id",
		"SELECT rowid, * FROM vector_fts ORDER BY rowid",
		"SELECT memory_id, model, dim, hex(vector) FROM "
		"memory_embeddings ORDER BY memory_id, model",
		"SELECT * FROM vector_hash_log ORDER BY id",
		"SELECT * FROM state_documents ORDER BY discussion", NULL };
	struct buf	 b = BUF_INIT;
	char		*r;
	size_t		 i;

	for (i = 0; q[i] != NULL; i++) {
		r = rows(db_path, q[i]);
		buf_printf(&b, "-- %s\n%s", q[i], r);
		free(r);
	}
	return buf_take(&b);
}

/* sluice-gateway --config-dir T/conf with args (NULL-terminated). */
static void
run_gw(struct run *r, const char *const *args)
{
	char		 conf[512];
	const char	*pre[] = { "--config-dir", conf, NULL };

	snprintf(conf, sizeof(conf), "%s/conf", T);
	r->r_status = it_gateway_job(T, pre, args, &r->r_out, &r->r_err);
}

static void
run_free(struct run *r)
{
	free(r->r_out);
	free(r->r_err);
}


/* WilmerAI's vector_memory.db schema (vector_db_utils.py). */
static const char vec_schema[] =
    "CREATE TABLE memories (id INTEGER PRIMARY KEY, discussion_id TEXT NOT "
    "NULL, memory_text TEXT NOT NULL, date_added TEXT NOT NULL, "
    "metadata_json TEXT);"
    "CREATE VIRTUAL TABLE memories_fts USING fts5(title, summary, entities, "
    "key_phrases, memory_text_unweighted, tokenize='porter');"
    "CREATE TABLE vector_memory_hash_log (id INTEGER PRIMARY KEY "
    "AUTOINCREMENT, discussion_id TEXT NOT NULL, message_hash TEXT NOT "
    "NULL, timestamp DATETIME NOT NULL);"
    "CREATE TABLE memory_embeddings (memory_id INTEGER NOT NULL, model TEXT "
    "NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY "
    "(memory_id, model));";

/* alice's vector memories: ids 5 and 9 (they get new ids); the hash
 * log written out of time order, with a row of another discussion. */
static void
alice_vectors(void)
{
	char	*sql = xasprintf("%s"
	    "INSERT INTO memories VALUES (5, 'alice', 'The lighthouse keeper "
	    "waves', '2025-09-20T16:30:05.123456+00:00', '{\"title\": "
	    "\"Keeper\"}');"
	    "INSERT INTO memories VALUES (9, 'alice', 'Tea is brewed at dawn', "
	    "'2025-09-21T07:00:00+00:00', NULL);"
	    "INSERT INTO memories_fts (rowid, title, summary, entities, "
	    "key_phrases, memory_text_unweighted) VALUES (5, 'Keeper', 'The "
	    "lighthouse keeper waves', 'Keeper', 'lighthouse', 'The lighthouse "
	    "keeper waves'), (9, 'Morning tea', 'Tea is brewed at dawn', "
	    "'Alice', 'tea dawn', 'Tea is brewed at dawn');"
	    "INSERT INTO vector_memory_hash_log (discussion_id, message_hash, "
	    "timestamp) VALUES ('alice', 'mh2', '2025-09-20T16:40:00+00:00'), "
	    "('alice', 'mh1', '2025-09-20T16:30:05.123456+00:00'), "
	    "('zoe', 'mz', '2025-09-20T16:00:00+00:00');"
	    "INSERT INTO memory_embeddings VALUES (5, 'm', 1, x'0000803f'), "
	    "(9, 'm', 1, x'00000040');", vec_schema);

	sql_script(tpath("Public/DiscussionIds/alice/vector_memory.db"), sql);
	free(sql);
}

/* alice has every file WilmerAI keeps. */
static void
alice_files(void)
{
	put("Public/DiscussionIds/alice/memories.json", "[\n"
	    "    {\n        \"text_block\": \"Alice likes tea.\",\n"
	    "        \"hash\": \"h1\"\n    },\n"
	    "    {\"text_block\": \"She sails \\\"Gull\\\".\\nTwice a week.\","
	    " \"hash\": \"h2\"},\n"
	    "    {\"text_block\": \"\\u00dcn\\u00efcode \\u2713\", \"hash\":"
	    " \"h3\"}\n]\n");
	put("Public/DiscussionIds/alice/chat_summary.json", "[{\"text_block\":"
	    " \"Alice, a sailor who likes tea.\", \"hash\": \"h3\"}]\n");
	put("Public/DiscussionIds/alice/timestamps.json", "{\"m1\":"
	    " \"(Saturday, 2025-09-20 16:30:05)\", \"m2\": \"(Saturday,"
	    " 2025-09-20 16:31:10)\"}\n");
	put("Public/DiscussionIds/alice/condensation_tracker.json",
	    "{\"lastCondensationHash\": \"h1\"}\n");
	put("Public/DiscussionIds/alice/vision_responses.json", "{\"k1\": "
	    "\"a photo of a cat\"}\n");
	put("Public/DiscussionIds/alice/state_document.md", "# Alice\n"
	    "- sails the Gull\n- drinks tea at dawn\n");
	put("Public/DiscussionIds/alice/state_document.md.bak", "# Alice\n"
	    "- sails the Gull\n");
	alice_vectors();
}

/* dave only has WilmerAI's legacy flat files and legacy vector database
 * (Public/<id>_vector_memory.db), where one memory was never indexed;
 * erin has both a folder's file and a
 * flat one, and WilmerAI reads the folder's. */
static void
legacy_files(void)
{
	put("Public/DiscussionIds/dave_memories.json", "[{\"text_block\":"
	    " \"Dave flat\", \"hash\": \"d1\"}]\n");
	put("Public/DiscussionIds/dave_timestamps.json", "{\"d1\": \"(Monday,"
	    " 2025-09-22 09:00:00)\"}\n");
	sql_script(tpath("Public/dave_vector_memory.db"), vec_schema);
	sql_script(tpath("Public/dave_vector_memory.db"), "INSERT INTO memories"
	    " VALUES (1, 'dave', 'Dave rides a red bicycle', '2025-09-22T09:00"
	    ":00+00:00', NULL); INSERT INTO memories VALUES (2, 'dave', 'Dave"
	    " sleeps late', '2025-09-22T09:05:00+00:00', NULL); INSERT INTO"
	    " memories_fts (rowid, title, memory_text_unweighted) VALUES (1,"
	    " 'Bicycle', 'Dave rides a red bicycle');");
	put("Public/DiscussionIds/erin/memories.json", "[{\"text_block\":"
	    " \"Erin nested\", \"hash\": \"e1\"}]\n");
	put("Public/DiscussionIds/erin_memories.json", "[{\"text_block\":"
	    " \"Erin flat\", \"hash\": \"e0\"}]\n");
}

/*
 * A Public folder of a WilmerAI whose DiscussionIds holds alice (every
 * file), an API key's carol (her summary encrypted), bob (memories.json
 * broken), dave and erin (legacy files) and a folder whose name
 * WilmerAI refuses as an id; conf/ whose sluice.json sets state_dir.
 */
static void
fixture(void)
{
	char	 settings[600];

	snprintf(T, sizeof(T), "/tmp/sluice-imp.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(T));
	snprintf(Root, sizeof(Root), "%s/Public/DiscussionIds", T);
	snprintf(Db, sizeof(Db), "%s/state/sluice.db", T);
	put("conf/Users/_current-user.json", "{\"currentUser\": \"it\"}\n");
	put("conf/Users/it.json", "{\"chatCompleteAddUserAssistant\": false,"
	    " \"chatCompletionAddMissingAssistantGenerator\": false}\n");
	snprintf(settings, sizeof(settings), "{\"state_dir\": \"%s/state\"}\n",
	    T);
	put("conf/sluice.json", settings);
	alice_files();
	put("Public/DiscussionIds/" KEYDIR "/carol/memories.json",
	    "[{\"text_block\": \"Carol's memory\", \"hash\": \"c1\"}]\n");
	put("Public/DiscussionIds/" KEYDIR "/carol/chat_summary.json",
	    "gAAAAABo3q7xV2l0aF9hX2tleV90aGlzX3dvdWxkX2RlY3J5cHRfYnV0X3dlX2Rv"
	    "X25vdF9oYXZlX2l0X3NvX2l0X3N0YXlzX2xvY2tlZA==");
	put("Public/DiscussionIds/bob/memories.json", "[\n  {\"text_block\":"
	    " \"x\", \"hash\": \"h\"},\n  oops\n]\n");
	legacy_files();
	put("Public/DiscussionIds/x:y/memories.json", "[]\n");
}

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void
cleanup(void)
{
	if (T[0] != '\0')
		nftw(T, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	T[0] = '\0';
}

static void
import_root(struct run *r)
{
	const char	*args[] = { "--import-wilmer", Root, NULL };

	run_gw(r, args);
}

/* ---- a first import ---- */

static const char first_report[] =
    "importing %s (a DiscussionIds folder, 5 discussions) into %s\n"
    "left out 'x:y': not a discussion id WilmerAI accepts (it holds '\\' or"
    " ':', or is '.' or '..')\n"
    KEYDIR "/carol: 1 memory; skipped: chat_summary.json (encrypted with the"
    " API key (encryptUsingApiKey): it cannot be read without the key,"
    " see --import-key-file)\n"
    "alice: 3 memories, condensation tracker, summary, 2 timestamps,"
    " 1 image description, 2 vector memories with 2 embeddings, 2 hash"
    " log entries, state document (with its previous version)\n"
    "bob: FAILED, nothing imported: %s/bob/memories.json:3:6: invalid token"
    " near 'oops'\n"
    "dave: 1 memory, 1 timestamp, 2 vector memories, 0 hash log entries\n"
    "erin: 1 memory\n"
    "total: 5 discussions (1 failed): imported 6 memories, 1 summary,"
    " 3 timestamps, 4 vector memories, 2 hash log entries\n";

/* The report: a line per discussion, the reasons for what was left
 * out, the total; bob's error on stderr; exit 65 for bob. Nothing is
 * served. */
START_TEST(report_of_a_first_import)
{
	struct run	 r;
	char		*want, *err;

	fixture();
	import_root(&r);
	want = xasprintf(first_report, Root, Db, Root);
	ck_assert_str_eq(r.r_out, want);
	err = xasprintf("error: %s/bob/memories.json:3:6: invalid token near "
	    "'oops'\n", Root);
	ck_assert_msg(strstr(r.r_err, err) != NULL, "stderr: %s", r.r_err);
	ck_assert_msg(strstr(r.r_err, "listening") == NULL &&
	    strstr(r.r_err, "ready") == NULL, "stderr: %s", r.r_err);
	ck_assert_int_eq(r.r_status, 65);
	free(want);
	free(err);
	run_free(&r);
	cleanup();
}
END_TEST

/* The memories in the files' order, byte for byte; ledgers (with
 * alice's condensation tracker), summary, timestamps; nothing of bob. */
START_TEST(json_files_land_in_the_tables)
{
	struct run	 r;

	fixture();
	import_root(&r);
	check_rows(Db, "SELECT discussion, text, hash FROM memories ORDER BY "
	    "id", KEYDIR "/carol|Carol's memory|c1\n"
	    "alice|Alice likes tea.|h1\n"
	    "alice|She sails \"Gull\".\nTwice a week.|h2\n"
	    "alice|\xc3\x9cn\xc3\xaf" "code \xe2\x9c\x93|h3\n"
	    "dave|Dave flat|d1\n"
	    "erin|Erin nested|e1\n");
	check_rows(Db, "SELECT discussion, condensed_hash FROM memory_ledgers "
	    "ORDER BY discussion", KEYDIR "/carol|NULL\nalice|h1\n"
	    "dave|NULL\nerin|NULL\n");
	check_rows(Db, "SELECT discussion, text, hash FROM summaries",
	    "alice|Alice, a sailor who likes tea.|h3\n");
	check_rows(Db, "SELECT * FROM timestamps ORDER BY discussion, msg_hash",
	    "alice|m1|(Saturday, 2025-09-20 16:30:05)\n"
	    "alice|m2|(Saturday, 2025-09-20 16:31:10)\n"
	    "dave|d1|(Monday, 2025-09-22 09:00:00)\n");
	check_rows(Db, "SELECT discussion, text, previous FROM "
	    "state_documents", "alice|# Alice\n- sails the Gull\n- drinks tea "
	    "at dawn\n|# Alice\n- sails the Gull\n\n");
	check_rows(Db, "SELECT key FROM discussions ORDER BY key",
	    KEYDIR "/carol\nalice\ndave\nerin\n");
	run_free(&r);
	cleanup();
}
END_TEST

/* Vector memories with new ids and their keyword rows following them
 * (a memory WilmerAI never indexed gets its text indexed); a
 * porter-stemmed search finds an imported memory; the hash log in
 * time order, as unix seconds, without another discussion's row. */
START_TEST(vector_memories_land_in_the_tables)
{
	struct run	 r;

	fixture();
	import_root(&r);
	check_rows(Db, "SELECT discussion, memory_text, date_added, "
	    "metadata_json FROM vector_memories ORDER BY id",
	    "alice|The lighthouse keeper waves|"
	    "2025-09-20T16:30:05.123456+00:00|{\"title\": \"Keeper\"}\n"
	    "alice|Tea is brewed at dawn|2025-09-21T07:00:00+00:00|NULL\n"
	    "dave|Dave rides a red bicycle|2025-09-22T09:00:00+00:00|NULL\n"
	    "dave|Dave sleeps late|2025-09-22T09:05:00+00:00|NULL\n");
	check_rows(Db, "SELECT v.discussion, f.title, f.entities, "
	    "f.key_phrases, f.memory_text_unweighted FROM vector_fts f "
	    "JOIN vector_memories v ON v.id = f.rowid ORDER BY v.id",
	    "alice|Keeper|Keeper|lighthouse|The lighthouse keeper waves\n"
	    "alice|Morning tea|Alice|tea dawn|Tea is brewed at dawn\n"
	    "dave|Bicycle|NULL|NULL|Dave rides a red bicycle\n"
	    "dave|NULL|NULL|NULL|Dave sleeps late\n");
	check_rows(Db, "SELECT count(*) FROM vector_fts", "4\n");
	/* A9.3: the embeddings, under the memories' new ids */
	check_rows(Db, "SELECT v.memory_text, e.model, e.dim, hex(e.vector) "
	    "FROM memory_embeddings e JOIN vector_memories v ON v.id = "
	    "e.memory_id ORDER BY v.id", "The lighthouse keeper waves|m|1|"
	    "0000803F\nTea is brewed at dawn|m|1|00000040\n");
	check_rows(Db, "SELECT v.memory_text FROM vector_fts JOIN "
	    "vector_memories v ON v.id = vector_fts.rowid WHERE vector_fts "
	    "MATCH 'waving' AND v.discussion = 'alice'",
	    "The lighthouse keeper waves\n");
	check_rows(Db, "SELECT discussion, message_hash, logged_at FROM "
	    "vector_hash_log ORDER BY id",
	    "alice|mh1|1758385805\nalice|mh2|1758386400\n");
	run_free(&r);
	cleanup();
}
END_TEST

/* ---- idempotence ---- */

/* A second run changes nothing, and says so. */
START_TEST(second_run_changes_nothing)
{
	struct run	 r1, r2;
	char		*before, *after;

	fixture();
	import_root(&r1);
	before = dump(Db);
	ck_assert_msg(strstr(before, "Alice likes tea.") != NULL, "%s", before);
	import_root(&r2);
	after = dump(Db);
	ck_assert_str_eq(after, before);
	ck_assert_int_eq(r2.r_status, 65);
	ck_assert_msg(strstr(r2.r_out, "\nalice: memories already imported, "
	    "summary already imported, 0 timestamps (2 already present), "
	    "0 image descriptions (1 already present), vector memories already "
	    "in Sluice (2), hash log already in Sluice (2), state document "
	    "already imported\n") != NULL, "%s",
	    r2.r_out);
	ck_assert_msg(strstr(r2.r_out, "\nerin: memories already imported\n")
	    != NULL, "%s", r2.r_out);
	ck_assert_msg(strstr(r2.r_out, "\ntotal: 5 discussions (1 failed): "
	    "imported 0 memories, 0 summaries, 0 timestamps, 0 vector "
	    "memories, 0 hash log entries\n") != NULL, "%s", r2.r_out);
	free(before);
	free(after);
	run_free(&r1);
	run_free(&r2);
	cleanup();
}
END_TEST

/* What Sluice wrote itself for alice stays; only what it lacks (one
 * timestamp) is added, and the report says why the rest was left. */
START_TEST(sluice_data_is_never_replaced)
{
	struct run	 r0, r;
	char		 erin[600];
	const char	*args[] = { "--import-wilmer", erin, NULL };

	fixture();
	snprintf(erin, sizeof(erin), "%s/erin", Root);
	run_gw(&r0, args);		/* creates the database */
	ck_assert_int_eq(r0.r_status, 0);
	sql_script(Db, "INSERT INTO discussions VALUES ('alice', 1);"
	    "INSERT INTO memories (discussion, text, hash, created_at) VALUES "
	    "('alice', 'Sluice wrote this', 'sx', 1);"
	    "INSERT INTO summaries VALUES ('alice', 'Sluice summary', 'sx', 1);"
	    "INSERT INTO timestamps VALUES ('alice', 'm1', '(Sluice stamp)');"
	    "INSERT INTO vector_memories (discussion, memory_text, date_added) "
	    "VALUES ('alice', 'Sluice vector', '2026-01-01T00:00:00+00:00');"
	    "INSERT INTO vector_hash_log (discussion, message_hash, logged_at) "
	    "VALUES ('alice', 'sh', 1);"
	    "INSERT INTO state_documents VALUES ('alice', 'Sluice doc', NULL, "
	    "1);");
	import_root(&r);
	check_rows(Db, "SELECT text FROM memories WHERE discussion = 'alice'",
	    "Sluice wrote this\n");
	check_rows(Db, "SELECT text FROM summaries", "Sluice summary\n");
	check_rows(Db, "SELECT msg_hash, stamp FROM timestamps WHERE "
	    "discussion = 'alice' ORDER BY msg_hash", "m1|(Sluice stamp)\n"
	    "m2|(Saturday, 2025-09-20 16:31:10)\n");
	check_rows(Db, "SELECT memory_text FROM vector_memories WHERE "
	    "discussion = 'alice'", "Sluice vector\n");
	check_rows(Db, "SELECT count(*) FROM memory_ledgers WHERE discussion = "
	    "'alice'", "0\n");
	check_rows(Db, "SELECT text FROM state_documents", "Sluice doc\n");
	ck_assert_msg(strstr(r.r_out, "\nalice: 1 timestamp (1 already "
	    "present), 1 image description, vector memories already in Sluice "
	    "(1), hash log already in Sluice (1); skipped: memories.json (the "
	    "discussion already has 1 memory in "
	    "Sluice); condensation_tracker.json (it goes with memories.json, "
	    "which is not imported); chat_summary.json (the discussion already "
	    "has a summary in Sluice); state_document.md "
	    "(the discussion already has a state document in Sluice)\n") !=
	    NULL, "%s", r.r_out);
	run_free(&r0);
	run_free(&r);
	cleanup();
}
END_TEST

/* ---- one discussion's folder, the flags ---- */

/* A folder of an API key's discussion: its key is scoped; --state-dir
 * wins over sluice.json's state_dir. */
START_TEST(one_discussion_folder)
{
	struct run	 r;
	char		 dir[600], state[600], *want;
	const char	*args[] = { "--import-wilmer", dir, "--state-dir",
			    state, NULL };
	struct stat	 st;

	fixture();
	snprintf(dir, sizeof(dir), "%s/" KEYDIR "/carol", Root);
	snprintf(state, sizeof(state), "%s/elsewhere", T);
	run_gw(&r, args);
	want = xasprintf("importing %s (one discussion's folder, 1 discussion)"
	    " into %s/sluice.db\n" KEYDIR "/carol: 1 memory; skipped: "
	    "chat_summary.json (encrypted with the API key "
	    "(encryptUsingApiKey): it cannot be read without the key, see "
	    "--import-key-file)\n"
	    "total: 1 discussion (0 failed): imported 1 memory, 0 summaries, "
	    "0 timestamps, 0 vector memories, 0 hash log entries\n", dir,
	    state);
	ck_assert_str_eq(r.r_out, want);
	ck_assert_int_eq(r.r_status, 0);
	ck_assert_int_eq(stat(Db, &st), -1);
	snprintf(state, sizeof(state), "%s/elsewhere/sluice.db", T);
	check_rows(state, "SELECT discussion, text FROM memories",
	    KEYDIR "/carol|Carol's memory\n");
	free(want);
	run_free(&r);
	cleanup();
}
END_TEST

/* ---- encrypted discussions (addendum A10) ---- */

#define ENC_DIR	"de25c9ef998df9e3"	/* sha256("sk-wilmer-test")[:16] */

/* Made by WilmerAI's encryption (Python's cryptography) with API key
 * sk-wilmer-test for user "it", except FRED_SUM (for user "alice"). */
#define DORA_MEM "gAAAAABrCo34jSwId_zLpRgS6MBcGmUVCG05xDUmKgEmyabQm7qnD4zvK" \
	"fFUSZIaTfs44HJXCnFVO_ElUM-DvJP8pA7IjzQSGfZVSQJtXeSbYiHLcRo9NuSrwt9v2" \
	"VHXsElinZrOLCtVd8IEuIbqnb6DS-VyJGE_oeky_LhJ0MYg3-59FgGnRZiSVitC6-UXf" \
	"yitDKVzjx6f"
#define DORA_SUM "gAAAAABrCo34dtKt923zS3o2K3cF2E2LvKxB9pp45rONKQE6c2--OCKqm" \
	"L5j-UtFMiyxD6ltZELzMxIVuvrkrC1_xGp0ZsgRACM2Ox0OhImKhgTYaswtkP5HXNJDx" \
	"D_scoYifPf2ma83vyCtLVrrbFBnGRomRMDsTGZ_Lb_gz98UlvUqKCYcP0Y="
#define DORA_DOC "gAAAAABrCo34hbWc65eJa_O9ZIXKeAQU3ogE3JuCgpxyD9x1UNapVbblT" \
	"jUKGHOJ_JfuVYMhfolCQzZDA3HvkVAmeaBOyVabjA=="
#define FRED_SUM "gAAAAABrCo34Pwlk_0cEw7SVI8v2uM67EKMlcMA-io_9q81VCQ3H1HHLg" \
	"mI8Y-_CdjymtzGxX-mNcNljEbXiizW4KRkeCGr1yVO6CFjRAsjOmcXB-IMGIvKQTyMdH" \
	"6JkZiFe7_fI1QPR76wkA68hYtyZFUcbsudzVPRr61LvTJDL0xP8Qwp8NKs="

/* T/Enc/DiscussionIds with dora (all encrypted for "it") and fred (a
 * summary encrypted for another user, plain memories); the key file. */
static void
enc_fixture(char *root, size_t len)
{
	fixture();
	snprintf(root, len, "%s/Enc/DiscussionIds", T);
	put("Enc/DiscussionIds/" ENC_DIR "/dora/memories.json", DORA_MEM);
	put("Enc/DiscussionIds/" ENC_DIR "/dora/chat_summary.json", DORA_SUM);
	put("Enc/DiscussionIds/" ENC_DIR "/dora/state_document.md", DORA_DOC);
	put("Enc/DiscussionIds/" ENC_DIR "/fred/memories.json",
	    "[{\"text_block\": \"Fred plain\", \"hash\": \"f1\"}]");
	put("Enc/DiscussionIds/" ENC_DIR "/fred/chat_summary.json", FRED_SUM);
	put("key.txt", "  sk-wilmer-test  \nsecond line ignored\n");
}

/* With the API key (a file, or $WILMER_API_KEY), WilmerAI's encrypted
 * files are read: the key derived for the configured user opens dora's;
 * fred's summary, encrypted for another user, is left out and said so;
 * nothing else is lost. Without a key, the report says how to give one;
 * an unreadable key file stops the import before anything is written. */
START_TEST(a10_encrypted_discussions)
{
	struct run	 r;
	char		 root[600], key[600], *want;
	const char	*with_file[] = { "--import-wilmer", root,
			    "--import-key-file", key, NULL };
	const char	*plain[] = { "--import-wilmer", root, NULL };

	enc_fixture(root, sizeof(root));
	snprintf(key, sizeof(key), "%s/key.txt", T);
	run_gw(&r, with_file);
	want = xasprintf("importing %s (a DiscussionIds folder, 2 discussions)"
	    " into %s\n" ENC_DIR "/dora: 1 memory, summary, state document\n"
	    ENC_DIR "/fred: 1 memory; skipped: chat_summary.json (encrypted "
	    "with the API key (encryptUsingApiKey): no key given opens it: "
	    "another API key, or another user name)\n"
	    "total: 2 discussions (0 failed): imported 2 memories, 1 summary, "
	    "0 timestamps, 0 vector memories, 0 hash log entries\n", root, Db);
	ck_assert_str_eq(r.r_out, want);
	ck_assert_int_eq(r.r_status, 0);
	free(want);
	run_free(&r);
	check_rows(Db, "SELECT discussion, text, hash FROM memories ORDER BY "
	    "discussion", ENC_DIR "/dora|Dora's caf\xc3\xa9 memory|d1\n"
	    ENC_DIR "/fred|Fred plain|f1\n");
	check_rows(Db, "SELECT discussion, text FROM summaries",
	    ENC_DIR "/dora|Dora summary\n");
	check_rows(Db, "SELECT discussion, text FROM state_documents",
	    ENC_DIR "/dora|# Dora's state\n\n");

	/* the same key from the environment, into a fresh database */
	ck_assert_int_eq(unlink(Db), 0);
	setenv("WILMER_API_KEY", "sk-wilmer-test\n", 1);
	run_gw(&r, plain);
	unsetenv("WILMER_API_KEY");
	ck_assert_msg(strstr(r.r_out, ENC_DIR "/dora: 1 memory, summary, "
	    "state document\n") != NULL, "%s", r.r_out);
	run_free(&r);

	/* no key: said, and the rest imported */
	ck_assert_int_eq(unlink(Db), 0);
	run_gw(&r, plain);
	ck_assert_msg(strstr(r.r_out, ENC_DIR "/dora: nothing to import; "
	    "skipped: memories.json (encrypted with the API key "
	    "(encryptUsingApiKey): it cannot be read without the key, see "
	    "--import-key-file)") != NULL, "%s", r.r_out);
	ck_assert_int_eq(r.r_status, 0);
	run_free(&r);

	/* a key file that is not there */
	ck_assert_int_eq(unlink(Db), 0);
	snprintf(key, sizeof(key), "%s/nokey.txt", T);
	run_gw(&r, with_file);
	ck_assert_int_eq(r.r_status, 78);
	ck_assert_msg(strstr(r.r_err, "nokey.txt: No such file") != NULL,
	    "%s", r.r_err);
	ck_assert_str_eq(r.r_out, "");
	run_free(&r);
	cleanup();
}
END_TEST

/* ---- errors ---- */

static void
expect_fail(const char *dir, int status, const char *err)
{
	struct run	 r;
	const char	*args[] = { "--import-wilmer", dir, NULL };

	run_gw(&r, args);
	ck_assert_msg(r.r_status == status, "status %d, stderr %s",
	    r.r_status, r.r_err);
	ck_assert_msg(strstr(r.r_err, err) != NULL, "no '%s' in stderr: %s",
	    err, r.r_err);
	ck_assert_str_eq(r.r_out, "");
	run_free(&r);
}

/* No folder, a file, a folder without discussions: exit 66, nothing
 * written. */
START_TEST(nothing_to_import)
{
	char		 dir[600], msg[700];
	struct stat	 st;

	fixture();
	snprintf(dir, sizeof(dir), "%s/nope", T);
	snprintf(msg, sizeof(msg), "error: %s: No such file or directory\n",
	    dir);
	expect_fail(dir, 66, msg);
	snprintf(dir, sizeof(dir), "%s/dave_memories.json", Root);
	snprintf(msg, sizeof(msg), "error: %s: Not a directory\n", dir);
	expect_fail(dir, 66, msg);
	snprintf(dir, sizeof(dir), "%s/conf/Users", T);
	snprintf(msg, sizeof(msg), "error: %s: no WilmerAI discussion found",
	    dir);
	expect_fail(dir, 66, msg);
	ck_assert_int_eq(stat(Db, &st), -1);
	cleanup();
}
END_TEST

/* Files of the wrong shape are reported at their position, and only
 * their discussion is left out. */
START_TEST(wrong_shapes_are_pinpointed)
{
	struct run	 r;
	char		 dir[600], *want;
	const char	*args[] = { "--import-wilmer", dir, NULL };

	fixture();
	put("Other/one/memories.json", "{\"text_block\": \"x\"}\n");
	put("Other/two/memories.json", "[\n  {\"hash\": \"h\",\n"
	    "   \"text_block\": 5}\n]\n");
	put("Other/three/timestamps.json", "{\"a\": \"x\",\n \"m\": 1}\n");
	put("Other/four/chat_summary.json", "[{\"hash\": \"h\"}]\n");
	put("Other/five/memories.json", "[{\"text_block\": \"fine\", "
	    "\"hash\": \"f\"}]\n");
	snprintf(dir, sizeof(dir), "%s/Other", T);
	run_gw(&r, args);
	want = xasprintf("error: %s/four/chat_summary.json:1:2: entry 1 has no "
	    "\"text_block\"\n"
	    "error: %s/one/memories.json:1:1: memories.json must be a list of "
	    "{\"text_block\", \"hash\"} objects, not an object\n"
	    "error: %s/three/timestamps.json:2:2: the time of \"m\" must be a "
	    "string, not a number\n"
	    "error: %s/two/memories.json:3:4: \"text_block\" must be a string, "
	    "not a number\n", dir, dir, dir, dir);
	ck_assert_msg(strstr(r.r_err, want) != NULL, "stderr:\n%s\nwant:\n%s",
	    r.r_err, want);
	ck_assert_msg(strstr(r.r_out, "\nfive: 1 memory\n") != NULL &&
	    strstr(r.r_out, "\ntotal: 5 discussions (4 failed): imported "
	    "1 memory,") != NULL, "%s", r.r_out);
	ck_assert_int_eq(r.r_status, 65);
	free(want);
	run_free(&r);
	cleanup();
}
END_TEST

/* A vector_memory.db that is not a database fails its discussion after
 * the JSON files were written: the transaction leaves none of it. */
START_TEST(broken_vector_db_rolls_back)
{
	struct run	 r;
	char		 dir[600], *want;
	const char	*args[] = { "--import-wilmer", dir, NULL };

	fixture();
	put("Other/zed/memories.json", "[{\"text_block\": \"Zed\", "
	    "\"hash\": \"z\"}]\n");
	put("Other/zed/timestamps.json", "{\"z\": \"(Monday)\"}\n");
	put("Other/zed/vector_memory.db", "this is not a database, but it is "
	    "long enough to be read as a database header by SQLite......\n");
	put("Other/amy/memories.json", "[]\n");
	snprintf(dir, sizeof(dir), "%s/Other", T);
	run_gw(&r, args);
	want = xasprintf("\nzed: FAILED, nothing imported: %s/zed/"
	    "vector_memory.db: cannot read it: file is not a database\n", dir);
	ck_assert_msg(strstr(r.r_out, want) != NULL, "%s", r.r_out);
	ck_assert_msg(strstr(r.r_out, "\namy: 0 memories\n") != NULL, "%s",
	    r.r_out);
	ck_assert_int_eq(r.r_status, 65);
	check_rows(Db, "SELECT key FROM discussions", "amy\n");
	check_rows(Db, "SELECT discussion FROM memory_ledgers", "amy\n");
	check_rows(Db, "SELECT count(*) FROM memories", "0\n");
	check_rows(Db, "SELECT count(*) FROM timestamps", "0\n");
	free(want);
	run_free(&r);
	cleanup();
}
END_TEST

/* ---- going back: --export-wilmer ---- */

/* What the discussions hold, without row ids and times of writing. */
static char *
held(const char *db_path)
{
	static const char *const q[] = {
		"SELECT key FROM discussions ORDER BY key",
		"SELECT discussion, text, hash FROM memories ORDER BY id",
		"SELECT * FROM memory_ledgers ORDER BY discussion",
		"SELECT discussion, text, hash FROM summaries ORDER BY "
		"discussion",
		"SELECT * FROM timestamps ORDER BY discussion, msg_hash",
		"SELECT discussion, message_key, text FROM vision_responses",
		"SELECT discussion, text, previous FROM state_documents",
		"SELECT v.discussion, v.memory_text, v.date_added, "
		"v.metadata_json, f.title, f.entities, f.key_phrases FROM "
		"vector_memories v LEFT JOIN vector_fts f ON f.rowid = v.id "
		"ORDER BY v.discussion, v.id",
		"SELECT v.memory_text, e.model, hex(e.vector) FROM "
		"memory_embeddings e JOIN vector_memories v ON v.id = "
		"e.memory_id ORDER BY v.discussion, v.id",
		"SELECT discussion, message_hash, logged_at FROM "
		"vector_hash_log ORDER BY discussion, id", NULL };
	struct buf	 b = BUF_INIT;
	char		*r;
	size_t		 i;

	for (i = 0; q[i] != NULL; i++) {
		r = rows(db_path, q[i]);
		buf_printf(&b, "-- %s\n%s", q[i], r);
		free(r);
	}
	return buf_take(&b);
}

/* Imported, then exported by sluice-gateway --export-wilmer: WilmerAI's
 * layout and bytes (json.dumps(indent=4), whatever the first files'
 * spacing was); imported again into a new database, the same rows; a
 * second export leaves every folder alone. */
START_TEST(export_reads_back_as_imported)
{
	struct run	 r;
	char		 back[600], state2[600], db2[700], *a, *b, *t;
	const char	*exp[] = { "--export-wilmer", back, NULL };
	const char	*imp[] = { "--import-wilmer", back, "--state-dir",
			    state2, NULL };

	fixture();
	import_root(&r);
	run_free(&r);
	snprintf(back, sizeof(back), "%s/back", T);
	snprintf(state2, sizeof(state2), "%s/state2", T);
	snprintf(db2, sizeof(db2), "%s/sluice.db", state2);
	run_gw(&r, exp);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	ck_assert_msg(strstr(r.r_out, "\nalice: 3 memories, condensation "
	    "tracker, summary, 2 timestamps, 1 image description, state "
	    "document (with its previous version), 2 vector memories with 2 "
	    "embeddings, 2 hash log entries\n") != NULL, "%s", r.r_out);
	ck_assert_msg(strstr(r.r_out, "\ntotal: 4 discussions (0 failed, 0 "
	    "left alone): exported 6 memories, 1 summary, 3 timestamps, 4 "
	    "vector memories, 2 hash log entries\n") != NULL, "%s", r.r_out);
	run_free(&r);
	t = slurp(tpath("back/alice/memories.json"));
	ck_assert_str_eq(t, "[\n    {\n        \"text_block\": \"Alice likes "
	    "tea.\",\n        \"hash\": \"h1\"\n    },\n    {\n        "
	    "\"text_block\": \"She sails \\\"Gull\\\".\\nTwice a week.\",\n"
	    "        \"hash\": \"h2\"\n    },\n    {\n        \"text_block\": "
	    "\"\\u00dcn\\u00efcode \\u2713\",\n        \"hash\": \"h3\"\n    "
	    "}\n]");
	free(t);
	run_gw(&r, imp);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	run_free(&r);
	a = held(Db);
	b = held(db2);
	ck_assert_str_eq(b, a);
	free(a);
	free(b);
	run_gw(&r, exp);
	ck_assert_int_eq(r.r_status, 0);
	ck_assert_msg(strstr(r.r_out, "(0 failed, 4 left alone)") != NULL,
	    "%s", r.r_out);
	run_free(&r);
	cleanup();
}
END_TEST

/* --help names the option. */
START_TEST(help_names_the_option)
{
	struct run	 r;
	const char	*args[] = { "--help", NULL };

	fixture();
	run_gw(&r, args);
	ck_assert_int_eq(r.r_status, 0);
	ck_assert_msg(strstr(r.r_out, "--import-wilmer DIR") != NULL, "%s",
	    r.r_out);
	ck_assert_msg(strstr(r.r_out, "--export-wilmer DIR") != NULL, "%s",
	    r.r_out);
	run_free(&r);
	cleanup();
}
END_TEST

static Suite *
import_suite(void)
{
	Suite	*s = suite_create("import");
	TCase	*tc;

	tc = tcase_create("first");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, report_of_a_first_import);
	tcase_add_test(tc, json_files_land_in_the_tables);
	tcase_add_test(tc, vector_memories_land_in_the_tables);
	suite_add_tcase(s, tc);
	tc = tcase_create("idempotent");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, second_run_changes_nothing);
	tcase_add_test(tc, sluice_data_is_never_replaced);
	suite_add_tcase(s, tc);
	tc = tcase_create("folders");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_discussion_folder);
	suite_add_tcase(s, tc);
	test_case(s, "a10", a10_encrypted_discussions, 60);
	test_case(s, "export", export_reads_back_as_imported, 60);
	tc = tcase_create("errors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, nothing_to_import);
	tcase_add_test(tc, wrong_shapes_are_pinpointed);
	tcase_add_test(tc, broken_vector_db_rolls_back);
	tcase_add_test(tc, help_names_the_option);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(import_suite());
}
