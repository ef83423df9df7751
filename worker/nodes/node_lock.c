/* node_lock.c - WorkflowLock: take a named lock shared by every worker, or end the workflow when another run holds it. */
#include <stdlib.h>

#include "../../common/log.h"
#include "../core/node.h"
#include "../store/store.h"
#include "../store/store_lock.h"

/*
 * Spec 3.5. The intended pattern is responder -> WorkflowLock -> slow
 * memory nodes: while one run does the slow work, the next request of
 * the same discussion answers and stops at the lock. The lock belongs to
 * the request (its id is the owner); the engine drops it when the
 * request's workflow ends (flow.c), and a worker killed while holding it
 * blocks others only until it expires.
 */
#define LOCK_TTL_S	600	/* WilmerAI's 10 minutes */

static int
take(struct node_ctx *x, const char *id, struct wresult *res)
{
	struct store	*s;
	char		 err[STORE_ERRLEN];
	int		 r;

	if ((s = rq_store(x->nx_rq, err)) == NULL)
		return node_fail(x, res, 500, "%s", err);
	if ((r = store_lock(s, id, x->nx_rq->rq_id, LOCK_TTL_S)) != -1)
		return r;
	if (store_gave_up(s) || rq_stopped(x->nx_rq)) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	return node_fail(x, res, 500, "%s", store_err(s));
}

static int
lock_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*id = node_str(x, "workflowLockId");
	int	 r;

	if (*id == '\0') {
		free(id);
		return node_fail(x, res, 500,
		    "A WorkflowLock node must have a 'workflowLockId'");
	}
	rq_phase(x->nx_rq, "%s node %zu/%zu: lock %s", x->nx_workflow,
	    x->nx_index + 1, x->nx_count, id);
	if ((r = take(x, id, res)) == 0) {
		log_info("[rq %s] workflow lock '%s' is held by another run",
		    x->nx_rq->rq_id, id);
		r = NODE_END;
	} else if (r == 1)
		r = 0;
	free(id);
	return r;
}

const struct node_type node_lock = { "WorkflowLock", lock_run, false };
