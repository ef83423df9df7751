/* store_int.h - what the store's files share: the struct and the error helper. */
#ifndef SLUICE_STORE_INT_H
#define SLUICE_STORE_INT_H

#include <stdarg.h>

#include "store.h"

struct fernet_key;

/* Why the busy handler stopped waiting, if it did. */
enum store_wait {
	WAIT_NONE,
	WAIT_TIMEOUT,		/* so_busy_ms passed */
	WAIT_STOPPED,		/* so_on_wait said so */
};

struct store_ent {
	char		*se_sql;	/* the cache key: the SQL text */
	sqlite3_stmt	*se_stmt;
};

struct store {
	sqlite3			*s_db;
	char			*s_path;
	struct store_opts	 s_opts;
	char			 s_err[STORE_ERRLEN];
	bool			 s_gave_up;	/* the last failure was WAIT_STOPPED */
	struct store_ent	*s_stmts;	/* store_stmt's cache */
	size_t			 s_nstmts;
	/* the lock wait under way (busy handler) */
	uint64_t		 s_wait_t0;
	uint64_t		 s_wait_ping;	/* last so_on_wait call */
	enum store_wait		 s_wait_end;
	struct store_tally	 s_tally;	/* store_tally() */
	const struct fernet_key	*s_seal;	/* store_seal.c: the request's
						   key, or NULL (plain) */
};

/* Fill s_err with "database PATH: what: SQLite's message" (plus how a
 * lock wait ended, for SQLITE_BUSY). rc is the failing call's result.
 * Returns -1. */
int	store_fail(struct store *, int rc, const char *what);

/* A write went through: counted, and the store is no longer failing. */
void	store_wrote(struct store *);

/* store_exec with a va_list. */
int	store_vexec(struct store *, const char *sql, const char *fmt,
	    va_list);

/* Finalise and forget every cached statement (store_stmt.c). */
void	store_stmts_free(struct store *);

/* Bring the schema to the current version (store_schema.c). Returns 0
 * or -1 with s_err set. */
int	store_migrate(struct store *);

#endif
