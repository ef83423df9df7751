/* check_imp.c - the WilmerAI import's pieces (worker/import: imp_scan, imp_json_*, imp_vec, imp_state) and import_run, on a scratch folder and a scratch store. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "../../common/fernet.h"
#include "../../common/xmem.h"
#include "../../worker/store/store_seal.h"
#include "../../worker/import/import.h"
#include "../../worker/import/import_int.h"
#include "../testmain.h"
#include "scratchdb.h"
#include "scratchdir.h"

/*
 * The integration suite (check_import) runs sluice-gateway
 * --import-wilmer on a whole WilmerAI folder; this one calls the pieces
 * on small folders of t_dir (a WilmerAI Public/DiscussionIds at ROOT)
 * and checks what they chose and wrote in t_db.
 */

#define ROOT	"Public/DiscussionIds"
#define KEYDIR	"0123456789abcdef"	/* an API key's folder */

/* A Fernet token, as encryptUsingApiKey writes a file. */
#define FERNET	"gAAAAABo3q7xV2l0aF9hX2tleV90aGlzX3dvdWxkX2RlY3J5" \
		"cHRfYnV0X3dlX2RvX25vdF9oYXZlX2l0X3NvX2l0X3N0YXlz" \
		"X2xvY2tlZA=="

static struct scratchdir	 t_dir;
static struct scratchdb		 t_db;
static struct imp_list		 t_list;
static struct imp_res		 t_res;
static struct import_opts	 t_opts;	/* run_import's, beside the
						   folders (zero: none) */

static void
setup(void)
{
	scratchdir_make(&t_dir, "imp");
	scratchdir_mkdir(&t_dir, ROOT);
	scratchdb_open(&t_db, "imp");
	memset(&t_list, 0, sizeof(t_list));
	memset(&t_res, 0, sizeof(t_res));
	memset(&t_opts, 0, sizeof(t_opts));
}

static void
teardown(void)
{
	imp_list_free(&t_list);
	buf_free(&t_res.ir_parts);
	buf_free(&t_res.ir_skips);
	scratchdb_close(&t_db);
	scratchdir_remove(&t_dir);
}

static void
put(const char *rel, const char *json)
{
	scratchdir_json(&t_dir, rel, json);
}

/* imp_scan of folder rel of t_dir into t_list, which must succeed. */
static void
scan(const char *rel)
{
	char	 err[CONF_ERRLEN], *dir = scratchdir_path(&t_dir, rel);

	imp_list_free(&t_list);
	ck_assert_msg(imp_scan(dir, &t_list, err) == 0, "%s", err);
	free(dir);
}

/* The keys found, one a line. Caller frees. */
static char *
keys(void)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < t_list.il_n; i++)
		buf_printf(&b, "%s\n", t_list.il_v[i].d_key);
	return buf_take(&b);
}

#define ck_keys(want) do {						\
	char	*k_ = keys();						\
	ck_assert_str_eq(k_, want);					\
	free(k_);							\
} while (0)

static struct imp_disc *
disc(const char *key)
{
	size_t	 i;

	for (i = 0; i < t_list.il_n; i++)
		if (strcmp(t_list.il_v[i].d_key, key) == 0)
			return &t_list.il_v[i];
	ck_abort_msg("no discussion %s", key);
	return NULL;
}

/* The file chosen for part f of key: its path in t_dir, or "-". */
static void
ck_file(const char *key, enum imp_file f, const char *want)
{
	const char	*got = disc(key)->d_file[f];
	size_t		 n = strlen(t_dir.sc_path);

	if (got == NULL)
		got = "-";
	else {
		ck_assert_msg(strncmp(got, t_dir.sc_path, n) == 0 &&
		    got[n] == '/', "%s is outside the scratch folder", got);
		got += n + 1;
	}
	ck_assert_str_eq(got, want);
}

/* The rows of sql, as scratchdb_rows gives them, are want. */
static void
ck_rows(const char *sql, const char *want)
{
	char	*got = scratchdb_rows(&t_db, sql);

	ck_assert_msg(strcmp(got, want) == 0, "%s\ngot:\n%swant:\n%s", sql,
	    got, want);
	free(got);
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

/* What the report says of t_res: "parts | skips". */
static void
ck_report(const char *parts, const char *skips)
{
	ck_assert_str_eq(t_res.ir_parts.b_len > 0 ? t_res.ir_parts.b_data :
	    "", parts);
	ck_assert_str_eq(t_res.ir_skips.b_len > 0 ? t_res.ir_skips.b_data :
	    "", skips);
}

/* Import discussion key of t_list as import_run does (reports go to
 * t_res, which starts empty): 0, or -1 with the transaction rolled
 * back. */
static int
import_disc(const char *key)
{
	struct imp_disc	*d = disc(key);
	struct imp_json	 j;
	int		 rc = -1;

	buf_free(&t_res.ir_parts);
	buf_free(&t_res.ir_skips);
	memset(&t_res, 0, sizeof(t_res));
	if (imp_json_read(d, &j, &t_res) == -1)
		return -1;
	ck_assert_int_eq(store_begin(t_db.sd_store), 0);
	if (imp_json_write(t_db.sd_store, d, &j, &t_res) == 0 &&
	    imp_vec(t_db.sd_store, d, &t_res) == 0 &&
	    imp_state(t_db.sd_store, d, &t_res) == 0)
		rc = store_commit(t_db.sd_store);
	else
		ck_assert_int_eq(store_rollback(t_db.sd_store), 0);
	imp_json_free(&j);
	return rc;
}

/* Import ROOT/<id> (one discussion's folder). */
static int
import_one(const char *id)
{
	char	*rel = xasprintf(ROOT "/%s", id);

	scan(rel);
	free(rel);
	return import_disc(id);
}

/* ---- finding the discussions (imp_scan) ---- */

/* Folders with a file WilmerAI keeps, API keys' folders, legacy flat
 * files; sorted by key; ids WilmerAI refuses left out with one note. */
START_TEST(scan_root)
{
	put(ROOT "/alice/memories.json", "[]");
	put(ROOT "/" KEYDIR "/carol/chat_summary.json", "[]");
	put(ROOT "/dave_memories.json", "[]");
	put(ROOT "/dave_timestamps.json", "{}");
	put(ROOT "/erin/memories.json", "[]");
	put(ROOT "/erin_memories.json", "[]");
	put(ROOT "/empty/notes.txt", "x");
	put(ROOT "/x:y/memories.json", "[]");
	put(ROOT "/x:y_timestamps.json", "{}");
	put(ROOT "/readme.txt", "x");
	scan(ROOT);
	ck_assert(!t_list.il_single);
	ck_keys(KEYDIR "/carol\nalice\ndave\nerin\n");
	ck_assert_str_eq(disc(KEYDIR "/carol")->d_id, "carol");
	ck_file(KEYDIR "/carol", IMP_SUMMARY, ROOT "/" KEYDIR
	    "/carol/chat_summary.json");
	ck_file("alice", IMP_MEMORIES, ROOT "/alice/memories.json");
	ck_file("alice", IMP_TIMESTAMPS, "-");
	ck_file("dave", IMP_MEMORIES, ROOT "/dave_memories.json");
	ck_file("dave", IMP_TIMESTAMPS, ROOT "/dave_timestamps.json");
	ck_file("erin", IMP_MEMORIES, ROOT "/erin/memories.json");
	ck_assert_str_eq(t_list.il_notes.b_data, "left out 'x:y': not a "
	    "discussion id WilmerAI accepts (it holds '\\' or ':', or is '.' "
	    "or '..')\n");
}
END_TEST

/* JSON files by exact name, then the flat file, then ignoring case;
 * other files by exact name only. */
START_TEST(scan_file_names)
{
	put(ROOT "/bob/MEMORIES.json", "[]");
	put(ROOT "/bob/Timestamps.JSON", "{}");
	put(ROOT "/bob/timestamps.json", "{}");
	put(ROOT "/bob/Vector_Memory.db", "");
	put(ROOT "/bob/State_Document.md", "");
	put(ROOT "/fay/Memories.json", "[]");
	put(ROOT "/fay_memories.json", "[]");
	scan(ROOT);
	ck_keys("bob\nfay\n");
	ck_file("bob", IMP_MEMORIES, ROOT "/bob/MEMORIES.json");
	ck_file("bob", IMP_TIMESTAMPS, ROOT "/bob/timestamps.json");
	ck_file("bob", IMP_VECTOR, "-");
	ck_file("bob", IMP_STATE, "-");
	ck_file("fay", IMP_MEMORIES, ROOT "/fay_memories.json");
}
END_TEST

/* The vision cache and the compactor's files are kept, found ignoring
 * case. */
START_TEST(scan_files_not_kept)
{
	put(ROOT "/gus/vision_responses.json", "{}");
	put(ROOT "/gus/Context_Compactor_Old.json", "{}");
	put(ROOT "/hal/Vision_Responses.json", "{}");
	put(ROOT "/hal/memories.json", "[]");
	scan(ROOT);
	ck_keys("gus\nhal\n");
	ck_assert_uint_eq(disc("gus")->d_other.b_len, 0);
	ck_file("gus", IMP_VISION, ROOT "/gus/vision_responses.json");
	ck_file("gus", IMP_COMPACT_OLD, ROOT "/gus/Context_Compactor_Old.json");
	ck_file("gus", IMP_COMPACT_OLDEST, "-");
	ck_file("hal", IMP_VISION, ROOT "/hal/Vision_Responses.json");
}
END_TEST

/* A folder named like an API key is one, and a discussion too when it
 * has files; an API key's discussions never read flat files. */
START_TEST(scan_key_folders)
{
	put(ROOT "/" KEYDIR "/memories.json", "[]");
	put(ROOT "/" KEYDIR "/ivy/timestamps.json", "{}");
	put(ROOT "/" KEYDIR "/ivy/notes", "");
	put(ROOT "/ivy_memories.json", "[]");
	put(ROOT "/0123456789ABCDEF/jo/memories.json", "[]");
	scan(ROOT);
	ck_keys(KEYDIR "\n" KEYDIR "/ivy\nivy\n");
	ck_file(KEYDIR "/ivy", IMP_MEMORIES, "-");
	ck_file(KEYDIR "/ivy", IMP_TIMESTAMPS, ROOT "/" KEYDIR
	    "/ivy/timestamps.json");
	ck_file("ivy", IMP_MEMORIES, ROOT "/ivy_memories.json");
}
END_TEST

/* Public/<id>_vector_memory.db beside a DiscussionIds folder, unless
 * the discussion's folder has its own. */
START_TEST(scan_legacy_vector_db)
{
	put("Public/kim_vector_memory.db", "");
	put("Public/lou_vector_memory.db", "");
	put(ROOT "/lou/vector_memory.db", "");
	put("Other/mo_vector_memory.db", "");
	put("Other/Ids/nia/memories.json", "[]");
	scan(ROOT);
	ck_keys("kim\nlou\n");
	ck_file("kim", IMP_VECTOR, "Public/kim_vector_memory.db");
	ck_file("lou", IMP_VECTOR, ROOT "/lou/vector_memory.db");
	scan("Other/Ids");
	ck_keys("nia\n");
}
END_TEST

/* One discussion's folder: its name is the id, scoped by an API key's
 * parent folder; otherwise its parent's flat files count. */
START_TEST(scan_one_discussion)
{
	put(ROOT "/" KEYDIR "/pat/memories.json", "[]");
	put(ROOT "/" KEYDIR "/pat_timestamps.json", "{}");
	put(ROOT "/quin/memories.json", "[]");
	put(ROOT "/quin_timestamps.json", "{}");
	scan(ROOT "/" KEYDIR "/pat");
	ck_assert(t_list.il_single);
	ck_keys(KEYDIR "/pat\n");
	ck_file(KEYDIR "/pat", IMP_TIMESTAMPS, "-");
	scan(ROOT "/quin");
	ck_assert(t_list.il_single);
	ck_keys("quin\n");
	ck_file("quin", IMP_TIMESTAMPS, ROOT "/quin_timestamps.json");
}
END_TEST

START_TEST(scan_errors)
{
	char	 err[CONF_ERRLEN], *p = scratchdir_path(&t_dir, "nope"), *want;

	ck_assert_int_eq(imp_scan(p, &t_list, err), -1);
	want = xasprintf("%s: No such file or directory", p);
	ck_assert_str_eq(err, want);
	free(want);
	free(p);
	put("file", "{}");
	p = scratchdir_path(&t_dir, "file");
	ck_assert_int_eq(imp_scan(p, &t_list, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "Not a directory"));
	free(p);
	scan(ROOT);
	ck_assert_uint_eq(t_list.il_n, 0);
}
END_TEST

/* ---- reading files ---- */

/* A Fernet token: "gAAAAA", URL-safe base64, long enough. */
START_TEST(encrypted_tokens)
{
	static const char	 tok[] = FERNET;

	ck_assert(imp_encrypted(tok, strlen(tok)));
	ck_assert(imp_encrypted(FERNET "\r\n", strlen(FERNET) + 2));
	ck_assert(!imp_encrypted(tok, 99));
	ck_assert(!imp_encrypted(tok + 1, strlen(tok) - 1));
	ck_assert(!imp_encrypted("gAAAAA" FERNET "+", strlen(FERNET) + 7));
	ck_assert(!imp_encrypted("[{\"text_block\": \"gAAAAA\"}]", 26));
	ck_assert(!imp_encrypted("", 0));
}
END_TEST

START_TEST(read_whole_files)
{
	struct buf	 b = BUF_INIT;
	char		 err[CONF_ERRLEN], *p, *big;
	size_t		 n = 300000, i;
	FILE		*f;

	p = scratchdir_path(&t_dir, "big");
	big = xmalloc(n);
	for (i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_uint_eq(fwrite(big, 1, n, f), n);
	fclose(f);
	ck_assert_int_eq(imp_read_file(p, &b, err), 0);
	ck_assert_uint_eq(b.b_len, n);
	ck_assert(memcmp(b.b_data, big, n) == 0 && b.b_data[n] == '\0');
	buf_free(&b);
	free(big);
	free(p);
	p = scratchdir_path(&t_dir, ROOT);
	ck_assert_int_eq(imp_read_file(p, &b, err), -1);
	ck_assert_ptr_nonnull(strstr(err, ": not a regular file"));
	free(p);
	p = scratchdir_path(&t_dir, "nope");
	ck_assert_int_eq(imp_read_file(p, &b, err), -1);
	ck_assert_ptr_nonnull(strstr(err, ": No such file or directory"));
	buf_free(&b);
	free(p);
}
END_TEST

/* condensation_tracker.json is checked too; an encrypted JSON file is
 * left out with a note, the others read. */
START_TEST(json_checked_and_encrypted)
{
	put(ROOT "/rae/condensation_tracker.json",
	    "{'lastCondensationHash': 5}");
	ck_assert_int_eq(import_one("rae"), -1);
	ck_assert_ptr_nonnull(strstr(t_res.ir_err,
	    "condensation_tracker.json:1:"));
	ck_assert_ptr_nonnull(strstr(t_res.ir_err, "lastCondensationHash"));
	put(ROOT "/rae/condensation_tracker.json", "{}");
	scratchdir_put(&t_dir, ROOT "/rae/memories.json", "%s\n", FERNET);
	put(ROOT "/rae/timestamps.json", "{'m1': 'then'}");
	ck_assert_int_eq(import_one("rae"), 0);
	ck_report("1 timestamp", "memories.json (encrypted with the API key "
	    "(encryptUsingApiKey): it cannot be read without the key, see "
	    "--import-key-file)");
	ck_rows("SELECT count(*) FROM memories", "0\n");
}
END_TEST

/* A memories file that WilmerAI encrypted with API key sk-wilmer-test
 * for user "it" (Python's cryptography). */
#define DORA_MEM "gAAAAABrCo34jSwId_zLpRgS6MBcGmUVCG05xDUmKgEmyabQm7qnD4zvK" \
	"fFUSZIaTfs44HJXCnFVO_ElUM-DvJP8pA7IjzQSGfZVSQJtXeSbYiHLcRo9NuSrwt9v2" \
	"VHXsElinZrOLCtVd8IEuIbqnb6DS-VyJGE_oeky_LhJ0MYg3-59FgGnRZiSVitC6-UXf" \
	"yitDKVzjx6f"

/* Import ROOT/dora with the key of key.txt derived for user. */
static int
import_keyed(const char *user, struct imp_keys *ks)
{
	char			 err[CONF_ERRLEN];
	char			*path = scratchdir_path(&t_dir, "key.txt");
	const char		*files[] = { path }, *users[] = { user };
	struct import_opts	 o = { .io_key_files = files, .io_nkey_files = 1,
				    .io_users = users, .io_nusers = 1 };
	int			 rc;

	ck_assert_msg(imp_keys_load(ks, &o, err) == 0, "%s", err);
	free(path);
	imp_list_free(&t_list);
	scan(ROOT "/dora");
	disc("dora")->d_keys = ks;
	rc = import_disc("dora");
	imp_keys_free(ks);
	ck_assert_uint_eq(ks->ik_n, 0);
	return rc;
}

/* A10.5: with the API key, the key derived for the configured user
 * opens the file; under another user name it does not, and the report
 * says so; a missing key file is an error. */
START_TEST(a10_keys_open_files)
{
	struct imp_keys		 ks;
	char			 err[CONF_ERRLEN];
	const char		*files[] = { "/nonexistent/key" };
	struct import_opts	 o = { .io_key_files = files,
				    .io_nkey_files = 1 };

	scratchdir_put(&t_dir, ROOT "/dora/memories.json", "%s", DORA_MEM);
	scratchdir_put(&t_dir, "key.txt", "sk-wilmer-test\n");
	ck_assert_int_eq(import_keyed("alice", &ks), 0);
	ck_report("", "memories.json (encrypted with the API key "
	    "(encryptUsingApiKey): no key given opens it: another API key, or "
	    "another user name)");
	ck_assert_int_eq(import_keyed("it", &ks), 0);
	ck_report("1 memory", "");
	ck_rows("SELECT text, hash FROM memories", "Dora's caf\xc3\xa9 "
	    "memory|d1\n");
	ck_assert_int_eq(imp_keys_load(&ks, &o, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/key"));
	imp_keys_free(&ks);
}
END_TEST

/* ---- the JSON files into the store ---- */

/* Memories in order with their ledger and its condensation hash. */
START_TEST(memories_and_tracker)
{
	put(ROOT "/sam/memories.json", "[{'text_block': 'one', 'hash': 'h1'},"
	    " {'text_block': 'two', 'hash': 'h2'}]");
	put(ROOT "/sam/condensation_tracker.json",
	    "{'lastCondensationHash': 'h1'}");
	ck_assert_int_eq(import_one("sam"), 0);
	ck_report("2 memories, condensation tracker", "");
	ck_assert_int_eq(t_res.ir_memories, 2);
	ck_rows("SELECT discussion, text, hash FROM memories ORDER BY id",
	    "sam|one|h1\nsam|two|h2\n");
	ck_rows("SELECT * FROM memory_ledgers", "sam|h1\n");
	ck_rows("SELECT key FROM discussions", "sam\n");
}
END_TEST

/* The tracker without memories.json, or beside memories Sluice has of
 * its own, is left out and the report says why. */
START_TEST(tracker_left_out)
{
	put(ROOT "/tia/condensation_tracker.json",
	    "{'lastCondensationHash': 'h1'}");
	ck_assert_int_eq(import_one("tia"), 0);
	ck_report("", "condensation_tracker.json (it goes with memories.json, "
	    "which is missing)");
	ck_rows("SELECT count(*) FROM memory_ledgers", "0\n");
	db_exec("INSERT INTO discussions "
	    "VALUES ('tia', 1); INSERT INTO memories (discussion, text, hash, "
	    "created_at) VALUES ('tia', 'own', 'x', 1)");
	put(ROOT "/tia/memories.json", "[{'text_block': 'one', 'hash': "
	    "'h1'}]");
	ck_assert_int_eq(import_one("tia"), 0);
	ck_report("", "memories.json (the discussion already has 1 memory in "
	    "Sluice); condensation_tracker.json (it goes with memories.json, "
	    "which is not imported)");
	ck_rows("SELECT text FROM memories", "own\n");
}
END_TEST

/* A memories.json imported before is recognised; an empty one still
 * makes the ledger (WilmerAI's file exists). */
START_TEST(memories_again)
{
	put(ROOT "/uma/memories.json", "[{'text_block': 'one', 'hash': "
	    "'h1'}]");
	ck_assert_int_eq(import_one("uma"), 0);
	ck_assert_int_eq(import_one("uma"), 0);
	ck_report("memories already imported", "");
	ck_rows("SELECT count(*) FROM memories", "1\n");
	put(ROOT "/uma/memories.json", "[{'text_block': 'one', 'hash': 'h1'},"
	    " {'text_block': 'two', 'hash': 'h2'}]");
	ck_assert_int_eq(import_one("uma"), 0);
	ck_report("", "memories.json (the discussion already has 1 memory in "
	    "Sluice)");
	put(ROOT "/val/memories.json", "[]");
	ck_assert_int_eq(import_one("val"), 0);
	ck_report("0 memories", "");
	ck_rows("SELECT * FROM memory_ledgers ORDER BY discussion",
	    "uma|NULL\nval|NULL\n");
}
END_TEST

/* WilmerAI's last summary entry is the one that counts. */
START_TEST(summary_last_entry)
{
	put(ROOT "/wes/chat_summary.json", "[{'text_block': 'old', 'hash': "
	    "'a'}, {'text_block': 'new', 'hash': 'b'}]");
	ck_assert_int_eq(import_one("wes"), 0);
	ck_report("summary (the last of 2 entries)", "");
	ck_rows("SELECT discussion, text, hash FROM summaries", "wes|new|b\n");
	ck_assert_int_eq(import_one("wes"), 0);
	ck_report("summary already imported", "");
	put(ROOT "/wes/chat_summary.json", "[{'text_block': 'other', 'hash': "
	    "'c'}]");
	ck_assert_int_eq(import_one("wes"), 0);
	ck_report("", "chat_summary.json (the discussion already has a "
	    "summary in Sluice)");
	put(ROOT "/xia/chat_summary.json", "[]");
	ck_assert_int_eq(import_one("xia"), 0);
	ck_report("", "");
	ck_rows("SELECT count(*) FROM discussions WHERE key = 'xia'", "0\n");
}
END_TEST

/* ContextCompactor's two files, each section unless Sluice has one;
 * legacy boundaries (no "idx:") come over as they are. */
START_TEST(compactor_state)
{
	put(ROOT "/amy/context_compactor_old.json", "[{'text_block': 'S', "
	    "'hash': 'h3'}, {'text_block': '__boundary__', 'hash': 'h2'}]");
	put(ROOT "/amy/context_compactor_oldest.json", "[{'text_block': 'U', "
	    "'hash': 'h0'}]");
	ck_assert_int_eq(import_one("amy"), 0);
	ck_report("compactor state", "");
	ck_rows("SELECT discussion, section, pos, text, hash FROM "
	    "compactor_sections ORDER BY section, pos",
	    "amy|old|0|S|h3\namy|old|1|__boundary__|h2\n"
	    "amy|oldest|0|U|h0\n");
	ck_assert_int_eq(import_one("amy"), 0);
	ck_report("compactor state already imported", "");
	put(ROOT "/amy/context_compactor_oldest.json", "[{'text_block': 'V', "
	    "'hash': 'h0'}]");
	ck_assert_int_eq(import_one("amy"), 0);
	ck_report("compactor state already imported",
	    "context_compactor_oldest.json (the discussion already has "
	    "compactor state in Sluice)");
	put(ROOT "/bea/context_compactor_old.json", "[]");
	put(ROOT "/bea/context_compactor_oldest.json", "{'a': 1}");
	ck_assert_int_eq(import_one("bea"), -1);
	ck_assert_ptr_nonnull(strstr(t_res.ir_err, "must be a list"));
	put(ROOT "/bea/context_compactor_oldest.json", "[]");
	ck_assert_int_eq(import_one("bea"), 0);
	ck_report("", "");
	ck_rows("SELECT count(*) FROM discussions WHERE key = 'bea'", "0\n");
}
END_TEST

/* Each stamp unless Sluice has one for that message. */
START_TEST(timestamps_added)
{
	db_exec("INSERT INTO discussions "
	    "VALUES ('yan', 1)");
	db_exec("INSERT INTO timestamps "
	    "VALUES ('yan', 'm1', 'mine')");
	put(ROOT "/yan/timestamps.json", "{'m1': 'theirs', 'm2': 'b'}");
	ck_assert_int_eq(import_one("yan"), 0);
	ck_report("1 timestamp (1 already present)", "");
	ck_assert_int_eq(t_res.ir_timestamps, 1);
	ck_rows("SELECT msg_hash, stamp FROM timestamps ORDER BY msg_hash",
	    "m1|mine\nm2|b\n");
	put(ROOT "/zed/timestamps.json", "{}");
	ck_assert_int_eq(import_one("zed"), 0);
	ck_report("0 timestamps", "");
	ck_rows("SELECT count(*) FROM discussions WHERE key = 'zed'", "0\n");
}
END_TEST

/* A11.4: vision_responses.json's descriptions, the ones the discussion
 * does not keep yet; a value that is not a string is pinpointed. */
START_TEST(a11_4_vision_descriptions)
{
	db_exec("INSERT INTO discussions VALUES ('ivy', 1)");
	db_exec("INSERT INTO vision_responses VALUES ('ivy', 'k1', 'mine', "
	    "1)");
	put(ROOT "/ivy/vision_responses.json", "{'k1': 'theirs', 'k2': "
	    "'a cat'}");
	ck_assert_int_eq(import_one("ivy"), 0);
	ck_report("1 image description (1 already present)", "");
	ck_rows("SELECT message_key, text FROM vision_responses ORDER BY "
	    "message_key", "k1|mine\nk2|a cat\n");
	put(ROOT "/jo/vision_responses.json", "{'k': 5}");
	ck_assert_int_eq(import_one("jo"), -1);
	ck_assert_ptr_nonnull(strstr(t_res.ir_err, "vision_responses.json:1:"));
	ck_assert_ptr_nonnull(strstr(t_res.ir_err, "description of \"k\""));
}
END_TEST

/* ---- vector_memory.db (imp_vec) ---- */

/* WilmerAI's tables; which ones a test creates is its choice. */
#define VEC_MEMORIES	"CREATE TABLE memories (id INTEGER PRIMARY KEY, " \
			"discussion_id TEXT NOT NULL, memory_text TEXT NOT " \
			"NULL, date_added TEXT NOT NULL, metadata_json TEXT);"
#define VEC_FTS		"CREATE VIRTUAL TABLE memories_fts USING " \
			"fts5(title, summary, entities, key_phrases, " \
			"memory_text_unweighted, tokenize='porter');"
#define VEC_HASHLOG	"CREATE TABLE vector_memory_hash_log (id INTEGER " \
			"PRIMARY KEY AUTOINCREMENT, discussion_id TEXT NOT " \
			"NULL, message_hash TEXT NOT NULL, timestamp " \
			"DATETIME NOT NULL);"
#define VEC_EMBED	"CREATE TABLE memory_embeddings (memory_id INTEGER " \
			"NOT NULL, model TEXT NOT NULL, dim INTEGER NOT " \
			"NULL, vector BLOB NOT NULL, PRIMARY KEY (memory_id, " \
			"model));"

/* Make ROOT/<id>/vector_memory.db with sql. */
static void
vecdb(const char *id, const char *sql)
{
	char	*rel = xasprintf(ROOT "/%s/vector_memory.db", id);
	char	*p = scratchdir_path(&t_dir, rel), *msg = NULL;
	sqlite3	*db;

	scratchdir_put(&t_dir, rel, "%s", "");
	ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK,
	    "%s", msg);
	sqlite3_close(db);
	free(p);
	free(rel);
}

/* Without WilmerAI's keyword index every memory's text is indexed. */
START_TEST(vector_without_fts)
{
	vecdb("amy", VEC_MEMORIES "INSERT INTO memories VALUES (3, 'amy', "
	    "'Amy paints', '2025-01-01T00:00:00+00:00', '{}');");
	ck_assert_int_eq(import_one("amy"), 0);
	ck_report("1 vector memory", "");
	ck_rows("SELECT v.discussion, v.memory_text, v.metadata_json, "
	    "f.title, f.memory_text_unweighted FROM vector_memories v JOIN "
	    "vector_fts f ON f.rowid = v.id", "amy|Amy paints|{}|NULL|"
	    "Amy paints\n");
}
END_TEST

/* A9.3: each memory's embeddings come along under its new id, the
 * vectors byte for byte; a vector whose length is not 4 bytes a
 * dimension is left out and said. */
START_TEST(a9_3_import_embeddings)
{
	vecdb("cy", VEC_MEMORIES VEC_EMBED "INSERT INTO memories VALUES (7, "
	    "'cy', 'Cy sails', '2025-01-01T00:00:00+00:00', '{}'), (8, 'cy', "
	    "'Cy rows', '2025-01-02T00:00:00+00:00', '{}');"
	    "INSERT INTO memory_embeddings VALUES (7, 'm', 2, "
	    "x'0000803f00000040'), (7, 'n', 1, x'00004040'), (8, 'm', 2, "
	    "x'00');");
	ck_assert_int_eq(import_one("cy"), 0);
	ck_report("2 vector memories with 2 embeddings", "1 vector in "
	    "memory_embeddings whose length is not 4 bytes a dimension");
	ck_rows("SELECT v.memory_text, e.model, e.dim, hex(e.vector) FROM "
	    "memory_embeddings e JOIN vector_memories v ON v.id = e.memory_id "
	    "ORDER BY e.model", "Cy sails|m|2|0000803F00000040\n"
	    "Cy sails|n|1|00004040\n");
}
END_TEST

/* The hash log of this discussion only; a time SQLite cannot read is
 * the time of the import; an embedding of no memory goes nowhere. */
START_TEST(vector_hash_log)
{
	time_t	 t0 = time(NULL);
	char	*r;

	vecdb("ben", VEC_HASHLOG VEC_EMBED "INSERT INTO vector_memory_hash_log "
	    "(discussion_id, message_hash, timestamp) VALUES ('ben', 'h1', "
	    "'1970-01-01T00:01:40+00:00'), ('ann', 'hx', '2025-01-01'), "
	    "('ben', 'h2', 'whenever');"
	    "INSERT INTO memory_embeddings VALUES (1, 'm', 1, x'00');");
	ck_assert_int_eq(import_one("ben"), 0);
	ck_report("2 hash log entries", "");
	ck_rows("SELECT message_hash FROM vector_hash_log ORDER BY id",
	    "h1\nh2\n");
	ck_rows("SELECT logged_at FROM vector_hash_log WHERE message_hash = "
	    "'h1'", "100\n");
	r = scratchdb_rows(&t_db, "SELECT logged_at FROM vector_hash_log "
	    "WHERE message_hash = 'h2'");
	ck_assert_int_ge(atol(r), (long)t0);
	free(r);
}
END_TEST

/* Vector memories or a hash log Sluice has already are kept. */
START_TEST(vector_already_in_sluice)
{
	vecdb("cy", VEC_MEMORIES VEC_HASHLOG "INSERT INTO memories VALUES (1, "
	    "'cy', 'theirs', 'd', NULL); INSERT INTO vector_memory_hash_log "
	    "(discussion_id, message_hash, timestamp) VALUES ('cy', 'h', "
	    "'d');");
	db_exec("INSERT INTO discussions "
	    "VALUES ('cy', 1); INSERT INTO vector_memories (discussion, "
	    "memory_text, date_added) VALUES ('cy', 'mine', 'd'); INSERT "
	    "INTO vector_hash_log (discussion, message_hash, logged_at) VALUES "
	    "('cy', 'mh', 1)");
	ck_assert_int_eq(import_one("cy"), 0);
	ck_report("vector memories already in Sluice (1), hash log already in "
	    "Sluice (1)", "");
	ck_rows("SELECT memory_text FROM vector_memories", "mine\n");
}
END_TEST

/* A file that cannot be opened fails the discussion as bad input. */
START_TEST(vector_unreadable)
{
	put(ROOT "/dot/memories.json", "[]");
	scan(ROOT "/dot");
	free(t_list.il_v[0].d_file[IMP_VECTOR]);
	t_list.il_v[0].d_file[IMP_VECTOR] = scratchdir_path(&t_dir,
	    ROOT "/dot/none.db");
	ck_assert_int_eq(import_disc("dot"), -1);
	ck_assert_int_eq(t_res.ir_fail, EX_DATAERR);
	ck_assert_ptr_nonnull(strstr(t_res.ir_err, "none.db: cannot open it"));
	ck_rows("SELECT count(*) FROM memory_ledgers", "0\n");
}
END_TEST

/* ---- state_document.md (imp_state) ---- */

START_TEST(state_with_previous)
{
	scratchdir_put(&t_dir, ROOT "/eve/state_document.md", "# now\n");
	scratchdir_put(&t_dir, ROOT "/eve/state_document.md.bak", "# was\n");
	ck_assert_int_eq(import_one("eve"), 0);
	ck_report("state document (with its previous version)", "");
	ck_rows("SELECT discussion, text, previous FROM state_documents",
	    "eve|# now\n|# was\n\n");
	ck_assert_int_eq(import_one("eve"), 0);
	ck_report("state document already imported", "");
	scratchdir_put(&t_dir, ROOT "/eve/state_document.md", "# other\n");
	ck_assert_int_eq(import_one("eve"), 0);
	ck_report("", "state_document.md (the discussion already has a state "
	    "document in Sluice)");
}
END_TEST

/* An encrypted .bak is left out, the document imported alone; an
 * encrypted or empty document is not imported. */
START_TEST(state_encrypted_or_empty)
{
	scratchdir_put(&t_dir, ROOT "/fox/state_document.md", "# now\n");
	scratchdir_put(&t_dir, ROOT "/fox/state_document.md.bak", FERNET);
	ck_assert_int_eq(import_one("fox"), 0);
	ck_report("state document", "state_document.md.bak (encrypted with "
	    "the API key (encryptUsingApiKey): it cannot be read without the "
	    "key, see --import-key-file)");
	ck_rows("SELECT previous FROM state_documents", "NULL\n");
	scratchdir_put(&t_dir, ROOT "/gil/state_document.md", FERNET "\n");
	ck_assert_int_eq(import_one("gil"), 0);
	ck_report("", "state_document.md (encrypted with the API key "
	    "(encryptUsingApiKey): it cannot be read without the key, see "
	    "--import-key-file)");
	scratchdir_put(&t_dir, ROOT "/hoa/state_document.md", "%s", "");
	ck_assert_int_eq(import_one("hoa"), 0);
	ck_report("", "");
	ck_rows("SELECT discussion FROM state_documents", "fox\n");
}
END_TEST

/* A database without state documents (an older Sluice) says so. */
START_TEST(state_not_kept)
{
	db_exec("DROP TABLE "
	    "state_documents");
	scratchdir_put(&t_dir, ROOT "/ida/state_document.md", "# now\n");
	ck_assert_int_eq(import_one("ida"), 0);
	ck_report("", "state_document.md (this database keeps no state "
	    "documents)");
}
END_TEST

/* ---- import_run ---- */

struct run {
	int	 r_status;
	char	*r_out;		/* standard output */
	char	*r_err;		/* standard error */
};

static char *
slurp(const char *rel)
{
	struct buf	 b = BUF_INIT;
	char		 err[CONF_ERRLEN], *p = scratchdir_path(&t_dir, rel);

	ck_assert_msg(imp_read_file(p, &b, err) == 0, "%s", err);
	free(p);
	return b.b_len > 0 ? buf_take(&b) : (buf_free(&b), xstrdup(""));
}

/* import_run of folder dir of t_dir into the folder state (NULL: the
 * scratch store's), its output captured. */
static void
run_import(struct run *r, const char *dir, const char *state)
{
	struct import_opts	 o;
	char			*out = scratchdir_path(&t_dir, "out");
	char			*err = scratchdir_path(&t_dir, "err");
	char			*from = scratchdir_path(&t_dir, dir);
	char			*db = xasprintf("%s/sluice.db", state != NULL ?
				    state : t_db.sd_dir);
	int			 fd1 = dup(1), fd2 = dup(2);

	o = t_opts;
	o.io_dir = from;
	o.io_store = db;
	fflush(stdout);
	fflush(stderr);
	ck_assert_ptr_nonnull(freopen(out, "w", stdout));
	ck_assert_ptr_nonnull(freopen(err, "w", stderr));
	r->r_status = import_run(&o);
	fflush(stdout);
	fflush(stderr);
	dup2(fd1, 1);
	dup2(fd2, 2);
	close(fd1);
	close(fd2);
	r->r_out = slurp("out");
	r->r_err = slurp("err");
	free(from);
	free(db);
	free(out);
	free(err);
}

static void
run_free(struct run *r)
{
	free(r->r_out);
	free(r->r_err);
}

/* The state folder missing: EX_CANTCREAT, nothing on stdout. */
START_TEST(run_cannot_create)
{
	struct run	 r;

	put(ROOT "/jay/memories.json", "[]");
	run_import(&r, ROOT, "/nonexistent/missing");
	ck_assert_int_eq(r.r_status, EX_CANTCREAT);
	ck_assert_str_eq(r.r_out, "");
	ck_assert_ptr_nonnull(strstr(r.r_err, "error: "));
	ck_assert_ptr_nonnull(strstr(r.r_err, "missing/sluice.db"));
	run_free(&r);
}
END_TEST

/* A write the database refuses: that discussion is rolled back and the
 * status is EX_IOERR, unless bad input (EX_DATAERR) was seen too. */
START_TEST(run_refused_write)
{
	struct run	 r;
	char		*want;

	db_exec("CREATE TRIGGER no_kim "
	    "BEFORE INSERT ON timestamps WHEN new.discussion = 'kim' BEGIN "
	    "SELECT RAISE(ABORT, 'refused here'); END");
	put(ROOT "/kim/memories.json", "[{'text_block': 'k', 'hash': 'k'}]");
	put(ROOT "/kim/timestamps.json", "{'m': 'then'}");
	put(ROOT "/lee/memories.json", "[{'text_block': 'l', 'hash': 'l'}]");
	run_import(&r, ROOT, NULL);
	ck_assert_int_eq(r.r_status, EX_IOERR);
	ck_assert_ptr_nonnull(strstr(r.r_out, "\nkim: FAILED, nothing "
	    "imported: "));
	ck_assert_ptr_nonnull(strstr(r.r_out, "refused here"));
	ck_assert_ptr_nonnull(strstr(r.r_out, "\nlee: 1 memory\n"));
	want = xasprintf("importing %s/" ROOT " (a DiscussionIds folder, 2 "
	    "discussions) into %s/sluice.db\n", t_dir.sc_path, t_db.sd_dir);
	ck_assert_msg(strncmp(r.r_out, want, strlen(want)) == 0, "%s",
	    r.r_out);
	free(want);
	ck_rows("SELECT discussion, text FROM memories", "lee|l\n");
	run_free(&r);
	put(ROOT "/amy/memories.json", "{");
	run_import(&r, ROOT, NULL);
	ck_assert_int_eq(r.r_status, EX_DATAERR);
	run_free(&r);
}
END_TEST

/* The total line counts what was imported, in the right number. */
START_TEST(run_total)
{
	struct run	 r;

	put(ROOT "/mo/memories.json", "[{'text_block': 'k', 'hash': 'k'}]");
	put(ROOT "/mo/chat_summary.json", "[{'text_block': 's', 'hash': "
	    "'s'}]");
	put(ROOT "/mo/timestamps.json", "{'a': 'x'}");
	vecdb("mo", VEC_MEMORIES VEC_HASHLOG "INSERT INTO memories VALUES (1, "
	    "'mo', 'v', 'd', NULL); INSERT INTO vector_memory_hash_log "
	    "(discussion_id, message_hash, timestamp) VALUES ('mo', 'h', "
	    "'2025-01-01');");
	run_import(&r, ROOT "/mo", NULL);
	ck_assert_int_eq(r.r_status, 0);
	ck_assert_ptr_nonnull(strstr(r.r_out, "(one discussion's folder, "
	    "1 discussion)"));
	ck_assert_ptr_nonnull(strstr(r.r_out, "\ntotal: 1 discussion (0 "
	    "failed): imported 1 memory, 1 summary, 1 timestamp, 1 vector "
	    "memory, 1 hash log entry\n"));
	ck_assert_str_eq(r.r_err, "");
	run_free(&r);
}
END_TEST

/* The text value of a one-line, one-column rows result, opened with
 * key k (as a request of that key and user would). Caller frees. */
static char *
opened(const char *sql, const struct fernet_key *k)
{
	char	*rows = scratchdb_rows(&t_db, sql), *t;

	rows[strcspn(rows, "\n")] = '\0';
	ck_assert_msg(fernet_is_token(rows, strlen(rows)), "%s", rows);
	store_seal_key(t_db.sd_store, k);
	ck_assert_int_eq(store_unseal(t_db.sd_store, "d", "memories", rows,
	    &t), 0);
	store_seal_key(t_db.sd_store, NULL);
	free(rows);
	return t;
}

/* A10.4 for the import: given the API key, for a user that sets
 * encryptUsingApiKey, a discussion of that key's folder is stored
 * encrypted with the key its requests will use (the encrypted file
 * decrypted, then sealed again; plain files sealed too), and a second
 * run knows it imported them already. */
START_TEST(a10_import_sealed)
{
	char			 dir[FERNET_DIRLEN], rel[128], *t;
	char			*key = scratchdir_path(&t_dir, "key.txt");
	const char		*files[1], *users[] = { "it" };
	struct fernet_key	 k;
	struct run		 r;
	int			 i;

	files[0] = key;
	fernet_dir("sk-wilmer-test", dir);
	scratchdir_put(&t_dir, "key.txt", "sk-wilmer-test\n");
	snprintf(rel, sizeof(rel), ROOT "/%s/dora/memories.json", dir);
	scratchdir_put(&t_dir, rel, "%s", DORA_MEM);
	snprintf(rel, sizeof(rel), ROOT "/%s/dora/chat_summary.json", dir);
	put(rel, "[{'text_block': 'the summary', 'hash': 'd1'}]");
	snprintf(rel, sizeof(rel), ROOT "/%s/dora/timestamps.json", dir);
	put(rel, "{'m1': '(Monday, 2025-01-06 10:00:00)'}");
	t_opts = (struct import_opts){ .io_key_files = files,
	    .io_nkey_files = 1, .io_users = users, .io_nusers = 1,
	    .io_sealers = users, .io_nsealers = 1 };
	for (i = 0; i < 2; i++) {
		run_import(&r, ROOT, NULL);
		ck_assert_msg(r.r_status == 0, "%s", r.r_err);
		ck_assert_msg(strstr(r.r_out, i == 0 ? "1 memory, summary, 1 "
		    "timestamp (encrypted for user it, encryptUsingApiKey)" :
		    "memories already imported, summary already imported, 0 "
		    "timestamps (1 already present) (encrypted for user it")
		    != NULL, "%s", r.r_out);
		run_free(&r);
	}
	ck_assert_int_eq(fernet_derive(&k, "sk-wilmer-test", "it"), 0);
	t = opened("SELECT text FROM memories", &k);
	ck_assert_str_eq(t, "Dora's caf\xc3\xa9 memory");
	free(t);
	t = opened("SELECT text FROM summaries", &k);
	ck_assert_str_eq(t, "the summary");
	free(t);
	t = opened("SELECT stamp FROM timestamps", &k);
	ck_assert_str_eq(t, "(Monday, 2025-01-06 10:00:00)");
	free(t);
	ck_rows("SELECT hash FROM memories UNION ALL SELECT hash FROM "
	    "summaries", "d1\nd1\n");
	fernet_wipe(&k);
	free(key);
}
END_TEST

static Suite *
imp_suite(void)
{
	Suite	*s = suite_create("imp");
	TCase	*tc;

#define TC(name)	do {						\
	tc = tcase_create(name);					\
	tcase_add_checked_fixture(tc, setup, teardown);			\
	tcase_set_timeout(tc, 30);					\
	suite_add_tcase(s, tc);						\
} while (0)
	TC("scan");
	tcase_add_test(tc, scan_root);
	tcase_add_test(tc, scan_file_names);
	tcase_add_test(tc, scan_files_not_kept);
	tcase_add_test(tc, scan_key_folders);
	tcase_add_test(tc, scan_legacy_vector_db);
	tcase_add_test(tc, scan_one_discussion);
	tcase_add_test(tc, scan_errors);
	TC("read");
	tcase_add_test(tc, encrypted_tokens);
	tcase_add_test(tc, read_whole_files);
	tcase_add_test(tc, json_checked_and_encrypted);
	tcase_add_test(tc, a10_keys_open_files);
	tcase_add_test(tc, a10_import_sealed);
	TC("json");
	tcase_add_test(tc, memories_and_tracker);
	tcase_add_test(tc, tracker_left_out);
	tcase_add_test(tc, memories_again);
	tcase_add_test(tc, summary_last_entry);
	tcase_add_test(tc, timestamps_added);
	tcase_add_test(tc, a11_4_vision_descriptions);
	tcase_add_test(tc, compactor_state);
	TC("vector");
	tcase_add_test(tc, vector_without_fts);
	tcase_add_test(tc, vector_hash_log);
	tcase_add_test(tc, a9_3_import_embeddings);
	tcase_add_test(tc, vector_already_in_sluice);
	tcase_add_test(tc, vector_unreadable);
	TC("state");
	tcase_add_test(tc, state_with_previous);
	tcase_add_test(tc, state_encrypted_or_empty);
	tcase_add_test(tc, state_not_kept);
	TC("run");
	tcase_add_test(tc, run_cannot_create);
	tcase_add_test(tc, run_refused_write);
	tcase_add_test(tc, run_total);
#undef TC
	return s;
}

int
main(void)
{
	return check_main(imp_suite());
}
