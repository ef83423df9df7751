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
		k->ik_seal = false;
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

/* The keys of users that set encryptUsingApiKey. */
static void
mark_sealers(struct imp_keys *ks, const struct import_opts *o)
{
	size_t	 i, j;

	for (i = 0; i < ks->ik_n; i++)
		for (j = 0; j < o->io_nsealers; j++)
			if (ks->ik_v[i].ik_user != NULL &&
			    strcmp(ks->ik_v[i].ik_user, o->io_sealers[j]) == 0)
				ks->ik_v[i].ik_seal = true;
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
	mark_sealers(ks, o);
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

/* Whether k opens one of d's files that is encrypted. */
static bool
opens_one(const struct imp_key *k, const struct imp_disc *d)
{
	struct buf	 b = BUF_INIT, p = BUF_INIT;
	char		 err[CONF_ERRLEN];
	bool		 yes = false;
	size_t		 f;

	for (f = 0; f < IMP_NFILES && !yes; f++) {
		if (f == IMP_VECTOR || d->d_file[f] == NULL)
			continue;
		buf_reset(&b);
		if (imp_read_file(d->d_file[f], &b, err) == -1 ||
		    !imp_encrypted(b.b_data, b.b_len))
			continue;
		yes = fernet_decrypt(&k->ik_k, b.b_data, b.b_len, &p) == 0;
		if (p.b_data != NULL)
			explicit_bzero(p.b_data, p.b_len);
		buf_reset(&p);
	}
	buf_free(&b);
	buf_free(&p);
	return yes;
}

const struct imp_key *
imp_seal_key(const struct imp_disc *d, struct imp_res *r)
{
	const struct imp_key	*k, *only = NULL;
	size_t			 i, n = 0;

	if (d->d_keys == NULL || strchr(d->d_key, '/') == NULL)
		return NULL;
	for (i = 0; i < d->d_keys->ik_n; i++) {
		k = &d->d_keys->ik_v[i];
		if (!k->ik_seal || !fits(k, d))
			continue;
		if (opens_one(k, d))
			return k;
		only = k;
		n++;
	}
	if (n <= 1)
		return only;
	imp_sep(&r->ir_skips, "; ");
	buf_adds(&r->ir_skips, "encryption (several users that set "
	    "encryptUsingApiKey have this API key and no encrypted file says "
	    "whose the discussion is: stored in plain text)");
	return NULL;
}
