/* toolcall.c - a tool call in OpenAI's shape, as WilmerAI makes one up (the liveness call, an enforced tool_choice). */
#include <stdio.h>
#include <stdlib.h>

#include "jsonw.h"
#include "toolcall.h"
#include "uuid.h"

json_t *
toolcall_new(int index, const char *prefix, int hexlen, const char *name,
    const json_t *args)
{
	char	 hex[33], id[96];
	char	*a = jsonw_dumps(args, JSONW_PYTHON);
	json_t	*c = json_object();

	uuid_new_hex(hex);
	(void)snprintf(id, sizeof(id), "%s%.*s", prefix, hexlen, hex);
	if (index >= 0)
		json_object_set_new(c, "index", json_integer(index));
	json_object_set_new(c, "id", json_string(id));
	json_object_set_new(c, "type", json_string("function"));
	json_object_set_new(c, "function", json_pack("{s:s,s:s}", "name",
	    name, "arguments", a));
	free(a);
	return c;
}
