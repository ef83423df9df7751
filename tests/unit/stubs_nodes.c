/* stubs_nodes.c - for the node suites (check_nodes, check_memnodes, check_llmnodes): stand-ins for the node handlers a suite does not link, so that the registry links. */
#include "../../worker/core/node.h"

/* A stand-in for every handler of common/nodetypes.def, so that the
 * registry links whichever node files a suite's _OBJS hold: a
 * handler linked in (a strong definition) replaces its weak stand-in,
 * the others fail when run. */
static int
not_here(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return node_fail(x, res, 500, "not in this test");
}

#define NODETYPE(name, id, runs)	NODETYPE_##runs(name, id)
#define NODETYPE_IMPLEMENTED(name, id)					\
	__attribute__((weak)) const struct node_type node_##id =	\
	    { name, not_here, false };
#define NODETYPE_NOT_IMPLEMENTED(name, id)
#include "../../common/nodetypes.def"
#undef NODETYPE_NOT_IMPLEMENTED
#undef NODETYPE_IMPLEMENTED
#undef NODETYPE
