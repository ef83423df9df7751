/* jsonw.c - JSON serialisation that matches Python's json.dumps byte for byte. */
#include <stdint.h>
#include <string.h>

#include "jsonw.h"
#include "pyfmt.h"

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
		} else if (c >= 0x80 && st != JSONW_COMPACT) {
			i += utf8_cp(p + i, &cp);
			ascii_escape(out, cp);
			continue;
		} else if (c == 0x7f && st != JSONW_COMPACT)	/* not ' '..'~' */
			buf_adds(out, "\\u007f");
		else
			buf_addc(out, (char)c);
		i++;
	}
	buf_addc(out, '"');
}

static void	dump(struct buf *, const json_t *, enum jsonw_style, int);

/* Before an item of a container at depth: the separator after the
 * previous one, and PyJSON-file's new line and indent. */
static void
item_lead(struct buf *out, bool first, enum jsonw_style st, int depth)
{
	int	 i;

	if (!first)
		buf_adds(out, st == JSONW_COMPACT ? "," : st == JSONW_PYTHON ?
		    ", " : ",");
	if (st == JSONW_PYFILE) {
		buf_addc(out, '\n');
		for (i = 0; i <= depth; i++)
			buf_adds(out, "    ");
	}
}

/* The close of a non-empty container at depth. */
static void
close_with(struct buf *out, char c, enum jsonw_style st, int depth)
{
	int	 i;

	if (st == JSONW_PYFILE) {
		buf_addc(out, '\n');
		for (i = 0; i < depth; i++)
			buf_adds(out, "    ");
	}
	buf_addc(out, c);
}

static void
container(struct buf *out, const json_t *v, enum jsonw_style st, int depth)
{
	const char	*key;
	json_t		*e;
	size_t		 i;
	bool		 first = true;

	if (json_is_array(v)) {
		buf_addc(out, '[');
		for (i = 0; i < json_array_size(v); i++) {
			item_lead(out, i == 0, st, depth);
			dump(out, json_array_get(v, i), st, depth + 1);
		}
		if (json_array_size(v) == 0)
			buf_addc(out, ']');
		else
			close_with(out, ']', st, depth);
		return;
	}
	buf_addc(out, '{');
	json_object_foreach((json_t *)(uintptr_t)v, key, e) {
		item_lead(out, first, st, depth);
		first = false;
		string(out, key, strlen(key), st);
		buf_adds(out, st == JSONW_COMPACT ? ":" : ": ");
		dump(out, e, st, depth + 1);
	}
	if (first)
		buf_addc(out, '}');
	else
		close_with(out, '}', st, depth);
}

static void
dump(struct buf *out, const json_t *v, enum jsonw_style st, int depth)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		container(out, v, st, depth);
		break;
	case JSON_STRING:
		string(out, json_string_value(v), json_string_length(v), st);
		break;
	case JSON_INTEGER:
		buf_printf(out, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		pyfmt_float(out, json_real_value(v));
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

void
jsonw_dump(struct buf *out, const json_t *v, enum jsonw_style st)
{
	dump(out, v, st, 0);
}

char *
jsonw_dumps(const json_t *v, enum jsonw_style st)
{
	struct buf	 b = BUF_INIT;

	jsonw_dump(&b, v, st);
	return buf_take(&b);
}
