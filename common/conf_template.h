/* conf_template.h - PromptTemplates/<name>.json: is the template there and well formed. */
#ifndef SLUICE_CONF_TEMPLATE_H
#define SLUICE_CONF_TEMPLATE_H

#include "json.h"

/* Load confdir/PromptTemplates/<name>.json (spec section 2.5) and check
 * it as the worker uses it: a JSON object whose members starting with
 * "promptTemplate" are strings. name must be a safe flat name
 * (names.h). Returns 0 with *jf filled (the caller frees it with
 * jfile_free), or -1 with *jf empty and err set: "path:line:col:
 * message", "PromptTemplates/<name>.json: no such prompt template
 * '<name>' (looked in <path>)", or "refusing unsafe prompt template
 * name '<name>': ..." (the name cut to 64 bytes, control bytes as '?').
 * The one copy of this rule: --check-config and the worker call it. */
int	conf_template_load(const char *confdir, const char *name,
	    struct jfile *jf, char err[CONF_ERRLEN]);

/* conf_template_load, keeping nothing: 0, or -1 with err set. */
int	conf_template_check(const char *confdir, const char *name,
	    char err[CONF_ERRLEN]);

#endif
