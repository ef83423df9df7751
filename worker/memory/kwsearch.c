/* kwsearch.c - WilmerAI's keyword search without an LLM (search_utils.py): word tokens, speaker filtering, scored and plain chunk search. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/utf8.h"
#include "../../common/xmem.h"
#include "kwsearch.h"

/* ---- code points ------------------------------------------------- */

/* A \w character: a letter or digit (Unicode, common/utf8.c), or '_'. */
static bool
is_word(uint32_t c)
{
	return c == '_' || (c != UTF8_BAD && utf8_isalnum(c));
}

char *
kw_lower(const char *s)
{
	struct buf	 b = BUF_INIT;

	buf_adds(&b, "");
	utf8_lower(&b, s, strlen(s));
	return buf_take(&b);
}

/* ---- words -------------------------------------------------------- */

/* The next word at or after *p: its start in *w and length in *wn, *p
 * moved past it. False at the end of the text. */
static bool
next_word(const char **p, const char **w, size_t *wn)
{
	const char	*s = *p;
	size_t		 len;

	while (*s != '\0' && !is_word(utf8_next(s, SIZE_MAX, &len)))
		s += len;
	if (*s == '\0') {
		*p = s;
		return false;
	}
	*w = s;
	while (*s != '\0' && is_word(utf8_next(s, SIZE_MAX, &len)))
		s += len;
	*wn = (size_t)(s - *w);
	*p = s;
	return true;
}

static char *
word_dup(const char *w, size_t n, bool lower)
{
	struct buf	 b = BUF_INIT;

	if (!lower)
		return xstrndup(w, n);
	buf_adds(&b, "");
	utf8_lower(&b, w, n);
	return buf_take(&b);
}

/* A growable NULL-terminated list of strings. */
struct slist {
	char	**v;
	size_t	  n;
};

static void
slist_add(struct slist *l, char *s)
{
	l->v = xreallocarray(l->v, l->n + 2, sizeof(*l->v));
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

static size_t
slist_count(const struct slist *l, const char *s)
{
	size_t	 i, c = 0;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			c++;
	return c;
}

static void
slist_free(struct slist *l)
{
	kw_free(l->v);
	l->v = NULL;
	l->n = 0;
}

char **
kw_tokens(const char *text, bool lower, size_t *n)
{
	struct slist	 l = { NULL, 0 };
	const char	*p = text, *w;
	size_t		 wn;

	while (next_word(&p, &w, &wn))
		slist_add(&l, word_dup(w, wn, lower));
	if (l.v == NULL)
		l.v = xcalloc(1, sizeof(*l.v));
	if (n != NULL)
		*n = l.n;
	return l.v;
}

void
kw_free(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* The speakers of text, lower-cased: words directly followed by ':'
 * (Python's \b(\w+):), added to l once each. */
static void
speakers_of(const char *text, struct slist *l)
{
	const char	*p = text, *w;
	size_t		 wn;
	char		*s;

	while (next_word(&p, &w, &wn)) {
		if (*p != ':')
			continue;
		s = word_dup(w, wn, true);
		if (slist_count(l, s) == 0)
			slist_add(l, s);
		else
			free(s);
	}
}

/* ---- speaker filtering ------------------------------------------- */

/* WilmerAI's tidying of the joined tokens (re.sub passes over a string
 * whose only whitespace is the single spaces between tokens):
 * "( " -> "(", " )" -> ")", "()" -> "", runs of spaces -> one, strip. */
static char *
tidy(const char *s)
{
	struct buf	 a = BUF_INIT, b = BUF_INIT;
	size_t		 i, j, n = strlen(s);

	buf_adds(&a, "");
	for (i = 0; i < n; i++) {
		for (j = i; s[j] == ' '; j++)
			;
		if (j > i && s[j] == ')')	/* " )" */
			i = j;
		buf_addc(&a, s[i]);
		if (s[i] == '(')		/* "( " */
			while (s[i + 1] == ' ')
				i++;
	}
	buf_adds(&b, "");
	for (i = 0; i < a.b_len; i++) {
		for (j = i + 1; a.b_data[i] == '(' && a.b_data[j] == ' '; j++)
			;
		if (a.b_data[i] == '(' && a.b_data[j] == ')')
			i = j;			/* "()" */
		else if (a.b_data[i] != ' ' || (b.b_len > 0 &&
		    b.b_data[b.b_len - 1] != ' '))
			buf_addc(&b, a.b_data[i]);
	}
	while (b.b_len > 0 && b.b_data[b.b_len - 1] == ' ')
		b.b_data[--b.b_len] = '\0';
	buf_free(&a);
	return buf_take(&b);
}

char *
kw_filter_speakers(const char *const *contents, size_t n,
    const char *keywords)
{
	struct slist	 spk = { NULL, 0 };
	struct buf	 b = BUF_INIT;
	const char	*p = keywords, *w;
	char		*lw, *r;
	size_t		 i, wn;

	for (i = 0; i < n; i++)
		speakers_of(contents[i], &spk);
	buf_adds(&b, "");
	for (;;) {
		/* parentheses are tokens of their own */
		while (*p != '\0' && *p != '(' && *p != ')' &&
		    !is_word(utf8_next(p, SIZE_MAX, &wn)))
			p += wn;
		if (*p == '(' || *p == ')') {
			buf_printf(&b, "%s%c", b.b_len > 0 ? " " : "", *p++);
			continue;
		}
		if (!next_word(&p, &w, &wn))
			break;
		if (*p == ':')			/* a "label:" */
			continue;
		lw = word_dup(w, wn, true);
		if (slist_count(&spk, lw) == 0) {
			if (b.b_len > 0)
				buf_addc(&b, ' ');
			buf_add(&b, w, wn);
		}
		free(lw);
	}
	r = tidy(b.b_data);
	buf_free(&b);
	slist_free(&spk);
	return r;
}

/* ---- searching ---------------------------------------------------- */

struct hit {
	size_t	 h_index;
	long	 h_score;
};

static int
hit_cmp(const void *a, const void *b)
{
	const struct hit	*x = a, *y = b;

	if (x->h_score != y->h_score)
		return x->h_score > y->h_score ? -1 : 1;
	return x->h_index < y->h_index ? -1 : x->h_index > y->h_index;
}

/* Pairs of positions i < j <= i + proximity holding two different
 * query words (apply_proximity_filter's count). */
static long
proximity_pairs(char *const *w, size_t n, const struct slist *q,
    size_t proximity)
{
	size_t	 i, j;
	long	 c = 0;

	for (i = 0; i < n; i++) {
		if (slist_count(q, w[i]) == 0)
			continue;
		for (j = i + 1; j < n && j - i <= proximity; j++)
			if (strcmp(w[i], w[j]) != 0 && slist_count(q, w[j]) > 0)
				c++;
	}
	return c;
}

/* The score of one chunk, 0 when it is no hit: the words of query (q,
 * with repeats) it holds, counted with repeats; a chunk is a hit only
 * through a word that is not one of its speakers. */
static long
chunk_score(const char *chunk, const struct slist *q, const struct slist *qset,
    size_t proximity)
{
	struct slist	 spk = { NULL, 0 }, w = { NULL, 0 };
	bool		 hit = false;
	long		 score = 0;
	size_t		 i, c;

	w.v = kw_tokens(chunk, true, &w.n);
	speakers_of(chunk, &spk);
	for (i = 0; i < q->n; i++) {
		c = slist_count(&w, q->v[i]);
		score += (long)c;
		if (c > 0 && slist_count(&spk, q->v[i]) == 0)
			hit = true;
	}
	if (!hit || score == 0)
		score = 0;
	else if (qset->n >= 2 && proximity > 0)
		score += proximity_pairs(w.v, w.n, qset, proximity);
	slist_free(&spk);
	slist_free(&w);
	return score;
}

/* Hits as a list of indexes, best first, at most max. */
static size_t *
take_hits(struct hit *h, size_t nh, size_t max, size_t *nout)
{
	size_t	*r, i;

	*nout = 0;
	if (nh == 0)
		return NULL;
	qsort(h, nh, sizeof(*h), hit_cmp);
	if (max > 0 && nh > max)
		nh = max;
	r = xcalloc(nh, sizeof(*r));
	for (i = 0; i < nh; i++)
		r[i] = h[i].h_index;
	*nout = nh;
	return r;
}

/* The query's lower-cased words with repeats, and without. */
static void
query_words(const char *query, struct slist *q, struct slist *qset)
{
	size_t	 i;

	q->v = kw_tokens(query, true, &q->n);
	memset(qset, 0, sizeof(*qset));
	for (i = 0; i < q->n; i++)
		if (slist_count(qset, q->v[i]) == 0)
			slist_add(qset, xstrdup(q->v[i]));
}

size_t *
kw_search_scored(const char *const *chunks, size_t n, const char *query,
    size_t max, size_t proximity, size_t *nout)
{
	struct slist	 q, qset;
	struct hit	*h = xcalloc(n + 1, sizeof(*h));
	size_t		 i, nh = 0, *r;
	long		 s;

	query_words(query, &q, &qset);
	for (i = 0; i < n && q.n > 0; i++)
		if ((s = chunk_score(chunks[i], &q, &qset, proximity)) > 0) {
			h[nh].h_index = i;
			h[nh++].h_score = s;
		}
	r = take_hits(h, nh, max, nout);
	free(h);
	slist_free(&q);
	slist_free(&qset);
	return r;
}

size_t *
kw_search_plain(const char *const *chunks, size_t n, const char *query,
    size_t max, size_t *nout)
{
	struct slist	 q, qset, w;
	size_t		 i, j, *r = xcalloc(n + 1, sizeof(*r));

	query_words(query, &q, &qset);
	*nout = 0;
	for (i = 0; i < n && qset.n > 0 && (max == 0 || *nout < max); i++) {
		w.v = kw_tokens(chunks[i], true, &w.n);
		for (j = 0; j < w.n; j++)
			if (slist_count(&qset, w.v[j]) > 0) {
				r[(*nout)++] = i;
				break;
			}
		slist_free(&w);
	}
	slist_free(&q);
	slist_free(&qset);
	if (*nout == 0) {
		free(r);
		r = NULL;
	}
	return r;
}
