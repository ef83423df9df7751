/* node_llm.h - what an LLM node sends: its endpoint's configuration, conversation variables, messages or prompt. */
#ifndef SLUICE_NODE_LLM_H
#define SLUICE_NODE_LLM_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/conf.h"
#include "../core/msgs.h"
#include "../core/node.h"
#include "../core/prompt.h"

/* The configuration one backend call of a node uses (all owned). */
struct llm_target {
	char			*t_name;	/* endpoint name */
	struct conf_endpoint	*t_ep;
	struct conf_apitype	*t_at;
	json_t			*t_preset;	/* resolved, or NULL */
	struct prompt_template	*t_pt;		/* the endpoint's template */
	struct prompt_template	*t_chat_pt;	/* the user's chat template */
	bool			 t_completion;	/* one prompt string */
};

/* Load endpoint ep (the user's endpoint folder), its api type, preset
 * (none when "") and prompt templates. Returns 0, or -1 with res filled
 * (500 naming the node and the file). */
int	llm_target_load(struct node_ctx *, const char *ep, const char *preset,
	    struct llm_target *, struct wresult *res);
void	llm_target_free(struct llm_target *);	/* zeroes it */

/* Set the conversation variables (chat_*, templated_*, ...) as this node
 * sees them through this endpoint. */
void	llm_conv_vars(struct node_ctx *, const struct llm_target *);

/* What to send: for chat backends *sent (the caller frees it with
 * wmsgs_free), for completion backends *prompt (caller frees). The
 * node's systemPrompt and prompt get their variables here. Returns 0,
 * or -1 with res filled. */
int	llm_build(struct node_ctx *, const struct llm_target *,
	    struct wmsgs *sent, char **prompt, struct wresult *res);

/* node_standard.c: the node's LLM call (endpointName, preset, the
 * failover chain, retries, cleaning) into out. Streams to the client
 * when x->nx_stream. Returns 0, or -1 with res filled. */
int	llm_node_run(struct node_ctx *, struct buf *out, struct wresult *res);

#endif
