/* build.c - what a backend call sends: the conversation variables, then the messages or the prompt string. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "../core/msgs_edit.h"
#include "../core/vars.h"
#include "../core/vars_conv.h"
#include "build.h"
#include "exchange.h"

#define CLAMP_HEADROOM		512	/* WilmerAI's template framing reserve */
#define CLAMP_PER_MESSAGE	8	/* role tokens around each message */

/* clampPromptToContextWindow: node, then endpoint, then user; off. */
static bool
clamp_on(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t)
{
	json_t	*v = json_object_get(a->la_opts, "clampPromptToContextWindow");

	if (!json_is_boolean(v))
		v = json_object_get(t->tg_ep->e_file.jf_root,
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
	return tokens_level(json_string_value(json_object_get(
	    t->tg_ep->e_file.jf_root, "wilmerContextEstimationLevel")));
}

void
build_conv_vars(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t)
{
	struct vars_conv	 vc;
	bool			 clamp = clamp_on(x, a, t);
	struct wmsgs		 before = *x->nx_msgs;
	size_t			 start, end;

	memset(&vc, 0, sizeof(vc));
	vc.vc_node = a->la_opts;
	vc.vc_user = x->nx_user;
	vc.vc_completion = t->tg_completion;
	vc.vc_template = t->tg_pt;
	vc.vc_chat_template = t->tg_chat_pt;
	vc.vc_clamp = clamp;
	vc.vc_window = t->tg_ep->e_max_context;
	vc.vc_max_response = a->la_max_tokens;
	vc.vc_level = clamp ? level(t) : 1.0;
	/* appendNativeToolExchange: the prompt speaks of what came before
	 * the exchange, which follows it as it is. */
	if (exchange_engaged(x, a, t, &start, &end))
		before.n = start;
	vars_conversation_node(x->nx_vars, &before, &vc);
}

/* Spec 3.2 item 6: the generation prompt is off for a top-level
 * responder and for any other node unless it asks for a user turn or
 * forces it; blockGenerationPrompt always wins. */
static bool
gen_prompt(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t)
{
	bool	 user = field_bool(a->la_opts, "addUserTurnTemplate", false);
	bool	 force = field_bool(a->la_opts,
		    "forceGenerationPromptIfEndpointAllows", false);

	if (field_bool(a->la_opts, "blockGenerationPrompt", false))
		return false;
	if ((!x->nx_responder || x->nx_top) && !force && !user)
		return false;
	return t->tg_ep->e_add_generation_prompt;
}

/* Whether the clamp applies (on, and the window known); then *budget:
 * the conversation tokens the endpoint's window leaves, (window -
 * response) * level - 512 - system. It may be negative: a long system
 * prompt or a small window leaves room for the newest message only. */
static bool
clamp_budget(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, const char *system, long *budget)
{
	long	 window = t->tg_ep->e_max_context;
	long	 resp = a->la_max_tokens;

	if (!clamp_on(x, a, t) || window <= 0)
		return false;
	*budget = (long)((double)(window - resp) * level(t)) - CLAMP_HEADROOM -
	    tokens_estimate(system, strlen(system), TOKENS_MARGIN);
	return true;
}

/* lastMessagesToSendInsteadOfPromptMaxTokenSize: a cap on the estimated
 * tokens of the last-N messages, scaled like the clamp's budget while
 * the clamp is on; 0 when the node sets none. */
static long
turns_cap(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t)
{
	long	 cap = field_long(x->nx_vars, a->la_opts,
		    "lastMessagesToSendInsteadOfPromptMaxTokenSize", 0);

	if (cap <= 0)
		return 0;
	return clamp_on(x, a, t) ? (long)((double)cap * level(t)) : cap;
}

/* Drop the oldest messages after the leading system ones until the rest
 * fits in budget, each costing its estimated tokens plus per_message;
 * the newest always stays. */
static void
clamp_messages(struct wmsgs *l, long budget, long per_message)
{
	size_t	 lead = 0, keep, i;
	long	 used = 0;

	while (lead < l->n && strcmp(l->v[lead].m_role, "system") == 0)
		lead++;
	for (keep = l->n; keep > lead; keep--) {
		long	 c = tokens_estimate(l->v[keep - 1].m_content,
			    strlen(l->v[keep - 1].m_content), TOKENS_MARGIN) +
			    per_message;

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
fix_assistant_runs(json_t *o, struct wmsgs *l)
{
	const char	*delim = field_raw(o,
			    "mergeConsecutiveAssistantMessagesDelimiter");
	const char	*text = field_raw(o, "insertedUserTurnText");
	size_t		 i;

	if (field_bool(o, "mergeConsecutiveAssistantMessages", false))
		wmsgs_merge_assistants(l, delim != NULL ? delim : "\n");
	else if (field_bool(o, "insertUserTurnBetweenAssistantMessages",
	    false))
		for (i = l->n; i > 1; i--)
			if (strcmp(l->v[i - 1].m_role, "assistant") == 0 &&
			    strcmp(l->v[i - 2].m_role, "assistant") == 0)
				wmsgs_insert(l, i - 1, "user", text != NULL ?
				    text : "Continue.");
}

/* Images reach the backend only from nodes with acceptImages, the
 * newest maxImagesToSend of them (0: all). */
static void
limit_images(struct node_ctx *x, json_t *o, struct wmsgs *l)
{
	long	 max = field_long(x->nx_vars, o, "maxImagesToSend", 0);

	if (!field_bool(o, "acceptImages", false))
		max = -1;
	wmsgs_limit_images(l, max);
}

/* The prompt path: the user message is the prompt, with the images of
 * the last lastMessagesToSendInsteadOfPrompt messages when allowed. */
static void
prompt_message(struct node_ctx *x, json_t *o, const char *prompt, long last_n,
    struct wmsgs *sent)
{
	const struct wmsgs	*c = x->nx_msgs;
	struct wmsg		*u;
	size_t			 i, j, from;
	long			 max = field_long(x->nx_vars, o, "maxImagesToSend",
				    0);

	wmsgs_add(sent, "user", prompt);
	if (!field_bool(o, "acceptImages", false))
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
build_chat(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, const char *sys, const char *prompt,
    struct wmsgs *sent, struct wresult *res)
{
	long	 last_n = field_long(x->nx_vars, a->la_opts,
		    "lastMessagesToSendInsteadOfPrompt", 5), budget, cap;
	char	 err[CONF_ERRLEN];
	size_t	 start, end;

	memset(sent, 0, sizeof(*sent));
	if (*sys != '\0')
		wmsgs_add(sent, "system", sys);
	if (prompt != NULL) {
		prompt_message(x, a->la_opts, prompt, last_n, sent);
		if (exchange_engaged(x, a, t, &start, &end))
			for (; start <= end; start++)
				wmsgs_add_copy(sent, &x->nx_msgs->v[start]);
	} else {
		last_turns(x->nx_msgs, last_n, sent);
		if ((cap = turns_cap(x, a, t)) > 0)
			clamp_messages(sent, cap, 0);
		limit_images(x, a->la_opts, sent);
		fix_assistant_runs(a->la_opts, sent);
		if (clamp_budget(x, a, t, sys, &budget))
			clamp_messages(sent, budget, CLAMP_PER_MESSAGE);
		ensure_user(sent, x->nx_msgs);
	}
	if (prompt_chat(t->tg_ep, sent, err) == -1) {
		wmsgs_free(sent);
		return node_fail(x, res, 500, "%s", err);
	}
	return 0;
}

static int
build_completion(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, const char *sys, const char *prompt,
    char **out, struct wresult *res)
{
	struct prompt_node	 pn;
	struct wmsgs		 capped;
	const struct wmsgs	*conv = x->nx_msgs;
	char			 err[CONF_ERRLEN];
	long			 cap;

	memset(&pn, 0, sizeof(pn));
	memset(&capped, 0, sizeof(capped));
	pn.pn_system = sys;
	pn.pn_prompt = prompt;
	pn.pn_last_n = field_long(x->nx_vars, a->la_opts,
	    "lastMessagesToSendInsteadOfPrompt", 5);
	if (prompt == NULL && (cap = turns_cap(x, a, t)) > 0) {
		last_turns(x->nx_msgs, pn.pn_last_n, &capped);
		clamp_messages(&capped, cap, 0);
		conv = &capped;
	}
	pn.pn_user_turn = field_bool(a->la_opts, "addUserTurnTemplate", false);
	pn.pn_open_turn = field_bool(a->la_opts,
	    "addOpenEndedAssistantTurnTemplate", false);
	pn.pn_gen_prompt = gen_prompt(x, a, t);
	*out = prompt_completion(t->tg_ep, t->tg_pt, conv, &pn, err);
	wmsgs_free(&capped);
	if (*out == NULL)
		return node_fail(x, res, 500, "%s", err);
	return 0;
}

/* A Jinja2 render of the prompts failed or stopped: res says so. */
static int
render_fail(struct node_ctx *x, struct wresult *res)
{
	if (vars_render_error(x->nx_vars) == NULL) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	return node_fail(x, res, 500, "jinja2 %s",
	    vars_render_error(x->nx_vars));
}

int
build_request(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, const char *sys_add, struct wmsgs *sent,
    char **prompt, struct wresult *res)
{
	const char	*raw = a->la_prompt;
	char		*sys = vars_format(x->nx_vars, a->la_system != NULL ?
			    a->la_system : "");
	char		*p = NULL;
	int		 rc;

	if (sys_add != NULL && *sys_add != '\0') {
		p = *sys != '\0' ? xasprintf("%s\n\n%s", sys, sys_add) :
		    xstrdup(sys_add);
		free(sys);
		sys = p;
		p = NULL;
	}

	/* WilmerAI decides on the field as written: a prompt that only
	 * becomes empty after substitution is still a prompt. */
	if (raw != NULL && *raw != '\0')
		p = vars_format(x->nx_vars, raw);
	*prompt = NULL;
	memset(sent, 0, sizeof(*sent));
	if (node_render_failed(x))	/* nothing is sent (addendum A7) */
		rc = render_fail(x, res);
	else if (t->tg_completion)
		rc = build_completion(x, a, t, sys, p, prompt, res);
	else
		rc = build_chat(x, a, t, sys, p, sent, res);
	free(sys);
	free(p);
	return rc;
}
