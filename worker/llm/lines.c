/* lines.c - split a byte stream into lines (NDJSON), with a cap. */
#include <string.h>

#include "lines.h"

void
lines_init(struct lines *l, size_t max, lines_cb cb, void *arg)
{
	buf_init(&l->l_buf);
	l->l_max = max;
	l->l_cb = cb;
	l->l_arg = arg;
	l->l_failed = 0;
}

void
lines_free(struct lines *l)
{
	buf_free(&l->l_buf);
}

static int
deliver(struct lines *l, const char *p, size_t n)
{
	if (n > 0 && p[n - 1] == '\r')
		n--;
	if (n == 0)
		return 0;
	if (l->l_cb(l->l_arg, p, n) == -1) {
		l->l_failed = 1;
		return -1;
	}
	return 0;
}

int
lines_feed(struct lines *l, const char *p, size_t n)
{
	const char	*nl;
	size_t		 k;

	while (!l->l_failed && n > 0) {
		if ((nl = memchr(p, '\n', n)) == NULL) {
			if (l->l_buf.b_len + n > l->l_max)
				l->l_failed = 1;
			else
				buf_add(&l->l_buf, p, n);
			break;
		}
		k = (size_t)(nl - p);
		if (l->l_buf.b_len + k > l->l_max)
			l->l_failed = 1;
		else if (l->l_buf.b_len == 0) {
			if (deliver(l, p, k) == -1)	/* no copy */
				break;
		} else {
			buf_add(&l->l_buf, p, k);
			if (deliver(l, l->l_buf.b_data, l->l_buf.b_len) == -1)
				break;
			buf_reset(&l->l_buf);
		}
		p += k + 1;
		n -= k + 1;
	}
	return l->l_failed ? -1 : 0;
}

int
lines_finish(struct lines *l)
{
	if (!l->l_failed && l->l_buf.b_len > 0) {
		deliver(l, l->l_buf.b_data, l->l_buf.b_len);
		buf_reset(&l->l_buf);
	}
	return l->l_failed ? -1 : 0;
}
