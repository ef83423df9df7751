/* store.h - the database every worker shares (SQLite or PostgreSQL, behind a driver): open, migrate, wait for locks, transactions. */
#ifndef SLUICE_STORE_H
#define SLUICE_STORE_H
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

/* Open (creating a SQLite file if needed, in WAL mode) the database at
 * path, and bring its schema to the current version inside one write
 * transaction (store_begin). A path starting with postgresql:// or postgres:// is a
 * libpq connection URL to a PostgreSQL database (which must exist);
 * anything else is a SQLite file. opts may be NULL (defaults). Returns
 * the store, or NULL with err naming the database (a URL without its
 * password, here and in every store_err) and the database's reason;
 * nothing is ever deleted.
 * Never carry a store across fork(): open it in the process that uses it. */
struct store	*store_open(const char *path, const struct store_opts *opts,
		    char err[STORE_ERRLEN]);

/* Whether the database at path may be opened without making one: a
 * SQLite file that exists, or any PostgreSQL URL (whose server says
 * more when store_open connects). 0, or -1 with errno (ENOENT ...). */
int		 store_exists(const char *path);

/* path as it may be shown to a user: a URL without its password, a
 * file as it is. Caller frees. */
char		*store_where_name(const char *path);

/* Finalise the cached statements, roll back an open transaction and
 * close. NULL is a no-op. */
void		 store_close(struct store *);

/* The message of the last failure: names the database, the step and
 * database's error text. Borrowed, valid until the next call. */
const char	*store_err(const struct store *);

/* True when the last failure was a lock wait given up because on_wait
 * said so (not a timeout, not an error). */
bool		 store_gave_up(const struct store *);

/* What a store has seen since it was opened, for /health and /metrics:
 * its failed calls (a lock wait given up because the request stopped is
 * not a failure), its successful writes (a COMMIT, or a statement
 * outside a transaction that changed rows), and which of the two came
 * last. */
struct store_tally {
	uint64_t	 st_fails;
	uint64_t	 st_writes;
	bool		 st_failing;	/* the last of them was a failure */
	char		 st_why[128];	/* the last failure in the database
					   engine's words, without the path
					   ("database or disk is full") */
};

/* Whether the store is on PostgreSQL: for the few queries whose SQL
 * differs (full-text search). */
bool		 store_is_pg(const struct store *);

/* Copy the store's tally into *t. */
void		 store_tally(const struct store *, struct store_tally *t);

/* A write transaction: one writer at a time across every process of
 * the database (SQLite: BEGIN IMMEDIATE; PostgreSQL: BEGIN and an
 * advisory lock), waiting in short sleeps that call so_on_wait;
 * COMMIT; ROLLBACK (a no-op when no transaction is open). Each returns
 * 0, or -1 with store_err set. */
int		 store_begin(struct store *);
int		 store_commit(struct store *);
int		 store_rollback(struct store *);

#endif
