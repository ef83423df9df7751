/* htmlstrip.c - the visible text of an HTML page, with the tokenizer rules of Python's html.parser (addendum A3.3.5). */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../../common/pystr.h"
#include "../../common/utf8.h"
#include "htmlstrip.h"

/*
 * WilmerAI feeds the page to an html.parser.HTMLParser (convert_charrefs
 * on) that counts start tags of script, style, head, noscript and
 * iframe and keeps each text run seen while the count is 0. This file
 * follows that tokenizer (CPython 3.11's goahead) closely enough for
 * every construct a page holds: text up to the next '<' that opens
 * something is one run; a '<' that opens nothing is a run of its own;
 * script and style contents are raw text up to their end tag; a
 * construct cut off by the end of the page becomes text up to the next
 * '>' (or the next '<', or the '<' alone).
 *
 * Named references come from a table (htmlent.inc) of the HTML 4.01
 * set: an HTML5-only name (&notin;) is not decoded as Python does, but
 * as its longest known prefix would be (&not + "in;").
 */

struct ent {
	const char	*e_name;
	unsigned long	 e_cp;
	bool		 e_bare;	/* valid without ';' */
};

#define ENT(n, c, b)	{ n, c, b },
static const struct ent	ents[] = {
#include "htmlent.inc"
};
#undef ENT

/* html.unescape's replacements for &#128; to &#159; (0 where the
 * number stands for itself). */
static const unsigned short	cp1252[32] = {
	0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021,
	0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
	0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
	0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
};

unsigned long
htmlstrip_cp1252(unsigned long n)
{
	if (n >= 0x80 && n <= 0x9f && cp1252[n - 0x80] != 0)
		return cp1252[n - 0x80];
	return n;
}

/* Code points html.unescape drops: controls and non-characters. */
static bool
charref_dropped(unsigned long n)
{
	return (n >= 0x1 && n <= 0x8) || n == 0xb || (n >= 0xe && n <= 0x1f) ||
	    (n >= 0x7f && n <= 0x9f) || (n >= 0xfdd0 && n <= 0xfdef) ||
	    (n & 0xfffe) == 0xfffe;
}

/* &#N; with N's digits at s[0..n) (base 10 or 16); appends the text. */
static void
charref_num(const char *s, size_t n, int base, struct buf *out)
{
	unsigned long	 v = 0;
	size_t		 i;
	int		 d;

	for (i = 0; i < n; i++) {
		d = isdigit((unsigned char)s[i]) ? s[i] - '0' :
		    tolower((unsigned char)s[i]) - 'a' + 10;
		if (v <= 0x10ffff)
			v = v * (unsigned long)base + (unsigned long)d;
	}
	if (v == 0)
		v = 0xfffd;
	else if (v == 0x0d || (v >= 0x80 && v <= 0x9f &&
	    htmlstrip_cp1252(v) != v))
		v = htmlstrip_cp1252(v);
	else if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		v = 0xfffd;
	else if (charref_dropped(v))
		return;
	utf8_put(out, (uint32_t)v);
}

static const struct ent *
ent_find(const char *s, size_t n, bool semi)
{
	size_t	 i;

	for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
		if (strlen(ents[i].e_name) == n &&
		    memcmp(ents[i].e_name, s, n) == 0 && (semi || ents[i].e_bare))
			return &ents[i];
	return NULL;
}

/* The name (and ';') after '&' at s[0..n): html.unescape's rules for a
 * reference that is not numeric. Appends its text. */
static void
charref_named(const char *s, size_t n, struct buf *out)
{
	const struct ent	*e;
	size_t			 len = n, x;
	bool			 semi = n > 0 && s[n - 1] == ';';

	if (semi)
		len--;
	if ((e = ent_find(s, len, semi)) != NULL) {
		utf8_put(out, (uint32_t)e->e_cp);
		return;
	}
	for (x = n - 1; x >= 2; x--)
		if (x <= len && (e = ent_find(s, x, false)) != NULL) {
			utf8_put(out, (uint32_t)e->e_cp);
			buf_add(out, s + x, n - x);
			return;
		}
	buf_addc(out, '&');
	buf_add(out, s, n);
}

/* The reference at s[0..n) (s[0] == '&'): how many bytes it takes,
 * its text appended to out. */
static size_t
charref(const char *s, size_t n, struct buf *out)
{
	size_t	 i = 1, j;
	int	 base = 10;

	if (i < n && s[i] == '#') {
		i++;
		if (i < n && (s[i] == 'x' || s[i] == 'X')) {
			base = 16;
			i++;
		}
		for (j = i; j < n && (base == 16 ? isxdigit((unsigned char)
		    s[j]) : isdigit((unsigned char)s[j])); j++)
			;
		if (j == i) {
			buf_addc(out, '&');
			return 1;
		}
		charref_num(s + i, j - i, base, out);
		return j < n && s[j] == ';' ? j + 1 : j;
	}
	for (j = i; j < n && j - i < 32 && strchr("\t\n\f <&#;", s[j]) ==
	    NULL; j++)
		;
	if (j == i) {
		buf_addc(out, '&');
		return 1;
	}
	if (j < n && s[j] == ';')
		j++;
	charref_named(s + i, j - i, out);
	return j;
}

void
htmlstrip_unescape(const char *s, size_t n, struct buf *out)
{
	const char	*amp;
	size_t		 i = 0;

	while (i < n) {
		if ((amp = memchr(s + i, '&', n - i)) == NULL) {
			buf_add(out, s + i, n - i);
			return;
		}
		buf_add(out, s + i, (size_t)(amp - (s + i)));
		i = (size_t)(amp - s);
		i += charref(s + i, n - i, out);
	}
}

/* ---- the tokenizer ---- */

struct hp {
	const char	*h_s;
	size_t		 h_n;
	int		 h_skip;	/* open skipped containers */
	char		 h_cdata[8];	/* "script"/"style" while in raw
					   text, else "" */
	struct buf	*h_out;
	bool		 h_any;		/* a run was kept */
};

static bool
skipped_tag(const char *t, size_t n)
{
	static const char *const skip[] = { "script", "style", "head",
	    "noscript", "iframe" };
	size_t	 i;

	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strlen(skip[i]) == n && strncasecmp(skip[i], t, n) == 0)
			return true;
	return false;
}

/* One text run (raw: no references decoded). */
static void
hp_data(struct hp *h, const char *s, size_t n, bool raw)
{
	struct buf	 t = BUF_INIT;
	const char	*p;
	size_t		 len;

	if (h->h_skip > 0 || n == 0)
		return;
	if (raw)
		buf_add(&t, s, n);
	else
		htmlstrip_unescape(s, n, &t);
	p = t.b_data;
	len = t.b_len;
	if (p != NULL)
		pystr_trim(&p, &len);
	if (len > 0) {
		if (h->h_any)
			buf_addc(h->h_out, '\n');
		buf_add(h->h_out, p, len);
		h->h_any = true;
	}
	buf_free(&t);
}

static const char *
hp_find(const struct hp *h, size_t from, const char *what)
{
	if (from > h->h_n)
		return NULL;
	return memmem(h->h_s + from, h->h_n - from, what, strlen(what));
}

/* The end of a tag name starting at i. */
static size_t
hp_name_end(const struct hp *h, size_t i)
{
	while (i < h->h_n && strchr("\t\n\r\f />", h->h_s[i]) == NULL &&
	    h->h_s[i] != '\0')
		i++;
	return i;
}

/* Where a start tag's '>' is (quoted attribute values may hold one):
 * its index, or h_n when the page ends first. */
static size_t
hp_tag_close(const struct hp *h, size_t j)
{
	const char	*s = h->h_s;
	char		 q;

	while (j < h->h_n && s[j] != '>') {
		if (s[j] == '=') {
			for (j++; j < h->h_n && isspace((unsigned char)s[j]);
			    j++)
				;
			if (j < h->h_n && (s[j] == '"' || s[j] == '\'')) {
				q = s[j];
				while (++j < h->h_n && s[j] != q)
					;
				if (j < h->h_n)
					j++;
			}
			continue;
		}
		j++;
	}
	return j;
}

/* A start tag at i: the index after it, or 0 when cut off. */
static size_t
hp_starttag(struct hp *h, size_t i)
{
	size_t	 ne = hp_name_end(h, i + 1), gt;
	bool	 selfclose;

	if ((gt = hp_tag_close(h, ne)) >= h->h_n)
		return 0;
	selfclose = h->h_s[gt - 1] == '/' && gt - 1 >= ne;
	if (skipped_tag(h->h_s + i + 1, ne - i - 1)) {
		if (!selfclose)
			h->h_skip++;
		/* script and style hold raw text up to their end tag */
		if (!selfclose && ((ne - i - 1 == 6 && strncasecmp(h->h_s +
		    i + 1, "script", 6) == 0) || (ne - i - 1 == 5 &&
		    strncasecmp(h->h_s + i + 1, "style", 5) == 0)))
			snprintf(h->h_cdata, sizeof(h->h_cdata), "%.*s",
			    (int)(ne - i - 1), h->h_s + i + 1);
	}
	return gt + 1;
}

/* An end tag at i ("</"): the index after it, or 0 when cut off. */
static size_t
hp_endtag(struct hp *h, size_t i)
{
	const char	*gt = hp_find(h, i + 2, ">");
	size_t		 ne;

	if (gt == NULL)
		return 0;
	if (i + 2 < h->h_n && isalpha((unsigned char)h->h_s[i + 2])) {
		ne = hp_name_end(h, i + 2);
		if (skipped_tag(h->h_s + i + 2, ne - i - 2) && h->h_skip > 0)
			h->h_skip--;
		if ((gt = hp_find(h, ne, ">")) == NULL)
			return 0;
	}
	return (size_t)(gt - h->h_s) + 1;
}

/* Comments, declarations, CDATA, processing instructions at i: the
 * index after them, or 0 when cut off. */
static size_t
hp_other(struct hp *h, size_t i)
{
	const char	*s = h->h_s + i, *end;
	const char	*close = ">";
	size_t		 from = i + 2;

	if (h->h_n - i >= 4 && memcmp(s, "<!--", 4) == 0) {
		close = "-->";
		from = i + 4;
	} else if (h->h_n - i >= 3 && memcmp(s, "<![", 3) == 0)
		close = "]>";
	if ((end = hp_find(h, from, close)) == NULL)
		return 0;
	return (size_t)(end - h->h_s) + strlen(close);
}

/* Raw text of script/style from i: up to its end tag, which ends raw
 * mode. The index of the end tag, or h_n. */
static size_t
hp_rawtext(struct hp *h, size_t i)
{
	size_t	 len = strlen(h->h_cdata), j;

	for (j = i; j + 2 + len <= h->h_n; j++)
		if (h->h_s[j] == '<' && h->h_s[j + 1] == '/' &&
		    strncasecmp(h->h_s + j + 2, h->h_cdata, len) == 0 &&
		    (j + 2 + len == h->h_n || strchr("\t\n\r\f />",
		    h->h_s[j + 2 + len]) != NULL)) {
			h->h_cdata[0] = '\0';
			return j;
		}
	return h->h_n;
}

/* The construct at i (a '<'): the index after it. */
static size_t
hp_markup(struct hp *h, size_t i)
{
	const char	*s = h->h_s, *p;
	size_t		 k, left = h->h_n - i;

	if (left > 1 && isalpha((unsigned char)s[i + 1]))
		k = hp_starttag(h, i);
	else if (left > 1 && s[i + 1] == '/')
		k = hp_endtag(h, i);
	else if (left > 1 && (s[i + 1] == '!' || s[i + 1] == '?'))
		k = hp_other(h, i);
	else {
		hp_data(h, "<", 1, true);
		return i + 1;
	}
	if (k > 0)
		return k;
	/* Cut off by the end of the page: text, as html.parser's close()
	 * makes it. */
	if ((p = hp_find(h, i + 1, ">")) != NULL)
		k = (size_t)(p - s) + 1;
	else if ((p = hp_find(h, i + 1, "<")) != NULL)
		k = (size_t)(p - s);
	else
		k = i + 1;
	hp_data(h, s + i, k - i, true);
	return k;
}

void
htmlstrip(const char *html, size_t n, struct buf *out)
{
	struct hp	 h;
	const char	*lt;
	size_t		 i = 0, j;

	memset(&h, 0, sizeof(h));
	h.h_s = html;
	h.h_n = n;
	h.h_out = out;
	while (i < n) {
		if (h.h_cdata[0] != '\0') {
			if ((i = hp_rawtext(&h, i)) >= n)
				break;
		} else {
			lt = memchr(html + i, '<', n - i);
			j = lt != NULL ? (size_t)(lt - html) : n;
			hp_data(&h, html + i, j - i, false);
			if ((i = j) >= n)
				break;
		}
		i = hp_markup(&h, i);
	}
	if (out->b_data == NULL)
		buf_adds(out, "");
}
