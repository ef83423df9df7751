/* node_files.c - GetCustomFile and SaveCustomFile, confined to the user's sluiceFileDirectories. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/paths.h"
#include "../../common/uuid.h"
#include "../../common/xmem.h"
#include "../../proto/frame.h"
#include "../core/node.h"

/*
 * Unlike WilmerAI, which opens any path a workflow names, these nodes
 * only touch files under the directories the user file lists in
 * "sluiceFileDirectories" (absolute paths). A relative filepath is taken
 * from the first of them. The check is made on the path with ".." and
 * symbolic links resolved (realpath; for a file that does not exist yet,
 * of its deepest existing directory), and again on the descriptor that
 * is actually opened (/proc/self/fd), so a link swapped in between is
 * caught too. Writes go to a temporary file in the same directory, are
 * fsync()ed and renamed over the target; a symbolic link as the final
 * component is refused, never followed.
 */

#define FILES_KEY	"sluiceFileDirectories"
#define FILES_MAX	(16u << 20)	/* largest file read */

struct roots {
	char	**r_dir;	/* realpath of each listed directory */
	size_t	  r_n;
	char	 *r_first;	/* the first as listed: relative paths' base */
};

/* Where a filepath leads. */
struct fpath {
	char	 *f_dir;	/* realpath of its deepest existing dir */
	char	**f_missing;	/* directories below f_dir still missing */
	size_t	  f_nmissing;
	char	 *f_name;	/* the final component */
};

/* What SaveCustomFile works with. */
struct save {
	const char	*s_mode;
	char		*s_path;	/* filepath after variables */
	char		*s_content;
	char		*s_find;
	struct roots	 s_roots;
	struct fpath	 s_fp;
	struct stat	 s_st;
	bool		 s_exists;
};

static void
roots_free(struct roots *r)
{
	size_t	 i;

	for (i = 0; i < r->r_n; i++)
		free(r->r_dir[i]);
	free(r->r_dir);
	free(r->r_first);
	memset(r, 0, sizeof(*r));
}

/* Read the setting; without it (or with a bad entry) the node fails. */
static int
roots_load(struct node_ctx *x, struct roots *r, struct wresult *res)
{
	json_t		*list = NULL, *e;
	const char	*s;
	char		*rp;
	size_t		 i;

	memset(r, 0, sizeof(*r));
	if (x->nx_user != NULL)
		list = json_object_get(x->nx_user->u_file.jf_root, FILES_KEY);
	if (!json_is_array(list) || json_array_size(list) == 0)
		return node_fail(x, res, 403, "file access is off: list the "
		    "directories this node may use in \"%s\" (absolute "
		    "paths) in the user file", FILES_KEY);
	r->r_dir = xcalloc(json_array_size(list), sizeof(*r->r_dir));
	json_array_foreach(list, i, e) {
		s = json_string_value(e);
		if (s == NULL || s[0] != '/') {
			roots_free(r);
			return node_fail(x, res, 500, "\"%s\" entry %zu in the "
			    "user file is not an absolute path", FILES_KEY,
			    i + 1);
		}
		if (i == 0)
			r->r_first = xstrdup(s);
		if ((rp = realpath(s, NULL)) != NULL)
			r->r_dir[r->r_n++] = rp;
	}
	return 0;
}

static bool
roots_inside(const struct roots *r, const char *path)
{
	size_t	 i, n;

	for (i = 0; i < r->r_n; i++) {
		n = strlen(r->r_dir[i]);
		if (strcmp(r->r_dir[i], "/") == 0 ||
		    (strncmp(path, r->r_dir[i], n) == 0 &&
		    (path[n] == '\0' || path[n] == '/')))
			return true;
	}
	return false;
}

/* The same check on what fd really is. Without /proc there is nothing
 * more to learn and the path check stands alone. */
static bool
roots_inside_fd(const struct roots *r, int fd)
{
	char	 link[64], path[PATH_MAX];
	ssize_t	 n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) == -1)
		return true;
	path[n] = '\0';
	return roots_inside(r, path);
}

static int
files_outside(struct node_ctx *x, struct wresult *res, const char *shown)
{
	return node_fail(x, res, 403, "filepath '%s' leads outside the "
	    "directories listed in \"%s\"", shown, FILES_KEY);
}

/* filepath made absolute: "~/" is $HOME (as WilmerAI expands it), a
 * relative path is under the first listed directory. */
static char *
files_absolute(const struct roots *r, const char *path)
{
	char	*p = paths_expanduser(path), *abs;

	if (p[0] == '/')
		return p;
	abs = xasprintf("%s/%s", r->r_first, p);
	free(p);
	return abs;
}

/* The components of abs without empty and "." ones; they point into
 * *copy. Caller frees both. */
static char **
files_split(const char *abs, char **copy, size_t *n)
{
	char	**v, *save = NULL, *c;

	*copy = xstrdup(abs);
	v = xcalloc(strlen(abs) / 2 + 2, sizeof(*v));
	*n = 0;
	for (c = strtok_r(*copy, "/", &save); c != NULL;
	    c = strtok_r(NULL, "/", &save))
		if (strcmp(c, ".") != 0)
			v[(*n)++] = c;
	return v;
}

/* "/" followed by the first k components. */
static char *
files_join(char *const *v, size_t k)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_addc(&b, '/');
	for (i = 0; i < k; i++) {
		if (i > 0)
			buf_addc(&b, '/');
		buf_adds(&b, v[i]);
	}
	return buf_take(&b);
}

/* The deepest existing directory of v[0..n-1): its realpath, and in *k
 * how many components it took. NULL with errno when resolving fails. */
static char *
files_deepest(char *const *v, size_t n, size_t *k)
{
	char	*pre, *real;
	int	 e;

	for (*k = n - 1;; (*k)--) {
		pre = files_join(v, *k);
		real = realpath(pre, NULL);
		e = errno;
		free(pre);
		if (real != NULL || (e != ENOENT && e != ENOTDIR) || *k == 0)
			break;
	}
	errno = e;
	return real;
}

static void
fpath_free(struct fpath *fp)
{
	size_t	 i;

	for (i = 0; i < fp->f_nmissing; i++)
		free(fp->f_missing[i]);
	free(fp->f_missing);
	free(fp->f_dir);
	free(fp->f_name);
	memset(fp, 0, sizeof(*fp));
}

/* Resolve filepath against r; fails the node (400, 403, 500) when it
 * names no file, leads outside r or cannot be resolved. */
static int
fpath_resolve(struct node_ctx *x, const struct roots *r, const char *path,
    struct fpath *fp, struct wresult *res)
{
	char	*abs = files_absolute(r, path), *copy, **v, *real = NULL;
	size_t	 n, k = 0, i;
	int	 rc = -1;

	memset(fp, 0, sizeof(*fp));
	v = files_split(abs, &copy, &n);
	if (n == 0 || strcmp(v[n - 1], "..") == 0)
		node_fail(x, res, 400, "filepath '%s' does not name a file",
		    path);
	else if ((real = files_deepest(v, n, &k)) == NULL)
		node_fail(x, res, 500, "cannot resolve filepath '%s': %s",
		    path, strerror(errno));
	else if (!roots_inside(r, real))
		files_outside(x, res, path);
	else {
		fp->f_dir = real;
		real = NULL;
		fp->f_name = xstrdup(v[n - 1]);
		fp->f_missing = xcalloc(n - k, sizeof(*fp->f_missing));
		for (i = k; i < n - 1; i++)
			fp->f_missing[fp->f_nmissing++] = xstrdup(v[i]);
		rc = 0;
	}
	free(real);
	free(v);
	free(copy);
	free(abs);
	return rc;
}

/* WilmerAI looks a file up case-insensitively when the exact name is
 * not there: the realpath of a differently cased entry, or NULL. */
static char *
files_casefold(const struct fpath *fp)
{
	DIR		*d = opendir(fp->f_dir);
	struct dirent	*e;
	char		*full, *real = NULL;

	while (d != NULL && real == NULL && (e = readdir(d)) != NULL) {
		if (strcasecmp(e->d_name, fp->f_name) != 0 ||
		    strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		full = xasprintf("%s/%s", fp->f_dir, e->d_name);
		real = realpath(full, NULL);
		free(full);
	}
	if (d != NULL)
		closedir(d);
	errno = ENOENT;
	return real;
}

/* Strict UTF-8 without NUL bytes: what Python decodes and C can carry. */
static bool
files_utf8(const unsigned char *p, size_t n)
{
	size_t		 i = 0, k, len;
	uint32_t	 cp;

	while (i < n) {
		if (p[i] == 0)
			return false;
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (p[i] >= 0xc2 && p[i] <= 0xdf)
			len = 2;
		else if (p[i] >= 0xe0 && p[i] <= 0xef)
			len = 3;
		else if (p[i] >= 0xf0 && p[i] <= 0xf4)
			len = 4;
		else
			return false;
		if (n - i < len)
			return false;
		cp = p[i] & (0x7f >> len);
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 &&
		    cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 ||
		    cp > 0x10ffff)))
			return false;
		i += len;
	}
	return true;
}

/* Python's text mode turns "\r\n" and "\r" into "\n". */
static void
files_newlines(struct buf *b)
{
	size_t	 i, j = 0;

	for (i = 0; i < b->b_len; i++) {
		if (b->b_data[i] != '\r')
			b->b_data[j++] = b->b_data[i];
		else {
			b->b_data[j++] = '\n';
			if (i + 1 < b->b_len && b->b_data[i + 1] == '\n')
				i++;
		}
	}
	b->b_len = j;
	if (b->b_data != NULL)
		b->b_data[j] = '\0';
}

/* Read the regular file fd as Python's read_text() would. Returns 0, or
 * -1 with errno (EFBIG: over FILES_MAX, EILSEQ: not text, EINVAL: not a
 * regular file). Closes fd. */
static int
files_read_text(int fd, struct buf *out)
{
	struct stat	 st;
	char		 chunk[16384];
	ssize_t		 n = 0;
	int		 e = EINVAL;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
			if (n == -1 && errno == EINTR)
				continue;
			e = errno;
			if (n == -1)
				break;
			if (out->b_len + (size_t)n > FILES_MAX) {
				e = EFBIG;
				n = -1;
				break;
			}
			buf_add(out, chunk, (size_t)n);
		}
	else
		n = -1;
	close(fd);
	if (n == 0 && !files_utf8((unsigned char *)out->b_data, out->b_len)) {
		e = EILSEQ;
		n = -1;
	}
	if (n == -1) {
		errno = e;
		return -1;
	}
	files_newlines(out);
	return 0;
}

static const char *
files_why(int e)
{
	switch (e) {
	case EFBIG:
		return "it is larger than 16 MiB";
	case EILSEQ:
		return "it is not UTF-8 text";
	case EINVAL:
		return "it is not a regular file";
	default:
		return strerror(e);
	}
}

/* s with every find (non-empty) replaced by with; returns how many. */
static size_t
files_replace(const char *s, const char *find, const char *with,
    struct buf *out)
{
	size_t		 n = 0, fl = strlen(find);
	const char	*q;

	while ((q = strstr(s, find)) != NULL) {
		buf_add(out, s, (size_t)(q - s));
		buf_adds(out, with);
		s = q + fl;
		n++;
	}
	buf_adds(out, s);
	return n;
}

/* ---- GetCustomFile ---- */

/* Open the file fp names for reading. Returns the descriptor, -2 when
 * there is no such file, or -1 after node_fail. */
static int
getfile_open(struct node_ctx *x, const struct roots *r, const struct fpath *fp,
    const char *shown, struct wresult *res)
{
	char	*full, *real;
	int	 fd, e;

	if (fp->f_nmissing > 0)
		return -2;
	full = xasprintf("%s/%s", fp->f_dir, fp->f_name);
	if ((real = realpath(full, NULL)) == NULL && errno == ENOENT)
		real = files_casefold(fp);
	e = errno;
	free(full);
	if (real == NULL)
		return e == ENOENT || e == ENOTDIR ? -2 : node_fail(x, res, 500,
		    "cannot read '%s': %s", shown, strerror(e));
	if (!roots_inside(r, real)) {
		free(real);
		return files_outside(x, res, shown);
	}
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	e = errno;
	free(real);
	if (fd == -1)
		return e == ENOENT ? -2 : node_fail(x, res, 500,
		    "cannot read '%s': %s", shown, strerror(e));
	if (!roots_inside_fd(r, fd)) {
		close(fd);
		return files_outside(x, res, shown);
	}
	return fd;
}

static bool
files_has(struct node_ctx *x, const char *key)
{
	json_t	*v = json_object_get(x->nx_node, key);

	return v != NULL && !json_is_null(v);
}

/* A count field: a whole number (or a string that is one after
 * variables); 0 for anything else. */
static long
files_count(struct node_ctx *x, const char *key)
{
	json_t	*v = json_object_get(x->nx_node, key);
	char	*s, *end;
	long	 n = 0;

	if (json_is_integer(v))
		return json_integer_value(v) > 0 && json_integer_value(v) <
		    1000000000 ? (long)json_integer_value(v) : 0;
	if (json_is_string(v)) {
		s = node_str(x, key);
		n = strtol(s, &end, 10);
		if (end == s || *end != '\0' || n < 0)
			n = 0;
		free(s);
	}
	return n;
}

/* headCount/tailCount (0 when unset); a bad setting puts WilmerAI's
 * message in out and returns false. */
static bool
getfile_counts(struct node_ctx *x, long *head, long *tail, struct buf *out)
{
	bool	 h = files_has(x, "headCount");
	bool	 t = files_has(x, "tailCount");

	*head = *tail = 0;
	if (h && t)
		buf_adds(out, "GetCustomFile: specify only one of 'headCount' "
		    "or 'tailCount', not both");
	else if (h && (*head = files_count(x, "headCount")) < 1)
		buf_adds(out, "GetCustomFile: 'headCount' must be an integer "
		    ">= 1");
	else if (t && (*tail = files_count(x, "tailCount")) < 1)
		buf_adds(out, "GetCustomFile: 'tailCount' must be an integer "
		    ">= 1");
	else
		return true;
	return false;
}

/* The first head (or last tail) pieces of s split on sep, rejoined. */
static void
getfile_headtail(const char *s, const char *sep, long head, long tail,
    struct buf *out)
{
	size_t		 n = 1, sl = strlen(sep), i, from, to;
	const char	*p, *q;

	for (p = s; (p = strstr(p, sep)) != NULL; p += sl)
		n++;
	from = tail > 0 && (size_t)tail < n ? n - (size_t)tail : 0;
	to = head > 0 && (size_t)head < n ? (size_t)head : n;
	for (i = 0, p = s; i < to; i++, p = q + sl) {
		q = strstr(p, sep);
		if (q == NULL)
			q = p + strlen(p);
		if (i >= from) {
			if (i > from)
				buf_adds(out, sep);
			buf_add(out, p, (size_t)(q - p));
		}
		if (*q == '\0')
			break;
	}
}

/* WilmerAI's load_custom_file after the read: the empty-file message,
 * head/tail on chunkDelimiter, then delimiter -> customReturnDelimiter. */
static void
getfile_shape(struct node_ctx *x, const struct buf *text, long head,
    long tail, struct buf *out)
{
	const char	*delim = node_raw(x, "delimiter");
	const char	*ret = node_raw(x, "customReturnDelimiter");
	const char	*sep = node_raw(x, "chunkDelimiter");
	struct buf	 part = BUF_INIT;
	const char	*s = text->b_data;

	if (text->b_len == 0) {
		buf_adds(out, "No additional information added");
		return;
	}
	if (head > 0 || tail > 0) {
		getfile_headtail(s, sep != NULL && *sep != '\0' ? sep : "\n",
		    head, tail, &part);
		s = part.b_data != NULL ? part.b_data : "";
	}
	if (delim == NULL)
		delim = ret != NULL ? ret : "\n";
	if (ret == NULL)
		ret = delim;
	if (*delim != '\0' && *ret != '\0')
		files_replace(s, delim, ret, out);
	else
		buf_adds(out, s);
	buf_free(&part);
}

static int
getfile_read(struct node_ctx *x, const char *path, long head, long tail,
    struct buf *out, struct wresult *res)
{
	struct roots	 r;
	struct fpath	 fp;
	struct buf	 text = BUF_INIT;
	int		 fd, rc = -1;

	if (roots_load(x, &r, res) == -1)
		return -1;
	if (fpath_resolve(x, &r, path, &fp, res) == -1) {
		roots_free(&r);
		return -1;
	}
	if ((fd = getfile_open(x, &r, &fp, path, res)) == -2) {
		buf_adds(out, "Custom instruction file did not exist");
		rc = 0;
	} else if (fd >= 0 && files_read_text(fd, &text) == -1)
		node_fail(x, res, 500, "cannot read '%s': %s", path,
		    files_why(errno));
	else if (fd >= 0) {
		getfile_shape(x, &text, head, tail, out);
		rc = 0;
	}
	buf_free(&text);
	fpath_free(&fp);
	roots_free(&r);
	return rc;
}

static int
getfile_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	const char	*raw = node_raw(x, "filepath");
	long		 head, tail;
	char		*path;
	int		 rc;

	if (raw == NULL || *raw == '\0') {
		buf_adds(out, "No filepath specified");
		return 0;
	}
	if (!getfile_counts(x, &head, &tail, out))
		return 0;
	path = node_str(x, "filepath");
	rc = getfile_read(x, path, head, tail, out, res);
	free(path);
	return rc;
}

const struct node_type node_getfile = { "GetCustomFile", getfile_run, false };

/* ---- SaveCustomFile ---- */

/* Make (if needed) and open the directory name in dfd, never through a
 * symbolic link. Returns the descriptor, -1 with errno, or -2 when name
 * is a symbolic link. */
static int
save_subdir(int dfd, const char *name)
{
	struct stat	 st;
	int		 fd, e;

	if (mkdirat(dfd, name, 0777) == -1 && errno != EEXIST)
		return -1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd != -1)
		return fd;
	e = errno;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return -2;
	errno = e;
	return -1;
}

/* A descriptor for the file's directory, making the directories missing
 * on the way. Returns it, -1 with errno for an I/O error, or -2 after
 * node_fail. */
static int
save_dir(struct node_ctx *x, struct save *sv, struct wresult *res)
{
	const struct fpath	*fp = &sv->s_fp;
	int			 dfd, nfd, e;
	size_t			 i;

	if ((dfd = open(fp->f_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (!roots_inside_fd(&sv->s_roots, dfd)) {
		close(dfd);
		files_outside(x, res, sv->s_path);
		return -2;
	}
	for (i = 0; i < fp->f_nmissing; i++) {
		if (strcmp(fp->f_missing[i], "..") == 0) {
			close(dfd);
			node_fail(x, res, 400, "filepath '%s' goes up ('..') "
			    "from a directory that does not exist", sv->s_path);
			return -2;
		}
		nfd = save_subdir(dfd, fp->f_missing[i]);
		e = errno;
		close(dfd);
		if ((dfd = nfd) == -2)
			node_fail(x, res, 403, "filepath '%s' passes through a "
			    "symbolic link to a missing directory", sv->s_path);
		if (dfd < 0) {
			errno = e;
			return dfd;
		}
	}
	return dfd;
}

/* Replace name in dfd with data, atomically: a new file beside it,
 * fsync()ed, renamed over it, then the directory fsync()ed. An existing
 * file's permissions carry over. 0, or -1 with errno. */
static int
save_atomic(int dfd, const char *name, const struct buf *data,
    const struct stat *old)
{
	char	 tmp[NAME_MAX + 1], hex[33];
	int	 fd = -1, tries, e;

	for (tries = 0; tries < 16 && fd == -1; tries++) {
		uuid_new_hex(hex);
		snprintf(tmp, sizeof(tmp), ".%.200s.%.12s.tmp", name, hex);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0666);
		if (fd == -1 && errno != EEXIST)
			return -1;
	}
	if (fd == -1)
		return -1;
	if (frame_write_all(fd, data->b_data, data->b_len) == -1 ||
	    (old != NULL && fchmod(fd, old->st_mode & 07777) == -1) ||
	    fsync(fd) == -1)
		goto fail;
	e = close(fd);
	fd = -1;
	if (e == -1 || renameat(dfd, tmp, dfd, name) == -1)
		goto fail;
	(void)fsync(dfd);
	return 0;
fail:
	e = errno;
	if (fd != -1)
		close(fd);
	(void)unlinkat(dfd, tmp, 0);
	errno = e;
	return -1;
}

static bool
save_blank(const char *p, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && !(p[i] >= '\t' && p[i] <= '\r') &&
		    !(p[i] >= 0x1c && p[i] <= 0x1f))
			return false;
	return true;
}

/* Length of the line at p with its line break, as Python's
 * splitlines(keepends=True) cuts (the ASCII breaks). */
static size_t
save_line(const char *p, const char *end)
{
	const char	*q = p;
	char		 c;

	while (q < end) {
		c = *q++;
		if (c == '\r') {
			if (q < end && *q == '\n')
				q++;
			break;
		}
		if (c == '\n' || c == '\v' || c == '\f' ||
		    (c >= 0x1c && c <= 0x1e))
			break;
	}
	return (size_t)(q - p);
}

/* remove: drop the lines containing find; trim (find NULL): drop the
 * blank lines. Returns how many were dropped. */
static size_t
save_lines(const struct buf *old, const char *find, struct buf *out)
{
	const char	*p = old->b_data, *end = p + old->b_len;
	size_t		 n, dropped = 0;
	bool		 drop;

	while (p != NULL && p < end) {
		n = save_line(p, end);
		if (find != NULL)
			drop = memmem(p, n, find, strlen(find)) != NULL;
		else
			drop = save_blank(p, n);
		if (drop)
			dropped++;
		else
			buf_add(out, p, n);
		p += n;
	}
	return dropped;
}

/* The new contents from the old; the number of changes for the edit
 * modes (WilmerAI's return value), 1 for overwrite and append. */
static size_t
save_build(const struct save *sv, const struct buf *old, struct buf *neu)
{
	const char	*m = sv->s_mode;

	if (strcmp(m, "overwrite") == 0 || strcmp(m, "append") == 0) {
		buf_add(neu, old->b_data, old->b_len);
		buf_adds(neu, sv->s_content);
		return 1;
	}
	if (strcmp(m, "replace") == 0)
		return files_replace(old->b_data != NULL ? old->b_data : "",
		    sv->s_find, sv->s_content, neu);
	return save_lines(old, strcmp(m, "remove") == 0 ? sv->s_find : NULL,
	    neu);
}

static void
save_report(const struct save *sv, size_t n, struct buf *out)
{
	const char	*m = sv->s_mode, *p = sv->s_path;

	if (strcmp(m, "overwrite") == 0 || strcmp(m, "append") == 0)
		buf_printf(out, "File successfully saved to %s", p);
	else if (n == 0 && strcmp(m, "trim") == 0)
		buf_printf(out, "No changes made to %s: it has no blank lines",
		    p);
	else if (n == 0)
		buf_printf(out, "No changes made to %s: the find text was not "
		    "found", p);
	else if (strcmp(m, "replace") == 0)
		buf_printf(out, "Replaced %zu occurrence(s) of the find text "
		    "in %s", n, p);
	else if (strcmp(m, "remove") == 0)
		buf_printf(out, "Removed %zu line(s) containing the find text "
		    "from %s", n, p);
	else
		buf_printf(out, "Removed %zu blank line(s) from %s", n, p);
}

/* Look at the target in dfd: a symbolic link fails the node (-2), an
 * I/O problem is -1 with errno. Reads the old text when the mode needs
 * it. */
static int
save_load(struct node_ctx *x, struct save *sv, int dfd, struct buf *old,
    struct wresult *res)
{
	const char	*name = sv->s_fp.f_name;
	int		 fd;

	sv->s_exists = fstatat(dfd, name, &sv->s_st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!sv->s_exists)
		return errno == ENOENT ? 0 : -1;
	if (S_ISLNK(sv->s_st.st_mode)) {
		node_fail(x, res, 403, "filepath '%s' is a symbolic link, "
		    "which SaveCustomFile does not write through", sv->s_path);
		return -2;
	}
	if (!S_ISREG(sv->s_st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if (strcmp(sv->s_mode, "overwrite") == 0)
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	return fd == -1 ? -1 : files_read_text(fd, old);
}

/* Everything after the checks: resolve, read, edit, write, report. */
static int
save_do(struct node_ctx *x, struct save *sv, struct buf *out,
    struct wresult *res)
{
	struct buf	 old = BUF_INIT, neu = BUF_INIT;
	bool		 edit = strcmp(sv->s_mode, "overwrite") != 0 &&
			    strcmp(sv->s_mode, "append") != 0;
	size_t		 n = 0;
	int		 dfd = -1, rc = 0;

	if (edit && sv->s_fp.f_nmissing > 0)
		buf_printf(out, "No changes made to %s: the file does not "
		    "exist", sv->s_path);
	else if ((dfd = save_dir(x, sv, res)) == -2 ||
	    (dfd >= 0 && (rc = save_load(x, sv, dfd, &old, res)) == -2))
		rc = -1;
	else if (dfd == -1 || rc == -1) {
		buf_printf(out, "Error saving file: could not write to %s: %s",
		    sv->s_path, files_why(errno));
		rc = 0;
	} else if (edit && !sv->s_exists)
		buf_printf(out, "No changes made to %s: the file does not "
		    "exist", sv->s_path);
	else if ((n = save_build(sv, &old, &neu)) > 0 &&
	    save_atomic(dfd, sv->s_fp.f_name, &neu, sv->s_exists ?
	    &sv->s_st : NULL) == -1)
		buf_printf(out, "Error saving file: could not write to %s: %s",
		    sv->s_path, strerror(errno));
	else
		save_report(sv, n, out);
	if (dfd >= 0)
		close(dfd);
	buf_free(&old);
	buf_free(&neu);
	return rc;
}

/* WilmerAI's own checks; a problem writes its message and returns false. */
static bool
save_check(struct node_ctx *x, const char *mode, struct buf *out)
{
	const char	*raw = node_raw(x, "filepath");
	bool		 content = files_has(x, "content");
	char		*find;
	bool		 ok = false;

	if (raw == NULL || *raw == '\0')
		buf_adds(out, "No filepath specified");
	else if (strcmp(mode, "overwrite") != 0 && strcmp(mode, "append") != 0 &&
	    strcmp(mode, "replace") != 0 && strcmp(mode, "remove") != 0 &&
	    strcmp(mode, "trim") != 0)
		buf_printf(out, "Error saving file: unknown mode '%s' (use "
		    "overwrite, append, replace, remove or trim)", mode);
	else if (!content && strcmp(mode, "remove") != 0 &&
	    strcmp(mode, "trim") != 0)
		buf_adds(out, "No content specified");
	else if (strcmp(mode, "replace") == 0 || strcmp(mode, "remove") == 0) {
		find = node_str(x, "find");
		if (*find == '\0')
			buf_printf(out, "Error saving file: mode '%s' requires "
			    "a non-empty 'find' value", mode);
		ok = *find != '\0';
		free(find);
	} else
		ok = true;
	return ok;
}

static int
savefile_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct save	 sv;
	int		 rc = -1;

	memset(&sv, 0, sizeof(sv));
	sv.s_mode = node_raw(x, "mode");
	if (sv.s_mode == NULL)
		sv.s_mode = "overwrite";
	if (!save_check(x, sv.s_mode, out))
		return 0;
	if (roots_load(x, &sv.s_roots, res) == -1)
		return -1;
	sv.s_path = node_str(x, "filepath");
	sv.s_content = node_str(x, "content");
	sv.s_find = node_str(x, "find");
	if (node_render_failed(x))
		rc = -1;	/* the engine says why */
	else if (fpath_resolve(x, &sv.s_roots, sv.s_path, &sv.s_fp, res) == 0)
		rc = save_do(x, &sv, out, res);
	fpath_free(&sv.s_fp);
	roots_free(&sv.s_roots);
	free(sv.s_find);
	free(sv.s_content);
	free(sv.s_path);
	return rc;
}

const struct node_type node_savefile = { "SaveCustomFile", savefile_run,
    false };
