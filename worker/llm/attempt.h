/* attempt.h - one attempt at an LLM call: through one endpoint, with its cleaner, tools and usage. */
#ifndef SLUICE_ATTEMPT_H
#define SLUICE_ATTEMPT_H

#include <stdbool.h>

#include "../../common/buf.h"
#include "../core/node.h"
#include "ask.h"
#include "target.h"

/* Call a through target t: the answer, cleaned, is added to out (and
 * streamed to the client when x streams); the responder's usage and
 * finish go to res, its tool calls to the client. *tokens says whether
 * any text reached the client (then no failover may follow). Returns
 * 0, or -1 with res filled. */
int	attempt_run(struct node_ctx *x, const struct llm_ask *a,
	    struct llm_target *t, struct buf *out, bool *tokens,
	    struct wresult *res);

#endif
