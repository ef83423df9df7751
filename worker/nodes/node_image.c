/* node_image.c - ImageProcessor: one vision call per image of the recent messages; the descriptions, optionally as a user message. */
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "../core/msgs_edit.h"
#include "../core/node.h"
#include "../core/vars.h"
#include "../llm/ask_node.h"

#define NO_IMAGES	"There were no images attached to the message"
#define SEPARATOR	"\n-------------\n"

static const char default_message[] = "[SYSTEM: The user recently added one "
    "or more images to the conversation. The images have been analyzed by an "
    "advanced vision AI, which has described them in detail. The "
    "descriptions of the images can be found below:\n\n<vision_llm_response>\n"
    "[IMAGE_BLOCK]\n</vision_llm_response>]";

/* addAsUserMessage: the descriptions, in the node's message template,
 * go into the conversation before its last message, for the nodes
 * after this one. */
static void
add_user_message(struct node_ctx *x, const char *descriptions)
{
	const char	*tmpl = node_raw(x, "message");
	char		*m = vars_format(x->nx_vars, tmpl != NULL ? tmpl :
			    default_message);
	struct buf	 b = BUF_INIT;
	const char	*p = m, *hit;
	struct wmsgs	*l = x->nx_conv;

	while ((hit = strstr(p, "[IMAGE_BLOCK]")) != NULL) {
		buf_add(&b, p, (size_t)(hit - p));
		buf_adds(&b, descriptions);
		p = hit + strlen("[IMAGE_BLOCK]");
	}
	buf_adds(&b, p);
	wmsgs_insert(l, l->n > 1 ? l->n - 1 : l->n, "user", b.b_data);
	buf_free(&b);
	free(m);
}

/* The images of the last visionScanMessageLimit (20) messages, oldest
 * first; NULL-terminated, borrowed from the conversation. */
static const char **
recent_images(struct node_ctx *x)
{
	const struct wmsgs	*l = x->nx_msgs;
	long			 lim = node_long(x, "visionScanMessageLimit", 20);
	size_t			 from, i, j, n = 0;
	const char		**v = xcalloc(1, sizeof(*v));

	from = lim > 0 && l->n > (size_t)lim ? l->n - (size_t)lim : 0;
	for (i = from; i < l->n; i++)
		for (j = 0; j < l->v[i].m_nimages; j++) {
			v = xreallocarray(v, n + 2, sizeof(*v));
			v[n++] = l->v[i].m_images[j];
			v[n] = NULL;
		}
	return v;
}

static int
image_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	const char	**imgs = recent_images(x);
	struct buf	 one = BUF_INIT;
	size_t		 i;
	int		 rc = 0;

	x->nx_stream = false;		/* one call per image; delivered whole */
	for (i = 0; imgs[i] != NULL && rc == 0; i++) {
		x->nx_image = imgs[i];
		buf_reset(&one);
		if ((rc = ask_node(x, &one, res)) == 0 && one.b_len > 0) {
			if (out->b_len > 0)
				buf_adds(out, SEPARATOR);
			buf_add(out, one.b_data, one.b_len);
		}
	}
	x->nx_image = NULL;
	if (rc == 0 && i == 0)
		buf_adds(out, NO_IMAGES);
	else if (rc == 0 && node_bool(x, "addAsUserMessage", false)) {
		buf_addc(out, '\0');
		out->b_len--;
		add_user_message(x, out->b_data);
	}
	buf_free(&one);
	free(imgs);
	return rc;
}

const struct node_type node_image = { "ImageProcessor", image_run, false };
