/* msgs.c - the conversation as the worker holds it: owned, editable messages. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "msgs.h"

static char *
dup_opt(struct str s)
{
	return s.p != NULL ? str_dup(s) : NULL;
}

static struct wmsg *
grow(struct wmsgs *l)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	return &l->v[l->n++];
}

void
wmsgs_from_proto(struct wmsgs *l, const struct proto_req_start *rs)
{
	size_t	 i, j;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < rs->nmsgs; i++) {
		const struct proto_message	*pm = &rs->msgs[i];
		struct wmsg			*m = grow(l);

		m->m_role = str_dup(pm->role);
		m->m_content = str_dup(pm->content);
		m->m_name = dup_opt(pm->name);
		m->m_tool_call_id = dup_opt(pm->tool_call_id);
		m->m_tool_calls = dup_opt(pm->tool_calls);
		if (pm->nimages > 0) {
			m->m_images = xcalloc(pm->nimages, sizeof(char *));
			for (j = 0; j < pm->nimages; j++)
				m->m_images[j] = str_dup(pm->images[j]);
			m->m_nimages = pm->nimages;
		}
	}
}

void
wmsgs_add(struct wmsgs *l, const char *role, const char *content)
{
	struct wmsg	*m = grow(l);

	m->m_role = xstrdup(role);
	m->m_content = xstrdup(content ? content : "");
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

void
wmsgs_add_copy(struct wmsgs *l, const struct wmsg *src)
{
	struct wmsg	*m = grow(l);
	size_t		 j;

	m->m_role = xstrdup(src->m_role);
	m->m_content = xstrdup(src->m_content);
	m->m_name = dup_or_null(src->m_name);
	m->m_tool_call_id = dup_or_null(src->m_tool_call_id);
	m->m_tool_calls = dup_or_null(src->m_tool_calls);
	if (src->m_nimages > 0) {
		m->m_images = xcalloc(src->m_nimages, sizeof(char *));
		for (j = 0; j < src->m_nimages; j++)
			m->m_images[j] = xstrdup(src->m_images[j]);
		m->m_nimages = src->m_nimages;
	}
}

void
wmsg_clear(struct wmsg *m)
{
	size_t	 j;

	free(m->m_role);
	free(m->m_content);
	free(m->m_name);
	free(m->m_tool_call_id);
	free(m->m_tool_calls);
	for (j = 0; j < m->m_nimages; j++)
		free(m->m_images[j]);
	free(m->m_images);
	memset(m, 0, sizeof(*m));
}


void
wmsgs_drop_empty(struct wmsgs *l)
{
	size_t	 i, k = 0;

	for (i = 0; i < l->n; i++) {
		struct wmsg	*m = &l->v[i];

		if (pystr_blank(m->m_content) && m->m_tool_calls == NULL &&
		    m->m_tool_call_id == NULL && m->m_nimages == 0)
			wmsg_clear(m);
		else
			l->v[k++] = *m;
	}
	l->n = k;
}

void
wmsgs_free(struct wmsgs *l)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		wmsg_clear(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

json_t *
wmsg_calls(const struct wmsg *m)
{
	json_t	*c;

	if (m->m_tool_calls == NULL)
		return NULL;
	c = json_loads(m->m_tool_calls, 0, NULL);
	if (json_is_array(c) && json_array_size(c) > 0)
		return c;
	json_decref(c);
	return NULL;
}

bool
wmsg_filler(const struct wmsg *m)
{
	const char	*p = m->m_content;
	size_t		 n = strlen(p);
	json_t		*c;

	if (strcmp(m->m_role, "assistant") != 0)
		return false;
	if ((c = wmsg_calls(m)) != NULL) {
		json_decref(c);
		return false;
	}
	pystr_trim(&p, &n);
	return n == 0 || (n == 10 && memcmp(p, "Assistant:", 10) == 0);
}
