/* backend.h - one LLM call of a node: adapter choice, transport, errors that name the endpoint. */
#ifndef SLUICE_BACKEND_H
#define SLUICE_BACKEND_H

#include "adapter.h"

/* Run the call. With nc_stream every token is emitted to the client as
 * it arrives (rq_emit). Returns 0, or -1 with res filled: RQ_CANCELLED
 * when the gateway cancelled, RQ_ERROR otherwise with a message naming
 * the endpoint and the client's HTTP status as docs/api.md's table of
 * backend errors has it (400, 429, 502, 503, 504; 501 for an api type
 * without adapter). When the backend answered with an error status,
 * r_upstream is that status and r_retry_after its Retry-After ("" when
 * it sent none). */
int	backend_call(struct rq *, const struct node_call *,
	    struct node_out *, struct wresult *res);

/* The adapter for an api type, or NULL when it is not supported. */
const struct adapter	*adapter_for(enum conf_apitype_kind);

#endif
