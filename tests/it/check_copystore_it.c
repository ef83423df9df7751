/* check_copystore_it.c - integration: the real sluice-gateway --copy-store moves a state folder's store into PostgreSQL and back, says so, and refuses what it must. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../../worker/store/store.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "../unit/pgtmp.h"
#include "harness.h"

/* The test's folder: state/ (the source's sluice.db), back.db, and the
 * run's out and err. */
static char		 T[64];
static struct pgtmp	 Cluster;
static bool		 Pg;

struct run {
	int	 r_status;
	char	*r_out;
	char	*r_err;
};

static char *
tpath(const char *rel)
{
	static char	 p[2][256];
	static int	 k;

	k ^= 1;
	snprintf(p[k], sizeof(p[k]), "%s/%s", T, rel);
	return p[k];
}

/* sluice-gateway --copy-store with args (NULL-ended, at most 4). */
static void
run_gw(struct run *r, const char *const *args)
{
	char		 out[128], err[128];
	const char	*argv[8] = { "--copy-store" };
	int		 n = 1;

	snprintf(out, sizeof(out), "%s/out", T);
	snprintf(err, sizeof(err), "%s/err", T);
	for (; *args != NULL && n < 7; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	r->r_status = it_gateway_once(argv, out, err);
	r->r_out = it_file_text(out);
	r->r_err = it_file_text(err);
}

static void
run_free(struct run *r)
{
	free(r->r_out);
	free(r->r_err);
}

static void
has(const char *text, const char *want)
{
	ck_assert_msg(strstr(text, want) != NULL, "no '%s' in:\n%s", want,
	    text);
}

static struct store *
open_ok(const char *path)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = store_open(path, NULL, err);

	ck_assert_msg(s != NULL, "%s", err);
	return s;
}

/* The first column of sql's first row as text, into a static buffer. */
static const char *
q_text(const char *path, const char *sql)
{
	static char	 v[512];
	struct store	*s = open_ok(path);
	struct store_q	*st = store_stmt(s, sql);

	ck_assert_msg(st != NULL && store_step(s, st) == 1, "%s: %s", sql,
	    store_err(s));
	snprintf(v, sizeof(v), "%s", store_col_text(st, 0));
	store_close(s);
	return v;
}

static void
exec_ok(const char *path, const char *sql)
{
	struct store	*s = open_ok(path);

	ck_assert_msg(store_exec(s, sql, "") != -1, "%s", store_err(s));
	store_close(s);
}

/* A state folder whose store has a discussion with memories, a summary
 * sealed with encryptUsingApiKey (a token: copied as it is), a vector
 * memory with its keyword row and embedding; and a cached answer. */
static void
fixture(void)
{
	const char	*db;

	snprintf(T, sizeof(T), "/tmp/sluice-cpit.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(T));
	ck_assert_int_eq(mkdir(tpath("state"), 0700), 0);
	db = xstrdup(tpath("state/sluice.db"));
	exec_ok(db, "INSERT INTO discussions VALUES ('alice', 1)");
	exec_ok(db, "INSERT INTO memories VALUES (4, 'alice', 'Alice sails.', "
	    "'h1', 2), (8, 'alice', 'Tea at dawn.', 'h2', 3)");
	exec_ok(db, "INSERT INTO summaries VALUES ('alice', "
	    "'gAAAAABtokenOfASealedSummary==', 'h2', 4)");
	exec_ok(db, "INSERT INTO vector_memories VALUES (6, 'alice', 'The "
	    "lighthouse keeper waves', '2025-09-20T16:30:05+00:00', NULL)");
	exec_ok(db, "INSERT INTO vector_fts (rowid, title, "
	    "memory_text_unweighted) VALUES (6, 'Keeper', 'The lighthouse "
	    "keeper waves')");
	exec_ok(db, "INSERT INTO memory_embeddings VALUES (6, 'm', 1, "
	    "x'0000803f')");
	exec_ok(db, "INSERT INTO response_cache VALUES ('k', 'ep', 1, '[]', "
	    "NULL, 'stop', 1, 1)");
	free((char *)(uintptr_t)db);
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

/* The state folder into PostgreSQL, again (nothing more), then back
 * into a new SQLite file: what each run says, and the rows. */
START_TEST(state_folder_to_postgresql_and_back)
{
	char		 url[256];
	const char	*a1[] = { NULL, NULL, NULL }, *a2[] = { NULL, NULL, NULL };
	struct run	 r;

	if (!Pg) {
		fprintf(stderr, "*** check_copystore_it: "
		    "state_folder_to_postgresql_and_back SKIPPED: no "
		    "PostgreSQL\n");
		return;
	}
	fixture();
	ck_assert_int_eq(pgtmp_newdb(&Cluster, url, sizeof(url)), 0);
	a1[0] = tpath("state");
	a1[1] = url;
	run_gw(&r, a1);
	ck_assert_msg(r.r_status == 0, "status %d\n%s%s", r.r_status, r.r_out,
	    r.r_err);
	has(r.r_out, "/state/sluice.db (SQLite) into postgresql:///");
	has(r.r_out, "memories: copied 2, already there 0, source has 2, "
	    "target now has 2\n");
	has(r.r_out, "summaries: copied 1, already there 0");
	has(r.r_out, "response_cache: not copied (a cache of LLM answers: "
	    "expendable, refilled as requests come), source has 1\n");
	has(r.r_out, "checked: all 7 rows of the source's 12 tables are in "
	    "the target with the same values\n");
	has(r.r_out, "done: copied 7 rows, 0 already there\n");
	run_free(&r);
	ck_assert_str_eq(q_text(url, "SELECT text FROM summaries"),
	    "gAAAAABtokenOfASealedSummary==");
	ck_assert_str_eq(q_text(url, "SELECT rowid FROM vector_fts WHERE tsv "
	    "@@ plainto_tsquery('english', 'keeper')"), "6");

	run_gw(&r, a1);
	ck_assert_int_eq(r.r_status, 0);
	has(r.r_out, "memories: copied 0, already there 2, source has 2, "
	    "target now has 2\n");
	has(r.r_out, "done: copied 0 rows, 7 already there\n");
	run_free(&r);

	a2[0] = url;
	a2[1] = tpath("back.db");
	run_gw(&r, a2);
	ck_assert_msg(r.r_status == 0, "status %d\n%s%s", r.r_status, r.r_out,
	    r.r_err);
	has(r.r_out, "(PostgreSQL) into ");
	has(r.r_out, "done: copied 7 rows, 0 already there\n");
	run_free(&r);
	ck_assert_str_eq(q_text(tpath("back.db"), "SELECT group_concat(id || "
	    "':' || text, ',') FROM memories"), "4:Alice sails.,8:Tea at dawn.");
	ck_assert_str_eq(q_text(tpath("back.db"), "SELECT hex(vector) FROM "
	    "memory_embeddings"), "0000803F");
	ck_assert_str_eq(q_text(tpath("back.db"), "SELECT rowid FROM "
	    "vector_fts WHERE vector_fts MATCH 'lighthouse'"), "6");
	ck_assert_str_eq(q_text(tpath("back.db"), "SELECT count(*) FROM "
	    "response_cache"), "0");
	cleanup();
}
END_TEST

/* A password in a URL is refused by the gateway itself (its message),
 * before any worker sees it, and not repeated. */
START_TEST(password_refused)
{
	const char	*a[] = { NULL, "postgresql://sluice:s3cretpw@db.example/"
			    "sluice", NULL };
	struct run	 r;

	fixture();
	a[0] = tpath("state");
	run_gw(&r, a);
	ck_assert_int_eq(r.r_status, 64);
	has(r.r_err, "sluice-gateway: --copy-store: the TO URL "
	    "postgresql://sluice@db.example/sluice holds a password");
	has(r.r_err, "PGPASSWORD");
	has(r.r_err, "~/.pgpass");
	ck_assert_ptr_null(strstr(r.r_err, "s3cretpw"));
	ck_assert_str_eq(r.r_out, "");
	run_free(&r);
	cleanup();
}
END_TEST

/* Usage errors, a store that cannot be reached, a source missing. */
START_TEST(errors_and_statuses)
{
	const char	*one[] = { "x.db", NULL };
	const char	*down[] = { NULL, "postgresql:///db?host=/nonexistent-"
			    "sluice&port=1", NULL };
	const char	*none[] = { NULL, NULL, NULL };
	struct run	 r;

	fixture();
	run_gw(&r, one);
	ck_assert_int_eq(r.r_status, 64);
	has(r.r_err, "--copy-store takes two arguments, FROM and TO");
	run_free(&r);

	down[0] = tpath("state");
	run_gw(&r, down);
	ck_assert_int_eq(r.r_status, 73);
	has(r.r_err, "error: cannot open the target store: database "
	    "postgresql:///db?host=/nonexistent-sluice&port=1: cannot open: ");
	run_free(&r);

	none[0] = tpath("nothing");
	none[1] = tpath("out.db");
	run_gw(&r, none);
	ck_assert_int_eq(r.r_status, 66);
	has(r.r_err, "nothing: No such file or directory");
	ck_assert_int_eq(access(tpath("out.db"), F_OK), -1);
	run_free(&r);
	cleanup();
}
END_TEST

/* The option is in --help. */
START_TEST(help_says_it)
{
	const char	*a[] = { "--help", NULL };
	char		 out[128], err[128], *o;

	fixture();
	snprintf(out, sizeof(out), "%s/out", T);
	snprintf(err, sizeof(err), "%s/err", T);
	ck_assert_int_eq(it_gateway_once(a, out, err), 0);
	o = it_file_text(out);
	has(o, "--copy-store FROM TO");
	free(o);
	cleanup();
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("copystore_it");
	TCase	*tc = test_case(s, "copy", NULL, 120);
	int	 rc;

	Pg = pgtmp_start(&Cluster, "check_copystore_it") == 0;
	tcase_add_test(tc, state_folder_to_postgresql_and_back);
	tcase_add_test(tc, password_refused);
	tcase_add_test(tc, errors_and_statuses);
	tcase_add_test(tc, help_says_it);
	rc = check_main(s);
	if (Pg)
		(void)pgtmp_dropdbs(&Cluster);
	pgtmp_stop(&Cluster);
	return rc;
}
