/* export.c - sluice-worker --export-wilmer: each discussion of the database into its WilmerAI folder, written whole under a temporary name, and the report. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "export.h"
#include "export_int.h"
#include "import.h"

/* What the whole run did, for the total line and the exit status. */
struct exp_total {
	long	t_done;
	long	t_failed;
	long	t_kept;		/* left alone: the folder exists */
	struct imp_counts t_c;
	int	t_status;
};

/* Is k one for discussion key: its API key's folder is the key's, or
 * the key has none? */
static bool
fits(const struct imp_key *k, const char *key)
{
	const char	*slash = strchr(key, '/');

	return slash == NULL || strncmp(key, k->ik_dir, 16) == 0;
}

/* The key given that opens the discussion's sealed rows (*sealed: it
 * has some), or NULL. -1 on a database error. */
static int
opening_key(struct store *s, const struct imp_keys *ks, const char *key,
    bool *sealed, const struct imp_key **out)
{
	struct buf	 p = BUF_INIT;
	char		*tok;
	size_t		 i;
	int		 r;

	*out = NULL;
	if ((r = store_seal_token(s, key, &tok)) == -1)
		return -1;
	*sealed = r == 1;
	if (!*sealed)
		return 0;
	for (i = 0; i < ks->ik_n && *out == NULL; i++) {
		buf_reset(&p);
		if (fits(&ks->ik_v[i], key) && fernet_decrypt(&ks->ik_v[i].ik_k,
		    tok, strlen(tok), &p) == 0)
			*out = &ks->ik_v[i];
		if (p.b_data != NULL)
			explicit_bzero(p.b_data, p.b_len);
	}
	free(tok);
	buf_free(&p);
	return 0;
}

/* The key the files are encrypted with: WilmerAI encrypts for a user
 * that sets encryptUsingApiKey, when the request brings an API key. */
static const struct imp_key *
file_key(const struct imp_keys *ks, const char *key, bool sealed,
    const struct imp_key *opener, struct imp_res *r)
{
	const struct imp_key	*only = NULL;
	size_t			 i, n = 0;

	if (sealed)
		return opener != NULL && opener->ik_seal ? opener : NULL;
	if (strchr(key, '/') == NULL)
		return NULL;
	for (i = 0; i < ks->ik_n; i++)
		if (ks->ik_v[i].ik_seal && fits(&ks->ik_v[i], key)) {
			only = &ks->ik_v[i];
			n++;
		}
	if (n <= 1)
		return only;
	imp_sep(&r->ir_skips, "; ");
	buf_adds(&r->ir_skips, "encryption (several users that set "
	    "encryptUsingApiKey have this API key and nothing stored says "
	    "whose the discussion is: written in plain text)");
	return NULL;
}

/* Remove what a run that died left in our temporary folder. */
static void
clear_tmp(const char *tmp)
{
	DIR		*dp;
	struct dirent	*de;
	char		*p;

	if ((dp = opendir(tmp)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		p = xasprintf("%s/%s", tmp, de->d_name);
		(void)unlink(p);
		free(p);
	}
	closedir(dp);
	(void)rmdir(tmp);
}

static int
sync_dir(const char *dir)
{
	int	 fd, r;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	r = fsync(fd);
	close(fd);
	return r;
}

static int
io_fail(struct imp_res *r, const char *what, const char *path)
{
	snprintf(r->ir_err, sizeof(r->ir_err), "%s %s: %s", what, path,
	    strerror(errno));
	r->ir_fail = EX_CANTCREAT;
	return -1;
}

/* The paths of a discussion under out: its parent folder (out, or its
 * API key's folder, created), the temporary folder and the final one. */
struct paths {
	char	*p_parent;
	char	*p_tmp;
	char	*p_final;
};

static void
paths_free(struct paths *p)
{
	free(p->p_parent);
	free(p->p_tmp);
	free(p->p_final);
}

static int
make_paths(const char *out, const char *key, const char *id, struct paths *p,
    struct imp_res *r)
{
	p->p_parent = id != key ? xasprintf("%s/%.16s", out, key) :
	    xstrdup(out);
	p->p_tmp = xasprintf("%s/.%s.sluice-export", p->p_parent, id);
	p->p_final = xasprintf("%s/%s", p->p_parent, id);
	if (mkdir(p->p_parent, 0700) == -1 && errno != EEXIST)
		return io_fail(r, "cannot create", p->p_parent);
	clear_tmp(p->p_tmp);
	if (mkdir(p->p_tmp, 0700) == -1)
		return io_fail(r, "cannot create", p->p_tmp);
	return 0;
}

/* The temporary folder into place, or away when nothing was written. */
static int
settle(const struct paths *p, struct imp_res *r)
{
	if (r->ir_parts.b_len == 0) {
		clear_tmp(p->p_tmp);
		return 0;
	}
	if (sync_dir(p->p_tmp) == -1)
		return io_fail(r, "cannot sync", p->p_tmp);
	if (rename(p->p_tmp, p->p_final) == -1)
		return io_fail(r, "cannot rename into", p->p_final);
	if (sync_dir(p->p_parent) == -1)
		return io_fail(r, "cannot sync", p->p_parent);
	return 0;
}

/* Every file of d read in one snapshot of the database. */
static int
write_files(struct store *s, const struct exp_disc *d, struct imp_res *r)
{
	int	 rc;

	if (store_exec(s, "BEGIN", "") == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
		r->ir_fail = EX_IOERR;
		return -1;
	}
	rc = exp_files(s, d, r) == -1 || exp_vec(s, d, r) == -1 ? -1 : 0;
	(void)store_rollback(s);	/* it only read */
	return rc;
}

/* WilmerAI's discussion id in key ("id" or "<16 hex>/id"), or NULL
 * when it cannot be a folder name WilmerAI accepts. */
static const char *
key_id(const char *key)
{
	const char	*slash = strchr(key, '/');
	char		 dir[17];

	if (slash != NULL && slash - key == 16) {
		memcpy(dir, key, 16);
		dir[16] = '\0';
		if (imp_is_keydir(dir))
			key = slash + 1;
	}
	return imp_id_safe(key) ? key : NULL;
}

/* Discussion key into its folder under out. 1 when left alone (its
 * folder exists), 0 done, -1 failed (r says why). */
static int
export_one(struct store *s, const struct imp_keys *ks, const char *out,
    const char *key, struct imp_res *r)
{
	const struct imp_key	*opener, *fk;
	struct exp_disc		 d;
	struct paths		 p;
	struct stat		 sb;
	const char		*id;
	bool			 sealed;
	int			 rc;

	if ((id = key_id(key)) == NULL) {
		snprintf(r->ir_err, sizeof(r->ir_err), "not a discussion id "
		    "WilmerAI accepts as a folder name (it holds '/', '\\' or "
		    "':', or is '.' or '..')");
		r->ir_fail = EX_DATAERR;
		return -1;
	}
	if (opening_key(s, ks, key, &sealed, &opener) == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
		r->ir_fail = EX_IOERR;
		return -1;
	}
	fk = file_key(ks, key, sealed, opener, r);
	if (make_paths(out, key, id, &p, r) == -1) {
		paths_free(&p);
		return -1;
	}
	if (lstat(p.p_final, &sb) == 0) {
		clear_tmp(p.p_tmp);
		snprintf(r->ir_err, sizeof(r->ir_err), "%s exists", p.p_final);
		paths_free(&p);
		return 1;
	}
	d = (struct exp_disc){ key, id, p.p_tmp, fk != NULL ? &fk->ik_k : NULL };
	store_seal_key(s, opener != NULL ? &opener->ik_k : NULL);
	rc = write_files(s, &d, r);
	store_seal_key(s, NULL);
	if (rc == 0)
		rc = settle(&p, r);
	if (rc == -1)
		clear_tmp(p.p_tmp);
	else if (fk != NULL && r->ir_parts.b_len > 0)
		buf_printf(&r->ir_parts, " (encrypted for user %s, "
		    "encryptUsingApiKey)", fk->ik_user);
	paths_free(&p);
	return rc;
}

/* The line of one discussion, and its share of the total. */
static void
report(const char *key, int rc, const struct imp_res *r, struct exp_total *t)
{
	if (rc == 1) {
		printf("%s: left alone: %s\n", key, r->ir_err);
		t->t_kept++;
	} else if (rc == -1) {
		fprintf(stderr, "error: %s: %s\n", key, r->ir_err);
		printf("%s: FAILED, nothing written: %s\n", key, r->ir_err);
		t->t_failed++;
		if (t->t_status == 0 || r->ir_fail == EX_CANTCREAT)
			t->t_status = r->ir_fail;
	} else {
		imp_print_done(key, r, "nothing to export", &t->t_c);
		t->t_done++;
	}
	fflush(stdout);
}

static void
report_total(const struct exp_total *t)
{
	long	 n = t->t_done + t->t_failed + t->t_kept;

	printf("total: %ld %s (%ld failed, %ld left alone): exported ", n,
	    imp_plural(n, "discussion", "discussions"), t->t_failed,
	    t->t_kept);
	imp_print_counts(&t->t_c);
}

/* Every discussion key, sorted, NULL-terminated (caller frees each and
 * the list), or NULL with store_err set. */
static char **
list_keys(struct store *s, size_t *n)
{
	struct store_q	*st;
	char		**v = NULL;
	int		 r;

	*n = 0;
	if ((st = store_stmt(s, "SELECT key FROM discussions ORDER BY "
	    "key")) == NULL)
		return NULL;
	while ((r = store_step(s, st)) == 1) {
		v = xreallocarray(v, *n + 2, sizeof(*v));
		v[(*n)++] = xstrdup(store_col_text(st, 0));
		v[*n] = NULL;
	}
	if (r == -1) {
		while (*n > 0)
			free(v[--(*n)]);
		free(v);
		return NULL;
	}
	return v != NULL ? v : xcalloc(1, sizeof(*v));
}

static void
run_all(struct store *s, const struct imp_keys *ks, const char *out,
    char **keys, struct exp_total *t)
{
	struct imp_res	 r;
	size_t		 i;
	int		 rc;

	for (i = 0; keys[i] != NULL; i++) {
		memset(&r, 0, sizeof(r));
		rc = export_one(s, ks, out, keys[i], &r);
		report(keys[i], rc, &r, t);
		buf_free(&r.ir_parts);
		buf_free(&r.ir_skips);
	}
}

/* The database, which must exist: an export never creates one. */
static struct store *
open_db(const struct import_opts *o, char **path)
{
	struct store_opts	 so = { .so_sync_full = o->io_sync_full };
	struct store		*s;
	char			 err[STORE_ERRLEN];

	*path = store_where_name(o->io_store);
	if (store_exists(o->io_store) == -1) {
		fprintf(stderr, "error: %s: %s (nothing to export: is "
		    "--state-dir the one the gateway serves with?)\n", *path,
		    strerror(errno));
		return NULL;
	}
	if ((s = store_open(o->io_store, &so, err)) == NULL)
		fprintf(stderr, "error: %s\n", err);
	return s;
}

static int
export_db(struct store *s, const struct imp_keys *ks, const char *db,
    const char *out)
{
	struct exp_total	 t;
	char			**keys;
	size_t			 n, i;

	memset(&t, 0, sizeof(t));
	if ((keys = list_keys(s, &n)) == NULL) {
		fprintf(stderr, "error: %s\n", store_err(s));
		return EX_IOERR;
	}
	printf("exporting %s (%zu %s) into %s\n", db, n, imp_plural((long)n,
	    "discussion", "discussions"), out);
	run_all(s, ks, out, keys, &t);
	report_total(&t);
	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return t.t_status;
}

int
export_run(const struct import_opts *o)
{
	struct imp_keys	 ks;
	struct store	*s;
	struct stat	 sb;
	char		 err[CONF_ERRLEN], *db = NULL;
	int		 r;

	if (imp_keys_load(&ks, o, err) == -1) {
		fprintf(stderr, "error: %s\n", err);
		imp_keys_free(&ks);
		return EX_CONFIG;
	}
	if ((s = open_db(o, &db)) == NULL) {
		r = store_exists(o->io_store) == -1 ? EX_NOINPUT : EX_IOERR;
		free(db);
		imp_keys_free(&ks);
		return r;
	}
	if ((mkdir(o->io_dir, 0700) == -1 && errno != EEXIST) ||
	    stat(o->io_dir, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
		if (errno == 0 || errno == EEXIST)
			errno = ENOTDIR;
		fprintf(stderr, "error: cannot create %s: %s\n", o->io_dir,
		    strerror(errno));
		r = EX_CANTCREAT;
	} else
		r = export_db(s, &ks, db, o->io_dir);
	store_close(s);
	free(db);
	imp_keys_free(&ks);
	return r;
}
