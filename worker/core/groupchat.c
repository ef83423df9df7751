/* groupchat.c - WilmerAI's group-chat reconstruction: the speaker's name before a reply that lacks it. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "groupchat.h"

static bool
is_ws(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* s[0..n) without leading and trailing ASCII whitespace. */
static void
strip(const char **s, size_t *n)
{
	while (*n > 0 && is_ws(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && is_ws((*s)[*n - 1]))
		(*n)--;
}

static size_t
code_points(const char *s, size_t n)
{
	size_t	 i, k = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			k++;
	return k;
}

char *
gchat_prompt(const struct wmsgs *l)
{
	const char	*s;
	size_t		 n;

	if (l->n == 0)
		return NULL;
	s = l->v[l->n - 1].m_content;
	n = strlen(s);
	strip(&s, &n);
	if (n == 0 || code_points(s, n) >= 100 || s[n - 1] != ':')
		return NULL;
	return xstrndup(s, n);
}

void
gchat_init(struct gchat *g, const char *prompt)
{
	memset(g, 0, sizeof(*g));
	buf_init(&g->g_hold);
	g->g_decided = prompt == NULL;
	if (prompt != NULL) {
		g->g_prompt = xstrdup(prompt);
		g->g_limit = code_points(prompt, strlen(prompt)) + 10;
	}
}

void
gchat_free(struct gchat *g)
{
	free(g->g_prompt);
	buf_free(&g->g_hold);
	memset(g, 0, sizeof(*g));
	g->g_decided = true;
}

/* Decide on what is held: WilmerAI's rule is that a colon within the
 * prompt's length + 10 (not at the very start) means the model wrote a
 * speaker of its own. Without one the prompt goes first. */
static void
decide(struct gchat *g, struct buf *out)
{
	const char	*s = g->g_hold.b_data != NULL ? g->g_hold.b_data : "";
	size_t		 n = g->g_hold.b_len;
	const char	*colon;
	size_t		 pos;

	while (n > 0 && is_ws(*s)) {
		s++;
		n--;
	}
	colon = memchr(s, ':', n);
	pos = colon != NULL ? code_points(s, (size_t)(colon - s)) : 0;
	if (colon != NULL && pos > 0 && pos < g->g_limit)
		buf_add(out, g->g_hold.b_data, g->g_hold.b_len);
	else {
		buf_adds(out, g->g_prompt);
		buf_addc(out, ' ');
		buf_add(out, s, n);
	}
	g->g_decided = true;
	buf_free(&g->g_hold);
}

/* Can the held text be decided before more arrives? */
static bool
decidable(const struct gchat *g)
{
	const char	*s = g->g_hold.b_data;
	size_t		 n = g->g_hold.b_len;
	const char	*colon;

	while (n > 0 && is_ws(*s)) {
		s++;
		n--;
	}
	if (n == 0)
		return false;
	if ((colon = memchr(s, ':', n)) != NULL &&
	    code_points(s, (size_t)(colon - s)) < g->g_limit)
		return true;
	return code_points(s, n) >= g->g_limit;
}

void
gchat_feed(struct gchat *g, const char *p, size_t n, struct buf *out)
{
	if (g->g_decided) {
		buf_add(out, p, n);
		return;
	}
	buf_add(&g->g_hold, p, n);
	if (decidable(g))
		decide(g, out);
}

void
gchat_finish(struct gchat *g, struct buf *out)
{
	if (!g->g_decided)
		decide(g, out);
}
