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
 * tmpl and of the result. Returns a string the caller frees. */
char		*vars_format(const struct vars *, const char *tmpl);

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

/* vars_json.c: values from JSON configuration. */

/* Python's str() of a JSON value (pyfmt_strdup): a string as it is,
 * a real as repr() (2.0, 1e+16), True/False/None, lists and objects as
 * Python shows them (['a', 1], {'k': 'v'}). Caller frees. */
char		*vars_py_str(json_t *);

/* Spec 5 item 1: every member of the user's userWideWorkflowVariables
 * object, as a template (vars_py_str for non-strings). Nothing when u
 * is NULL or the member is missing or not an object. */
void		 vars_user_wide(struct vars *, const struct conf_user *u);

/* Spec 5 item 3: every member of a workflow's top-level object except
 * "nodes" (conf_workflow's w_vars), as a template (vars_py_str). */
void		 vars_workflow(struct vars *, json_t *wvars);

/* Spec 5 item 7, from a Routing file's object ({"CAT": {"description":
 * ..., "workflow": ...}, ...}, in file order), as data:
 * category_colon_descriptions "A: d1; B: d2",
 * category_colon_descriptions_newline_bulletpoint "\n- A: d1\n- B: d2",
 * categoriesSeparatedByOr "A or B", categoryNameBulletpoints
 * "\n- A\n- B", category_list and category_descriptions as Python list
 * reprs (['A', 'B']). A missing description counts as "", a
 * non-string one as vars_py_str shows it. 0, or -1 (nothing set) when
 * routing is not an object. */
int		 vars_categories(struct vars *, json_t *routing);

/* vars_conv.c: the conversation variables of one node (spec 5 item 5). */

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
 * Discussion_Id or time_context_summary. */
void		 vars_conversation_node(struct vars *, const struct wmsgs *l,
		    const struct vars_conv *vc);

#endif
