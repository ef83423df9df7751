/* base64.c - the standard base64 alphabet (RFC 4648, section 4): a digit's value, and whether a text is base64. */
#include "base64.h"

int
base64_digit(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	return c == '/' ? 63 : -1;
}

bool
base64_valid(const char *s, size_t n)
{
	size_t	 i, digits = 0, pad = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '\r' || s[i] == '\n')
			continue;
		if (s[i] == '=')
			pad++;
		else if (pad > 0 || base64_digit((unsigned char)s[i]) < 0)
			return false;	/* a digit after padding, or no digit */
		else
			digits++;
	}
	return digits > 0 && pad <= 2 && (digits + pad) % 4 == 0;
}
