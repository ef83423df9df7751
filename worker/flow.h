/* flow.h - run a request's workflow: select it, then its nodes in order. */
#ifndef SLUICE_FLOW_H
#define SLUICE_FLOW_H

#include "../proto/proto.h"
#include "wloop.h"

/* Run the workflow the request selects; the responder's text reaches
 * the client through wloop_emit. res (zeroed by the caller, tokens -1)
 * gets the outcome. Configuration is read fresh from disk. */
void	flow_run(struct wctx *, const struct proto_req_start *,
	    struct wresult *);

#endif
