/* adapter_completion.c - the openAIV1Completion adapter: /v1/completions with one prompt string. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "adapter.h"
#include "gen_input.h"
#include "output.h"

/* {"prompt", ...gen_input, "stream_options"?, "model"?}: the model goes
 * last, after the handler's base payload, as WilmerAI adds it. */
static char *
completion_body(const struct node_call *nc)
{
	json_t	*root = json_object();

	json_object_set_new(root, "prompt", json_string(nc->nc_prompt != NULL ?
	    nc->nc_prompt : ""));
	gen_input_apply(root, nc);
	gen_input_stream_usage(root, nc);
	if (!nc->nc_ep->e_dont_include_model)
		json_object_set_new(root, "model",
		    json_string(nc->nc_ep->e_model));
	return adapter_dump(root);
}

static const char *
completion_path(bool stream)
{
	return "/v1/completions";
}

/* choices[0] of a reply: its text as a token, its finish reason, and
 * the usage block. */
static void
take_choice(struct call_state *cs, json_t *root)
{
	json_t	*choice = json_array_get(json_object_get(root, "choices"), 0);
	json_t	*t = json_object_get(choice, "text");
	json_t	*u = json_object_get(root, "usage");

	if (json_is_string(t))
		output_token(cs, json_string_value(t), json_string_length(t));
	adapter_finish(cs, json_string_value(json_object_get(choice,
	    "finish_reason")));
	adapter_usage(cs, json_object_get(u, "prompt_tokens"),
	    json_object_get(u, "completion_tokens"));
}

static int
completion_event(struct call_state *cs, const char *event, const char *data,
    size_t n)
{
	json_t	*root;

	if (adapter_blank(data, n))
		return 0;
	if (n == 6 && memcmp(data, "[DONE]", 6) == 0) {
		cs->cs_done = true;
		return 0;
	}
	if ((root = adapter_reply(cs, data, n, "an event of the stream")) ==
	    NULL)
		return -1;
	take_choice(cs, root);
	json_decref(root);
	return 0;
}

static int
completion_whole(struct call_state *cs, const char *body, size_t n)
{
	json_t	*root, *choice, *t;

	if ((root = adapter_reply(cs, body, n, "the response")) == NULL)
		return -1;
	choice = json_array_get(json_object_get(root, "choices"), 0);
	t = json_object_get(choice, "text");
	if (!json_is_object(choice) || (!json_is_string(t) && !json_is_null(t))) {
		snprintf(cs->cs_error, sizeof(cs->cs_error), "the response has "
		    "no choices[0].text");
		json_decref(root);
		return -1;
	}
	take_choice(cs, root);
	cs->cs_done = true;
	json_decref(root);
	return 0;
}

const struct adapter adapter_openai_completion = {
	APIT_OPENAI_COMPLETION, "openAIV1Completion", AD_SSE, completion_path,
	completion_body, NULL, completion_event, completion_whole, false,
};
