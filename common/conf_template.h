/* conf_template.h - PromptTemplates/<name>.json: is the template there and well formed. */
#ifndef SLUICE_CONF_TEMPLATE_H
#define SLUICE_CONF_TEMPLATE_H

#include "json.h"

/* Load confdir/PromptTemplates/<name>.json (spec section 2.5) and check
 * it as the worker will use it: a JSON object whose members starting
 * with "promptTemplate" are strings. name must be a safe flat name
 * (names.h). Returns 0, or -1 with err set: "path:line:col: message",
 * or "PromptTemplates/<name>.json: no such prompt template '<name>'
 * (looked in <path>)". Nothing is kept. */
int	conf_template_check(const char *confdir, const char *name,
	    char err[CONF_ERRLEN]);

#endif
