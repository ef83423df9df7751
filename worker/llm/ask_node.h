/* ask_node.h - a node's own LLM call: its fields as a struct llm_ask, then ask_run. */
#ifndef SLUICE_ASK_NODE_H
#define SLUICE_ASK_NODE_H

#include "ask.h"

/* The call node x's own fields ask for: endpointName and preset (their
 * early variables filled in), systemPrompt, prompt,
 * maxResponseSizeInTokens, the rest as la_opts. Returns 0, or -1 with
 * res filled.
 * ask_clear releases it either way. */
int	ask_of_node(struct node_ctx *x, struct llm_ask *a, struct wresult *res);
void	ask_clear(struct llm_ask *a);

/* ask_of_node, then ask_run, then ask_clear. */
int	ask_node(struct node_ctx *x, struct buf *out, struct wresult *res);

#endif
