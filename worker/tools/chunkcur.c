/* chunkcur.c - ConversationChunkProcessor's cursor files: message hashes, one a line, replaced atomically. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/log.h"
#include "../../common/paths.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "../../proto/frame.h"
#include "chunkcur.h"

#define CUR_MAX	(4u << 20)	/* a cursor larger than this is not one */

char *
chunkcur_path(const char *dir, const char *id, const char *discussion)
{
	if (*id == '\0' || *discussion == '\0' || strchr(id, '/') != NULL ||
	    strchr(discussion, '/') != NULL)
		return NULL;
	return xasprintf("%s/chunk_cursor_%s_%s.txt", dir, id, discussion);
}

/* The file's bytes (of a larger one than CUR_MAX, its last CUR_MAX
 * bytes from the first line break in them on: the newest hashes), or
 * -1 (errno set; ENOENT when it is not there). */
static int
slurp(const char *path, struct buf *b)
{
	char		 chunk[4096], *nl;
	struct stat	 st;
	ssize_t		 n;
	int		 fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	errno = 0;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_size > (off_t)CUR_MAX &&
	    lseek(fd, st.st_size - (off_t)CUR_MAX, SEEK_SET) == -1)) {
		e = errno != 0 ? errno : EISDIR;	/* not a file */
		close(fd);
		errno = e;
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 &&
	    b->b_len + (size_t)n <= CUR_MAX)
		buf_add(b, chunk, (size_t)n);
	e = n < 0 ? errno : 0;
	close(fd);
	if (e == 0 && st.st_size > (off_t)CUR_MAX && b->b_len > 0) {
		nl = memchr(b->b_data, '\n', b->b_len);
		buf_drain(b, nl != NULL ? (size_t)(nl - b->b_data) + 1 : b->b_len);
	}
	errno = e;
	return e == 0 ? 0 : -1;
}

void
chunkcur_read(const char *rqid, const char *path, struct chunkcur *c)
{
	struct line { const char *l_p; size_t l_n; } ring[CHUNKCUR_KEEP];
	struct buf	 b = BUF_INIT;
	const char	*p, *end, *nl, *q;
	size_t		 n, seen = 0, i, k;

	memset(c, 0, sizeof(*c));
	if (slurp(path, &b) == -1) {
		if (errno != ENOENT)
			log_warn("[rq %s] chunk cursor %s unreadable; starting "
			    "from the beginning", rqid, path);
		buf_free(&b);
		return;
	}
	for (p = b.b_data, end = p + b.b_len; p != NULL && p < end; p = nl) {
		nl = memchr(p, '\n', (size_t)(end - p));
		q = p;
		n = (size_t)((nl != NULL ? nl : end) - p);
		if (nl != NULL)
			nl++;
		pystr_trim(&q, &n);
		if (n > 0)
			ring[seen++ % CHUNKCUR_KEEP] = (struct line){ q, n };
	}
	k = seen < CHUNKCUR_KEEP ? seen : CHUNKCUR_KEEP;
	c->cc_v = xcalloc(k + 1, sizeof(*c->cc_v));
	for (i = 0; i < k; i++) {
		q = ring[(seen - k + i) % CHUNKCUR_KEEP].l_p;
		c->cc_v[i] = xstrndup(q, ring[(seen - k + i) %
		    CHUNKCUR_KEEP].l_n);
	}
	c->cc_n = k;
	buf_free(&b);
}

int
chunkcur_has(const struct chunkcur *c, const char *hash)
{
	size_t	 i;

	for (i = 0; i < c->cc_n; i++)
		if (strcmp(c->cc_v[i], hash) == 0)
			return 1;
	return 0;
}

/* Drop entry i, keeping the order. */
static void
drop(struct chunkcur *c, size_t i)
{
	free(c->cc_v[i]);
	memmove(&c->cc_v[i], &c->cc_v[i + 1],
	    (c->cc_n - i - 1) * sizeof(*c->cc_v));
	c->cc_n--;
}

void
chunkcur_push(struct chunkcur *c, const char *hash)
{
	size_t	 i;

	for (i = c->cc_n; i-- > 0;)
		if (strcmp(c->cc_v[i], hash) == 0)
			drop(c, i);
	while (c->cc_n >= CHUNKCUR_KEEP)
		drop(c, 0);
	c->cc_v = xreallocarray(c->cc_v, c->cc_n + 1, sizeof(*c->cc_v));
	c->cc_v[c->cc_n++] = xstrdup(hash);
}

int
chunkcur_write(const char *path, const struct chunkcur *c)
{
	struct buf	 b = BUF_INIT;
	char		*tmp;
	size_t		 i;
	int		 fd, rc = -1, e;

	if (paths_make_parents(path, 0777) == -1)
		return -1;
	for (i = 0; i < c->cc_n; i++) {
		if (i > 0)
			buf_addc(&b, '\n');
		buf_adds(&b, c->cc_v[i]);
	}
	tmp = xasprintf("%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) != -1) {
		if (fchmod(fd, 0644) == 0 && frame_write_all(fd, b.b_data != NULL ?
		    b.b_data : "", b.b_len) == 0 && fsync(fd) == 0)
			rc = 0;
		e = errno;
		if (close(fd) == -1 && rc == 0) {
			rc = -1;
			e = errno;
		}
		if (rc == 0 && rename(tmp, path) == -1) {
			rc = -1;
			e = errno;
		}
		if (rc == -1)
			unlink(tmp);
		errno = e;
	}
	free(tmp);
	buf_free(&b);
	return rc;
}

void
chunkcur_clear(struct chunkcur *c)
{
	size_t	 i;

	for (i = 0; i < c->cc_n; i++)
		free(c->cc_v[i]);
	free(c->cc_v);
	memset(c, 0, sizeof(*c));
}
