/* flow.h - run a request's workflow: select it, then its nodes in order. */
#ifndef SLUICE_FLOW_H
#define SLUICE_FLOW_H

#include "../../proto/proto.h"
#include "../rq.h"

/* Run the workflow the request selects, as user default_user unless
 * the request names one; the responder's text reaches the client
 * through rq's ops. res (zeroed by the caller, tokens -1) gets the
 * outcome. Configuration is read fresh from disk. While it runs,
 * rq->rq_flow runs the request's other workflows. */
void	flow_run(struct rq *, const struct proto_req_start *,
	    const char *default_user, struct wresult *);

#endif
