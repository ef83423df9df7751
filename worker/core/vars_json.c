/* vars_json.c - variables from JSON configuration: user-wide and workflow keys, routing categories, Python's str() and repr(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../common/xmem.h"
#include "vars.h"

/*
 * WilmerAI keeps JSON values as Python objects and str.format shows
 * them with str(): so 5 is "5", 2.0 is "2.0", true is "True", and a
 * list is "['a', 1]" (repr() of each element). The categorisation
 * variables category_list and category_descriptions are Python lists,
 * shown the same way.
 *
 * repr() of a string: single quotes unless the string holds a single
 * quote and no double quote; backslash, the chosen quote, \t \n \r
 * escaped; other non-printable characters as \xNN, \uNNNN or
 * \UNNNNNNNN. Python's printable test covers all of Unicode; ours
 * covers the controls, separators and format characters that occur in
 * practice (see printable()), and copies invalid UTF-8 bytes as they
 * are (jansson strings are always valid).
 */

static void	py_repr(struct buf *, json_t *);

/* Decode the UTF-8 sequence at p (n > 0 bytes left); 0 when invalid. */
static size_t
utf8_dec(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t	 len, i;

	len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	if (len == 0 || len > n || p[0] > 0xf4)
		return 0;
	*cp = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	return len;
}

/* Python's str.isprintable() for a non-ASCII code point (approximate:
 * unassigned code points count as printable). */
static bool
printable(uint32_t c)
{
	return !(c <= 0xa0 || c == 0xad || (c >= 0x600 && c <= 0x605) ||
	    c == 0x61c || c == 0x6dd || c == 0x70f || c == 0x1680 ||
	    c == 0x180e || (c >= 0x2000 && c <= 0x200f) ||
	    (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x206f) ||
	    c == 0x3000 || (c >= 0xd800 && c <= 0xf8ff) || c == 0xfeff ||
	    (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffe || c == 0xffff ||
	    (c >= 0xe0000 && c <= 0xe007f) || c >= 0xf0000);
}

static void
repr_char(struct buf *b, const unsigned char *p, size_t len, uint32_t c)
{
	if (printable(c))
		buf_add(b, p, len);
	else if (c < 0x100)
		buf_printf(b, "\\x%02x", (unsigned)c);
	else if (c < 0x10000)
		buf_printf(b, "\\u%04x", (unsigned)c);
	else
		buf_printf(b, "\\U%08x", (unsigned)c);
}

/* Length of the run at p (n bytes) that repr() shows unchanged:
 * printable ASCII other than the backslash and the quote q. */
static size_t
plain_run(const unsigned char *p, size_t n, char q)
{
	size_t	 i;

	for (i = 0; i < n && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' &&
	    p[i] != (unsigned char)q; i++)
		;
	return i;
}

/* Python's repr() of the string s[0..n). */
static void
py_repr_str(struct buf *b, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	char			 q;
	size_t			 i, len;
	uint32_t		 c;

	q = memchr(s, '\'', n) != NULL && memchr(s, '"', n) == NULL ?
	    '"' : '\'';
	buf_addc(b, q);
	for (i = 0; i < n; i += len) {
		len = plain_run(p + i, n - i, q);
		if (len > 0) {		/* shown as it is: one copy */
			buf_add(b, p + i, len);
			continue;
		}
		len = 1;
		if (p[i] == '\\' || p[i] == (unsigned char)q) {
			buf_addc(b, '\\');
			buf_addc(b, (char)p[i]);
		} else if (p[i] == '\t' || p[i] == '\n' || p[i] == '\r')
			buf_adds(b, p[i] == '\t' ? "\\t" : p[i] == '\n' ?
			    "\\n" : "\\r");
		else if (p[i] < 0x20 || p[i] == 0x7f)
			buf_printf(b, "\\x%02x", p[i]);
		else if (p[i] < 0x80)
			buf_addc(b, (char)p[i]);
		else if ((len = utf8_dec(p + i, n - i, &c)) == 0) {
			len = 1;
			buf_addc(b, (char)p[i]);
		} else
			repr_char(b, p + i, len, c);
	}
	buf_addc(b, q);
}

/* Python's repr() of a float: the shortest digits that read back the
 * same, fixed notation for exponents -4..15, else d.ddde+XX. */
static void
py_float(struct buf *b, double d)
{
	char	 s[40], digits[24];
	int	 p, exp, nd, i;
	char	*e;

	for (p = 1; p <= 17; p++) {
		snprintf(s, sizeof(s), "%.*e", p - 1, d);
		if (strtod(s, NULL) == d)
			break;
	}
	e = strchr(s, 'e');
	exp = atoi(e + 1);
	for (nd = 0, i = s[0] == '-' ? 1 : 0; s + i < e; i++)
		if (s[i] != '.')
			digits[nd++] = s[i];
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (s[0] == '-')
		buf_addc(b, '-');
	if (exp < -4 || exp >= 16) {
		buf_printf(b, "%c%s%s", digits[0], nd > 1 ? "." : "",
		    digits + 1);
		buf_printf(b, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
	} else if (exp < 0) {
		buf_adds(b, "0.");
		for (i = 0; i < -exp - 1; i++)
			buf_addc(b, '0');
		buf_adds(b, digits);
	} else {
		for (i = 0; i <= exp; i++)
			buf_addc(b, i < nd ? digits[i] : '0');
		buf_printf(b, ".%s", nd > exp + 1 ? digits + exp + 1 : "0");
	}
}

/* A list or an object as Python shows it. */
static void
py_container(struct buf *b, json_t *v)
{
	const char	*key;
	json_t		*e;
	size_t		 i;

	if (json_is_array(v)) {
		buf_addc(b, '[');
		json_array_foreach(v, i, e) {
			if (i > 0)
				buf_adds(b, ", ");
			py_repr(b, e);
		}
		buf_addc(b, ']');
		return;
	}
	buf_addc(b, '{');
	i = 0;
	json_object_foreach(v, key, e) {
		if (i++ > 0)
			buf_adds(b, ", ");
		py_repr_str(b, key, strlen(key));
		buf_adds(b, ": ");
		py_repr(b, e);
	}
	buf_addc(b, '}');
}

static void
py_repr(struct buf *b, json_t *v)
{
	if (json_is_string(v))
		py_repr_str(b, json_string_value(v), json_string_length(v));
	else if (json_is_integer(v))
		buf_printf(b, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		py_float(b, json_real_value(v));
	else if (json_is_true(v))
		buf_adds(b, "True");
	else if (json_is_false(v))
		buf_adds(b, "False");
	else if (json_is_array(v) || json_is_object(v))
		py_container(b, v);
	else
		buf_adds(b, "None");
}

char *
vars_py_str(json_t *v)
{
	struct buf	 b = BUF_INIT;

	if (json_is_string(v))
		buf_add(&b, json_string_value(v), json_string_length(v));
	else
		py_repr(&b, v);
	buf_adds(&b, "");
	return buf_take(&b);
}

/* Every member of obj (but "nodes") as a template. */
static void
set_templates(struct vars *vs, json_t *obj)
{
	const char	*key;
	json_t		*v;
	char		*s;

	json_object_foreach(obj, key, v) {
		if (strcmp(key, "nodes") == 0)
			continue;
		s = vars_py_str(v);
		vars_set_template(vs, key, s);
		free(s);
	}
}

void
vars_user_wide(struct vars *vs, const struct conf_user *u)
{
	json_t	*uw;

	if (u == NULL)
		return;
	uw = json_object_get(u->u_file.jf_root, "userWideWorkflowVariables");
	if (json_is_object(uw))
		set_templates(vs, uw);
}

void
vars_workflow(struct vars *vs, json_t *wvars)
{
	if (json_is_object(wvars))
		set_templates(vs, wvars);
}

/* The six category strings under construction. */
struct cats {
	struct buf	 c_colon;	/* "A: d1; B: d2" */
	struct buf	 c_bullet;	/* "\n- A: d1\n- B: d2" */
	struct buf	 c_or;		/* "A or B" */
	struct buf	 c_names;	/* "\n- A\n- B" */
	struct buf	 c_list;	/* "['A', 'B']" */
	struct buf	 c_descs;	/* "['d1', 'd2']" */
};

static void
cat_add(struct cats *c, const char *name, json_t *desc, bool first)
{
	char	*d = desc != NULL ? vars_py_str(desc) : xstrdup("");

	if (!first) {
		buf_adds(&c->c_colon, "; ");
		buf_adds(&c->c_or, " or ");
		buf_adds(&c->c_list, ", ");
		buf_adds(&c->c_descs, ", ");
	}
	buf_printf(&c->c_colon, "%s: %s", name, d);
	buf_printf(&c->c_bullet, "\n- %s: %s", name, d);
	buf_adds(&c->c_or, name);
	buf_printf(&c->c_names, "\n- %s", name);
	py_repr_str(&c->c_list, name, strlen(name));
	if (desc == NULL || json_is_string(desc))
		py_repr_str(&c->c_descs, d, strlen(d));
	else
		buf_adds(&c->c_descs, d);
	free(d);
}

int
vars_categories(struct vars *vs, json_t *routing)
{
	struct cats	 c;
	const char	*key;
	json_t		*v;
	bool		 first = true;

	if (!json_is_object(routing))
		return -1;
	memset(&c, 0, sizeof(c));
	buf_addc(&c.c_list, '[');
	buf_addc(&c.c_descs, '[');
	json_object_foreach(routing, key, v) {
		cat_add(&c, key, json_object_get(v, "description"), first);
		first = false;
	}
	if (first) {			/* no category: Python's join of [] */
		buf_adds(&c.c_bullet, "\n- ");
		buf_adds(&c.c_names, "\n- ");
	}
	buf_addc(&c.c_list, ']');
	buf_addc(&c.c_descs, ']');
	buf_adds(&c.c_colon, "");
	buf_adds(&c.c_or, "");
	vars_set(vs, "category_colon_descriptions", c.c_colon.b_data);
	vars_set(vs, "category_colon_descriptions_newline_bulletpoint",
	    c.c_bullet.b_data);
	vars_set(vs, "categoriesSeparatedByOr", c.c_or.b_data);
	vars_set(vs, "categoryNameBulletpoints", c.c_names.b_data);
	vars_set(vs, "category_list", c.c_list.b_data);
	vars_set(vs, "category_descriptions", c.c_descs.b_data);
	buf_free(&c.c_colon);
	buf_free(&c.c_bullet);
	buf_free(&c.c_or);
	buf_free(&c.c_names);
	buf_free(&c.c_list);
	buf_free(&c.c_descs);
	return 0;
}
