/* jinja_vars.c - a node's Jinja2 renderer for its variables (vars_set_renderer): names the template, watches the request's cancellation. */
#include <stdio.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/pyfmt.h"
#include "jinja_vars.h"

#define FIELD_DEPTH	3

/* Append to path where in v the string tmpl is, as key, key[i] or
 * key.sub; false when nowhere. */
static bool
find_field(json_t *v, const char *tmpl, struct buf *path, int depth)
{
	const char	*key;
	json_t		*e;
	size_t		 i, mark = path->b_len;

	if (json_is_string(v))
		return strcmp(json_string_value(v), tmpl) == 0;
	if (depth == 0)
		return false;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			buf_printf(path, "[%zu]", i);
			if (find_field(e, tmpl, path, depth - 1))
				return true;
			path->b_len = mark;
		}
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, e) {
			if (depth == FIELD_DEPTH && (strcmp(key, "type") == 0 ||
			    strcmp(key, "title") == 0))
				continue;
			buf_printf(path, "%s%s", depth == FIELD_DEPTH ? "" : ".",
			    key);
			if (find_field(e, tmpl, path, depth - 1))
				return true;
			path->b_len = mark;
		}
	}
	return false;
}

/* "'prompt' of node 'Title'" */
static void
template_name(json_t *node, const char *tmpl, struct buf *b)
{
	struct buf	 path = BUF_INIT;
	const char	*title = json_string_value(json_object_get(node,
			    "title"));

	if (find_field(node, tmpl, &path, FIELD_DEPTH) && path.b_len > 0)
		buf_printf(b, "'%.*s'", (int)path.b_len, path.b_data);
	else
		buf_adds(b, "a field");
	if (title != NULL)
		buf_printf(b, " of node '%s'", title);
	buf_free(&path);
}

static int
jv_render(void *arg, const char *tmpl, json_t *ctx, struct buf *out,
    struct buf *err)
{
	struct jinja_node	*jn = arg;
	struct buf		 cause = BUF_INIT;
	long			 line;
	enum jinja_end		 e;

	e = jinja_render(tmpl, ctx, jn->jn_lim, &jn->jn_hooks, out, &cause,
	    &line);
	if (e == JINJA_ERROR) {
		buf_adds(err, "template ");
		template_name(jn->jn_node, tmpl, err);
		if (line > 0)
			buf_printf(err, ", line %ld", line);
		buf_printf(err, ": %.*s", (int)cause.b_len,
		    cause.b_data != NULL ? cause.b_data : "");
	}
	buf_free(&cause);
	return e == JINJA_OK ? 0 : e == JINJA_CANCELLED ? 1 : -1;
}

const struct vars_render_ops	 jinja_vars_ops = { jv_render };

bool
jinja_wanted(json_t *node)
{
	return pyfmt_truthy(json_object_get(node, "jinja2"));
}
