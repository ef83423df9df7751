/* utf8.c - UTF-8 code points: read one, write one, and text lower-cased as Python's str.lower() does (one code point to one). */
#include <ctype.h>
#include <locale.h>
#include <wctype.h>

#include "utf8.h"

/* The C.UTF-8 locale for iswalnum and towlower, or 0. */
static locale_t
utf8_locale(void)
{
	static locale_t	 loc;
	static bool	 tried;

	if (!tried) {
		tried = true;
		loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	}
	return loc;
}

uint32_t
utf8_next(const char *s, size_t n, size_t *len)
{
	const unsigned char	*p = (const unsigned char *)s;
	unsigned char		 c = p[0], lo = 0x80, hi = 0xbf;
	uint32_t		 cp;
	size_t			 need, i;

	*len = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xc2 && c <= 0xdf)
		need = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;	/* not overlong */
		hi = c == 0xed ? 0x9f : 0xbf;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;	/* at most U+10FFFF */
	} else
		return UTF8_BAD;
	cp = c & (0x7fu >> need);	/* the lead byte's payload */
	for (i = 1; i < need; i++) {
		if (i >= n || p[i] < lo || p[i] > hi) {
			*len = i;
			return UTF8_BAD;
		}
		cp = (cp << 6) | (p[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*len = need;
	return cp;
}

void
utf8_put(struct buf *b, uint32_t c)
{
	char	 o[4];

	if (c < 0x80)
		buf_addc(b, (char)c);
	else if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		buf_add(b, o, 2);
	} else if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		buf_add(b, o, 3);
	} else {
		o[0] = (char)(0xf0 | (c >> 18));
		o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[3] = (char)(0x80 | (c & 0x3f));
		buf_add(b, o, 4);
	}
}

bool
utf8_isalnum(uint32_t c)
{
	locale_t	 loc;

	if (c < 0x80)
		return isalnum((int)c);
	loc = utf8_locale();
	return loc == (locale_t)0 || iswalnum_l((wint_t)c, loc);
}

void
utf8_lower(struct buf *b, const char *s, size_t n)
{
	locale_t	 loc = utf8_locale();
	const char	*end = s + n;
	uint32_t	 c;
	size_t		 len;

	while (s < end) {
		c = utf8_next(s, (size_t)(end - s), &len);
		if (c == UTF8_BAD && (len > 1 || (unsigned char)*s >= 0x80))
			buf_add(b, s, len);
		else if (c < 0x80)
			buf_addc(b, (char)tolower((int)c));
		else
			utf8_put(b, loc == (locale_t)0 ? c :
			    (uint32_t)towlower_l((wint_t)c, loc));
		s += len;
	}
}
