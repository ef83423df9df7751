/* vars_conv.c - the conversation variables one node sees (WilmerAI's spec section 5 item 5). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../common/pyfmt.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "msgs.h"
#include "msgs_tooltext.h"
#include "prompt.h"
#include "vars.h"
#include "vars_conv.h"
#include "vars_jinja.h"
#include "vars_json.h"

/*
 * What WilmerAI does (workflow_variable_manager, prompt_extraction_utils,
 * prompt_template_utils), reproduced here, and our choices where the
 * spec is silent (marked CHOICE).
 *
 * chat_* lists. Chat backends drop only the leading system messages
 * (QUIRK kept: when every message is a system message, none is
 * dropped); completion backends drop every message whose role is
 * exactly "system". Each message is its content, after "User: ",
 * "Assistant: ", "System: " or "Tool Result: " (role compared without
 * case; other roles get nothing) when the node's addUserAssistantTags
 * is truthy; joined by "\n", or the user's
 * conversationSeparationDelimiter when separateConversationInVariables
 * is truthy. Not stripped of [Beg_*] tags.
 *
 * templated_* lists. Always drop every "system" message. Completion
 * backends: each message is Prefix + content + Suffix of the node's
 * template for its role (promptTemplate<Role>Prefix, "" when missing),
 * the suffix left off when the last selected message is the
 * assistant's; chat backends: the content alone. Each piece is stripped
 * of [Beg_Sys]/[Beg_User]/[Beg_Assistant]/[Beg_SysMes]; pieces are
 * joined with nothing. No role tags, no delimiter.
 *
 * Selection, newest first. last_<n> and n_messages: Python's [-n:]
 * (a count of 0 gives nothing for chat_* but, QUIRK kept, everything
 * for templated_*, as [-0:] does; a negative count drops that many from
 * the front). estimated_token_limit: keep the newest message, then older
 * ones while the running total of tokens_estimate(content, 1.10) stays
 * within the budget; stop at the first that would exceed it.
 * min_n_max_tokens: the newest minMessagesInVariable whatever their
 * size, then older ones within maxEstimatedTokensInVariable.
 *
 * Context clamp (vc_clamp). Token budgets become
 * min(int(configured * level), int((window - maxResponse) * level) - 512)
 * (only the first term when the window is unknown; can be negative: the
 * newest message is still kept). With a known window the count
 * variables (last_<n>, n_messages, both kinds) are bounded by that
 * window budget too, keeping at least the newest message, and the
 * minMessagesInVariable floor yields to the budget (whole messages
 * dropped, the newest kept), as WilmerAI's clamp does.
 *
 * chat_system_prompt / templated_system_prompt. The system messages
 * (role "system" without case; chat backends: only those before the
 * first other message) joined by " ". Chat backends: as they are.
 * Completion backends: SystemPrefix + text + SystemSuffix of the user's
 * chatPromptTemplateName template (chat_) or the endpoint's
 * (templated_), stripped of role tags.
 *
 * chat_user_prompt_without_system / templated_user_prompt_without_system.
 * Every other message (chat backends: after the leading system ones)
 * rendered as a templated_* piece - with the user's chat template for
 * chat_, the endpoint's for templated_ - then the pieces whose role is
 * exactly "system" dropped, the rest joined with nothing. CHOICE (as
 * WilmerAI): no role tags and no delimiter here, even when the node and
 * user ask for them for the other chat_* variables.
 *
 * messages: Python's repr of the list of {'role': ..., 'content': ...}
 * dicts. CHOICE: only those two keys (WilmerAI's dicts may carry more,
 * e.g. images, which a prompt has no use for).
 *
 * CHOICE: every variable is set even for an empty conversation (WilmerAI
 * leaves them undefined, which makes its str.format fail and return the
 * template as it is).
 * CHOICE: node number fields that are strings are formatted against
 * this same table (WilmerAI: early variables only) and parsed as
 * Python's int() would (surrounding whitespace allowed); true/false
 * count as 1/0 (Python bools are ints); anything else gives the default.
 * includeToolCallsInConversation (truthy; addendum A8.4): the
 * chat_/templated_user_prompt_last_*, _n_messages,
 * _estimated_token_limit and _min_n_max_tokens variables are drawn
 * from a copy with the tool calls and results written into the text
 * (msgs_tooltext.c); the system prompt, the without_system pair and
 * messages are not.
 */

#define WINDOW_HEADROOM	512

struct conv {
	const struct wmsgs		*c_l;
	long				*c_tok;	/* estimates, -1 = not yet */
	size_t				*c_chat; /* what chat_* draw from */
	size_t				 c_nchat;
	size_t				*c_tpl;	/* what templated_* draw from */
	size_t				 c_ntpl;
	const char			*c_sep;
	bool				 c_tags;
	bool				 c_completion;
	const struct prompt_template	*c_tmpl;	/* endpoint's */
};

/* Which of a list's newest messages one variable takes. */
struct pick {
	bool	 p_counted;	/* Python's [-p_count:] first */
	long	 p_count;
	bool	 p_zero_empty;	/* a count of 0 takes nothing */
	bool	 p_budgeted;	/* then a token budget */
	long	 p_budget;
	long	 p_floor;	/* taken whatever the budget ... */
	bool	 p_yield;	/* ... unless p_yield (the first always) */
};

/* The node's and user's settings, budgets worked out. */
struct conv_set {
	long	 cs_n;		/* nMessagesToIncludeInVariable */
	long	 cs_est;	/* estimatedTokensToIncludeInVariable */
	long	 cs_min;	/* minMessagesInVariable */
	long	 cs_max;	/* maxEstimatedTokensInVariable */
	bool	 cs_bounded;	/* counts bounded by cs_window */
	long	 cs_window;	/* the window budget */
	bool	 cs_yield;	/* the min floor yields to cs_max */
};

static long
estimate(struct conv *c, size_t i)
{
	const char	*s = c->c_l->v[i].m_content;

	if (c->c_tok[i] < 0)
		c->c_tok[i] = tokens_estimate(s, strlen(s), TOKENS_MARGIN);
	return c->c_tok[i];
}

/* Where Python's lst[-n:] starts in a list of k. */
static size_t
py_tail(size_t k, long n)
{
	size_t	 m;

	if (n == 0)
		return 0;
	if (n > 0)
		return (unsigned long)n < k ? k - (size_t)n : 0;
	m = (size_t)(-(n + 1)) + 1;
	return m < k ? m : k;
}

/* The first position of idx[0..k) that p selects (k: none). */
static size_t
pick_start(struct conv *c, const size_t *idx, size_t k,
    const struct pick *p)
{
	size_t	 lo = 0, i, taken = 0;
	long	 acc = 0, tok;

	if (p->p_counted) {
		if (p->p_count == 0 && p->p_zero_empty)
			return k;
		lo = py_tail(k, p->p_count);
	}
	if (!p->p_budgeted)
		return lo;
	for (i = k; i > lo; i--, taken++) {
		tok = estimate(c, idx[i - 1]);
		if (p->p_floor > 0 && taken < (unsigned long)p->p_floor) {
			if (p->p_yield && taken > 0 && acc + tok > p->p_budget)
				break;
		} else if (acc + tok > p->p_budget)
			break;
		acc += tok;
	}
	return i;
}

static const char *
role_tag(const char *role)
{
	if (strcasecmp(role, "user") == 0)
		return "User: ";
	if (strcasecmp(role, "assistant") == 0)
		return "Assistant: ";
	if (strcasecmp(role, "system") == 0)
		return "System: ";
	if (strcasecmp(role, "tool") == 0)
		return "Tool Result: ";
	return "";
}

/* a + b + c without role tags, appended to out. */
static void
add_stripped(struct buf *out, const char *a, const char *b, const char *c)
{
	char	*joined = xasprintf("%s%s%s", a, b, c), *s;

	s = prompt_strip_tags(joined);
	buf_adds(out, s);
	free(s);
	free(joined);
}

/* One message as a templated piece (see the top of the file). */
static void
add_piece(struct buf *out, const struct wmsg *m, bool completion,
    const struct prompt_template *pt, bool last)
{
	const char	*suffix = "";

	if (!completion) {
		add_stripped(out, "", m->m_content, "");
		return;
	}
	if (!last || strcmp(m->m_role, "assistant") != 0)
		suffix = prompt_template_get(pt, m->m_role, "Suffix");
	add_stripped(out, prompt_template_get(pt, m->m_role, "Prefix"),
	    m->m_content, suffix);
}

static char *
join_chat(const struct conv *c, const size_t *idx, size_t from, size_t k)
{
	struct buf	 b = BUF_INIT;
	const struct wmsg *m;
	size_t		 j;

	buf_adds(&b, "");
	for (j = from; j < k; j++) {
		m = &c->c_l->v[idx[j]];
		if (j > from)
			buf_adds(&b, c->c_sep);
		if (c->c_tags)
			buf_adds(&b, role_tag(m->m_role));
		buf_adds(&b, m->m_content);
	}
	return buf_take(&b);
}

static char *
join_tpl(const struct conv *c, const size_t *idx, size_t from, size_t k)
{
	struct buf	 b = BUF_INIT;
	size_t		 j;

	buf_adds(&b, "");
	for (j = from; j < k; j++)
		add_piece(&b, &c->c_l->v[idx[j]], c->c_completion, c->c_tmpl,
		    j + 1 == k);
	return buf_take(&b);
}

/* chat_<suffix> or templated_<suffix> (tpl) for pick p. */
static char *
pick_value(struct conv *c, bool tpl, const struct pick *p)
{
	if (tpl)
		return join_tpl(c, c->c_tpl, pick_start(c, c->c_tpl,
		    c->c_ntpl, p), c->c_ntpl);
	return join_chat(c, c->c_chat, pick_start(c, c->c_chat, c->c_nchat,
	    p), c->c_nchat);
}

/* A count variable (last_<n>, n_messages). */
static char *
counted_value(struct conv *c, const struct conv_set *cs, bool tpl, long n)
{
	struct pick	 p = { .p_counted = true, .p_count = n,
	    .p_zero_empty = !tpl, .p_budgeted = cs->cs_bounded,
	    .p_budget = cs->cs_window, .p_floor = 1 };

	return pick_value(c, tpl, &p);
}

/* The selections, in the order they are set: chat_ then templated_
 * of each. */
static const struct { const char *n; long k; } selections[] = {
	{ "last_one", 1 }, { "last_two", 2 }, { "last_three", 3 },
	{ "last_four", 4 }, { "last_five", 5 }, { "last_ten", 10 },
	{ "last_twenty", 20 }, { "n_messages", -1 },
	{ "estimated_token_limit", -2 }, { "min_n_max_tokens", -3 } };
#define NSELECTIONS	(sizeof(selections) / sizeof(selections[0]))

/* Selection i, chat_ or templated_ (tpl). */
static char *
selection_value(struct conv *c, const struct conv_set *cs, size_t i,
    bool tpl)
{
	struct pick	 p;

	switch (selections[i].k) {
	case -1:
		return counted_value(c, cs, tpl, cs->cs_n);
	case -2:
		p = (struct pick){ .p_budgeted = true, .p_budget = cs->cs_est,
		    .p_floor = 1 };
		return pick_value(c, tpl, &p);
	case -3:
		p = (struct pick){ .p_budgeted = true, .p_budget = cs->cs_max,
		    .p_floor = cs->cs_min, .p_yield = cs->cs_yield };
		return pick_value(c, tpl, &p);
	default:
		return counted_value(c, cs, tpl, selections[i].k);
	}
}

/* ---- system prompt and the whole conversation ---------------------- */

/* other[0..n): WilmerAI's separate_messages; *sys gets the system
 * messages' contents joined " ". */
static size_t
separate(const struct wmsgs *l, bool leading_only, struct buf *sys,
    size_t *other)
{
	size_t	 i, n = 0, nsys = 0;

	buf_adds(sys, "");
	for (i = 0; i < l->n; i++) {
		if (strcasecmp(l->v[i].m_role, "system") == 0 &&
		    (!leading_only || n == 0)) {
			if (nsys++ > 0)
				buf_addc(sys, ' ');
			buf_adds(sys, l->v[i].m_content);
		} else
			other[n++] = i;
	}
	return n;
}

static char *
system_value(const char *sys, bool completion,
    const struct prompt_template *pt)
{
	struct buf	 b = BUF_INIT;

	if (!completion)
		return xstrdup(sys);
	buf_adds(&b, "");
	add_stripped(&b, prompt_template_get(pt, "system", "Prefix"), sys,
	    prompt_template_get(pt, "system", "Suffix"));
	return buf_take(&b);
}

static char *
without_system_value(const struct wmsgs *l, const size_t *other, size_t n,
    bool completion, const struct prompt_template *pt)
{
	struct buf	 b = BUF_INIT;
	size_t		 j;

	buf_adds(&b, "");
	for (j = 0; j < n; j++)
		if (strcmp(l->v[other[j]].m_role, "system") != 0)
			add_piece(&b, &l->v[other[j]], completion, pt,
			    j + 1 == n);
	return buf_take(&b);
}

/* chat_ or templated_ (tpl) system prompt (sysp) or whole conversation
 * without it. */
static char *
whole_value(const struct wmsgs *l, bool completion,
    const struct prompt_template *pt, bool sysp)
{
	struct buf	 sys = BUF_INIT;
	size_t		*other = xcalloc(l->n + 1, sizeof(*other)), n;
	char		*v;

	n = separate(l, !completion, &sys, other);
	v = sysp ? system_value(sys.b_data, completion, pt) :
	    without_system_value(l, other, n, completion, pt);
	buf_free(&sys);
	free(other);
	return v;
}

/* One message as a Jinja template sees it: role, content (braces as
 * sentinels, as WilmerAI holds them), and images, tool_calls,
 * tool_call_id and name when the message has them. */
static json_t *
jinja_message(const struct wmsg *m)
{
	json_t	*o = json_object(), *a;
	char	*c = vars_sentinel_escape(m->m_content);
	size_t	 i;

	json_object_set_new(o, "role", json_stringn_nocheck(m->m_role,
	    strlen(m->m_role)));
	json_object_set_new(o, "content", json_stringn_nocheck(c, strlen(c)));
	free(c);
	if (m->m_nimages > 0) {
		a = json_array();
		for (i = 0; i < m->m_nimages; i++)
			json_array_append_new(a, json_stringn_nocheck(
			    m->m_images[i], strlen(m->m_images[i])));
		json_object_set_new(o, "images", a);
	}
	if ((a = wmsg_calls(m)) != NULL)
		json_object_set_new(o, "tool_calls", a);
	if (m->m_tool_call_id != NULL)
		json_object_set_new(o, "tool_call_id", json_stringn_nocheck(
		    m->m_tool_call_id, strlen(m->m_tool_call_id)));
	if (m->m_name != NULL)
		json_object_set_new(o, "name", json_stringn_nocheck(m->m_name,
		    strlen(m->m_name)));
	return o;
}

/* messages for a Jinja template (only while one may render). */
static void
set_jinja_messages(struct vars *vs, const struct wmsgs *l)
{
	json_t	*list = json_array();
	size_t	 i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(list, jinja_message(&l->v[i]));
	vars_set_jinja(vs, "messages", list);
	json_decref(list);
}

/* messages: [{'role': ..., 'content': ...}, ...] as Python shows it. */
static char *
messages_value(const struct wmsgs *l)
{
	json_t	*list = json_array(), *m;
	char	*s;
	size_t	 i;

	for (i = 0; i < l->n; i++) {
		m = json_object();
		/* _nocheck: bytes that are not UTF-8 are shown as they are */
		json_object_set_new(m, "role", json_stringn_nocheck(
		    l->v[i].m_role, strlen(l->v[i].m_role)));
		json_object_set_new(m, "content", json_stringn_nocheck(
		    l->v[i].m_content, strlen(l->v[i].m_content)));
		json_array_append_new(list, m);
	}
	s = vars_py_str(list);
	json_decref(list);
	return s;
}

/* ---- the node's settings -------------------------------------------- */

/* s as Python's int() reads it (whitespace around, sign, digits). */
static bool
parse_long(const char *s, long *out)
{
	char	*end;
	long	 n;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)(*s == '+' || *s == '-' ? s[1] : *s)))
		return false;
	errno = 0;
	n = strtol(s, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0' || errno == ERANGE)
		return false;
	*out = n;
	return true;
}

/* A numeric node field (spec 3.2 step 5). */
static long
node_long(const struct vars *vs, json_t *node, const char *key, long def)
{
	json_t	*v = json_object_get(node, key);
	double	 d;
	char	*s;
	long	 n = def;

	if (json_is_integer(v)) {
		if (json_integer_value(v) >= LONG_MIN &&
		    json_integer_value(v) <= LONG_MAX)
			n = (long)json_integer_value(v);
	} else if (json_is_real(v)) {
		d = trunc(json_real_value(v));
		if (d > (double)LONG_MIN && d < (double)LONG_MAX)
			n = (long)d;
	} else if (json_is_boolean(v))
		n = json_is_true(v) ? 1 : 0;
	else if (json_is_string(v)) {
		s = vars_format_plain(vs, json_string_value(v));
		if (!parse_long(s, &n))
			n = def;
		free(s);
	}
	return n;
}

/* min(a, b) for the budgets. */
static long
lmin(long a, long b)
{
	return a < b ? a : b;
}

/* Python's int() of a budget product, kept far from long's limits so
 * that later sums cannot overflow. */
static long
to_long(double d)
{
	if (d >= (double)(LONG_MAX / 4))
		return LONG_MAX / 4;
	if (d <= (double)(LONG_MIN / 4))
		return LONG_MIN / 4;
	return (long)d;
}

static void
settings(const struct vars *vs, const struct vars_conv *vc,
    struct conv_set *cs)
{
	double	 level = vc->vc_level > 0 ? vc->vc_level : 1.0;
	long	 est, max;

	cs->cs_n = node_long(vs, vc->vc_node, "nMessagesToIncludeInVariable",
	    5);
	est = node_long(vs, vc->vc_node, "estimatedTokensToIncludeInVariable",
	    2048);
	cs->cs_min = node_long(vs, vc->vc_node, "minMessagesInVariable", 5);
	max = node_long(vs, vc->vc_node, "maxEstimatedTokensInVariable", 2048);
	cs->cs_est = est;
	cs->cs_max = max;
	cs->cs_bounded = cs->cs_yield = false;
	cs->cs_window = 0;
	if (!vc->vc_clamp)
		return;
	cs->cs_yield = true;
	cs->cs_est = to_long((double)est * level);
	cs->cs_max = to_long((double)max * level);
	if (vc->vc_window <= 0)
		return;
	cs->cs_bounded = true;
	cs->cs_window = to_long(((double)vc->vc_window -
	    (double)vc->vc_max_response) * level) - WINDOW_HEADROOM;
	cs->cs_est = lmin(cs->cs_est, cs->cs_window);
	cs->cs_max = lmin(cs->cs_max, cs->cs_window);
}

/* The user's delimiter: conversationSeparationDelimiter when
 * separateConversationInVariables is truthy (and it is a string). */
static const char *
separator(const struct conf_user *u)
{
	json_t	*root, *d;

	if (u == NULL)
		return "\n";
	root = u->u_file.jf_root;
	d = json_object_get(root, "conversationSeparationDelimiter");
	if (!pyfmt_truthy(json_object_get(root, "separateConversationInVariables")) ||
	    !json_is_string(d))
		return "\n";
	return json_string_value(d);
}

/* c's message lists: templated_* skip every "system" message, chat_*
 * the leading ones (chat backends; all of them, QUIRK, when every
 * message is one) or every one (completion backends). */
static void
conv_lists(struct conv *c, const struct wmsgs *l, bool completion)
{
	size_t	 i, first = 0;

	c->c_chat = xcalloc(l->n + 1, sizeof(*c->c_chat));
	c->c_tpl = xcalloc(l->n + 1, sizeof(*c->c_tpl));
	c->c_tok = xcalloc(l->n + 1, sizeof(*c->c_tok));
	c->c_nchat = c->c_ntpl = 0;
	while (first < l->n && strcmp(l->v[first].m_role, "system") == 0)
		first++;
	if (first == l->n)
		first = 0;
	for (i = 0; i < l->n; i++) {
		c->c_tok[i] = -1;
		if (strcmp(l->v[i].m_role, "system") != 0)
			c->c_tpl[c->c_ntpl++] = i;
		if (completion ? strcmp(l->v[i].m_role, "system") != 0 :
		    i >= first)
			c->c_chat[c->c_nchat++] = i;
	}
}

/* ---- making the values, at once or when first read ------------------ */

/*
 * Most of these values cost time in proportion to the conversation (a
 * thousand messages: most of a request's CPU), and most prompts read
 * one or two of them. So a node's values are lazy (vars_set_lazy) and
 * made from a conv_src when first read, each on its own. A lazy source
 * owns a copy of the messages: the node may change or free its list
 * before the read. It holds no template: a completion backend's values
 * (the only ones that use the templates) are made at once, and so are
 * all of them while a Jinja renderer is set (it reads every variable).
 */
struct conv_src {
	struct vars_lazy	 s_lz;		/* first: s_lz is the source */
	struct wmsgs		 s_msgs;	/* the conversation */
	struct wmsgs		 s_tt;		/* with tool text, or empty */
	bool			 s_tools;	/* selections from s_tt */
	bool			 s_owned;	/* s_msgs is a copy */
	bool			 s_completion;
	const struct prompt_template *s_tmpl;	/* the endpoint's */
	const struct prompt_template *s_chat_tmpl;	/* the user's */
	struct conv_set		 s_set;
	struct conv		 s_conv;	/* made at the first selection */
	bool			 s_conv_made;
	char			*s_sep;
};

static struct conv *
src_conv(struct conv_src *s)
{
	const struct wmsgs	*sel = s->s_tools ? &s->s_tt : &s->s_msgs;

	if (!s->s_conv_made) {
		s->s_conv.c_l = sel;
		s->s_conv.c_sep = s->s_sep;
		conv_lists(&s->s_conv, sel, s->s_completion);
		s->s_conv_made = true;
	}
	return &s->s_conv;
}

/* The value of name, one of the variables this file sets; NULL when
 * it is not one. */
static char *
src_value(struct conv_src *s, const char *name)
{
	static const char	 chat[] = "chat_user_prompt_",
				 tpl[] = "templated_user_prompt_";
	bool			 t = strncmp(name, tpl, sizeof(tpl) - 1) == 0;
	const char		*suffix = NULL;
	size_t			 i;

	if (t)
		suffix = name + sizeof(tpl) - 1;
	else if (strncmp(name, chat, sizeof(chat) - 1) == 0)
		suffix = name + sizeof(chat) - 1;
	for (i = 0; suffix != NULL && i < NSELECTIONS; i++)
		if (strcmp(suffix, selections[i].n) == 0)
			return selection_value(src_conv(s), &s->s_set, i, t);
	if (suffix != NULL && strcmp(suffix, "without_system") == 0)
		return whole_value(&s->s_msgs, s->s_completion,
		    t ? s->s_tmpl : s->s_chat_tmpl, false);
	if (strcmp(name, "chat_system_prompt") == 0 ||
	    strcmp(name, "templated_system_prompt") == 0)
		return whole_value(&s->s_msgs, s->s_completion,
		    name[0] == 't' ? s->s_tmpl : s->s_chat_tmpl, true);
	if (strcmp(name, "messages") == 0)
		return messages_value(&s->s_msgs);
	return NULL;
}

/* Every name, in the order WilmerAI's table has them; fn(name, arg). */
static void
src_names(void (*fn)(const char *, void *), void *arg)
{
	static const char *const whole[] = { "chat_system_prompt",
	    "templated_system_prompt", "chat_user_prompt_without_system",
	    "templated_user_prompt_without_system", "messages" };
	char		 name[64];
	size_t		 i;

	for (i = 0; i < NSELECTIONS; i++) {
		snprintf(name, sizeof(name), "chat_user_prompt_%s",
		    selections[i].n);
		fn(name, arg);
		snprintf(name, sizeof(name), "templated_user_prompt_%s",
		    selections[i].n);
		fn(name, arg);
	}
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		fn(whole[i], arg);
}

struct src_put {
	struct vars	*p_vs;
	struct conv_src	*p_src;
};

static void
put_now(const char *name, void *arg)
{
	struct src_put	*p = arg;
	char		*v = src_value(p->p_src, name);

	vars_set(p->p_vs, name, v);
	free(v);
}

static void
put_lazy(const char *name, void *arg)
{
	struct src_put	*p = arg;

	vars_set_lazy(p->p_vs, name, &p->p_src->s_lz);
}

static void
src_fill(struct vars *vs, struct vars_lazy *lz, const char *name)
{
	struct src_put	 p = { vs, (struct conv_src *)(void *)lz };

	put_now(name, &p);
}

static void
src_free(struct vars_lazy *lz)
{
	struct conv_src	*s = (struct conv_src *)(void *)lz;

	if (s->s_owned)
		wmsgs_free(&s->s_msgs);
	wmsgs_free(&s->s_tt);
	free(s->s_conv.c_chat);
	free(s->s_conv.c_tpl);
	free(s->s_conv.c_tok);
	free(s->s_sep);
	free(s);
}

/* The source of node vc's values from conversation l; lazy: it owns a
 * copy of what it reads. */
static struct conv_src *
src_new(const struct vars *vs, const struct wmsgs *l,
    const struct vars_conv *vc, bool lazy)
{
	struct conv_src	*s = xcalloc(1, sizeof(*s));
	size_t		 i;

	s->s_lz = (struct vars_lazy){ src_fill, src_free, 0 };
	s->s_owned = lazy;
	if (lazy)
		for (i = 0; i < l->n; i++)
			wmsgs_add(&s->s_msgs, l->v[i].m_role,
			    l->v[i].m_content);
	else
		s->s_msgs = *l;
	if (pyfmt_truthy(json_object_get(vc->vc_node,
	    "includeToolCallsInConversation"))) {
		wmsgs_tool_text(&s->s_tt, l);
		s->s_tools = true;
	}
	s->s_completion = vc->vc_completion;
	s->s_tmpl = lazy ? NULL : vc->vc_template;
	s->s_chat_tmpl = lazy ? NULL : vc->vc_chat_template;
	s->s_conv.c_completion = vc->vc_completion;
	s->s_conv.c_tmpl = s->s_tmpl;
	s->s_conv.c_tags = pyfmt_truthy(json_object_get(vc->vc_node,
	    "addUserAssistantTags"));
	s->s_sep = xstrdup(separator(vc->vc_user));
	settings(vs, vc, &s->s_set);
	return s;
}

void
vars_conversation_node(struct vars *vs, const struct wmsgs *l,
    const struct vars_conv *vc)
{
	static const struct vars_conv	 zero;
	bool				 lazy;
	struct src_put			 p;

	if (vc == NULL)
		vc = &zero;
	lazy = !vc->vc_completion && !vars_rendering(vs);
	p = (struct src_put){ vs, src_new(vs, l, vc, lazy) };
	if (lazy) {
		src_names(put_lazy, &p);
		return;
	}
	src_names(put_now, &p);
	if (vars_rendering(vs))
		set_jinja_messages(vs, l);
	src_free(&p.p_src->s_lz);
}
