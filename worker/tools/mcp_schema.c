/* mcp_schema.c - a small JSON Schema checker: type, required, properties, items, enum. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "mcp_schema.h"

static bool
is_type(const json_t *v, const char *t)
{
	if (strcmp(t, "object") == 0)
		return json_is_object(v);
	if (strcmp(t, "array") == 0)
		return json_is_array(v);
	if (strcmp(t, "string") == 0)
		return json_is_string(v);
	if (strcmp(t, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(t, "null") == 0)
		return json_is_null(v);
	if (strcmp(t, "number") == 0)
		return json_is_number(v);
	if (strcmp(t, "integer") == 0)
		return json_is_integer(v) || (json_is_real(v) &&
		    floor(json_real_value(v)) == json_real_value(v));
	return true;
}

static int
check_type(const json_t *schema, const json_t *v, struct buf *why)
{
	const json_t	*t = json_object_get(schema, "type"), *e;
	size_t		 i;

	if (json_is_string(t) && !is_type(v, json_string_value(t))) {
		pyfmt_repr(why, v);
		buf_printf(why, " is not of type '%s'", json_string_value(t));
		return -1;
	}
	if (!json_is_array(t) || json_array_size(t) == 0)
		return 0;
	json_array_foreach(t, i, e)
		if (json_is_string(e) && is_type(v, json_string_value(e)))
			return 0;
	pyfmt_repr(why, v);
	buf_adds(why, " is not of type ");
	json_array_foreach(t, i, e) {
		buf_adds(why, i > 0 ? ", " : "");
		pyfmt_repr(why, e);
	}
	return -1;
}

static int
check_enum(const json_t *schema, const json_t *v, struct buf *why)
{
	const json_t	*en = json_object_get(schema, "enum"), *e;
	size_t		 i;

	if (!json_is_array(en))
		return 0;
	json_array_foreach(en, i, e)
		if (json_equal(e, v))
			return 0;
	pyfmt_repr(why, v);
	buf_adds(why, " is not one of ");
	pyfmt_repr(why, en);
	return -1;
}

static int
check_object(const json_t *schema, const json_t *v, struct buf *why)
{
	const json_t	*req = json_object_get(schema, "required"), *e;
	json_t		*ps, *pe;
	const char	*k;
	size_t		 i;

	json_array_foreach(req, i, e)
		if (json_is_string(e) &&
		    json_object_get(v, json_string_value(e)) == NULL) {
			pyfmt_repr(why, e);
			buf_adds(why, " is a required property");
			return -1;
		}
	ps = json_object_get(schema, "properties");
	json_object_foreach(ps, k, pe)
		if (json_object_get(v, k) != NULL &&
		    mcp_schema_check(pe, json_object_get(v, k), why) == -1)
			return -1;
	return 0;
}

int
mcp_schema_check(const json_t *schema, const json_t *v, struct buf *why)
{
	const json_t	*items, *e;
	size_t		 i;

	if (!json_is_object(schema))
		return 0;
	if (check_type(schema, v, why) == -1 ||
	    check_enum(schema, v, why) == -1)
		return -1;
	if (json_is_object(v))
		return check_object(schema, v, why);
	items = json_object_get(schema, "items");
	if (json_is_array(v) && json_is_object(items))
		json_array_foreach(v, i, e)
			if (mcp_schema_check(items, e, why) == -1)
				return -1;
	return 0;
}
