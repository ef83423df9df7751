/* mpscan.c - validate MessagePack structure before msgpack-c allocates. */
#include <stdint.h>
#include <stdio.h>

#include "mpscan.h"

struct scan {
	const uint8_t	*s_p;
	size_t		 s_n;
	size_t		 s_pos;
};

/* Read a big-endian unsigned of w bytes; -1 when truncated. */
static int
rd_uint(struct scan *s, int w, uint64_t *v)
{
	int	 i;

	if (s->s_n - s->s_pos < (size_t)w)
		return -1;
	*v = 0;
	for (i = 0; i < w; i++)
		*v = *v << 8 | s->s_p[s->s_pos++];
	return 0;
}

/* Classify the object at s_pos. Sets *skip to payload bytes that follow
 * the header and *items to the child count (map entries count twice).
 * Returns 0, or -1 with err set. */
static int
header(struct scan *s, uint64_t *skip, uint64_t *items, const char **err)
{
	uint8_t		 b = s->s_p[s->s_pos++];
	static const uint8_t fixed[] = {	/* 0xc0..0xdf payload widths */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 8, 1, 2, 4, 8,
		1, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

	*skip = *items = 0;
	if (b <= 0x7f || b >= 0xe0)
		return 0;
	if (b <= 0x8f) {
		*items = 2 * (uint64_t)(b & 0x0f);
		return 0;
	}
	if (b <= 0x9f) {
		*items = b & 0x0f;
		return 0;
	}
	if (b <= 0xbf) {
		*skip = b & 0x1f;
		return 0;
	}
	switch (b) {
	case 0xc0: case 0xc2: case 0xc3:
		return 0;
	case 0xc4: case 0xd9: return rd_uint(s, 1, skip) ? (*err =
	    "truncated length", -1) : 0;
	case 0xc5: case 0xda: return rd_uint(s, 2, skip) ? (*err =
	    "truncated length", -1) : 0;
	case 0xc6: case 0xdb: return rd_uint(s, 4, skip) ? (*err =
	    "truncated length", -1) : 0;
	case 0xdc: return rd_uint(s, 2, items) ? (*err = "truncated count",
	    -1) : 0;
	case 0xdd: return rd_uint(s, 4, items) ? (*err = "truncated count",
	    -1) : 0;
	case 0xde:
	case 0xdf:
		if (rd_uint(s, b == 0xde ? 2 : 4, items)) {
			*err = "truncated count";
			return -1;
		}
		*items *= 2;
		return 0;
	case 0xc1:
		*err = "reserved byte 0xc1";
		return -1;
	}
	if ((b >= 0xc7 && b <= 0xc9) || (b >= 0xd4 && b <= 0xd8)) {
		*err = "extension types are not used";
		return -1;
	}
	*skip = fixed[b - 0xc0];
	return 0;
}

int
mpscan(const void *p, size_t n, int max_depth, char *err, size_t errlen)
{
	struct scan	 s = { p, n, 0 };
	uint64_t	 stack[64], pending = 1, skip, items;
	int		 depth = 0;
	const char	*why = NULL;

	if (max_depth < 1 || max_depth > 64)
		max_depth = 64;
	stack[0] = 1;
	while (depth >= 0) {
		if (stack[depth] == 0) {
			depth--;
			continue;
		}
		if (s.s_pos >= s.s_n) {
			why = "truncated value";
			goto bad;
		}
		stack[depth]--;
		pending--;
		if (header(&s, &skip, &items, &why) == -1)
			goto bad;
		if (skip > s.s_n - s.s_pos) {
			why = "truncated payload";
			goto bad;
		}
		s.s_pos += (size_t)skip;
		if (items == 0)
			continue;
		/* Every element needs at least one byte. */
		if (items > s.s_n - s.s_pos || pending + items > s.s_n - s.s_pos) {
			why = "container larger than the frame";
			goto bad;
		}
		if (depth + 1 >= max_depth) {
			why = "nesting too deep";
			goto bad;
		}
		stack[++depth] = items;
		pending += items;
	}
	if (s.s_pos != s.s_n) {
		why = "trailing bytes after the value";
		goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "malformed MessagePack at byte %zu: %s",
	    s.s_pos, why);
	return -1;
}
