/* compact_win.c - ContextCompactor's windows (addendum A5.2): where Recent, Old and Oldest begin, whether to compact, what shifted, the text of a window. */
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/pystr.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "compact_win.h"

static long
est(const struct wmsg *m)
{
	return tokens_estimate(m->m_content, strlen(m->m_content),
	    TOKENS_MARGIN);
}

/* Walk w[0..end) newest first within budget: the index the window
 * starts at, 0 when every message fits (WilmerAI's for-else). */
static size_t
window(const struct wmsgs *w, size_t end, long budget)
{
	long	 acc = 0, t;
	size_t	 i;

	for (i = end; i > 0; i--) {
		t = est(&w->v[i - 1]);
		if (acc + t > budget)
			return i;
		acc += t;
	}
	return 0;
}

void
compact_bounds(const struct wmsgs *w, long recent, long old,
    struct compact_bounds *b)
{
	b->cb_recent = window(w, w->n, recent);
	b->cb_old = window(w, b->cb_recent, old);
}

void
compact_hash(const struct wmsg *m, char out[SHA256_HEXLEN])
{
	sha256_hex(m->m_content, strlen(m->m_content), out);
}

/* The hash part of a stored boundary: after the first ':', or all. */
static const char *
boundary_hash(const char *v)
{
	const char	*c = strchr(v, ':');

	return c != NULL ? c + 1 : v;
}

enum compact_need
compact_decide(const struct wmsgs *w, const struct compact_bounds *b,
    const struct mem_blocks *old)
{
	char	 h[SHA256_HEXLEN];

	if (b->cb_old >= b->cb_recent)
		return COMPACT_NONE;
	if (old->n == 0)
		return COMPACT_FIRST;
	compact_hash(&w->v[b->cb_old], h);
	if (strcmp(boundary_hash(old->v[old->n - 1].mb_hash), h) != 0)
		return COMPACT_SHIFTED;
	compact_hash(&w->v[b->cb_recent - 1], h);
	if (strcmp(old->v[0].mb_hash, h) != 0)
		return COMPACT_RECENT;
	return COMPACT_NONE;
}

/* The first message of w whose hash is h, or 0. */
static size_t
find_hash(const struct wmsgs *w, const char *h)
{
	char	 mh[SHA256_HEXLEN];
	size_t	 i;

	for (i = 0; i < w->n; i++) {
		compact_hash(&w->v[i], mh);
		if (strcmp(mh, h) == 0)
			return i;
	}
	return 0;
}

size_t
compact_prev_start(const struct wmsgs *w, const struct mem_blocks *old)
{
	const char	*v, *c;
	char		*idx, mh[SHA256_HEXLEN];
	long long	 i;
	int		 r;

	if (old->n == 0)
		return 0;
	v = old->v[old->n - 1].mb_hash;
	if ((c = strchr(v, ':')) == NULL)
		return find_hash(w, v);		/* a legacy bare hash */
	idx = xstrndup(v, (size_t)(c - v));
	r = pystr_int(idx, &i);
	free(idx);
	if (r == -1)
		return find_hash(w, v);	/* WilmerAI: the whole value */
	if (i >= 0 && (unsigned long long)i < w->n) {
		compact_hash(&w->v[i], mh);
		if (strcmp(mh, c + 1) == 0)
			return (size_t)i;
	}
	return find_hash(w, c + 1);
}

char *
compact_boundary(const struct wmsgs *w, size_t i)
{
	char	 h[SHA256_HEXLEN];

	compact_hash(&w->v[i], h);
	return xasprintf("%zu:%s", i, h);
}

char *
compact_text(const struct wmsgs *w, size_t from, size_t to)
{
	struct buf	 b = BUF_INIT;
	const struct wmsg *m;
	size_t		 i;

	buf_adds(&b, "");
	for (i = from; i < to; i++) {
		m = &w->v[i];
		buf_printf(&b, "%s%s: %s", i > from ? "\n" : "",
		    m->m_role != NULL ? m->m_role : "unknown", m->m_content);
	}
	return buf_take(&b);
}
