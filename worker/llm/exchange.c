/* exchange.c - appendNativeToolExchange: the conversation's trailing tool exchange, sent as native turns after a node's prompt (addendum A8.2). */
#include <jansson.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "exchange.h"

/* Does m carry tool calls (a non-empty list)? */
static bool
has_calls(const struct wmsg *m)
{
	json_t	*c;
	bool	 yes;

	if (m->m_tool_calls == NULL)
		return false;
	c = json_loads(m->m_tool_calls, 0, NULL);
	yes = json_is_array(c) && json_array_size(c) > 0;
	json_decref(c);
	return yes;
}

/* An assistant turn with nothing in it: no calls, text empty or
 * "Assistant:" once stripped (a front end's generation-prompt turn). */
static bool
filler(const struct wmsg *m)
{
	const char	*p = m->m_content;
	size_t		 n = strlen(p);

	if (strcmp(m->m_role, "assistant") != 0 || has_calls(m))
		return false;
	pystr_trim(&p, &n);
	return n == 0 || (n == 10 && memcmp(p, "Assistant:", 10) == 0);
}

bool
exchange_find(const struct wmsgs *l, size_t *start, size_t *end)
{
	size_t	 i = l->n;

	while (i > 0 && filler(&l->v[i - 1]))
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
