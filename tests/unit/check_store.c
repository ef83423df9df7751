/* check_store.c - the shared store on both drivers (SQLite, PostgreSQL): schema, statements, column accessors, locks, lock waits, processes killed mid-write. */
#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/sha256.h"
#include "../../common/pgurl.h"
#include "../../common/xmem.h"
#include "../../worker/store/store.h"
#include "../../worker/store/store_lock.h"
#include "../../worker/store/store_pg.h"
#include "../../worker/store/store_schema.h"
#include "../../worker/store/store_stmt.h"
#include "../../worker/store/store_turn.h"
#include "../testmain.h"
#include "pgtmp.h"

/*
 * Each backend-neutral test runs twice: in the sqlite_* cases on a
 * SQLite file, in the pg_* cases on a new database of the suite's
 * throwaway PostgreSQL cluster (started by main, skipped loudly when
 * PostgreSQL is not installed). Where the two speak different SQL, D()
 * picks the text.
 */
static char	 t_dir[64];	/* scratch directory, one per test */
static char	 t_db[256];	/* t_dir/sluice.db, or the database's URL */
static bool	 t_pg;		/* this test runs on PostgreSQL */
static struct pgtmp t_cluster;

#define D(lite, post)	(t_pg ? (post) : (lite))

static void
setup(void)
{
	snprintf(t_dir, sizeof(t_dir), "/tmp/sluice-store.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t_dir));
	snprintf(t_db, sizeof(t_db), "%s/sluice.db", t_dir);
}

/* A new database for the test (and a scratch directory for its files). */
static void
setup_pg(void)
{
	setup();
	t_pg = true;
	ck_assert_int_eq(pgtmp_newdb(&t_cluster, t_db, sizeof(t_db)), 0);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

static void
teardown(void)
{
	if (getenv("STORE_KEEP") != NULL)
		return;
	nftw(t_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (t_pg)
		ck_assert_int_eq(pgtmp_dropdbs(&t_cluster), 0);
}

static struct store *
open_ok(const struct store_opts *o)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = store_open(t_db, o, err);

	ck_assert_msg(s != NULL, "store_open: %s", err);
	return s;
}

/* The first column of the first row of sql, as a number. */
static int64_t
q_int(struct store *s, const char *sql)
{
	struct store_q	*st = store_stmt(s, sql);
	int64_t		 v;

	ck_assert_msg(st != NULL, "%s", store_err(s));
	ck_assert_int_eq(store_step(s, st), 1);
	v = store_col_int(st, 0);
	store_end(st);
	return v;
}

/* The same as text, copied into out. */
static char *
q_text(struct store *s, const char *sql, char *out, size_t outlen)
{
	struct store_q	*st = store_stmt(s, sql);

	ck_assert_msg(st != NULL, "%s", store_err(s));
	ck_assert_int_eq(store_step(s, st), 1);
	snprintf(out, outlen, "%s", store_col_text(st, 0));
	store_end(st);
	return out;
}

/* The schema version the database says it has. */
static int64_t
q_version(struct store *s)
{
	return q_int(s, D("PRAGMA user_version",
	    "SELECT version FROM sluice_schema"));
}

static void
set_version(struct store *s, int v)
{
	char	 sql[64];

	if (t_pg)
		snprintf(sql, sizeof(sql), "UPDATE sluice_schema SET version "
		    "= %d", v);
	else
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	ck_assert_msg(store_exec(s, sql, "") != -1, "%s", store_err(s));
}

/* How many of the tables named in list ('a', 'b') exist. */
static int64_t
q_tables(struct store *s, const char *list)
{
	char	 sql[512];

	snprintf(sql, sizeof(sql), "%s (%s)", D("SELECT count(*) FROM "
	    "sqlite_master WHERE name IN", "SELECT count(*) FROM "
	    "information_schema.tables WHERE table_schema = 'public' AND "
	    "table_name IN"), list);
	return q_int(s, sql);
}

static void
sleep_ms(int ms)
{
	struct timespec	 ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- open and migrate ---------------------------------------------- */

START_TEST(test_open_schema)
{
	struct store	*s = open_ok(NULL);
	char		 t[32];

	ck_assert_int_eq(q_version(s), store_schema_version());
	ck_assert_int_eq(q_tables(s, "'workflow_locks', 'discussions', "
	    "'memories', 'summaries', 'timestamps', 'vector_memories', "
	    "'vector_fts', 'vector_hash_log', 'memory_ledgers', "
	    "'state_documents', 'response_cache', 'compactor_sections', "
	    "'vision_responses', 'memory_embeddings'"), 14);
	if (t_pg) {
		store_close(s);
		return;
	}
	ck_assert_str_eq(q_text(s, "PRAGMA journal_mode", t, sizeof(t)),
	    "wal");
	ck_assert_int_eq(q_int(s, "PRAGMA synchronous"), 1);	/* NORMAL */
	ck_assert_int_eq(q_int(s, "PRAGMA foreign_keys"), 1);
	ck_assert_int_eq(q_int(s, "PRAGMA temp_store"), 2);	/* MEMORY */
	ck_assert_int_eq(q_int(s, "PRAGMA journal_size_limit"), 64 << 20);
	store_close(s);
	s = open_ok(&(struct store_opts){ .so_sync_full = true });
	ck_assert_int_eq(q_int(s, "PRAGMA synchronous"), 2);	/* FULL */
	store_close(s);
}
END_TEST

/* Debian's SQLite has FTS5; porter stems "running" to "run" (and so
 * does PostgreSQL's english configuration). Deleting a discussion takes
 * its rows along, the keyword index included. */
START_TEST(test_fts5_cascade)
{
	struct store	*s = open_ok(NULL);

	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES (?, "
	    "0)", "t", "d1"), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO vector_memories (id, "
	    "discussion, memory_text, date_added) VALUES (7, 'd1', ?, "
	    "'2025-01-01')", "t", "She was running late"), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO vector_fts (rowid, title, "
	    "summary, entities, key_phrases, memory_text_unweighted) VALUES "
	    "(7, 'late', 'She was running late', '', '', '')", ""), 1);
	ck_assert_int_eq(q_int(s, D("SELECT rowid FROM vector_fts WHERE "
	    "vector_fts MATCH 'run'", "SELECT rowid FROM vector_fts WHERE "
	    "tsv @@ to_tsquery('english', 'run')")), 7);
	ck_assert_int_eq(store_exec(s, "INSERT INTO memories (discussion, "
	    "text, hash, created_at) VALUES ('d1', 'm', 'h', 0)", ""), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO memories (discussion, "
	    "text, hash, created_at) VALUES ('nope', 'm', 'h', 0)", ""), -1);
	ck_assert_ptr_nonnull(strcasestr(store_err(s), "FOREIGN KEY"));
	ck_assert_int_eq(store_exec(s, "DELETE FROM discussions", ""), 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM memories"), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM vector_memories"), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM vector_fts"), 0);
	store_close(s);
}
END_TEST

START_TEST(test_reopen)
{
	struct store	*s = open_ok(NULL);

	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('d', "
	    "1)", ""), 1);
	store_close(s);
	s = open_ok(NULL);
	ck_assert_int_eq(q_version(s), store_schema_version());
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM discussions"), 1);
	store_close(s);
}
END_TEST

/* Several processes open a new file at the same moment: every one
 * succeeds and the schema is made once. */
START_TEST(test_concurrent_migrate)
{
	enum { NPROC = 6, ROUNDS = 5 };
	pid_t		 pid[NPROC];
	char		 err[STORE_ERRLEN];
	struct store	*s;
	int		 go[2], r, i, st;
	char		 c;

	for (r = 0; r < ROUNDS; r++) {
		if (t_pg)
			ck_assert_int_eq(pgtmp_newdb(&t_cluster, t_db,
			    sizeof(t_db)), 0);
		else
			snprintf(t_db, sizeof(t_db), "%s/race%d.db", t_dir, r);
		ck_assert_int_eq(pipe(go), 0);
		for (i = 0; i < NPROC; i++) {
			if ((pid[i] = fork()) == 0) {
				close(go[1]);
				(void)read(go[0], &c, 1);	/* all start */
				s = store_open(t_db, NULL, err);
				if (s == NULL)
					fprintf(stderr, "child: %s\n", err);
				store_close(s);
				_exit(s != NULL ? 0 : 1);
			}
		}
		close(go[0]);
		close(go[1]);
		for (i = 0; i < NPROC; i++) {
			ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			    "round %d: a process failed to open", r);
		}
		s = open_ok(NULL);
		ck_assert_int_eq(q_version(s), store_schema_version());
		ck_assert_int_eq(q_tables(s, "'memories'"), 1);
		store_close(s);
	}
}
END_TEST

/* A database of schema version 1 (before locks knew their process's
 * start time, before the response cache) is brought up to date at
 * open, its rows kept. */
START_TEST(test_migrate_from_1)
{
	struct store	*s = open_ok(NULL);

	ck_assert_int_ge(store_schema_version(), 2);
	/* what version 1 had not: steps 2 to 6 */
	ck_assert_int_eq(store_exec(s, "ALTER TABLE workflow_locks DROP COLUMN "
	    "pid_start", ""), 0);
	ck_assert_int_eq(store_exec(s, "DROP TABLE response_cache", ""), 0);
	ck_assert_int_eq(store_exec(s, "DROP TABLE compactor_sections", ""), 0);
	ck_assert_int_eq(store_exec(s, "DROP TABLE vision_responses", ""), 0);
	ck_assert_int_eq(store_exec(s, "DROP TABLE memory_embeddings", ""), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO workflow_locks VALUES "
	    "('L', 'o', ?, 7)", "i", (int64_t)time(NULL) + 60), 1);
	set_version(s, 1);
	store_close(s);
	s = open_ok(NULL);
	ck_assert_int_eq(q_version(s), store_schema_version());
	ck_assert_int_eq(q_int(s, "SELECT pid * 10 + pid_start FROM "
	    "workflow_locks WHERE lock_id = 'L'"), 70);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM response_cache"), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM compactor_sections"),
	    0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM vision_responses"), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM memory_embeddings"),
	    0);
	store_close(s);
}
END_TEST

START_TEST(test_newer_schema)
{
	struct store	*s = open_ok(NULL);
	char		 err[STORE_ERRLEN];

	set_version(s, 99);
	store_close(s);
	ck_assert_ptr_null(store_open(t_db, NULL, err));
	ck_assert_ptr_nonnull(strstr(err, "version 99 is newer"));
	ck_assert_ptr_nonnull(strstr(err, t_db));
}
END_TEST

/* Not a database: a clear message naming the file, and the file is left
 * exactly as it was. */
START_TEST(test_corrupt)
{
	char		 junk[8192], back[sizeof(junk)], err[STORE_ERRLEN];
	struct stat	 sb;
	FILE		*f;
	size_t		 i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)('a' + i % 23);
	ck_assert_ptr_nonnull(f = fopen(t_db, "w"));
	ck_assert_uint_eq(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	ck_assert_ptr_null(store_open(t_db, NULL, err));
	ck_assert_ptr_nonnull(strstr(err, t_db));
	ck_assert_msg(strstr(err, "not a database") != NULL, "%s", err);
	ck_assert_int_eq(stat(t_db, &sb), 0);
	ck_assert_int_eq(sb.st_size, (off_t)sizeof(junk));
	ck_assert_ptr_nonnull(f = fopen(t_db, "r"));
	ck_assert_uint_eq(fread(back, 1, sizeof(back), f), sizeof(back));
	fclose(f);
	ck_assert_int_eq(memcmp(junk, back, sizeof(junk)), 0);

	/* A path that cannot be a database file. */
	ck_assert_ptr_null(store_open(t_dir, NULL, err));
	ck_assert_ptr_nonnull(strstr(err, t_dir));
	ck_assert_msg(strstr(err, "unable to open") != NULL, "%s", err);
}
END_TEST

/* ---- statements ------------------------------------------------------ */

START_TEST(test_stmt_cache)
{
	struct store	*s = open_ok(NULL);
	struct store_q	*a, *b;
	const char	*three = D("SELECT value FROM json_each('[1,2,3]')",
			    "SELECT v FROM generate_series(1, 3) v");
	char		 sql[64];

	a = store_stmt(s, three);
	ck_assert_msg(a != NULL, "%s", store_err(s));
	ck_assert_int_eq(store_step(s, a), 1);
	ck_assert_int_eq(store_step(s, a), 1);
	ck_assert_int_eq((int)store_col_int(a, 0), 2);
	/* The same text (another buffer): the same statement, reset. */
	snprintf(sql, sizeof(sql), "%s", three);
	b = store_stmt(s, sql);
	ck_assert_ptr_eq(a, b);
	ck_assert_int_eq(store_step(s, b), 1);
	ck_assert_int_eq((int)store_col_int(b, 0), 1);
	store_end(b);

	/* Bindings are cleared. */
	a = store_stmt(s, "SELECT ?");
	ck_assert_int_eq(store_bind(s, a, "i", (int64_t)5), 0);
	ck_assert_int_eq(store_step(s, a), 1);
	ck_assert_int_eq((int)store_col_int(a, 0), 5);
	a = store_stmt(s, "SELECT ?");
	ck_assert_int_eq(store_step(s, a), 1);
	ck_assert(store_col_null(a, 0));
	store_end(a);

	/* Numbered parameters; one the SQL skips (?2) is still bound. */
	a = store_stmt(s, "SELECT ?3 || ?1, ?1");
	ck_assert_msg(a != NULL, "%s", store_err(s));
	ck_assert_int_eq(store_bind(s, a, "ttt", "a", "-", "c"), 0);
	ck_assert_int_eq(store_step(s, a), 1);
	ck_assert_str_eq(store_col_text(a, 0), "ca");
	ck_assert_str_eq(store_col_text(a, 1), "a");
	store_end(a);

	/* Errors name the database. */
	ck_assert_ptr_null(store_stmt(s, "SELEKT 1"));
	ck_assert_ptr_nonnull(strstr(store_err(s), t_db));
	ck_assert_ptr_nonnull(strstr(store_err(s), "syntax error"));
	ck_assert_ptr_null(store_stmt(s, "SELECT 1; SELECT 2"));
	ck_assert_ptr_nonnull(strstr(store_err(s), "one statement"));
	store_close(s);
}
END_TEST

/* User text is bound, never pasted into SQL. */
START_TEST(test_bind)
{
	struct store	*s = open_ok(NULL);
	const char	*evil = "x'); DROP TABLE memories; --";
	struct store_q	*st;

	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES (?, ?)",
	    "ti", evil, (int64_t)1 << 40), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO memories (discussion, "
	    "text, hash, created_at) VALUES (?, ?, 'h', 0)", "tt", evil,
	    "it's"), 1);
	st = store_stmt(s, "SELECT d.key, d.created_at, m.text FROM "
	    "discussions d JOIN memories m ON m.discussion = d.key");
	ck_assert_int_eq(store_step(s, st), 1);
	ck_assert_str_eq(store_col_text(st, 0), evil);
	ck_assert_int_eq(store_col_int(st, 1), (int64_t)1 << 40);
	ck_assert_str_eq(store_col_text(st, 2), "it's");
	ck_assert_int_eq(store_step(s, st), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO summaries VALUES (?, ?, "
	    "?, 0)", "tnt", evil, "h"), -1);	/* text NOT NULL */
	ck_assert_ptr_nonnull(strstr(store_err(s), D("NOT NULL",
	    "not-null")));
	ck_assert_int_eq(store_exec(s, "SELECT ?", "x", 1), -1);
	store_close(s);
}
END_TEST

/* ---- columns (the accessors callers read rows with) ------------------ */

/* Each type of value, and NULL, through its accessor. */
START_TEST(test_col_types)
{
	struct store	*s = open_ok(NULL);
	struct store_q	*q;
	const char	 raw[5] = { 'a', '\0', 'b', '\xff', 'c' };
	const char	*b;
	size_t		 n = 99;

	q = store_stmt(s, D("SELECT NULL, ?, 2.5, 'text', ?, ?, zeroblob(0)",
	    "SELECT NULL, ?::bigint, 2.5::float8, 'text', ?::bytea, ?::text, "
	    "''::bytea"));
	ck_assert_msg(q != NULL, "%s", store_err(s));
	ck_assert_int_eq(store_bind(s, q, "ibt", (int64_t)-7, raw, sizeof(raw),
	    (const char *)NULL), 0);
	ck_assert_int_eq(store_step(s, q), 1);
	ck_assert_int_eq(store_col_count(q), 7);
	ck_assert_int_eq(store_col_type(q, 0), STORE_NULL);
	ck_assert(store_col_null(q, 0));
	ck_assert_ptr_null(store_col_text(q, 0));
	ck_assert_int_eq(store_col_int(q, 0), 0);
	ck_assert_ptr_null(store_col_blob(q, 0, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(store_col_type(q, 1), STORE_INTEGER);
	ck_assert_int_eq(store_col_int(q, 1), -7);
	ck_assert_str_eq(store_col_text(q, 1), "-7");	/* given as text */
	ck_assert_int_eq(store_col_type(q, 2), STORE_FLOAT);
	ck_assert(store_col_double(q, 2) == 2.5);
	ck_assert_int_eq(store_col_type(q, 3), STORE_TEXT);
	ck_assert(!store_col_null(q, 3));
	ck_assert_str_eq(store_col_text(q, 3), "text");
	ck_assert_int_eq(store_col_type(q, 4), STORE_BLOB);
	b = store_col_blob(q, 4, &n);
	ck_assert_uint_eq(n, sizeof(raw));
	ck_assert_mem_eq(b, raw, sizeof(raw));	/* NUL and 0xff kept */
	ck_assert(store_col_null(q, 5));	/* 't' with NULL binds NULL */
	ck_assert_int_eq(store_col_type(q, 6), STORE_BLOB);
	n = 99;
	ck_assert_ptr_null(store_col_blob(q, 6, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(store_step(s, q), 0);
	store_close(s);
}
END_TEST

/* Text read after each step is that step's row. */
START_TEST(test_col_text_per_step)
{
	struct store	*s = open_ok(NULL);
	struct store_q	*q = store_stmt(s, D("SELECT value FROM "
			    "json_each('[\"one\",\"two\",null]')",
			    "SELECT v FROM unnest(ARRAY['one', 'two', NULL]) "
			    "WITH ORDINALITY AS u(v, n) ORDER BY n"));
	char		*first;

	ck_assert_msg(q != NULL, "%s", store_err(s));
	ck_assert_int_eq(store_step(s, q), 1);
	first = xstrdup(store_col_text(q, 0));
	ck_assert_int_eq(store_step(s, q), 1);
	ck_assert_str_eq(first, "one");
	ck_assert_str_eq(store_col_text(q, 0), "two");
	ck_assert_int_eq(store_step(s, q), 1);
	ck_assert_ptr_null(store_col_text(q, 0));
	ck_assert_int_eq(store_step(s, q), 0);
	free(first);
	store_close(s);
}
END_TEST

/* store_end leaves a query before its last row; the cached query is
 * used again from its first row, with new bindings. */
START_TEST(test_end_and_reuse)
{
	struct store	*s = open_ok(NULL);
	const char	*sql = D("SELECT value + ? FROM json_each('[1,2,3]')",
			    "SELECT v + ? FROM generate_series(1, 3) v");
	struct store_q	*q = store_stmt(s, sql), *again;

	ck_assert_int_eq(store_bind(s, q, "i", (int64_t)10), 0);
	ck_assert_int_eq(store_step(s, q), 1);
	ck_assert_int_eq(store_col_int(q, 0), 11);
	store_end(q);
	store_end(q);		/* twice: a no-op */
	store_end(NULL);
	/* A write between, on the same connection, is not held up. */
	ck_assert_int_eq(store_begin(s), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('d', "
	    "0)", ""), 1);
	ck_assert_int_eq(store_commit(s), 0);
	again = store_stmt(s, sql);
	ck_assert_ptr_eq(again, q);
	ck_assert_int_eq(store_bind(s, again, "i", (int64_t)100), 0);
	ck_assert_int_eq(store_step(s, again), 1);
	ck_assert_int_eq(store_col_int(again, 0), 101);
	ck_assert_int_eq(store_step(s, again), 1);
	ck_assert_int_eq(store_col_int(again, 0), 102);
	store_end(again);
	/* Ended, it steps from the first row again (bindings kept). */
	ck_assert_int_eq(store_step(s, again), 1);
	ck_assert_int_eq(store_col_int(again, 0), 101);
	store_end(again);
	store_close(s);
}
END_TEST

/* Failures come back as store_err naming the database and the
 * statement, with the driver's text; changed-row counts. */
START_TEST(test_errors_and_changes)
{
	struct store	*s = open_ok(NULL);
	struct store_q	*q;

	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('a', "
	    "0), ('b', 0)", ""), 2);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('a', "
	    "0) ON CONFLICT DO NOTHING", ""), 0);
	ck_assert_int_eq(store_exec(s, "UPDATE discussions SET created_at = 1",
	    ""), 2);
	ck_assert_int_eq(store_exec(s, "DELETE FROM discussions WHERE key = "
	    "'none'", ""), 0);
	ck_assert_int_eq(store_exec(s, "SELECT 1", ""), 0);
	q = store_stmt(s, "INSERT INTO discussions VALUES (?, 0)");
	ck_assert_int_eq(store_bind(s, q, "t", "a"), 0);
	ck_assert_int_eq(store_step(s, q), -1);
	ck_assert_ptr_nonnull(strstr(store_err(s), t_db));
	ck_assert_ptr_nonnull(strstr(store_err(s), "INSERT INTO discussions"));
	ck_assert_ptr_nonnull(strcasestr(store_err(s), "UNIQUE"));
	ck_assert(!store_gave_up(s));
	/* reset after the error: usable again */
	ck_assert_int_eq(store_bind(s, q, "t", "c"), 0);
	ck_assert_int_eq(store_step(s, q), 0);
	/* no rowids on PostgreSQL: INSERT ... RETURNING gives ids */
	ck_assert_int_eq(store_last_rowid(s), D(3, 0));
	/* a parameter that is not there */
	q = store_stmt(s, "SELECT ?");
	ck_assert_int_eq(store_bind(s, q, "ii", (int64_t)1, (int64_t)2), -1);
	ck_assert_ptr_nonnull(strstr(store_err(s), t_db));
	ck_assert_ptr_nonnull(strstr(store_err(s), "SELECT ?"));
	store_close(s);
}
END_TEST

/* Commit keeps, rollback drops; store_insert gives the new row's id. */
START_TEST(test_transactions)
{
	struct store	*s = open_ok(NULL);
	int64_t		 id;

	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('d', "
	    "0)", ""), 1);
	ck_assert_int_eq(store_begin(s), 0);
	id = store_insert(s, "INSERT INTO memories (discussion, text, hash, "
	    "created_at) VALUES ('d', 'one', 'h', 0) RETURNING id", "");
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(store_commit(s), 0);
	ck_assert_int_eq(store_begin(s), 0);
	ck_assert_int_eq(store_insert(s, "INSERT INTO memories (discussion, "
	    "text, hash, created_at) VALUES (?, 'two', 'h', 0) RETURNING id",
	    "t", "d"), id + 1);
	ck_assert_int_eq(store_rollback(s), 0);
	ck_assert_int_eq(store_rollback(s), 0);		/* none open: no-op */
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM memories"), 1);
	ck_assert_int_eq(q_int(s, "SELECT id FROM memories"), id);
	/* nothing inserted: 0; an error: -1 */
	ck_assert_int_eq(store_insert(s, "INSERT INTO discussions VALUES ('d', "
	    "0) ON CONFLICT DO NOTHING RETURNING created_at", ""), 0);
	ck_assert_int_eq(store_insert(s, "INSERT INTO memories (discussion, "
	    "text, hash, created_at) VALUES ('nope', 'x', 'h', 0) RETURNING "
	    "id", ""), -1);

	/* A failed statement in a transaction: PostgreSQL has aborted the
	 * whole transaction and its COMMIT fails; SQLite keeps the rest. */
	ck_assert_int_eq(store_begin(s), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('e', "
	    "0)", ""), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('d', "
	    "0)", ""), -1);
	ck_assert_int_eq(store_commit(s), D(0, -1));
	if (t_pg)
		ck_assert_ptr_nonnull(strstr(store_err(s), "rolled back"));
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM discussions"),
	    D(2, 1));
	/* no transaction left open either way */
	ck_assert_int_eq(store_begin(s), 0);
	ck_assert_int_eq(store_commit(s), 0);
	store_close(s);
}
END_TEST

static double
t_fn(const char *text, int64_t n)
{
	return text == NULL ? -1 : (double)strlen(text) * (double)n;
}

/* store_func: a C function called from SQL. */
START_TEST(test_func)
{
	struct store	*s = open_ok(NULL);
	struct store_q	*q;

	ck_assert_ptr_null(store_stmt(s, "SELECT t_fn('abc', 2)"));
	if (t_pg) {
		/* PostgreSQL cannot call into the worker: a clear error */
		ck_assert_int_eq(store_func(s, "t_fn", t_fn), -1);
		ck_assert_ptr_nonnull(strstr(store_err(s), "t_fn"));
		ck_assert_ptr_nonnull(strstr(store_err(s), "C functions"));
		store_close(s);
		return;
	}
	ck_assert_int_eq(store_func(s, "t_fn", t_fn), 0);
	ck_assert_int_eq(store_func(s, "t_fn", t_fn), 0);	/* once */
	q = store_stmt(s, "SELECT t_fn('abc', 2), t_fn(NULL, 2)");
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(store_step(s, q), 1);
	ck_assert(store_col_double(q, 0) == 6.0);
	ck_assert(store_col_double(q, 1) == -1.0);
	store_end(q);
	store_close(s);
}
END_TEST

/* ---- locks ------------------------------------------------------------ */

START_TEST(test_locks)
{
	struct store	*s = open_ok(NULL);
	int64_t		 exp1, now = (int64_t)time(NULL);

	ck_assert_int_eq(store_lock(s, "L", "a", 600), 1);
	exp1 = q_int(s, "SELECT expires_at FROM workflow_locks");
	ck_assert(exp1 >= now + 600 && exp1 <= now + 602);
	ck_assert_int_eq(store_lock(s, "L", "b", 600), 0);
	ck_assert_int_eq(store_lock(s, "L", "a", 900), 1);	/* renewed */
	ck_assert(q_int(s, "SELECT expires_at FROM workflow_locks") > exp1);
	ck_assert_int_eq(store_unlock(s, "L", "b"), 0);	/* not b's */
	ck_assert_int_eq(store_lock(s, "L", "b", 600), 0);
	ck_assert_int_eq(store_unlock(s, "L", "a"), 1);
	ck_assert_int_eq(store_lock(s, "L", "b", 600), 1);

	/* An expired lock is free. */
	ck_assert_int_eq(store_exec(s, "INSERT INTO workflow_locks (lock_id, "
	    "owner, expires_at) VALUES ('E', 'dead', ?)", "i", now - 1), 1);
	ck_assert_int_eq(store_lock(s, "E", "a", 600), 1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM workflow_locks WHERE "
	    "owner = 'dead'"), 0);

	ck_assert_int_eq(store_lock(s, "M", "a", 600), 1);
	ck_assert_int_eq(store_unlock_owner(s, "a"), 2);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM workflow_locks"), 1);
	ck_assert_int_eq(store_lock(s, "E", "c", 600), 1);
	ck_assert_int_eq(store_unlock_owner(s, "nobody"), 0);
	store_close(s);
}
END_TEST

/* A lock whose holder is gone is free before it expires; one whose
 * holder lives (or is unknown: pid 0) is not. SQLite's holders are
 * processes; PostgreSQL's are sessions, by the key each holds (a key no
 * session holds is a session gone). */
START_TEST(test_lock_orphans)
{
	struct store	*s = open_ok(NULL), *c = open_ok(NULL);
	int64_t		 later = (int64_t)time(NULL) + 600, live[2];
	pid_t		 gone;
	int		 st;

	if ((gone = fork()) == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(gone, &st, 0), gone);
	/* a holder that lives: another store's, on PostgreSQL */
	ck_assert_int_eq(store_lock(c, "C", "other", 600), 1);
	live[0] = t_pg ? q_int(c, "SELECT pid FROM workflow_locks") :
	    (int64_t)getppid();
	live[1] = t_pg ? q_int(c, "SELECT pid_start FROM workflow_locks") : 0;
	ck_assert_int_eq(store_exec(s, "INSERT INTO workflow_locks (lock_id, "
	    "owner, expires_at, pid, pid_start) VALUES ('G', 'killed', ?, ?, "
	    "?), ('P', 'parent', ?, ?, ?), ('U', 'old', ?, 0, 0)",
	    "iiiiiii", later, (int64_t)gone, (int64_t)D(0, 4242), later, live[0],
	    live[1], later), 3);
	ck_assert_int_eq(store_lock(s, "G", "me", 600), 1);
	ck_assert_int_eq(q_int(s, "SELECT pid FROM workflow_locks WHERE "
	    "lock_id = 'G'"), D((int64_t)getpid(),
	    q_int(s, "SELECT pg_backend_pid()")));
	ck_assert_int_eq(store_lock(s, "P", "me", 600), 0);
	ck_assert_int_eq(store_lock(s, "U", "me", 600), 0);
	store_close(c);
	store_close(s);
}
END_TEST

/* A lock taken by a process that lives is kept; once its pid stands
 * for another process (another start time), it is free. */
START_TEST(test_lock_pid_reused)
{
	struct store	*s = open_ok(NULL), *c;
	char		 err[STORE_ERRLEN], x = 'x';
	int		 held[2], done[2], st;
	pid_t		 pid;

	ck_assert_int_eq(pipe(held), 0);
	ck_assert_int_eq(pipe(done), 0);
	if ((pid = fork()) == 0) {
		c = store_open(t_db, NULL, err);
		if (c == NULL || store_lock(c, "R", "child", 600) != 1)
			_exit(1);
		(void)write(held[1], &x, 1);
		(void)read(done[0], &x, 1);	/* until the parent is done */
		_exit(0);
	}
	ck_assert_int_eq(read(held[0], &x, 1), 1);
	ck_assert_int_gt(q_int(s, "SELECT pid_start FROM workflow_locks"), 0);
	ck_assert_int_eq(store_lock(s, "R", "me", 600), 0);
	ck_assert_int_eq(store_exec(s, "UPDATE workflow_locks SET pid_start "
	    "= pid_start + 1", ""), 1);
	ck_assert_int_eq(store_lock(s, "R", "me", 600), 1);
	(void)write(done[1], &x, 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	store_close(s);
}
END_TEST

/* A child that takes lock name through a store of its own and holds it
 * until *done is written to or closed (or it is killed); returns when
 * the child holds it. */
static pid_t
lock_child(const char *name, int *done)
{
	struct store	*c;
	char		 err[STORE_ERRLEN], x = 'x';
	int		 held[2], p[2];
	pid_t		 pid;

	ck_assert_int_eq(pipe(held), 0);
	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[1]);
		c = store_open(t_db, NULL, err);
		if (c == NULL || store_lock(c, name, "child", 600) != 1)
			_exit(1);
		(void)write(held[1], &x, 1);
		(void)read(p[0], &x, 1);
		_exit(0);
	}
	close(p[0]);
	close(held[1]);
	ck_assert_int_eq(read(held[0], &x, 1), 1);
	close(held[0]);
	*done = p[1];
	return pid;
}

/* A holder in another process keeps its lock while it lives. Killed
 * (SIGKILL: it unlocks nothing), its lock is free for another holder:
 * on SQLite at once; on PostgreSQL as soon as the server has ended its
 * session, which it does when the socket closes (the test allows 5 s). */
START_TEST(test_lock_holder_killed)
{
	struct store	*s = open_ok(NULL);
	uint64_t	 t0;
	int		 done, st, r, tries = 0;
	pid_t		 pid = lock_child("K", &done);

	ck_assert_int_eq(store_lock(s, "K", "me", 600), 0);
	sleep_ms(200);
	ck_assert_int_eq(store_lock(s, "K", "me", 600), 0);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	close(done);
	t0 = clock_mono_ms();
	do {
		if (tries++ > 0)
			sleep_ms(5);
		r = store_lock(s, "K", "me", 600);
	} while (r == 0 && clock_mono_ms() - t0 < 5000);
	ck_assert_int_eq(r, 1);
	if (!t_pg)
		ck_assert_int_eq(tries, 1);
	fprintf(stderr, "check_store: %s: a killed holder's lock was free "
	    "after %llu ms (%d tries)\n", D("sqlite", "postgresql"),
	    (unsigned long long)(clock_mono_ms() - t0), tries);
	store_close(s);
}
END_TEST

/* ---- waiting for another process's write lock ------------------------ */

/* A child that holds a write transaction for hold_ms; returns when it
 * holds it. */
static pid_t
hold_lock(int hold_ms)
{
	struct store	*s;
	char		 err[STORE_ERRLEN], c = 'x';
	int		 p[2];
	pid_t		 pid;

	store_close(open_ok(NULL));	/* migrated before the race */
	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		if ((s = store_open(t_db, NULL, err)) == NULL ||
		    store_begin(s) == -1 || store_exec(s, "INSERT INTO "
		    "discussions VALUES ('held', 0)", "") != 1)
			_exit(1);
		(void)write(p[1], &c, 1);
		sleep_ms(hold_ms);
		_exit(store_commit(s) == 0 ? 0 : 1);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void
reap(pid_t pid)
{
	int	 st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

struct waits {
	int		 w_calls;
	int		 w_stop_at;	/* say "give up" at this call; 0 never */
	uint64_t	 w_last;
	uint64_t	 w_max_gap;
};

static int
count_wait(void *arg)
{
	struct waits	*w = arg;
	uint64_t	 now = clock_mono_ms();

	if (w->w_last != 0 && now - w->w_last > w->w_max_gap)
		w->w_max_gap = now - w->w_last;
	w->w_last = now;
	w->w_calls++;
	return w->w_stop_at != 0 && w->w_calls >= w->w_stop_at;
}

START_TEST(test_busy_waits_with_callbacks)
{
	struct waits	 w = { 0 };
	struct store	*s;
	pid_t		 pid = hold_lock(1000);
	uint64_t	 t0 = clock_mono_ms(), dt;

	s = open_ok(&(struct store_opts){ .so_on_wait = count_wait,
	    .so_arg = &w });
	w.w_last = t0;
	ck_assert_msg(store_begin(s) == 0, "%s", store_err(s));
	dt = clock_mono_ms() - t0;
	ck_assert_msg(dt >= 800, "got the lock after %llu ms",
	    (unsigned long long)dt);
	ck_assert_msg(w.w_calls >= 3, "on_wait called %d times", w.w_calls);
	ck_assert_msg(w.w_max_gap <= 450, "on_wait silent for %llu ms",
	    (unsigned long long)w.w_max_gap);
	ck_assert_int_eq(store_commit(s), 0);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM discussions WHERE "
	    "key = 'held'"), 1);
	store_close(s);
	reap(pid);
}
END_TEST

START_TEST(test_busy_gives_up_when_told)
{
	struct store_tally t;
	struct waits	 w = { .w_stop_at = 2 };
	struct store	*s;
	pid_t		 pid = hold_lock(2000);
	uint64_t	 t0 = clock_mono_ms(), dt;

	s = open_ok(&(struct store_opts){ .so_on_wait = count_wait,
	    .so_arg = &w });
	ck_assert_int_eq(store_lock(s, "L", "me", 60), -1);
	dt = clock_mono_ms() - t0;
	ck_assert_msg(dt < 1000, "gave up after %llu ms",
	    (unsigned long long)dt);
	ck_assert_int_eq(w.w_calls, 2);
	ck_assert(store_gave_up(s));
	ck_assert_msg(strstr(store_err(s), "stopped") != NULL, "%s",
	    store_err(s));
	store_tally(s, &t);
	ck_assert_uint_eq(t.st_fails, 0);	/* stopped: not a failure */
	ck_assert_ptr_nonnull(strstr(store_err(s), t_db));
	store_close(s);
	reap(pid);
}
END_TEST

START_TEST(test_busy_timeout)
{
	struct store	*s;
	pid_t		 pid = hold_lock(1500);
	uint64_t	 t0 = clock_mono_ms(), dt;

	s = open_ok(&(struct store_opts){ .so_busy_ms = 300 });
	ck_assert_int_eq(store_begin(s), -1);
	dt = clock_mono_ms() - t0;
	ck_assert_msg(dt >= 290 && dt < 1000, "gave up after %llu ms",
	    (unsigned long long)dt);
	ck_assert(!store_gave_up(s));
	ck_assert_msg(strstr(store_err(s), "locked") != NULL &&
	    strstr(store_err(s), "waited 300 ms") != NULL, "%s",
	    store_err(s));
	store_close(s);
	reap(pid);
}
END_TEST

/* ---- the tally behind /health and /metrics ---------------------------- */

/* A database that may not grow fails the way a full disk does (on
 * PostgreSQL: a session whose transactions are read-only). */
START_TEST(test_tally)
{
	struct store		*s = open_ok(NULL);
	struct store_tally	 t;
	char			 big[8192], sql[64];
	uint64_t		 w0;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	store_tally(s, &t);
	ck_assert(t.st_fails == 0 && !t.st_failing);
	w0 = t.st_writes;	/* the schema's, when the file was new */
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES "
	    "('a', 0)", ""), 1);
	ck_assert_int_eq(store_exec(s, "SELECT 1", ""), 0);
	ck_assert_int_eq(store_begin(s), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES "
	    "('b', 0)", ""), 1);
	store_tally(s, &t);
	ck_assert_uint_eq(t.st_writes, w0 + 1);	/* not committed yet */
	ck_assert_int_eq(store_commit(s), 0);
	store_tally(s, &t);
	ck_assert(t.st_writes == w0 + 2 && t.st_fails == 0 && !t.st_failing);

	if (t_pg)
		snprintf(sql, sizeof(sql), "SET default_transaction_read_only "
		    "= on");
	else
		snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
		    (long long)q_int(s, "PRAGMA page_count"));
	ck_assert_int_ge(store_exec(s, sql, ""), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES "
	    "(?, 0)", "t", big), -1);
	store_tally(s, &t);
	ck_assert(t.st_fails == 1 && t.st_failing);
	ck_assert_str_eq(t.st_why, D("database or disk is full",
	    "cannot execute INSERT in a read-only transaction"));
	ck_assert_ptr_nonnull(strstr(store_err(s), t_db));
	ck_assert_ptr_null(strstr(t.st_why, t_db));

	ck_assert_int_ge(store_exec(s, D("PRAGMA max_page_count = 100000",
	    "SET default_transaction_read_only = off"), ""), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES "
	    "(?, 0)", "t", big), 1);
	store_tally(s, &t);
	ck_assert(t.st_fails == 1 && t.st_writes == w0 + 3 && !t.st_failing);
	store_close(s);
}
END_TEST

/* ---- processes killed while writing ------------------------------------ */

#define NWRITERS	8
#define NKILLS		200
#define MINROWS		(NKILLS / 2)
#define MAXGEN		(NKILLS + 2)

/* A row's text follows from its hash: a torn or mixed-up row shows. */
static void
row_text(const char *hash, char *out, size_t outlen)
{
	char	 d[SHA256_HEXLEN];
	size_t	 n, len;

	sha256_hex(hash, strlen(hash), d);
	len = 300 + strtoul((char[]){ d[0], d[1], d[2], '\0' }, NULL, 16) % 2700;
	if (len >= outlen)
		len = outlen - 1;
	for (n = 0; n < len; n++)
		out[n] = d[n % 64];
	out[len] = '\0';
}

static void	writer_fail(struct store *, const char *)
		    __attribute__((noreturn));

static void
writer_fail(struct store *s, const char *err)
{
	fprintf(stderr, "writer %d: %s\n", (int)getpid(),
	    s != NULL ? store_err(s) : err);
	_exit(3);
}

/* Where writer slot.gen logs what it committed. */
static char *
log_path(int slot, int gen, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/committed.%d.%d", t_dir, slot, gen);
	return out;
}

/* Loops until killed: a lock, a row, a line in its log once committed,
 * the lock given back. */
static void
writer(int slot, int gen)
{
	char		 err[STORE_ERRLEN], hash[48], owner[32], lk[8];
	char		 text[3200], line[56], log[128];
	struct store	*s;
	int		 fd, seq, n;

	log_path(slot, gen, log, sizeof(log));
	if ((fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600)) == -1 ||
	    (s = store_open(t_db, NULL, err)) == NULL)
		writer_fail(NULL, err);
	snprintf(owner, sizeof(owner), "w%d.%d", slot, gen);
	for (seq = 0;; seq++) {
		snprintf(hash, sizeof(hash), "w%d.%d.%d", slot, gen, seq);
		snprintf(lk, sizeof(lk), "lk%d", seq % 3);
		row_text(hash, text, sizeof(text));
		if (store_lock(s, lk, owner, 2) == -1 || store_begin(s) == -1 ||
		    store_exec(s, "INSERT INTO memories (discussion, text, "
		    "hash, created_at) VALUES ('X', ?, ?, ?)", "tti", text, hash,
		    (int64_t)time(NULL)) != 1 || store_commit(s) == -1)
			writer_fail(s, NULL);
		n = snprintf(line, sizeof(line), "%s\n", hash);
		if (write(fd, line, (size_t)n) != n)
			writer_fail(NULL, "log write");
		if (store_unlock(s, lk, owner) == -1)
			writer_fail(s, NULL);
	}
}

static pid_t
spawn_writer(int slot, int gen)
{
	pid_t	 pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		writer(slot, gen);
	return pid;
}

static void
kill_writer(pid_t pid)
{
	int	 st;

	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	    "a writer stopped by itself (status %d): see its message", st);
}

/* Per writer generation: rows in the database and lines in the log. */
struct tally {
	int	 t_rows[NWRITERS][MAXGEN];
	int	 t_maxseq[NWRITERS][MAXGEN];
	int	 t_logged[NWRITERS][MAXGEN];
	int	 t_gens[NWRITERS];
};

static int
check_rows(struct store *s, struct tally *t)
{
	struct store_q	*st = store_stmt(s, "SELECT hash, text FROM memories");
	char		 text[3200];
	const char	*h;
	int		 w, g, q, r, total = 0;

	while ((r = store_step(s, st)) == 1) {
		h = store_col_text(st, 0);
		ck_assert_int_eq(sscanf(h, "w%d.%d.%d", &w, &g, &q), 3);
		ck_assert(w >= 0 && w < NWRITERS && g >= 0 && g < MAXGEN);
		row_text(h, text, sizeof(text));
		ck_assert_msg(strcmp(store_col_text(st, 1),
		    text) == 0, "row %s: text does not match its hash", h);
		t->t_rows[w][g]++;
		if (q > t->t_maxseq[w][g])
			t->t_maxseq[w][g] = q;
		total++;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_msg(total >= MINROWS, "only %d rows written", total);
	return total;
}

static int
has_hash(struct store *s, const char *hash)
{
	struct store_q	*st = store_stmt(s, "SELECT count(*) FROM memories "
			    "WHERE discussion = 'X' AND hash = ?");
	int		 n;

	ck_assert_int_eq(store_bind(s, st, "t", hash), 0);
	ck_assert_int_eq(store_step(s, st), 1);
	n = (int)store_col_int(st, 0);
	store_end(st);
	return n;
}

/* Every line a writer logged (after its COMMIT returned) is in the
 * database, in order. A kill can tear the last line (a write that spans
 * a page boundary stops at a fatal signal): that one does not count. */
static void
check_log(struct store *s, struct tally *t, int w, int g)
{
	char	 path[128], line[64], want[48];
	FILE	*f = fopen(log_path(w, g, path, sizeof(path)), "r");
	int	 n = 0;

	if (f == NULL)
		return;		/* killed before it opened its log */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strchr(line, '\n') == NULL)
			break;
		snprintf(want, sizeof(want), "w%d.%d.%d\n", w, g, n);
		ck_assert_str_eq(line, want);
		line[strcspn(line, "\n")] = '\0';
		ck_assert_msg(has_hash(s, line) == 1,
		    "%s was committed but is missing", line);
		n++;
	}
	fclose(f);
	t->t_logged[w][g] = n;
}

/* A writer's rows are numbered from 0 without a gap, and it logged all
 * of them but perhaps the last: killed between COMMIT and the log. */
static void
check_tally(const struct tally *t)
{
	int	 w, g, rows, logged;

	for (w = 0; w < NWRITERS; w++)
		for (g = 0; g <= t->t_gens[w]; g++) {
			rows = t->t_rows[w][g];
			logged = t->t_logged[w][g];
			ck_assert_msg(rows == 0 || t->t_maxseq[w][g] ==
			    rows - 1, "writer %d.%d: rows with gaps", w, g);
			ck_assert_msg(logged == rows || logged == rows - 1,
			    "writer %d.%d: %d rows, %d logged", w, g, rows,
			    logged);
		}
}

static int
verify(struct tally *t)
{
	struct store	*s = open_ok(NULL);
	struct store_q	*st;
	char		 ok[32];
	int		 w, g, rows;

	if (!t_pg)
		ck_assert_str_eq(q_text(s, "PRAGMA integrity_check", ok,
		    sizeof(ok)), "ok");
	rows = check_rows(s, t);
	for (w = 0; w < NWRITERS; w++)
		for (g = 0; g <= t->t_gens[w]; g++)
			check_log(s, t, w, g);
	check_tally(t);
	st = store_stmt(s, "SELECT owner FROM workflow_locks");
	while (store_step(s, st) == 1)
		ck_assert_int_eq(sscanf(store_col_text(st, 0), "w%d.%d", &w,
		    &g), 2);
	store_close(s);
	return rows;
}

/* After the storm the writers go on until MINROWS rows exist: a loaded
 * machine (or PostgreSQL's connection per restart) may have let few
 * commits through during it, and writers that cannot get going again
 * (a dead holder's lock never freed) are a failure, not a slow run. */
static void
await_rows(void)
{
	struct store	*s = open_ok(NULL);
	uint64_t	 end = clock_mono_ms() + 60000;
	int		 n;

	while ((n = (int)q_int(s, "SELECT count(*) FROM memories")) <
	    MINROWS && clock_mono_ms() < end)
		sleep_ms(20);
	store_close(s);
	ck_assert_msg(n >= MINROWS, "the writers stalled at %d rows", n);
}

/* kill -9 a random writer every few milliseconds, NKILLS times, and
 * start it again; then nothing committed may be lost or torn. */
START_TEST(test_crash_safety)
{
	static struct tally	 t;
	pid_t			 pid[NWRITERS];
	struct store		*s = open_ok(NULL);
	int			 i, k, rows;
	uint64_t		 t0 = clock_mono_ms();

	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('X', "
	    "0)", ""), 1);
	store_close(s);
	memset(&t, 0, sizeof(t));
	srandom((unsigned)getpid());
	for (i = 0; i < NWRITERS; i++)
		pid[i] = spawn_writer(i, 0);
	for (k = 0; k < NKILLS; k++) {
		sleep_ms(1 + (int)(random() % 8));
		i = (int)(random() % NWRITERS);
		kill_writer(pid[i]);
		pid[i] = spawn_writer(i, ++t.t_gens[i]);
	}
	await_rows();
	for (i = 0; i < NWRITERS; i++)
		kill_writer(pid[i]);
	rows = verify(&t);
	if (getenv("STORE_VERBOSE") != NULL)
		fprintf(stderr, "check_store: %d kills, %d rows, %llu ms\n",
		    NKILLS, rows, (unsigned long long)(clock_mono_ms() - t0));
}
END_TEST

/* ---- names without passwords ------------------------------------------ */

/* A URL's password never shows: not in the store's name, not in an
 * error from libpq. */
static void
name_is(const char *url, const char *want)
{
	char	*n = pgurl_name(url);

	ck_assert_str_eq(n, want);
	free(n);
}

START_TEST(test_url_names)
{
	char	*u, *p;

	name_is("postgresql://ann:s3cret@db.example:5432/sluice",
	    "postgresql://ann@db.example:5432/sluice");
	name_is("postgres://ann:s3cret@h/db?password=other&sslmode=x",
	    "postgres://ann@h/db?sslmode=x");
	name_is("postgresql:///db?host=/run/pg&password=p%40ss",
	    "postgresql:///db?host=/run/pg");
	name_is("postgresql:///db?password=only", "postgresql:///db");
	name_is("postgresql://ann@h/db", "postgresql://ann@h/db");
	name_is("postgresql://ann:pw@h:1/db?sslmode=x&password=q&port=2",
	    "postgresql://ann@h:1/db?sslmode=x&port=2");
	pgurl_secrets("postgresql://a:b%2Fc@h/db?x=1&password=zz", &u, &p);
	ck_assert_str_eq(u, "b%2Fc");
	ck_assert_str_eq(p, "zz");
	xfree_secret(u);
	xfree_secret(p);
	ck_assert(pgurl_is("postgres://h/db") && pgurl_is("postgresql://"));
	ck_assert(!pgurl_is("/var/lib/sluice/sluice.db"));
	ck_assert(pgurl_has_password("postgresql://ann:@h/db"));
	ck_assert(pgurl_has_password("postgresql:///db?host=/x&password="));
	ck_assert(!pgurl_has_password("postgresql://ann@h:5432/db"));
	ck_assert(!pgurl_has_password("postgresql://h:5432/db?user=ann"));
}
END_TEST

static void
params_are(const char *sql, const char *want, int nwant)
{
	bool	*used;
	char	*got;
	int	 n;

	got = pgsql_params(sql, &n, &used);
	if (want == NULL) {
		ck_assert_ptr_null(got);
		return;
	}
	ck_assert_msg(got != NULL, "%s", sql);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(n, nwant);
	free(got);
	free(used);
}

/* The store's '?' and '?N' as PostgreSQL's $N, never inside quotes or
 * comments; exactly one statement. */
START_TEST(test_pgsql_params)
{
	bool	*used;
	char	*got;
	int	 n;

	params_are("SELECT ?, ?5, ?", "SELECT $1, $5, $6", 6);
	params_are("SELECT '?', \"a?\", 'it''s ?' -- ?\n, ?2 /* ? */",
	    "SELECT '?', \"a?\", 'it''s ?' -- ?\n, $2 /* ? */", 2);
	params_are("SELECT 1;  ", "SELECT 1;  ", 0);
	params_are("SELECT 1; SELECT 2", NULL, 0);
	params_are("SELECT 1; 'x'", NULL, 0);
	params_are(" ; -- nothing", NULL, 0);
	params_are("", NULL, 0);
	got = pgsql_params("SELECT ?3 || ?1", &n, &used);
	ck_assert_int_eq(n, 3);
	ck_assert(used[1] && !used[2] && used[3]);
	free(got);
	free(used);
}
END_TEST

START_TEST(test_url_password_hidden)
{
	const char	*bad = "postgresql://sluice:Pw%2Fs3cret@/nodb?"
			    "host=/nonexistent&port=1&password=Qs3cret";
	char		 err[STORE_ERRLEN], url[320];
	struct store	*s;

	ck_assert_ptr_null(store_open(bad, NULL, err));
	ck_assert_msg(strstr(err, "s3cret") == NULL, "%s", err);
	ck_assert_msg(strstr(err, "database postgresql://sluice@/nodb?"
	    "host=/nonexistent&port=1: ") != NULL, "%s", err);
	/* the test cluster trusts its user: the password is ignored */
	snprintf(url, sizeof(url), "%s&password=Zs3cret", t_db);
	s = store_open(url, NULL, err);
	ck_assert_msg(s != NULL, "%s", err);
	/* the server quotes the value in its message */
	ck_assert_int_eq(store_exec(s, "SELECT CAST(? AS integer)", "t",
	    "zS3CRET"), -1);
	ck_assert_msg(strstr(store_err(s), t_db) != NULL, "%s", store_err(s));
	ck_assert_msg(strstr(store_err(s), "s3cret") == NULL, "%s",
	    store_err(s));
	ck_assert_ptr_nonnull(strstr(store_err(s), "\"***\""));
	store_close(s);
}
END_TEST

/* ---- PostgreSQL only ----------------------------------------------------- */

/* A session that ends (the server restarted, an administrator) is made
 * again by the next call, its cached statements prepared again; one
 * that ends inside a transaction fails that transaction, never commits
 * half of it. */
START_TEST(test_pg_reconnect)
{
	struct store	*s = open_ok(NULL);
	const char	*kill = "SELECT pg_terminate_backend(pg_backend_pid())";

	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('a', "
	    "0)", ""), 1);
	ck_assert_int_eq(store_exec(s, kill, ""), -1);
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM discussions"), 1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('b', "
	    "0)", ""), 1);

	ck_assert_int_eq(store_begin(s), 0);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('c', "
	    "0)", ""), 1);
	ck_assert_int_eq(store_exec(s, kill, ""), -1);
	ck_assert_int_eq(store_exec(s, "INSERT INTO discussions VALUES ('d', "
	    "0)", ""), -1);
	ck_assert_msg(strstr(store_err(s), "lost in a transaction") != NULL,
	    "%s", store_err(s));
	ck_assert_int_eq(store_commit(s), -1);
	ck_assert_ptr_nonnull(strstr(store_err(s), "no transaction"));
	ck_assert_int_eq(q_int(s, "SELECT count(*) FROM discussions"), 2);
	ck_assert_int_eq(store_lock(s, "L", "me", 60), 1);	/* usable */
	store_close(s);
}
END_TEST

/* End the session of the store that holds lock name, from store c, and
 * wait until its server process is gone. */
static void
end_session(struct store *c, const char *name)
{
	char	 sql[160];

	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(pid::int, 5000) "
	    "FROM workflow_locks WHERE lock_id = '%s'", name);
	ck_assert_int_eq(q_int(c, sql), 1);
}

/* A holder whose session ended (the server restarted, the network
 * failed) reconnects with its locks still held, unless another took
 * one over while it was away: then it knows it no longer holds that
 * one. */
START_TEST(test_pg_lock_reconnect)
{
	struct store	*s = open_ok(NULL), *c = open_ok(NULL);
	int64_t		 pid0 = q_int(s, "SELECT pg_backend_pid()"), pid1;

	ck_assert_int_eq(store_lock(s, "L", "a", 600), 1);
	ck_assert_int_eq(store_lock(s, "M", "a", 600), 1);
	end_session(c, "L");
	ck_assert_int_eq(store_exec(s, "SELECT 1", ""), -1);	/* gone */
	pid1 = q_int(s, "SELECT pg_backend_pid()");		/* again */
	ck_assert_int_ne(pid1, pid0);
	ck_assert_int_eq(store_lock(c, "L", "b", 600), 0);
	ck_assert_int_eq(store_lock(c, "M", "b", 600), 0);
	ck_assert_int_eq(store_lock(s, "L", "a", 600), 1);	/* renewed */
	ck_assert_int_eq(q_int(c, "SELECT pid FROM workflow_locks WHERE "
	    "lock_id = 'L'"), pid1);

	/* taken over while the holder was away */
	end_session(c, "L");
	ck_assert_int_eq(store_lock(c, "L", "b", 600), 1);
	ck_assert_int_eq(store_exec(s, "SELECT 1", ""), -1);
	ck_assert_int_eq(store_lock(s, "L", "a", 600), 0);	/* b's */
	ck_assert_int_eq(store_unlock(s, "L", "a"), 0);
	ck_assert_int_eq(store_lock(c, "M", "b", 600), 0);	/* a's */
	ck_assert_int_eq(store_unlock_owner(s, "a"), 1);
	ck_assert_int_eq(store_lock(c, "M", "b", 600), 1);
	store_close(c);
	store_close(s);
}
END_TEST

/* A reconnected session waits for its key while another session holds
 * it (its own previous one, which the server has not seen end): until
 * it has it, every call fails, so none takes a lock that would look
 * orphaned. */
START_TEST(test_pg_lock_key_wait)
{
	struct store_opts o = { .so_busy_ms = 300 };
	struct store	*s = open_ok(&o), *c = open_ok(NULL), *d;
	char		 sql[96];
	int64_t		 key;

	d = open_ok(NULL);
	ck_assert_int_eq(store_lock(s, "L", "a", 600), 1);
	key = q_int(c, "SELECT pid_start FROM workflow_locks");
	end_session(c, "L");
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_lock(%lld)",
	    (long long)key);
	ck_assert_int_eq(store_exec(d, sql, ""), 0);
	ck_assert_int_eq(store_exec(s, "SELECT 1", ""), -1);	/* gone */
	ck_assert_int_eq(store_lock(s, "N", "a", 600), -1);
	ck_assert_msg(strstr(store_err(s), "previous session") != NULL, "%s",
	    store_err(s));
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%lld)",
	    (long long)key);
	ck_assert_int_eq(store_exec(d, sql, ""), 0);
	ck_assert_int_eq(store_lock(s, "N", "a", 600), 1);
	ck_assert_int_eq(store_lock(c, "L", "b", 600), 0);	/* a's */
	store_close(d);
	store_close(c);
	store_close(s);
}
END_TEST

/* The open TCP socket of this process connected to port of 127.0.0.1
 * (the store's), or -1. */
static int
tcp_fd(int port)
{
	struct sockaddr_in	 sin;
	socklen_t		 len;
	struct stat		 sb;
	int			 fd;

	for (fd = 3; fd < 1024; fd++) {
		len = sizeof(sin);
		if (fstat(fd, &sb) == -1 || !S_ISSOCK(sb.st_mode) ||
		    getpeername(fd, (struct sockaddr *)&sin, &len) == -1 ||
		    sin.sin_family != AF_INET || ntohs(sin.sin_port) != port)
			continue;
		return fd;
	}
	return -1;
}

static int
sockopt(int fd, int level, int name)
{
	socklen_t	 len = sizeof(int);
	int		 v = -1;

	ck_assert_int_eq(getsockopt(fd, level, name, &v, &len), 0);
	return v;
}

/* A session over TCP has keepalives on both ends (so that a machine
 * that died is noticed within about 10 s, and its locks freed): the
 * server's, as the server reads them back from its socket, and the
 * client's, on the worker's socket. A setting in the URL wins over the
 * driver's. */
START_TEST(test_pg_keepalives)
{
	char		 url[192], name[64], v[32];
	struct store	*s;
	int		 fd, port = t_cluster.pt_port;

	ck_assert(t_cluster.pt_tcp);
	ck_assert_int_eq(sscanf(t_db, "postgresql:///%63[^?]", name), 1);
	snprintf(url, sizeof(url), "postgresql://127.0.0.1:%d/%s?user=sluice",
	    port, name);
	snprintf(t_db, sizeof(t_db), "%s", url);
	s = open_ok(NULL);
	ck_assert_str_eq(q_text(s, "SHOW tcp_keepalives_idle", v, sizeof(v)),
	    "5");
	ck_assert_str_eq(q_text(s, "SHOW tcp_keepalives_interval", v,
	    sizeof(v)), "1");
	ck_assert_str_eq(q_text(s, "SHOW tcp_keepalives_count", v, sizeof(v)),
	    "5");
	ck_assert_str_eq(q_text(s, "SHOW tcp_user_timeout", v, sizeof(v)),
	    "10000");
	ck_assert_int_ge(fd = tcp_fd(port), 0);
	ck_assert_int_eq(sockopt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
	ck_assert_int_eq(sockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 5);
	ck_assert_int_eq(sockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL), 1);
	ck_assert_int_eq(sockopt(fd, IPPROTO_TCP, TCP_KEEPCNT), 5);
	ck_assert_int_eq(sockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 10000);
	store_close(s);

	snprintf(t_db, sizeof(t_db), "%s&keepalives_idle=7", url);
	s = open_ok(NULL);
	ck_assert_int_ge(fd = tcp_fd(port), 0);
	ck_assert_int_eq(sockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7);
	store_close(s);
}
END_TEST

/* A server that takes the connection and never answers (a listening
 * socket nobody accepts on): store_open gives up after the driver's
 * connect_timeout (5 s), not after TCP's minutes, naming the store. */
START_TEST(test_pg_connect_timeout)
{
	struct sockaddr_in	 sa = { .sin_family = AF_INET };
	socklen_t		 len = sizeof(sa);
	char			 err[STORE_ERRLEN];
	struct store		*s;
	uint64_t		 t0;
	int			 fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(t_db, sizeof(t_db), "postgresql://127.0.0.1:%d/x?user=sluice",
	    ntohs(sa.sin_port));
	t0 = clock_mono_ms();
	s = store_open(t_db, NULL, err);
	ck_assert_ptr_null(s);
	ck_assert_msg(clock_mono_ms() - t0 < 9000, "gave up after %llu ms",
	    (unsigned long long)(clock_mono_ms() - t0));
	ck_assert_msg(strstr(err, "postgresql://127.0.0.1:") != NULL, "%s",
	    err);
	close(fd);
}
END_TEST

/* Turns on an endpoint, counted across sessions (PostgreSQL: one of
 * limit advisory locks, given back by store_turn_give or by the end of
 * the session); SQLite counts nothing and always says taken. */
START_TEST(test_turns)
{
	struct store	*a = open_ok(NULL), *b = open_ok(NULL), *c;
	unsigned	 ia = 9, ib = 9;

	ck_assert_int_eq(store_turn_try(a, "GPU", 1, &ia), 1);
	ck_assert_uint_eq(ia, 0);
	ck_assert_int_eq(store_turn_try(b, "GPU", 1, &ib), t_pg ? 0 : 1);
	ck_assert_int_eq(store_turn_try(b, "other", 1, &ib), 1);
	ck_assert_int_eq(store_turn_give(b, "other", ib), 0);
	ck_assert_int_eq(store_turn_give(a, "GPU", ia), 0);
	ck_assert_int_eq(store_turn_try(b, "GPU", 1, &ib), 1);
	ck_assert_uint_eq(ib, 0);
	ck_assert_int_eq(store_turn_give(b, "GPU", ib), 0);

	/* a limit of 2: two sessions, two turns; a third waits until a
	 * holder's session ends */
	ck_assert_int_eq(store_turn_try(a, "Two", 2, &ia), 1);
	ck_assert_int_eq(store_turn_try(b, "Two", 2, &ib), 1);
	if (t_pg)
		ck_assert_uint_ne(ia, ib);
	c = open_ok(NULL);
	ck_assert_int_eq(store_turn_try(c, "Two", 2, &ia), t_pg ? 0 : 1);
	store_close(b);
	ck_assert_int_eq(store_turn_try(c, "Two", 2, &ib), 1);
	store_close(c);
	store_close(a);
}
END_TEST

/* A case of the backend's (sqlite_NAME or pg_NAME) with its fixture. */
static TCase *
backend_case(Suite *su, bool pg, const char *name, int secs)
{
	static char	 names[16][32];	/* Check keeps the pointer */
	static size_t	 n;
	TCase		*tc;

	if (n == sizeof(names) / sizeof(names[0]))
		abort();		/* more cases: a bigger table */
	snprintf(names[n], sizeof(names[n]), "%s_%s", pg ? "pg" : "sqlite",
	    name);
	tc = test_case(su, names[n++], NULL, secs);
	tcase_add_checked_fixture(tc, pg ? setup_pg : setup, teardown);
	return tc;
}

/* The tests both backends pass, in cases of pg's or sqlite's. */
static void
add_neutral(Suite *su, bool pg)
{
	TCase	*tc;

	tc = backend_case(su, pg, "open", 60);
	tcase_add_test(tc, test_open_schema);
	tcase_add_test(tc, test_fts5_cascade);
	tcase_add_test(tc, test_reopen);
	tcase_add_test(tc, test_concurrent_migrate);
	tcase_add_test(tc, test_migrate_from_1);
	tcase_add_test(tc, test_newer_schema);

	tc = backend_case(su, pg, "statements", 0);
	tcase_add_test(tc, test_stmt_cache);
	tcase_add_test(tc, test_bind);

	tc = backend_case(su, pg, "columns", 0);
	tcase_add_test(tc, test_col_types);
	tcase_add_test(tc, test_col_text_per_step);
	tcase_add_test(tc, test_end_and_reuse);
	tcase_add_test(tc, test_errors_and_changes);
	tcase_add_test(tc, test_transactions);
	tcase_add_test(tc, test_func);

	tc = backend_case(su, pg, "locks", 30);
	tcase_add_test(tc, test_locks);
	tcase_add_test(tc, test_lock_orphans);
	tcase_add_test(tc, test_lock_pid_reused);
	tcase_add_test(tc, test_turns);
	tcase_add_test(tc, test_lock_holder_killed);

	tc = backend_case(su, pg, "busy", 30);
	tcase_add_test(tc, test_busy_waits_with_callbacks);
	tcase_add_test(tc, test_busy_gives_up_when_told);
	tcase_add_test(tc, test_busy_timeout);
	tcase_add_test(tc, test_tally);

	tc = backend_case(su, pg, "crash", 120);
	tcase_add_test(tc, test_crash_safety);
}

static Suite *
store_suite(bool pg)
{
	Suite	*su = suite_create("store");
	TCase	*tc;

	add_neutral(su, false);
	tc = backend_case(su, false, "file", 0);
	tcase_add_test(tc, test_corrupt);
	tc = test_case(su, "url", test_url_names, 0);
	tcase_add_test(tc, test_pgsql_params);
	if (!pg)
		return su;
	add_neutral(su, true);
	tc = backend_case(su, true, "url", 0);
	tcase_add_test(tc, test_url_password_hidden);
	tc = backend_case(su, true, "session", 30);
	tcase_add_test(tc, test_pg_reconnect);
	tcase_add_test(tc, test_pg_lock_reconnect);
	tcase_add_test(tc, test_pg_lock_key_wait);
	tcase_add_test(tc, test_pg_keepalives);
	tcase_add_test(tc, test_pg_connect_timeout);
	return su;
}

/* The PostgreSQL cases need the cluster: started here, once, and
 * stopped when every case has run. It listens on loopback TCP too, for
 * test_pg_keepalives. */
int
main(void)
{
	bool	 pg = pgtmp_start_tcp(&t_cluster, "check_store") == 0;
	int	 rc = check_main(store_suite(pg));

	pgtmp_stop(&t_cluster);
	return rc;
}
