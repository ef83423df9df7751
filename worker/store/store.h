/* store.h - the SQLite database every worker shares: open, migrate, wait for locks, transactions, statements. */
#ifndef SLUICE_STORE_H
#define SLUICE_STORE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#define STORE_ERRLEN	512
#define STORE_BUSY_MS	30000	/* default longest wait for a lock */
#define STORE_WAIT_MS	200	/* on_wait is called this often */

struct store;

struct store_opts {
	bool		 so_sync_full;	/* synchronous=FULL, not NORMAL */
	unsigned	 so_busy_ms;	/* longest wait for a lock (0: default) */
	/* Called about every STORE_WAIT_MS while a lock is awaited (the
	 * worker heartbeats there); non-zero gives up the wait. NULL: none. */
	int		(*so_on_wait)(void *arg);
	void		*so_arg;
};

/* Open (creating it if needed) the database at path, in WAL mode, and
 * bring its schema to the current version inside one BEGIN IMMEDIATE
 * transaction. opts may be NULL (defaults). Returns the store, or NULL
 * with err naming the path and SQLite's reason; nothing is ever deleted.
 * Never carry a store across fork(): open it in the process that uses it. */
struct store	*store_open(const char *path, const struct store_opts *opts,
		    char err[STORE_ERRLEN]);

/* The schema version this build migrates to (PRAGMA user_version). */
int		 store_schema_version(void);

/* Finalise the cached statements, roll back an open transaction and
 * close. NULL is a no-op. */
void		 store_close(struct store *);

/* The message of the last failure: names the database, the step and
 * SQLite's error text. Borrowed, valid until the next call. */
const char	*store_err(const struct store *);

/* True when the last failure was a lock wait given up because on_wait
 * said so (not a timeout, not an error). */
bool		 store_gave_up(const struct store *);

/* BEGIN IMMEDIATE (write intent), waiting through the busy handler;
 * COMMIT; ROLLBACK (a no-op when no transaction is open). Each returns
 * 0, or -1 with store_err set. */
int		 store_begin(struct store *);
int		 store_commit(struct store *);
int		 store_rollback(struct store *);

/* The prepared statement for this SQL text, from the cache (prepared on
 * first use), reset and with its bindings cleared. Owned by the store,
 * finalised by store_close; never finalise it. NULL with store_err on a
 * syntax error. User text is only ever bound, never pasted into sql. */
sqlite3_stmt	*store_stmt(struct store *, const char *sql);

/* Bind parameters 1..n from fmt: 't' text (const char *, NULL binds
 * NULL), 'i' integer (int64_t), 'n' NULL (no argument). Returns 0, or
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

/* Named locks with expiry (workflow_locks), each in BEGIN IMMEDIATE.
 * store_lock returns 1 when taken (free, expired, or already owner's:
 * the expiry is renewed), 0 when another owner holds it unexpired, -1
 * on error. store_unlock drops one lock if owner holds it;
 * store_unlock_owner drops every lock of owner. Both return the number
 * of locks dropped, or -1. */
int		 store_lock(struct store *, const char *name, const char *owner,
		    unsigned ttl_s);
int		 store_unlock(struct store *, const char *name,
		    const char *owner);
int		 store_unlock_owner(struct store *, const char *owner);

#endif
