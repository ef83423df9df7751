/* clean_match.c - incremental multi-pattern matching and UTF-8 counting, for the cleaner and the filters. */
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "clean_match.h"

void
pset_init(struct pset *ps)
{
	/* ps_head is filled by pset_done; nothing reads it before. */
	ps->ps_pat = NULL;
	ps->ps_n = ps->ps_maxlen = 0;
	ps->ps_link = NULL;
	ps->ps_only = -1;
}

void
pset_add(struct pset *ps, const char *s, size_t len, bool icase, int id)
{
	struct pat	*pt;

	if (len == 0)
		return;
	if (ps->ps_n >= PSET_MAX)
		fatalx("pset_add: more than %d patterns", PSET_MAX);
	/* grow in steps of 8 */
	if (ps->ps_n % 8 == 0)
		ps->ps_pat = xreallocarray(ps->ps_pat, ps->ps_n + 8,
		    sizeof(*pt));
	pt = &ps->ps_pat[ps->ps_n++];
	pt->pt_s = s;
	pt->pt_len = len;
	pt->pt_icase = icase;
	pt->pt_id = id;
	if (len > ps->ps_maxlen)
		ps->ps_maxlen = len;
}

static unsigned char
lc(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static unsigned char
uc(unsigned char c)
{
	return c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c;
}

/* Append link for pattern k to the list of first byte b, keeping the
 * lists in the order the patterns were added; counts first bytes. */
static void
link_add(struct pset *ps, size_t *nl, unsigned char b, size_t k,
    size_t *nfirst)
{
	short	*slot = &ps->ps_head[b];

	if (*slot < 0) {
		(*nfirst)++;
		ps->ps_only = b;
	}
	while (*slot >= 0)
		slot = &ps->ps_link[*slot].pl_next;
	ps->ps_link[*nl].pl_pat = (short)k;
	ps->ps_link[*nl].pl_next = -1;
	*slot = (short)*nl;
	(*nl)++;
}

void
pset_done(struct pset *ps)
{
	size_t		 k, nl = 0, nfirst = 0;
	unsigned char	 b;

	if (ps->ps_n == 0)
		return;
	memset(ps->ps_head, 0xff, sizeof(ps->ps_head));
	ps->ps_link = xcalloc(ps->ps_n * 2 + 1, sizeof(*ps->ps_link));
	for (k = 0; k < ps->ps_n; k++) {
		b = (unsigned char)ps->ps_pat[k].pt_s[0];
		if (ps->ps_pat[k].pt_icase && lc(b) != uc(b)) {
			link_add(ps, &nl, lc(b), k, &nfirst);
			link_add(ps, &nl, uc(b), k, &nfirst);
		} else
			link_add(ps, &nl, b, k, &nfirst);
	}
	if (nfirst != 1)
		ps->ps_only = -1;
}

void
pset_free(struct pset *ps)
{
	if (ps == NULL)
		return;
	free(ps->ps_pat);
	free(ps->ps_link);
	pset_init(ps);
}

static bool
pat_eq(const struct pat *pt, const char *p, size_t n)
{
	size_t	 i;

	if (!pt->pt_icase)
		return memcmp(p, pt->pt_s, n) == 0;
	for (i = 0; i < n; i++)
		if (lc((unsigned char)p[i]) != lc((unsigned char)pt->pt_s[i]))
			return false;
	return true;
}

/* Try every pattern whose first byte is p[i]; true when m is set. */
static bool
scan_at(const struct pset *ps, const char *p, size_t n, size_t i, bool final,
    const size_t *limit, struct pm *m)
{
	const struct pat	*pt;
	size_t			 avail = n - i, cmp, bestlen = 0;
	int			 l, k, best = -1;
	bool			 part = false;

	for (l = ps->ps_head[(unsigned char)p[i]]; l >= 0;
	    l = ps->ps_link[l].pl_next) {
		k = ps->ps_link[l].pl_pat;
		pt = &ps->ps_pat[k];
		if (limit != NULL && i >= limit[k])
			continue;
		cmp = avail < pt->pt_len ? avail : pt->pt_len;
		if (!pat_eq(pt, p + i, cmp))
			continue;
		if (cmp < pt->pt_len)
			part = true;
		else if (pt->pt_len > bestlen) {
			best = k;
			bestlen = pt->pt_len;
		}
	}
	if (part && !final) {
		m->pm_kind = PM_PART;
		m->pm_pos = i;
		m->pm_len = avail;
		m->pm_pat = -1;
		return true;
	}
	if (best < 0)
		return false;
	m->pm_kind = PM_FULL;
	m->pm_pos = i;
	m->pm_len = bestlen;
	m->pm_pat = best;
	return true;
}

void
pset_scan(const struct pset *ps, const char *p, size_t n, bool final,
    const size_t *limit, struct pm *m)
{
	const char	*q;
	size_t		 i;

	m->pm_kind = PM_NONE;
	m->pm_pos = n;
	m->pm_len = 0;
	m->pm_pat = -1;
	if (ps->ps_n == 0 || ps->ps_link == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (ps->ps_only >= 0) {
			q = memchr(p + i, ps->ps_only, n - i);
			if (q == NULL)
				return;
			i = (size_t)(q - p);
		} else if (ps->ps_head[(unsigned char)p[i]] < 0)
			continue;
		if (scan_at(ps, p, n, i, final, limit, m))
			return;
	}
}

size_t
u8_count(const char *p, size_t n)
{
	size_t	 i, k = 0;

	for (i = 0; i < n; i++)
		if (!U8_CONT(p[i]))
			k++;
	return k;
}
