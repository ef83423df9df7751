/* node_chunker.c - DelimitedChunker: the first or last N pieces of a delimited text. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../core/node.h"

/* Number of pieces s splits into on delim (non-empty): occurrences + 1. */
static size_t
chunk_count(const char *s, const char *delim)
{
	size_t		 n = 1, dl = strlen(delim);
	const char	*p = s;

	while ((p = strstr(p, delim)) != NULL) {
		n++;
		p += dl;
	}
	return n;
}

/* Pieces [from, from + count) of s rejoined with delim, as Python's
 * delim.join(s.split(delim)[from:from + count]). */
static void
chunk_slice(const char *s, const char *delim, size_t from, size_t count,
    struct buf *out)
{
	size_t		 dl = strlen(delim), i = 0;
	const char	*p = s, *q;

	for (i = 0; i < from + count; i++) {
		q = strstr(p, delim);
		if (i >= from) {
			if (i > from)
				buf_adds(out, delim);
			buf_add(out, p, q != NULL ? (size_t)(q - p) : strlen(p));
		}
		if (q == NULL)
			break;
		p = q + dl;
	}
}

/* The settings WilmerAI checks before doing anything; a problem gives
 * its message (the node's output) and false. */
static bool
chunk_check(struct node_ctx *x, const char **mode, json_int_t *count,
    struct buf *out)
{
	json_t	*c = json_object_get(x->nx_node, "count");

	*mode = node_raw(x, "mode");
	if (node_raw(x, "content") == NULL)
		buf_adds(out, "No content specified");
	else if (node_raw(x, "delimiter") == NULL)
		buf_adds(out, "No delimiter specified");
	else if (*mode == NULL)
		buf_adds(out, "No mode specified");
	else if (strcmp(*mode, "head") != 0 && strcmp(*mode, "tail") != 0)
		buf_printf(out, "Invalid mode '%s': must be 'head' or 'tail'",
		    *mode);
	else if (c == NULL || json_is_null(c))
		buf_adds(out, "No count specified");
	else if (!json_is_integer(c) || json_integer_value(c) < 1)
		buf_adds(out, "Invalid count: must be a positive integer");
	else {
		*count = json_integer_value(c);
		return true;
	}
	return false;
}

static int
chunk_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	const char	*mode;
	json_int_t	 count;
	char		*content, *delim;
	size_t		 n;

	if (!chunk_check(x, &mode, &count, out))
		return 0;
	content = node_str(x, "content");
	delim = node_str(x, "delimiter");
	if (*delim == '\0')
		buf_adds(out, "Invalid delimiter: must not be empty");
	else if ((n = chunk_count(content, delim)) <= (size_t)count)
		buf_adds(out, content);
	else if (strcmp(mode, "head") == 0)
		chunk_slice(content, delim, 0, (size_t)count, out);
	else
		chunk_slice(content, delim, n - (size_t)count, (size_t)count,
		    out);
	free(delim);
	free(content);
	return 0;
}

const struct node_type node_chunker = { "DelimitedChunker", chunk_run, false };
