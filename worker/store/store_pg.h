/* store_pg.h - the PostgreSQL driver's text helper: the store's SQL parameters as $N. */
#ifndef SLUICE_STORE_PG_H
#define SLUICE_STORE_PG_H

#include <stdbool.h>

/* sql with each '?' and '?N' parameter outside quotes and comments
 * written as $N ('?' is one more than the highest number so far, as in
 * SQLite). *nparams gets the highest number, and *used (when there is
 * one: caller frees) a flag for each number from 1 that sql names.
 * NULL when sql holds no statement or more than one. Caller frees. */
char	*pgsql_params(const char *sql, int *nparams, bool **used);

#endif
