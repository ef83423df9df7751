/* build.h - what a backend call sends: the conversation variables, then the messages or the prompt string. */
#ifndef SLUICE_BUILD_H
#define SLUICE_BUILD_H

#include "../core/msgs.h"
#include "../core/node.h"
#include "ask.h"
#include "target.h"

/* Set the conversation variables (chat_*, templated_*, ...) as a call
 * of a through target t sees them. */
void	build_conv_vars(struct node_ctx *, const struct llm_ask *a,
	    const struct llm_target *t);

/* What to send: for chat backends *sent (the caller frees it with
 * wmsgs_free), for completion backends *prompt (caller frees). a's
 * systemPrompt and prompt get their variables here; sys_add (NULL or
 * "": none; not a template) follows the system prompt after a blank
 * line, or is the system prompt when that is empty. Returns 0, or -1
 * with res filled. */
int	build_request(struct node_ctx *, const struct llm_ask *a,
	    const struct llm_target *t, const char *sys_add,
	    struct wmsgs *sent, char **prompt, struct wresult *res);

#endif
