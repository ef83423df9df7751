/* pystr.c - Python's whitespace on UTF-8 text: str.isspace() of one character, str.strip(). */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "pystr.h"

/* The three-byte whitespace characters: U+1680 (e1 9a 80), U+2000-U+200A
 * (e2 80 80-8a), U+2028, U+2029, U+202F (e2 80 a8, a9, af), U+205F
 * (e2 81 9f), U+3000 (e3 80 80). */
static int
space3(const unsigned char *p, size_t n)
{
	unsigned char	 a = p[0], b, c;

	if (n < 2)
		return -1;
	b = p[1];
	if (!((a == 0xe1 && b == 0x9a) || (a == 0xe2 && (b == 0x80 ||
	    b == 0x81)) || (a == 0xe3 && b == 0x80)))
		return 0;
	if (n < 3)
		return -1;
	c = p[2];
	if (a == 0xe2 && b == 0x80)
		return (c >= 0x80 && c <= 0x8a) || c == 0xa8 || c == 0xa9 ||
		    c == 0xaf ? 3 : 0;
	if (a == 0xe2)
		return c == 0x9f ? 3 : 0;
	return c == 0x80 ? 3 : 0;
}

int
pystr_space(const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;

	if (n == 0)
		return 0;
	if (p[0] < 0x80)
		return (p[0] >= 0x09 && p[0] <= 0x0d) ||
		    (p[0] >= 0x1c && p[0] <= 0x20) ? 1 : 0;
	if (p[0] == 0xc2) {		/* U+0085, U+00A0 */
		if (n < 2)
			return -1;
		return p[1] == 0x85 || p[1] == 0xa0 ? 2 : 0;
	}
	if (p[0] >= 0xe1 && p[0] <= 0xe3)
		return space3(p, n);
	return 0;
}

void
pystr_strip(const char *s, size_t n, bool left, bool right, size_t *off,
    size_t *len)
{
	size_t	 a = 0, i, last;
	int	 w;

	while (left && a < n && (w = pystr_space(s + a, n - a)) > 0)
		a += (size_t)w;
	last = n;
	if (right) {
		/* Forward, so that a continuation byte is never taken for
		 * the start of a character: the end is after the last
		 * character that is not whitespace. */
		for (i = a, last = a; i < n; ) {
			w = pystr_space(s + i, n - i);
			if (w > 0)
				i += (size_t)w;
			else
				last = ++i;
		}
	}
	*off = a;
	*len = last - a;
}

void
pystr_trim(const char **p, size_t *n)
{
	size_t	 off, len;

	pystr_strip(*p, *n, true, true, &off, &len);
	*p += off;
	*n = len;
}

bool
pystr_blank(const char *s)
{
	size_t	 n = strlen(s), a = 0;
	int	 w;

	/* As strip() == "", without walking past the first character
	 * that is not whitespace (a long message is not blank at once). */
	while (a < n && (w = pystr_space(s + a, n - a)) > 0)
		a += (size_t)w;
	return a == n;
}

int
pystr_int(const char *s, long long *out)
{
	const char	*p = s;
	size_t		 n = strlen(s), i = 0;
	long long	 sign = 1, v = 0;
	int		 digits = 0;

	pystr_trim(&p, &n);
	if (n > 0 && (p[0] == '+' || p[0] == '-'))
		sign = p[i++] == '-' ? -1 : 1;
	for (; i < n; i++) {
		if (p[i] == '_' && digits > 0 && i + 1 < n &&
		    isdigit((unsigned char)p[i + 1]))
			continue;
		if (!isdigit((unsigned char)p[i]))
			return -1;
		if (digits++, v <= (LLONG_MAX - 9) / 10)
			v = v * 10 + (p[i] - '0');
	}
	*out = sign * v;
	return digits > 0 ? 0 : -1;
}
