/* clean_toolparse.c - the bodies of tool-call markers (Hermes/Qwen JSON, GLM, Qwen3-Coder, Llama) as OpenAI tool calls. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/json.h"
#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "clean_int.h"

/*
 * Body dialects of <tool_call>BODY</tool_call> (after stripping spaces):
 *   {"name": N, "arguments": A}     Hermes / Qwen ("parameters" is read
 *                                   too, and OpenAI's {"function":
 *                                   {"name", "arguments"}}); a JSON list
 *                                   of such objects gives several calls
 *   <function=N>{json}</function>   Qwen3-Coder, or with
 *   <function=N><parameter=K>V</parameter>...
 *   <name>N</name><arguments>A</arguments>            GLM
 *   N<arg_key>K</arg_key><arg_value>V</arg_value>...  GLM-4.5
 *   N\n{json}                       GLM-4 (a name line, then JSON)
 * <function=N>BODY</function>: BODY is JSON or <parameter=K>V</parameter>.
 * <|python_tag|>BODY: a JSON object as above ("parameters"), a Python
 * call (clean_pycall.c), or else code for Llama's code interpreter:
 * name "code_interpreter", arguments {"code": BODY}; so any non-empty
 * body is a call.
 *
 * arguments is always a string holding JSON: a JSON value is written
 * compactly; text that does not parse as JSON is kept as written (and a
 * warning logged); nothing gives "{}". A K/V value that parses as JSON
 * is that value, else a string. JSON that gives no call (say, cut
 * short) is read leniently (json_lenient).
 *
 * Which bodies can never become a call whatever follows (tool_viable,
 * used to send such a block on as text at once) follows from this
 * order: only an empty name can doom one.
 */

static bool
starts(const char *p, size_t n, const char *s)
{
	size_t	 k = strlen(s);

	return n >= k && memcmp(p, s, k) == 0;
}

static const char *
find(const char *p, size_t n, const char *s)
{
	return memmem(p, n, s, strlen(s));
}

void
tool_args_json(struct buf *out, const json_t *v)
{
	if (v == NULL)
		buf_adds(out, "{}");
	else
		jsonw_dump(out, v, JSONW_COMPACT);
}

void
tool_args_raw(struct buf *out, const char *p, size_t n)
{
	json_error_t	 e;
	json_t		*v;

	pystr_trim(&p, &n);
	if (n == 0) {
		buf_adds(out, "{}");
		return;
	}
	v = json_loadb(p, n, JSON_DECODE_ANY, &e);
	if (v != NULL) {
		jsonw_dump(out, v, JSONW_COMPACT);
		json_decref(v);
		return;
	}
	log_warnx("tool call arguments are not valid JSON (%s); passing "
	    "them on as written", log_text(e.text));
	buf_add(out, p, n);
}

void
tool_add(struct cleaner *c, const char *name, size_t nlen, const char *args,
    size_t alen)
{
	struct buf	*o;

	if (c->c_stopped || c->c_out == NULL)
		return;
	o = &c->c_out->co_tool_calls;
	if (o->b_len > 0 && o->b_data[o->b_len - 1] == ']') {
		o->b_len--;
		buf_addc(o, ',');
	} else
		buf_addc(o, '[');
	buf_printf(o, "{\"index\":%zu,\"id\":\"", c->c_ncalls);
	clean_call_id(c, o);
	buf_adds(o, "\",\"type\":\"function\",\"function\":{\"name\":\"");
	json_escape(o, name, nlen);
	buf_adds(o, "\",\"arguments\":\"");
	json_escape(o, args, alen);
	buf_adds(o, "\"}}]");
	c->c_ncalls++;
}

/* Add a call whose arguments are already in c_tmp2. */
static bool
add_tmp(struct cleaner *c, const char *name, size_t nlen)
{
	pystr_trim(&name, &nlen);
	if (nlen == 0)
		return false;
	tool_add(c, name, nlen, c->c_tmp2.b_data, c->c_tmp2.b_len);
	return true;
}

/* One {"name", "arguments"} object. */
static bool
json_call(struct cleaner *c, json_t *o)
{
	json_t		*name, *args, *fn = json_object_get(o, "function");

	if (json_is_object(fn) && json_object_get(o, "name") == NULL)
		o = fn;
	name = json_object_get(o, "name");
	if (!json_is_string(name))
		return false;
	args = json_object_get(o, "arguments");
	if (args == NULL)
		args = json_object_get(o, "parameters");
	buf_reset(&c->c_tmp2);
	if (json_is_string(args))
		tool_args_raw(&c->c_tmp2, json_string_value(args),
		    json_string_length(args));
	else
		tool_args_json(&c->c_tmp2, json_is_null(args) ? NULL : args);
	return add_tmp(c, json_string_value(name), json_string_length(name));
}

/* Value start after "key" ws ':' ws, searching p[0..n) from *from on
 * (updated past the key found), or NULL. */
static const char *
key_value(const char *p, size_t n, const char *key, size_t *from)
{
	const char	*e = p + n, *q = p + *from;
	size_t		 kl = strlen(key);

	while ((q = memmem(q, (size_t)(e - q), key, kl)) != NULL) {
		q += kl;
		*from = (size_t)(q - p);
		while (q < e && pystr_space(q, (size_t)(e - q)) == 1)
			q++;
		if (q < e && *q == ':') {
			q++;
			while (q < e && pystr_space(q, (size_t)(e - q)) == 1)
				q++;
			return q;
		}
	}
	*from = n;
	return NULL;
}

/* The first "name": "<non-empty string>" anywhere in p[0..n). */
static json_t *
lenient_name(const char *p, size_t n)
{
	const char	*e = p + n, *v, *q;
	size_t		 from = 0, sn;
	json_t		*name;

	while ((v = key_value(p, n, "\"name\"", &from)) != NULL) {
		if (v >= e || *v != '"')
			continue;
		for (q = v + 1; q < e && *q != '"'; q++)
			if (*q == '\\')
				q++;
		if (q >= e)
			continue;
		name = json_loadb(v, (size_t)(q - v) + 1, JSON_DECODE_ANY, NULL);
		v = json_string_value(name);
		sn = json_string_length(name);
		if (v != NULL)
			pystr_trim(&v, &sn);
		if (v != NULL && sn > 0)
			return name;
		json_decref(name);
	}
	return NULL;
}

/*
 * JSON that gives no call as a whole (cut short, or odd): the first
 * "name" key with a non-empty string value anywhere, and as arguments
 * the raw text after the first "arguments": (or "parameters":) up to
 * the end, less a final "}". So a body that starts with "{" can always
 * still become a call, which keeps the stage's hold-back exact.
 */
static bool
json_lenient(struct cleaner *c, const char *p, size_t n)
{
	const char	*e = p + n, *v, *q;
	json_t		*name;
	size_t		 from = 0;
	bool		 ok;

	if ((name = lenient_name(p, n)) == NULL)
		return false;
	if ((v = key_value(p, n, "\"arguments\"", &from)) == NULL) {
		from = 0;
		v = key_value(p, n, "\"parameters\"", &from);
	}
	buf_reset(&c->c_tmp2);
	if (v != NULL) {
		q = e;
		while (q > v && pystr_space(q - 1, 1) == 1)
			q--;
		if (q > v && *p == '{' && q[-1] == '}')
			q--;
		tool_args_raw(&c->c_tmp2, v, (size_t)(q - v));
	} else
		buf_adds(&c->c_tmp2, "{}");
	ok = add_tmp(c, json_string_value(name), json_string_length(name));
	json_decref(name);
	return ok;
}

static bool
json_calls(struct cleaner *c, const char *p, size_t n)
{
	json_t		*v, *e;
	size_t		 i;
	bool		 any = false;

	if ((v = json_loadb(p, n, JSON_DECODE_ANY, NULL)) != NULL) {
		if (json_is_object(v))
			any = json_call(c, v);
		json_array_foreach(v, i, e)
			if (json_is_object(e) && json_call(c, e))
				any = true;
		json_decref(v);
	}
	return any || json_lenient(c, p, n);
}

/* A K/V value: JSON when it parses, else a string. NULL on bad UTF-8. */
static json_t *
kv_value(const char *p, size_t n)
{
	json_t	*v;

	pystr_trim(&p, &n);
	if (n > 0 && (v = json_loadb(p, n, JSON_DECODE_ANY, NULL)) != NULL)
		return v;
	return json_stringn(p, n);
}

/* Pairs ko K kc vo V vc ... (vo NULL: the value follows kc directly)
 * into an object written to c_tmp2. */
static void
kv_args(struct cleaner *c, const char *p, size_t n, const char *ko,
    const char *kc, const char *vo, const char *vc)
{
	const char	*e = p + n, *k, *ke, *v, *ve;
	json_t		*obj = json_object(), *val;
	char		*key;

	while ((k = find(p, (size_t)(e - p), ko)) != NULL) {
		k += strlen(ko);
		if ((ke = find(k, (size_t)(e - k), kc)) == NULL)
			break;
		v = ke + strlen(kc);
		if (vo != NULL && (v = find(v, (size_t)(e - v), vo)) != NULL)
			v += strlen(vo);
		if (v == NULL)
			break;
		if ((ve = find(v, (size_t)(e - v), vc)) == NULL)
			ve = e;
		key = xstrndup(k, (size_t)(ke - k));
		if ((val = kv_value(v, (size_t)(ve - v))) != NULL)
			json_object_set_new(obj, key, val);
		free(key);
		p = ve == e ? e : ve + strlen(vc);
	}
	buf_reset(&c->c_tmp2);
	tool_args_json(&c->c_tmp2, obj);
	json_decref(obj);
}

/* <function=N> body: JSON, or <parameter=K>V</parameter> pairs. */
static bool
fn_call(struct cleaner *c, const char *name, size_t nlen, const char *p,
    size_t n)
{
	pystr_trim(&p, &n);
	if (starts(p, n, "<parameter="))
		kv_args(c, p, n, "<parameter=", ">", NULL, "</parameter>");
	else {
		buf_reset(&c->c_tmp2);
		tool_args_raw(&c->c_tmp2, p, n);
	}
	return add_tmp(c, name, nlen);
}

/* <function=N>...[</function>] inside <tool_call>. */
static bool
coder_call(struct cleaner *c, const char *p, size_t n)
{
	const char	*e = p + n, *name = p + strlen("<function="), *gt;
	size_t		 k = strlen("</function>");

	if ((gt = memchr(name, '>', (size_t)(e - name))) == NULL)
		return false;
	while (e - gt > (ptrdiff_t)k && pystr_space(e - 1, 1) == 1)
		e--;
	if (e - (gt + 1) >= (ptrdiff_t)k && memcmp(e - k, "</function>", k) == 0)
		e -= k;
	return fn_call(c, name, (size_t)(gt - name), gt + 1,
	    (size_t)(e - gt - 1));
}

/* Text between open and close (close missing: to the end). */
static bool
between(const char *p, size_t n, const char *open, const char *close,
    const char **v, size_t *vn)
{
	const char	*s, *t;

	if ((s = find(p, n, open)) == NULL)
		return false;
	s += strlen(open);
	if ((t = find(s, (size_t)(p + n - s), close)) == NULL)
		t = p + n;
	*v = s;
	*vn = (size_t)(t - s);
	return true;
}

static bool
glm_call(struct cleaner *c, const char *p, size_t n)
{
	const char	*name, *args;
	size_t		 nn, an;

	if (!between(p, n, "<name>", "</name>", &name, &nn))
		return false;
	buf_reset(&c->c_tmp2);
	if (between(p, n, "<arguments>", "</arguments>", &args, &an))
		tool_args_raw(&c->c_tmp2, args, an);
	else
		buf_adds(&c->c_tmp2, "{}");
	return add_tmp(c, name, nn);
}

static bool
glm45_call(struct cleaner *c, const char *p, size_t n)
{
	const char	*k = find(p, n, "<arg_key>");

	kv_args(c, k, (size_t)(p + n - k), "<arg_key>", "</arg_key>",
	    "<arg_value>", "</arg_value>");
	return add_tmp(c, p, (size_t)(k - p));
}

/* "name\n{json}" */
static bool
line_call(struct cleaner *c, const char *p, size_t n)
{
	const char	*nl = memchr(p, '\n', n), *q;
	size_t		 rn;

	if (nl == NULL)
		return false;
	for (q = p; q < nl; q++)
		if (!(*q == '_' || *q == '.' || *q == '-' || *q == '\r' ||
		    (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') ||
		    (*q >= 'A' && *q <= 'Z')))
			return false;
	q = nl + 1;
	rn = (size_t)(p + n - q);
	pystr_trim(&q, &rn);
	if (rn == 0 || *q != '{')
		return false;
	buf_reset(&c->c_tmp2);
	tool_args_raw(&c->c_tmp2, q, rn);
	return add_tmp(c, p, (size_t)(nl - p));
}

static bool
toolcall_body(struct cleaner *c, const char *p, size_t n)
{
	if (n == 0)
		return false;
	if (*p == '{' || *p == '[')
		return json_calls(c, p, n);
	if (starts(p, n, "<function="))
		return coder_call(c, p, n);
	if (starts(p, n, "<name>"))
		return glm_call(c, p, n);
	if (find(p, n, "<arg_key>") != NULL)
		return glm45_call(c, p, n);
	return line_call(c, p, n);
}

static bool
python_body(struct cleaner *c, const char *p, size_t n)
{
	struct buf	 name = BUF_INIT;
	bool		 ok;

	if (n == 0)
		return false;
	if (*p == '{' && json_calls(c, p, n))
		return true;
	buf_reset(&c->c_tmp2);
	if (pycall_parse(p, n, &name, &c->c_tmp2)) {
		ok = add_tmp(c, name.b_data, name.b_len);
		buf_free(&name);
		return ok;
	}
	buf_free(&name);
	buf_reset(&c->c_tmp2);
	buf_adds(&c->c_tmp2, "{\"code\":\"");
	json_escape(&c->c_tmp2, p, n);
	buf_adds(&c->c_tmp2, "\"}");
	tool_add(c, "code_interpreter", strlen("code_interpreter"),
	    c->c_tmp2.b_data, c->c_tmp2.b_len);
	return true;
}

bool
tool_parse(struct cleaner *c, enum tl_kind kind, const char *name,
    size_t namelen, const char *body, size_t n)
{
	pystr_trim(&body, &n);
	switch (kind) {
	case TLK_FUNCTION:
		return fn_call(c, name, namelen, body, n);
	case TLK_PYTHON:
		return python_body(c, body, n);
	case TLK_TOOLCALL:
	default:
		return toolcall_body(c, body, n);
	}
}

/* Skip whitespace from *pos; false when the end (or a character cut
 * short) comes first. */
static bool
ws_skip(const char *b, size_t n, size_t *pos)
{
	int	 w;

	while (*pos < n && (w = pystr_space(b + *pos, n - *pos)) > 0)
		*pos += (size_t)w;
	return *pos < n && pystr_space(b + *pos, n - *pos) == 0;
}

/* 1: r starts with s; -1: r is a proper prefix of s; 0: neither. */
static int
pre(const char *r, size_t rn, const char *s)
{
	size_t	 k = strlen(s);

	if (rn < k)
		return memcmp(r, s, rn) == 0 ? -1 : 0;
	return memcmp(r, s, k) == 0;
}

/*
 * Can a <tool_call> body that starts b[0..n) still become a call, given
 * toolcall_body's order? Only an empty name dooms one: "<function=" and
 * ">", "<name>" and "</name>" with only whitespace between, or
 * "<arg_key>" first. JSON ("{", "[") always can (json_lenient), any
 * other text too (a later "<arg_key>" makes it GLM-4.5's name). *v1 and
 * *v2 (zero at the block's start) remember the whitespace skipped.
 */
enum tool_viab
tool_viable(const char *b, size_t n, size_t *v1, size_t *v2)
{
	const char	*r;
	size_t		 rn, k;
	int		 f, g, a, h;

	if (!ws_skip(b, n, v1))
		return TV_UNKNOWN;
	r = b + *v1;
	rn = n - *v1;
	if (*r == '{' || *r == '[')
		return TV_VIABLE;
	f = pre(r, rn, "<function=");
	g = pre(r, rn, "<name>");
	a = pre(r, rn, "<arg_key>");
	if (f < 0 || g < 0 || a < 0)
		return TV_UNKNOWN;
	if (f == 0 && g == 0)
		return a == 1 ? TV_DOOMED : TV_VIABLE;
	k = *v1 + (f == 1 ? strlen("<function=") : strlen("<name>"));
	if (*v2 < k)
		*v2 = k;
	if (!ws_skip(b, n, v2))
		return TV_UNKNOWN;
	r = b + *v2;
	rn = n - *v2;
	if (f == 1)
		return *r == '>' ? TV_DOOMED : TV_VIABLE;
	h = pre(r, rn, "</name>");
	return h < 0 ? TV_UNKNOWN : h == 1 ? TV_DOOMED : TV_VIABLE;
}
