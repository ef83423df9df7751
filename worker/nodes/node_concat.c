/* node_concat.c - StringConcatenator: a list of strings joined with a delimiter. */
#include <jansson.h>
#include <stdlib.h>

#include "../../common/jsonw.h"
#include "../core/node.h"

/* One list item as WilmerAI's str(item) gives it. Strings get variables;
 * other values are written as Python prints them, except that objects and
 * arrays come out as JSON (Python would print its own repr). */
static void
concat_item(struct node_ctx *x, json_t *e, struct buf *out)
{
	char	*s;

	switch (json_typeof(e)) {
	case JSON_STRING:
		s = vars_format(x->nx_vars, json_string_value(e));
		buf_adds(out, s);
		free(s);
		break;
	case JSON_INTEGER:
		buf_printf(out, "%lld", (long long)json_integer_value(e));
		break;
	case JSON_REAL:
		jsonw_real(out, json_real_value(e));
		break;
	case JSON_TRUE:
		buf_adds(out, "True");
		break;
	case JSON_FALSE:
		buf_adds(out, "False");
		break;
	case JSON_NULL:
		buf_adds(out, "None");
		break;
	default:
		jsonw_dump(out, e, JSONW_PYTHON);
		break;
	}
}

/* "strings" that is not a list gives "" (WilmerAI logs and returns ""). */
static int
concat_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	json_t		*list = json_object_get(x->nx_node, "strings"), *e;
	const char	*delim = node_raw(x, "delimiter");
	size_t		 i;

	if (delim == NULL)
		delim = "";
	json_array_foreach(list, i, e) {
		if (i > 0)
			buf_adds(out, delim);
		concat_item(x, e, out);
	}
	return 0;
}

const struct node_type node_concat = { "StringConcatenator", concat_run,
    true };
