/* target.c - the configuration one backend call uses: endpoint, api type, preset, prompt templates. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "target.h"

static int
target_fail(struct node_ctx *x, struct wresult *res, const char *err)
{
	return node_fail(x, res, 500, "%s", err);
}

static int
load_templates(struct node_ctx *x, struct llm_target *t, char *err)
{
	const char	*name = prompt_template_name(t->tg_ep, x->nx_user);
	const char	*chat = x->nx_user->u_chat_template;

	if (name != NULL && *name != '\0' &&
	    prompt_template_load(x->nx_confdir, name, &t->tg_pt, err) == -1)
		return -1;
	if (chat != NULL && *chat != '\0' &&
	    prompt_template_load(x->nx_confdir, chat, &t->tg_chat_pt, err) == -1)
		return -1;
	return 0;
}

int
target_load(struct node_ctx *x, const char *ep, const char *preset,
    struct llm_target *t, struct wresult *res)
{
	char	 err[CONF_ERRLEN];

	memset(t, 0, sizeof(*t));
	t->tg_name = xstrdup(ep);
	if (conf_endpoint_load(x->nx_confdir, x->nx_user->u_endpoint_subdir, ep,
	    &t->tg_ep, err) == -1 || conf_apitype_load(x->nx_confdir,
	    t->tg_ep->e_apitype_name, &t->tg_at, err) == -1)
		return target_fail(x, res, err);
	if (*preset != '\0' && conf_preset_resolve_ep(x->nx_confdir,
	    x->nx_user, t->tg_ep, t->tg_at, preset, &t->tg_preset, err) == -1)
		return target_fail(x, res, err);
	t->tg_completion = prompt_is_completion(t->tg_at->a_type);
	/* Templates matter to completion backends only (the prompt string
	 * and templated_* variables); chat users need none on disk. */
	if (t->tg_completion && load_templates(x, t, err) == -1)
		return target_fail(x, res, err);
	return 0;
}

void
target_free(struct llm_target *t)
{
	free(t->tg_name);
	conf_endpoint_free(t->tg_ep);
	conf_apitype_free(t->tg_at);
	json_decref(t->tg_preset);
	prompt_template_free(t->tg_pt);
	prompt_template_free(t->tg_chat_pt);
	memset(t, 0, sizeof(*t));
}
