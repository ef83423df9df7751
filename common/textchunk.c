/* textchunk.c - WilmerAI's text utilities for memories: messages in token-sized chunks, text cut by words. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "textchunk.h"
#include "tokens.h"
#include "xmem.h"

struct text_chunk *
text_chunk_messages(const char *const *contents, size_t n, long size,
    size_t *nchunks)
{
	struct text_chunk	*v;
	size_t			 i, k = 0;
	double			 limit = (double)size * 0.8;
	long			 cur = 0, est;

	*nchunks = 0;
	if (n == 0)
		return NULL;
	v = xcalloc(n, sizeof(*v));
	/* Newest first into v (each chunk grows towards older messages). */
	v[0] = (struct text_chunk){ n - 1, 1 };
	cur = tokens_estimate(contents[n - 1], strlen(contents[n - 1]),
	    TOKENS_MARGIN);
	for (i = n - 1; i > 0; i--) {
		est = tokens_estimate(contents[i - 1], strlen(contents[i - 1]),
		    TOKENS_MARGIN);
		if ((double)(cur + est) <= limit) {
			v[k].tc_first = i - 1;
			v[k].tc_count++;
			cur += est;
		} else {
			v[++k] = (struct text_chunk){ i - 1, 1 };
			cur = est;
		}
	}
	*nchunks = k + 1;
	for (i = 0; i < *nchunks / 2; i++) {	/* oldest first */
		struct text_chunk t = v[i];

		v[i] = v[*nchunks - 1 - i];
		v[*nchunks - 1 - i] = t;
	}
	return v;
}

/* The next word of *p (skipping whitespace); NULL at the end. */
static const char *
next_word(const char **p, size_t *len)
{
	const char	*s = *p;

	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	if (*s == '\0')
		return NULL;
	*len = 0;
	while (s[*len] != '\0' && !isspace((unsigned char)s[*len]))
		(*len)++;
	*p = s + *len;
	return s;
}

char **
text_split_words(const char *text, size_t words)
{
	char		**v = xcalloc(1, sizeof(*v));
	size_t		 n = 0, k = 0, len;
	const char	*p = text, *w;
	struct buf	 b = BUF_INIT;

	if (words == 0)
		words = 1;
	while ((w = next_word(&p, &len)) != NULL) {
		if (k > 0)
			buf_addc(&b, ' ');
		buf_add(&b, w, len);
		if (++k == words) {
			v = xreallocarray(v, n + 2, sizeof(*v));
			v[n++] = buf_take(&b);
			v[n] = NULL;
			k = 0;
		}
	}
	if (k > 0) {
		v = xreallocarray(v, n + 2, sizeof(*v));
		v[n++] = buf_take(&b);
		v[n] = NULL;
	}
	buf_free(&b);
	return v;
}

void
text_chunks_free(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

char *
text_last_words(const char *text, long n)
{
	const char	*p = text, *w;
	size_t		 total = 0, skip, len;
	struct buf	 b = BUF_INIT;

	if (n <= 0)
		return xstrdup("");
	while (next_word(&p, &len) != NULL)
		total++;
	if (total <= (size_t)n)
		return xstrdup(text);
	skip = total - (size_t)n;
	for (p = text; (w = next_word(&p, &len)) != NULL; ) {
		if (skip > 0) {
			skip--;
			continue;
		}
		if (b.b_len > 0)
			buf_addc(&b, ' ');
		buf_add(&b, w, len);
	}
	return buf_take(&b);
}
