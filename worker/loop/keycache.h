/* keycache.h - the Fernet keys a worker derived for encryptUsingApiKey, kept by API key and user name, since each derivation costs about 40 ms. */
#ifndef SLUICE_KEYCACHE_H
#define SLUICE_KEYCACHE_H

struct keycache;
struct fernet_key;

#define KEYCACHE_MAX	8	/* keys kept; the least recently used goes */

/* An empty cache. keycache_free wipes every key it holds and frees it;
 * NULL is a no-op. */
struct keycache	*keycache_new(void);
void		 keycache_free(struct keycache *);

/* The key of api_key for user (A10.2: the user name exactly as
 * configured; NULL: the fixed salt), derived on a miss. Only the
 * SHA-256 of the API key is kept. Borrowed: valid until the next
 * keycache_get or keycache_free. NULL when libcrypto fails. */
const struct fernet_key *keycache_get(struct keycache *, const char *api_key,
		    const char *user);

#endif
