/* vars.h - workflow variables and {name} substitution (WilmerAI's spec section 5). */
#ifndef SLUICE_VARS_H
#define SLUICE_VARS_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct buf;
struct conf_user;
struct prompt_template;
struct vars;
struct wmsgs;

/*
 * Precedence follows spec 5: a later set replaces an earlier one, so the
 * engine sets the families in WilmerAI's order. Per run: vars_user_wide,
 * vars_clock, vars_workflow, vars_discussion, the agentNInput values
 * (vars_set), vars_categories (categorisation workflow only). Per node,
 * before its fields are formatted: vars_conversation_node. After a node:
 * its agentNOutput (vars_set). The families' names never clash except
 * where spec 5 says which wins, and that is the order above.
 *
 * Two kinds of value. Data (vars_set: messages, agent inputs and
 * outputs, dates, categories) is inserted as it is. A template
 * (vars_set_template: workflow keys, userWideWorkflowVariables) has its
 * own {name}s expanded once, against the same table, where it is
 * inserted; what that inserts is not expanded again.
 */

/* vars.c: the table, substitution, clock and discussion variables. */
struct vars	*vars_new(void);
void		 vars_free(struct vars *);		/* NULL-safe */

/* Set name to a copy of value (data), replacing an earlier value of
 * either kind. */
void		 vars_set(struct vars *, const char *name, const char *value);

/* Same for a template value (see above). */
void		 vars_set_template(struct vars *, const char *name,
		    const char *value);

/*
 * A lazy value: data made when it is first read, by whoever set it.
 * Some values cost time in proportion to the conversation (vars_conv.c)
 * and most prompts read none of them. The first read of name
 * (vars_get, vars_format, vars_each, vars_dump, vars_set_jinja) calls
 * vl_fill(vs, lz, name), which must vars_set name and may set other
 * names lz stands for. Until then name is set, in its place in the
 * order. The maker owns what it needs (nothing borrowed from a caller
 * that may be gone when the read comes). The table counts its
 * references in vl_refs (start it at 0) and calls vl_free once no
 * name is waiting for lz: each set, or vars_free.
 */
struct vars_lazy {
	void		(*vl_fill)(struct vars *, struct vars_lazy *,
			    const char *name);
	void		(*vl_free)(struct vars_lazy *);
	unsigned	  vl_refs;
};

/* Set name to a value lz makes when it is first read. */
void		 vars_set_lazy(struct vars *, const char *name,
		    struct vars_lazy *lz);

/* The value of name[0..n) as it was set (a template unexpanded), or
 * NULL. Borrowed until the next set/free. */
const char	*vars_get(const struct vars *, const char *name, size_t n);

/* Substitute {name} in tmpl as Python's str.format does for plain
 * names: "{{" and "}}" give literal braces. A name that is not set, or
 * any other brace use ({x:>5}, {x!r}, {0}, a lone brace), is kept
 * literally (WilmerAI instead returns the whole template unsubstituted
 * when one name is unknown; we substitute the known ones - see
 * docs/migrating-from-wilmer.md). Data values are inserted as they are; template
 * values are expanded once by the same rules. Linear in the sizes of
 * tmpl and of the result. While a renderer is set (below) tmpl is a
 * Jinja2 template instead. Returns a string the caller frees. */
char		*vars_format(const struct vars *, const char *tmpl);

/* WilmerAI's apply_variables(str(v)): Python's str() of the JSON
 * value v (pyfmt_str: a string as it is, 5 as "5", true as "True"),
 * then vars_format. Returns a string the caller frees. */
char		*vars_format_value(const struct vars *, const json_t *v);

/* Give name (already set) the value a Jinja template sees in place of
 * its string: a workflow key's list stays a list. v is borrowed (a
 * reference is taken); the next set of name drops it. No-op when name
 * is not set. */
void		 vars_set_jinja(struct vars *, const char *name, json_t *v);

/* Walk the table in the order names were first set: *i starts at 0.
 * Returns false past the end; else the name, its string value and its
 * Jinja value (NULL: the string), whether it is a template. Borrowed
 * until the next set/free. */
bool		 vars_each(const struct vars *, size_t *i, const char **name,
		    const char **value, json_t **jv, bool *tmpl);

/*
 * Jinja2 (addendum A7). While a renderer is set, vars_format renders
 * its template with it instead of substituting {name}s: the engine
 * sets one around a node whose "jinja2" is truthy, and clears it after.
 * vr_render gets the template and the variables as a JSON object
 * (vars_jinja_context), appends the output to out and returns 0; or
 * appends one line to err and returns -1; or returns 1 when the request
 * stopped. The first failure sticks: vars_format then returns "" for
 * the rest of the node without rendering, and the node runner (and the
 * LLM call, before it sends anything) checks vars_render_error.
 */
struct vars_render_ops {
	int	(*vr_render)(void *arg, const char *tmpl, json_t *ctx,
		    struct buf *out, struct buf *err);
};

/* Set (ops non-NULL) or clear (NULL) the renderer; either way the
 * sticky error and stop are forgotten. arg is borrowed until cleared. */
void		 vars_set_renderer(struct vars *,
		    const struct vars_render_ops *, void *arg);

/* Is a renderer set? */
bool		 vars_rendering(const struct vars *);

/* The first render error since the renderer was set, or NULL. Borrowed
 * until the renderer is set or cleared. */
const char	*vars_render_error(const struct vars *);

/* Did a render stop because the request stopped? */
bool		 vars_render_stopped(const struct vars *);

/* vars_format's {name} substitution, whatever the renderer: for the
 * fields WilmerAI never renders with Jinja (numbers). Either way, brace
 * sentinels in the result (__WILMER_L_CURLY__, __WILMER_R_CURLY__)
 * become braces, as after WilmerAI's format. Caller frees. */
char		*vars_format_plain(const struct vars *, const char *tmpl);

/* Append one line per variable, in the order first set: name, "=" for
 * data or ":=" for a template, the value C-escaped and cut after 200
 * bytes with its full length. For debugging. */
void		 vars_dump(const struct vars *, struct buf *);

/* Spec 5 item 2 (local time): todays_date_pretty, todays_date_iso,
 * YYYY_MM_DD, current_time_12h, current_time_24h, current_month_full,
 * current_day_of_week, current_day_of_month. */
void		 vars_clock(struct vars *, time_t now);

/* Spec 5 item 4: Discussion_Id and time_context_summary ("" for NULL),
 * as data. */
void		 vars_discussion(struct vars *, const char *discussion_id,
		    const char *time_context_summary);

#endif
