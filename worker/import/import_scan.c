/* import_scan.c - find the WilmerAI discussions, and the file WilmerAI would read for each part, under the folder to import. */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../../common/xmem.h"
#include "import_int.h"

/*
 * WilmerAI's layout (config_utils.get_discussion_folder_path and
 * get_discussion_file_path, vector_db_utils._get_db_path):
 *   <root>/<id>/<name>.json             a discussion
 *   <root>/<sha256(api key)[:16]>/<id>/  a discussion of one API key
 *   <root>/<id>_<name>.json              legacy flat file, read when the
 *                                        folder's own file is missing
 *                                        (never for an API key's folder)
 *   <project>/Public/<id>_vector_memory.db  legacy vector database
 * JSON files are found ignoring case (file_utils.py
 * _resolve_case_insensitive_path), after an exact match of the folder's
 * file and of the flat file; the others only by their exact name.
 */
static const char *const kept[IMP_NFILES] = {
	"memories.json", "condensation_tracker.json", "chat_summary.json",
	"timestamps.json", "context_compactor_old.json",
	"context_compactor_oldest.json", "vision_responses.json",
	"vector_memory.db", "state_document.md", "state_document.md.bak",
};

/* WilmerAI keeps these too; Sluice has no place for them (none left
 * today; a file WilmerAI adds goes here until Sluice keeps it). */
static const char *const not_kept[] = {
	NULL,
};

#define KEYDIR_LEN	16
#define LEGACY_VEC	"_vector_memory.db"

/* A folder's entries, sorted. */
struct names {
	char	**nm_v;
	size_t	  nm_n;
};

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read folder path (an unreadable one reads as empty: -1, errno set). */
static int
names_read(const char *path, struct names *nm)
{
	DIR		*dp;
	struct dirent	*de;

	memset(nm, 0, sizeof(*nm));
	if ((dp = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		nm->nm_v = xreallocarray(nm->nm_v, nm->nm_n + 1,
		    sizeof(*nm->nm_v));
		nm->nm_v[nm->nm_n++] = xstrdup(de->d_name);
	}
	closedir(dp);
	if (nm->nm_n > 1)
		qsort(nm->nm_v, nm->nm_n, sizeof(*nm->nm_v), cmp_name);
	return 0;
}

static void
names_free(struct names *nm)
{
	size_t	 i;

	for (i = 0; i < nm->nm_n; i++)
		free(nm->nm_v[i]);
	free(nm->nm_v);
	memset(nm, 0, sizeof(*nm));
}

/* Whether dir/name is of type kind (S_IFREG, S_IFDIR), links followed. */
static bool
is_kind(const char *dir, const char *name, mode_t kind)
{
	struct stat	 st;
	char		*p = xasprintf("%s/%s", dir, name);
	bool		 r = stat(p, &st) == 0 && (st.st_mode & S_IFMT) == kind;

	free(p);
	return r;
}

/* The regular file of dir (entries nm) called name, exactly or
 * ignoring case; NULL when there is none. Borrowed from nm. */
static const char *
names_file(const struct names *nm, const char *dir, const char *name,
    bool nocase)
{
	size_t	 i;

	for (i = 0; i < nm->nm_n; i++)
		if ((nocase ? strcasecmp(nm->nm_v[i], name) :
		    strcmp(nm->nm_v[i], name)) == 0 &&
		    is_kind(dir, nm->nm_v[i], S_IFREG))
			return nm->nm_v[i];
	return NULL;
}

/* Does dir (entries nm) hold a file WilmerAI keeps for a discussion? */
static bool
has_files(const struct names *nm, const char *dir)
{
	size_t	 i;

	for (i = 0; i < IMP_NFILES; i++)
		if (names_file(nm, dir, kept[i], true) != NULL)
			return true;
	for (i = 0; not_kept[i] != NULL; i++)
		if (names_file(nm, dir, not_kept[i], true) != NULL)
			return true;
	return false;
}

bool
imp_is_keydir(const char *name)
{
	size_t	 i;

	for (i = 0; name[i] != '\0'; i++)
		if (!((name[i] >= '0' && name[i] <= '9') ||
		    (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return i == KEYDIR_LEN;
}

bool
imp_id_safe(const char *id)
{
	if (*id == '\0' || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return false;
	return strpbrk(id, "/\\:") == NULL;
}

static struct imp_disc *
list_find(const struct imp_list *l, const char *key)
{
	size_t	 i;

	for (i = 0; i < l->il_n; i++)
		if (strcmp(l->il_v[i].d_key, key) == 0)
			return &l->il_v[i];
	return NULL;
}

/* The legacy flat file <id>_<name> of root (entries fl), or NULL. */
static char *
flat_file(const struct names *fl, const char *root, const char *id,
    const char *name)
{
	char	*want = xasprintf("%s_%s", id, name), *r = NULL;

	if (names_file(fl, root, want, false) != NULL)
		r = xasprintf("%s/%s", root, want);
	free(want);
	return r;
}

/* Which file WilmerAI reads for each part of d: in folder (entries nm;
 * it may not exist), else the flat file of root (entries fl) when root
 * is not NULL, else the folder's file named in another case. */
static void
disc_files(struct imp_disc *d, const char *folder, const struct names *nm,
    const char *root, const struct names *fl)
{
	const char	*n;
	size_t		 f;

	for (f = 0; f < IMP_NFILES; f++) {
		if ((n = names_file(nm, folder, kept[f], false)) != NULL)
			d->d_file[f] = xasprintf("%s/%s", folder, n);
		else if (f >= IMP_NJSON)
			continue;
		else if (root != NULL && (d->d_file[f] = flat_file(fl, root,
		    d->d_id, kept[f])) != NULL)
			continue;
		else if ((n = names_file(nm, folder, kept[f], true)) != NULL)
			d->d_file[f] = xasprintf("%s/%s", folder, n);
	}
	for (f = 0; not_kept[f] != NULL; f++)
		if ((n = names_file(nm, folder, not_kept[f], true)) != NULL) {
			imp_sep(&d->d_other, ", ");
			buf_adds(&d->d_other, n);
		}
}

/* Add discussion id under key, its files in folder (entries nm) and,
 * for a discussion outside API-key folders, root's flat files (root and
 * fl NULL otherwise). NULL when id is not one WilmerAI accepts. */
static struct imp_disc *
disc_add(struct imp_list *l, const char *key, const char *id,
    const char *folder, const struct names *nm, const char *root,
    const struct names *fl)
{
	struct imp_disc	*d;
	char		*note;

	if (!imp_id_safe(id)) {
		note = xasprintf("left out '%s': not a discussion id WilmerAI "
		    "accepts (it holds '\\' or ':', or is '.' or '..')\n", id);
		if (l->il_notes.b_len == 0 || strstr(l->il_notes.b_data,
		    note) == NULL)	/* one note for several flat files */
			buf_adds(&l->il_notes, note);
		free(note);
		return NULL;
	}
	l->il_v = xreallocarray(l->il_v, l->il_n + 1, sizeof(*l->il_v));
	d = &l->il_v[l->il_n++];
	memset(d, 0, sizeof(*d));
	d->d_key = xstrdup(key);
	d->d_id = xstrdup(id);
	disc_files(d, folder, nm, root, fl);
	return d;
}

/* Folder keydir of root: one API key's discussions, "<16 hex>/<id>". */
static void
scan_keydir(struct imp_list *l, const char *keydir, const char *dir,
    const struct names *nm)
{
	struct names	 sub;
	char		*path, *key;
	size_t		 i;

	for (i = 0; i < nm->nm_n; i++) {
		if (!is_kind(dir, nm->nm_v[i], S_IFDIR))
			continue;
		path = xasprintf("%s/%s", dir, nm->nm_v[i]);
		if (names_read(path, &sub) == -1)
			buf_printf(&l->il_notes, "left out %s: %s\n", path,
			    strerror(errno));
		else if (has_files(&sub, path)) {
			key = xasprintf("%s/%s", keydir, nm->nm_v[i]);
			disc_add(l, key, nm->nm_v[i], path, &sub, NULL, NULL);
			free(key);
		}
		names_free(&sub);
		free(path);
	}
}

/* Folder name of root (entries top): a discussion, or an API key's
 * folder of discussions, or (both) a discussion named like one. */
static void
scan_folder(struct imp_list *l, const char *root, const struct names *top,
    const char *name)
{
	struct names	 nm;
	char		*dir = xasprintf("%s/%s", root, name);

	if (names_read(dir, &nm) == -1)
		buf_printf(&l->il_notes, "left out %s: %s\n", dir,
		    strerror(errno));
	else {
		if (has_files(&nm, dir))
			disc_add(l, name, name, dir, &nm, root, top);
		if (imp_is_keydir(name))
			scan_keydir(l, name, dir, &nm);
	}
	names_free(&nm);
	free(dir);
}

/* A regular file of root named <id>_<kept JSON name>: id, or NULL. */
static char *
flat_id(const char *name)
{
	size_t	 f, n = strlen(name), k;

	for (f = 0; f < IMP_NJSON; f++) {
		k = strlen(kept[f]) + 1;
		if (n > k && name[n - k] == '_' &&
		    strcmp(name + n - k + 1, kept[f]) == 0)
			return xstrndup(name, n - k);
	}
	return NULL;
}

/* A discussion known only by legacy flat files of root (or by a legacy
 * vector database): its folder may still exist without files. */
static struct imp_disc *
add_flat(struct imp_list *l, const char *root, const struct names *top,
    const char *id)
{
	struct imp_disc	*d;
	struct names	 nm;
	char		*dir;

	if ((d = list_find(l, id)) != NULL)
		return d;
	dir = xasprintf("%s/%s", root, id);
	(void)names_read(dir, &nm);
	d = disc_add(l, id, id, dir, &nm, root, top);
	names_free(&nm);
	free(dir);
	return d;
}

/* Before vector databases moved into the discussion folders WilmerAI
 * kept them as Public/<id>_vector_memory.db, beside the default
 * Public/DiscussionIds: looked for when root has that name. */
static void
scan_legacy_vec(struct imp_list *l, const char *root, const struct names *top)
{
	struct imp_disc	*d;
	struct names	 pub;
	char		 real[PATH_MAX], base[PATH_MAX], *public, *id;
	size_t		 i, n, k = strlen(LEGACY_VEC);

	if (realpath(root, real) == NULL)
		return;
	snprintf(base, sizeof(base), "%s", real);
	if (strcmp(basename(base), "DiscussionIds") != 0)
		return;
	public = dirname(real);
	if (names_read(public, &pub) == -1)
		return;
	for (i = 0; i < pub.nm_n; i++) {
		n = strlen(pub.nm_v[i]);
		if (n <= k || strcmp(pub.nm_v[i] + n - k, LEGACY_VEC) != 0 ||
		    !is_kind(public, pub.nm_v[i], S_IFREG))
			continue;
		id = xstrndup(pub.nm_v[i], n - k);
		if ((d = add_flat(l, root, top, id)) != NULL &&
		    d->d_file[IMP_VECTOR] == NULL)
			d->d_file[IMP_VECTOR] = xasprintf("%s/%s", public,
			    pub.nm_v[i]);
		free(id);
	}
	names_free(&pub);
}

/* root is a DiscussionIds folder (entries top). */
static void
scan_root(struct imp_list *l, const char *root, const struct names *top)
{
	char	*id;
	size_t	 i;

	for (i = 0; i < top->nm_n; i++)
		if (is_kind(root, top->nm_v[i], S_IFDIR))
			scan_folder(l, root, top, top->nm_v[i]);
	for (i = 0; i < top->nm_n; i++) {
		if ((id = flat_id(top->nm_v[i])) == NULL ||
		    !is_kind(root, top->nm_v[i], S_IFREG)) {
			free(id);
			continue;
		}
		(void)add_flat(l, root, top, id);
		free(id);
	}
	scan_legacy_vec(l, root, top);
}

/* dir (entries nm) is one discussion's folder: its id is the folder's
 * name, scoped by the parent's when that is an API key's folder. */
static void
scan_single(struct imp_list *l, const char *dir, const struct names *nm)
{
	struct names	 fl;
	char		 real[PATH_MAX], tmp[PATH_MAX], id[PATH_MAX];
	char		 parent[PATH_MAX], pbase[PATH_MAX], *key;

	memset(&fl, 0, sizeof(fl));
	if (realpath(dir, real) == NULL)
		snprintf(real, sizeof(real), "%s", dir);
	snprintf(tmp, sizeof(tmp), "%s", real);
	snprintf(id, sizeof(id), "%s", basename(tmp));
	snprintf(tmp, sizeof(tmp), "%s", real);
	snprintf(parent, sizeof(parent), "%s", dirname(tmp));
	snprintf(tmp, sizeof(tmp), "%s", parent);
	snprintf(pbase, sizeof(pbase), "%s", basename(tmp));
	if (imp_is_keydir(pbase)) {
		key = xasprintf("%s/%s", pbase, id);
		disc_add(l, key, id, dir, nm, NULL, NULL);
		free(key);
		return;
	}
	(void)names_read(parent, &fl);
	disc_add(l, id, id, dir, nm, parent, &fl);
	names_free(&fl);
}

static int
cmp_disc(const void *a, const void *b)
{
	return strcmp(((const struct imp_disc *)a)->d_key,
	    ((const struct imp_disc *)b)->d_key);
}

int
imp_scan(const char *dir, struct imp_list *l, char err[CONF_ERRLEN])
{
	struct names	 top;
	struct stat	 st;

	memset(l, 0, sizeof(*l));
	if (stat(dir, &st) == -1)
		goto fail;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		goto fail;
	}
	if (names_read(dir, &top) == -1)
		goto fail;
	if ((l->il_single = has_files(&top, dir)))
		scan_single(l, dir, &top);
	else
		scan_root(l, dir, &top);
	names_free(&top);
	if (l->il_n > 1)
		qsort(l->il_v, l->il_n, sizeof(*l->il_v), cmp_disc);
	return 0;
fail:
	snprintf(err, CONF_ERRLEN, "%s: %s", dir, strerror(errno));
	return -1;
}

void
imp_list_free(struct imp_list *l)
{
	size_t	 i, f;

	for (i = 0; i < l->il_n; i++) {
		free(l->il_v[i].d_key);
		free(l->il_v[i].d_id);
		for (f = 0; f < IMP_NFILES; f++)
			free(l->il_v[i].d_file[f]);
		buf_free(&l->il_v[i].d_other);
	}
	free(l->il_v);
	buf_free(&l->il_notes);
	memset(l, 0, sizeof(*l));
}
