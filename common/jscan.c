/* jscan.c - a validating JSON scanner: one value at a time, strings viewed in place or unescaped into an arena, no tree. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "xmem.h"

#define NUMLEN_MAX	64	/* longer numbers are refused (jansson
				   would take them: the caller falls back) */

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void
skip_ws(struct jscan *js)
{
	const char	*p = js->js_p;

	while (p < js->js_end && (*p == ' ' || *p == '\n' || *p == '\r' ||
	    *p == '\t'))
		p++;
	js->js_p = p;
}

/* Length of the valid UTF-8 sequence at p (p[0] >= 0x80), 0 if it is
 * not one: overlong, a surrogate, above U+10FFFF or cut short, as
 * jansson's utf8_check_full judges. */
static size_t
utf8_seq(const unsigned char *p, const unsigned char *end)
{
	uint32_t	 v;
	size_t		 n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		v = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		v = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		v = p[0] & 0x07;
	} else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ||
	    (n == 3 && v < 0x800) || (n == 4 && v < 0x10000))
		return 0;
	return n;
}

static int32_t
hex4(const char *p)
{
	int32_t	 v = 0;
	int	 i;

	for (i = 0; i < 4; i++) {
		v <<= 4;
		if (is_digit(p[i]))
			v += p[i] - '0';
		else if (p[i] >= 'a' && p[i] <= 'f')
			v += p[i] - 'a' + 10;
		else if (p[i] >= 'A' && p[i] <= 'F')
			v += p[i] - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static char *
put_utf8(char *o, uint32_t c)
{
	if (c < 0x80)
		*o++ = (char)c;
	else if (c < 0x800) {
		*o++ = (char)(0xc0 | c >> 6);
		*o++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*o++ = (char)(0xe0 | c >> 12);
		*o++ = (char)(0x80 | (c >> 6 & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	} else {
		*o++ = (char)(0xf0 | c >> 18);
		*o++ = (char)(0x80 | (c >> 12 & 0x3f));
		*o++ = (char)(0x80 | (c >> 6 & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	}
	return o;
}

/* A \u escape at p ('u'), a surrogate pair taken whole; *o advances.
 * Returns the byte after it, or NULL. */
static const char *
unicode_escape(const char *p, const char *end, char **o)
{
	int32_t	 v, w;

	if (end - p < 5 || (v = hex4(p + 1)) < 0)
		return NULL;
	p += 5;
	if (v == 0 || (v >= 0xdc00 && v <= 0xdfff))
		return NULL;
	if (v >= 0xd800 && v <= 0xdbff) {
		if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
		    (w = hex4(p + 2)) < 0xdc00 || w > 0xdfff)
			return NULL;
		v = ((v - 0xd800) << 10) + (w - 0xdc00) + 0x10000;
		p += 6;
	}
	*o = put_utf8(*o, (uint32_t)v);
	return p;
}

/* The escape at p (after its backslash); *o advances. Returns the byte
 * after it, or NULL. */
static const char *
escape(const char *p, const char *end, char **o)
{
	static const char	 from[] = "\"\\/bfnrt";
	static const char	 to[] = "\"\\/\b\f\n\r\t";
	const char		*c;

	if (p >= end)
		return NULL;
	if (*p == 'u')
		return unicode_escape(p, end, o);
	if (*p == '\0' || (c = strchr(from, *p)) == NULL)
		return NULL;
	*(*o)++ = to[c - from];
	return p + 1;
}

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

/* Has the word w a byte below 0x20, a '"', a '\\' or one above 0x7f?
 * (It may say yes for a clean word past such a byte, never no for a
 * word that holds one.) */
static bool
word_special(uint64_t w)
{
	uint64_t	 q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');

	return ((w | ((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) |
	    ((b - ONES) & ~b)) & HIGHS) != 0;
}

/* The first byte at or after p that is not plain printable ASCII
 * inside a string ('"', '\\', a control or a byte above 0x7f), or
 * end: eight bytes a step while they are plain. */
static const char *
plain_run(const char *p, const char *end)
{
	uint64_t	 w;
	unsigned char	 c;

	while (end - p >= 8) {
		memcpy(&w, p, sizeof(w));
		if (word_special(w))
			break;
		p += 8;
	}
	while (p < end && (c = (unsigned char)*p) >= 0x20 && c < 0x80 &&
	    c != '"' && c != '\\')
		p++;
	return p;
}

/* The rest of a string with escapes, from p, unescaped into the arena
 * after the o - js_out bytes already there. */
static int
unescape_string(struct jscan *js, const char *p, char *o, struct str *s)
{
	const char	*end = js->js_end, *run;
	unsigned char	 c;
	size_t		 n;

	for (;;) {
		run = p;
		p = plain_run(p, end);
		memcpy(o, run, (size_t)(p - run));
		o += p - run;
		if (p >= end)
			return -1;
		c = (unsigned char)*p;
		if (c == '"')
			break;
		if (c == '\\') {
			if ((p = escape(p + 1, end, &o)) == NULL)
				return -1;
			continue;
		}
		if (c < 0x20 || (n = utf8_seq((const unsigned char *)p,
		    (const unsigned char *)end)) == 0)
			return -1;
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	s->p = js->js_out;
	s->n = (size_t)(o - js->js_out);
	js->js_out = o;
	js->js_p = p + 1;
	return 0;
}

/* The string whose opening quote is at js_p: a view of the input when
 * it has no escapes (most have none), else unescaped into the arena. */
static int
scan_string(struct jscan *js, struct str *s)
{
	const char	*start = js->js_p + 1, *p = start, *end = js->js_end;
	unsigned char	 c;
	size_t		 n;

	for (;;) {
		p = plain_run(p, end);
		if (p >= end)
			return -1;
		c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			break;
		if (c < 0x20 || (n = utf8_seq((const unsigned char *)p,
		    (const unsigned char *)end)) == 0)
			return -1;
		p += n;
	}
	if (c == '"') {
		s->p = start;
		s->n = (size_t)(p - start);
		js->js_p = p + 1;
		return 0;
	}
	if (js->js_arena == NULL)	/* room for every string left */
		js->js_out = js->js_arena = xmalloc((size_t)(end - start) + 1);
	memcpy(js->js_out, start, (size_t)(p - start));
	return unescape_string(js, p, js->js_out + (p - start), s);
}

/* A number at js_p: JSON's grammar, then jansson's range checks. */
static int
scan_number(struct jscan *js, struct jscan_val *v)
{
	const char	*p = js->js_p, *end = js->js_end;
	char		 tmp[NUMLEN_MAX], *e;
	size_t		 n;

	v->jv_type = JS_INTEGER;
	if (p < end && *p == '-')
		p++;
	if (p >= end || !is_digit(*p))
		return -1;
	if (*p == '0')
		p++;
	else
		while (p < end && is_digit(*p))
			p++;
	if (p < end && *p == '.') {
		if (++p >= end || !is_digit(*p))
			return -1;
		while (p < end && is_digit(*p))
			p++;
		v->jv_type = JS_REAL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !is_digit(*p))
			return -1;
		while (p < end && is_digit(*p))
			p++;
		v->jv_type = JS_REAL;
	}
	if ((n = (size_t)(p - js->js_p)) >= sizeof(tmp))
		return -1;
	memcpy(tmp, js->js_p, n);
	tmp[n] = '\0';
	errno = 0;
	if (v->jv_type == JS_REAL)
		(void)strtod(tmp, &e);	/* underflow refused too */
	else
		(void)strtoll(tmp, &e, 10);
	if (errno == ERANGE)
		return -1;
	js->js_p = p;
	return 0;
}

static int
scan_word(struct jscan *js, const char *w, size_t n)
{
	if ((size_t)(js->js_end - js->js_p) < n || memcmp(js->js_p, w, n) != 0)
		return -1;
	js->js_p += n;
	return 0;
}

static int
open_container(struct jscan *js, struct jscan_val *v, enum jscan_type t)
{
	if (js->js_depth >= JSCAN_MAX_DEPTH)
		return -1;
	js->js_stack[js->js_depth++] = (unsigned char)t;
	js->js_first = true;
	js->js_p++;
	v->jv_type = t;
	return 0;
}

void
jscan_init(struct jscan *js, const char *p, size_t n)
{
	memset(js, 0, sizeof(*js));
	js->js_base = js->js_p = p;
	js->js_end = p + n;
}

void
jscan_clear(struct jscan *js)
{
	free(js->js_arena);
	js->js_arena = js->js_out = NULL;
}

int
jscan_value(struct jscan *js, struct jscan_val *v)
{
	int	 r;

	skip_ws(js);
	memset(v, 0, sizeof(*v));
	v->jv_p = js->js_p;
	if (js->js_p >= js->js_end)
		return -1;
	switch (*js->js_p) {
	case '{':
		r = open_container(js, v, JS_OBJECT);
		break;
	case '[':
		r = open_container(js, v, JS_ARRAY);
		break;
	case '"':
		v->jv_type = JS_STRING;
		r = scan_string(js, &v->jv_str);
		break;
	case 't':
		v->jv_type = JS_TRUE;
		r = scan_word(js, "true", 4);
		break;
	case 'f':
		v->jv_type = JS_FALSE;
		r = scan_word(js, "false", 5);
		break;
	case 'n':
		v->jv_type = JS_NULL;
		r = scan_word(js, "null", 4);
		break;
	default:
		r = scan_number(js, v);
		break;
	}
	v->jv_n = (size_t)(js->js_p - v->jv_p);
	return r;
}

/* Before the next member or element of the innermost container, of
 * type t: 1 when one follows, 0 when the container closed, -1. */
static int
next_item(struct jscan *js, enum jscan_type t, char close)
{
	if (js->js_depth == 0 || js->js_stack[js->js_depth - 1] != t)
		return -1;
	skip_ws(js);
	if (js->js_p >= js->js_end)
		return -1;
	if (*js->js_p == close) {
		js->js_p++;
		js->js_depth--;
		js->js_first = false;
		return 0;
	}
	if (!js->js_first) {
		if (*js->js_p != ',')
			return -1;
		js->js_p++;
		skip_ws(js);
	}
	js->js_first = false;
	return 1;
}

int
jscan_member(struct jscan *js, struct str *key)
{
	int	 r;

	if ((r = next_item(js, JS_OBJECT, '}')) != 1)
		return r;
	if (js->js_p >= js->js_end || *js->js_p != '"' ||
	    scan_string(js, key) == -1)
		return -1;
	skip_ws(js);
	if (js->js_p >= js->js_end || *js->js_p != ':')
		return -1;
	js->js_p++;
	return 1;
}

int
jscan_element(struct jscan *js)
{
	return next_item(js, JS_ARRAY, ']');
}

int
jscan_skip(struct jscan *js, struct jscan_val *v)
{
	char			*mark = js->js_out;
	int			 depth = js->js_depth, r;
	struct jscan_val	 in;
	struct str		 key;

	if (v->jv_type != JS_OBJECT && v->jv_type != JS_ARRAY)
		return 0;
	while (js->js_depth >= depth) {
		/* what is skipped is not kept */
		js->js_out = mark != NULL ? mark : js->js_arena;
		if (js->js_stack[js->js_depth - 1] == JS_OBJECT)
			r = jscan_member(js, &key);
		else
			r = jscan_element(js);
		if (r == 1)
			r = jscan_value(js, &in);
		if (r == -1)
			return -1;
	}
	js->js_out = mark != NULL ? mark : js->js_arena;
	v->jv_n = (size_t)(js->js_p - v->jv_p);
	return 0;
}

int
jscan_finish(struct jscan *js)
{
	skip_ws(js);
	return js->js_depth == 0 && js->js_p == js->js_end ? 0 : -1;
}

size_t
jscan_offset(const struct jscan *js)
{
	return (size_t)(js->js_p - js->js_base);
}
