/* vars_jinja.h - what a Jinja2 template sees of the variables, and WilmerAI's brace sentinels (addendum A7). */
#ifndef SLUICE_VARS_JINJA_H
#define SLUICE_VARS_JINJA_H

#include <jansson.h>

#include "../../common/buf.h"
#include "vars.h"

#define VARS_L_CURLY	"__WILMER_L_CURLY__"
#define VARS_R_CURLY	"__WILMER_R_CURLY__"

/* The variables as a Jinja2 template tmpl sees them, as WilmerAI
 * builds them (the rules at the top of vars_jinja.c): a new JSON
 * object the caller decrefs. */
json_t	*vars_jinja_context(const struct vars *, const char *tmpl);

/* s with every '{' and '}' turned into its sentinel, as WilmerAI holds
 * message contents and agent inputs and outputs. Caller frees. */
char	*vars_sentinel_escape(const char *s);

/* Turn every sentinel in b back into its brace, in place. */
void	 vars_sentinel_restore(struct buf *b);

#endif
