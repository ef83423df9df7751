/* stubs_engine.h - for check_engine: test node handlers in place of the real ones, and what they saw. */
#ifndef SLUICE_STUBS_ENGINE_H
#define SLUICE_STUBS_ENGINE_H

#include "../../common/buf.h"

/*
 * Standard, StaticResponse (streamed word by word as the real one) and
 * CustomWorkflow are test handlers here; every other implemented type
 * is tests/stubs_nodes.c's stand-in, and the NOT_IMPLEMENTED ones the
 * real node_unsupported. Standard and StaticResponse read these keys
 * of their node:
 *   "text"     the output, a template ("" without)
 *   "texts"    a list: the output of the node's Nth run in this
 *              request is the Nth entry (the last one after that)
 *   "show"     appended to the output: "messages" (the conversation,
 *              "role|content" lines), "discussion" (the id), "system"
 *              (systemPrompt as written), "prompt", "flow" ("set" while
 *              the request's rq_flow is set), "tools"
 *   "stream"   true: a responder that streams sends its output itself,
 *              in two halves, as Standard does
 *   "fail"     an HTTP status: the node fails with it
 *   "end"      true: the node ends the workflow (NODE_END)
 *   "cancel"   true: the request is stopped once the node ran (the
 *              request's rq_loop must be a tests/fakerq.h fakerq)
 * CustomWorkflow runs "workflowName" from the user's folder through
 * rq_run_flow, with "scoped_variables" as its agent inputs, the
 * first-node overrides "firstNodeSystemPromptOverride" and
 * "firstNodePromptOverride", delivering when the node delivers.
 */

/* Every node run, in order: "<workflow>:<N><flags> ", flags R
 * responder, D delivers, S streams, T top-level (nx_top). */
extern struct buf	 stub_trace;

/* Runs of each test handler. */
extern int		 stub_standard_runs, stub_static_runs,
			 stub_custom_runs;

/* Forget every run (between two requests of one test). */
void	stub_engine_reset(void);

#endif
