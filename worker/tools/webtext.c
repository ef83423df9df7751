/* webtext.c - a WebFetch response's body as text, as requests' Response.text decodes it (addendum A3.3.2). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "../../common/utf8.h"
#include "htmlstrip.h"
#include "webtext.h"

enum charset { CS_UTF8, CS_LATIN1, CS_ASCII, CS_CP1252, CS_GUESS };

/* Python's bytes.decode(cs, "replace"). */
static void
decode(const unsigned char *p, size_t n, enum charset cs, struct buf *out)
{
	size_t	 i = 0, len;

	while (i < n) {
		if (p[i] < 0x80 || cs == CS_UTF8) {
			/* invalid sequences read as U+FFFD, one per maximal
			 * invalid prefix */
			utf8_put(out, utf8_next((const char *)p + i, n - i,
			    &len));
			i += len;
		} else {
			utf8_put(out, cs == CS_LATIN1 ? p[i] : cs == CS_ASCII ?
			    UTF8_BAD : (uint32_t)htmlstrip_cp1252(p[i]));
			i++;
		}
	}
}

static bool
utf8_valid(const unsigned char *p, size_t n)
{
	size_t	 i = 0, len;

	while (i < n) {
		if (utf8_next((const char *)p + i, n - i, &len) == UTF8_BAD &&
		    (len != 3 || memcmp(p + i, "\xef\xbf\xbd", 3) != 0))
			return false;
		i += len;
	}
	return true;
}

/* A charset name as Python's codecs know it (a few common ones). */
static enum charset
charset_named(const char *s, size_t n)
{
	static const struct { const char *n; enum charset c; } names[] = {
		{ "utf-8", CS_UTF8 }, { "utf8", CS_UTF8 },
		{ "iso-8859-1", CS_LATIN1 }, { "iso8859-1", CS_LATIN1 },
		{ "latin-1", CS_LATIN1 }, { "latin1", CS_LATIN1 },
		{ "l1", CS_LATIN1 }, { "iso-ir-100", CS_LATIN1 },
		{ "us-ascii", CS_ASCII }, { "ascii", CS_ASCII },
		{ "windows-1252", CS_CP1252 }, { "cp1252", CS_CP1252 },
	};
	char	 low[32];
	size_t	 i;

	if (n >= sizeof(low))
		return CS_UTF8;
	for (i = 0; i < n; i++)
		low[i] = s[i] == '_' ? '-' : (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(low, names[i].n) == 0)
			return names[i].c;
	return CS_UTF8;	/* requests: an unknown codec reads as UTF-8 */
}

/* requests' get_encoding_from_headers. */
static enum charset
charset_of(const char *ct)
{
	const char	*p, *semi, *eq, *k, *v;
	size_t		 kn, vn, tn;

	if (ct == NULL)
		return CS_GUESS;
	tn = strcspn(ct, ";");
	for (p = ct + tn; *p == ';'; p = semi) {
		p++;
		semi = p + strcspn(p, ";");
		if ((eq = memchr(p, '=', (size_t)(semi - p))) == NULL)
			continue;
		for (k = p, kn = (size_t)(eq - p); kn > 0 &&
		    strchr(" '\"", *k) != NULL; k++, kn--)
			;
		while (kn > 0 && strchr(" '\"", k[kn - 1]) != NULL)
			kn--;
		for (v = eq + 1, vn = (size_t)(semi - v); vn > 0 &&
		    strchr(" '\"", *v) != NULL; v++, vn--)
			;
		while (vn > 0 && strchr(" '\"", v[vn - 1]) != NULL)
			vn--;
		if (kn == 7 && strncasecmp(k, "charset", 7) == 0)
			return charset_named(v, vn);
	}
	if (memmem(ct, tn, "text", 4) != NULL)
		return CS_LATIN1;
	if (memmem(ct, tn, "application/json", 16) != NULL)
		return CS_UTF8;
	return CS_GUESS;
}

void
webtext(const struct webfetch_resp *r, struct buf *out)
{
	const unsigned char	*p = (const unsigned char *)r->wr_body.b_data;
	size_t			 n = r->wr_body.b_len;
	enum charset		 cs = charset_of(webfetch_header(r,
				    "Content-Type"));

	/* charset_normalizer's guess, reduced: UTF-8 when the bytes are,
	 * else windows-1252 */
	if (cs == CS_GUESS)
		cs = utf8_valid(p, n) ? CS_UTF8 : CS_CP1252;
	if (n > 0)
		decode(p, n, cs, out);
	if (out->b_data == NULL)
		buf_adds(out, "");
}
