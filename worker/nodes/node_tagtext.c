/* node_tagtext.c - TagTextExtractor: the text inside the first <tag>...</tag>. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../core/node.h"

/* \s for the ASCII range, as Python's re sees it. */
static bool
tag_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* WilmerAI's re.search(r"<tag>\s*(.*?)\s*</tag>", DOTALL) on text: the
 * first <tag>, the first </tag> after it, the text between without its
 * leading and trailing whitespace. Returns false when there is none. */
static bool
tag_find(const char *text, const char *tag, const char **p, size_t *n)
{
	char		*open = xasprintf("<%s>", tag);
	char		*close = xasprintf("</%s>", tag);
	const char	*a, *b = NULL;

	if ((a = strstr(text, open)) != NULL) {
		a += strlen(open);
		b = strstr(a, close);
	}
	free(open);
	free(close);
	if (b == NULL)
		return false;
	while (a < b && tag_space(*a))
		a++;
	while (b > a && tag_space(b[-1]))
		b--;
	*p = a;
	*n = (size_t)(b - a);
	return true;
}

/* No match, or only whitespace inside: defaultText (with variables), or
 * "" without one. */
static int
tag_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char		*text = node_str(x, "tagToExtractFrom");
	char		*tag = node_str(x, "fieldToExtract");
	char		*def;
	const char	*p;
	size_t		 n;

	if (tag_find(text, tag, &p, &n) && n > 0)
		buf_add(out, p, n);
	else {
		def = node_str(x, "defaultText");
		buf_adds(out, def);
		free(def);
	}
	free(tag);
	free(text);
	return 0;
}

const struct node_type node_tagtext = { "TagTextExtractor", tag_run, false };
