/* begtags.c - WilmerAI's [Beg_*] prompt tags turned into chat messages. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/xmem.h"
#include "begtags.h"

/* Length of a "[Beg_<word>]" tag at p (n bytes left), 0 if none; the
 * word goes to word/wlen. */
static size_t
tag_at(const char *p, size_t n, const char **word, size_t *wlen)
{
	size_t	 i = 5;

	if (n < 7 || memcmp(p, "[Beg_", 5) != 0)
		return 0;
	while (i < n && (isalnum((unsigned char)p[i]) || p[i] == '_'))
		i++;
	if (i == 5 || i >= n || p[i] != ']')
		return 0;
	*word = p + 5;
	*wlen = i - 5;
	return i + 1;
}

static const char *
role_of(const char *w, size_t n, bool *seen_sys)
{
	if (n == 4 && memcmp(w, "User", 4) == 0)
		return "user";
	if (n == 9 && memcmp(w, "Assistant", 9) == 0)
		return "assistant";
	if (n == 3 && memcmp(w, "Sys", 3) == 0) {
		if (*seen_sys)
			return "systemMes";
		*seen_sys = true;
		return "system";
	}
	if (n == 6 && memcmp(w, "SysMes", 6) == 0)
		return "systemMes";
	return "user";
}

static void
add(struct begtags *bt, const char *role, const char *p, size_t n,
    bool keep_empty)
{
	while (n > 0 && isspace((unsigned char)*p)) {
		p++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	if (n == 0 && !keep_empty)
		return;
	bt->bt_msgs = xreallocarray(bt->bt_msgs, bt->bt_n + 1,
	    sizeof(*bt->bt_msgs));
	bt->bt_msgs[bt->bt_n].bm_role = role;
	bt->bt_msgs[bt->bt_n++].bm_content = xstrndup(p, n);
}

void
begtags_parse(const char *text, size_t len, struct begtags *bt)
{
	const char	*role = NULL, *start = text, *w;
	size_t		 i = 0, tl, wl;
	bool		 seen_sys = false;

	memset(bt, 0, sizeof(*bt));
	while (i < len) {
		if (text[i] != '[' || (tl = tag_at(text + i, len - i, &w,
		    &wl)) == 0) {
			i++;
			continue;
		}
		/* Close what came before: a tagged message (kept even when
		 * empty, like WilmerAI) or leading untagged text. */
		add(bt, role ? role : "user", start, (size_t)(text + i - start),
		    role != NULL);
		role = role_of(w, wl, &seen_sys);
		i += tl;
		start = text + i;
	}
	add(bt, role ? role : "user", start, (size_t)(text + len - start),
	    role != NULL);
}

void
begtags_free(struct begtags *bt)
{
	size_t	 i;

	for (i = 0; i < bt->bt_n; i++)
		free(bt->bt_msgs[i].bm_content);
	free(bt->bt_msgs);
	memset(bt, 0, sizeof(*bt));
}
