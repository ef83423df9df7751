/* adapter_claude.c - the claudeMessages adapter: Anthropic's Messages API (/v1/messages). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/base64.h"
#include "../../common/jsonw.h"
#include "../../common/pystr.h"
#include "adapter.h"
#include "gen_input.h"
#include "output.h"

/* The body keys Claude accepts; WilmerAI removes every other one. */
static const char *const supported[] = {
	"model", "messages", "max_tokens", "system", "temperature", "top_p",
	"top_k", "stream", "stop_sequences", "metadata", "thinking", "tools",
	"tool_choice",
};

/* Member key of o when it is a string, else def. */
static const char *
sget(const json_t *o, const char *key, const char *def)
{
	const char	*v = json_string_value(json_object_get(o, key));

	return v != NULL ? v : def;
}

/* ---- images ----------------------------------------------------------- */

/* The media type of raw base64 image data, sniffed from its first
 * bytes; image/jpeg when unknown (WilmerAI asks PIL, same default). */
static const char *
sniff_media_type(const char *b64)
{
	unsigned char	 b[12];
	size_t		 i;
	int		 v[16];

	for (i = 0; i < 16; i++)
		if ((v[i] = base64_digit((unsigned char)b64[i])) < 0)
			return "image/jpeg";
	for (i = 0; i < 4; i++) {
		b[3 * i] = (unsigned char)(v[4 * i] << 2 | v[4 * i + 1] >> 4);
		b[3 * i + 1] = (unsigned char)((v[4 * i + 1] & 15) << 4 |
		    v[4 * i + 2] >> 2);
		b[3 * i + 2] = (unsigned char)((v[4 * i + 2] & 3) << 6 |
		    v[4 * i + 3]);
	}
	if (memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0)
		return "image/gif";
	if (memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0)
		return "image/webp";
	if (memcmp(b, "BM", 2) == 0)
		return "image/bmp";
	return "image/jpeg";
}

/* Raw base64 as WilmerAI recognises it: at least 100 characters of the
 * base64 alphabet, up to two '=' at the end, a multiple of 4 long. */
static bool
looks_base64(const char *s)
{
	size_t	 n = strlen(s), k = n;

	while (k > 0 && n - k < 2 && s[k - 1] == '=')
		k--;
	if (n < 100 || n % 4 != 0 || k == 0)
		return false;
	while (k > 0)
		if (base64_digit((unsigned char)s[--k]) < 0)
			return false;
	return true;
}

/* "data:image/<type>;base64,<data>" split into media type and data. */
static bool
data_uri(const char *s, char *type, size_t typelen, const char **data)
{
	const char	*p = s + 11, *semi;

	if (strncmp(s, "data:image/", 11) != 0)
		return false;
	while (*p != '\0' && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM"
	    "NOPQRSTUVWXYZ0123456789.+-", *p) != NULL)
		p++;
	semi = p;
	if (semi == s + 11 || strncmp(semi, ";base64,", 8) != 0 ||
	    semi[8] == '\0' || strchr(semi + 8, '\n') != NULL ||
	    (size_t)(semi - s - 5) >= typelen)
		return false;
	snprintf(type, typelen, "%.*s", (int)(semi - s - 5), s + 5);
	*data = semi + 8;
	return true;
}

/* One image as a Claude image block, or NULL when it is not one of a
 * data URI, an http(s) URL or raw base64 (WilmerAI skips those). */
static json_t *
image_block(const char *img)
{
	char		 type[128];
	const char	*data;

	if (data_uri(img, type, sizeof(type), &data))
		return json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "image",
		    "source", "type", "base64", "media_type", type, "data",
		    data);
	if (strncmp(img, "data:image/", 11) == 0)
		return NULL;
	if (strncmp(img, "http://", 7) == 0 || strncmp(img, "https://", 8) == 0)
		return json_pack("{s:s,s:{s:s,s:s}}", "type", "image", "source",
		    "type", "url", "url", img);
	if (looks_base64(img))
		return json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "image",
		    "source", "type", "base64", "media_type",
		    sniff_media_type(img), "data", img);
	return NULL;
}

/* A user message's content: the image blocks first (Claude's advice),
 * then the text; the plain string when no image could be used. */
static json_t *
user_content(const struct wmsg *m)
{
	json_t	*a = json_array(), *b;
	size_t	 i;

	for (i = 0; i < m->m_nimages; i++)
		if ((b = image_block(m->m_images[i])) != NULL)
			json_array_append_new(a, b);
	if (json_array_size(a) == 0) {
		json_decref(a);
		return json_string(m->m_content);
	}
	json_array_append_new(a, json_pack("{s:s,s:s}", "type", "text", "text",
	    m->m_content));
	return a;
}

/* ---- messages --------------------------------------------------------- */

/* An assistant turn that called tools: its text (when any), then one
 * tool_use block per call with the arguments parsed back into "input". */
static json_t *
tool_use_content(const struct wmsg *m, json_t *calls)
{
	json_t	*a = json_array(), *tc, *fn, *in;
	size_t	 i;

	if (m->m_content[0] != '\0')
		json_array_append_new(a, json_pack("{s:s,s:s}", "type", "text",
		    "text", m->m_content));
	json_array_foreach(calls, i, tc) {
		fn = json_object_get(tc, "function");
		in = json_loads(sget(fn, "arguments", "{}"), 0, NULL);
		if (!json_is_object(in)) {
			json_decref(in);
			in = json_object();
		}
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:o}", "type",
		    "tool_use", "id", sget(tc, "id", ""), "name",
		    sget(fn, "name", ""), "input", in));
	}
	return a;
}

static json_t *
message_json(const struct wmsg *m)
{
	json_t	*calls, *content;

	calls = m->m_tool_calls != NULL ? json_loads(m->m_tool_calls, 0, NULL) :
	    NULL;
	if (strcmp(m->m_role, "assistant") == 0 && json_array_size(calls) > 0)
		content = tool_use_content(m, calls);
	else if (strcmp(m->m_role, "user") == 0)
		content = user_content(m);
	else
		content = json_string(m->m_content);
	json_decref(calls);
	return json_pack("{s:s,s:o}", "role", m->m_role, "content", content);
}

/* A tool result joins the user turn that collects the results of the
 * previous assistant turn (Claude wants them all in one message). */
static void
add_tool_result(json_t *msgs, const struct wmsg *m)
{
	json_t	*last = json_array_get(msgs, json_array_size(msgs) - 1);
	json_t	*blocks = json_object_get(last, "content");
	json_t	*b = json_pack("{s:s,s:s,s:s}", "type", "tool_result",
		    "tool_use_id", m->m_tool_call_id ? m->m_tool_call_id : "",
		    "content", m->m_content);

	if (json_is_array(blocks) && strcmp(sget(json_array_get(blocks, 0),
	    "type", ""), "tool_result") == 0) {
		json_array_append_new(blocks, b);
		return;
	}
	json_array_append_new(msgs, json_pack("{s:s,s:[o]}", "role", "user",
	    "content", b));
}

static bool
is_system(const char *role)
{
	return strcmp(role, "system") == 0 || strcmp(role, "systemMes") == 0;
}

/* A trailing assistant prefill loses its trailing whitespace (Python's
 * str.rstrip()): Claude rejects it otherwise. */
static void
rstrip_prefill(json_t *msgs)
{
	json_t		*last = json_array_get(msgs, json_array_size(msgs) - 1);
	json_t		*c = json_object_get(last, "content");
	size_t		 off, n;

	if (strcmp(sget(last, "role", ""), "assistant") != 0 ||
	    !json_is_string(c))
		return;
	pystr_strip(json_string_value(c), json_string_length(c), false,
	    true, &off, &n);
	json_object_set_new(last, "content", json_stringn(json_string_value(c),
	    n));
}

/* System messages leave the list (joined into *system, a new string or
 * NULL); the rest become Claude messages. The empty generation-prompt
 * turn is not sent; a trailing assistant prefill loses its trailing
 * whitespace. */
static json_t *
messages_json(const struct wmsgs *l, json_t **system)
{
	json_t		*a = json_array();
	struct buf	 sys = BUF_INIT;
	size_t		 i, n = l != NULL ? l->n : 0, nsys = 0;

	if (n > 0 && strcmp(l->v[n - 1].m_role, "assistant") == 0 &&
	    l->v[n - 1].m_content[0] == '\0' && l->v[n - 1].m_tool_calls == NULL)
		n--;
	for (i = 0; i < n; i++) {
		const struct wmsg	*m = &l->v[i];

		if (is_system(m->m_role)) {
			if (nsys++ > 0)
				buf_adds(&sys, "\n\n");
			buf_adds(&sys, m->m_content);
		} else if (strcmp(m->m_role, "tool") == 0)
			add_tool_result(a, m);
		else
			json_array_append_new(a, message_json(m));
	}
	*system = nsys > 0 ? json_stringn(sys.b_data ? sys.b_data : "",
	    sys.b_len) : NULL;
	buf_free(&sys);
	rstrip_prefill(a);
	return a;
}

/* ---- tools ------------------------------------------------------------ */

/* OpenAI tool definitions as Claude's {name, description, input_schema?}. */
static json_t *
tools_json(json_t *tools)
{
	json_t	*a = json_array(), *t, *fn, *o, *v;
	size_t	 i;

	json_array_foreach(tools, i, t) {
		fn = json_object_get(t, "function");
		o = json_object();
		v = json_object_get(fn, "name");
		json_object_set_new(o, "name", v ? json_incref(v) :
		    json_string(""));
		v = json_object_get(fn, "description");
		json_object_set_new(o, "description", v ? json_incref(v) :
		    json_string(""));
		v = json_object_get(fn, "parameters");
		if (v != NULL && !json_is_null(v) && !json_is_false(v) &&
		    !(json_is_object(v) && json_object_size(v) == 0))
			json_object_set(o, "input_schema", v);
		json_array_append_new(a, o);
	}
	return a;
}

/* tool_choice: "auto" -> {"type": "auto"}, "required" -> {"type":
 * "any"}, {"function": {"name": N}} -> {"type": "tool", "name": N};
 * anything else (and "none") -> none. */
static json_t *
tool_choice_json(json_t *tc)
{
	const char	*s = json_string_value(tc), *name;

	if (s != NULL && strcmp(s, "auto") == 0)
		return json_pack("{s:s}", "type", "auto");
	if (s != NULL && strcmp(s, "required") == 0)
		return json_pack("{s:s}", "type", "any");
	name = json_string_value(json_object_get(json_object_get(tc,
	    "function"), "name"));
	if (json_is_object(tc) && name != NULL && *name != '\0')
		return json_pack("{s:s,s:s}", "type", "tool", "name", name);
	return NULL;
}

/* tools and tool_choice go last; "none" sends no tools at all. */
static void
add_tools(json_t *root, const struct node_call *nc)
{
	json_t	*tools, *tc = NULL, *c;

	if (nc->nc_tools == NULL || (tools = json_loads(nc->nc_tools,
	    JSON_DECODE_ANY, NULL)) == NULL)
		return;
	if (nc->nc_tool_choice != NULL)
		tc = json_loads(nc->nc_tool_choice, JSON_DECODE_ANY, NULL);
	if (json_is_array(tools) && json_array_size(tools) > 0 &&
	    !(json_is_string(tc) && strcmp(json_string_value(tc), "none") == 0)) {
		json_object_set_new(root, "tools", tools_json(tools));
		if ((c = tool_choice_json(tc)) != NULL)
			json_object_set_new(root, "tool_choice", c);
	}
	json_decref(tc);
	json_decref(tools);
}

/* ---- request ---------------------------------------------------------- */

static bool
is_supported(const char *key)
{
	size_t	 i;

	for (i = 0; i < sizeof(supported) / sizeof(supported[0]); i++)
		if (strcmp(key, supported[i]) == 0)
			return true;
	return false;
}

/* {model?, messages, ...gen_input (Claude's keys only), system?, tools?,
 * tool_choice?}: the key order of WilmerAI's payload dict. */
static char *
claude_body(const struct node_call *nc)
{
	json_t		*root = json_object(), *system, *v;
	const char	*key;
	void		*tmp;

	if (!nc->nc_ep->e_dont_include_model)
		json_object_set_new(root, "model",
		    json_string(nc->nc_ep->e_model));
	json_object_set_new(root, "messages", messages_json(nc->nc_msgs,
	    &system));
	gen_input_apply(root, nc);
	json_object_foreach_safe(root, tmp, key, v)
		if (!is_supported(key))
			json_object_del(root, key);
	if (system != NULL)
		json_object_set_new(root, "system", system);
	add_tools(root, nc);
	return adapter_dump(root);
}

static const char *
claude_path(bool stream)
{
	return "/v1/messages";
}

/* x-api-key instead of a Bearer token, and the API version. */
static void
claude_auth(const struct node_call *nc, struct buf *lines)
{
	if (nc->nc_ep->e_api_key[0] != '\0')
		buf_printf(lines, "x-api-key: %s\n", nc->nc_ep->e_api_key);
	buf_adds(lines, "anthropic-version: 2023-06-01\n");
}

/* ---- replies ---------------------------------------------------------- */

/* Claude's stop_reason in OpenAI's words. */
static const char *
finish_of(const char *stop)
{
	if (strcmp(stop, "tool_use") == 0)
		return "tool_calls";
	if (strcmp(stop, "end_turn") == 0 || strcmp(stop, "stop_sequence") == 0)
		return "stop";
	if (strcmp(stop, "max_tokens") == 0)
		return "length";
	return stop;
}

static void
take_usage(struct call_state *cs, json_t *usage)
{
	adapter_usage(cs, json_object_get(usage, "input_tokens"),
	    json_object_get(usage, "output_tokens"));
}

/* content_block_start of a tool_use block: a new call, its arguments
 * to come as input_json_delta pieces. */
static void
start_tool(struct call_state *cs, json_t *root)
{
	json_t	*b = json_object_get(root, "content_block");
	json_t	*sink = cs->cs_nc->nc_tool_calls;
	long	 idx = sink != NULL ? (long)json_array_size(sink) : 0;

	if (strcmp(sget(b, "type", ""), "tool_use") != 0)
		return;
	adapter_tool_call(cs, adapter_openai_call(idx, sget(b, "id", ""),
	    sget(b, "name", ""), ""));
}

/* A piece of the arguments of the call being streamed. */
static void
tool_args(struct call_state *cs, const char *piece)
{
	json_t		*sink = cs->cs_nc->nc_tool_calls, *fn, *a;
	struct buf	 b = BUF_INIT;

	fn = json_object_get(json_array_get(sink, json_array_size(sink) - 1),
	    "function");
	if (fn == NULL || piece == NULL)
		return;
	a = json_object_get(fn, "arguments");
	buf_adds(&b, json_string_value(a) ? json_string_value(a) : "");
	buf_adds(&b, piece);
	json_object_set_new(fn, "arguments", json_stringn(b.b_data, b.b_len));
	buf_free(&b);
}

static void
on_delta(struct call_state *cs, json_t *root)
{
	json_t		*d = json_object_get(root, "delta"), *t;
	const char	*type = json_string_value(json_object_get(d, "type"));

	if (type == NULL)
		return;
	if (strcmp(type, "text_delta") == 0 &&
	    json_is_string(t = json_object_get(d, "text")))
		output_token(cs, json_string_value(t), json_string_length(t));
	else if (strcmp(type, "input_json_delta") == 0)
		tool_args(cs, json_string_value(json_object_get(d,
		    "partial_json")));
}

/* message_delta carries the stop reason (the end, as WilmerAI stops at
 * the first chunk with a finish reason) and the output token count. */
static void
on_message_delta(struct call_state *cs, json_t *root)
{
	const char	*stop = json_string_value(json_object_get(
			    json_object_get(root, "delta"), "stop_reason"));

	take_usage(cs, json_object_get(root, "usage"));
	if (stop != NULL && *stop != '\0') {
		adapter_finish(cs, finish_of(stop));
		cs->cs_done = true;
	}
}

static int
claude_event(struct call_state *cs, const char *event, const char *data,
    size_t n)
{
	json_t		*root;
	const char	*type;

	if (adapter_blank(data, n))
		return 0;
	if ((root = adapter_reply(cs, data, n, "an event of the stream")) ==
	    NULL)
		return -1;
	if ((type = json_string_value(json_object_get(root, "type"))) == NULL)
		type = event != NULL ? event : "";
	if (strcmp(type, "message_start") == 0)
		take_usage(cs, json_object_get(json_object_get(root, "message"),
		    "usage"));
	else if (strcmp(type, "content_block_start") == 0)
		start_tool(cs, root);
	else if (strcmp(type, "content_block_delta") == 0)
		on_delta(cs, root);
	else if (strcmp(type, "message_delta") == 0)
		on_message_delta(cs, root);
	else if (strcmp(type, "message_stop") == 0)
		cs->cs_done = true;
	json_decref(root);
	return 0;
}

/* A tool_use block of a whole reply as an OpenAI-shape call whose
 * arguments are json.dumps(input). */
static void
whole_tool(struct call_state *cs, json_t *b)
{
	json_t	*in = json_object_get(b, "input");
	char	*args;

	in = in != NULL ? json_incref(in) : json_object();
	args = jsonw_dumps(in, JSONW_PYTHON);
	json_decref(in);
	adapter_tool_call(cs, adapter_openai_call(-1, sget(b, "id", ""),
	    sget(b, "name", ""), args));
	free(args);
}

static int
claude_whole(struct call_state *cs, const char *body, size_t n)
{
	json_t		*root, *blocks, *b, *t;
	const char	*type, *stop;
	size_t		 i;

	if ((root = adapter_reply(cs, body, n, "the response")) == NULL)
		return -1;
	if (!json_is_array(blocks = json_object_get(root, "content"))) {
		snprintf(cs->cs_error, sizeof(cs->cs_error), "the response has "
		    "no content blocks");
		json_decref(root);
		return -1;
	}
	json_array_foreach(blocks, i, b) {
		if ((type = json_string_value(json_object_get(b, "type"))) == NULL)
			continue;
		if (strcmp(type, "text") == 0 &&
		    json_is_string(t = json_object_get(b, "text")))
			output_token(cs, json_string_value(t),
			    json_string_length(t));
		else if (strcmp(type, "tool_use") == 0)
			whole_tool(cs, b);
	}
	if ((stop = json_string_value(json_object_get(root, "stop_reason"))))
		adapter_finish(cs, finish_of(stop));
	take_usage(cs, json_object_get(root, "usage"));
	cs->cs_done = true;
	json_decref(root);
	return 0;
}

const struct adapter adapter_claude = {
	APIT_CLAUDE, "claudeMessages", AD_SSE, claude_path, claude_body,
	claude_auth, claude_event, claude_whole, false,
};
