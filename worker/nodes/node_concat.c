/* node_concat.c - StringConcatenator: a list of strings joined with a delimiter. */
#include <jansson.h>
#include <stdlib.h>

#include "../../common/pyfmt.h"
#include "../core/node.h"

/* One list item as WilmerAI's handler gives it: a string with variables
 * applied, anything else as str(item) (a dict as {'k': 'v'}), without
 * variables. */
static void
concat_item(struct node_ctx *x, json_t *e, struct buf *out)
{
	char	*s;

	if (json_is_string(e)) {
		s = vars_format(x->nx_vars, json_string_value(e));
		buf_adds(out, s);
		free(s);
	} else
		pyfmt_str(out, e);
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
