/* node_standard.c - Standard: one LLM call through the node's endpoint, failing over along backupEndpointName. */
#include "../llm/ask_node.h"
#include "nodes.h"

static int
standard_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	int	 rc = ask_node(x, out, res);

	*streamed = x->nx_stream;
	return rc;
}

const struct node_type node_standard = { "Standard", standard_run, false };
