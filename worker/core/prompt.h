/* prompt.h - what a node's backend is sent: prompt templates, endpoint prompt injections, completion prompts. */
#ifndef SLUICE_PROMPT_H
#define SLUICE_PROMPT_H

#include <stdbool.h>

#include "../../common/conf.h"
#include "msgs.h"

/* A PromptTemplates/<name>.json file (spec 2.5). Opaque. */
struct prompt_template;

/* The template an endpoint uses: its promptTemplate, or when that is
 * null (or absent) the user's chatPromptTemplateName. NULL when neither
 * names one. Borrowed from ep or u; u may be NULL. */
const char	*prompt_template_name(const struct conf_endpoint *ep,
		    const struct conf_user *u);

/* Read confdir/PromptTemplates/<name>.json afresh, checked by
 * conf_template_load (common/conf_template.h: the same rule and
 * messages as --check-config). Returns 0 with *out (free with
 * prompt_template_free), or -1 with *out NULL and err set. */
int		 prompt_template_load(const char *confdir, const char *name,
		    struct prompt_template **out, char err[CONF_ERRLEN]);
void		 prompt_template_free(struct prompt_template *);	/* NULL ok */

/* The text of member promptTemplate<Role><part>, where Role is role as
 * Python's str.capitalize() writes it ("systemMes" -> "Systemmes") and
 * part is "Prefix" or "Suffix"; "" when the template has no such
 * member (or pt is NULL). Borrowed from pt. */
const char	*prompt_template_get(const struct prompt_template *pt,
		    const char *role, const char *part);

/* promptTemplateEndToken, or "". Borrowed. */
const char	*prompt_template_end(const struct prompt_template *pt);

/* s without WilmerAI's role tags [Beg_Sys], [Beg_User],
 * [Beg_Assistant] and [Beg_SysMes] (one left-to-right pass, as the
 * regular expression does). Caller frees. */
char		*prompt_strip_tags(const char *s);

/* True for the api types that take one prompt string
 * (openAIV1Completion, koboldCppGenerate, ollamaApiGenerate): they need
 * prompt_completion; the others take messages and need prompt_chat. */
bool		 prompt_is_completion(enum conf_apitype_kind);

/* Chat backends, just before the call: systemMes becomes system, then
 * endpoint ep's injections are applied to l in place (spec 6.2):
 * textToAddToStartOfSystem before the first system message (or a new
 * system message first), textToAddToStartOfPrompt before the last user
 * message (or a new user message last), textToAddToStartOfCompletion
 * after the last message's content, or as a new assistant message when
 * ensureTextAddedToAssistantWhenChatCompletion is on and the last
 * message is not the assistant's (each only when its add... flag is
 * true and its text not empty). The adapters drop a trailing empty
 * assistant message afterwards. 0, or -1 with err ("path:line:col: ..."
 * for a wrongly typed endpoint key); l is unchanged on error. */
int		 prompt_chat(const struct conf_endpoint *ep, struct wmsgs *l,
		    char err[CONF_ERRLEN]);

/* What a Standard node contributes to a completion prompt. */
struct prompt_node {
	const char	*pn_system;	/* systemPrompt with variables applied
					   ("" when none) */
	const char	*pn_prompt;	/* prompt with variables applied; NULL
					   when the node has no prompt (then
					   the last messages are sent) */
	long		 pn_last_n;	/* lastMessagesToSendInsteadOfPrompt
					   (default 5; N+1 messages are sent) */
	bool		 pn_user_turn;	/* addUserTurnTemplate */
	bool		 pn_open_turn;	/* addOpenEndedAssistantTurnTemplate */
	bool		 pn_gen_prompt;	/* the generation prompt is on (the
					   endpoint's addGenerationPrompt as
					   the node's flags leave it) */
};

/* Completion backends: the prompt string the adapter sends (node_call's
 * nc_prompt), built as WilmerAI's dispatcher, LlmApiService and
 * completions handler build it: the prompt (or the last pn_last_n + 1
 * messages of conv whose role is not "system", each Prefix + content +
 * Suffix, the suffix left off a final assistant message), wrapped in
 * the user turn, preceded by the assistant prefix, followed by
 * AssistantPrefix + EndToken as the flags say; the system prompt as
 * SystemPrefix + system + SystemSuffix; role tags stripped from each of
 * those pieces; the endpoint's system and prompt injections put in
 * front of them; then (system + prompt) stripped of surrounding
 * whitespace as Python's str.strip() does, and the completion
 * injection appended. pt may be NULL (every part ""). Caller frees;
 * NULL with err set on a wrongly typed endpoint key. */
char		*prompt_completion(const struct conf_endpoint *ep,
		    const struct prompt_template *pt, const struct wmsgs *conv,
		    const struct prompt_node *pn, char err[CONF_ERRLEN]);

#endif
