/* adapter_openai.c - the openAIChatCompletion adapter: request body and response parsing. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "adapter.h"
#include "chat_delta.h"
#include "gen_input.h"
#include "output.h"
#include "structured.h"

static json_t *
content_json(const struct wmsg *m)
{
	json_t	*parts;
	size_t	 i;

	if (m->m_nimages == 0)
		return json_string(m->m_content);
	parts = json_array();
	json_array_append_new(parts, json_pack("{s:s,s:s}", "type", "text",
	    "text", m->m_content));
	for (i = 0; i < m->m_nimages; i++)
		json_array_append_new(parts, json_pack("{s:s,s:{s:s}}", "type",
		    "image_url", "image_url", "url", m->m_images[i]));
	return parts;
}

static json_t *
message_json(const struct wmsg *m)
{
	json_t	*o = json_object(), *tc;

	/* WilmerAI's internal systemMes role is plain system to backends. */
	json_object_set_new(o, "role", json_string(
	    strcmp(m->m_role, "systemMes") == 0 ? "system" : m->m_role));
	json_object_set_new(o, "content", content_json(m));
	if (m->m_name != NULL)
		json_object_set_new(o, "name", json_string(m->m_name));
	if (m->m_tool_call_id != NULL)
		json_object_set_new(o, "tool_call_id",
		    json_string(m->m_tool_call_id));
	if (m->m_tool_calls != NULL &&
	    (tc = json_loads(m->m_tool_calls, 0, NULL)) != NULL)
		json_object_set_new(o, "tool_calls", tc);
	return o;
}

static json_t *
messages_json(const struct wmsgs *l)
{
	json_t	*a = json_array();
	size_t	 i, n = l->n;

	/* A trailing empty assistant turn (a generation prompt) is not
	 * sent to chat backends. */
	if (n > 0 && strcmp(l->v[n - 1].m_role, "assistant") == 0 &&
	    l->v[n - 1].m_content[0] == '\0' && l->v[n - 1].m_tool_calls == NULL)
		n--;
	for (i = 0; i < n; i++)
		json_array_append_new(a, message_json(&l->v[i]));
	return a;
}

static char *
chat_body(const struct node_call *nc)
{
	json_t	*root = json_object(), *t;
	char	*s;

	if (!nc->nc_ep->e_dont_include_model)
		json_object_set_new(root, "model",
		    json_string(nc->nc_ep->e_model));
	json_object_set_new(root, "messages", messages_json(nc->nc_msgs));
	gen_input_apply(root, nc);
	gen_input_stream_usage(root, nc);
	if (nc->nc_tools != NULL && (t = json_loads(nc->nc_tools, 0, NULL)))
		json_object_set_new(root, "tools", t);
	if (nc->nc_tool_choice != NULL &&
	    (t = json_loads(nc->nc_tool_choice, JSON_DECODE_ANY, NULL)))
		json_object_set_new(root, "tool_choice", t);
	structured_attach(root, nc->nc_at, nc->nc_schema);
	/* Byte for byte what WilmerAI's requests.post(json=...) sends. */
	s = jsonw_dumps(root, JSONW_PYTHON);
	json_decref(root);
	return s;
}

static const char *
chat_path(bool stream)
{
	return "/v1/chat/completions";
}

/* The usage block: a whole answer's, or a stream's last chunk (with
 * stream_options.include_usage its "choices" is empty). */
static void
take_usage(struct call_state *cs, json_t *root)
{
	json_t	*u = json_object_get(root, "usage");

	adapter_usage(cs, json_object_get(u, "prompt_tokens"),
	    json_object_get(u, "completion_tokens"));
}

static void
take_finish(struct call_state *cs, json_t *choice)
{
	adapter_finish(cs, json_string_value(json_object_get(choice,
	    "finish_reason")));
}

/* Streamed tool-call deltas (delta.tool_calls) gathered by index: the
 * first piece of an index is copied, later ones add to its arguments. */
static void
tool_deltas(struct call_state *cs, json_t *deltas)
{
	json_t		*acc = cs->cs_nc->nc_tool_calls, *d, *have, *c;
	json_t		*fn, *args;
	size_t		 i, j;
	struct buf	 b = BUF_INIT;

	if (acc == NULL || !json_is_array(deltas))
		return;
	json_array_foreach(deltas, i, d) {
		have = NULL;
		json_array_foreach(acc, j, c)
			if (json_equal(json_object_get(c, "index"),
			    json_object_get(d, "index")))
				have = c;
		if (have == NULL) {
			json_array_append_new(acc, json_deep_copy(d));
			continue;
		}
		fn = json_object_get(have, "function");
		args = json_object_get(json_object_get(d, "function"),
		    "arguments");
		if (!json_is_object(fn) || !json_is_string(args))
			continue;
		buf_reset(&b);
		buf_adds(&b, json_string_value(json_object_get(fn,
		    "arguments")) ? json_string_value(json_object_get(fn,
		    "arguments")) : "");
		buf_add(&b, json_string_value(args), json_string_length(args));
		json_object_set_new(fn, "arguments", json_stringn(b.b_data,
		    b.b_len));
	}
	buf_free(&b);
}

/* A whole answer's message.tool_calls, numbered as a stream would. */
static void
tool_calls_whole(struct call_state *cs, json_t *calls)
{
	json_t	*c, *copy;
	size_t	 i;

	json_array_foreach(calls, i, c) {
		copy = json_deep_copy(c);
		json_object_set_new(copy, "index", json_integer((json_int_t)i));
		adapter_tool_call(cs, copy);
	}
}

/* What an event of the common shape says (chat_delta.h), applied as
 * the tree's reading below would apply it. */
static void
delta_apply(struct call_state *cs, const struct chat_delta *d)
{
	if (d->cd_content.p != NULL)
		output_token(cs, d->cd_content.p, d->cd_content.n);
	if (d->cd_finish.p != NULL)
		adapter_finish_n(cs, d->cd_finish.p, d->cd_finish.n);
	if (d->cd_has_prompt)
		cs->cs_out->no_prompt_tokens = d->cd_prompt;
	if (d->cd_has_completion)
		cs->cs_out->no_completion_tokens = d->cd_completion;
}

static int
chat_event(struct call_state *cs, const char *event, const char *data,
    size_t n)
{
	json_t		*root, *choice, *c;
	struct jscan	 js;
	struct chat_delta d;
	int		 quick;

	if (n == 6 && memcmp(data, "[DONE]", 6) == 0) {
		cs->cs_done = true;
		return 0;
	}
	if ((quick = chat_delta_scan(&js, data, n, &d)) == 1)
		delta_apply(cs, &d);
	jscan_clear(&js);
	if (quick)
		return 0;
	if ((root = adapter_reply(cs, data, n, "an event of the stream")) == NULL)
		return -1;
	choice = json_array_get(json_object_get(root, "choices"), 0);
	c = json_object_get(json_object_get(choice, "delta"), "content");
	if (json_is_string(c))
		output_token(cs, json_string_value(c), json_string_length(c));
	tool_deltas(cs, json_object_get(json_object_get(choice, "delta"),
	    "tool_calls"));
	if (choice != NULL)
		take_finish(cs, choice);
	take_usage(cs, root);
	json_decref(root);
	return 0;
}

static int
chat_whole(struct call_state *cs, const char *body, size_t n)
{
	json_t		*root, *choice, *c;

	if ((root = adapter_reply(cs, body, n, "the response")) == NULL)
		return -1;
	choice = json_array_get(json_object_get(root, "choices"), 0);
	c = json_object_get(json_object_get(choice, "message"), "content");
	if (!json_is_object(choice) || (!json_is_string(c) && !json_is_null(c))) {
		snprintf(cs->cs_error, sizeof(cs->cs_error), "the response has "
		    "no choices[0].message.content");
		json_decref(root);
		return -1;
	}
	if (json_is_string(c))
		output_token(cs, json_string_value(c), json_string_length(c));
	tool_calls_whole(cs, json_object_get(json_object_get(choice, "message"),
	    "tool_calls"));
	take_finish(cs, choice);
	take_usage(cs, root);
	cs->cs_done = true;
	json_decref(root);
	return 0;
}

const struct adapter adapter_openai_chat = {
	APIT_OPENAI_CHAT, "openAIChatCompletion", AD_SSE, chat_path, chat_body,
	NULL, chat_event, chat_whole, false,
};
