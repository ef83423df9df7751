/* check_export.c - sluice-worker --export-wilmer (worker/import/export*.c): a scratch store written out as WilmerAI's files, then read back. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/fernet.h"
#include "../../common/xmem.h"
#include "../../worker/import/export.h"
#include "../../worker/import/import.h"
#include "../../worker/import/import_int.h"
#include "../../worker/store/store_seal.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "scratchdb.h"
#include "scratchdir.h"

#define OUT	"DiscussionIds"		/* the folder written, in t_dir */
#define APIKEY	"sk-export-test"

static struct scratchdir	 t_dir;
static struct scratchdb		 t_db;
static struct import_opts	 t_opts;	/* keys and users (zero: none) */

struct run {
	int	 r_status;
	char	*r_out;
	char	*r_err;
};

static void
setup(void)
{
	scratchdir_make(&t_dir, "exp");
	scratchdb_open(&t_db, "exp");
	memset(&t_opts, 0, sizeof(t_opts));
}

static void
teardown(void)
{
	scratchdb_close(&t_db);
	scratchdir_remove(&t_dir);
}

/* Run sql (statements) on the store's file, as another process would. */
static void
db_exec(const char *sql)
{
	sqlite3	*db;
	char	*msg = NULL;

	ck_assert_int_eq(sqlite3_open(t_db.sd_path, &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK,
	    "%s: %s", sql, msg);
	sqlite3_close(db);
}

static char *
slurp(const char *rel)
{
	return scratchdir_read(&t_dir, rel);
}

static bool
exists(const char *rel)
{
	char	*p = scratchdir_path(&t_dir, rel);
	bool	 yes = access(p, F_OK) == 0;

	free(p);
	return yes;
}

/* export_run (or import_run when import) between folder rel of t_dir
 * and the store of folder state (NULL: the scratch store's), its output
 * captured. */
static void
run(struct run *r, bool import, const char *rel, const char *state)
{
	struct import_opts	 o = t_opts;
	char			*out = scratchdir_path(&t_dir, "stdout");
	char			*err = scratchdir_path(&t_dir, "stderr");
	char			*dir = scratchdir_path(&t_dir, rel);
	char			*db = xasprintf("%s/sluice.db", state != NULL ?
				    state : t_db.sd_dir);
	int			 fd1 = dup(1), fd2 = dup(2);

	o.io_dir = dir;
	o.io_store = db;
	fflush(stdout);
	fflush(stderr);
	ck_assert_ptr_nonnull(freopen(out, "w", stdout));
	ck_assert_ptr_nonnull(freopen(err, "w", stderr));
	r->r_status = import ? import_run(&o) : export_run(&o);
	fflush(stdout);
	fflush(stderr);
	dup2(fd1, 1);
	dup2(fd2, 2);
	close(fd1);
	close(fd2);
	r->r_out = slurp("stdout");
	r->r_err = slurp("stderr");
	free(dir);
	free(db);
	free(out);
	free(err);
}

static void
export(struct run *r)
{
	run(r, false, OUT, NULL);
}

static void
run_free(struct run *r)
{
	free(r->r_out);
	free(r->r_err);
}

#define ck_has(hay, needle)	ck_assert_msg(strstr(hay, needle) != NULL, \
	"'%s' not in:\n%s", needle, hay)

/* ---- the JSON files ---- */

static const char rows_ann[] =
    "INSERT INTO discussions VALUES ('ann', 0);"
    "INSERT INTO memories VALUES (1, 'ann', 'Ann likes tea.', 'h1', 0);"
    "INSERT INTO memories VALUES (2, 'ann', 'She sails \"Gull\".\n"
    "Caf\xc3\xa9 \xf0\x9f\x99\x82', 'h2', 0);"
    "INSERT INTO memory_ledgers VALUES ('ann', 'h1');"
    "INSERT INTO summaries VALUES ('ann', 'Ann, a sailor.', 'h2', 0);"
    "INSERT INTO timestamps VALUES ('ann', 'zz', "
    "'(Saturday, 2025-09-20 16:30:05)');"
    "INSERT INTO timestamps VALUES ('ann', 'aa', "
    "'(Saturday, 2025-09-20 16:31:10)');"
    "INSERT INTO compactor_sections VALUES ('ann', 'old', 0, 'old one', "
    "'o1');"
    "INSERT INTO compactor_sections VALUES ('ann', 'oldest', 0, 'oldest "
    "one', 'x1');"
    "INSERT INTO vision_responses VALUES ('ann', 'k1', 'a red boat', 5);"
    "INSERT INTO state_documents VALUES ('ann', '# Ann\n- tea\n', "
    "'# Ann\n', 0);";

/* Every file in WilmerAI's bytes: json.dumps(indent=4) with
 * ensure_ascii, the rows' order (timestamps as added, not sorted), the
 * state document and its .bak as they are; files are the owner's. */
START_TEST(json_files_in_wilmer_bytes)
{
	struct run	 r;
	struct stat	 sb;
	char		*t, *p;

	db_exec(rows_ann);
	export(&r);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	ck_has(r.r_out, "\nann: 2 memories, condensation tracker, summary, 2 "
	    "timestamps, 1 old compactor section, 1 oldest compactor section, "
	    "1 image description, state document (with its previous "
	    "version)\n");
	t = slurp(OUT "/ann/memories.json");
	ck_assert_str_eq(t, "[\n    {\n        \"text_block\": \"Ann likes "
	    "tea.\",\n        \"hash\": \"h1\"\n    },\n    {\n        "
	    "\"text_block\": \"She sails \\\"Gull\\\".\\nCaf\\u00e9 "
	    "\\ud83d\\ude42\",\n        \"hash\": \"h2\"\n    }\n]");
	free(t);
	t = slurp(OUT "/ann/condensation_tracker.json");
	ck_assert_str_eq(t, "{\n    \"lastCondensationHash\": \"h1\"\n}");
	free(t);
	t = slurp(OUT "/ann/chat_summary.json");
	ck_assert_str_eq(t, "[\n    {\n        \"text_block\": \"Ann, a "
	    "sailor.\",\n        \"hash\": \"h2\"\n    }\n]");
	free(t);
	t = slurp(OUT "/ann/timestamps.json");
	ck_assert_str_eq(t, "{\n    \"zz\": \"(Saturday, 2025-09-20 "
	    "16:30:05)\",\n    \"aa\": \"(Saturday, 2025-09-20 16:31:10)\"\n}");
	free(t);
	t = slurp(OUT "/ann/context_compactor_oldest.json");
	ck_assert_str_eq(t, "[\n    {\n        \"text_block\": \"oldest "
	    "one\",\n        \"hash\": \"x1\"\n    }\n]");
	free(t);
	t = slurp(OUT "/ann/vision_responses.json");
	ck_assert_str_eq(t, "{\n    \"k1\": \"a red boat\"\n}");
	free(t);
	t = slurp(OUT "/ann/state_document.md");
	ck_assert_str_eq(t, "# Ann\n- tea\n");
	free(t);
	t = slurp(OUT "/ann/state_document.md.bak");
	ck_assert_str_eq(t, "# Ann\n");
	free(t);
	ck_assert(exists(OUT "/ann/context_compactor_old.json"));
	ck_assert(!exists(OUT "/ann/vector_memory.db"));
	ck_assert(!exists(OUT "/.ann.sluice-export"));
	p = scratchdir_path(&t_dir, OUT "/ann/memories.json");
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0600);
	free(p);
	run_free(&r);
}
END_TEST

/* An empty ledger is WilmerAI's memories.json holding [] (its message
 * count trigger is then on); a discussion with nothing to write gets
 * no folder. */
START_TEST(empty_ledger_and_empty_discussion)
{
	struct run	 r;
	char		*t;

	db_exec("INSERT INTO discussions VALUES ('bo', 0);"
	    "INSERT INTO memory_ledgers VALUES ('bo', NULL);"
	    "INSERT INTO discussions VALUES ('cy', 0);");
	export(&r);
	ck_assert_int_eq(r.r_status, 0);
	t = slurp(OUT "/bo/memories.json");
	ck_assert_str_eq(t, "[]");
	free(t);
	ck_assert(!exists(OUT "/bo/condensation_tracker.json"));
	ck_has(r.r_out, "\nbo: 0 memories\ncy: nothing to export\n");
	ck_assert(!exists(OUT "/cy"));
	ck_has(r.r_out, "total: 2 discussions (0 failed, 0 left alone): "
	    "exported 0 memories, 0 summaries, 0 timestamps, 0 vector "
	    "memories, 0 hash log entries\n");
	run_free(&r);
}
END_TEST

/* ---- vector_memory.db ---- */

static const char rows_vec[] =
    "INSERT INTO discussions VALUES ('0123456789abcdef/dan', 0);"
    "INSERT INTO discussions VALUES ('eve', 0);"
    "INSERT INTO vector_memories VALUES (7, 'eve', 'not dan''s', 'd', "
    "NULL);"
    "INSERT INTO vector_memories VALUES (8, '0123456789abcdef/dan', "
    "'The keeper waves', '2025-09-20T16:30:05.123456+00:00', "
    "'{\"title\": \"Keeper\"}');"
    "INSERT INTO vector_memories VALUES (9, '0123456789abcdef/dan', "
    "'Tea at dawn', '2025-09-21T07:00:00+00:00', NULL);"
    "INSERT INTO vector_fts (rowid, title, summary, entities, key_phrases, "
    "memory_text_unweighted) VALUES (8, 'Keeper', 'The keeper waves', "
    "'Keeper', 'lighthouse', 'The keeper waves');"
    "INSERT INTO vector_fts (rowid, title, memory_text_unweighted) VALUES "
    "(7, 'Eve', 'not dan''s');"
    "INSERT INTO vector_fts (rowid, summary, memory_text_unweighted) VALUES "
    "(9, 'Tea at dawn', 'Tea at dawn');"
    "INSERT INTO memory_embeddings VALUES (8, 'm', 1, x'0000803F');"
    "INSERT INTO memory_embeddings VALUES (9, 'm', 1, x'00000040');"
    "INSERT INTO memory_embeddings VALUES (9, 'n', 2, x'0000803F00000040');"
    "INSERT INTO vector_hash_log (discussion, message_hash, logged_at) "
    "VALUES ('0123456789abcdef/dan', 'mh1', 1758385805);"
    "INSERT INTO vector_hash_log (discussion, message_hash, logged_at) "
    "VALUES ('0123456789abcdef/dan', 'mh2', 1758385805);"
    "INSERT INTO vector_hash_log (discussion, message_hash, logged_at) "
    "VALUES ('0123456789abcdef/dan', 'mh3', 1758386400);";

/* The row st of a WilmerAI file is on, as an "a|b\n" line. */
static void
vrow(struct buf *b, sqlite3_stmt *st)
{
	const char	*v;
	int		 i, n = sqlite3_column_count(st);

	for (i = 0; i < n; i++) {
		v = (const char *)sqlite3_column_text(st, i);
		buf_printf(b, "%s%s", i > 0 ? "|" : "", v != NULL ? v : "NULL");
	}
	buf_addc(b, '\n');
}

/* Every row of sql on the database at rel of t_dir (a WilmerAI file,
 * read with sqlite3), as "a|b\n" lines. */
static char *
vrows(const char *rel, const char *sql)
{
	sqlite3		*db;
	sqlite3_stmt	*st;
	struct buf	 b = BUF_INIT;
	char		*p = scratchdir_path(&t_dir, rel);

	ck_assert_int_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK);
	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
	buf_adds(&b, "");
	while (sqlite3_step(st) == SQLITE_ROW)
		vrow(&b, st);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(p);
	return buf_take(&b);
}

#define ck_vrows(rel, sql, want) do {					\
	char	*g_ = vrows(rel, sql);					\
	ck_assert_msg(strcmp(g_, want) == 0, "%s\ngot:\n%swant:\n%s",	\
	    sql, g_, want);						\
	free(g_);							\
} while (0)

#define DANDB	OUT "/0123456789abcdef/dan/vector_memory.db"

/* WilmerAI's schema; the memories numbered from 1 with the discussion
 * id (not Sluice's key); keyword rows and every model's embeddings
 * under the new ids; a porter-stemmed search finds one; the hash log's
 * times as Python's isoformat(), one a microsecond later so that its
 * ORDER BY timestamp keeps the order. */
START_TEST(a9_vector_db_in_wilmer_schema)
{
	struct run	 r;

	db_exec(rows_vec);
	export(&r);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	ck_has(r.r_out, "\n0123456789abcdef/dan: 2 vector memories with 3 "
	    "embeddings, 3 hash log entries\neve: 1 vector memory\n");
	ck_vrows(DANDB, "SELECT name FROM sqlite_master WHERE type IN "
	    "('table') AND name NOT LIKE 'memories_fts_%' AND name != "
	    "'sqlite_sequence' ORDER BY name", "memories\nmemories_fts\n"
	    "memory_embeddings\nvector_memory_hash_log\n");
	ck_vrows(DANDB, "SELECT * FROM memories ORDER BY id",
	    "1|dan|The keeper waves|2025-09-20T16:30:05.123456+00:00|"
	    "{\"title\": \"Keeper\"}\n2|dan|Tea at dawn|"
	    "2025-09-21T07:00:00+00:00|NULL\n");
	ck_vrows(DANDB, "SELECT rowid, title, key_phrases, summary FROM "
	    "memories_fts", "1|Keeper|lighthouse|The keeper waves\n"
	    "2|NULL|NULL|Tea at dawn\n");
	ck_vrows(DANDB, "SELECT m.memory_text FROM memories_fts f JOIN "
	    "memories m ON f.rowid = m.id WHERE memories_fts MATCH "
	    "'\"waving\"'", "The keeper waves\n");
	ck_vrows(DANDB, "SELECT memory_id, model, dim, hex(vector) FROM "
	    "memory_embeddings ORDER BY memory_id, model", "1|m|1|0000803F\n"
	    "2|m|1|00000040\n2|n|2|0000803F00000040\n");
	ck_vrows(DANDB, "SELECT id, discussion_id, message_hash, timestamp "
	    "FROM vector_memory_hash_log ORDER BY id",
	    "1|dan|mh1|2025-09-20T16:30:05+00:00\n"
	    "2|dan|mh2|2025-09-20T16:30:05.000001+00:00\n"
	    "3|dan|mh3|2025-09-20T16:40:00+00:00\n");
	ck_vrows(DANDB, "SELECT message_hash FROM vector_memory_hash_log "
	    "WHERE discussion_id = 'dan' ORDER BY timestamp DESC LIMIT 10",
	    "mh3\nmh2\nmh1\n");
	run_free(&r);
}
END_TEST

/* ---- reading it back ---- */

/* What a discussion holds, without ids and times of writing. */
static char *
content(struct scratchdb *db)
{
	static const char *const q[] = {
		"SELECT key FROM discussions ORDER BY key",
		"SELECT discussion, text, hash FROM memories ORDER BY id",
		"SELECT * FROM memory_ledgers ORDER BY discussion",
		"SELECT discussion, text, hash FROM summaries",
		"SELECT * FROM timestamps ORDER BY discussion, msg_hash",
		"SELECT discussion, section, pos, text, hash FROM "
		"compactor_sections ORDER BY discussion, section, pos",
		"SELECT discussion, message_key, text FROM vision_responses",
		"SELECT discussion, text, previous FROM state_documents",
		"SELECT discussion, memory_text, date_added, metadata_json FROM "
		"vector_memories ORDER BY discussion, id",
		"SELECT v.discussion, f.* FROM vector_fts f "
		"JOIN vector_memories v ON v.id = f.rowid ORDER BY v.discussion, "
		"v.id",
		"SELECT v.discussion, v.memory_text, e.model, hex(e.vector) FROM "
		"memory_embeddings e JOIN vector_memories v ON v.id = "
		"e.memory_id ORDER BY v.discussion, v.id, e.model",
		"SELECT discussion, message_hash FROM vector_hash_log ORDER BY "
		"discussion, id", NULL };
	struct buf	 b = BUF_INIT;
	char		*r;
	size_t		 i;

	for (i = 0; q[i] != NULL; i++) {
		r = scratchdb_rows(db, q[i]);
		buf_printf(&b, "-- %s\n%s", q[i], r);
		free(r);
	}
	return buf_take(&b);
}

/* Exported, then imported into an empty store: the same discussions,
 * row for row; the hash log keeps its order. */
START_TEST(round_trip_through_the_import)
{
	struct scratchdb	 back;
	struct run		 r;
	char			*a, *b;

	db_exec(rows_ann);
	db_exec(rows_vec);
	export(&r);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	run_free(&r);
	memset(&back, 0, sizeof(back));
	scratchdb_open(&back, "exp-back");
	run(&r, true, OUT, back.sd_dir);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	a = content(&t_db);
	b = content(&back);
	ck_assert_str_eq(b, a);
	free(a);
	free(b);
	run_free(&r);
	scratchdb_close(&back);
}
END_TEST

/* ---- never replaced, never half written ---- */

/* A discussion whose folder exists is left alone, file for file; a
 * second run leaves everything alone; a temporary folder a dead run
 * left is replaced. */
START_TEST(existing_folders_left_alone)
{
	struct run	 r;
	char		*t;

	db_exec(rows_ann);
	db_exec("INSERT INTO discussions VALUES ('fay', 0);"
	    "INSERT INTO memories VALUES (30, 'fay', 'f', 'f', 0);");
	scratchdir_put(&t_dir, OUT "/ann/memories.json", "mine");
	scratchdir_put(&t_dir, OUT "/.fay.sluice-export/memories.json", "old");
	export(&r);
	ck_assert_int_eq(r.r_status, 0);
	ck_has(r.r_out, "\nann: left alone: ");
	ck_has(r.r_out, "/" OUT "/ann exists\nfay: 1 memory\n");
	ck_has(r.r_out, "(0 failed, 1 left alone)");
	t = slurp(OUT "/ann/memories.json");
	ck_assert_str_eq(t, "mine");
	free(t);
	ck_assert(!exists(OUT "/ann/chat_summary.json"));
	ck_assert(!exists(OUT "/.fay.sluice-export"));
	run_free(&r);
	export(&r);
	ck_assert_int_eq(r.r_status, 0);
	ck_has(r.r_out, "(0 failed, 2 left alone)");
	t = slurp(OUT "/fay/memories.json");
	ck_has(t, "\"text_block\": \"f\"");
	free(t);
	run_free(&r);
}
END_TEST

/* A key that cannot be a WilmerAI folder fails alone, with why. */
START_TEST(unusable_ids_fail_alone)
{
	struct run	 r;

	db_exec("INSERT INTO discussions VALUES ('a/b', 0);"
	    "INSERT INTO memories VALUES (1, 'a/b', 't', 'h', 0);"
	    "INSERT INTO discussions VALUES ('..', 0);"
	    "INSERT INTO memories VALUES (2, '..', 't', 'h', 0);"
	    "INSERT INTO discussions VALUES ('0123456789abcdef/x:y', 0);"
	    "INSERT INTO memories VALUES (3, '0123456789abcdef/x:y', 't', 'h', "
	    "0);"
	    "INSERT INTO discussions VALUES ('gus', 0);"
	    "INSERT INTO memories VALUES (4, 'gus', 't', 'h', 0);");
	export(&r);
	ck_assert_int_eq(r.r_status, EX_DATAERR);
	ck_has(r.r_out, "\n..: FAILED, nothing written: not a discussion id "
	    "WilmerAI accepts");
	ck_has(r.r_out, "\n0123456789abcdef/x:y: FAILED");
	ck_has(r.r_out, "\na/b: FAILED");
	ck_has(r.r_out, "\ngus: 1 memory\n");
	ck_has(r.r_err, "error: a/b: not a discussion id");
	ck_assert(exists(OUT "/gus/memories.json"));
	ck_assert(!exists(OUT "/a"));
	run_free(&r);
}
END_TEST

/* No database: EX_NOINPUT, and neither it nor the destination is made;
 * a destination that is a file: EX_CANTCREAT. */
START_TEST(missing_database_and_bad_destination)
{
	struct run	 r;
	char		*state = scratchdir_path(&t_dir, "nostate"), *db;

	ck_assert_int_eq(mkdir(state, 0700), 0);
	run(&r, false, OUT, state);
	ck_assert_int_eq(r.r_status, EX_NOINPUT);
	ck_has(r.r_err, "nostate/sluice.db: No such file");
	db = xasprintf("%s/sluice.db", state);
	ck_assert_int_eq(access(db, F_OK), -1);
	ck_assert(!exists(OUT));
	free(db);
	free(state);
	run_free(&r);
	scratchdir_put(&t_dir, "afile", "x");
	run(&r, false, "afile", NULL);
	ck_assert_int_eq(r.r_status, EX_CANTCREAT);
	ck_has(r.r_err, "afile: Not a directory");
	run_free(&r);
}
END_TEST

/* ---- encryptUsingApiKey (A10) ---- */

static const char *const users[] = { "it" };

/* The store's rows of discussion key sealed with k: a memory, a
 * summary, a timestamp and a state document. */
static void
sealed_rows(const char *key, const struct fernet_key *k)
{
	struct store	*s = t_db.sd_store;
	char		*m, *sum, *st, *doc;

	store_seal_key(s, k);
	m = store_seal(s, "Dora's caf\xc3\xa9 memory");
	sum = store_seal(s, "the summary");
	st = store_seal(s, "(Monday, 2025-01-06 10:00:00)");
	doc = store_seal(s, "# Dora\n");
	store_seal_key(s, NULL);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES (?, 0)",
	    "t", key), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO memories VALUES (1, ?, ?, "
	    "'d1', 0)", "tt", key, m), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO memory_ledgers VALUES (?, "
	    "NULL)", "t", key), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO summaries VALUES (?, ?, "
	    "'d1', 0)", "tt", key, sum), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO timestamps VALUES (?, "
	    "'m1', ?)", "tt", key, st), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO state_documents VALUES "
	    "(?, ?, NULL, 0)", "tt", key, doc), 1);
	free(m);
	free(sum);
	free(st);
	free(doc);
}

/* The text of file rel opened with k. Caller frees. */
static char *
decrypted(const char *rel, const struct fernet_key *k)
{
	struct buf	 p = BUF_INIT;
	char		*t = slurp(rel);

	ck_assert_msg(fernet_is_token(t, strlen(t)), "%s: %s", rel, t);
	ck_assert_int_eq(fernet_decrypt(k, t, strlen(t), &p), 0);
	buf_addc(&p, '\0');
	free(t);
	return buf_take(&p);
}

/* Given the key, for a user that sets encryptUsingApiKey: the sealed
 * rows are opened and the files written encrypted with the same key,
 * in WilmerAI's token format (the JSON text inside is PyJSON-file); the
 * import given the key reads them back. */
START_TEST(a10_export_encrypted)
{
	char			 dir[FERNET_DIRLEN], key[64], rel[128], *t;
	char			*kf = scratchdir_path(&t_dir, "key.txt");
	const char		*files[1];
	struct fernet_key	 k;
	struct run		 r;

	files[0] = kf;
	scratchdir_put(&t_dir, "key.txt", APIKEY "\n");
	fernet_dir(APIKEY, dir);
	snprintf(key, sizeof(key), "%s/dora", dir);
	ck_assert_int_eq(fernet_derive(&k, APIKEY, "it"), 0);
	sealed_rows(key, &k);
	t_opts = (struct import_opts){ .io_key_files = files,
	    .io_nkey_files = 1, .io_users = users, .io_nusers = 1,
	    .io_sealers = users, .io_nsealers = 1 };
	export(&r);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	ck_has(r.r_out, ": 1 memory, summary, 1 timestamp, state document "
	    "(encrypted for user it, encryptUsingApiKey)\n");
	snprintf(rel, sizeof(rel), OUT "/%s/dora/memories.json", dir);
	t = decrypted(rel, &k);
	ck_assert_str_eq(t, "[\n    {\n        \"text_block\": \"Dora's "
	    "caf\\u00e9 memory\",\n        \"hash\": \"d1\"\n    }\n]");
	free(t);
	snprintf(rel, sizeof(rel), OUT "/%s/dora/state_document.md", dir);
	t = decrypted(rel, &k);
	ck_assert_str_eq(t, "# Dora\n");
	free(t);
	run_free(&r);
	/* the import, given the key, reads what the export wrote */
	db_exec("PRAGMA foreign_keys = ON; DELETE FROM discussions");
	run(&r, true, OUT, NULL);
	ck_assert_msg(r.r_status == 0, "%s%s", r.r_out, r.r_err);
	ck_has(r.r_out, "1 memory, summary, 1 timestamp, state document "
	    "(encrypted for user it, encryptUsingApiKey)");
	run_free(&r);
	fernet_wipe(&k);
	free(kf);
}
END_TEST

/* Without the key, the sealed parts are left out with why, the rest is
 * written; with the key of a user that no longer encrypts, the files
 * are plain text, which WilmerAI reads without a key. */
START_TEST(a10_export_without_or_plain)
{
	char			 dir[FERNET_DIRLEN], key[64], rel[128], *t;
	char			*kf = scratchdir_path(&t_dir, "key.txt");
	const char		*files[1];
	struct fernet_key	 k;
	struct run		 r;

	files[0] = kf;
	scratchdir_put(&t_dir, "key.txt", APIKEY "\n");
	fernet_dir(APIKEY, dir);
	snprintf(key, sizeof(key), "%s/dora", dir);
	ck_assert_int_eq(fernet_derive(&k, APIKEY, "it"), 0);
	sealed_rows(key, &k);
	db_exec("INSERT INTO vector_memories VALUES (1, (SELECT key FROM "
	    "discussions), 'plain fact', 'd', NULL)");
	export(&r);
	ck_assert_int_eq(r.r_status, 0);
	ck_has(r.r_out, ": 1 vector memory; skipped: memories.json "
	    "(encrypted with an API key (encryptUsingApiKey), and no key given "
	    "opens it: see --export-key-file); chat_summary.json (");
	ck_has(r.r_out, "; state_document.md (encrypted");
	snprintf(rel, sizeof(rel), OUT "/%s/dora/memories.json", dir);
	ck_assert(!exists(rel));
	run_free(&r);
	snprintf(rel, sizeof(rel), "rm -r %s/" OUT, t_dir.sc_path);
	ck_assert_int_eq(system(rel), 0);
	t_opts = (struct import_opts){ .io_key_files = files,
	    .io_nkey_files = 1, .io_users = users, .io_nusers = 1 };
	export(&r);
	ck_assert_int_eq(r.r_status, 0);
	ck_assert_ptr_null(strstr(r.r_out, "encrypted"));
	snprintf(rel, sizeof(rel), OUT "/%s/dora/memories.json", dir);
	t = slurp(rel);
	ck_has(t, "\"text_block\": \"Dora's caf\\u00e9 memory\"");
	free(t);
	run_free(&r);
	fernet_wipe(&k);
	free(kf);
}
END_TEST

static Suite *
export_suite(void)
{
	Suite	*s = suite_create("export");
	TCase	*tc;

#define TC(name)	do {						\
	tc = tcase_create(name);					\
	tcase_add_checked_fixture(tc, setup, teardown);			\
	tcase_set_timeout(tc, 30);					\
	suite_add_tcase(s, tc);						\
} while (0)
	TC("files");
	tcase_add_test(tc, json_files_in_wilmer_bytes);
	tcase_add_test(tc, empty_ledger_and_empty_discussion);
	tcase_add_test(tc, a9_vector_db_in_wilmer_schema);
	tcase_add_test(tc, round_trip_through_the_import);
	TC("safety");
	tcase_add_test(tc, existing_folders_left_alone);
	tcase_add_test(tc, unusable_ids_fail_alone);
	tcase_add_test(tc, missing_database_and_bad_destination);
	TC("a10");
	tcase_add_test(tc, a10_export_encrypted);
	tcase_add_test(tc, a10_export_without_or_plain);
#undef TC
	return s;
}

int
main(void)
{
	return check_main(export_suite());
}
