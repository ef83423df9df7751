/* store_stmt.h - the store's prepared statements: cached by SQL text, bound from a format, stepped. */
#ifndef SLUICE_STORE_STMT_H
#define SLUICE_STORE_STMT_H

#include "store.h"

/* The prepared statement for this SQL text, from the cache (prepared on
 * first use), reset and with its bindings cleared. Owned by the store,
 * finalised by store_close; never finalise it. NULL with store_err on a
 * syntax error. User text is only ever bound, never pasted into sql. */
sqlite3_stmt	*store_stmt(struct store *, const char *sql);

/* Bind parameters 1..n from fmt: 't' text (const char *, NULL binds
 * NULL), 'i' integer (int64_t), 'n' NULL (no argument), 'b' blob (two
 * arguments: const void *, size_t). Returns 0, or
 * -1 with store_err set. */
int		 store_bind(struct store *, sqlite3_stmt *, const char *fmt, ...);

/* Step: 1 a row is ready, 0 done (the statement is reset), -1 error
 * (store_err set, the statement reset). */
int		 store_step(struct store *, sqlite3_stmt *);

/* store_stmt + store_bind + step to the end, for statements whose rows
 * (if any) are not wanted. Returns the number of rows the statement
 * itself inserted, updated or deleted (0 for other statements), or -1. */
int		 store_exec(struct store *, const char *sql, const char *fmt,
		    ...);

/* The rowid of the last row this connection inserted (0: none yet). */
int64_t		 store_last_rowid(const struct store *);

#endif
