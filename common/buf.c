/* buf.c - growable byte buffers and borrowed string views. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "log.h"
#include "xmem.h"

void
buf_init(struct buf *b)
{
	b->b_data = NULL;
	b->b_len = b->b_cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->b_data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->b_len = 0;
	if (b->b_data != NULL)
		b->b_data[0] = '\0';
}

void
buf_reserve(struct buf *b, size_t n)
{
	size_t	 need, cap;

	if (n > (size_t)-1 / 2 - b->b_len)
		fatalx("buf_reserve: %zu bytes is too large", n);
	need = b->b_len + n + 1;
	if (need <= b->b_cap)
		return;
	cap = b->b_cap ? b->b_cap : 64;
	while (cap < need)
		cap *= 2;
	b->b_data = xreallocarray(b->b_data, cap, 1);
	if (b->b_cap == 0)
		b->b_data[0] = '\0';	/* a new buffer is "" too */
	b->b_cap = cap;
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n > 0)
		memcpy(b->b_data + b->b_len, p, n);
	b->b_len += n;
	b->b_data[b->b_len] = '\0';
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(struct buf *b, char c)
{
	if (b->b_len + 1 < b->b_cap) {	/* room for c and the NUL */
		b->b_data[b->b_len++] = c;
		b->b_data[b->b_len] = '\0';
		return;
	}
	buf_add(b, &c, 1);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("buf_printf: bad format");
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->b_data + b->b_len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->b_len += (size_t)n;
}

void
buf_drain(struct buf *b, size_t n)
{
	if (n >= b->b_len) {
		buf_reset(b);
		return;
	}
	memmove(b->b_data, b->b_data + n, b->b_len - n);
	b->b_len -= n;
	b->b_data[b->b_len] = '\0';
}

char *
buf_take(struct buf *b)
{
	char	*p;

	if (b->b_data == NULL)
		return xstrdup("");
	p = b->b_data;
	buf_init(b);
	return p;
}

struct str
str_from(const char *s)
{
	if (s == NULL)
		return STR_NULL;
	return (struct str){ s, strlen(s) };
}

bool
str_eq(struct str s, const char *c)
{
	size_t	 n = strlen(c);

	return s.p != NULL && s.n == n && memcmp(s.p, c, n) == 0;
}

bool
str_eqi(struct str s, const char *c)
{
	size_t	 n = strlen(c);

	return s.p != NULL && s.n == n && strncasecmp(s.p, c, n) == 0;
}

char *
str_dup(struct str s)
{
	return xstrndup(s.p != NULL ? s.p : "", s.n);
}
