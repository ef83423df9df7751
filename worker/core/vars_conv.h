/* vars_conv.h - the conversation variables one node sees (WilmerAI's spec section 5 item 5). */
#ifndef SLUICE_VARS_CONV_H
#define SLUICE_VARS_CONV_H

#include "vars.h"

/* What decides them. A zeroed struct is a chat backend, a node without
 * the fields, a user with the defaults, no templates and no clamp. */
struct vars_conv {
	json_t		*vc_node;	/* the node object, or NULL: its
					   nMessagesToIncludeInVariable (5),
					   estimatedTokensToIncludeInVariable
					   (2048), minMessagesInVariable (5),
					   maxEstimatedTokensInVariable
					   (2048; numbers, or strings that
					   are formatted with this table then
					   parsed; else the default) and
					   addUserAssistantTags (truthy) */
	const struct conf_user *vc_user;	/* or NULL: its
					   separateConversationInVariables
					   and conversationSeparationDelimiter
					   ("\n") */
	bool		 vc_completion;	/* the node's backend takes one
					   prompt string (prompt_is_completion);
					   false also for a node without an
					   endpoint */
	const struct prompt_template *vc_template;	/* the endpoint's
					   template (prompt_template_name),
					   or NULL (all parts "") */
	const struct prompt_template *vc_chat_template;	/* the user's
					   chatPromptTemplateName template or
					   NULL: WilmerAI wraps
					   chat_system_prompt and
					   chat_user_prompt_without_system in
					   it for completion backends */
	bool		 vc_clamp;	/* the context clamp is on for this
					   node (node > endpoint > user) */
	long		 vc_window;	/* its window (maxContextTokenSize);
					   <= 0: unknown, budgets not capped */
	long		 vc_max_response;	/* maxResponseSizeInTokens */
	double		 vc_level;	/* wilmerContextEstimationLevel as a
					   factor: 1.0, 1.25, 1.5, 1.85 (0 =
					   1.0) */
};

/* Set, as data, chat_user_prompt_last_{one,two,three,four,five,ten,
 * twenty}, chat_user_prompt_n_messages,
 * chat_user_prompt_estimated_token_limit,
 * chat_user_prompt_min_n_max_tokens, the templated_user_prompt_* twin
 * of each, chat_system_prompt, templated_system_prompt,
 * chat_user_prompt_without_system, templated_user_prompt_without_system
 * and messages, from conversation l as node vc sees it (vc NULL: the
 * zeroed defaults). The rules, and the choices where the spec is
 * silent, are listed at the top of vars_conv.c. Never touches
 * Discussion_Id or time_context_summary. For a chat backend, and while
 * no Jinja renderer is set, the values are lazy (vars_set_lazy): each is
 * made when first read, from a copy of l taken now, so l may change or
 * go once this returns. */
void		 vars_conversation_node(struct vars *, const struct wmsgs *l,
		    const struct vars_conv *vc);

#endif
