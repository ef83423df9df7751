/* store_seal.h - encryptUsingApiKey in the shared store: the key of the request using it, and a discussion row's text kept as a Fernet token (addendum A10). */
#ifndef SLUICE_STORE_SEAL_H
#define SLUICE_STORE_SEAL_H

#include <stdbool.h>

#include "store.h"

struct fernet_key;

/*
 * WilmerAI encrypts a discussion's files with a key derived from the
 * request's API key and the user name (A10.2). Sluice keeps the same
 * data as rows of its store, so it encrypts the text column of those
 * rows instead (the table list is in store_seal.c): each value a Fernet
 * token of its own. Discussion keys, hashes and positions stay plain,
 * so lookups still work.
 */

/* The key the current request's rows are sealed with, or NULL (plain
 * text: no API key, or the user does not encrypt). Borrowed: it must
 * outlive its use; the worker's loop sets it for every request. */
void	store_seal_key(struct store *, const struct fernet_key *);

/* Whether a key is set. */
bool	store_sealing(const struct store *);

/* The value to store for text p: its token when a key is set, else a
 * copy of p. Caller frees. NULL with store_err set when libcrypto
 * fails. */
char	*store_seal(struct store *, const char *p);

/* What stored value v (NULL: read as "") of discussion d holds, into
 * *out (caller frees): the text of a token the key opens, or v itself
 * when it is plain text (written before encryption was on: A10.5's
 * migration path). Returns 0, or -1 with store_err naming d and what
 * ("memories", ...) when v is a token and no key is set, or the key
 * does not open it (another API key or user name). */
int	store_unseal(struct store *, const char *d, const char *what,
	    const char *v, char **out);

/* A token among discussion d's sealed rows (any of the tables above),
 * into *tok (caller frees): 1 found, 0 none (*tok NULL), -1 with
 * store_err set. */
int	store_seal_token(struct store *, const char *d, char **tok);

/* Inside a write transaction, before writing rows of table (one of the
 * sealed tables) for discussion d: when a key is set, refuse (-1, store_err
 * naming d) if a token of d's rows there is one the key does not open,
 * then seal the rows still in plain text (the "re-written encrypted on
 * the next write" of A10.5). Without a key, refuse when d's rows there
 * hold a token. 0 when the write may go on. */
int	store_seal_prepare(struct store *, const char *table, const char *d);

#endif
