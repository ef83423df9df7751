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
	const unsigned char	*u = (const unsigned char *)s;
	uint32_t		 c = u[0];
	size_t			 k, i;

	*len = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4;
	else
		return UTF8_BAD;
	if (k > n)
		return UTF8_BAD;
	c &= 0x7fu >> k;		/* the lead byte's payload */
	for (i = 1; i < k; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return UTF8_BAD;
		c = (c << 6) | (u[i] & 0x3f);
	}
	if ((k == 3 && c < 0x800) || (k == 4 && (c < 0x10000 ||
	    c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return UTF8_BAD;
	*len = k;
	return c;
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
		if (c == UTF8_BAD && len == 1 && (unsigned char)*s >= 0x80)
			buf_addc(b, *s);
		else if (c < 0x80)
			buf_addc(b, (char)tolower((int)c));
		else
			utf8_put(b, loc == (locale_t)0 ? c :
			    (uint32_t)towlower_l((wint_t)c, loc));
		s += len;
	}
}
