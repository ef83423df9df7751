/* routing.h - WilmerAI's prompt routing: a categorisation workflow picks the workflow that answers. */
#ifndef SLUICE_ROUTING_H
#define SLUICE_ROUTING_H

#include <stdbool.h>

#include "../../common/buf.h"
#include "wf.h"

/* Spec 10: run the user's categorizationWorkflow (not streamed, not
 * answering) with the categories of Routing/<routingConfig>.json as
 * variables, up to maxCategorizationAttempts times until its output
 * names a category; then run that category's workflow, or
 * _DefaultWorkflow from the user's folder when none matched, as call
 * top says (its folder and name are filled in here). Returns as
 * wf_run. */
int	routing_run(struct flow *f, const struct rq_flowcall *top, struct buf *out,
	    bool *delivered);

/* The category the categoriser's output names: strip it, drop ASCII
 * punctuation, then for each word in order (upper-cased) the first
 * category, in file order, whose upper-cased name without punctuation
 * is a substring of it. NULL when none; borrowed from routing. */
const char *routing_match(json_t *routing, const char *output);

#endif
