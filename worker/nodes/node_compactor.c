/* node_compactor.c - ContextCompactor: the discussion's Old and Oldest summaries (addendum A5; the work is in memory/compactor.c). */
#include "../core/node.h"
#include "../memory/compactor.h"

static int
compactor_node(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	(void)streamed;
	rq_phase(x->nx_rq, "%s node %zu/%zu: context compactor",
	    x->nx_workflow, x->nx_index + 1, x->nx_count);
	return compactor_run(x, out, res);
}

const struct node_type node_compactor = { "ContextCompactor", compactor_node,
	false };
