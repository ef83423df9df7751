/* import_crypt.c - WilmerAI's encrypted discussion files (encryptUsingApiKey): the keys the import is given, and a file's text through them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "import.h"
#include "import_int.h"

#define KEYS_MAX	64	/* API keys times user names */

/* Add the keys of api_key (one per user name) to ks. */
static int
add_key(struct imp_keys *ks, const char *api_key, const char *const *users,
    size_t nusers, char err[CONF_ERRLEN])
{
	struct imp_key	*k;
	size_t		 i;

	for (i = 0; i < nusers; i++) {
		if (ks->ik_n == KEYS_MAX) {
			snprintf(err, CONF_ERRLEN, "more than %d API key and "
			    "user pairs", KEYS_MAX);
			return -1;
		}
		k = &ks->ik_v[ks->ik_n];
		fernet_dir(api_key, k->ik_dir);
		if (fernet_derive(&k->ik_k, api_key, users[i]) == -1) {
			snprintf(err, CONF_ERRLEN, "libcrypto failed to derive "
			    "a key");
			return -1;
		}
		k->ik_user = users[i];
		ks->ik_n++;
	}
	return 0;
}

/* The API key in path: its first line, Python-stripped. Wiped and
 * freed by the caller. */
static char *
read_key(const char *path, char err[CONF_ERRLEN])
{
	struct buf	 b = BUF_INIT;
	const char	*p;
	size_t		 n;
	char		*s;

	if (imp_read_file(path, &b, err) == -1) {
		buf_free(&b);
		return NULL;
	}
	p = b.b_data;
	n = strcspn(p, "\n");
	pystr_trim(&p, &n);
	s = n > 0 ? xstrndup(p, n) : NULL;
	if (s == NULL)
		snprintf(err, CONF_ERRLEN, "%s: no API key in the file", path);
	explicit_bzero(b.b_data, b.b_len);
	buf_free(&b);
	return s;
}

/* One key, then wiped. */
static int
add_text(struct imp_keys *ks, char *key, const char *const *users,
    size_t nusers, char err[CONF_ERRLEN])
{
	int	 r = add_key(ks, key, users, nusers, err);

	explicit_bzero(key, strlen(key));
	free(key);
	return r;
}

int
imp_keys_load(struct imp_keys *ks, const struct import_opts *o,
    char err[CONF_ERRLEN])
{
	static const char *const	 none[] = { NULL };
	const char *const		*users = o->io_nusers > 0 ?
					    o->io_users : none;
	size_t				 nu = o->io_nusers > 0 ?
					    o->io_nusers : 1, i;
	const char			*env = getenv("WILMER_API_KEY");
	char				*k;

	memset(ks, 0, sizeof(*ks));
	ks->ik_v = xcalloc(KEYS_MAX, sizeof(*ks->ik_v));
	for (i = 0; i < o->io_nkey_files; i++) {
		if ((k = read_key(o->io_key_files[i], err)) == NULL ||
		    add_text(ks, k, users, nu, err) == -1)
			return -1;
	}
	if (env != NULL && *env != '\0') {
		const char	*p = env;
		size_t		 n = strlen(env);

		pystr_trim(&p, &n);
		if (n > 0 && add_text(ks, xstrndup(p, n), users, nu, err) == -1)
			return -1;
	}
	return 0;
}

void
imp_keys_free(struct imp_keys *ks)
{
	size_t	 i;

	for (i = 0; i < ks->ik_n; i++)
		fernet_wipe(&ks->ik_v[i].ik_k);
	free(ks->ik_v);
	memset(ks, 0, sizeof(*ks));
}

/* Is k one for d: its API key's folder is d's, or d has none (a
 * discussion folder given on its own)? */
static bool
fits(const struct imp_key *k, const struct imp_disc *d)
{
	const char	*slash = strchr(d->d_key, '/');

	return slash == NULL || ((size_t)(slash - d->d_key) == 16 &&
	    strncmp(d->d_key, k->ik_dir, 16) == 0);
}

int
imp_plain(const struct imp_disc *d, const char *path, struct buf *b,
    struct imp_res *r)
{
	struct buf	 p = BUF_INIT;
	size_t		 i, tried = 0;

	if (!imp_encrypted(b->b_data, b->b_len))
		return 1;
	for (i = 0; d->d_keys != NULL && i < d->d_keys->ik_n; i++) {
		if (!fits(&d->d_keys->ik_v[i], d))
			continue;
		tried++;
		if (fernet_decrypt(&d->d_keys->ik_v[i].ik_k, b->b_data,
		    b->b_len, &p) == 0) {
			buf_free(b);
			*b = p;
			return 1;
		}
	}
	imp_note_encrypted(r, path, tried > 0);
	return 0;
}
