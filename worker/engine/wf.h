/* wf.h - one workflow run: its variables, its nodes in order, its responder; nested runs for sub-workflow nodes. */
#ifndef SLUICE_WF_H
#define SLUICE_WF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../proto/proto.h"
#include "../core/msgs.h"
#include "../rq.h"

#define WF_MAX_DEPTH	16	/* nested workflows, against cycles */

/* What every workflow of one request shares. flow.c owns it. */
struct flow {
	struct rq			*f_rq;
	const struct proto_req_start	*f_rs;
	struct conf_user		*f_user;
	struct wmsgs			 f_msgs;	/* normalised conversation */
	const char			*f_discussion;	/* "" when none */
	char				*f_tools;	/* request tools (JSON) or NULL */
	char				*f_tool_choice;
	char				*f_think;	/* the client's Ollama
							   "think" (JSON) or
							   NULL */
	struct wresult			*f_res;
	bool				 f_answered;	/* the client has its answer */
	/* message timestamps (wf_ts.c): 0 not resolved yet, 1
	 * resolved, -1 off; the answer's placeholder is saved */
	int				 f_ts_state;
	bool				 f_ts_placed;
};

struct wf_run;

/* Run a workflow. out receives its result: the responder's output.
 * When fc_deliver is set the responder's output also reaches the
 * client (streamed as it comes when the request streams, else as one
 * chunk) and *delivered says so. Returns 0; NODE_END (node.h) when a
 * node ended it early (the caller ends too, successfully); or -1 with
 * f->f_res filled (RQ_CANCELLED or RQ_ERROR naming the workflow and
 * node). */
int	wf_run(struct flow *f, const struct rq_flowcall *c, struct buf *out,
	    bool *delivered);

/* The responder whose output the client is getting finished: the
 * answer is complete. When work remains in this run or a parent run
 * (nodes after the responder), the gateway is told now, so that the
 * client is not kept waiting for it. */
void	wf_answered(struct wf_run *r);

#endif
