/* mem_text.c - the text helpers of the memory features: message hashes, turns, strip, placeholder filling. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pystr.h"
#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../core/vars_jinja.h"
#include "mem_text.h"


static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
memory_images_sorted(const struct wmsg *m, struct buf *b)
{
	char	**imgs;
	size_t	 i;

	if (m->m_nimages == 0)
		return;
	imgs = xcalloc(m->m_nimages, sizeof(*imgs));
	memcpy(imgs, m->m_images, m->m_nimages * sizeof(*imgs));
	qsort(imgs, m->m_nimages, sizeof(*imgs), cmp_str);
	for (i = 0; i < m->m_nimages; i++)
		buf_adds(b, imgs[i]);
	free(imgs);
}

void
memory_hash(const struct wmsg *m, char out[MEMORY_HASHLEN])
{
	struct buf	 b = BUF_INIT;

	if (m->m_nimages == 0 || !pystr_blank(m->m_content)) {
		sha256_hex(m->m_content, strlen(m->m_content), out);
		return;
	}
	buf_adds(&b, m->m_content);
	memory_images_sorted(m, &b);
	sha256_hex(b.b_data, b.b_len, out);
	buf_free(&b);
}

void
memory_turns(const struct wmsgs *in, struct wmsgs *out)
{
	size_t	 i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < in->n; i++)
		if (strcmp(in->v[i].m_role, "system") != 0)
			wmsgs_add_copy(out, &in->v[i]);
}

char *
memory_strip(const char *s)
{
	size_t	 off, len;

	pystr_strip(s, strlen(s), true, true, &off, &len);
	return xstrndup(s + off, len);
}

char *
memory_replace(const char *text, const char *ph, const char *value)
{
	struct buf	 b = BUF_INIT;
	const char	*p = text, *hit;
	size_t		 n = strlen(ph);

	buf_adds(&b, "");
	while (n > 0 && (hit = strstr(p, ph)) != NULL) {
		buf_add(&b, p, (size_t)(hit - p));
		buf_adds(&b, value);
		p = hit + n;
	}
	buf_adds(&b, p);
	return buf_take(&b);
}

/* s with its braces as WilmerAI's sentinels, as its message text
 * holds them: neither a {name} pass nor a Jinja2 render (a jinja2
 * node) reads them, and both turn them back into braces after. */
char *
memory_literal(const char *s)
{
	return vars_sentinel_escape(s);
}

char *
memory_fill(const char *tmpl, ...)
{
	va_list		 ap;
	const char	*ph, *val;
	char		*cur = xstrdup(tmpl), *lit, *next;

	va_start(ap, tmpl);
	while ((ph = va_arg(ap, const char *)) != NULL) {
		val = va_arg(ap, const char *);
		lit = memory_literal(val != NULL ? val : "");
		next = memory_replace(cur, ph, lit);
		free(lit);
		free(cur);
		cur = next;
	}
	va_end(ap);
	return cur;
}
