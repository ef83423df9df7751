/* exchange.c - appendNativeToolExchange: the conversation's trailing tool exchange, sent as native turns after a node's prompt (addendum A8.2). */
#include <jansson.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "exchange.h"

/* Does m carry tool calls? */
static bool
has_calls(const struct wmsg *m)
{
	json_t	*c = wmsg_calls(m);
	bool	 yes = c != NULL;

	json_decref(c);
	return yes;
}

bool
exchange_find(const struct wmsgs *l, size_t *start, size_t *end)
{
	size_t	 i = l->n;

	while (i > 0 && wmsg_filler(&l->v[i - 1]))
		i--;
	if (i == 0)
		return false;
	*end = i - 1;
	while (i > 0 && strcmp(l->v[i - 1].m_role, "tool") == 0)
		i--;
	if (i == 0 || i - 1 == *end ||
	    strcmp(l->v[i - 1].m_role, "assistant") != 0 ||
	    !has_calls(&l->v[i - 1]))
		return false;
	*start = i - 1;
	return true;
}

bool
exchange_engaged(const struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, size_t *start, size_t *end)
{
	json_t	*turns = json_object_get(t->tg_ep->e_file.jf_root,
		    "backendSupportsToolTurns");

	if (!pyfmt_truthy(json_object_get(a->la_opts,
	    "appendNativeToolExchange")) || a->la_prompt == NULL ||
	    *a->la_prompt == '\0' || t->tg_completion || json_is_false(turns))
		return false;
	return exchange_find(x->nx_msgs, start, end);
}
