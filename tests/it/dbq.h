/* dbq.h - integration tests: look into the gateway's shared database (<config dir>/state/sluice.db, or the PostgreSQL database of it_store) from outside. */
#ifndef SLUICE_IT_DBQ_H
#define SLUICE_IT_DBQ_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

/* The first column of sql's first row into *v; -1 with err when the
 * database, its schema or the row is not there (yet). */
int		 it_db_try(struct it *, const char *sql, long long *v, char *err,
		    size_t errlen);

/* The same, failing the test when it cannot. */
long long	 it_db_int(struct it *, const char *sql);

/* The first column of sql's first row as text (NULL for SQL NULL);
 * fails the test when there is no row. Caller frees. */
char		*it_db_text(struct it *, const char *sql);

/* Run sql (any statements); fails the test on error. */
void		 it_db_exec(struct it *, const char *sql);

/* Wait until sql's first value is want (the post-answer work of a
 * request is done); false after timeout_ms. */
bool		 it_db_wait(struct it *, const char *sql, long long want,
		    int timeout_ms);

#endif
