/* keycache.c - the Fernet keys a worker derived for encryptUsingApiKey, kept by API key and user name, since each derivation costs about 40 ms. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/fernet.h"
#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "keycache.h"

struct keyent {
	char			 ke_id[SHA256_HEXLEN];	/* of the API key; ""
							   free */
	char			*ke_user;		/* NULL: no user */
	struct fernet_key	 ke_key;
	uint64_t		 ke_used;		/* when, in gets */
};

struct keycache {
	struct keyent	 kc_v[KEYCACHE_MAX];
	uint64_t	 kc_gets;
};

struct keycache *
keycache_new(void)
{
	return xcalloc(1, sizeof(struct keycache));
}

static void
forget(struct keyent *e)
{
	fernet_wipe(&e->ke_key);
	explicit_bzero(e->ke_id, sizeof(e->ke_id));
	free(e->ke_user);
	e->ke_user = NULL;
	e->ke_used = 0;
}

void
keycache_free(struct keycache *kc)
{
	size_t	 i;

	if (kc == NULL)
		return;
	for (i = 0; i < KEYCACHE_MAX; i++)
		forget(&kc->kc_v[i]);
	free(kc);
}

static int
same_user(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/* The entry for (id, user), else the free or least recently used one
 * (emptied) with *hit false. */
static struct keyent *
slot(struct keycache *kc, const char *id, const char *user, int *hit)
{
	struct keyent	*e, *old = &kc->kc_v[0];
	size_t		 i;

	for (i = 0; i < KEYCACHE_MAX; i++) {
		e = &kc->kc_v[i];
		if (e->ke_id[0] != '\0' && strcmp(e->ke_id, id) == 0 &&
		    same_user(e->ke_user, user)) {
			*hit = 1;
			return e;
		}
		if (e->ke_used < old->ke_used)
			old = e;
	}
	*hit = 0;
	forget(old);
	return old;
}

const struct fernet_key *
keycache_get(struct keycache *kc, const char *api_key, const char *user)
{
	char		 id[SHA256_HEXLEN];
	struct keyent	*e;
	int		 hit;

	sha256_hex(api_key, strlen(api_key), id);
	e = slot(kc, id, user, &hit);
	if (!hit) {
		if (fernet_derive(&e->ke_key, api_key, user) == -1) {
			explicit_bzero(id, sizeof(id));
			return NULL;
		}
		memcpy(e->ke_id, id, sizeof(id));
		e->ke_user = user != NULL ? xstrdup(user) : NULL;
	}
	explicit_bzero(id, sizeof(id));
	e->ke_used = ++kc->kc_gets;
	return &e->ke_key;
}
