/* tokens.c - WilmerAI's token estimate for text (no tokenizer needed). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "pystr.h"
#include "tokens.h"

/* Decode one UTF-8 sequence at p (n bytes left); returns its length and
 * the code point, or 1 and U+FFFD for an invalid byte. */
static size_t
utf8_next(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t	 len, i;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	if (len == 0 || len > n)
		goto bad;
	*cp = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			goto bad;
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	return len;
bad:
	*cp = 0xfffd;
	return 1;
}

/* Python's str.isspace() set. */
static bool
is_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) ||
	    c == 0x85 || c == 0xa0 || c == 0x1680 ||
	    (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	    c == 0x202f || c == 0x205f || c == 0x3000;
}

long
tokens_estimate(const char *text, size_t len, double margin)
{
	const unsigned char	*p = (const unsigned char *)text;
	size_t			 i = 0, chars = 0, words = 0;
	bool			 in_word = false;
	uint32_t		 cp;
	double			 w, c;

	while (i < len) {
		i += utf8_next(p + i, len - i, &cp);
		chars++;
		if (is_space(cp))
			in_word = false;
		else if (!in_word) {
			in_word = true;
			words++;
		}
	}
	w = (double)words * 1.35;
	c = (double)chars / 3.5;
	return (long)((w > c ? w : c) * margin);
}

double
tokens_level(const char *level)
{
	static const struct { const char *n; double f; } lv[] = {
		{ "conservative", 1.0 }, { "balanced", 1.25 },
		{ "aggressive", 1.5 }, { "xaggressive", 1.85 } };
	const char	*p = level;
	size_t		 n, i;

	if (p == NULL)
		return 1.0;
	n = strlen(p);
	pystr_trim(&p, &n);
	for (i = 0; i < sizeof(lv) / sizeof(lv[0]); i++)
		if (strlen(lv[i].n) == n && strncasecmp(p, lv[i].n, n) == 0)
			return lv[i].f;
	return 1.0;
}
