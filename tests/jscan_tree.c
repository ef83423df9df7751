/* jscan_tree.c - a jansson tree built through common/jscan, to compare jscan with json_loadb (check_jscan, fuzz/jscan_fuzz.c). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/jscan.h"
#include "jscan_tree.h"

static json_t *build(struct jscan *);

static json_t *
build_object(struct jscan *js, json_t *o)
{
	struct str	 k;
	json_t		*e;
	char		*key;
	int		 r;

	while ((r = jscan_member(js, &k)) == 1) {
		key = strndup(k.p, k.n);
		if ((e = build(js)) == NULL) {
			free(key);
			break;
		}
		json_object_set_new(o, key, e);
		free(key);
	}
	if (r != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
build_array(struct jscan *js, json_t *a)
{
	json_t	*e;
	int	 r;

	while ((r = jscan_element(js)) == 1) {
		if ((e = build(js)) == NULL)
			break;
		json_array_append_new(a, e);
	}
	if (r != 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *
build(struct jscan *js)
{
	struct jscan_val	 v;

	if (jscan_value(js, &v) == -1)
		return NULL;
	switch (v.jv_type) {
	case JS_OBJECT:
		return build_object(js, json_object());
	case JS_ARRAY:
		return build_array(js, json_array());
	case JS_STRING:
		if (memchr(v.jv_str.p, '\0', v.jv_str.n) != NULL)
			return NULL;	/* a NUL got through */
		return json_stringn(v.jv_str.p, v.jv_str.n);
	case JS_TRUE:
		return json_true();
	case JS_FALSE:
		return json_false();
	case JS_NULL:
		return json_null();
	default:
		return json_loadb(v.jv_p, v.jv_n, JSON_DECODE_ANY, NULL);
	}
}

json_t *
jscan_tree(const char *p, size_t n)
{
	struct jscan	 js;
	json_t		*v;

	jscan_init(&js, p, n);
	if ((v = build(&js)) != NULL && jscan_finish(&js) == -1) {
		json_decref(v);
		v = NULL;
	}
	jscan_clear(&js);
	return v;
}

int
jscan_tree_depth(const json_t *v, int *real)
{
	const char	*k;
	/* jansson iterates a non-const object; nothing is changed */
	json_t		*e, *o = (json_t *)(uintptr_t)v;
	size_t		 i;
	int		 d, max = 0;

	if (json_is_real(v))
		*real = 1;
	if (json_is_object(v))
		json_object_foreach(o, k, e)
			if ((d = jscan_tree_depth(e, real)) > max)
				max = d;
	if (json_is_array(v))
		json_array_foreach(o, i, e)
			if ((d = jscan_tree_depth(e, real)) > max)
				max = d;
	return json_is_object(v) || json_is_array(v) ? max + 1 : 0;
}
