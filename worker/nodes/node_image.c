/* node_image.c - ImageProcessor: one vision call per image of the recent messages; the descriptions, optionally as a user message, optionally kept per discussion. */
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../core/msgs_edit.h"
#include "../core/node.h"
#include "../core/vars.h"
#include "../llm/ask_node.h"
#include "../memory/mem_text.h"
#include "../memory/memory.h"
#include "../memory/memstore.h"

#define NO_IMAGES	"There were no images attached to the message"
#define SEPARATOR	"\n-------------\n"

static const char default_message[] = "[SYSTEM: The user recently added one "
    "or more images to the conversation. The images have been analyzed by an "
    "advanced vision AI, which has described them in detail. The "
    "descriptions of the images can be found below:\n\n<vision_llm_response>\n"
    "[IMAGE_BLOCK]\n</vision_llm_response>]";

/* The node's message template with [IMAGE_BLOCK] replaced by
 * descriptions. Caller frees. */
static char *
user_message(struct node_ctx *x, const char *descriptions)
{
	const char	*tmpl = node_raw(x, "message");
	char		*m = vars_format(x->nx_vars, tmpl != NULL ? tmpl :
			    default_message);
	struct buf	 b = BUF_INIT;
	const char	*p = m, *hit;

	buf_adds(&b, "");
	while ((hit = strstr(p, "[IMAGE_BLOCK]")) != NULL) {
		buf_add(&b, p, (size_t)(hit - p));
		buf_adds(&b, descriptions);
		p = hit + strlen("[IMAGE_BLOCK]");
	}
	buf_adds(&b, p);
	free(m);
	return buf_take(&b);
}

/* addAsUserMessage: the descriptions go into the conversation before
 * its last message, for the nodes after this one. */
static void
add_user_message(struct node_ctx *x, const char *descriptions)
{
	char		*m = user_message(x, descriptions);
	struct wmsgs	*l = x->nx_conv;

	wmsgs_insert(l, l->n > 1 ? l->n - 1 : l->n, "user", m);
	free(m);
}

/* One call per image of imgs[0..n) (each as x->nx_image), the answers
 * that are not empty joined into desc. 0, or -1 with res filled. */
static int
describe(struct node_ctx *x, char *const *imgs, size_t n, struct buf *desc,
    struct wresult *res)
{
	struct buf	 one = BUF_INIT;
	size_t		 j;
	int		 rc = 0;

	for (j = 0; j < n && rc == 0; j++) {
		x->nx_image = imgs[j];
		buf_reset(&one);
		if ((rc = ask_node(x, &one, res)) == 0 && one.b_len > 0) {
			if (desc->b_len > 0)
				buf_adds(desc, SEPARATOR);
			buf_add(desc, one.b_data, one.b_len);
		}
	}
	x->nx_image = NULL;
	buf_free(&one);
	return rc;
}

/* The first message visionScanMessageLimit (20; 0 or less: all) lets
 * the node look at. */
static size_t
scan_from(struct node_ctx *x)
{
	long	 lim = node_long(x, "visionScanMessageLimit", 20);
	size_t	 n = x->nx_msgs->n;

	return lim > 0 && n > (size_t)lim ? n - (size_t)lim : 0;
}

/* The images of the messages the node looks at, oldest first, in *n;
 * borrowed from the conversation (the array is the caller's). */
static char **
recent_images(struct node_ctx *x, size_t *n)
{
	const struct wmsgs	*l = x->nx_msgs;
	size_t			 i, j;
	char			**v = xcalloc(1, sizeof(*v));

	*n = 0;
	for (i = scan_from(x); i < l->n; i++)
		for (j = 0; j < l->v[i].m_nimages; j++) {
			v = xreallocarray(v, *n + 1, sizeof(*v));
			v[(*n)++] = l->v[i].m_images[j];
		}
	return v;
}

/* ---- saveVisionResponsesToDiscussionId (addendum A11.4) ------------ */

/* A message's key in the cache: sha256 of its role, its content and
 * its images sorted. */
static void
vision_key(const struct wmsg *m, char out[MEMORY_HASHLEN])
{
	struct buf	 b = BUF_INIT;

	buf_adds(&b, m->m_role);
	buf_adds(&b, m->m_content);
	memory_images_sorted(m, &b);
	sha256_hex(b.b_data != NULL ? b.b_data : "", b.b_len, out);
	buf_free(&b);
}

/* Message m's description: kept, or made and kept. *desc (caller
 * frees). 0, or -1 with res filled. */
static int
kept_description(struct node_ctx *x, struct store *s, const char *key,
    const struct wmsg *m, char **desc, struct wresult *res)
{
	char		 k[MEMORY_HASHLEN];
	struct buf	 d = BUF_INIT;
	int		 r;

	vision_key(m, k);
	if ((r = memstore_vision(s, key, k, desc)) == 1)
		return 0;
	if (r == -1)
		return node_fail(x, res, 500, "the vision cache: %s",
		    store_err(s));
	if (describe(x, m->m_images, m->m_nimages, &d, res) == -1) {
		buf_free(&d);
		return -1;
	}
	buf_adds(&d, "");
	*desc = buf_take(&d);
	if (memstore_vision_put(s, key, k, *desc) == -1)
		log_warnx("workflow '%s' node %zu: the vision cache: %s; the "
		    "description is used, not kept", x->nx_workflow,
		    x->nx_index + 1, store_err(s));
	return 0;
}

/* The descriptions of the messages at idx[0..n), joined; with add, each
 * goes into the conversation after its message. */
static void
cached_output(struct node_ctx *x, const size_t *idx, char **desc, size_t n,
    struct buf *out)
{
	size_t	 total = x->nx_msgs->n, k;
	bool	 add = node_bool(x, "addAsUserMessage", false);
	char	*m;

	for (k = 0; k < n; k++) {
		if (*desc[k] == '\0' || (!add && idx[k] + 10 < total))
			continue;
		if (out->b_len > 0)
			buf_adds(out, SEPARATOR);
		buf_adds(out, desc[k]);
	}
	for (k = n; add && k-- > 0;) {
		m = user_message(x, desc[k]);
		wmsgs_insert(x->nx_conv, idx[k] + 1, "user", m);
		free(m);
	}
}

/* The cached path: the last visionScanMessageLimit messages with
 * images, each described once per discussion. */
static int
cached_run(struct node_ctx *x, const char *key, struct buf *out,
    struct wresult *res)
{
	const struct wmsgs	*l = x->nx_msgs;
	size_t			 i, n = 0, *idx;
	char			**desc;
	struct store		*s;
	int			 rc = 0;

	idx = xcalloc(l->n + 1, sizeof(*idx));
	desc = xcalloc(l->n + 1, sizeof(*desc));
	for (i = scan_from(x); i < l->n; i++)
		if (l->v[i].m_nimages > 0)
			idx[n++] = i;
	if (n == 0)
		buf_adds(out, NO_IMAGES);
	else if ((s = memory_store(x, res)) == NULL)
		rc = -1;
	else {
		for (i = 0; rc == 0 && i < n; i++)
			rc = kept_description(x, s, key, &l->v[idx[i]],
			    &desc[i], res);
		if (rc == 0)
			cached_output(x, idx, desc, n, out);
	}
	for (i = 0; i < n; i++)
		free(desc[i]);
	free(desc);
	free(idx);
	return rc;
}

static int
image_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char		*key = memory_key(x);
	char		**imgs;
	size_t		 n;
	int		 rc;

	x->nx_stream = false;		/* one call per image; delivered whole */
	if (key != NULL && pyfmt_truthy(json_object_get(x->nx_node,
	    "saveVisionResponsesToDiscussionId"))) {
		rc = cached_run(x, key, out, res);
		free(key);
		return rc;
	}
	free(key);
	imgs = recent_images(x, &n);
	rc = describe(x, imgs, n, out, res);
	if (rc == 0 && n == 0)
		buf_adds(out, NO_IMAGES);
	else if (rc == 0 && node_bool(x, "addAsUserMessage", false)) {
		buf_addc(out, '\0');
		out->b_len--;
		add_user_message(x, out->b_data);
	}
	free(imgs);
	return rc;
}

const struct node_type node_image = { "ImageProcessor", image_run, false };
