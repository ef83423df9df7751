/* scratchdb.h - unit tests: a store in a fresh temporary folder, removed afterwards. */
#ifndef SLUICE_SCRATCHDB_H
#define SLUICE_SCRATCHDB_H

#include <stddef.h>

#include "../../worker/store/store.h"

struct scratchdb {
	char		 sd_dir[64];	/* /tmp/sluice-<what>.XXXXXX */
	char		 sd_path[128];	/* sd_dir/sluice.db, or a URL */
	struct store	*sd_store;	/* open on it */
};

/* Make the folder (named after what) and open a store there; fails the
 * test when it cannot. With SLUICE_TEST_PG set in the environment the
 * store is a database of a PostgreSQL cluster started for the test
 * (tests/unit/pgtmp.c), sd_path its URL: a suite's SQL tried on
 * PostgreSQL (slow: one cluster a test; not part of make check). */
void	scratchdb_open(struct scratchdb *, const char *what);

/* Another store on the database at path, as another worker's, in a
 * write transaction (BEGIN IMMEDIATE): it holds the write lock until
 * store_commit, store_rollback or store_close. Fails the test when it
 * cannot. */
struct store	*scratchdb_hold(const char *path);

/* The first column of sql's first row on the database at path, read by
 * a store of its own; fails the test when there is none. */
int64_t	scratchdb_int(const char *path, const char *sql);

/* Every row sql gives, as "a|b|c\n" lines (NULL as "NULL"); fails the
 * test on an error. Caller frees. */
char	*scratchdb_rows(struct scratchdb *, const char *sql);

/* Append the row st is on as "a|b|c\n" (NULL as "NULL"). */
struct buf;
struct store_q;
void	scratchdb_row(struct buf *b, struct store_q *st);

/* Close the store (if open) and remove the folder with everything in
 * it (kept when STORE_KEEP is set in the environment). */
void	scratchdb_close(struct scratchdb *);

#endif
