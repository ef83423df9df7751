/* node_llm.c - what an LLM node sends: its endpoint's configuration, conversation variables, messages or prompt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "node_llm.h"
#include "../core/vars.h"

#define CLAMP_HEADROOM		512	/* WilmerAI's template framing reserve */
#define CLAMP_PER_MESSAGE	8	/* role tokens around each message */

static int
target_fail(struct node_ctx *x, struct wresult *res, const char *err)
{
	return node_fail(x, res, 500, "%s", err);
}

static int
load_templates(struct node_ctx *x, struct llm_target *t, char *err)
{
	const char	*name = prompt_template_name(t->t_ep, x->nx_user);
	const char	*chat = x->nx_user->u_chat_template;

	if (name != NULL && *name != '\0' &&
	    prompt_template_load(x->nx_confdir, name, &t->t_pt, err) == -1)
		return -1;
	if (chat != NULL && *chat != '\0' &&
	    prompt_template_load(x->nx_confdir, chat, &t->t_chat_pt, err) == -1)
		return -1;
	return 0;
}

int
llm_target_load(struct node_ctx *x, const char *ep, const char *preset,
    struct llm_target *t, struct wresult *res)
{
	char	 err[CONF_ERRLEN];

	memset(t, 0, sizeof(*t));
	t->t_name = xstrdup(ep);
	if (conf_endpoint_load(x->nx_confdir, x->nx_user->u_endpoint_subdir, ep,
	    &t->t_ep, err) == -1 || conf_apitype_load(x->nx_confdir,
	    t->t_ep->e_apitype_name, &t->t_at, err) == -1)
		return target_fail(x, res, err);
	if (*preset != '\0' && conf_preset_resolve_ep(x->nx_confdir,
	    x->nx_user, t->t_ep, t->t_at, preset, &t->t_preset, err) == -1)
		return target_fail(x, res, err);
	t->t_completion = prompt_is_completion(t->t_at->a_type);
	/* Templates matter to completion backends only (the prompt string
	 * and templated_* variables); chat users need none on disk. */
	if (t->t_completion && load_templates(x, t, err) == -1)
		return target_fail(x, res, err);
	return 0;
}

void
llm_target_free(struct llm_target *t)
{
	free(t->t_name);
	conf_endpoint_free(t->t_ep);
	conf_apitype_free(t->t_at);
	json_decref(t->t_preset);
	prompt_template_free(t->t_pt);
	prompt_template_free(t->t_chat_pt);
	memset(t, 0, sizeof(*t));
}

/* clampPromptToContextWindow: node, then endpoint, then user; off. */
static bool
clamp_on(struct node_ctx *x, const struct llm_target *t)
{
	json_t	*v = json_object_get(x->nx_node, "clampPromptToContextWindow");

	if (!json_is_boolean(v))
		v = json_object_get(t->t_ep->e_file.jf_root,
		    "clampPromptToContextWindow");
	if (!json_is_boolean(v))
		v = json_object_get(x->nx_user->u_file.jf_root,
		    "clampPromptToContextWindow");
	return json_is_true(v);
}

/* wilmerContextEstimationLevel, only while the clamp is on. */
static double
level(const struct llm_target *t)
{
	static const struct { const char *n; double f; } lv[] = {
		{ "conservative", 1.0 }, { "balanced", 1.25 },
		{ "aggressive", 1.5 }, { "xaggressive", 1.85 } };
	const char	*s = json_string_value(json_object_get(
			    t->t_ep->e_file.jf_root,
			    "wilmerContextEstimationLevel"));
	size_t		 i;

	for (i = 0; s != NULL && i < sizeof(lv) / sizeof(lv[0]); i++)
		if (strcasecmp(s, lv[i].n) == 0)
			return lv[i].f;
	return 1.0;
}

void
llm_conv_vars(struct node_ctx *x, const struct llm_target *t)
{
	struct vars_conv	 vc;
	bool			 clamp = clamp_on(x, t);

	memset(&vc, 0, sizeof(vc));
	vc.vc_node = x->nx_node;
	vc.vc_user = x->nx_user;
	vc.vc_completion = t->t_completion;
	vc.vc_template = t->t_pt;
	vc.vc_chat_template = t->t_chat_pt;
	vc.vc_clamp = clamp;
	vc.vc_window = t->t_ep->e_max_context;
	vc.vc_max_response = node_long(x, "maxResponseSizeInTokens", 400);
	vc.vc_level = clamp ? level(t) : 1.0;
	vars_conversation_node(x->nx_vars, x->nx_msgs, &vc);
}

/* Spec 3.2 item 6: the generation prompt is off for a top-level
 * responder and for any other node unless it asks for a user turn or
 * forces it; blockGenerationPrompt always wins. */
static bool
gen_prompt(struct node_ctx *x, const struct llm_target *t)
{
	bool	 user = node_bool(x, "addUserTurnTemplate", false);
	bool	 force = node_bool(x, "forceGenerationPromptIfEndpointAllows",
		    false);

	if (node_bool(x, "blockGenerationPrompt", false))
		return false;
	if ((!x->nx_responder || x->nx_top) && !force && !user)
		return false;
	return t->t_ep->e_add_generation_prompt;
}

/* Conversation tokens the endpoint's window leaves (clamp on and the
 * window known), else -1: (window - response) * level - 512 - system. */
static long
clamp_budget(struct node_ctx *x, const struct llm_target *t,
    const char *system)
{
	long	 window = t->t_ep->e_max_context;
	long	 resp = node_long(x, "maxResponseSizeInTokens", 400);

	if (!clamp_on(x, t) || window <= 0)
		return -1;
	return (long)((double)(window - resp) * level(t)) - CLAMP_HEADROOM -
	    tokens_estimate(system, strlen(system), TOKENS_MARGIN);
}

static long
msg_cost(const struct wmsg *m)
{
	return tokens_estimate(m->m_content, strlen(m->m_content),
	    TOKENS_MARGIN) + CLAMP_PER_MESSAGE;
}

/* Drop the oldest messages after the leading system ones until the rest
 * fits; the newest always stays. */
static void
clamp_messages(struct wmsgs *l, long budget)
{
	size_t	 lead = 0, keep, i;
	long	 used = 0;

	if (budget < 0)
		return;
	while (lead < l->n && strcmp(l->v[lead].m_role, "system") == 0)
		lead++;
	for (keep = l->n; keep > lead; keep--) {
		long	 c = msg_cost(&l->v[keep - 1]);

		if (keep < l->n && used + c > budget)
			break;
		used += c;
	}
	if (keep == lead)
		return;
	for (i = lead; i < keep; i++)
		wmsg_clear(&l->v[i]);
	memmove(&l->v[lead], &l->v[keep], (l->n - keep) * sizeof(l->v[0]));
	l->n -= keep - lead;
}

/* The last n messages after the leading system ones (at least one). */
static void
last_turns(const struct wmsgs *c, long n, struct wmsgs *out)
{
	size_t	 first = 0, from, i;

	while (first < c->n && strcmp(c->v[first].m_role, "system") == 0)
		first++;
	if (n < 1)
		n = 1;
	from = c->n - first > (size_t)n ? c->n - (size_t)n : first;
	for (i = from; i < c->n; i++)
		wmsgs_add_copy(out, &c->v[i]);
}

/* The newest user message of the conversation goes after the leading
 * system messages when the selection has none. */
static void
ensure_user(struct wmsgs *l, const struct wmsgs *c)
{
	size_t	 i, pos = 0;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].m_role, "user") == 0)
			return;
	for (i = c->n; i > 0; i--)
		if (strcmp(c->v[i - 1].m_role, "user") == 0)
			break;
	if (i == 0)
		return;
	while (pos < l->n && strcmp(l->v[pos].m_role, "system") == 0)
		pos++;
	wmsgs_insert_copy(l, pos, &c->v[i - 1]);
}

/* Assistant turns next to each other: merged, or a user turn between. */
static void
fix_assistant_runs(struct node_ctx *x, struct wmsgs *l)
{
	const char	*delim = node_raw(x, "mergeConsecutiveAssistantMessagesDelimiter");
	const char	*text = node_raw(x, "insertedUserTurnText");
	size_t		 i;

	if (node_bool(x, "mergeConsecutiveAssistantMessages", false))
		wmsgs_merge_assistants(l, delim != NULL ? delim : "\n");
	else if (node_bool(x, "insertUserTurnBetweenAssistantMessages", false))
		for (i = l->n; i > 1; i--)
			if (strcmp(l->v[i - 1].m_role, "assistant") == 0 &&
			    strcmp(l->v[i - 2].m_role, "assistant") == 0)
				wmsgs_insert(l, i - 1, "user", text != NULL ?
				    text : "Continue.");
}

/* Images reach the backend only from nodes with acceptImages, the
 * newest maxImagesToSend of them (0: all). */
static void
limit_images(struct node_ctx *x, struct wmsgs *l)
{
	long	 max = node_long(x, "maxImagesToSend", 0);

	if (!node_bool(x, "acceptImages", false))
		max = -1;
	wmsgs_limit_images(l, max);
}

/* The prompt path: the user message is the prompt, with the images of
 * the last lastMessagesToSendInsteadOfPrompt messages when allowed. */
static void
prompt_message(struct node_ctx *x, const char *prompt, long last_n,
    struct wmsgs *sent)
{
	const struct wmsgs	*c = x->nx_msgs;
	struct wmsg		*u;
	size_t			 i, j, from;
	long			 max = node_long(x, "maxImagesToSend", 0);

	wmsgs_add(sent, "user", prompt);
	if (!node_bool(x, "acceptImages", false))
		return;
	u = &sent->v[sent->n - 1];
	from = c->n > (size_t)(last_n > 0 ? last_n : 0) ? c->n - (size_t)last_n :
	    0;
	for (i = from; i < c->n; i++)
		for (j = 0; j < c->v[i].m_nimages; j++)
			wmsg_add_image(u, c->v[i].m_images[j]);
	if (max > 0)
		wmsgs_limit_images(sent, max);
}

static int
build_chat(struct node_ctx *x, const struct llm_target *t, const char *sys,
    const char *prompt, struct wmsgs *sent, struct wresult *res)
{
	long	 last_n = node_long(x, "lastMessagesToSendInsteadOfPrompt", 5);
	char	 err[CONF_ERRLEN];

	memset(sent, 0, sizeof(*sent));
	if (*sys != '\0')
		wmsgs_add(sent, "system", sys);
	if (prompt != NULL)
		prompt_message(x, prompt, last_n, sent);
	else {
		last_turns(x->nx_msgs, last_n, sent);
		limit_images(x, sent);
		fix_assistant_runs(x, sent);
		clamp_messages(sent, clamp_budget(x, t, sys));
		ensure_user(sent, x->nx_msgs);
	}
	if (prompt_chat(t->t_ep, sent, err) == -1) {
		wmsgs_free(sent);
		return node_fail(x, res, 500, "%s", err);
	}
	return 0;
}

static int
build_completion(struct node_ctx *x, const struct llm_target *t,
    const char *sys, const char *prompt, char **out, struct wresult *res)
{
	struct prompt_node	 pn;
	char			 err[CONF_ERRLEN];

	memset(&pn, 0, sizeof(pn));
	pn.pn_system = sys;
	pn.pn_prompt = prompt;
	pn.pn_last_n = node_long(x, "lastMessagesToSendInsteadOfPrompt", 5);
	pn.pn_user_turn = node_bool(x, "addUserTurnTemplate", false);
	pn.pn_open_turn = node_bool(x, "addOpenEndedAssistantTurnTemplate",
	    false);
	pn.pn_gen_prompt = gen_prompt(x, t);
	if ((*out = prompt_completion(t->t_ep, t->t_pt, x->nx_msgs, &pn,
	    err)) == NULL)
		return node_fail(x, res, 500, "%s", err);
	return 0;
}

int
llm_build(struct node_ctx *x, const struct llm_target *t, struct wmsgs *sent,
    char **prompt, struct wresult *res)
{
	const char	*raw = node_raw(x, "prompt");
	char		*sys = node_str(x, "systemPrompt");
	char		*p = NULL;
	int		 rc;

	/* WilmerAI decides on the field as written: a prompt that only
	 * becomes empty after substitution is still a prompt. */
	if (raw != NULL && *raw != '\0')
		p = node_str(x, "prompt");
	*prompt = NULL;
	memset(sent, 0, sizeof(*sent));
	if (t->t_completion)
		rc = build_completion(x, t, sys, p, prompt, res);
	else
		rc = build_chat(x, t, sys, p, sent, res);
	free(sys);
	free(p);
	return rc;
}
