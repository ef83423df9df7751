/* node_static.c - StaticResponse: the node's content, variables filled in, is its output. */
#include <stdlib.h>

#include "../core/node.h"

/* The engine streams the text word by word when this node is the
 * streaming responder (nt_word_stream); the handler only returns it. */
static int
static_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*s = node_str(x, "content");

	buf_adds(out, s);
	free(s);
	return 0;
}

const struct node_type node_static = { "StaticResponse", static_run, true };
