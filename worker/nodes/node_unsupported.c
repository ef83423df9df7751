/* node_unsupported.c - the one handler of the node types WilmerAI has and Sluice does not run: HTTP 501. */
#include <stdio.h>

#include "nodes.h"

static int
unsupported_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	const char	*type = node_raw(x, "type");

	res->r_status = RQ_ERROR;
	res->r_http = 501;
	snprintf(res->r_code, sizeof(res->r_code), "node_unsupported");
	snprintf(res->r_message, sizeof(res->r_message), "workflow '%s' node "
	    "%zu has type '%s', which this version of Sluice does not run",
	    x->nx_workflow, x->nx_index + 1, type != NULL ? type : "");
	return -1;
}

const struct node_type node_unsupported = { NULL, unsupported_run, false };
