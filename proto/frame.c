/* frame.c - 4-byte big-endian length framing; knows nothing of payloads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/xmem.h"
#include "frame.h"

#define FRAME_RD_MINCAP	(64 * 1024)

void
frame_hdr_put(unsigned char h[FRAME_HDRLEN], uint32_t len)
{
	h[0] = (unsigned char)(len >> 24);
	h[1] = (unsigned char)(len >> 16);
	h[2] = (unsigned char)(len >> 8);
	h[3] = (unsigned char)len;
}

uint32_t
frame_hdr_get(const unsigned char h[FRAME_HDRLEN])
{
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 |
	    (uint32_t)h[2] << 8 | (uint32_t)h[3];
}

void
frame_rd_init(struct frame_rd *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->fr_max = max ? max : PROTO_MAX_FRAME;
}

void
frame_rd_free(struct frame_rd *r)
{
	free(r->fr_buf);
	frame_rd_init(r, r->fr_max);
}

/* Make room for want more bytes after compacting handed-out frames. */
static void
rd_room(struct frame_rd *r, size_t want)
{
	size_t	 cap;

	if (r->fr_off > 0) {
		memmove(r->fr_buf, r->fr_buf + r->fr_off, r->fr_len - r->fr_off);
		r->fr_len -= r->fr_off;
		r->fr_off = 0;
	}
	if (r->fr_cap - r->fr_len >= want)
		return;
	cap = r->fr_cap ? r->fr_cap : FRAME_RD_MINCAP;
	while (cap - r->fr_len < want)
		cap *= 2;
	r->fr_buf = xreallocarray(r->fr_buf, cap, 1);
	r->fr_cap = cap;
}

ssize_t
frame_rd_fill(struct frame_rd *r, int fd)
{
	ssize_t	 n;

	rd_room(r, 4096);
	n = read(fd, r->fr_buf + r->fr_len, r->fr_cap - r->fr_len);
	if (n > 0)
		r->fr_len += (size_t)n;
	return n;
}

void
frame_rd_feed(struct frame_rd *r, const void *p, size_t n)
{
	rd_room(r, n);
	memcpy(r->fr_buf + r->fr_len, p, n);
	r->fr_len += n;
}

int
frame_rd_next(struct frame_rd *r, const unsigned char **p, size_t *n)
{
	size_t		 avail = r->fr_len - r->fr_off;
	uint32_t	 len;

	if (avail < FRAME_HDRLEN)
		return 0;
	len = frame_hdr_get(r->fr_buf + r->fr_off);
	if (len > r->fr_max) {
		errno = EMSGSIZE;
		return -1;
	}
	if (avail < FRAME_HDRLEN + (size_t)len) {
		/* Grow once to the whole frame so the next reads fit. */
		rd_room(r, FRAME_HDRLEN + (size_t)len - avail);
		return 0;
	}
	*p = r->fr_buf + r->fr_off + FRAME_HDRLEN;
	*n = len;
	r->fr_off += FRAME_HDRLEN + (size_t)len;
	return 1;
}

int
frame_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
