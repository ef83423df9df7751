/* ask_node.c - a node's own LLM call: its fields as a struct llm_ask, then ask_run (kept apart so that suites with ask_run stubbed use these for real). */
#include <stdlib.h>
#include <string.h>

#include "../core/vars.h"
#include "ask_node.h"

int
ask_of_node(struct node_ctx *x, struct llm_ask *a, struct wresult *res)
{
	const char	*rep = node_raw(x, "endpointName");
	const char	*rpre = node_raw(x, "preset");

	memset(a, 0, sizeof(*a));
	/* endpointName and preset see only the early variables. */
	a->la_own[0] = vars_format(x->nx_early, rep != NULL ? rep : "");
	a->la_own[1] = vars_format(x->nx_early, rpre != NULL ? rpre : "");
	a->la_endpoint = a->la_own[0];
	a->la_preset = a->la_own[1];
	a->la_system = node_raw(x, "systemPrompt");
	a->la_prompt = node_raw(x, "prompt");
	a->la_max_tokens = node_long(x, "maxResponseSizeInTokens", 400);
	a->la_opts = x->nx_node;
	return 0;
}

void
ask_clear(struct llm_ask *a)
{
	free(a->la_own[0]);
	free(a->la_own[1]);
	memset(a, 0, sizeof(*a));
}

int
ask_node(struct node_ctx *x, struct buf *out, struct wresult *res)
{
	struct llm_ask	 a;
	int		 rc;

	if ((rc = ask_of_node(x, &a, res)) == 0)
		rc = ask_run(x, &a, out, res);
	ask_clear(&a);
	return rc;
}
