/* pyfmt.c - str() and repr() of what json.loads makes of a JSON value, strings escaped as Python's repr() does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pyfmt.h"

/* Decode the UTF-8 sequence at p (n > 0 bytes left) into *cp; returns
 * its length, or 0 when it is not a valid shortest-form sequence. */
static size_t
utf8_dec(const unsigned char *p, size_t n, uint32_t *cp)
{
	static const uint32_t	 least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t			 len, i;

	len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	if (len == 0 || len > n || p[0] > 0xf4)
		return 0;
	*cp = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	if (*cp < least[len] || *cp > 0x10ffff ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

/* One code point c that is not plain ASCII, or an ASCII control. */
static void
repr_special(struct buf *out, const unsigned char *p, size_t len,
    uint32_t c)
{
	if (c == '\t')
		buf_adds(out, "\\t");
	else if (c == '\n')
		buf_adds(out, "\\n");
	else if (c == '\r')
		buf_adds(out, "\\r");
	else if (pyfmt_printable(c))
		buf_add(out, p, len);
	else if (c < 0x100)
		buf_printf(out, "\\x%02x", (unsigned)c);
	else if (c < 0x10000)
		buf_printf(out, "\\u%04x", (unsigned)c);
	else
		buf_printf(out, "\\U%08x", (unsigned)c);
}

/* Length of the run at p (n bytes) that repr() copies unchanged:
 * printable ASCII other than the backslash and the quote q. */
static size_t
plain_run(const unsigned char *p, size_t n, unsigned char q)
{
	size_t	 i;

	for (i = 0; i < n && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' &&
	    p[i] != q; i++)
		;
	return i;
}

void
pyfmt_repr_str(struct buf *out, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	unsigned char		 q;
	size_t			 i, len;
	uint32_t		 c;

	q = memchr(s, '\'', n) != NULL && memchr(s, '"', n) == NULL ?
	    '"' : '\'';
	buf_addc(out, (char)q);
	for (i = 0; i < n; i += len) {
		if ((len = plain_run(p + i, n - i, q)) > 0) {
			buf_add(out, p + i, len);
			continue;
		}
		len = 1;
		if (p[i] == '\\' || p[i] == q) {
			buf_addc(out, '\\');
			buf_addc(out, (char)p[i]);
		} else if (p[i] < 0x80)
			repr_special(out, p + i, 1, p[i]);
		else if ((len = utf8_dec(p + i, n - i, &c)) > 0)
			repr_special(out, p + i, len, c);
		else {
			len = 1;
			buf_addc(out, (char)p[i]);
		}
	}
	buf_addc(out, (char)q);
}

/* A list or a dict, members by repr(), in order. */
static void
repr_container(struct buf *out, const json_t *v)
{
	const char	*key;
	json_t		*e;
	size_t		 i;

	if (json_is_array(v)) {
		buf_addc(out, '[');
		for (i = 0; i < json_array_size(v); i++) {
			if (i > 0)
				buf_adds(out, ", ");
			pyfmt_repr(out, json_array_get(v, i));
		}
		buf_addc(out, ']');
		return;
	}
	buf_addc(out, '{');
	i = 0;
	/* jansson's iteration does not change the object */
	json_object_foreach((json_t *)(uintptr_t)v, key, e) {
		if (i++ > 0)
			buf_adds(out, ", ");
		pyfmt_repr_str(out, key, strlen(key));
		buf_adds(out, ": ");
		pyfmt_repr(out, e);
	}
	buf_addc(out, '}');
}

void
pyfmt_repr(struct buf *out, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		repr_container(out, v);
		break;
	case JSON_STRING:
		pyfmt_repr_str(out, json_string_value(v),
		    json_string_length(v));
		break;
	case JSON_INTEGER:
		buf_printf(out, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		pyfmt_float(out, json_real_value(v));
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
	}
}

void
pyfmt_str(struct buf *out, const json_t *v)
{
	if (json_is_string(v))
		buf_add(out, json_string_value(v), json_string_length(v));
	else
		pyfmt_repr(out, v);
}

char *
pyfmt_strdup(const json_t *v)
{
	struct buf	 b = BUF_INIT;

	pyfmt_str(&b, v);
	return buf_take(&b);
}

bool
pyfmt_truthy(const json_t *v)
{
	switch (v == NULL ? JSON_NULL : json_typeof(v)) {
	case JSON_TRUE:
		return true;
	case JSON_STRING:
		return json_string_length(v) > 0;
	case JSON_INTEGER:
		return json_integer_value(v) != 0;
	case JSON_REAL:
		return json_real_value(v) != 0.0;
	case JSON_ARRAY:
		return json_array_size(v) > 0;
	case JSON_OBJECT:
		return json_object_size(v) > 0;
	default:
		return false;
	}
}
