/* store_pg.h - the PostgreSQL driver's text helpers: the store's SQL parameters as $N, a URL without its password. */
#ifndef SLUICE_STORE_PG_H
#define SLUICE_STORE_PG_H

#include <stdbool.h>

/* sql with each '?' and '?N' parameter outside quotes and comments
 * written as $N ('?' is one more than the highest number so far, as in
 * SQLite). *nparams gets the highest number, and *used (when there is
 * one: caller frees) a flag for each number from 1 that sql names.
 * NULL when sql holds no statement or more than one. Caller frees. */
char	*pgsql_params(const char *sql, int *nparams, bool **used);

/* Whether path names a PostgreSQL database: a URL starting with
 * postgresql:// or postgres://. */
bool	 pgurl_is(const char *path);

/* The URL as it may be shown (logs, error text): without the password
 * of its user part (user:PASSWORD@) and without a password=
 * parameter. Caller frees. */
char	*pgurl_name(const char *url);

/* The URL's passwords as written in it (the user part's, then the
 * parameter's; NULL where there is none), for scrubbing messages.
 * Caller frees both with xfree_secret. */
void	 pgurl_secrets(const char *url, char **user_pw, char **param_pw);

#endif
