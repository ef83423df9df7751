/* frame.h - 4-byte big-endian length framing; knows nothing of payloads. */
#ifndef SLUICE_FRAME_H
#define SLUICE_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FRAME_HDRLEN	4
#define PROTO_MAX_FRAME	(16u * 1024 * 1024)	/* payload bytes */

void		frame_hdr_put(unsigned char h[FRAME_HDRLEN], uint32_t len);
uint32_t	frame_hdr_get(const unsigned char h[FRAME_HDRLEN]);

/* Incremental reader for a blocking or non-blocking descriptor. */
struct frame_rd {
	unsigned char	*fr_buf;
	size_t		 fr_len;	/* bytes held */
	size_t		 fr_off;	/* first byte not yet handed out */
	size_t		 fr_cap;
	size_t		 fr_max;	/* largest payload accepted */
};

/* max 0 means PROTO_MAX_FRAME. No allocation until the first fill. */
void	frame_rd_init(struct frame_rd *, size_t max);
void	frame_rd_free(struct frame_rd *);

/* One read(2) into the reader: >0 bytes read, 0 EOF, -1 error with errno
 * set (EAGAIN/EINTR are the caller's to retry). */
ssize_t	frame_rd_fill(struct frame_rd *, int fd);

/* Append bytes obtained elsewhere (tests, fuzzers). */
void	frame_rd_feed(struct frame_rd *, const void *, size_t);

/* Next whole frame: 1 with *p and *n pointing at the payload (valid until the
 * next fill/feed/next call), 0 when more bytes are needed, -1 when the
 * declared length exceeds the maximum (errno EMSGSIZE; the stream is then
 * unusable). The length is checked before any buffer grows. */
int	frame_rd_next(struct frame_rd *, const unsigned char **p, size_t *n);

/* Write all of buf to a blocking descriptor, retrying on EINTR: 0 or -1. */
int	frame_write_all(int fd, const void *buf, size_t len);

#endif
