/* vars_jinja.c - what a Jinja2 template sees of the variables, and WilmerAI's brace sentinels (addendum A7). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "vars.h"
#include "vars_jinja.h"

/*
 * WilmerAI renders with the same dict str.format gets, plus messages:
 *
 * - Values keep their JSON type where WilmerAI keeps the Python object:
 *   workflow keys and userWideWorkflowVariables (a list stays a list,
 *   a string is not expanded again), messages (a list of objects), the
 *   category lists. Everything else is a string.
 * - Brace sentinels: WilmerAI's gateway swaps every '{' and '}' of the
 *   message contents for __WILMER_L_CURLY__ / __WILMER_R_CURLY__, and
 *   its variable manager does the same to agent inputs and outputs; the
 *   rendered text has them turned back. So the template sees the
 *   sentinels in messages' contents, the conversation variables drawn
 *   from them, and agentNInput/agentNOutput (QUIRK kept: a test or
 *   filter in the template sees the sentinel text).
 * - Conversation variables are only computed when the template's text
 *   names them: each family by a fragment of its names (below);
 *   time_context_summary is "" unless named. A template that builds a
 *   name at run time sees it undefined. CHOICE: the n_messages,
 *   estimated_token_limit and min_n_max_tokens fragments start at
 *   "user_prompt_", so chat_ and templated_ twins come together.
 */

/* A conversation variable's family: the names it covers (a prefix and
 * a part of the rest) and the fragments that bring it in. */
static const struct family {
	const char	*f_part;
	const char	*f_frag[2];
} families[] = {
	{ "user_prompt_last_", { "user_prompt_last_", NULL } },
	{ "system_prompt", { "system_prompt", "without_system" } },
	{ "without_system", { "system_prompt", "without_system" } },
	{ "_n_messages", { "user_prompt_n_messages", NULL } },
	{ "_estimated_token_limit",
	    { "user_prompt_estimated_token_limit", NULL } },
	{ "_min_n_max_tokens", { "user_prompt_min_n_max_tokens", NULL } },
};

static bool
prefixed(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* One of vars_conv's names (chat_*, templated_*)? */
static bool
conv_name(const char *name)
{
	return prefixed(name, "chat_user_prompt_") ||
	    prefixed(name, "templated_user_prompt_") ||
	    strcmp(name, "chat_system_prompt") == 0 ||
	    strcmp(name, "templated_system_prompt") == 0;
}

/* agent<digits>Input or agent<digits>Output? */
static bool
agent_name(const char *name)
{
	const char	*p = name + 5;

	if (!prefixed(name, "agent") || *p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return strcmp(p, "Input") == 0 || strcmp(p, "Output") == 0;
}

/* Would WilmerAI have computed conversation variable name for tmpl? */
static bool
conv_wanted(const char *name, const char *tmpl)
{
	const struct family	*f;
	size_t			 i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		f = &families[i];
		if (strstr(name, f->f_part) == NULL)
			continue;
		return strstr(tmpl, f->f_frag[0]) != NULL ||
		    (f->f_frag[1] != NULL && strstr(tmpl, f->f_frag[1]) !=
		    NULL);
	}
	return true;
}

/* The escaped string as a JSON string. */
static json_t *
escaped(const char *s)
{
	char	*e = vars_sentinel_escape(s);
	json_t	*j = json_stringn_nocheck(e, strlen(e));

	free(e);
	return j;
}

/* One variable's Jinja value, or NULL to leave it out. */
static json_t *
value_of(const char *name, const char *value, json_t *jv, bool tmpl,
    const char *t)
{
	bool	 conv = !tmpl && jv == NULL && conv_name(name);

	if (jv != NULL)
		return json_incref(jv);
	if (tmpl)
		return json_stringn_nocheck(value, strlen(value));
	if (conv && !conv_wanted(name, t))
		return NULL;
	if (strcmp(name, "time_context_summary") == 0 &&
	    strstr(t, "time_context_summary") == NULL)
		return json_string("");
	if (conv || agent_name(name))
		return escaped(value);
	return json_stringn_nocheck(value, strlen(value));
}

json_t *
vars_jinja_context(const struct vars *vs, const char *t)
{
	json_t		*ctx = json_object(), *jv, *v;
	const char	*name, *value;
	size_t		 i = 0;
	bool		 tmpl;

	while (vars_each(vs, &i, &name, &value, &jv, &tmpl))
		if ((v = value_of(name, value, jv, tmpl, t)) != NULL)
			json_object_set_new(ctx, name, v);
	return ctx;
}

char *
vars_sentinel_escape(const char *s)
{
	struct buf	 b = BUF_INIT;
	size_t		 run;

	for (;;) {
		run = strcspn(s, "{}");
		buf_add(&b, s, run);
		s += run;
		if (*s == '\0')
			break;
		buf_adds(&b, *s == '{' ? VARS_L_CURLY : VARS_R_CURLY);
		s++;
	}
	return buf_take(&b);
}

void
vars_sentinel_restore(struct buf *b)
{
	static const size_t	 n = sizeof(VARS_L_CURLY) - 1;
	size_t			 r = 0, w = 0;

	if (b->b_len < n)
		return;
	/* Both sentinels have the same length; the output only shrinks. */
	while (r < b->b_len) {
		if (b->b_len - r >= n && b->b_data[r] == '_' &&
		    (memcmp(b->b_data + r, VARS_L_CURLY, n) == 0 ||
		    memcmp(b->b_data + r, VARS_R_CURLY, n) == 0)) {
			b->b_data[w++] = b->b_data[r + 9] == 'L' ? '{' : '}';
			r += n;
			continue;
		}
		b->b_data[w++] = b->b_data[r++];
	}
	b->b_len = w;
	b->b_data[w] = '\0';
}
