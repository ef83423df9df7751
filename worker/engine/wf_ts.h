/* wf_ts.h - the engine's side of the message timestamps: history resolved before the first node, stamped messages, the answer's placeholder. */
#ifndef SLUICE_WF_TS_H
#define SLUICE_WF_TS_H

#include <jansson.h>
#include <stdbool.h>

#include "../core/msgs.h"
#include "../core/node.h"
#include "wf.h"

/*
 * Node fields: addDiscussionIdTimestampsForLLM, useRelativeTimestamps,
 * useGroupChatTimestampLogic. Nothing happens without a discussion id.
 * A database error never fails the request: it is logged once and the
 * request carries on without timestamps. Functions return -1 only when
 * the request was cancelled while they waited for the database (then
 * f_res says RQ_CANCELLED).
 */

/* Before a run's first node: when a node of nodes has the flag, resolve
 * the request's history into the discussion's stamps (once per
 * request; WilmerAI's resolve_and_track_history). Returns 0 or -1. */
int	wf_ts_resolve(struct flow *, json_t *nodes);

/* The time_context_summary variable ("" without a discussion, stamps
 * or database). Caller frees. */
char	*wf_ts_summary(struct flow *);

/* Before node x runs. A responder with the flag saves the answer's
 * placeholder (the first such responder of the request only; *placed
 * says so). A node with the flag in a top-level or streaming-child run
 * (x->nx_top) gets x->nx_msgs pointed at *stamped, a stamped copy of
 * the conversation (the caller frees it with wmsgs_free; it is left
 * empty otherwise). Returns 0 or -1. */
int	wf_ts_before(struct flow *, struct node_ctx *x, struct wmsgs *stamped,
	    bool *placed);

/* After the responder that saved the placeholder answered answer: with
 * useGroupChatTimestampLogic the answer's stamp is committed now; else
 * the next request's resolve gives the placeholder to the answer, as
 * in WilmerAI. Returns 0 or -1. */
int	wf_ts_after(struct flow *, struct node_ctx *x, const char *answer);

#endif
