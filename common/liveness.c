/* liveness.c - a user's livenessToolCall: the tool call Sluice adds to an answer that has none, so agent front ends keep looping (addendum A8.7). */
#include <string.h>

#include "liveness.h"
#include "pyfmt.h"
#include "pystr.h"
#include "toolcall.h"
#include "xmem.h"

int
liveness_conf(const json_t *root, char **name, json_t **args)
{
	json_t		*l = json_object_get(root, "livenessToolCall");
	json_t		*tn = json_object_get(l, "toolName");
	json_t		*a = json_object_get(l, "arguments");
	const char	*p;
	size_t		 n;

	*name = NULL;
	*args = NULL;
	if (!pyfmt_truthy(l))
		return 0;
	if (!json_is_object(l) || !json_is_string(tn))
		return -1;
	p = json_string_value(tn);
	n = json_string_length(tn);
	pystr_trim(&p, &n);
	if (n == 0)
		return -1;
	*name = xstrndup(p, n);
	*args = json_is_object(a) ? json_incref(a) : json_object();
	return 1;
}

json_t *
liveness_call(const char *name, const json_t *args)
{
	return toolcall_new(0, "wilmer_liveness_", 8, name, args);
}
