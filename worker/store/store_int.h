/* store_int.h - what the store's files share: the struct, the driver ops table and the error helper. */
#ifndef SLUICE_STORE_INT_H
#define SLUICE_STORE_INT_H

#include <stdarg.h>

#include "store.h"
#include "store_stmt.h"

struct fernet_key;

/* Why the wait for a lock stopped, if it did. */
enum store_wait {
	WAIT_NONE,
	WAIT_TIMEOUT,		/* so_busy_ms passed */
	WAIT_STOPPED,		/* so_on_wait said so */
};

/*
 * The driver: the one place that calls a database library. store.c,
 * store_stmt.c and the files above them (cache, locks, seal, schema)
 * call these ops and nothing else; store_sqlite.c implements them
 * with SQLite, store_pg.c with libpq (PostgreSQL). What a driver must
 * honour is written on each op.
 *
 * Conventions. A connection is s->s_conn, a statement a void * the
 * driver made (dr_prepare). An op that can fail returns 0, or an error
 * code of the driver's own (non-zero, never -1 unless said); the caller
 * turns it into s_err with store_fail(), which asks dr_errmsg for the
 * text and dr_busy whether it was a lock wait. The driver keeps what
 * dr_errmsg needs (SQLite: the connection's last error; libpq: the
 * last PGresult's or the connection's message).
 *
 * Statements. SQL uses '?' and '?N' parameters (SQLite's and the
 * store's dialect; a driver whose server wants $1.. rewrites them at
 * prepare, '?N' as $N).
 * Binding happens before the first dr_step; dr_step runs the statement
 * then walks its rows: a driver that fetches a whole result at once
 * (libpq: PQexecPrepared, then the PGresult) runs it at the first
 * dr_step and walks the fetched rows after. Column accessors read the
 * current row and must keep working until the next dr_step or
 * dr_reset; text and blobs they return are the driver's (borrowed).
 */
/* The SQL a driver speaks where the two differ (the schema's steps,
 * store_dialect() for callers). */
enum store_dialect {
	DIALECT_SQLITE,
	DIALECT_PG,
};

struct store_driver {
	const char	*dr_name;		/* "sqlite", "postgresql" */
	enum store_dialect dr_dialect;
	/* The database's name for messages, from store_open's path
	 * (libpq: the URL without its password). Caller frees. */
	char		*(*dr_show)(const char *path);

	/* Connect to path (SQLite: a file, created when missing) into
	 * s->s_conn. On failure s_conn may be set (dr_errmsg then
	 * explains) or NULL. Then dr_setup: the connection's settings
	 * (SQLite: WAL, synchronous, foreign keys; it may wait through
	 * store_wait_more). 0, an error code with *what the setting that
	 * failed, or -1 with s_err set. Drivers call nothing of the store
	 * but store_wait_more (store_wait.c): the store calls them. */
	int		(*dr_open)(struct store *, const char *path);
	int		(*dr_setup)(struct store *, const char **what);
	/* Close s_conn (NULL: no-op) and set it to NULL; an open
	 * transaction is lost. Returns 0 or an error code (dr_errmsg
	 * then gives its text without a connection). */
	int		(*dr_close)(struct store *);

	/* Prepare exactly one statement into *st. Returns 0, an error
	 * code, or STORE_NOT_ONE when sql holds no statement or more
	 * than one. */
	int		(*dr_prepare)(struct store *, const char *sql, void **st);
	void		(*dr_finalize)(void *st);
	/* Back to before the first step (libpq: the fetched result
	 * freed); clear: the bindings too. Never fails. */
	void		(*dr_reset)(void *st, bool clear);

	/* Bind parameter i (from 1). Text and blobs are copied. Return
	 * 0 or an error code. */
	int		(*dr_bind_text)(void *st, int i, const char *t);
	int		(*dr_bind_int)(void *st, int i, int64_t v);
	int		(*dr_bind_null)(void *st, int i);
	int		(*dr_bind_blob)(void *st, int i, const void *p,
			    size_t n);

	/* 1 a row is current, 0 done, -1 error with *rc the code. The
	 * caller resets after 0 or -1. Waiting for a lock happens in
	 * here (SQLite: its busy handler, store_wait_more). */
	int		(*dr_step)(void *st, int *rc);

	/* The current row's columns, as store_col_* (store_stmt.h). */
	int		(*dr_col_count)(void *st);
	enum store_type	(*dr_col_type)(void *st, int col);
	const char	*(*dr_col_text)(void *st, int col);
	int64_t		(*dr_col_int)(void *st, int col);
	double		(*dr_col_double)(void *st, int col);
	const void	*(*dr_col_blob)(void *st, int col, size_t *len);

	/* Rows st's last run itself inserted, updated or deleted, once
	 * it is done; 0 for a statement that is no INSERT, UPDATE or
	 * DELETE, or changed nothing (libpq: PQcmdTuples). */
	int		(*dr_changes)(struct store *, void *st);
	/* The rowid of the connection's last insert (0: none). A driver
	 * without rowids may answer 0: callers that need an id should
	 * ask with INSERT ... RETURNING, which both backends have. */
	int64_t		(*dr_last_rowid)(const struct store *);

	/* The message for error code rc (the connection's last error
	 * when it has one). Borrowed, valid until the next op. */
	const char	*(*dr_errmsg)(const struct store *, int rc);
	/* Whether rc means a lock wait failed (SQLite: SQLITE_BUSY;
	 * libpq: lock_not_available). store_fail then says how the
	 * wait ended. */
	bool		(*dr_busy)(int rc);
	/* Whether a transaction is open on the connection. */
	bool		(*dr_in_tx)(const struct store *);
	/* Open a write transaction: one writer at a time across every
	 * process of the database, waiting through store_wait_more
	 * (SQLite: BEGIN IMMEDIATE and its busy handler; libpq: BEGIN,
	 * then pg_try_advisory_xact_lock polled). A wait that ends
	 * returns the code dr_busy says is one, the transaction closed. 0
	 * or an error code. */
	int		(*dr_begin)(struct store *);

	/* Run a script of statements without parameters or rows wanted
	 * (the schema's migration steps, ROLLBACK at close). 0 or an
	 * error code. */
	int		(*dr_script)(struct store *, const char *sql);
	/* The schema version the database says it has (0: new), and
	 * setting it, inside the migration's transaction (SQLite: PRAGMA
	 * user_version; libpq: a one-row table). 0 or an error code. */
	int		(*dr_version)(struct store *, int *v);
	int		(*dr_set_version)(struct store *, int v);
	/* store_func: register fn as SQL function name(text, integer).
	 * 0 or an error code (a driver that cannot call into C returns
	 * one). */
	int		(*dr_func)(struct store *, const char *name,
			    store_fn *fn);

	/* Workflow locks (store_lock.c) record their holder, so that a
	 * lock whose holder died is free before it expires. dr_holder:
	 * the holder a lock taken now on this connection records, as two
	 * numbers (SQLite: the process's pid and start time; libpq: the
	 * session's server pid and its key, an advisory lock the session
	 * holds, kept across reconnects). dr_holder_gone, inside a write
	 * transaction: whether the holder (id, key) a row records can no
	 * longer hold it, into *gone. An unknown holder (id or key 0)
	 * and this connection's own are never gone; neither is one whose
	 * liveness cannot be told. 0 or an error code. */
	void		(*dr_holder)(struct store *, int64_t *id,
			    int64_t *key);
	int		(*dr_holder_gone)(struct store *, int64_t id,
			    int64_t key, bool *gone);
};

#define STORE_NOT_ONE	(-1)	/* dr_prepare: not exactly one statement */

extern const struct store_driver	store_sqlite;
extern const struct store_driver	store_pg;	/* store_pg.c */

/* PostgreSQL's schema steps, in step with SQLite's
 * (store_schema_pg.c). */
extern const char *const	 store_pg_steps[];
extern const int		 store_pg_nsteps;

/* A cached query (store_stmt): its SQL text (the cache key) and the
 * driver's statement. Each is allocated alone, so a query stays put
 * while the cache grows. */
struct store_q {
	struct store	*q_s;
	char		*q_sql;
	void		*q_st;
};

struct store {
	const struct store_driver *s_drv;
	void			*s_conn;	/* the driver's connection */
	char			*s_path;
	struct store_opts	 s_opts;
	char			 s_err[STORE_ERRLEN];
	bool			 s_gave_up;	/* the last failure was WAIT_STOPPED */
	struct store_q		**s_stmts;	/* store_stmt's cache */
	size_t			 s_nstmts;
	char			**s_funcs;	/* store_func's names */
	size_t			 s_nfuncs;
	/* the lock wait under way */
	uint64_t		 s_wait_t0;
	uint64_t		 s_wait_ping;	/* last so_on_wait call */
	enum store_wait		 s_wait_end;
	struct store_tally	 s_tally;	/* store_tally() */
	const struct fernet_key	*s_seal;	/* store_seal.c: the request's
						   key, or NULL (plain) */
};

/* Fill s_err with "database PATH: what: the driver's message" (plus how
 * a lock wait ended, when rc is a lock wait's). rc is the failing
 * op's error code. Returns -1. */
int	store_fail(struct store *, int rc, const char *what);

/* A write went through: counted, and the store is no longer failing. */
void	store_wrote(struct store *);

/* One more round of a lock wait that began at t0 (count: the rounds
 * before): 1 after a short sleep, 0 when it must end (s_wait_end says
 * why: so_busy_ms passed, or so_on_wait said stop; so_on_wait runs
 * every STORE_WAIT_MS, *ping the last time). For drivers that wait. */
int	store_wait_more(struct store *, uint64_t t0, uint64_t *ping,
	    int count);

/* store_exec with a va_list. */
int	store_vexec(struct store *, const char *sql, const char *fmt,
	    va_list);

/* Finalise and forget every cached query, and the names store_func
 * registered (store_stmt.c). */
void	store_stmts_free(struct store *);

/* Bring the schema to the current version (store_schema.c). Returns 0
 * or -1 with s_err set. */
int	store_migrate(struct store *);

#endif
