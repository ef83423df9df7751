/* base64.c - base64 (RFC 4648): the standard alphabet's digits, validity and encoding, and the URL-safe alphabet's encoding with padding. */
#include "base64.h"
#include "buf.h"

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

static const char	std_digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char	url_digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* p[0..n) in the alphabet digits, with '=' padding, appended to out. */
static void
encode(struct buf *out, const void *p, size_t n, const char *digits)
{
	const unsigned char	*b = p;
	unsigned long		 v;
	size_t			 i;
	char			 q[4];

	for (i = 0; i + 2 < n; i += 3) {
		v = (unsigned long)b[i] << 16 | (unsigned long)b[i + 1] << 8 |
		    b[i + 2];
		q[0] = digits[v >> 18 & 63];
		q[1] = digits[v >> 12 & 63];
		q[2] = digits[v >> 6 & 63];
		q[3] = digits[v & 63];
		buf_add(out, q, 4);
	}
	if (i == n)
		return;
	v = (unsigned long)b[i] << 16 | (i + 1 < n ? (unsigned long)b[i + 1] <<
	    8 : 0);
	q[0] = digits[v >> 18 & 63];
	q[1] = digits[v >> 12 & 63];
	q[2] = i + 1 < n ? digits[v >> 6 & 63] : '=';
	q[3] = '=';
	buf_add(out, q, 4);
}

void
base64_encode(struct buf *out, const void *p, size_t n)
{
	encode(out, p, n, std_digits);
}

void
base64url_encode(struct buf *out, const void *p, size_t n)
{
	encode(out, p, n, url_digits);
}

/* The URL-safe digit's value, or -1. */
static int
url_digit(int c)
{
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return c == '+' || c == '/' ? -1 : base64_digit(c);
}

int
base64url_decode(const char *s, size_t n, struct buf *out)
{
	unsigned long	 v = 0;
	size_t		 i, digits = 0, pad = 0;
	int		 d;

	for (i = 0; i < n; i++) {
		if (s[i] == '\r' || s[i] == '\n')
			continue;
		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || (d = url_digit((unsigned char)s[i])) < 0)
			return -1;
		v = v << 6 | (unsigned long)d;
		if (++digits % 4 == 0) {
			buf_addc(out, (char)(v >> 16 & 255));
			buf_addc(out, (char)(v >> 8 & 255));
			buf_addc(out, (char)(v & 255));
			v = 0;
		}
	}
	if (pad > 2 || (digits + pad) % 4 != 0 || (digits % 4 == 1))
		return -1;
	if (digits % 4 >= 2)
		buf_addc(out, (char)(v >> (digits % 4 == 2 ? 4 : 10) & 255));
	if (digits % 4 == 3)
		buf_addc(out, (char)(v >> 2 & 255));
	return 0;
}
