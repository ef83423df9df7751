/* vars.h - workflow variables and {name} substitution. */
#ifndef SLUICE_VARS_H
#define SLUICE_VARS_H

#include <stddef.h>
#include <time.h>

struct vars;
struct wmsgs;

struct vars	*vars_new(void);
void		 vars_free(struct vars *);		/* NULL-safe */

/* Set name to a copy of value, replacing an earlier value. */
void		 vars_set(struct vars *, const char *name, const char *value);

/* The value of name[0..n), or NULL. Borrowed until the next set/free. */
const char	*vars_get(const struct vars *, const char *name, size_t n);

/* Substitute {name} in tmpl as Python's str.format does for plain
 * names: "{{" and "}}" give literal braces. A name that is not set, or
 * any other brace use, is kept literally (WilmerAI instead returns the
 * whole template unsubstituted when one name is unknown; we substitute
 * the known ones - see docs/compat.md). Values are inserted as they are
 * and never scanned again. Returns a string the caller frees. */
char		*vars_format(const struct vars *, const char *tmpl);

/* WilmerAI's built-ins, set in its order (a later one wins a clash with
 * an earlier one, and workflow keys go between the two calls):
 * vars_clock: todays_date_pretty, todays_date_iso, YYYY_MM_DD,
 * current_time_12h, current_time_24h, current_month_full,
 * current_day_of_week, current_day_of_month (local time);
 * vars_conversation: Discussion_Id, time_context_summary,
 * chat_system_prompt, chat_user_prompt_last_{one..twenty}. */
void		 vars_clock(struct vars *, time_t now);
void		 vars_conversation(struct vars *, const struct wmsgs *);

#endif
