/* adapter_ollama.c - the ollamaApiChat and ollamaApiGenerate adapters: Ollama's native API, NDJSON replies. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "adapter.h"
#include "gen_input.h"
#include "output.h"
#include "structured.h"

/* ---- request ---------------------------------------------------------- */

/* A tool call in Ollama's shape: {"function": {"name", "arguments"}},
 * the arguments an object (OpenAI sends them as JSON text). */
static json_t *
ollama_call(json_t *call)
{
	json_t	*f = json_object_get(call, "function");
	json_t	*name = json_object_get(f, "name");
	json_t	*args = json_object_get(f, "arguments"), *obj = NULL;

	if (json_is_string(args))
		obj = json_loads(json_string_value(args), 0, NULL);
	else if (json_is_object(args))
		obj = json_incref(args);
	if (!json_is_object(obj)) {
		json_decref(obj);
		obj = json_object();
	}
	return json_pack("{s:{s:O,s:o}}", "function", "name",
	    name != NULL ? name : json_null(), "arguments", obj);
}

/* The name of the call of l (before message i) that id answers, or
 * NULL. */
static const char *
called_name(const struct wmsgs *l, size_t i, const char *id)
{
	static char	 name[128];
	json_t		*calls, *c;
	size_t		 k;
	const char	*found = NULL;

	while (i-- > 0 && found == NULL) {
		if (l->v[i].m_tool_calls == NULL ||
		    (calls = json_loads(l->v[i].m_tool_calls, 0, NULL)) == NULL)
			continue;
		json_array_foreach(calls, k, c)
			if (json_is_string(json_object_get(c, "id")) &&
			    strcmp(json_string_value(json_object_get(c, "id")),
			    id) == 0 && json_is_string(json_object_get(
			    json_object_get(c, "function"), "name"))) {
				(void)snprintf(name, sizeof(name), "%s",
				    json_string_value(json_object_get(
				    json_object_get(c, "function"), "name")));
				found = name;
				break;
			}
		json_decref(calls);
	}
	return found;
}

/* Tool turns in Ollama's own shape (addendum A8.2, where WilmerAI
 * sends OpenAI's): an assistant's calls with object arguments, a
 * result naming its tool ("tool_name", from the call its tool_call_id
 * answers, else its "name"). */
static void
tool_fields(json_t *o, const struct wmsgs *l, size_t i)
{
	const struct wmsg	*m = &l->v[i];
	const char		*tn = NULL;
	json_t			*tc, *out, *c;
	size_t			 k;

	if (m->m_tool_calls != NULL &&
	    (tc = json_loads(m->m_tool_calls, 0, NULL)) != NULL) {
		out = json_array();
		json_array_foreach(tc, k, c)
			json_array_append_new(out, ollama_call(c));
		json_object_set_new(o, "tool_calls", out);
		json_decref(tc);
	}
	if (strcmp(m->m_role, "tool") != 0)
		return;
	if (m->m_tool_call_id != NULL)
		tn = called_name(l, i, m->m_tool_call_id);
	if (tn == NULL)
		tn = m->m_name;
	if (tn != NULL)
		json_object_set_new(o, "tool_name", json_string(tn));
}

/* Ollama takes the raw base64 of images, and only on user messages. */
static json_t *
message_json(const struct wmsgs *l, size_t i)
{
	const struct wmsg	*m = &l->v[i];
	json_t			*o = json_object(), *imgs;
	size_t			 k;

	json_object_set_new(o, "role", json_string(
	    strcmp(m->m_role, "systemMes") == 0 ? "system" : m->m_role));
	json_object_set_new(o, "content", json_string(m->m_content));
	if (m->m_nimages > 0 && strcmp(m->m_role, "user") == 0) {
		imgs = json_array();
		for (k = 0; k < m->m_nimages; k++)
			json_array_append_new(imgs, json_string(
			    adapter_raw_image(m->m_images[k])));
		json_object_set_new(o, "images", imgs);
	}
	if (m->m_name != NULL && strcmp(m->m_role, "tool") != 0)
		json_object_set_new(o, "name", json_string(m->m_name));
	tool_fields(o, l, i);
	return o;
}

static json_t *
messages_json(const struct wmsgs *l)
{
	json_t	*a = json_array();
	size_t	 i, n = l != NULL ? l->n : 0;

	/* The empty generation-prompt turn is not sent. */
	if (n > 0 && strcmp(l->v[n - 1].m_role, "assistant") == 0 &&
	    l->v[n - 1].m_content[0] == '\0' && l->v[n - 1].m_tool_calls == NULL)
		n--;
	for (i = 0; i < n; i++)
		json_array_append_new(a, message_json(l, i));
	return a;
}

/* The gen_input as Ollama's "options": "think" is lifted out to the top
 * level (*think, a new reference or NULL), where the client's own
 * think, when it sent one, wins over the preset's; the stream flag, a
 * transport field, is dropped. */
static json_t *
options_json(const struct node_call *nc, json_t **think)
{
	json_t	*opt = gen_input_new(nc), *client = NULL;

	if (nc->nc_think != NULL)
		client = json_loads(nc->nc_think, JSON_DECODE_ANY, NULL);
	*think = client != NULL ? client :
	    json_incref(json_object_get(opt, "think"));
	json_object_del(opt, "think");
	if (nc->nc_at->a_stream_prop[0] != '\0')
		json_object_del(opt, nc->nc_at->a_stream_prop);
	return opt;
}

/* {model, messages, options, think?, stream: false (only when not
 * streaming), tools?}. Ollama always gets the model; tool_choice is not
 * an Ollama field. */
static char *
chat_body(const struct node_call *nc)
{
	json_t	*root = json_object(), *think, *opt, *t;

	json_object_set_new(root, "model", json_string(nc->nc_ep->e_model));
	json_object_set_new(root, "messages", messages_json(nc->nc_msgs));
	opt = options_json(nc, &think);
	json_object_set_new(root, "options", opt);
	if (think != NULL)
		json_object_set_new(root, "think", think);
	if (!nc->nc_stream)
		json_object_set_new(root, "stream", json_false());
	/* Python's "if tools:" - only a non-empty list is sent. */
	if (nc->nc_tools != NULL &&
	    (t = json_loads(nc->nc_tools, JSON_DECODE_ANY, NULL)) != NULL) {
		if (json_is_array(t) && json_array_size(t) > 0)
			json_object_set_new(root, "tools", t);
		else
			json_decref(t);
	}
	structured_attach(root, nc->nc_at, nc->nc_schema);
	return adapter_dump(root);
}

/* {model, prompt, stream, raw: true, options, think?}. */
static char *
generate_body(const struct node_call *nc)
{
	json_t	*root = json_object(), *think, *opt;

	json_object_set_new(root, "model", json_string(nc->nc_ep->e_model));
	json_object_set_new(root, "prompt", json_string(nc->nc_prompt != NULL ?
	    nc->nc_prompt : ""));
	json_object_set_new(root, "stream", json_boolean(nc->nc_stream));
	json_object_set_new(root, "raw", json_true());
	opt = options_json(nc, &think);
	json_object_set_new(root, "options", opt);
	if (think != NULL)
		json_object_set_new(root, "think", think);
	return adapter_dump(root);
}

static const char *
chat_path(bool stream)
{
	return "/api/chat";
}

static const char *
generate_path(bool stream)
{
	return "/api/generate";
}

/* ---- replies ---------------------------------------------------------- */

/* Ollama's tool calls carry no ids: each becomes an OpenAI-shape call
 * with a generated call_<24 hex> id, its arguments serialised as
 * Python's json.dumps would, numbered from first. Returns how many. */
static size_t
take_tool_calls(struct call_state *cs, json_t *calls, size_t first)
{
	json_t	*tc, *fn, *args;
	char	*text;
	size_t	 i;

	json_array_foreach(calls, i, tc) {
		fn = json_object_get(tc, "function");
		args = json_object_get(fn, "arguments");
		if (args == NULL)
			args = json_object();
		else
			json_incref(args);
		text = jsonw_dumps(args, JSONW_PYTHON);
		json_decref(args);
		adapter_tool_call(cs, adapter_openai_call((long)(first + i), NULL,
		    json_string_value(json_object_get(fn, "name")), text));
		free(text);
	}
	return json_array_size(calls);
}

static size_t
calls_so_far(const struct call_state *cs)
{
	return cs->cs_nc->nc_tool_calls != NULL ?
	    json_array_size(cs->cs_nc->nc_tool_calls) : 0;
}

/* The final object of a reply: done_reason (else "stop"; "tool_calls"
 * when the reply made tool calls) and the token counts. */
static void
take_done(struct call_state *cs, json_t *root, bool made_calls)
{
	const char	*why = json_string_value(json_object_get(root,
			    "done_reason"));

	if (made_calls)
		why = "tool_calls";
	else if (why == NULL || *why == '\0')
		why = "stop";
	adapter_finish(cs, why);
	adapter_usage(cs, json_object_get(root, "prompt_eval_count"),
	    json_object_get(root, "eval_count"));
}

/* One NDJSON line of either endpoint: the token is message.content
 * (chat) or response (generate); chat lines may carry tool calls. Ends
 * the stream on "done": true. */
static int
stream_line(struct call_state *cs, const char *data, size_t n, bool chat)
{
	json_t	*root, *msg, *c, *tc;
	size_t	 before = calls_so_far(cs);

	if (adapter_blank(data, n))
		return 0;
	if ((root = adapter_reply(cs, data, n, "a line of the stream")) == NULL)
		return -1;
	msg = json_object_get(root, "message");
	c = chat ? json_object_get(msg, "content") :
	    json_object_get(root, "response");
	if (json_is_string(c))
		output_token(cs, json_string_value(c), json_string_length(c));
	tc = json_object_get(msg, "tool_calls");
	if (chat && json_is_array(tc))
		take_tool_calls(cs, tc, before);
	if (json_is_true(json_object_get(root, "done"))) {
		take_done(cs, root, chat && calls_so_far(cs) > 0);
		cs->cs_done = true;
	}
	json_decref(root);
	return 0;
}

static int
chat_event(struct call_state *cs, const char *event, const char *data,
    size_t n)
{
	return stream_line(cs, data, n, true);
}

static int
generate_event(struct call_state *cs, const char *event, const char *data,
    size_t n)
{
	return stream_line(cs, data, n, false);
}

static int
chat_whole(struct call_state *cs, const char *body, size_t n)
{
	json_t	*root, *msg, *c, *tc;
	size_t	 made = 0;

	if ((root = adapter_reply(cs, body, n, "the response")) == NULL)
		return -1;
	msg = json_object_get(root, "message");
	c = json_object_get(msg, "content");
	if (!json_is_object(msg) || (!json_is_string(c) && !json_is_null(c) &&
	    c != NULL)) {
		snprintf(cs->cs_error, sizeof(cs->cs_error), "the response has "
		    "no message.content");
		json_decref(root);
		return -1;
	}
	if (json_is_string(c))
		output_token(cs, json_string_value(c), json_string_length(c));
	if (json_is_array(tc = json_object_get(msg, "tool_calls")))
		made = take_tool_calls(cs, tc, 0);
	take_done(cs, root, made > 0);
	cs->cs_done = true;
	json_decref(root);
	return 0;
}

static int
generate_whole(struct call_state *cs, const char *body, size_t n)
{
	json_t	*root, *r;

	if ((root = adapter_reply(cs, body, n, "the response")) == NULL)
		return -1;
	if (!json_is_string(r = json_object_get(root, "response"))) {
		snprintf(cs->cs_error, sizeof(cs->cs_error), "the response has "
		    "no \"response\" text");
		json_decref(root);
		return -1;
	}
	output_token(cs, json_string_value(r), json_string_length(r));
	take_done(cs, root, false);
	cs->cs_done = true;
	json_decref(root);
	return 0;
}

const struct adapter adapter_ollama_chat = {
	APIT_OLLAMA_CHAT, "ollamaApiChat", AD_NDJSON, chat_path, chat_body,
	NULL, chat_event, chat_whole, false,
};

const struct adapter adapter_ollama_generate = {
	APIT_OLLAMA_GENERATE, "ollamaApiGenerate", AD_NDJSON, generate_path,
	generate_body, NULL, generate_event, generate_whole, false,
};
