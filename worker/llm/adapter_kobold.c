/* adapter_kobold.c - the koboldCppGenerate adapter: KoboldCpp's generate API, one prompt string. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "adapter.h"
#include "gen_input.h"
#include "output.h"

/* The raw base64 of every image on the user messages of nc_msgs, in
 * order; NULL when there is none. */
static json_t *
images_json(const struct wmsgs *l)
{
	json_t	*a = NULL;
	size_t	 i, j;

	for (i = 0; l != NULL && i < l->n; i++) {
		if (strcmp(l->v[i].m_role, "user") != 0)
			continue;
		for (j = 0; j < l->v[i].m_nimages; j++) {
			if (a == NULL)
				a = json_array();
			json_array_append_new(a, json_string(
			    adapter_raw_image(l->v[i].m_images[j])));
		}
	}
	return a;
}

/* {prompt, ...gen_input, images?}; KoboldCpp never gets a model name. */
static char *
kobold_body(const struct node_call *nc)
{
	json_t	*root = json_object(), *imgs;

	json_object_set_new(root, "prompt", json_string(nc->nc_prompt != NULL ?
	    nc->nc_prompt : ""));
	gen_input_apply(root, nc);
	if ((imgs = images_json(nc->nc_msgs)) != NULL)
		json_object_set_new(root, "images", imgs);
	return adapter_dump(root);
}

static const char *
kobold_path(bool stream)
{
	return stream ? "/api/extra/generate/stream" : "/api/v1/generate";
}

/* Only "message" events carry tokens ({"token": ...}). WilmerAI reads
 * no finish reason from KoboldCpp, so none is recorded; the stream ends
 * when the backend closes it. KoboldCpp's last event carries a non-null
 * "finish_reason": it marks the end (cs_done), so that the close after
 * it is a complete reply. */
static int
kobold_event(struct call_state *cs, const char *event, const char *data,
    size_t n)
{
	json_t	*root, *t;

	if (event != NULL && event[0] != '\0' && strcmp(event, "message") != 0)
		return 0;
	if (adapter_blank(data, n))
		return 0;
	if ((root = adapter_reply(cs, data, n, "an event of the stream")) ==
	    NULL)
		return -1;
	t = json_object_get(root, "token");
	if (json_is_string(t))
		output_token(cs, json_string_value(t), json_string_length(t));
	if (json_is_string(json_object_get(root, "finish_reason")))
		cs->cs_done = true;
	json_decref(root);
	return 0;
}

static int
kobold_whole(struct call_state *cs, const char *body, size_t n)
{
	json_t	*root, *t;

	if ((root = adapter_reply(cs, body, n, "the response")) == NULL)
		return -1;
	t = json_object_get(json_array_get(json_object_get(root, "results"), 0),
	    "text");
	if (!json_is_string(t) && !json_is_null(t)) {
		snprintf(cs->cs_error, sizeof(cs->cs_error), "the response has "
		    "no results[0].text");
		json_decref(root);
		return -1;
	}
	if (json_is_string(t))
		output_token(cs, json_string_value(t), json_string_length(t));
	cs->cs_done = true;
	json_decref(root);
	return 0;
}

const struct adapter adapter_kobold = {
	APIT_KOBOLD, "koboldCppGenerate", AD_SSE, kobold_path, kobold_body,
	NULL, kobold_event, kobold_whole, true,
};
