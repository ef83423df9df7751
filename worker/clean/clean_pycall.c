/* clean_pycall.c - a Python call ("brave_search.call(query='x')") as a tool name and a JSON object of arguments. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "clean_int.h"

/*
 * Llama 3.x writes built-in tool calls as Python after <|python_tag|>.
 * The rule:
 * - the body must be exactly CALLEE(ARGS) (an optional ";" after it),
 *   CALLEE being dotted identifiers; the tool name is CALLEE less a
 *   final ".call" ("brave_search.call" -> "brave_search");
 * - keyword arguments K=V become "K": V; positional ones are gathered
 *   in order into "args": [...] (a keyword argument named args wins);
 * - V is converted when it is a literal: strings ('', "", triple
 *   quoted, with Python's escapes), integers and floats, True, False,
 *   None, and lists, tuples (as lists) and dicts with string keys of
 *   those; any other expression is kept as its source text, a JSON
 *   string.
 * Anything else is not a call (the caller then treats the body as code).
 */

#define PY_DEPTH	32

struct py {
	const char	*y_p;
	const char	*y_e;
	int		 y_depth;
};

static json_t	*py_value(struct py *, char close);

static bool
py_more(const struct py *y)
{
	return y->y_p < y->y_e;
}

static void
py_ws(struct py *y)
{
	while (py_more(y) && (*y->y_p == ' ' || *y->y_p == '\t' ||
	    *y->y_p == '\n' || *y->y_p == '\r' || *y->y_p == '\f' ||
	    *y->y_p == '\v'))
		y->y_p++;
}

static bool
id_char(char ch, bool first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    ch == '_' || (!first && ch >= '0' && ch <= '9');
}

static size_t
py_ident(struct py *y)
{
	const char	*s = y->y_p;

	if (!py_more(y) || !id_char(*y->y_p, true))
		return 0;
	while (py_more(y) && id_char(*y->y_p, false))
		y->y_p++;
	return (size_t)(y->y_p - s);
}

static void
utf8_put(struct buf *b, unsigned long cp)
{
	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xfffd;
	if (cp < 0x80)
		buf_addc(b, (char)cp);
	else if (cp < 0x800) {
		buf_addc(b, (char)(0xc0 | (cp >> 6)));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		buf_addc(b, (char)(0xe0 | (cp >> 12)));
		buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else {
		if (cp > 0x10ffff)
			cp = 0xfffd;
		buf_addc(b, (char)(0xf0 | (cp >> 18)));
		buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
		buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	}
}

/* \x \u \U with nd hex digits; false when they are not there. */
static bool
py_hex(struct py *y, int nd, struct buf *b)
{
	unsigned long	 cp = 0;
	int		 i, d;
	char		 ch;

	if (y->y_e - y->y_p < nd)
		return false;
	for (i = 0; i < nd; i++) {
		ch = y->y_p[i];
		d = ch >= '0' && ch <= '9' ? ch - '0' :
		    ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
		    ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
		if (d < 0)
			return false;
		cp = cp * 16 + (unsigned long)d;
	}
	y->y_p += nd;
	utf8_put(b, cp);
	return true;
}

static void
py_escape(struct py *y, struct buf *b)
{
	static const char	 from[] = "ntr0abfv\\'\"";
	static const char	 to[] = "\n\t\r\0\a\b\f\v\\'\"";
	const char		*k;
	char			 ch = *y->y_p++;

	if (ch == '\n')
		return;
	if ((k = memchr(from, ch, sizeof(from) - 1)) != NULL) {
		buf_addc(b, to[k - from]);
		return;
	}
	if ((ch == 'x' && py_hex(y, 2, b)) || (ch == 'u' && py_hex(y, 4, b)) ||
	    (ch == 'U' && py_hex(y, 8, b)))
		return;
	buf_addc(b, '\\');
	buf_addc(b, ch);
}

static json_t *
py_string(struct py *y)
{
	struct buf	 b = BUF_INIT;
	json_t		*v = NULL;
	char		 q = *y->y_p;
	bool		 triple;

	triple = y->y_e - y->y_p >= 3 && y->y_p[1] == q && y->y_p[2] == q;
	y->y_p += triple ? 3 : 1;
	while (py_more(y)) {
		if (*y->y_p == q && (!triple || (y->y_e - y->y_p >= 3 &&
		    y->y_p[1] == q && y->y_p[2] == q))) {
			y->y_p += triple ? 3 : 1;
			v = json_stringn(b.b_data != NULL ? b.b_data : "",
			    b.b_len);
			break;
		}
		if (*y->y_p == '\\' && y->y_e - y->y_p >= 2) {
			y->y_p++;
			py_escape(y, &b);
		} else if (*y->y_p == '\n' && !triple)
			break;
		else
			buf_addc(&b, *y->y_p++);
	}
	buf_free(&b);
	return v;
}

static json_t *
py_number(struct py *y)
{
	const char	*s = y->y_p;
	char		*t, *end;
	bool		 real = false;
	long long	 ll;
	double		 d;
	json_t		*v;

	if (py_more(y) && (*y->y_p == '-' || *y->y_p == '+'))
		y->y_p++;
	while (py_more(y) && ((*y->y_p >= '0' && *y->y_p <= '9') ||
	    *y->y_p == '.' || *y->y_p == 'e' || *y->y_p == 'E' ||
	    ((*y->y_p == '-' || *y->y_p == '+') && (y->y_p[-1] == 'e' ||
	    y->y_p[-1] == 'E')))) {
		if (*y->y_p == '.' || *y->y_p == 'e' || *y->y_p == 'E')
			real = true;
		y->y_p++;
	}
	t = xstrndup(s, (size_t)(y->y_p - s));
	errno = 0;
	if (real) {
		d = strtod(t, &end);
		v = *end == '\0' && errno == 0 && end != t ? json_real(d) :
		    NULL;
	} else {
		ll = strtoll(t, &end, 10);
		v = *end == '\0' && errno == 0 && end != t ?
		    json_integer(ll) : NULL;
	}
	free(t);
	return v;
}

/* Elements up to close (']', ')' or '}'); dicts read "key: value". */
static json_t *
py_seq(struct py *y, char close, bool dict)
{
	json_t	*v = dict ? json_object() : json_array(), *k, *e;

	y->y_p++;
	for (;;) {
		py_ws(y);
		if (py_more(y) && *y->y_p == close) {
			y->y_p++;
			return v;
		}
		k = NULL;
		if (dict && ((k = py_value(y, ':')) == NULL || !py_more(y) ||
		    *y->y_p++ != ':' || !json_is_string(k)))
			break;
		if ((e = py_value(y, close)) == NULL)
			break;
		if (dict)
			json_object_set_new(v, json_string_value(k), e);
		else
			json_array_append_new(v, e);
		json_decref(k);
		if (py_more(y) && *y->y_p == ',')
			y->y_p++;
		else if (!py_more(y) || *y->y_p != close)
			break;
	}
	json_decref(k);
	json_decref(v);
	return NULL;
}

static bool
py_word(struct py *y, const char *w)
{
	size_t	 n = strlen(w);

	if ((size_t)(y->y_e - y->y_p) < n || memcmp(y->y_p, w, n) != 0 ||
	    ((size_t)(y->y_e - y->y_p) > n && id_char(y->y_p[n], false)))
		return false;
	y->y_p += n;
	return true;
}

static json_t *
py_literal(struct py *y)
{
	char	 ch = *y->y_p;

	if (ch == '\'' || ch == '"')
		return py_string(y);
	if (ch == '[')
		return py_seq(y, ']', false);
	if (ch == '(')
		return py_seq(y, ')', false);
	if (ch == '{')
		return py_seq(y, '}', true);
	if ((ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.')
		return py_number(y);
	if (py_word(y, "True"))
		return json_true();
	if (py_word(y, "False"))
		return json_false();
	if (py_word(y, "None"))
		return json_null();
	return NULL;
}

/* An expression that is no literal: its source up to the next "," or
 * close at the top level, as a string. */
static json_t *
py_raw(struct py *y, char close)
{
	const char	*s = y->y_p, *q;
	size_t		 n;
	int		 depth = 0;
	char		 ch;

	for (; py_more(y); y->y_p++) {
		ch = *y->y_p;
		if (ch == '\'' || ch == '"') {
			for (q = y->y_p + 1; q < y->y_e && *q != ch; q++)
				if (*q == '\\')
					q++;
			if (q >= y->y_e)
				return NULL;
			y->y_p = q;
		} else if (ch == '(' || ch == '[' || ch == '{')
			depth++;
		else if (depth == 0 && (ch == close || ch == ','))
			break;
		else if (ch == ')' || ch == ']' || ch == '}') {
			if (depth-- == 0)
				return NULL;
		}
	}
	if (!py_more(y))
		return NULL;
	n = (size_t)(y->y_p - s);
	pystr_trim(&s, &n);
	return n > 0 ? json_stringn(s, n) : NULL;
}

static json_t *
py_value(struct py *y, char close)
{
	const char	*start;
	json_t		*v;

	py_ws(y);
	if (!py_more(y) || y->y_depth >= PY_DEPTH)
		return NULL;
	y->y_depth++;
	start = y->y_p;
	if ((v = py_literal(y)) != NULL) {
		py_ws(y);
		if (py_more(y) && (*y->y_p == close || *y->y_p == ','))
			goto out;
		json_decref(v);
	}
	y->y_p = start;
	v = py_raw(y, close);
out:
	y->y_depth--;
	return v;
}

/* One argument: K=V into obj, or V onto pos. */
static bool
py_arg(struct py *y, json_t *obj, json_t *pos)
{
	const char	*s;
	size_t		 n;
	json_t		*v;
	char		*key;

	py_ws(y);
	s = y->y_p;
	n = py_ident(y);
	py_ws(y);
	if (n > 0 && py_more(y) && *y->y_p == '=' && (y->y_e - y->y_p < 2 ||
	    y->y_p[1] != '=')) {
		y->y_p++;
		if ((v = py_value(y, ')')) == NULL)
			return false;
		key = xstrndup(s, n);
		json_object_set_new(obj, key, v);
		free(key);
		return true;
	}
	y->y_p = s;
	if ((v = py_value(y, ')')) == NULL)
		return false;
	json_array_append_new(pos, v);
	return true;
}

static bool
py_args(struct py *y, json_t *obj, json_t *pos)
{
	y->y_p++;
	for (;;) {
		py_ws(y);
		if (py_more(y) && *y->y_p == ')')
			break;
		if (!py_arg(y, obj, pos))
			return false;
		if (py_more(y) && *y->y_p == ',')
			y->y_p++;
		else if (!py_more(y) || *y->y_p != ')')
			return false;
	}
	y->y_p++;
	py_ws(y);
	if (py_more(y) && *y->y_p == ';')
		y->y_p++;
	py_ws(y);
	return !py_more(y);
}

bool
pycall_parse(const char *p, size_t n, struct buf *name, struct buf *args)
{
	struct py	 y = { p, p + n, 0 };
	const char	*s;
	size_t		 k;
	json_t		*obj, *pos;
	bool		 ok;

	py_ws(&y);
	s = y.y_p;
	while (py_ident(&y) > 0 && py_more(&y) && *y.y_p == '.')
		y.y_p++;
	k = (size_t)(y.y_p - s);
	if (k == 0 || s[k - 1] == '.' || !py_more(&y) || *y.y_p != '(')
		return false;
	obj = json_object();
	pos = json_array();
	if ((ok = py_args(&y, obj, pos))) {
		if (json_array_size(pos) > 0 &&
		    json_object_get(obj, "args") == NULL)
			json_object_set(obj, "args", pos);
		if (k > 5 && memcmp(s + k - 5, ".call", 5) == 0)
			k -= 5;
		buf_add(name, s, k);
		jsonw_dump(args, obj, JSONW_COMPACT);
	}
	json_decref(obj);
	json_decref(pos);
	return ok;
}
