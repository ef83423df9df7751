/* json.c - JSON files with positions for errors, and typed field access. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "utf8.h"
#include "xmem.h"

#define JFILE_MAX	(4u << 20)
#define NOT_FOUND	((size_t)-1)

/* A cursor over the text of a file that jansson has already accepted, so
 * the scanner can be simple; it still never reads past n nor loops. */
struct jscan {
	const char	*sc_s;
	size_t		 sc_n;
	size_t		 sc_i;
};

static bool	sc_find(struct jscan *, const json_t *, const json_t *);

/* ---- loading ------------------------------------------------------- */

static int
jfile_adopt(const char *name, char *text, size_t len, struct jfile *jf,
    char err[CONF_ERRLEN])
{
	json_error_t	 je;
	json_t		*root;

	root = json_loadb(text, len, 0, &je);
	if (root == NULL) {
		snprintf(err, CONF_ERRLEN, "%s:%d:%d: %s", name,
		    je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1,
		    je.text);
		free(text);
		errno = EINVAL;
		return -1;
	}
	jf->jf_path = xstrdup(name);
	jf->jf_text = text;
	jf->jf_len = len;
	jf->jf_root = root;
	return 0;
}

int
jfile_parse(const char *name, const char *text, size_t len,
    struct jfile *jf, char err[CONF_ERRLEN])
{
	char	*copy;

	memset(jf, 0, sizeof(*jf));
	copy = xmalloc(len + 1);
	if (len > 0)
		memcpy(copy, text, len);
	copy[len] = '\0';
	return jfile_adopt(name, copy, len, jf, err);
}

/* Read all of fd into b, failing once it holds more than JFILE_MAX;
 * hint is the size fstat gave, so a small file costs a small buffer. */
static int
read_all(int fd, struct buf *b, size_t hint)
{
	size_t	 want = hint + 1;
	ssize_t	 r;

	for (;;) {
		buf_reserve(b, want);
		r = read(fd, b->b_data + b->b_len, want);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		if (r == 0)
			return 0;
		b->b_len += (size_t)r;
		b->b_data[b->b_len] = '\0';
		if (b->b_len > JFILE_MAX) {
			errno = EFBIG;
			return -1;
		}
		want = 65536;
	}
}

/* ---- the file cache -------------------------------------------------
 *
 * Configuration files are read again for every request (WilmerAI's
 * behaviour: an edit takes effect at the next request). The text of a
 * file that has not changed is kept, so a request costs one stat() per
 * file instead of open, fstat, two reads and close. A file is the same
 * when its device, inode, size, mtime and ctime are. Timestamps are
 * only as fine as the kernel's clock tick, so (as git does for its
 * index) a file is kept only once it has been left alone for a second:
 * a file written twice within one tick is never served stale.
 *
 * The parsed tree is kept too, and each load gets a deep copy of it:
 * copying is several times cheaper than jansson's parse (which reads a
 * byte at a time through a callback), and a copy is the caller's to
 * change, as a fresh parse was. The copy keeps the members' order.
 */

#define JCACHE_SLOTS	64
#define JCACHE_MAXLEN	(256u << 10)	/* larger files are not kept */
#define JCACHE_SETTLE_S	1

struct jcache_ent {
	char		*je_path;
	struct stat	 je_st;
	char		*je_text;
	size_t		 je_len;
	json_t		*je_root;	/* parsed at the first reuse */
};

static struct jcache_ent	 jcache[JCACHE_SLOTS];
static unsigned			 jcache_next;
static unsigned long		 jcache_hits;

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	    a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	    a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static struct jcache_ent *
jcache_find(const char *path)
{
	unsigned	 i;

	for (i = 0; i < JCACHE_SLOTS; i++)
		if (jcache[i].je_path != NULL &&
		    strcmp(jcache[i].je_path, path) == 0)
			return &jcache[i];
	return NULL;
}

/* The kept entry of path when the file is unchanged, or NULL (then the
 * caller reads it). */
static struct jcache_ent *
jcache_get(const char *path)
{
	struct jcache_ent	*e = jcache_find(path);
	struct stat		 st;

	if (e == NULL || stat(path, &st) == -1 || !same_file(&st, &e->je_st))
		return NULL;
	jcache_hits++;
	return e;
}

/* *jf from a kept entry: its text copied, its tree parsed once and
 * deep-copied. Returns as jfile_adopt. */
static int
jcache_adopt(struct jcache_ent *e, struct jfile *jf, char err[CONF_ERRLEN])
{
	char	*t = xmalloc(e->je_len + 1);

	memcpy(t, e->je_text, e->je_len + 1);
	if (e->je_root == NULL) {
		if (jfile_adopt(e->je_path, t, e->je_len, jf, err) == -1)
			return -1;
		e->je_root = json_deep_copy(jf->jf_root);	/* ours */
		return 0;
	}
	jf->jf_path = xstrdup(e->je_path);
	jf->jf_text = t;
	jf->jf_len = e->je_len;
	jf->jf_root = json_deep_copy(e->je_root);
	return 0;
}

/* Keep text (len bytes, NUL-terminated) read from path as st describes
 * it, when the file has settled and is small enough. */
static void
jcache_put(const char *path, const struct stat *st, const char *text,
    size_t len)
{
	struct jcache_ent	*e;
	struct timespec		 now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (len > JCACHE_MAXLEN ||
	    now.tv_sec - st->st_mtim.tv_sec <= JCACHE_SETTLE_S ||
	    now.tv_sec - st->st_ctim.tv_sec <= JCACHE_SETTLE_S)
		return;
	if ((e = jcache_find(path)) == NULL) {
		e = &jcache[jcache_next];
		jcache_next = (jcache_next + 1) % JCACHE_SLOTS;
		free(e->je_path);
		e->je_path = xstrdup(path);
	}
	free(e->je_text);
	json_decref(e->je_root);
	e->je_root = NULL;
	e->je_st = *st;
	e->je_text = xmalloc(len + 1);
	memcpy(e->je_text, text, len + 1);
	e->je_len = len;
}

unsigned long
jfile_cache_hits(void)
{
	return jcache_hits;
}

void
jfile_cache_clear(void)
{
	unsigned	 i;

	for (i = 0; i < JCACHE_SLOTS; i++) {
		free(jcache[i].je_path);
		free(jcache[i].je_text);
		json_decref(jcache[i].je_root);
		memset(&jcache[i], 0, sizeof(jcache[i]));
	}
	jcache_next = 0;
}

int
jfile_load(const char *path, struct jfile *jf, char err[CONF_ERRLEN])
{
	struct buf		 b = BUF_INIT;
	struct stat		 st;
	size_t			 len;
	struct jcache_ent	*kept;
	int			 fd, saved;

	memset(jf, 0, sizeof(*jf));
	if ((kept = jcache_get(path)) != NULL)
		return jcache_adopt(kept, jf, err);
	/* O_NONBLOCK: a FIFO put in place of a config must not hang us;
	 * it is refused below, and regular files ignore the flag. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
		saved = errno;
		snprintf(err, CONF_ERRLEN, "%s: %s", path, strerror(saved));
		errno = saved;
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, CONF_ERRLEN, "%s: not a regular file", path);
		errno = EINVAL;
		return -1;
	}
	if (read_all(fd, &b, (size_t)st.st_size) == -1) {
		saved = errno == EFBIG ? EINVAL : errno;
		snprintf(err, CONF_ERRLEN, "%s: %s", path, errno == EFBIG ?
		    "file is larger than 4 MiB" : strerror(errno));
		close(fd);
		buf_free(&b);
		errno = saved;
		return -1;
	}
	close(fd);
	buf_reserve(&b, 0);	/* b_data is never NULL below */
	len = b.b_len;
	if (len == (size_t)st.st_size)
		jcache_put(path, &st, b.b_data, len);
	return jfile_adopt(path, buf_take(&b), len, jf, err);
}

void
jfile_free(struct jfile *jf)
{
	if (jf == NULL)
		return;
	json_decref(jf->jf_root);
	free(jf->jf_path);
	free(jf->jf_text);
	memset(jf, 0, sizeof(*jf));
}

/* ---- positions ----------------------------------------------------- */

static bool
sc_isws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void
sc_ws(struct jscan *sc)
{
	while (sc->sc_i < sc->sc_n && sc_isws(sc->sc_s[sc->sc_i]))
		sc->sc_i++;
}

/* At a '"': move past the closing quote, skipping escapes. */
static void
sc_string(struct jscan *sc)
{
	char	 c;

	sc->sc_i++;
	while (sc->sc_i < sc->sc_n) {
		c = sc->sc_s[sc->sc_i++];
		if (c == '\\')
			sc->sc_i++;
		else if (c == '"')
			break;
	}
	if (sc->sc_i > sc->sc_n)
		sc->sc_i = sc->sc_n;
}

/* Skip one value of any kind; always consumes at least one byte. */
static void
sc_value(struct jscan *sc)
{
	size_t	 start, depth = 0;
	char	 c;

	sc_ws(sc);
	start = sc->sc_i;
	if (sc->sc_i >= sc->sc_n)
		return;
	c = sc->sc_s[sc->sc_i];
	if (c == '"') {
		sc_string(sc);
		return;
	}
	if (c == '{' || c == '[') {
		while (sc->sc_i < sc->sc_n) {
			c = sc->sc_s[sc->sc_i];
			if (c == '"') {
				sc_string(sc);
				continue;
			}
			sc->sc_i++;
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return;
		}
		return;
	}
	while (sc->sc_i < sc->sc_n && !sc_isws(c = sc->sc_s[sc->sc_i]) &&
	    c != ',' && c != '}' && c != ']')
		sc->sc_i++;
	if (sc->sc_i == start)
		sc->sc_i++;
}

/* The decoded text of the string token [ks, ke) (quotes included), or
 * NULL. Caller frees. */
static char *
sc_strdup(const struct jscan *sc, size_t ks, size_t ke)
{
	json_t	*v;
	char	*out;

	if (ke < ks + 2)
		return NULL;
	if (memchr(sc->sc_s + ks + 1, '\\', ke - ks - 2) == NULL)
		return xstrndup(sc->sc_s + ks + 1, ke - ks - 2);
	v = json_loadb(sc->sc_s + ks, ke - ks, JSON_DECODE_ANY, NULL);
	out = json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
	json_decref(v);
	return out;
}

static bool
sc_streq(const struct jscan *sc, size_t ks, size_t ke, const char *key)
{
	char	*s;
	bool	 eq;

	if ((s = sc_strdup(sc, ks, ke)) == NULL)
		return false;
	eq = strcmp(s, key) == 0;
	free(s);
	return eq;
}

/* At an object member: read "key" and the colon. Returns the offset of
 * the key's opening quote, or NOT_FOUND at the end of the object. */
static size_t
sc_member(struct jscan *sc, size_t *ke)
{
	size_t	 ks;

	for (;;) {
		sc_ws(sc);
		if (sc->sc_i >= sc->sc_n)
			return NOT_FOUND;
		if (sc->sc_s[sc->sc_i] == ',') {
			sc->sc_i++;
			continue;
		}
		if (sc->sc_s[sc->sc_i] != '"') {
			if (sc->sc_s[sc->sc_i] == '}')
				sc->sc_i++;
			else
				sc->sc_i = sc->sc_n;
			return NOT_FOUND;
		}
		ks = sc->sc_i;
		sc_string(sc);
		*ke = sc->sc_i;
		sc_ws(sc);
		if (sc->sc_i < sc->sc_n && sc->sc_s[sc->sc_i] == ':')
			sc->sc_i++;
		return ks;
	}
}

/* At an array element: skip separators. False at the end of the array. */
static bool
sc_element(struct jscan *sc)
{
	for (;;) {
		sc_ws(sc);
		if (sc->sc_i >= sc->sc_n)
			return false;
		if (sc->sc_s[sc->sc_i] == ',') {
			sc->sc_i++;
			continue;
		}
		if (sc->sc_s[sc->sc_i] == ']') {
			sc->sc_i++;
			return false;
		}
		return true;
	}
}

/* Members of the object at the cursor (on its '{'); the cursor stays. */
static size_t
sc_count_members(const struct jscan *sc)
{
	struct jscan	 s = *sc;
	size_t		 n = 0, ke;

	s.sc_i++;
	while (sc_member(&s, &ke) != NOT_FOUND) {
		n++;
		sc_value(&s);
	}
	return n;
}

/* True when a later member of the same object, after the value at the
 * cursor, has key too; the cursor stays. */
static bool
sc_key_later(const struct jscan *sc, const char *key)
{
	struct jscan	 s = *sc;
	size_t		 ks, ke;

	sc_value(&s);
	while ((ks = sc_member(&s, &ke)) != NOT_FOUND) {
		if (sc_streq(&s, ks, ke, key))
			return true;
		sc_value(&s);
	}
	return false;
}

/* A key that appears twice in an object keeps its last value (jansson,
 * like Python's json), so only its last occurrence in the text is that
 * value; the lookahead runs only when the object has duplicates. */
static bool
sc_find_obj(struct jscan *sc, const json_t *node, const json_t *want)
{
	const json_t	*child;
	size_t		 ks, ke;
	char		*key;
	bool		 dups = sc_count_members(sc) > json_object_size(node);

	sc->sc_i++;
	while ((ks = sc_member(sc, &ke)) != NOT_FOUND) {
		key = sc_strdup(sc, ks, ke);
		child = key != NULL ? json_object_get(node, key) : NULL;
		if (child != NULL && dups && sc_key_later(sc, key))
			child = NULL;
		free(key);
		if (child == NULL)
			sc_value(sc);
		else if (sc_find(sc, child, want))
			return true;
	}
	return false;
}

static bool
sc_find_arr(struct jscan *sc, const json_t *node, const json_t *want)
{
	const json_t	*child;
	size_t		 idx = 0;

	sc->sc_i++;
	while (sc_element(sc)) {
		child = json_array_get(node, idx++);
		if (child == NULL)
			sc_value(sc);
		else if (sc_find(sc, child, want))
			return true;
	}
	return false;
}

/* Scan the value at the cursor, which jansson parsed into node, for the
 * value want. True with the cursor on want's first byte; false with the
 * whole value consumed. */
static bool
sc_find(struct jscan *sc, const json_t *node, const json_t *want)
{
	char	 c;

	sc_ws(sc);
	if (sc->sc_i >= sc->sc_n)
		return false;
	if (node == want)
		return true;
	c = sc->sc_s[sc->sc_i];
	if (json_is_object(node) && c == '{')
		return sc_find_obj(sc, node, want);
	if (json_is_array(node) && c == '[')
		return sc_find_arr(sc, node, want);
	sc_value(sc);
	return false;
}

/* Put the cursor on the first byte of v (a value inside jf's tree). */
static bool
jf_locate(const struct jfile *jf, const json_t *v, struct jscan *sc)
{
	sc->sc_s = jf->jf_text;
	sc->sc_n = jf->jf_len;
	sc->sc_i = 0;
	if (jf->jf_text == NULL || jf->jf_root == NULL || v == NULL)
		return false;
	return sc_find(sc, jf->jf_root, v);
}

/* 1-based line and column (in characters, as jansson counts) of off. */
static void
jf_linecol(const struct jfile *jf, size_t off, int *line, int *col)
{
	size_t	 i;
	int	 l = 1, c = 1;

	if (jf->jf_text == NULL || off == NOT_FOUND || off > jf->jf_len)
		off = 0;
	for (i = 0; i < off; i++) {
		if (jf->jf_text[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)jf->jf_text[i] & 0xc0) != 0x80)
			c++;
	}
	*line = l;
	*col = c;
}

/* Offset of the string token "key" used as a key (followed by optional
 * whitespace and ':'); else of the first string token equal to key;
 * else NOT_FOUND. String contents are skipped, never searched. */
static size_t
jf_keyoff(const struct jfile *jf, const char *key)
{
	struct jscan	 sc = { jf->jf_text, jf->jf_len, 0 };
	size_t		 ks, ke, any = NOT_FOUND;

	if (jf->jf_text == NULL || key == NULL)
		return NOT_FOUND;
	while (sc.sc_i < sc.sc_n) {
		if (sc.sc_s[sc.sc_i] != '"') {
			sc.sc_i++;
			continue;
		}
		ks = sc.sc_i;
		sc_string(&sc);
		ke = sc.sc_i;
		if (!sc_streq(&sc, ks, ke, key))
			continue;
		sc_ws(&sc);
		if (sc.sc_i < sc.sc_n && sc.sc_s[sc.sc_i] == ':')
			return ks;
		if (any == NOT_FOUND)
			any = ks;
	}
	return any;
}

void
jfile_keypos(const struct jfile *jf, const char *key, int *line, int *col)
{
	jf_linecol(jf, jf_keyoff(jf, key), line, col);
}

void
jfile_memberpos(const struct jfile *jf, const json_t *obj, const char *key,
    int *line, int *col)
{
	struct jscan	 sc;
	size_t		 ks, ke, found = NOT_FOUND;

	if (key != NULL && json_is_object(obj) && jf_locate(jf, obj, &sc) &&
	    sc.sc_s[sc.sc_i] == '{') {
		sc.sc_i++;
		while ((ks = sc_member(&sc, &ke)) != NOT_FOUND) {
			if (sc_streq(&sc, ks, ke, key))
				found = ks;
			sc_value(&sc);
		}
	}
	if (found == NOT_FOUND)
		found = jf_keyoff(jf, key);
	jf_linecol(jf, found, line, col);
}

void
jfile_elempos(const struct jfile *jf, const json_t *arr, size_t idx,
    int *line, int *col)
{
	struct jscan	 sc;
	size_t		 at = NOT_FOUND, n = 0;

	if (json_is_array(arr) && jf_locate(jf, arr, &sc) &&
	    sc.sc_s[sc.sc_i] == '[') {
		at = sc.sc_i;
		sc.sc_i++;
		while (sc_element(&sc)) {
			if (n++ == idx) {
				at = sc.sc_i;
				break;
			}
			sc_value(&sc);
		}
	}
	jf_linecol(jf, at, line, col);
}

/* ---- errors -------------------------------------------------------- */

static int
jf_verr(const struct jfile *jf, int line, int col, char err[CONF_ERRLEN],
    const char *fmt, va_list ap)
{
	int	 n;

	n = snprintf(err, CONF_ERRLEN, "%s:%d:%d: ",
	    jf->jf_path != NULL ? jf->jf_path : "(none)", line, col);
	if (n < 0)
		n = 0;
	if (n < CONF_ERRLEN)
		vsnprintf(err + n, CONF_ERRLEN - (size_t)n, fmt, ap);
	return -1;
}

int
jfile_err(const struct jfile *jf, const char *key, char err[CONF_ERRLEN],
    const char *fmt, ...)
{
	va_list	 ap;
	int	 line = 1, col = 1;

	if (key != NULL)
		jfile_keypos(jf, key, &line, &col);
	va_start(ap, fmt);
	jf_verr(jf, line, col, err, fmt, ap);
	va_end(ap);
	return -1;
}

int
jfile_err_member(const struct jfile *jf, const json_t *obj, const char *key,
    char err[CONF_ERRLEN], const char *fmt, ...)
{
	va_list	 ap;
	int	 line, col;

	jfile_memberpos(jf, obj, key, &line, &col);
	va_start(ap, fmt);
	jf_verr(jf, line, col, err, fmt, ap);
	va_end(ap);
	return -1;
}

int
jfile_err_elem(const struct jfile *jf, const json_t *arr, size_t idx,
    char err[CONF_ERRLEN], const char *fmt, ...)
{
	va_list	 ap;
	int	 line, col;

	jfile_elempos(jf, arr, idx, &line, &col);
	va_start(ap, fmt);
	jf_verr(jf, line, col, err, fmt, ap);
	va_end(ap);
	return -1;
}

const char *
json_type_desc(const json_t *v)
{
	if (v == NULL)
		return "nothing";
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "true or false";
	case JSON_NULL:
	default:
		return "null";
	}
}

/* ---- typed getters ------------------------------------------------- */

/* The member, or NULL when missing or JSON null (both mean "default"). */
static json_t *
jget(json_t *obj, const char *key)
{
	json_t	*v = json_object_get(obj, key);

	return json_is_null(v) ? NULL : v;
}

int
jget_str(const struct jfile *jf, json_t *obj, const char *key,
    const char *def, const char **out, char err[CONF_ERRLEN])
{
	json_t	*v = jget(obj, key);

	*out = def;
	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return jfile_err_member(jf, obj, key, err,
		    "'%s' must be a string, not %s", key, json_type_desc(v));
	*out = json_string_value(v);
	return 0;
}

int
jget_bool(const struct jfile *jf, json_t *obj, const char *key,
    bool def, bool *out, char err[CONF_ERRLEN])
{
	json_t	*v = jget(obj, key);

	*out = def;
	if (v == NULL)
		return 0;
	if (!json_is_boolean(v))
		return jfile_err_member(jf, obj, key, err,
		    "'%s' must be true or false, not %s", key,
		    json_type_desc(v));
	*out = json_is_true(v);
	return 0;
}

int
jget_int(const struct jfile *jf, json_t *obj, const char *key,
    long def, long *out, char err[CONF_ERRLEN])
{
	json_t		*v = jget(obj, key);
	double		 d;
	json_int_t	 i;

	*out = def;
	if (v == NULL)
		return 0;
	if (json_is_integer(v)) {
		i = json_integer_value(v);
#if LLONG_MAX > LONG_MAX
		if (i >= LONG_MIN && i <= LONG_MAX)
#endif
		{
			*out = (long)i;
			return 0;
		}
	} else if (json_is_real(v)) {
		d = json_real_value(v);
		/* Bounds first (a double cannot hold LONG_MAX exactly), so
		 * the cast that tests for a fraction is defined. */
		if (d >= (double)LONG_MIN / 2 && d <= (double)LONG_MAX / 2 &&
		    d == (double)(long)d) {
			*out = (long)d;
			return 0;
		}
	}
	return jfile_err_member(jf, obj, key, err,
	    "'%s' must be an integer, not %s", key, json_is_number(v) ?
	    "a fraction or an out-of-range number" : json_type_desc(v));
}

int
jget_num(const struct jfile *jf, json_t *obj, const char *key,
    double def, double *out, char err[CONF_ERRLEN])
{
	json_t	*v = jget(obj, key);

	*out = def;
	if (v == NULL)
		return 0;
	if (!json_is_number(v))
		return jfile_err_member(jf, obj, key, err,
		    "'%s' must be a number, not %s", key, json_type_desc(v));
	*out = json_number_value(v);
	return 0;
}

int
jget_strlist(const struct jfile *jf, json_t *obj, const char *key,
    const char ***out, char err[CONF_ERRLEN])
{
	json_t		 *v = jget(obj, key), *e;
	const char	**list;
	size_t		  i, n;

	*out = NULL;
	if (v != NULL && !json_is_string(v) && !json_is_array(v))
		return jfile_err_member(jf, obj, key, err,
		    "'%s' must be a string or a list of strings, not %s", key,
		    json_type_desc(v));
	if (json_is_array(v))
		n = json_array_size(v);
	else
		n = v != NULL ? 1 : 0;
	list = xcalloc(n + 1, sizeof(*list));
	if (json_is_string(v))
		list[0] = json_string_value(v);
	for (i = 0; json_is_array(v) && i < n; i++) {
		e = json_array_get(v, i);
		if (!json_is_string(e)) {
			free(list);
			return jfile_err_elem(jf, v, i, err, "'%s' must be a "
			    "list of strings; item %zu is %s", key, i + 1,
			    json_type_desc(e));
		}
		list[i] = json_string_value(e);
	}
	*out = list;
	return 0;
}

/* ---- escaping ------------------------------------------------------ */

static void
escape_ctl(struct buf *out, unsigned char c)
{
	switch (c) {
	case '\b':
		buf_add(out, "\\b", 2);
		break;
	case '\f':
		buf_add(out, "\\f", 2);
		break;
	case '\n':
		buf_add(out, "\\n", 2);
		break;
	case '\r':
		buf_add(out, "\\r", 2);
		break;
	case '\t':
		buf_add(out, "\\t", 2);
		break;
	default:
		buf_printf(out, "\\u%04x", c);
		break;
	}
}

void
json_escape(struct buf *out, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, run, len;

	buf_reserve(out, n);
	while (i < n) {
		/* Copy plain printable ASCII in one go. */
		for (run = i; run < n && p[run] >= 0x20 && p[run] < 0x7f &&
		    p[run] != '"' && p[run] != '\\'; run++)
			;
		buf_add(out, s + i, run - i);
		if ((i = run) >= n)
			break;
		if (p[i] == '"' || p[i] == '\\') {
			buf_addc(out, '\\');
			buf_addc(out, (char)p[i++]);
		} else if (p[i] < 0x20 || p[i] == 0x7f)
			escape_ctl(out, p[i++]);
		else {
			if (utf8_next(s + i, n - i, &len) != UTF8_BAD)
				buf_add(out, s + i, len);
			else
				buf_add(out, "\xef\xbf\xbd", 3);
			i += len;
		}
	}
}
