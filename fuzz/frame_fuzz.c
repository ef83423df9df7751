/* frame_fuzz.c - libFuzzer harness for the frame reader: frames match a reference split, however the bytes arrive. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../proto/frame.h"
#include "common.h"

/*
 * Input: 2 header bytes, then the byte stream a peer sends.
 *   h[0]: the largest payload accepted (0: 1 MiB, else small, so that
 *         oversize lengths are common; PROTO_MAX_FRAME itself would
 *         make 32 MiB allocations and slow runs under ASan, and
 *         check_proto covers it); bit 7 reads through a pipe with
 *         frame_rd_fill instead of frame_rd_feed
 *   h[1]: seed of the random chunking
 * The reference walks the whole stream at once: a 4-byte big-endian
 * length, then that many bytes, until a length is over the maximum or
 * the stream ends. The reader, fed in random pieces, must hand out the
 * same frames (same bytes), then report the oversize length with
 * EMSGSIZE exactly where the reference found it, and never more. The
 * buffer never grows past twice the largest frame plus the minimum
 * (the length is checked before any allocation).
 */

#define MAXREF	16384	/* 4-byte frames in the largest input */

struct ref {
	size_t	 r_off[MAXREF];	/* payload offsets in the stream */
	size_t	 r_len[MAXREF];
	size_t	 r_n;
	int	 r_bad;		/* an oversize length ends the stream */
};


static void
fail(const char *what, size_t i)
{
	fprintf(stderr, "frame_fuzz: %s (frame %zu)\n", what, i);
	abort();
}

static void
ref_split(const uint8_t *p, size_t n, size_t max, struct ref *r)
{
	size_t		 off = 0;
	uint32_t	 len;

	r->r_n = 0;
	r->r_bad = 0;
	while (n - off >= FRAME_HDRLEN && r->r_n < MAXREF) {
		len = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
		    (uint32_t)p[off + 2] << 8 | p[off + 3];
		if (len > max) {
			r->r_bad = 1;
			return;
		}
		if (n - off - FRAME_HDRLEN < len)
			return;
		r->r_off[r->r_n] = off + FRAME_HDRLEN;
		r->r_len[r->r_n++] = len;
		off += FRAME_HDRLEN + len;
	}
}

static void
check_state(const struct frame_rd *rd)
{
	if (rd->fr_off > rd->fr_len || rd->fr_len > rd->fr_cap)
		fail("reader offsets out of order", 0);
	if (rd->fr_cap > 2 * (rd->fr_max + FRAME_HDRLEN) + 65536)
		fail("buffer grew past the largest frame", 0);
}

/* Take every whole frame the reader holds; 1 once it reported -1. */
static int
drain(struct frame_rd *rd, const uint8_t *s, const struct ref *r,
    size_t *got)
{
	const unsigned char	*p;
	size_t			 n;
	int			 rc;

	while ((rc = frame_rd_next(rd, &p, &n)) == 1) {
		if (*got >= r->r_n)
			fail("a frame the reference does not have", *got);
		if (n != r->r_len[*got] ||
		    (n > 0 && memcmp(p, s + r->r_off[*got], n) != 0))
			fail("frame differs from the reference", *got);
		(*got)++;
		check_state(rd);
	}
	check_state(rd);
	if (rc == -1) {
		if (errno != EMSGSIZE)
			fail("-1 without EMSGSIZE", *got);
		if (!r->r_bad || *got != r->r_n)
			fail("oversize reported where the reference has none",
			    *got);
		return 1;
	}
	return 0;
}

/* Move k bytes into the reader, through a pipe or directly. */
static void
put(struct frame_rd *rd, int fds[2], const uint8_t *p, size_t k)
{
	ssize_t	 r;
	size_t	 in = 0;

	if (fds[0] == -1) {
		frame_rd_feed(rd, p, k);
		return;
	}
	if (k > 0 && write(fds[1], p, k) != (ssize_t)k)
		fail("pipe write", 0);
	while (in < k) {
		if ((r = frame_rd_fill(rd, fds[0])) <= 0)
			fail("frame_rd_fill lost bytes", 0);
		in += (size_t)r;
	}
	if (in != k)
		fail("frame_rd_fill read more than was written", 0);
}

static void
run(const uint8_t *s, size_t n, size_t max, int usepipe, uint32_t seed,
    const struct ref *r)
{
	struct frame_rd	 rd;
	int		 fds[2] = { -1, -1 }, bad = 0;
	size_t		 off = 0, k, got = 0;

	if (usepipe && pipe2(fds, O_CLOEXEC) == -1)
		fail("pipe", 0);
	frame_rd_init(&rd, max);
	while (off < n && !bad) {
		seed = seed * 1103515245 + 12345;
		k = 1 + (seed >> 16) % 9;
		if (seed & 0x80000000u)
			k = 1 + (seed >> 8) % 700;
		if (k > n - off)
			k = n - off;
		put(&rd, fds, s + off, k);
		off += k;
		bad = drain(&rd, s, r, &got);
	}
	if (!bad && (got != r->r_n || r->r_bad))
		fail("frames missing at the end of the stream", got);
	frame_rd_free(&rd);
	if (fds[0] != -1) {
		close(fds[0]);
		close(fds[1]);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref	 r;
	unsigned char		 h[FRAME_HDRLEN];
	uint32_t		 v;
	size_t			 max;

	if (size < 2 || size > 2 + FRAME_HDRLEN * MAXREF)
		return 0;
	max = data[0] == 0 ? 1024 * 1024 :
	    (size_t)(data[0] & 0x7f) * 5 + 1;
	ref_split(data + 2, size - 2, max, &r);
	run(data + 2, size - 2, max, data[0] & 0x80, data[1], &r);
	if (size >= 2 + FRAME_HDRLEN) {
		memcpy(&v, data + 2, sizeof(v));
		frame_hdr_put(h, v);
		if (frame_hdr_get(h) != v)
			fail("header round trip", 0);
		frame_hdr_put(h, frame_hdr_get(data + 2));
		if (memcmp(h, data + 2, FRAME_HDRLEN) != 0)
			fail("header round trip", 0);
	}
	return 0;
}
