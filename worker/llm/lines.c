/* lines.c - split a byte stream into lines (NDJSON), with a cap. */
#include <string.h>

#include "lines.h"

void
lines_init(struct lines *l, size_t max, lines_cb cb, void *arg)
{
	buf_init(&l->ln_buf);
	l->ln_max = max;
	l->ln_cb = cb;
	l->ln_arg = arg;
	l->ln_failed = 0;
}

void
lines_free(struct lines *l)
{
	buf_free(&l->ln_buf);
}

static int
deliver(struct lines *l, const char *p, size_t n)
{
	if (n > 0 && p[n - 1] == '\r')
		n--;
	if (n == 0)
		return 0;
	if (l->ln_cb(l->ln_arg, p, n) == -1) {
		l->ln_failed = 1;
		return -1;
	}
	return 0;
}

int
lines_feed(struct lines *l, const char *p, size_t n)
{
	const char	*nl;
	size_t		 k;

	while (!l->ln_failed && n > 0) {
		if ((nl = memchr(p, '\n', n)) == NULL) {
			if (l->ln_buf.b_len + n > l->ln_max)
				l->ln_failed = 1;
			else
				buf_add(&l->ln_buf, p, n);
			break;
		}
		k = (size_t)(nl - p);
		if (l->ln_buf.b_len + k > l->ln_max)
			l->ln_failed = 1;
		else if (l->ln_buf.b_len == 0) {
			if (deliver(l, p, k) == -1)	/* no copy */
				break;
		} else {
			buf_add(&l->ln_buf, p, k);
			if (deliver(l, l->ln_buf.b_data, l->ln_buf.b_len) == -1)
				break;
			buf_reset(&l->ln_buf);
		}
		p += k + 1;
		n -= k + 1;
	}
	return l->ln_failed ? -1 : 0;
}

int
lines_finish(struct lines *l)
{
	if (!l->ln_failed && l->ln_buf.b_len > 0) {
		deliver(l, l->ln_buf.b_data, l->ln_buf.b_len);
		buf_reset(&l->ln_buf);
	}
	return l->ln_failed ? -1 : 0;
}
