/* store_copy.h - one store's rows into another (SQLite or PostgreSQL, either way), table by table, idempotently, and checked row by row. */
#ifndef SLUICE_STORE_COPY_H
#define SLUICE_STORE_COPY_H

#include <stdint.h>

#include "store.h"

/*
 * What sluice-gateway --copy-store copies (worker/import/copystore.c
 * runs it). Both stores are open (store_open: the same schema
 * version). Every table of user data is copied with its keys as they
 * are (ids included, so rows that refer to each other still do), and
 * values byte for byte: rows sealed with encryptUsingApiKey stay the
 * tokens they are, no key needed. A row is looked up in the target by
 * its key first: absent, it is inserted; present with the same values,
 * it counts as already there; present with other values, it is left
 * alone and counted as differing. So a second run copies nothing.
 *
 * The tables, in the order they are copied (parents first), are
 * store_copy_table(0 .. store_copy_ntables() - 1); those left out, and
 * why, store_copy_skipped(). The keyword index of vector memories is
 * copied as the columns it indexes (vector_fts); the target indexes
 * them its own way (SQLite: FTS5; PostgreSQL: a generated tsvector).
 */

/* What one table's copy and check found. */
struct store_copy_count {
	int64_t	 cc_copied;	/* inserted into the target */
	int64_t	 cc_there;	/* in the target already, same values */
	int64_t	 cc_differ;	/* in the target with other values */
	int64_t	 cc_missing;	/* the check: not in the target */
	int64_t	 cc_source;	/* rows of the source */
	int64_t	 cc_target;	/* rows of the target, after */
	char	 cc_first[96];	/* the key of the first row differing or
				   missing ("id=5"), or "" */
};

/* The number of tables copied, and the name of table i (a constant). */
int		 store_copy_ntables(void);
const char	*store_copy_table(int i);

/* The i-th table left out (NULL past the last), with why into *why
 * (a constant). */
const char	*store_copy_skipped(int i, const char **why);

/* Copy table i of from into to, inside a write transaction of to's
 * (the caller's store_begin; it commits or rolls back), counting into
 * c (cc_copied, cc_there, cc_differ, cc_source). Returns 0, or -1 with
 * err naming the table, the row's key and the store's reason. */
int		 store_copy_rows(struct store *from, struct store *to, int i,
		    struct store_copy_count *c, char err[STORE_ERRLEN]);

/* In to's write transaction, after the rows: PostgreSQL's identity
 * columns continue after the highest id copied, so that new rows do
 * not collide with copied ones (SQLite's rowids do that by themselves:
 * a no-op there). 0, or -1 with err set. */
int		 store_copy_ids(struct store *to, char err[STORE_ERRLEN]);

/* The check, after the commit: every row of table i of from is in to
 * with the same values (cc_missing, cc_differ, cc_first), and to's row
 * count (cc_target). 0 (whatever it found), or -1 with err set when a
 * store failed. */
int		 store_copy_check(struct store *from, struct store *to, int i,
		    struct store_copy_count *c, char err[STORE_ERRLEN]);

/* The number of rows of a table, skipped ones included (name from the
 * lists above, never user text). -1 with err set on failure. */
int64_t		 store_copy_count_rows(struct store *, const char *table,
		    char err[STORE_ERRLEN]);

#endif
