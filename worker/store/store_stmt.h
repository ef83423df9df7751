/* store_stmt.h - the store's queries: cached by SQL text, bound from a format, stepped, their columns read. */
#ifndef SLUICE_STORE_STMT_H
#define SLUICE_STORE_STMT_H

#include <stddef.h>

#include "store.h"

/*
 * A query is one prepared statement of the store and, while it is
 * stepped, its current row. Callers never see the database library:
 * they read a row through the store_col_* accessors below. Columns
 * count from 0, parameters (store_bind) from 1.
 */
struct store_q;

/* What a column of the current row holds. */
enum store_type {
	STORE_NULL,
	STORE_INTEGER,
	STORE_FLOAT,
	STORE_TEXT,
	STORE_BLOB,
};

/* The query for this SQL text, from the cache (prepared on first use),
 * reset and with its bindings cleared. Owned by the store, freed by
 * store_close; never free it. NULL with store_err on a syntax error.
 * User text is only ever bound, never pasted into sql. */
struct store_q	*store_stmt(struct store *, const char *sql);

/* Bind parameters 1..n from fmt: 't' text (const char *, NULL binds
 * NULL), 'i' integer (int64_t), 'n' NULL (no argument), 'b' blob (two
 * arguments: const void *, size_t). Returns 0, or
 * -1 with store_err set. */
int		 store_bind(struct store *, struct store_q *, const char *fmt,
		    ...);

/* Step: 1 a row is ready, 0 done (the query is reset), -1 error
 * (store_err set, the query reset). */
int		 store_step(struct store *, struct store_q *);

/* End a query before its last row (after reading the one wanted): it
 * is reset, and holds no read snapshot any more. A no-op on a query
 * that is done, and on NULL. */
void		 store_end(struct store_q *);

/* The current row's columns, after store_step said 1. Text and blobs
 * are borrowed: valid until the next store_step or store_end of q.
 * store_col_text is NULL for a NULL column, and gives other values as
 * text; store_col_blob is NULL (*len 0) for NULL or an empty blob;
 * store_col_int and store_col_double are 0 for NULL. */
int		 store_col_count(struct store_q *);
enum store_type	 store_col_type(struct store_q *, int col);
bool		 store_col_null(struct store_q *, int col);
const char	*store_col_text(struct store_q *, int col);
int64_t		 store_col_int(struct store_q *, int col);
double		 store_col_double(struct store_q *, int col);
const void	*store_col_blob(struct store_q *, int col, size_t *len);

/* store_stmt + store_bind + step to the end, for statements whose rows
 * (if any) are not wanted. Returns the number of rows the statement
 * itself inserted, updated or deleted (0 for other statements), or -1. */
int		 store_exec(struct store *, const char *sql, const char *fmt,
		    ...);

/* store_exec for an INSERT ... RETURNING id (both backends have it):
 * the first column of its first row, the new row's id; 0 when it
 * inserted nothing, -1 on error. */
int64_t		 store_insert(struct store *, const char *sql, const char *fmt,
		    ...);

/* The rowid of the last row this connection inserted (0: none yet;
 * always 0 on PostgreSQL, which has no rowids: use store_insert). */
int64_t		 store_last_rowid(const struct store *);

/* A scalar SQL function name(text, integer) for this connection's
 * statements: fn gets the text (NULL for NULL) and the integer, and
 * its result is the function's (a real). Register it before preparing
 * a statement that calls it; a name registered already is left as it
 * is (0). Returns 0, or -1 with store_err set (also when the backend
 * cannot call into C). */
typedef double	 store_fn(const char *text, int64_t n);
int		 store_func(struct store *, const char *name, store_fn *fn);

#endif
