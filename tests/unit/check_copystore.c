/* check_copystore.c - --copy-store's copy (worker/import/copystore.c, worker/store/store_copy.c): SQLite -> PostgreSQL -> SQLite alike, idempotent, all or nothing, and its errors. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "../../worker/import/copystore.h"
#include "../../worker/store/store.h"
#include "../../worker/store/store_copy.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "pgtmp.h"
#include "scratchdir.h"

/*
 * Each test has a scratch folder (t_sc) holding the source a.db (filled
 * by fill()), and b.db / c.db for targets; the pg_* cases add databases
 * of the suite's throwaway PostgreSQL cluster (started by main, skipped
 * loudly when PostgreSQL is not installed).
 */
static struct scratchdir t_sc;
static char		 t_a[128], t_b[128], t_c[128];
static bool		 t_pg;
static struct pgtmp	 t_cluster;

/* What a copy printed and returned. */
struct out {
	int	 o_rc;
	char	*o_out;
	char	*o_err;
};

static void
setup(void)
{
	scratchdir_make(&t_sc, "copy");
	snprintf(t_a, sizeof(t_a), "%s/a.db", t_sc.sc_path);
	snprintf(t_b, sizeof(t_b), "%s/b.db", t_sc.sc_path);
	snprintf(t_c, sizeof(t_c), "%s/c.db", t_sc.sc_path);
}

static void
setup_pg(void)
{
	setup();
	t_pg = true;
}

static void
teardown(void)
{
	scratchdir_remove(&t_sc);
	if (t_pg)
		ck_assert_int_eq(pgtmp_dropdbs(&t_cluster), 0);
}

static struct store *
open_ok(const char *path)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = store_open(path, NULL, err);

	ck_assert_msg(s != NULL, "store_open: %s", err);
	return s;
}

static void
exec_ok(struct store *s, const char *sql)
{
	ck_assert_msg(store_exec(s, sql, "") != -1, "%s: %s", sql,
	    store_err(s));
}

/* A new database of the cluster, its URL into url (256 bytes). */
static void
new_pg(char *url)
{
	ck_assert_int_eq(pgtmp_newdb(&t_cluster, url, 256), 0);
}

/* Rows in every table, copied or not: the blob with a zero byte inside,
 * NULL columns, a sealed-looking token (copied as it is), text outside
 * ASCII, ids with gaps (kept). */
static void
fill(const char *path)
{
	struct store	*s = open_ok(path);
	static const char *const sql[] = {
		"INSERT INTO discussions VALUES ('alice', 100), ('k/bob', 200)",
		"INSERT INTO memories VALUES (3, 'alice', 'Alice likes tea.', "
		    "'h1', 101), (40, 'alice', 'Üñïcode ✓', 'h2', 102), "
		    "(41, 'k/bob', 'gAAAAABsealedtoken==', 'b1', 201)",
		"INSERT INTO memory_ledgers VALUES ('alice', 'h1'), "
		    "('k/bob', NULL)",
		"INSERT INTO summaries VALUES ('alice', 'A sailor.', 'h2', 103)",
		"INSERT INTO state_documents VALUES ('alice', '# Alice', NULL, "
		    "104), ('k/bob', 'gAAAAABnew', 'gAAAAABold', 202)",
		"INSERT INTO timestamps VALUES ('alice', 'm1', '(Sat)'), "
		    "('alice', 'm2', '(Sun)')",
		"INSERT INTO vector_memories VALUES (5, 'alice', 'The "
		    "lighthouse keeper waves', '2025-09-20T16:30:05+00:00', "
		    "'{\"title\": \"Keeper\"}'), (9, 'alice', 'Tea at dawn', "
		    "'2025-09-21T07:00:00+00:00', NULL)",
		"INSERT INTO vector_fts (rowid, title, summary, entities, "
		    "key_phrases, memory_text_unweighted) VALUES (5, 'Keeper', "
		    "'The lighthouse keeper waves', 'Keeper', 'lighthouse', "
		    "'The lighthouse keeper waves'), (9, NULL, NULL, NULL, NULL, "
		    "'Tea at dawn')",
		"INSERT INTO vector_hash_log VALUES (7, 'alice', 'mh1', 105), "
		    "(12, 'alice', 'mh2', 106)",
		"INSERT INTO compactor_sections VALUES ('alice', 'old', 0, "
		    "'Block', 'c1'), ('alice', 'oldest', 0, 'Older', 'c0')",
		"INSERT INTO vision_responses VALUES ('alice', 'k1', 'a cat', "
		    "107)",
		"INSERT INTO memory_embeddings VALUES (5, 'm', 2, "
		    "x'0000803f00000000'), (9, 'm', 1, x'00000040')",
		"INSERT INTO response_cache VALUES ('ck', 'ep', 1, '[]', NULL, "
		    "'stop', 1, 2)",
		"INSERT INTO workflow_locks VALUES ('L', 'rq', 99, 1, 0)",
		NULL,
	};
	size_t		 i;

	for (i = 0; sql[i] != NULL; i++)
		exec_ok(s, sql[i]);
	store_close(s);
}

/* Every copied table's rows in key order, blobs in hex, NULL as NULL:
 * what two stores must agree on. */
static char *
dump(const char *path)
{
	struct store	*s = open_ok(path);
	struct store_q	*st;
	struct buf	 b = BUF_INIT;
	char		 sql[96];
	const char	*t;
	int		 i, c, n;

	for (i = 0; (t = store_copy_table(i)) != NULL; i++) {
		if (strcmp(t, "vector_fts") == 0)
			snprintf(sql, sizeof(sql), "SELECT rowid, * FROM "
			    "vector_fts ORDER BY 1");
		else if (strcmp(t, "memory_embeddings") == 0)
			snprintf(sql, sizeof(sql), "SELECT memory_id, model, "
			    "dim, hex(vector) FROM %s ORDER BY 1, 2", t);
		else
			snprintf(sql, sizeof(sql), "SELECT * FROM %s ORDER BY "
			    "1, 2", t);
		ck_assert_msg((st = store_stmt(s, sql)) != NULL, "%s",
		    store_err(s));
		buf_printf(&b, "-- %s\n", t);
		while (store_step(s, st) == 1) {
			n = store_col_count(st);
			for (c = 0; c < n; c++)
				buf_printf(&b, "%s%s", c > 0 ? "|" : "",
				    store_col_null(st, c) ? "NULL" :
				    store_col_text(st, c) != NULL ?
				    store_col_text(st, c) : "?");
			buf_addc(&b, '\n');
		}
	}
	store_close(s);
	return buf_take(&b);
}

/* copystore_run(from, to) with its standard output and error caught. */
static void
run(struct out *o, const char *from, const char *to)
{
	char	*po = scratchdir_path(&t_sc, "out");
	char	*pe = scratchdir_path(&t_sc, "err");
	int	 so = dup(1), se = dup(2), fo, fe;

	fflush(stdout);
	fflush(stderr);
	fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert(so != -1 && se != -1 && fo != -1 && fe != -1);
	dup2(fo, 1);
	dup2(fe, 2);
	o->o_rc = copystore_run(from, to);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	o->o_out = scratchdir_read(&t_sc, "out");
	o->o_err = scratchdir_read(&t_sc, "err");
	free(po);
	free(pe);
}

static void
out_free(struct out *o)
{
	free(o->o_out);
	free(o->o_err);
}

/* A copy that must fail with status rc, saying want on stderr. */
static void
refused(const char *from, const char *to, int rc, const char *want)
{
	struct out	 o;

	run(&o, from, to);
	ck_assert_msg(o.o_rc == rc, "copy %s -> %s: %d, not %d\n%s", from, to,
	    o.o_rc, rc, o.o_err);
	ck_assert_msg(strstr(o.o_err, want) != NULL, "no '%s' in:\n%s", want,
	    o.o_err);
	ck_assert_ptr_null(strstr(o.o_err, "hunter22"));
	ck_assert_ptr_null(strstr(o.o_out, "hunter22"));
	out_free(&o);
}

/* A copy that must succeed; the output is kept in o. */
static void
run_ok(struct out *o, const char *from, const char *to)
{
	run(o, from, to);
	ck_assert_msg(o->o_rc == 0, "copy %s -> %s: %d\n%s%s", from, to,
	    o->o_rc, o->o_out, o->o_err);
	ck_assert_msg(strstr(o->o_out, "checked: all ") != NULL, "%s",
	    o->o_out);
}

static void
has(const char *text, const char *want)
{
	ck_assert_msg(strstr(text, want) != NULL, "no '%s' in:\n%s", want,
	    text);
}

static void
same_dumps(const char *a, const char *b)
{
	char	*da = dump(a), *db = dump(b);

	ck_assert_msg(strcmp(da, db) == 0, "%s:\n%s\n%s:\n%s", a, da, b, db);
	free(da);
	free(db);
}

/* The first column of sql's first row on the store at path. */
static int64_t
q_int(const char *path, const char *sql)
{
	struct store	*s = open_ok(path);
	struct store_q	*st = store_stmt(s, sql);
	int64_t		 v;

	ck_assert_msg(st != NULL && store_step(s, st) == 1, "%s: %s", sql,
	    store_err(s));
	v = store_col_int(st, 0);
	store_close(s);
	return v;
}

/* ---- SQLite only ------------------------------------------------------ */

/* A file into a new file, then again: nothing more. */
START_TEST(test_sqlite_twice)
{
	struct out	 o;

	fill(t_a);
	run_ok(&o, t_a, t_b);
	has(o.o_out, "memories: copied 3, already there 0, source has 3, "
	    "target now has 3\n");
	has(o.o_out, "vector_fts: copied 2, already there 0");
	has(o.o_out, "response_cache: not copied (a cache");
	has(o.o_out, "workflow_locks: not copied (held by running processes");
	has(o.o_out, "checked: all 23 rows of the source's 12 tables");
	has(o.o_out, "done: copied 23 rows, 0 already there\n");
	out_free(&o);
	same_dumps(t_a, t_b);
	ck_assert_int_eq(q_int(t_b, "SELECT count(*) FROM response_cache"), 0);
	ck_assert_int_eq(q_int(t_b, "SELECT count(*) FROM workflow_locks"), 0);
	/* the keyword index answers on the copy */
	ck_assert_int_eq(q_int(t_b, "SELECT rowid FROM vector_fts WHERE "
	    "vector_fts MATCH 'lighthouse'"), 5);

	run_ok(&o, t_a, t_b);
	has(o.o_out, "memories: copied 0, already there 3, source has 3, "
	    "target now has 3\n");
	has(o.o_out, "done: copied 0 rows, 23 already there\n");
	out_free(&o);
	same_dumps(t_a, t_b);
}
END_TEST

/* A state folder means its sluice.db, as --state-dir does. */
START_TEST(test_state_folder)
{
	char		 dir[128], db[160];
	struct out	 o;

	snprintf(dir, sizeof(dir), "%s/state/", t_sc.sc_path);
	snprintf(db, sizeof(db), "%s/state/sluice.db", t_sc.sc_path);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	fill(db);
	run_ok(&o, dir, t_b);
	has(o.o_out, "copying ");
	has(o.o_out, "/state/sluice.db (SQLite) into ");
	out_free(&o);
	same_dumps(db, t_b);
}
END_TEST

/* A row the target holds otherwise: reported, and nothing of the
 * source copied (the new discussion neither), nothing replaced. */
START_TEST(test_conflict_copies_nothing)
{
	struct store	*s;
	struct out	 o;

	fill(t_a);
	run_ok(&o, t_a, t_b);
	out_free(&o);
	s = open_ok(t_b);
	exec_ok(s, "UPDATE summaries SET text = 'changed'");
	store_close(s);
	s = open_ok(t_a);
	exec_ok(s, "INSERT INTO discussions VALUES ('carol', 300)");
	store_close(s);
	run(&o, t_a, t_b);
	ck_assert_int_eq(o.o_rc, EX_DATAERR);
	has(o.o_out, "summaries: 1 row of the source's differs in the target "
	    "(first: discussion=alice)");
	has(o.o_out, "nothing was copied");
	out_free(&o);
	ck_assert_int_eq(q_int(t_b, "SELECT count(*) FROM discussions WHERE "
	    "key = 'carol'"), 0);
	ck_assert_int_eq(q_int(t_b, "SELECT count(*) FROM summaries WHERE "
	    "text = 'changed'"), 1);
}
END_TEST

/* Arguments that name no store, or the same one twice; passwords are
 * refused and never repeated (refused() looks for hunter22). */
START_TEST(test_bad_arguments)
{
	char	 sub[128];

	fill(t_a);
	refused(t_a, "mysql://db/x", EX_USAGE, "target store 'mysql://db/x': "
	    "not a store Sluice knows");
	refused("postgresql://sluice:hunter22@db/x", t_b, EX_USAGE, "source "
	    "store postgresql://sluice@db/x: the URL holds a password, which "
	    "would show in the process list: leave it out and give it in "
	    "PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass)");
	refused(t_a, "postgres:///x?password=hunter22", EX_USAGE, "target "
	    "store postgres:///x: the URL holds a password");
	snprintf(sub, sizeof(sub), "%s/missing.db", t_sc.sc_path);
	refused(sub, t_b, EX_NOINPUT, "missing.db: No such file or directory");
	ck_assert_int_eq(access(t_b, F_OK), -1);	/* nothing made */
	snprintf(sub, sizeof(sub), "%s/./a.db", t_sc.sc_path);
	refused(t_a, sub, EX_USAGE, "are the same store");
}
END_TEST

/* A target that cannot be made: named, nothing else done. */
START_TEST(test_target_cannot_open)
{
	char	 bad[160];

	fill(t_a);
	snprintf(bad, sizeof(bad), "%s/no/such/folder/x.db", t_sc.sc_path);
	refused(t_a, bad, EX_CANTCREAT, "cannot open the target store: "
	    "database ");
	refused(t_a, bad, EX_CANTCREAT, "/no/such/folder/x.db");
}
END_TEST

/* A PostgreSQL server that is not there: the store named, and the
 * reason. */
START_TEST(test_unreachable_server)
{
	fill(t_a);
	refused(t_a, "postgresql:///x?host=/nonexistent-sluice&port=1",
	    EX_CANTCREAT, "cannot open the target store: database "
	    "postgresql:///x?host=/nonexistent-sluice&port=1: cannot open");
	refused("postgresql:///x?host=/nonexistent-sluice&port=1", t_b,
	    EX_NOINPUT, "cannot open the source store: database ");
}
END_TEST

/* The names of a store's tables, one a line, without the engine's own
 * (SQLite's sqlite_*, FTS5's shadow tables, PostgreSQL's sluice_schema
 * version row). */
static char *
table_names(const char *path)
{
	struct store	*s = open_ok(path);
	struct store_q	*st;
	struct buf	 b = BUF_INIT;

	st = store_stmt(s, store_is_pg(s) ? "SELECT table_name FROM "
	    "information_schema.tables WHERE table_schema = current_schema() "
	    "AND table_name <> 'sluice_schema' ORDER BY 1" : "SELECT name "
	    "FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
	    "'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'vector\\_fts\\_%' "
	    "ESCAPE '\\' ORDER BY 1");
	ck_assert_msg(st != NULL, "%s", store_err(s));
	buf_adds(&b, "");
	while (store_step(s, st) == 1)
		buf_printf(&b, "%s\n", store_col_text(st, 0));
	store_close(s);
	return buf_take(&b);
}

/* Every table of the schema is copied or said to be left out: a table
 * added by a new schema step must be added to store_copy.c. */
static void
tables_covered(const char *path)
{
	char		*names = table_names(path), *p, *nl;
	const char	*t, *why;
	int		 i, n = 0;
	bool		 known;

	for (p = names; (nl = strchr(p, '\n')) != NULL; p = nl + 1, n++) {
		*nl = '\0';
		known = false;
		for (i = 0; (t = store_copy_table(i)) != NULL; i++)
			known |= strcmp(t, p) == 0;
		for (i = 0; (t = store_copy_skipped(i, &why)) != NULL; i++)
			known |= strcmp(t, p) == 0;
		ck_assert_msg(known, "%s: table %s is neither copied nor left "
		    "out on purpose (worker/store/store_copy.c)", path, p);
	}
	for (i = 0; store_copy_skipped(i, &why) != NULL; i++)
		;
	ck_assert_int_eq(n, store_copy_ntables() + i);
	free(names);
}

START_TEST(test_sqlite_tables_covered)
{
	fill(t_a);
	tables_covered(t_a);
}
END_TEST

/* ---- through PostgreSQL ---------------------------------------------- */

/* SQLite -> PostgreSQL -> a new SQLite file: the same rows; each run
 * again copies nothing; PostgreSQL's keyword index and ids work on the
 * copy. */
START_TEST(test_pg_round_trip)
{
	char		 url[256];
	struct store	*s;
	struct out	 o;

	fill(t_a);
	new_pg(url);
	run_ok(&o, t_a, url);
	has(o.o_out, "(SQLite) into postgresql:///");
	has(o.o_out, "(PostgreSQL), schema version ");
	has(o.o_out, "memory_embeddings: copied 2, already there 0, source "
	    "has 2, target now has 2\n");
	has(o.o_out, "done: copied 23 rows, 0 already there\n");
	out_free(&o);
	run_ok(&o, url, t_c);
	has(o.o_out, "(PostgreSQL) into ");
	has(o.o_out, "done: copied 23 rows, 0 already there\n");
	out_free(&o);
	same_dumps(t_a, t_c);

	run_ok(&o, t_a, url);
	has(o.o_out, "vector_hash_log: copied 0, already there 2, source has "
	    "2, target now has 2\n");
	has(o.o_out, "done: copied 0 rows, 23 already there\n");
	out_free(&o);
	run_ok(&o, url, t_c);
	has(o.o_out, "done: copied 0 rows, 23 already there\n");
	out_free(&o);
	same_dumps(t_a, t_c);

	ck_assert_int_eq(q_int(url, "SELECT rowid FROM vector_fts WHERE tsv "
	    "@@ plainto_tsquery('english', 'lighthouses')"), 5);
	ck_assert_int_eq(q_int(url, "SELECT length(vector) FROM "
	    "memory_embeddings WHERE memory_id = 5"), 8);
	/* new rows get ids after the copied ones */
	s = open_ok(url);
	ck_assert_int_eq(store_insert(s, "INSERT INTO memories (discussion, "
	    "text, hash, created_at) VALUES ('alice', 'new', 'h9', 1) "
	    "RETURNING id", ""), 42);
	ck_assert_int_eq(store_insert(s, "INSERT INTO vector_memories "
	    "(discussion, memory_text, date_added) VALUES ('alice', 'n', "
	    "'d') RETURNING id", ""), 10);
	ck_assert_int_eq(store_insert(s, "INSERT INTO vector_hash_log "
	    "(discussion, message_hash, logged_at) VALUES ('alice', 'x', 1) "
	    "RETURNING id", ""), 13);
	store_close(s);
}
END_TEST

/* A copy that fails half-way (a keyword row whose memory is gone: the
 * target's foreign key refuses it) leaves the target as it was, and
 * names the table and the row. */
START_TEST(test_pg_failure_rolls_back)
{
	char		 url[256];
	struct store	*s;
	struct out	 o;

	fill(t_a);
	s = open_ok(t_a);
	exec_ok(s, "INSERT INTO vector_fts (rowid, title) VALUES (77, 'gone')");
	store_close(s);
	new_pg(url);
	run(&o, t_a, url);
	ck_assert_int_eq(o.o_rc, EX_IOERR);
	has(o.o_err, "error: table vector_fts, row rowid=77: database "
	    "postgresql:///");
	out_free(&o);
	ck_assert_int_eq(q_int(url, "SELECT count(*) FROM discussions"), 0);
	ck_assert_int_eq(q_int(url, "SELECT count(*) FROM memories"), 0);
}
END_TEST

/* Two URLs of one database: refused before anything is written. */
START_TEST(test_pg_same_database)
{
	char	 url[256], other[300];

	new_pg(url);
	snprintf(other, sizeof(other), "%s&application_name=other", url);
	refused(url, other, EX_USAGE, "are the same database");
}
END_TEST

START_TEST(test_pg_tables_covered)
{
	char	 url[256];

	new_pg(url);
	tables_covered(url);
}
END_TEST

static TCase *
add_case(Suite *su, const char *name, bool pg, int secs)
{
	TCase	*tc = test_case(su, name, NULL, secs);

	tcase_add_checked_fixture(tc, pg ? setup_pg : setup, teardown);
	return tc;
}

static Suite *
copystore_suite(bool pg)
{
	Suite	*su = suite_create("copystore");
	TCase	*tc;

	tc = add_case(su, "sqlite", false, 60);
	tcase_add_test(tc, test_sqlite_twice);
	tcase_add_test(tc, test_state_folder);
	tcase_add_test(tc, test_conflict_copies_nothing);
	tcase_add_test(tc, test_sqlite_tables_covered);
	tc = add_case(su, "errors", false, 60);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_target_cannot_open);
	tcase_add_test(tc, test_unreachable_server);
	if (!pg)
		return su;
	tc = add_case(su, "pg", true, 120);
	tcase_add_test(tc, test_pg_round_trip);
	tcase_add_test(tc, test_pg_failure_rolls_back);
	tcase_add_test(tc, test_pg_same_database);
	tcase_add_test(tc, test_pg_tables_covered);
	return su;
}

/* The PostgreSQL cases need the cluster: started once, here. */
int
main(void)
{
	bool	 pg = pgtmp_start(&t_cluster, "check_copystore") == 0;
	int	 rc = check_main(copystore_suite(pg));

	pgtmp_stop(&t_cluster);
	return rc;
}
