/* jsonw.c - JSON serialisation that matches Python's json.dumps byte for byte. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

/* Shortest %.Ne digits that read back as d: returns the digits (no dot)
 * in dig and the decimal exponent. */
static int
shortest(double d, char *dig, size_t diglen)
{
	char	 s[40], *e, *p;
	int	 prec, exp = 0;
	size_t	 k = 0;

	for (prec = 0; prec < 17; prec++) {
		snprintf(s, sizeof(s), "%.*e", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	e = strchr(s, 'e');
	exp = atoi(e + 1);
	for (p = s; p < e && k + 1 < diglen; p++)
		if (*p >= '0' && *p <= '9')
			dig[k++] = *p;
	dig[k] = '\0';
	while (k > 1 && dig[k - 1] == '0')	/* 1.50 -> 1.5 */
		dig[--k] = '\0';
	return exp;
}

/* Python's float_repr_style 'short': exponent notation when the decimal
 * exponent is below -4 or at least 16, else positional with ".0". */
void
jsonw_real(struct buf *out, double d)
{
	char	 dig[32];
	int	 exp, n, i;

	if (d == 0) {
		buf_adds(out, signbit(d) ? "-0.0" : "0.0");
		return;
	}
	if (d < 0) {
		buf_addc(out, '-');
		d = -d;
	}
	exp = shortest(d, dig, sizeof(dig));
	n = (int)strlen(dig);
	if (exp < -4 || exp >= 16) {
		buf_addc(out, dig[0]);
		if (n > 1) {
			buf_addc(out, '.');
			buf_adds(out, dig + 1);
		}
		buf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
	} else if (exp < 0) {
		buf_adds(out, "0.");
		for (i = -1; i > exp; i--)
			buf_addc(out, '0');
		buf_adds(out, dig);
	} else {
		for (i = 0; i <= exp; i++)
			buf_addc(out, i < n ? dig[i] : '0');
		buf_addc(out, '.');
		buf_adds(out, n > exp + 1 ? dig + exp + 1 : "0");
	}
}

/* Decode one UTF-8 sequence (jansson strings are valid UTF-8). */
static size_t
utf8_cp(const unsigned char *p, uint32_t *cp)
{
	if (p[0] < 0xe0) {
		*cp = (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
		return 2;
	}
	if (p[0] < 0xf0) {
		*cp = (uint32_t)(p[0] & 0x0f) << 12 |
		    (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
		return 3;
	}
	*cp = (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
	    (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
	return 4;
}

static void
ascii_escape(struct buf *out, uint32_t cp)
{
	if (cp >= 0x10000) {
		cp -= 0x10000;
		buf_printf(out, "\\u%04x\\u%04x", 0xd800 + (cp >> 10),
		    0xdc00 + (cp & 0x3ff));
	} else
		buf_printf(out, "\\u%04x", cp);
}

static void
string(struct buf *out, const char *s, size_t n, enum jsonw_style st)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0;
	uint32_t		 cp;

	buf_addc(out, '"');
	while (i < n) {
		unsigned char	 c = p[i];

		if (c == '"' || c == '\\') {
			buf_addc(out, '\\');
			buf_addc(out, (char)c);
		} else if (c < 0x20) {
			const char *esc = c == '\n' ? "\\n" : c == '\r' ? "\\r" :
			    c == '\t' ? "\\t" : c == '\b' ? "\\b" :
			    c == '\f' ? "\\f" : NULL;

			if (esc != NULL)
				buf_adds(out, esc);
			else
				buf_printf(out, "\\u%04x", c);
		} else if (c >= 0x80 && st == JSONW_PYTHON) {
			i += utf8_cp(p + i, &cp);
			ascii_escape(out, cp);
			continue;
		} else if (c == 0x7f && st == JSONW_PYTHON)
			buf_adds(out, "\\u007f");	/* ensure_ascii: not ' '..'~' */
		else
			buf_addc(out, (char)c);
		i++;
	}
	buf_addc(out, '"');
}

static void
container(struct buf *out, const json_t *v, enum jsonw_style st)
{
	const char	*sep = st == JSONW_PYTHON ? ", " : ",";
	const char	*key;
	json_t		*e;
	size_t		 i;
	bool		 first = true;

	if (json_is_array(v)) {
		buf_addc(out, '[');
		for (i = 0; i < json_array_size(v); i++) {
			if (i > 0)
				buf_adds(out, sep);
			jsonw_dump(out, json_array_get(v, i), st);
		}
		buf_addc(out, ']');
		return;
	}
	buf_addc(out, '{');
	json_object_foreach((json_t *)(uintptr_t)v, key, e) {
		if (!first)
			buf_adds(out, sep);
		first = false;
		string(out, key, strlen(key), st);
		buf_adds(out, st == JSONW_PYTHON ? ": " : ":");
		jsonw_dump(out, e, st);
	}
	buf_addc(out, '}');
}

void
jsonw_dump(struct buf *out, const json_t *v, enum jsonw_style st)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		container(out, v, st);
		break;
	case JSON_STRING:
		string(out, json_string_value(v), json_string_length(v), st);
		break;
	case JSON_INTEGER:
		buf_printf(out, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		jsonw_real(out, json_real_value(v));
		break;
	case JSON_TRUE:
		buf_adds(out, "true");
		break;
	case JSON_FALSE:
		buf_adds(out, "false");
		break;
	case JSON_NULL:
		buf_adds(out, "null");
		break;
	}
}

char *
jsonw_dumps(const json_t *v, enum jsonw_style st)
{
	struct buf	 b = BUF_INIT;

	jsonw_dump(&b, v, st);
	return buf_take(&b);
}
