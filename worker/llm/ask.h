/* ask.h - one LLM call of a workflow, whoever asks it (a Standard node, a memory step): retries, failover along backup endpoints. */
#ifndef SLUICE_ASK_H
#define SLUICE_ASK_H

#include <jansson.h>

#include "../../common/buf.h"
#include "../core/node.h"

/* What to ask. The strings are borrowed (la_own excepted). */
struct llm_ask {
	const char	*la_endpoint;	/* endpoint name, variables already in */
	const char	*la_preset;	/* preset name; "" none */
	const char	*la_system;	/* systemPrompt, a template; "" none */
	const char	*la_prompt;	/* prompt, a template; NULL or "": the
					   conversation instead */
	long		 la_max_tokens;	/* maxResponseSizeInTokens */
	json_t		*la_opts;	/* every other setting, in a node's
					   shape (lastMessagesToSendInsteadOf-
					   Prompt, acceptImages, allowTools, the
					   cleaning keys, ...); NULL: defaults */
	char		*la_own[2];	/* what ask_of_node allocated */
};

/* Ask a's endpoint, in x's request and workflow (its variables,
 * conversation, responder and streaming flags, image), with WilmerAI's
 * retries, then along backupEndpointName without cycles; a stream only
 * before its first token, never after a cancel. The answer, cleaned,
 * goes to out, and to the client as it comes when x streams. Returns
 * 0, or -1 with res filled. */
int	ask_run(struct node_ctx *x, const struct llm_ask *a, struct buf *out,
	    struct wresult *res);

#endif
