/* api_body.c - a chat body parsed for api_build: "messages" read straight from the text, the rest as jansson values. */
#include <jansson.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "../common/jscan.h"
#include "../common/xmem.h"
#include "api.h"

/*
 * jansson builds a tree of the whole body: a hash table per message
 * and a copy of every string, which for a 1,000-message conversation
 * was 43% of the gateway's time (bench/PROFILE.md). Here the body is
 * scanned once; each message keeps views of the members the gateway
 * reads (strings viewed in the body, or unescaped when they have
 * escapes), and only the rare arrays and objects among them (content
 * parts, tool calls, images) become jansson values, parsed from their
 * own text when asked for. The other top-level members are small and
 * become jansson values as before. jscan accepts only what jansson
 * accepts, with the same values; anything it refuses goes through
 * jansson whole, so errors and the odd cases it leaves to jansson
 * (long reals, very deep nesting, a NUL byte, a repeated "messages")
 * behave as before.
 */

/* A member as scanned: for strings the unescaped text, for other
 * values their JSON text. */
struct sfield {
	int		 sf_type;	/* json_type, or -1 when absent */
	struct str	 sf_s;
};

struct smsg {
	bool		 sm_object;
	struct sfield	 sm_f[AMF_N];
};

struct api_body {
	json_t		*ab_root;
	bool		 ab_scanned;	/* "messages" is in ab_msgs */
	struct smsg	*ab_msgs;
	size_t		 ab_n;
	size_t		 ab_cap;
	struct jscan	 ab_js;		/* holds the strings that had
					   escapes */
};

static const struct str field_names[AMF_N] = {
	[AMF_ROLE] = STR_LIT("role"), [AMF_CONTENT] = STR_LIT("content"),
	[AMF_TOOL_CALLS] = STR_LIT("tool_calls"), [AMF_NAME] = STR_LIT("name"),
	[AMF_TCID] = STR_LIT("tool_call_id"), [AMF_IMAGES] = STR_LIT("images"),
};

static int
json_type_of(enum jscan_type t)
{
	switch (t) {
	case JS_OBJECT:
		return JSON_OBJECT;
	case JS_ARRAY:
		return JSON_ARRAY;
	case JS_STRING:
		return JSON_STRING;
	case JS_INTEGER:
		return JSON_INTEGER;
	case JS_REAL:
		return JSON_REAL;
	case JS_TRUE:
		return JSON_TRUE;
	case JS_FALSE:
		return JSON_FALSE;
	default:
		return JSON_NULL;
	}
}

static int
field_index(struct str key)
{
	int	 i;

	for (i = 0; i < AMF_N; i++)
		if (key.n == field_names[i].n &&
		    memcmp(key.p, field_names[i].p, key.n) == 0)
			return i;
	return -1;
}

static struct smsg *
msg_new(struct api_body *ab)
{
	struct smsg	*m;
	int		 i;

	if (ab->ab_n == ab->ab_cap) {
		ab->ab_cap = ab->ab_cap ? ab->ab_cap * 2 : 8;
		ab->ab_msgs = xreallocarray(ab->ab_msgs, ab->ab_cap,
		    sizeof(*ab->ab_msgs));
	}
	m = &ab->ab_msgs[ab->ab_n++];
	m->sm_object = false;
	for (i = 0; i < AMF_N; i++)
		m->sm_f[i] = (struct sfield){ -1, STR_NULL };
	return m;
}

/* One message: an object's members of interest kept (the last of a
 * repeated key, as jansson keeps), the rest passed over. */
static int
scan_msg(struct api_body *ab, struct jscan *js)
{
	struct smsg		*m = msg_new(ab);
	struct jscan_val	 v;
	struct str		 key;
	int			 r, f;

	if (jscan_value(js, &v) == -1)
		return -1;
	if (v.jv_type != JS_OBJECT)
		return jscan_skip(js, &v);
	m->sm_object = true;
	while ((r = jscan_member(js, &key)) == 1) {
		f = field_index(key);
		if (jscan_value(js, &v) == -1 || jscan_skip(js, &v) == -1)
			return -1;
		if (f < 0)
			continue;
		m->sm_f[f].sf_type = json_type_of(v.jv_type);
		m->sm_f[f].sf_s = v.jv_type == JS_STRING ? v.jv_str :
		    (struct str){ v.jv_p, v.jv_n };
	}
	return r;
}

static int
scan_msgs(struct api_body *ab, struct jscan *js)
{
	int	 r;

	ab->ab_scanned = true;
	while ((r = jscan_element(js)) == 1)
		if (scan_msg(ab, js) == -1)
			return -1;
	return r;
}

/* A number jscan read, converted as jansson converts it (strtoll;
 * strtod where the decimal point is '.', which jansson otherwise
 * swaps in first). jscan has checked the text and its range. */
static json_t *
number_json(const struct jscan_val *v)
{
	char	 tmp[80];

	if (v->jv_n >= sizeof(tmp) || (v->jv_type == JS_REAL &&
	    strcmp(localeconv()->decimal_point, ".") != 0))
		return json_loadb(v->jv_p, v->jv_n, JSON_DECODE_ANY, NULL);
	memcpy(tmp, v->jv_p, v->jv_n);
	tmp[v->jv_n] = '\0';
	return v->jv_type == JS_INTEGER ? json_integer(strtoll(tmp, NULL, 10)) :
	    json_real(strtod(tmp, NULL));
}

/* The jansson value of v, which jscan_value has just read. */
static json_t *
value_json(struct jscan *js, struct jscan_val *v)
{
	switch (v->jv_type) {
	case JS_INTEGER:
	case JS_REAL:
		return number_json(v);
	case JS_STRING:
		return json_stringn_nocheck(v->jv_str.p, v->jv_str.n);
	case JS_TRUE:
		return json_true();
	case JS_FALSE:
		return json_false();
	case JS_NULL:
		return json_null();
	default:
		if (jscan_skip(js, v) == -1)
			return NULL;
		return json_loadb(v->jv_p, v->jv_n, JSON_DECODE_ANY, NULL);
	}
}

/* The body's members; "messages" scanned when it is a list. */
static int
scan_body(struct api_body *ab, const char *body, size_t len)
{
	struct jscan		*js = &ab->ab_js;
	struct jscan_val	 v;
	struct str		 key;
	json_t			*jv;
	bool			 seen = false, is_msgs;
	int			 r;

	jscan_init(js, body, len);
	if (jscan_value(js, &v) == -1 || v.jv_type != JS_OBJECT)
		return -1;
	while ((r = jscan_member(js, &key)) == 1) {
		if ((is_msgs = str_eq(key, "messages"))) {
			if (seen)	/* jansson keeps the last */
				return -1;
			seen = true;
		}
		if (jscan_value(js, &v) == -1)
			return -1;
		if (is_msgs && v.jv_type == JS_ARRAY) {
			if (scan_msgs(ab, js) == -1)
				return -1;
			continue;
		}
		if ((jv = value_json(js, &v)) == NULL)
			return -1;
		json_object_setn_new_nocheck(ab->ab_root, key.p, key.n, jv);
	}
	return r == 0 ? jscan_finish(js) : -1;
}

static struct api_body *
body_new(void)
{
	return xcalloc(1, sizeof(struct api_body));
}

int
api_body_load_tree(const char *body, size_t len, struct api_body **out,
    int *status, char err[API_ERRLEN])
{
	json_t	*root;

	*out = NULL;
	if (api_load(body, len, &root, status, err) == -1)
		return -1;
	*out = body_new();
	(*out)->ab_root = root;
	return 0;
}

int
api_body_load(const char *body, size_t len, struct api_body **out,
    int *status, char err[API_ERRLEN])
{
	struct api_body	*ab;

	if (body == NULL)	/* no body: jansson words the error */
		return api_body_load_tree(body, len, out, status, err);
	ab = body_new();
	ab->ab_root = json_object();
	if (scan_body(ab, body, len) == 0) {
		*out = ab;
		return 0;
	}
	api_body_free(ab);
	return api_body_load_tree(body, len, out, status, err);
}

void
api_body_free(struct api_body *ab)
{
	if (ab == NULL)
		return;
	json_decref(ab->ab_root);
	free(ab->ab_msgs);
	jscan_clear(&ab->ab_js);
	free(ab);
}

json_t *
api_body_root(const struct api_body *ab)
{
	return ab->ab_root;
}

static json_t *
tree_msgs(const struct api_body *ab)
{
	return json_object_get(ab->ab_root, "messages");
}

int
api_body_msgs_type(const struct api_body *ab)
{
	json_t	*m;

	if (ab->ab_scanned)
		return JSON_ARRAY;
	m = tree_msgs(ab);
	return m != NULL ? (int)json_typeof(m) : -1;
}

size_t
api_body_nmsgs(const struct api_body *ab)
{
	return ab->ab_scanned ? ab->ab_n : json_array_size(tree_msgs(ab));
}

/* A message of the tree path viewed: its members found in one walk. */
static void
tree_msg(json_t *jm, struct api_mview *mv)
{
	const char	*k;
	json_t		*v;
	int		 f;

	mv->mv_object = json_is_object(jm);
	json_object_foreach(jm, k, v) {
		if ((f = field_index(str_from(k))) < 0)
			continue;
		mv->mv_f[f].mf_type = (int)json_typeof(v);
		if (json_is_string(v))
			mv->mv_f[f].mf_str = (struct str){
			    json_string_value(v), json_string_length(v) };
		else if (json_is_array(v) || json_is_object(v))
			mv->mv_f[f].mf_json = json_incref(v);
	}
}

void
api_body_msg(const struct api_body *ab, size_t i, struct api_mview *mv)
{
	const struct smsg	*m;
	int			 f;

	memset(mv, 0, sizeof(*mv));
	for (f = 0; f < AMF_N; f++)
		mv->mv_f[f].mf_type = -1;
	if (!ab->ab_scanned) {
		tree_msg(json_array_get(tree_msgs(ab), i), mv);
		return;
	}
	m = &ab->ab_msgs[i];
	mv->mv_object = m->sm_object;
	for (f = 0; f < AMF_N; f++) {
		mv->mv_f[f].mf_type = m->sm_f[f].sf_type;
		if (m->sm_f[f].sf_type == JSON_STRING)
			mv->mv_f[f].mf_str = m->sm_f[f].sf_s;
		else if (m->sm_f[f].sf_type == JSON_ARRAY ||
		    m->sm_f[f].sf_type == JSON_OBJECT)
			mv->mv_f[f].mf_json = json_loadb(m->sm_f[f].sf_s.p,
			    m->sm_f[f].sf_s.n, JSON_DECODE_ANY, NULL);
	}
}

void
api_mview_clear(struct api_mview *mv)
{
	int	 f;

	for (f = 0; f < AMF_N; f++) {
		json_decref(mv->mv_f[f].mf_json);
		mv->mv_f[f].mf_json = NULL;
	}
}
