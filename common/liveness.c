/* liveness.c - a user's livenessToolCall: the tool call Sluice adds to an answer that has none, so agent front ends keep looping (addendum A8.7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "liveness.h"
#include "pyfmt.h"
#include "pystr.h"
#include "uuid.h"
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
	char	 hex[33], id[32];
	char	*a = jsonw_dumps(args, JSONW_PYTHON);
	json_t	*c;

	uuid_new_hex(hex);
	(void)snprintf(id, sizeof(id), "wilmer_liveness_%.8s", hex);
	c = json_pack("{s:i,s:s,s:s,s:{s:s,s:s}}", "index", 0, "id", id,
	    "type", "function", "function", "name", name, "arguments", a);
	free(a);
	return c;
}
