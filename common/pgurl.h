/* pgurl.h - a PostgreSQL URL: recognised, shown without its password, and the passwords it holds. */
#ifndef SLUICE_PGURL_H
#define SLUICE_PGURL_H

#include <stdbool.h>

/* The environment variable that carries the store's URL from the
 * gateway to its workers (never their command line). */
#define PGURL_ENV	"SLUICE_STORE_URL"

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

/* Whether the URL carries a password (user:PASSWORD@ or password=),
 * even an empty one. */
bool	 pgurl_has_password(const char *url);

#endif
