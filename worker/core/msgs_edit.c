/* msgs_edit.c - what a node changes in the messages it sends: insertions, merged assistant runs, image limits. */
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "msgs.h"
#include "msgs_edit.h"

/* Move the last message to pos. */
static void
rotate_last(struct wmsgs *l, size_t pos)
{
	struct wmsg	 m;

	if (pos >= l->n - 1)
		return;
	m = l->v[l->n - 1];
	memmove(&l->v[pos + 1], &l->v[pos], (l->n - 1 - pos) * sizeof(m));
	l->v[pos] = m;
}

void
wmsgs_insert(struct wmsgs *l, size_t pos, const char *role,
    const char *content)
{
	wmsgs_add(l, role, content);
	rotate_last(l, pos);
}

void
wmsgs_insert_copy(struct wmsgs *l, size_t pos, const struct wmsg *m)
{
	wmsgs_add_copy(l, m);
	rotate_last(l, pos);
}

static bool
is_assistant(const struct wmsg *m)
{
	return strcmp(m->m_role, "assistant") == 0;
}

void
wmsgs_merge_assistants(struct wmsgs *l, const char *delim)
{
	size_t		 i, j, k = 0;
	struct buf	 b = BUF_INIT;

	for (i = 0; i < l->n; i = j) {
		j = i + 1;
		if (is_assistant(&l->v[i]) && j < l->n && is_assistant(&l->v[j])) {
			buf_reset(&b);
			buf_adds(&b, l->v[i].m_content);
			for (; j < l->n && is_assistant(&l->v[j]); j++) {
				buf_adds(&b, delim);
				buf_adds(&b, l->v[j].m_content);
				wmsg_clear(&l->v[j]);
			}
			free(l->v[i].m_content);
			l->v[i].m_content = xstrdup(b.b_data);
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
	buf_free(&b);
}

static void
drop_images(struct wmsg *m, size_t keep_newest)
{
	size_t	 j, cut = m->m_nimages - keep_newest;

	for (j = 0; j < cut; j++)
		free(m->m_images[j]);
	memmove(m->m_images, m->m_images + cut, keep_newest * sizeof(char *));
	m->m_nimages = keep_newest;
	if (keep_newest == 0) {
		free(m->m_images);
		m->m_images = NULL;
	}
}

void
wmsgs_limit_images(struct wmsgs *l, long max)
{
	size_t	 i, left = max > 0 ? (size_t)max : 0;

	if (max == 0)
		return;
	for (i = l->n; i > 0; i--) {
		struct wmsg	*m = &l->v[i - 1];

		if (m->m_nimages <= left) {
			left -= m->m_nimages;
			continue;
		}
		drop_images(m, left);
		left = 0;
	}
}

void
wmsg_add_image(struct wmsg *m, const char *image)
{
	m->m_images = xreallocarray(m->m_images, m->m_nimages + 1,
	    sizeof(char *));
	m->m_images[m->m_nimages++] = xstrdup(image);
}
