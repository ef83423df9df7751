/* node.c - the helpers node handlers share. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/xmem.h"
#include "node.h"
#include "vars_json.h"

const char *
field_raw(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

char *
field_str(const struct vars *v, json_t *o, const char *key)
{
	const char	*s = field_raw(o, key);

	return vars_format(v, s != NULL ? s : "");
}

double
field_double(const struct vars *vs, json_t *o, const char *key, double def)
{
	json_t	*v = json_object_get(o, key);
	char	*s, *end;
	double	 d = def;

	if (json_is_number(v))
		return json_number_value(v);
	if (!json_is_string(v))
		return def;
	s = vars_format_plain(vs, json_string_value(v));	/* never Jinja */
	d = strtod(s, &end);
	if (end == s || *end != '\0')
		d = def;
	free(s);
	return d;
}

long
field_long(const struct vars *vs, json_t *o, const char *key, long def)
{
	double	 d = field_double(vs, o, key, (double)def);

	return isfinite(d) && d >= -9e18 && d <= 9e18 ? (long)d : def;
}

bool
field_bool(json_t *o, const char *key, bool def)
{
	json_t	*v = json_object_get(o, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

const char *
node_raw(struct node_ctx *x, const char *key)
{
	return field_raw(x->nx_node, key);
}

char *
node_str(struct node_ctx *x, const char *key)
{
	return field_str(x->nx_vars, x->nx_node, key);
}

long
node_long(struct node_ctx *x, const char *key, long def)
{
	return field_long(x->nx_vars, x->nx_node, key, def);
}

double
node_double(struct node_ctx *x, const char *key, double def)
{
	return field_double(x->nx_vars, x->nx_node, key, def);
}

bool
node_bool(struct node_ctx *x, const char *key, bool def)
{
	return field_bool(x->nx_node, key, def);
}

char **
node_strv(struct node_ctx *x, const char *key)
{
	json_t	*a = json_object_get(x->nx_node, key), *e;
	char	**v;
	size_t	 i, n = 0;

	v = xcalloc(json_is_array(a) ? json_array_size(a) + 1 : 1,
	    sizeof(*v));
	json_array_foreach(a, i, e)
		if (json_is_string(e))
			v[n++] = vars_format(x->nx_vars, json_string_value(e));
	v[n] = NULL;
	return v;
}

void
node_strv_free(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

bool
node_render_failed(struct node_ctx *x)
{
	return vars_render_error(x->nx_vars) != NULL ||
	    vars_render_stopped(x->nx_vars);
}

char **
node_scoped_inputs(struct node_ctx *x, size_t lead)
{
	json_t	*a = json_object_get(x->nx_node, "scoped_variables"), *e;
	char	**v, *s;
	size_t	 i;

	v = xcalloc((json_is_array(a) ? json_array_size(a) : 0) + lead + 1,
	    sizeof(*v));
	for (i = 0; i < lead; i++)
		v[i] = xstrdup("");
	json_array_foreach(a, i, e) {
		s = vars_py_str(e);
		v[lead + i] = vars_format(x->nx_vars, s);
		free(s);
	}
	return v;
}

int
node_fail(struct node_ctx *x, struct wresult *res, int http, const char *fmt,
    ...)
{
	const char	*type = node_raw(x, "type");
	va_list		 ap;
	size_t		 n;

	res->r_status = RQ_ERROR;
	res->r_http = (uint32_t)http;
	snprintf(res->r_code, sizeof(res->r_code), "node_error");
	snprintf(res->r_message, sizeof(res->r_message),
	    "workflow '%s' node %zu (%s): ", x->nx_workflow, x->nx_index + 1,
	    type != NULL ? type : "Standard");
	n = strlen(res->r_message);
	va_start(ap, fmt);
	vsnprintf(res->r_message + n, sizeof(res->r_message) - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Python's re.split(r'(\s+)', text): words and the whitespace between
 * them, each its own chunk (StaticResponse as a streaming responder;
 * WilmerAI's 20 ms pause per word is left out). */
void
node_emit_words(struct rq *rq, const char *s, size_t n)
{
	size_t	 i = 0, j;
	bool	 sp;

	while (i < n) {
		sp = isspace((unsigned char)s[i]) != 0;
		for (j = i; j < n && (isspace((unsigned char)s[j]) != 0) == sp;
		    j++)
			;
		rq_emit(rq, (struct str){ s + i, j - i }, STR_NULL);
		i = j;
	}
}
