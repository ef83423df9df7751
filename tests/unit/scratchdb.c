/* scratchdb.c - unit tests: a store in a fresh temporary folder, removed afterwards. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../../common/buf.h"
#include "../../worker/store/store_stmt.h"
#include "pgtmp.h"
#include "scratchdb.h"

/* SLUICE_TEST_PG=1: the scratch store is a database of a throwaway
 * PostgreSQL cluster of the test's own (slow: a cluster a test), to
 * see which of a suite's SQL PostgreSQL takes. */
static struct pgtmp	 sd_cluster;

void
scratchdb_open(struct scratchdb *sd, const char *what)
{
	char	 err[STORE_ERRLEN];

	snprintf(sd->sd_dir, sizeof(sd->sd_dir), "/tmp/sluice-%s.XXXXXX", what);
	ck_assert_ptr_nonnull(mkdtemp(sd->sd_dir));
	snprintf(sd->sd_path, sizeof(sd->sd_path), "%s/sluice.db", sd->sd_dir);
	if (getenv("SLUICE_TEST_PG") != NULL) {
		ck_assert_int_eq(pgtmp_start(&sd_cluster, what), 0);
		ck_assert_int_eq(pgtmp_newdb(&sd_cluster, sd->sd_path,
		    sizeof(sd->sd_path)), 0);
	}
	sd->sd_store = store_open(sd->sd_path, NULL, err);
	ck_assert_msg(sd->sd_store != NULL, "store_open: %s", err);
}

void
scratchdb_row(struct buf *b, struct store_q *st)
{
	int	 i;

	for (i = 0; i < store_col_count(st); i++) {
		if (i > 0)
			buf_addc(b, '|');
		buf_adds(b, store_col_null(st, i) ? "NULL" :
		    store_col_text(st, i));
	}
	buf_addc(b, '\n');
}

struct store *
scratchdb_hold(const char *path)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = store_open(path, NULL, err);

	ck_assert_msg(s != NULL, "store_open: %s", err);
	ck_assert_msg(store_begin(s) == 0, "%s", store_err(s));
	return s;
}

int64_t
scratchdb_int(const char *path, const char *sql)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = store_open(path, NULL, err);
	struct store_q	*q;
	int64_t		 v;

	ck_assert_msg(s != NULL, "store_open: %s", err);
	q = store_stmt(s, sql);
	ck_assert_msg(q != NULL && store_step(s, q) == 1, "%s", store_err(s));
	v = store_col_int(q, 0);
	store_close(s);
	return v;
}

char *
scratchdb_rows(struct scratchdb *sd, const char *sql)
{
	struct store_q	*st = store_stmt(sd->sd_store, sql);
	struct buf	 b = BUF_INIT;
	int		 rc;

	ck_assert_msg(st != NULL, "%s", store_err(sd->sd_store));
	buf_adds(&b, "");
	while ((rc = store_step(sd->sd_store, st)) == 1)
		scratchdb_row(&b, st);
	ck_assert_msg(rc == 0, "%s", store_err(sd->sd_store));
	return buf_take(&b);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

void
scratchdb_close(struct scratchdb *sd)
{
	store_close(sd->sd_store);
	sd->sd_store = NULL;
	pgtmp_stop(&sd_cluster);
	if (getenv("STORE_KEEP") == NULL)
		nftw(sd->sd_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
