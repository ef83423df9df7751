/* msgs_norm.c - a request's messages made ready for workflows: discussion id, WilmerAI's chat rewriting. */
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "msgs.h"
#include "msgs_norm.h"

#define TAG_OPEN	"[DiscussionId]"
#define TAG_CLOSE	"[/DiscussionId]"

/* WilmerAI rejects ids that could leave a folder. */
static bool
id_acceptable(const char *s, size_t n)
{
	size_t	 i;

	if (n == 0 || (n == 1 && s[0] == '.') ||
	    (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == '\\' || s[i] == ':' || s[i] == '\0')
			return false;
	return true;
}

/* Remove every [DiscussionId]...[/DiscussionId] from s (non-greedy, as
 * the regular expression); the first id seen goes to *id when it is
 * still NULL. Returns the new content (caller frees) or NULL when s had
 * no tag. */
static char *
strip_tags(const char *s, char **id)
{
	const char	*p = s, *open, *close;
	struct buf	 b = BUF_INIT;
	bool		 any = false;

	while ((open = strstr(p, TAG_OPEN)) != NULL &&
	    (close = strstr(open + strlen(TAG_OPEN), TAG_CLOSE)) != NULL) {
		const char	*v = open + strlen(TAG_OPEN);

		if (*id == NULL)
			*id = xstrndup(v, (size_t)(close - v));
		buf_add(&b, p, (size_t)(open - p));
		p = close + strlen(TAG_CLOSE);
		any = true;
	}
	if (!any)
		return NULL;
	buf_adds(&b, p);
	return buf_take(&b);
}

char *
wmsgs_discussion_id(struct wmsgs *l)
{
	char	*id = NULL, *s;
	size_t	 i;

	for (i = 0; i < l->n; i++)
		if ((s = strip_tags(l->v[i].m_content, &id)) != NULL) {
			free(l->v[i].m_content);
			l->v[i].m_content = s;
		}
	if (id != NULL && !id_acceptable(id, strlen(id))) {
		free(id);
		id = NULL;
	}
	return id;
}

static void
prefix(struct wmsg *m, const char *p)
{
	char	*s = xasprintf("%s%s", p, m->m_content);

	free(m->m_content);
	m->m_content = s;
}

void
wmsgs_chat_rewrite(struct wmsgs *l, bool add_roles, bool add_missing)
{
	size_t	 i;

	for (i = 0; add_roles && i < l->n; i++) {
		if (strcmp(l->v[i].m_role, "user") == 0)
			prefix(&l->v[i], "User: ");
		else if (strcmp(l->v[i].m_role, "assistant") == 0)
			prefix(&l->v[i], "Assistant: ");
	}
	if (add_missing && (l->n == 0 ||
	    strcmp(l->v[l->n - 1].m_role, "assistant") != 0))
		wmsgs_add(l, "assistant", add_roles ? "Assistant:" : "");
}
