/* check_adapters.c - the backend dialects' request bodies and reply parsing, and prompt construction. */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../common/conf_template.h"
#include "../../worker/core/msgs.h"
#include "../../worker/core/prompt.h"
#include "../../worker/llm/backend.h"
#include "../../worker/llm/gen_input.h"
#include "../testmain.h"
#include "stubs_worker.h"

/* ---- fixtures ----------------------------------------------------------- */

static struct conf_endpoint	 EP;
static struct conf_apitype	 AT;
static struct conf_user		 U;
static struct node_out		 OUT;

/* Endpoint "E" (model m1, context 8192, no key) of an api type whose
 * property names are given. */
static void
fixture(enum conf_apitype_kind t, const char *truncate, const char *maxtok)
{
	EP = (struct conf_endpoint){ .e_name = "E", .e_url = "http://x",
	    .e_model = "m1", .e_max_context = 8192, .e_api_key = "" };
	AT = (struct conf_apitype){ .a_type = t, .a_truncate_prop = truncate,
	    .a_max_tokens_prop = maxtok, .a_stream_prop = "stream" };
}

static struct node_call
call(const struct wmsgs *l, json_t *preset, bool stream)
{
	return (struct node_call){ .nc_user = &U, .nc_ep = &EP, .nc_at = &AT,
	    .nc_preset = preset, .nc_msgs = l, .nc_max_tokens = 300,
	    .nc_stream = stream };
}

/* A fresh parsing state over OUT for nc. */
static struct call_state
state(const struct node_call *nc)
{
	buf_free(&OUT.no_text);
	memset(&OUT, 0, sizeof(OUT));
	OUT.no_prompt_tokens = OUT.no_completion_tokens = -1;
	buf_free(&stub_tokens);
	return (struct call_state){ .cs_nc = nc, .cs_out = &OUT };
}

/* One SSE event (name and data), as the transport hands it over. */
static int
sse(const struct adapter *ad, struct call_state *cs, const char *event,
    const char *data)
{
	return ad->ad_event(cs, event, data, strlen(data));
}

/* One NDJSON line, not NUL-terminated (the line splitter passes a view
 * into its buffer). */
static int
line(const struct adapter *ad, struct call_state *cs, const char *data)
{
	char	*copy = malloc(strlen(data) + 8);
	int	 r;

	memcpy(copy, data, strlen(data));
	memcpy(copy + strlen(data), "}garbage", 8);
	r = ad->ad_event(cs, NULL, copy, strlen(data));
	free(copy);
	return r;
}

static int
whole(const struct adapter *ad, struct call_state *cs, const char *body)
{
	return ad->ad_whole(cs, body, strlen(body));
}

/* The adapter's body for nc, compared with the golden text. */
static void
body_is(const struct adapter *ad, const struct node_call *nc,
    const char *golden)
{
	char	*b = ad->ad_body(nc);

	ck_assert_str_eq(b, golden);
	free(b);
}

static void
add_images(struct wmsg *m, const char *a, const char *b)
{
	m->m_images = calloc(2, sizeof(char *));
	m->m_images[0] = strdup(a);
	m->m_nimages = 1;
	if (b != NULL) {
		m->m_images[1] = strdup(b);
		m->m_nimages = 2;
	}
}

/* A generated tool call id: "call_" and 24 lower-case hex digits. */
static bool
is_call_id(const char *id)
{
	size_t	 i;

	if (id == NULL || strlen(id) != 29 || strncmp(id, "call_", 5) != 0)
		return false;
	for (i = 5; i < 29; i++)
		if (strchr("0123456789abcdef", id[i]) == NULL)
			return false;
	return true;
}

static const char *
call_field(json_t *calls, size_t i, const char *key)
{
	json_t	*c = json_array_get(calls, i);

	if (strcmp(key, "id") == 0)
		return json_string_value(json_object_get(c, "id"));
	return json_string_value(json_object_get(json_object_get(c,
	    "function"), key));
}

/* ---- openAIV1Completion -------------------------------------------------- */

START_TEST(completion_body_like_wilmer)
{
	json_t		*preset = json_pack("{s:f,s:[s]}", "temperature", 0.7,
			    "stop", "</s>");
	struct node_call nc;

	fixture(APIT_OPENAI_COMPLETION, "", "max_tokens");
	nc = call(NULL, preset, true);
	nc.nc_prompt = "Hi \xc3\xa9";
	/* The model comes after the gen_input, as WilmerAI adds it last. */
	body_is(&adapter_openai_completion, &nc, "{\"prompt\": \"Hi \\u00e9\", "
	    "\"temperature\": 0.7, \"stop\": [\"</s>\"], \"stream\": true, "
	    "\"max_tokens\": 300, \"model\": \"m1\"}");
	EP.e_dont_include_model = true;
	AT.a_truncate_prop = "truncation_length";
	nc = call(NULL, NULL, false);
	body_is(&adapter_openai_completion, &nc, "{\"prompt\": \"\", "
	    "\"stream\": false, \"truncation_length\": 8192, "
	    "\"max_tokens\": 300}");
	ck_assert_str_eq(adapter_openai_completion.ad_path(true),
	    "/v1/completions");
	ck_assert_str_eq(adapter_openai_completion.ad_path(false),
	    "/v1/completions");
	ck_assert_int_eq(adapter_openai_completion.ad_framing, AD_SSE);
	ck_assert_ptr_null(adapter_openai_completion.ad_auth);
	json_decref(preset);
}
END_TEST

/* A preset's null keeps max-tokens and context out of the body; the
 * sentinel sends a literal null; stream is always set. */
START_TEST(preset_nulls_in_body)
{
	json_t		*preset = json_pack("{s:n,s:n,s:s,s:{s:n},s:n}",
			    "max_tokens", "truncation_length", "seed",
			    "__wilmer_null__", "kw", "a", "stream");
	struct node_call nc;

	fixture(APIT_OPENAI_COMPLETION, "", "max_tokens");
	EP.e_dont_include_model = true;
	AT.a_truncate_prop = "truncation_length";
	nc = call(NULL, preset, false);
	body_is(&adapter_openai_completion, &nc, "{\"prompt\": \"\", "
	    "\"seed\": null, \"stream\": false}");
	json_decref(preset);
}
END_TEST

START_TEST(completion_stream_events)
{
	const struct adapter	*ad = &adapter_openai_completion;
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OPENAI_COMPLETION, "", "max_tokens");
	nc = call(NULL, NULL, true);
	cs = state(&nc);
	ck_assert_int_eq(sse(ad, &cs, "", "{\"choices\":[{\"text\":\"Hel\","
	    "\"finish_reason\":null}]}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "", " "), 0);
	ck_assert_int_eq(sse(ad, &cs, "", "{\"choices\":[{\"text\":\"lo\"}]}"),
	    0);
	ck_assert(!cs.cs_done);
	ck_assert_str_eq(OUT.no_finish, "");
	ck_assert_int_eq(sse(ad, &cs, "", "{\"choices\":[{\"text\":\"\","
	    "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":7,"
	    "\"completion_tokens\":2}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "", "[DONE]"), 0);
	ck_assert(cs.cs_done);
	ck_assert_str_eq(stub_tokens.b_data, "Hello");
	ck_assert_str_eq(OUT.no_finish, "length");
	ck_assert_int_eq(OUT.no_prompt_tokens, 7);
	ck_assert_int_eq(OUT.no_completion_tokens, 2);
	ck_assert_int_eq(sse(ad, &cs, "", "{\"error\":{\"message\":\"bad\"}}"),
	    -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "bad"));
	ck_assert_int_eq(sse(ad, &cs, "", "<html>"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "not JSON"));
}
END_TEST

START_TEST(completion_whole_answer)
{
	const struct adapter	*ad = &adapter_openai_completion;
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OPENAI_COMPLETION, "", "max_tokens");
	nc = call(NULL, NULL, false);
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"choices\":[{\"text\":\"Done.\","
	    "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":1}}"), 0);
	ck_assert_str_eq(OUT.no_text.b_data, "Done.");
	ck_assert_str_eq(OUT.no_finish, "stop");
	ck_assert_int_eq(OUT.no_prompt_tokens, 3);
	ck_assert(cs.cs_done);
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"choices\":[]}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "choices[0].text"));
	ck_assert_int_eq(whole(ad, &cs, "{\"error\":\"overloaded\"}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "overloaded"));
}
END_TEST

/* ---- ollamaApiChat ------------------------------------------------------- */

/* system, user with two images (one a data URI), assistant with an
 * image (not sent), user, and the empty generation-prompt turn. */
static struct wmsgs
ollama_convo(void)
{
	struct wmsgs	 l = { NULL, 0 };

	wmsgs_add(&l, "systemMes", "S");
	wmsgs_add(&l, "user", "look");
	add_images(&l.v[1], "data:image/png;base64,QUJD", "REVG");
	wmsgs_add(&l, "assistant", "ok");
	add_images(&l.v[2], "R0lG", NULL);
	wmsgs_add(&l, "user", "u2");
	wmsgs_add(&l, "assistant", "");
	return l;
}

START_TEST(ollama_chat_body_like_wilmer)
{
	struct wmsgs	 l = ollama_convo();
	json_t		*preset = json_pack("{s:f,s:b}", "temperature", 0.5,
			    "think", 0);
	struct node_call nc;

	fixture(APIT_OLLAMA_CHAT, "num_ctx", "num_predict");
	EP.e_dont_include_model = true;		/* Ollama ignores it */
	nc = call(&l, preset, false);
	body_is(&adapter_ollama_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", "
	    "\"content\": \"look\", \"images\": [\"QUJD\", \"REVG\"]}, "
	    "{\"role\": \"assistant\", \"content\": \"ok\"}, {\"role\": "
	    "\"user\", \"content\": \"u2\"}], \"options\": {\"temperature\": "
	    "0.5, \"num_ctx\": 8192, \"num_predict\": 300}, \"think\": false, "
	    "\"stream\": false}");
	/* Streaming: no "stream" key at all; tools go last, tool_choice
	 * is not an Ollama field. */
	nc = call(&l, NULL, true);
	nc.nc_tools = "[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";
	nc.nc_tool_choice = "\"auto\"";
	body_is(&adapter_ollama_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", "
	    "\"content\": \"look\", \"images\": [\"QUJD\", \"REVG\"]}, "
	    "{\"role\": \"assistant\", \"content\": \"ok\"}, {\"role\": "
	    "\"user\", \"content\": \"u2\"}], \"options\": {\"num_ctx\": 8192, "
	    "\"num_predict\": 300}, \"tools\": [{\"type\": \"function\", "
	    "\"function\": {\"name\": \"f\"}}]}");
	nc.nc_tools = "null";
	body_is(&adapter_ollama_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", "
	    "\"content\": \"look\", \"images\": [\"QUJD\", \"REVG\"]}, "
	    "{\"role\": \"assistant\", \"content\": \"ok\"}, {\"role\": "
	    "\"user\", \"content\": \"u2\"}], \"options\": {\"num_ctx\": 8192, "
	    "\"num_predict\": 300}}");
	nc.nc_tools = "[]";
	body_is(&adapter_ollama_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", "
	    "\"content\": \"look\", \"images\": [\"QUJD\", \"REVG\"]}, "
	    "{\"role\": \"assistant\", \"content\": \"ok\"}, {\"role\": "
	    "\"user\", \"content\": \"u2\"}], \"options\": {\"num_ctx\": 8192, "
	    "\"num_predict\": 300}}");
	ck_assert_str_eq(adapter_ollama_chat.ad_path(true), "/api/chat");
	ck_assert_int_eq(adapter_ollama_chat.ad_framing, AD_NDJSON);
	ck_assert_ptr_null(adapter_ollama_chat.ad_auth);	/* Bearer */
	json_decref(preset);
	wmsgs_free(&l);
}
END_TEST

START_TEST(ollama_chat_stream_lines)
{
	const struct adapter	*ad = &adapter_ollama_chat;
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OLLAMA_CHAT, "num_ctx", "num_predict");
	nc = call(NULL, NULL, true);
	cs = state(&nc);
	ck_assert_int_eq(line(ad, &cs, "{\"model\":\"m1\",\"message\":{\"role\":"
	    "\"assistant\",\"content\":\"Bon\"},\"done\":false}"), 0);
	ck_assert_int_eq(line(ad, &cs, "  "), 0);
	ck_assert_int_eq(line(ad, &cs, "{\"message\":{\"role\":\"assistant\","
	    "\"content\":\"jour\"},\"done\":false}"), 0);
	ck_assert(!cs.cs_done);
	ck_assert_int_eq(line(ad, &cs, "{\"message\":{\"role\":\"assistant\","
	    "\"content\":\"\"},\"done\":true,\"done_reason\":\"length\","
	    "\"prompt_eval_count\":11,\"eval_count\":4}"), 0);
	ck_assert(cs.cs_done);
	ck_assert_str_eq(stub_tokens.b_data, "Bonjour");
	ck_assert_str_eq(OUT.no_finish, "length");
	ck_assert_int_eq(OUT.no_prompt_tokens, 11);
	ck_assert_int_eq(OUT.no_completion_tokens, 4);
	/* Without done_reason, done means "stop". */
	cs = state(&nc);
	ck_assert_int_eq(line(ad, &cs, "{\"message\":{\"content\":\"x\"},"
	    "\"done\":true}"), 0);
	ck_assert_str_eq(OUT.no_finish, "stop");
	ck_assert_int_eq(OUT.no_prompt_tokens, -1);
	ck_assert_int_eq(line(ad, &cs, "{\"error\":\"model not found\"}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "model not found"));
	ck_assert_int_eq(line(ad, &cs, "data: {}"), -1);
}
END_TEST

/* OpenAI streams tool calls in pieces by index; whole answers carry
 * them in message.tool_calls. */
START_TEST(openai_chat_tool_calls)
{
	const struct adapter	*ad = &adapter_openai_chat;
	json_t			*calls = json_array();
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OPENAI_CHAT, "", "max_tokens");
	nc = call(NULL, NULL, true);
	nc.nc_tool_calls = calls;
	cs = state(&nc);
	ck_assert_int_eq(sse(ad, &cs, NULL, "{\"choices\":[{\"delta\":"
	    "{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"weather\",\"arguments\":"
	    "\"{\\\"ci\"}}]}}]}"), 0);
	ck_assert_int_eq(sse(ad, &cs, NULL, "{\"choices\":[{\"delta\":"
	    "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
	    "\"ty\\\": 1}\"}}]}}]}"), 0);
	ck_assert_int_eq(sse(ad, &cs, NULL, "{\"choices\":[{\"delta\":{},"
	    "\"finish_reason\":\"tool_calls\"}]}"), 0);
	ck_assert_uint_eq(json_array_size(calls), 1);
	ck_assert_str_eq(call_field(calls, 0, "id"), "call_1");
	ck_assert_str_eq(call_field(calls, 0, "arguments"), "{\"city\": 1}");
	ck_assert_str_eq(OUT.no_finish, "tool_calls");
	json_array_clear(calls);
	nc.nc_stream = false;
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"choices\":[{\"message\":"
	    "{\"content\":null,\"tool_calls\":[{\"id\":\"a\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"x\",\"arguments\":"
	    "\"{}\"}},{\"id\":\"b\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"y\",\"arguments\":\"{}\"}}]},\"finish_reason\":"
	    "\"tool_calls\"}]}"), 0);
	ck_assert_uint_eq(json_array_size(calls), 2);
	ck_assert_str_eq(call_field(calls, 1, "name"), "y");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(calls,
	    1), "index")), 1);
	json_decref(calls);
}
END_TEST

/* With streamIncludeUsage a streamed OpenAI-compatible request asks
 * for the usage chunk, after the gen_input; a whole one, a preset's own
 * stream_options and an api type that turns it off do not. */
START_TEST(openai_stream_usage_body)
{
	json_t		*preset = json_pack("{s:{s:b}}", "stream_options",
			    "include_usage", 0);
	struct node_call nc;
	struct wmsgs	 l = { NULL, 0 };

	wmsgs_add(&l, "user", "hi");
	fixture(APIT_OPENAI_CHAT, "", "max_tokens");
	AT.a_stream_usage = true;
	nc = call(&l, NULL, true);
	body_is(&adapter_openai_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"hi\"}], \"stream\": true, "
	    "\"max_tokens\": 300, \"stream_options\": {\"include_usage\": "
	    "true}}");
	nc = call(&l, NULL, false);
	body_is(&adapter_openai_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"hi\"}], \"stream\": false, "
	    "\"max_tokens\": 300}");
	nc = call(&l, preset, true);
	body_is(&adapter_openai_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"hi\"}], \"stream_options\": "
	    "{\"include_usage\": false}, \"stream\": true, \"max_tokens\": 300}");
	fixture(APIT_OPENAI_COMPLETION, "", "max_tokens");
	AT.a_stream_usage = true;
	nc = call(NULL, NULL, true);
	body_is(&adapter_openai_completion, &nc, "{\"prompt\": \"\", "
	    "\"stream\": true, \"max_tokens\": 300, \"stream_options\": "
	    "{\"include_usage\": true}, \"model\": \"m1\"}");
	AT.a_stream_usage = false;
	body_is(&adapter_openai_completion, &nc, "{\"prompt\": \"\", "
	    "\"stream\": true, \"max_tokens\": 300, \"model\": \"m1\"}");
	wmsgs_free(&l);
	json_decref(preset);
}
END_TEST

/* The usage chunk that ends such a stream ("choices": []) gives the
 * backend's counts. */
START_TEST(openai_stream_usage_chunk)
{
	const struct adapter	*ad = &adapter_openai_chat;
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OPENAI_CHAT, "", "max_tokens");
	nc = call(NULL, NULL, true);
	cs = state(&nc);
	ck_assert_int_eq(sse(ad, &cs, NULL, "{\"choices\":[{\"delta\":"
	    "{\"content\":\"Hi\"}}]}"), 0);
	ck_assert_int_eq(sse(ad, &cs, NULL, "{\"choices\":[{\"delta\":{},"
	    "\"finish_reason\":\"stop\"}]}"), 0);
	ck_assert_int_eq(OUT.no_prompt_tokens, -1);
	ck_assert_int_eq(sse(ad, &cs, NULL, "{\"choices\":[],\"usage\":"
	    "{\"prompt_tokens\":12,\"completion_tokens\":34,"
	    "\"total_tokens\":46}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, NULL, "[DONE]"), 0);
	ck_assert(cs.cs_done);
	ck_assert_str_eq(stub_tokens.b_data, "Hi");
	ck_assert_str_eq(OUT.no_finish, "stop");
	ck_assert_int_eq(OUT.no_prompt_tokens, 12);
	ck_assert_int_eq(OUT.no_completion_tokens, 34);
}
END_TEST

START_TEST(ollama_chat_tool_calls)
{
	const struct adapter	*ad = &adapter_ollama_chat;
	json_t			*calls = json_array();
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OLLAMA_CHAT, "num_ctx", "num_predict");
	nc = call(NULL, NULL, true);
	nc.nc_tool_calls = calls;
	cs = state(&nc);
	ck_assert_int_eq(line(ad, &cs, "{\"message\":{\"content\":\"\","
	    "\"tool_calls\":[{\"function\":{\"name\":\"weather\",\"arguments\":"
	    "{\"city\":\"Par\\u00eds\",\"n\":1}}}]},\"done\":false}"), 0);
	ck_assert_int_eq(line(ad, &cs, "{\"message\":{\"content\":\"\","
	    "\"tool_calls\":[{\"function\":{\"name\":\"time\"}}]},"
	    "\"done\":true,\"done_reason\":\"stop\"}"), 0);
	ck_assert_uint_eq(json_array_size(calls), 2);
	ck_assert(is_call_id(call_field(calls, 0, "id")));
	ck_assert(is_call_id(call_field(calls, 1, "id")));
	ck_assert_str_ne(call_field(calls, 0, "id"), call_field(calls, 1, "id"));
	ck_assert_str_eq(call_field(calls, 0, "name"), "weather");
	/* arguments as Python's json.dumps writes them */
	ck_assert_str_eq(call_field(calls, 0, "arguments"),
	    "{\"city\": \"Par\\u00eds\", \"n\": 1}");
	ck_assert_str_eq(call_field(calls, 1, "arguments"), "{}");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(calls,
	    1), "index")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(calls,
	    0), "type")), "function");
	ck_assert_str_eq(OUT.no_finish, "tool_calls");
	/* Nobody asked for them: dropped, the finish is Ollama's. */
	nc.nc_tool_calls = NULL;
	cs = state(&nc);
	ck_assert_int_eq(line(ad, &cs, "{\"message\":{\"tool_calls\":[{"
	    "\"function\":{\"name\":\"time\"}}]},\"done\":true}"), 0);
	ck_assert_str_eq(OUT.no_finish, "stop");
	json_decref(calls);
}
END_TEST

START_TEST(ollama_chat_whole_answer)
{
	const struct adapter	*ad = &adapter_ollama_chat;
	json_t			*calls = json_array();
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OLLAMA_CHAT, "num_ctx", "num_predict");
	nc = call(NULL, NULL, false);
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"model\":\"m1\",\"message\":{\"role\":"
	    "\"assistant\",\"content\":\"Salut\"},\"done\":true,\"done_reason\":"
	    "\"stop\",\"prompt_eval_count\":5,\"eval_count\":2}"), 0);
	ck_assert_str_eq(OUT.no_text.b_data, "Salut");
	ck_assert_str_eq(OUT.no_finish, "stop");
	ck_assert_int_eq(OUT.no_completion_tokens, 2);
	nc.nc_tool_calls = calls;
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"message\":{\"content\":null,"
	    "\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":"
	    "{\"a\":[1,2]}}}]},\"done\":true}"), 0);
	ck_assert_str_eq(OUT.no_finish, "tool_calls");
	ck_assert_uint_eq(json_array_size(calls), 1);
	ck_assert_str_eq(call_field(calls, 0, "arguments"), "{\"a\": [1, 2]}");
	ck_assert(is_call_id(call_field(calls, 0, "id")));
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"done\":true}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "message.content"));
	ck_assert_int_eq(whole(ad, &cs, "{\"error\":\"out of memory\"}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "out of memory"));
	json_decref(calls);
}
END_TEST

/* ---- ollamaApiGenerate --------------------------------------------------- */

START_TEST(ollama_generate_body_like_wilmer)
{
	json_t		*preset = json_pack("{s:f,s:b,s:n}", "temperature", 0.5,
			    "think", 1, "num_ctx");
	struct node_call nc;

	fixture(APIT_OLLAMA_GENERATE, "num_ctx", "num_predict");
	nc = call(NULL, preset, true);
	nc.nc_prompt = "<|im_start|>user\nP";
	/* The preset's null num_ctx keeps the context size out. */
	body_is(&adapter_ollama_generate, &nc, "{\"model\": \"m1\", \"prompt\": "
	    "\"<|im_start|>user\\nP\", \"stream\": true, \"raw\": true, "
	    "\"options\": {\"temperature\": 0.5, \"num_predict\": 300}, "
	    "\"think\": true}");
	nc = call(NULL, NULL, false);
	body_is(&adapter_ollama_generate, &nc, "{\"model\": \"m1\", \"prompt\": "
	    "\"\", \"stream\": false, \"raw\": true, \"options\": {\"num_ctx\": "
	    "8192, \"num_predict\": 300}}");
	ck_assert_str_eq(adapter_ollama_generate.ad_path(false), "/api/generate");
	ck_assert_int_eq(adapter_ollama_generate.ad_framing, AD_NDJSON);
	ck_assert_ptr_null(adapter_ollama_generate.ad_auth);
	json_decref(preset);
}
END_TEST

/* ad's body for a call that carries the client's think has none. */
static void
no_think(const struct adapter *ad, enum conf_apitype_kind k,
    const struct wmsgs *l)
{
	struct node_call nc;
	char		*b;

	fixture(k, "", "max_tokens");
	nc = call(l, NULL, true);
	nc.nc_think = "false";
	b = ad->ad_body(&nc);
	ck_assert_msg(strstr(b, "think") == NULL, "%s: %s", ad->ad_name, b);
	free(b);
}

/* The client's think goes to the Ollama adapters, over the preset's;
 * the other dialects never send it. */
START_TEST(client_think_only_to_ollama)
{
	struct wmsgs	 l = ollama_convo();
	json_t		*preset = json_pack("{s:b}", "think", 0);
	struct node_call nc;
	char		*b;

	fixture(APIT_OLLAMA_CHAT, "", "num_predict");
	nc = call(&l, preset, true);
	nc.nc_think = "true";
	b = adapter_ollama_chat.ad_body(&nc);
	ck_assert_ptr_nonnull(strstr(b, "}, \"think\": true}"));
	free(b);
	fixture(APIT_OLLAMA_GENERATE, "", "num_predict");
	nc = call(NULL, NULL, false);
	nc.nc_think = "\"high\"";
	body_is(&adapter_ollama_generate, &nc, "{\"model\": \"m1\", \"prompt\": "
	    "\"\", \"stream\": false, \"raw\": true, \"options\": "
	    "{\"num_predict\": 300}, \"think\": \"high\"}");
	no_think(&adapter_openai_chat, APIT_OPENAI_CHAT, &l);
	no_think(&adapter_openai_completion, APIT_OPENAI_COMPLETION, NULL);
	no_think(&adapter_kobold, APIT_KOBOLD, NULL);
	no_think(&adapter_claude, APIT_CLAUDE, &l);
	json_decref(preset);
	wmsgs_free(&l);
}
END_TEST

START_TEST(ollama_generate_replies)
{
	const struct adapter	*ad = &adapter_ollama_generate;
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_OLLAMA_GENERATE, "num_ctx", "num_predict");
	nc = call(NULL, NULL, true);
	cs = state(&nc);
	ck_assert_int_eq(line(ad, &cs, "{\"response\":\"Once\",\"done\":false}"),
	    0);
	ck_assert_int_eq(line(ad, &cs, "{\"response\":\" upon\",\"done\":false}"),
	    0);
	ck_assert(!cs.cs_done);
	ck_assert_int_eq(line(ad, &cs, "{\"response\":\"\",\"done\":true,"
	    "\"prompt_eval_count\":9,\"eval_count\":2}"), 0);
	ck_assert(cs.cs_done);
	ck_assert_str_eq(stub_tokens.b_data, "Once upon");
	ck_assert_str_eq(OUT.no_finish, "stop");
	ck_assert_int_eq(OUT.no_prompt_tokens, 9);
	nc = call(NULL, NULL, false);
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"response\":\"All\",\"done\":true,"
	    "\"done_reason\":\"length\",\"eval_count\":1}"), 0);
	ck_assert_str_eq(OUT.no_text.b_data, "All");
	ck_assert_str_eq(OUT.no_finish, "length");
	ck_assert_int_eq(OUT.no_completion_tokens, 1);
	ck_assert_int_eq(whole(ad, &cs, "{\"message\":{}}"), -1);
	ck_assert_int_eq(whole(ad, &cs, "{\"error\":\"boom\"}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "boom"));
}
END_TEST

/* ---- koboldCppGenerate --------------------------------------------------- */

START_TEST(kobold_body_like_wilmer)
{
	struct wmsgs	 l = { NULL, 0 };
	json_t		*preset = json_pack("{s:f,s:f}", "temperature", 0.7,
			    "rep_pen", 1.1);
	struct node_call nc;

	wmsgs_add(&l, "system", "S");
	add_images(&l.v[0], "c3lz", NULL);		/* not a user's */
	wmsgs_add(&l, "user", "look");
	add_images(&l.v[1], "data:image/jpeg;base64,/9j/", "QUJD");
	fixture(APIT_KOBOLD, "max_context_length", "max_length");
	EP.e_dont_include_model = false;	/* KoboldCpp never gets one */
	nc = call(&l, preset, true);
	nc.nc_prompt = "P \"q\"";
	body_is(&adapter_kobold, &nc, "{\"prompt\": \"P \\\"q\\\"\", "
	    "\"temperature\": 0.7, \"rep_pen\": 1.1, \"stream\": true, "
	    "\"max_context_length\": 8192, \"max_length\": 300, \"images\": "
	    "[\"/9j/\", \"QUJD\"]}");
	nc = call(NULL, NULL, false);
	body_is(&adapter_kobold, &nc, "{\"prompt\": \"\", \"stream\": false, "
	    "\"max_context_length\": 8192, \"max_length\": 300}");
	ck_assert_str_eq(adapter_kobold.ad_path(true),
	    "/api/extra/generate/stream");
	ck_assert_str_eq(adapter_kobold.ad_path(false), "/api/v1/generate");
	ck_assert_int_eq(adapter_kobold.ad_framing, AD_SSE);
	ck_assert_ptr_null(adapter_kobold.ad_auth);
	json_decref(preset);
	wmsgs_free(&l);
}
END_TEST

START_TEST(kobold_replies)
{
	const struct adapter	*ad = &adapter_kobold;
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_KOBOLD, "max_context_length", "max_length");
	nc = call(NULL, NULL, true);
	cs = state(&nc);
	ck_assert_int_eq(sse(ad, &cs, "message", "{\"token\":\"Hi\"}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "ping", "{\"token\":\"no\"}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "message", "{\"token\":\" there\","
	    "\"finish_reason\":null}"), 0);
	ck_assert(!cs.cs_done);
	/* KoboldCpp's last event: the end, but no finish reason for us. */
	ck_assert_int_eq(sse(ad, &cs, "message", "{\"token\":\"!\","
	    "\"finish_reason\":\"length\"}"), 0);
	ck_assert(cs.cs_done);
	ck_assert_str_eq(stub_tokens.b_data, "Hi there!");
	ck_assert_str_eq(OUT.no_finish, "");
	ck_assert_int_eq(sse(ad, &cs, "message", "nope"), -1);
	nc = call(NULL, NULL, false);
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"results\":[{\"text\":\"Fine.\","
	    "\"finish_reason\":\"stop\"}]}"), 0);
	ck_assert_str_eq(OUT.no_text.b_data, "Fine.");
	ck_assert_str_eq(OUT.no_finish, "");
	ck_assert_int_eq(whole(ad, &cs, "{\"results\":[]}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "results[0].text"));
}
END_TEST

/* ---- claudeMessages ------------------------------------------------------ */

static const char *const claude_tools = "[{\"type\":\"function\",\"function\":"
    "{\"name\":\"get_weather\",\"description\":\"Weather\",\"parameters\":"
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"noargs\","
    "\"parameters\":{}}}]";

/* system, a user turn with images, an assistant tool call, two tool
 * results, a later system note and an assistant prefill. */
static struct wmsgs
claude_convo(void)
{
	struct wmsgs	 l = { NULL, 0 };

	wmsgs_add(&l, "system", "Be brief.");
	wmsgs_add(&l, "user", "look");
	add_images(&l.v[1], "data:image/png;base64,iVBORw0KGgo=",
	    "https://x/y.png");
	wmsgs_add(&l, "assistant", "");
	l.v[2].m_tool_calls = strdup("[{\"id\":\"toolu_1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"get_weather\",\"arguments\":"
	    "\"{\\\"city\\\": \\\"Paris\\\"}\"}}]");
	wmsgs_add(&l, "tool", "18C");
	l.v[3].m_tool_call_id = strdup("toolu_1");
	wmsgs_add(&l, "tool", "windy");
	l.v[4].m_tool_call_id = strdup("toolu_2");
	wmsgs_add(&l, "systemMes", "Mid note");
	wmsgs_add(&l, "assistant", "Answer: \n ");
	return l;
}

START_TEST(claude_body_like_wilmer)
{
	struct wmsgs	 l = claude_convo();
	json_t		*preset = json_pack("{s:f,s:i,s:f,s:[s]}", "temperature",
			    0.2, "top_k", 5, "presence_penalty", 0.1,
			    "stop_sequences", "\n\nHuman:");
	struct node_call nc;

	fixture(APIT_CLAUDE, "", "max_tokens");
	EP.e_model = "claude-x";
	nc = call(&l, preset, true);
	nc.nc_tools = claude_tools;
	nc.nc_tool_choice = "\"required\"";
	/* presence_penalty is not Claude's: removed. system goes after
	 * the gen_input, tools last. */
	body_is(&adapter_claude, &nc, "{\"model\": \"claude-x\", \"messages\": "
	    "[{\"role\": \"user\", \"content\": [{\"type\": \"image\", "
	    "\"source\": {\"type\": \"base64\", \"media_type\": \"image/png\", "
	    "\"data\": \"iVBORw0KGgo=\"}}, {\"type\": \"image\", \"source\": "
	    "{\"type\": \"url\", \"url\": \"https://x/y.png\"}}, {\"type\": "
	    "\"text\", \"text\": \"look\"}]}, {\"role\": \"assistant\", "
	    "\"content\": [{\"type\": \"tool_use\", \"id\": \"toolu_1\", "
	    "\"name\": \"get_weather\", \"input\": {\"city\": \"Paris\"}}]}, "
	    "{\"role\": \"user\", \"content\": [{\"type\": \"tool_result\", "
	    "\"tool_use_id\": \"toolu_1\", \"content\": \"18C\"}, {\"type\": "
	    "\"tool_result\", \"tool_use_id\": \"toolu_2\", \"content\": "
	    "\"windy\"}]}, {\"role\": \"assistant\", \"content\": "
	    "\"Answer:\"}], \"temperature\": 0.2, \"top_k\": 5, "
	    "\"stop_sequences\": [\"\\n\\nHuman:\"], \"stream\": true, "
	    "\"max_tokens\": 300, \"system\": \"Be brief.\\n\\nMid note\", "
	    "\"tools\": [{\"name\": \"get_weather\", \"description\": "
	    "\"Weather\", \"input_schema\": {\"type\": \"object\", "
	    "\"properties\": {\"city\": {\"type\": \"string\"}}}}, {\"name\": "
	    "\"noargs\", \"description\": \"\"}], \"tool_choice\": {\"type\": "
	    "\"any\"}}");
	json_decref(preset);
	wmsgs_free(&l);
}
END_TEST

/* The body for one tool_choice, with one plain user message. */
static void
claude_choice_is(const char *choice, const char *tail)
{
	struct wmsgs	 l = { NULL, 0 };
	struct node_call nc;
	char		*b;

	wmsgs_add(&l, "user", "hi \xe2\x98\x83");
	fixture(APIT_CLAUDE, "", "max_tokens");
	EP.e_dont_include_model = true;
	nc = call(&l, NULL, false);
	nc.nc_tools = "[{\"function\":{\"name\":\"f\"}}]";
	nc.nc_tool_choice = choice;
	b = adapter_claude.ad_body(&nc);
	ck_assert_str_eq(b, tail);
	free(b);
	wmsgs_free(&l);
}

START_TEST(claude_tool_choice)
{
	const char	*head = "{\"messages\": [{\"role\": \"user\", \"content\": "
			    "\"hi \\u2603\"}], \"stream\": false, \"max_tokens\": "
			    "300";
	char		 want[512];

	snprintf(want, sizeof(want), "%s, \"tools\": [{\"name\": \"f\", "
	    "\"description\": \"\"}], \"tool_choice\": {\"type\": \"auto\"}}",
	    head);
	claude_choice_is("\"auto\"", want);
	snprintf(want, sizeof(want), "%s, \"tools\": [{\"name\": \"f\", "
	    "\"description\": \"\"}], \"tool_choice\": {\"type\": \"tool\", "
	    "\"name\": \"f\"}}", head);
	claude_choice_is("{\"type\":\"function\",\"function\":{\"name\":\"f\"}}",
	    want);
	snprintf(want, sizeof(want), "%s, \"tools\": [{\"name\": \"f\", "
	    "\"description\": \"\"}]}", head);
	claude_choice_is(NULL, want);
	claude_choice_is("\"bogus\"", want);
	/* "none": Claude has no such choice, so no tools are sent. */
	snprintf(want, sizeof(want), "%s}", head);
	claude_choice_is("\"none\"", want);
}
END_TEST

START_TEST(claude_headers_and_path)
{
	struct buf	 h = BUF_INIT;
	struct node_call nc;

	fixture(APIT_CLAUDE, "", "max_tokens");
	EP.e_api_key = "sk-ant-1";
	nc = call(NULL, NULL, false);
	adapter_claude.ad_auth(&nc, &h);
	ck_assert_str_eq(h.b_data, "x-api-key: sk-ant-1\n"
	    "anthropic-version: 2023-06-01\n");
	buf_reset(&h);
	EP.e_api_key = "";
	adapter_claude.ad_auth(&nc, &h);
	ck_assert_str_eq(h.b_data, "anthropic-version: 2023-06-01\n");
	buf_free(&h);
	ck_assert_str_eq(adapter_claude.ad_path(true), "/v1/messages");
	ck_assert_int_eq(adapter_claude.ad_framing, AD_SSE);
}
END_TEST

START_TEST(claude_images_and_prefill)
{
	struct wmsgs	 l = { NULL, 0 };
	struct node_call nc;
	char		*b, raw[129];

	/* 128 characters of raw base64 of a GIF: sniffed; junk skipped. */
	memset(raw, 'A', 128);
	memcpy(raw, "R0lGODlh", 8);
	raw[128] = '\0';
	wmsgs_add(&l, "user", "u");
	add_images(&l.v[0], raw, "not an image");
	wmsgs_add(&l, "assistant", "{\xc2\xa0\t");
	fixture(APIT_CLAUDE, "", "");
	EP.e_dont_include_model = true;
	nc = call(&l, NULL, false);
	b = adapter_claude.ad_body(&nc);
	ck_assert_ptr_nonnull(strstr(b, "[{\"type\": \"image\", \"source\": "
	    "{\"type\": \"base64\", \"media_type\": \"image/gif\", \"data\": "
	    "\"R0lGODlhAAAA"));
	ck_assert_ptr_nonnull(strstr(b, "{\"type\": \"text\", \"text\": \"u\"}]}"
	    ", {\"role\": \"assistant\", \"content\": \"{\"}]"));
	ck_assert_ptr_null(strstr(b, "not an image"));
	free(b);
	wmsgs_free(&l);
}
END_TEST

START_TEST(claude_stream_events)
{
	const struct adapter	*ad = &adapter_claude;
	json_t			*calls = json_array();
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_CLAUDE, "", "max_tokens");
	nc = call(NULL, NULL, true);
	nc.nc_tool_calls = calls;
	cs = state(&nc);
	ck_assert_int_eq(sse(ad, &cs, "message_start", "{\"type\":"
	    "\"message_start\",\"message\":{\"usage\":{\"input_tokens\":25,"
	    "\"output_tokens\":1}}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "content_block_start", "{\"type\":"
	    "\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
	    "\"text\",\"text\":\"\"}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "ping", "{\"type\": \"ping\"}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "content_block_delta", "{\"type\":"
	    "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"Let me\"}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "content_block_delta", "{\"type\":"
	    "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\" check.\"}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "content_block_stop", "{\"type\":"
	    "\"content_block_stop\",\"index\":0}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "content_block_start", "{\"type\":"
	    "\"content_block_start\",\"index\":1,\"content_block\":{\"type\":"
	    "\"tool_use\",\"id\":\"toolu_9\",\"name\":\"get_weather\","
	    "\"input\":{}}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "content_block_delta", "{\"type\":"
	    "\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \"}}"), 0);
	ck_assert_int_eq(sse(ad, &cs, "content_block_delta", "{\"type\":"
	    "\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":\"\\\"Paris\\\"}\"}}"), 0);
	ck_assert(!cs.cs_done);
	ck_assert_int_eq(sse(ad, &cs, "message_delta", "{\"type\":"
	    "\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},"
	    "\"usage\":{\"output_tokens\":15}}"), 0);
	ck_assert(cs.cs_done);
	ck_assert_str_eq(stub_tokens.b_data, "Let me check.");
	ck_assert_str_eq(OUT.no_finish, "tool_calls");
	ck_assert_int_eq(OUT.no_prompt_tokens, 25);
	ck_assert_int_eq(OUT.no_completion_tokens, 15);
	ck_assert_uint_eq(json_array_size(calls), 1);
	ck_assert_str_eq(call_field(calls, 0, "id"), "toolu_9");
	ck_assert_str_eq(call_field(calls, 0, "name"), "get_weather");
	ck_assert_str_eq(call_field(calls, 0, "arguments"),
	    "{\"city\": \"Paris\"}");
	json_decref(calls);
}
END_TEST

/* The finish reason one message_delta stop_reason gives. */
static const char *
claude_finish(const char *stop)
{
	struct node_call	 nc = call(NULL, NULL, true);
	struct call_state	 cs = state(&nc);
	char			 ev[160];

	snprintf(ev, sizeof(ev), "{\"type\":\"message_delta\",\"delta\":"
	    "{\"stop_reason\":\"%s\"}}", stop);
	ck_assert_int_eq(sse(&adapter_claude, &cs, "message_delta", ev), 0);
	return OUT.no_finish;
}

START_TEST(claude_stream_ends_and_errors)
{
	const struct adapter	*ad = &adapter_claude;
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_CLAUDE, "", "max_tokens");
	ck_assert_str_eq(claude_finish("end_turn"), "stop");
	ck_assert_str_eq(claude_finish("max_tokens"), "length");
	ck_assert_str_eq(claude_finish("stop_sequence"), "stop");
	ck_assert_str_eq(claude_finish("tool_use"), "tool_calls");
	ck_assert_str_eq(claude_finish("refusal"), "refusal");
	nc = call(NULL, NULL, true);
	cs = state(&nc);
	ck_assert_int_eq(sse(ad, &cs, "message_delta", "{\"type\":"
	    "\"message_delta\",\"delta\":{\"stop_reason\":null},\"usage\":"
	    "{\"output_tokens\":3}}"), 0);
	ck_assert(!cs.cs_done);
	ck_assert_int_eq(OUT.no_completion_tokens, 3);
	ck_assert_int_eq(sse(ad, &cs, "message_stop",
	    "{\"type\":\"message_stop\"}"), 0);
	ck_assert(cs.cs_done);
	cs = state(&nc);
	ck_assert_int_eq(sse(ad, &cs, "error", "{\"type\":\"error\",\"error\":"
	    "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "Overloaded"));
	ck_assert_int_eq(sse(ad, &cs, "", "{nope"), -1);
}
END_TEST

START_TEST(claude_whole_answer)
{
	const struct adapter	*ad = &adapter_claude;
	json_t			*calls = json_array();
	struct node_call	 nc;
	struct call_state	 cs;

	fixture(APIT_CLAUDE, "", "max_tokens");
	nc = call(NULL, NULL, false);
	nc.nc_tool_calls = calls;
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"type\":\"message\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"Hello\"},{\"type\":\"thinking\","
	    "\"thinking\":\"hm\"},{\"type\":\"text\",\"text\":\", world\"},"
	    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"f\",\"input\":"
	    "{\"x\":\"\\u00e9\"}}],\"stop_reason\":\"end_turn\",\"usage\":"
	    "{\"input_tokens\":12,\"output_tokens\":6}}"), 0);
	ck_assert_str_eq(OUT.no_text.b_data, "Hello, world");
	ck_assert_str_eq(OUT.no_finish, "stop");
	ck_assert_int_eq(OUT.no_prompt_tokens, 12);
	ck_assert_int_eq(OUT.no_completion_tokens, 6);
	ck_assert_uint_eq(json_array_size(calls), 1);
	ck_assert_str_eq(call_field(calls, 0, "id"), "toolu_2");
	ck_assert_str_eq(call_field(calls, 0, "arguments"),
	    "{\"x\": \"\\u00e9\"}");
	ck_assert_ptr_null(json_object_get(json_array_get(calls, 0), "index"));
	cs = state(&nc);
	ck_assert_int_eq(whole(ad, &cs, "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"invalid_request_error\",\"message\":\"max_tokens: required\"}}"),
	    -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "max_tokens: required"));
	ck_assert_int_eq(whole(ad, &cs, "{\"type\":\"message\"}"), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "content"));
	json_decref(calls);
}
END_TEST

/* ---- shared helpers ------------------------------------------------------ */

START_TEST(helpers)
{
	ck_assert_str_eq(adapter_raw_image("data:image/png;base64,QUJD"),
	    "QUJD");
	ck_assert_str_eq(adapter_raw_image("QUJD"), "QUJD");
	ck_assert_str_eq(adapter_raw_image("data:text/plain,hi"),
	    "data:text/plain,hi");
	ck_assert(adapter_blank(" \r\n", 3));
	ck_assert(!adapter_blank(" x", 2));
}
END_TEST

/* A backend's error body, in each dialect's shape, gives its message on
 * one line; anything else gives nothing and leaves out alone. */
START_TEST(error_messages)
{
	static const struct {
		const char	*body;
		const char	*want;		/* NULL: none */
	} cases[] = {
		{ "{\"error\":\"model 'x' not found\"}", "model 'x' not found" },
		{ "{\"error\":{\"message\":\"context length exceeded\","
		    "\"type\":\"invalid_request_error\"}}",
		    "context length exceeded" },
		{ "{\"type\":\"error\",\"error\":{\"type\":"
		    "\"invalid_request_error\",\"message\":\"prompt is too "
		    "long\"}}", "prompt is too long" },
		{ "{\"detail\":{\"msg\":\"bad input\",\"type\":"
		    "\"bad_request\"}}", "bad input" },
		{ "{\"detail\":\"Not Found\"}", "Not Found" },
		{ "{\"detail\":[{\"loc\":[\"body\"],\"msg\":\"field "
		    "required\"}]}", "field required" },
		{ "{\"error\":\"two\\nlines\\r\"}", "two lines " },
		{ "{\"error\":\"\"}", NULL },
		{ "{\"error\":{\"code\":400}}", NULL },
		{ "{\"message\":\"not a shape we know\"}", NULL },
		{ "<html>502 Bad Gateway</html>", NULL },
		{ "", NULL },
	};
	char	 out[64];
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(out, sizeof(out), "untouched");
		ck_assert_msg(adapter_error_message(cases[i].body,
		    strlen(cases[i].body), out, sizeof(out)) ==
		    (cases[i].want != NULL), "%s", cases[i].body);
		ck_assert_str_eq(out, cases[i].want != NULL ? cases[i].want :
		    "untouched");
	}
	/* Not NUL-terminated, and cut to the room given. */
	ck_assert(adapter_error_message("{\"error\":\"abcdef\"}trailing", 18,
	    out, 4));
	ck_assert_str_eq(out, "abc");
	ck_assert(!adapter_error_message(NULL, 0, out, sizeof(out)));
}
END_TEST

/* ---- prompt templates ---------------------------------------------------- */

static char	 CONF[64];

/* A config folder of its own with PromptTemplates/ and Endpoints/. */
static const char *
conf_dir(void)
{
	char	 p[128];

	snprintf(CONF, sizeof(CONF), "/tmp/sluice-adapters-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(CONF));
	snprintf(p, sizeof(p), "%s/PromptTemplates", CONF);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/Endpoints", CONF);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	return CONF;
}

static void
put(const char *rel, const char *text)
{
	char	 p[256];
	FILE	*f;

	snprintf(p, sizeof(p), "%s/%s", CONF, rel);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

/* Remove what put() wrote (the names given) and the folders. */
static void
conf_rm(const char *const *rels)
{
	char	 p[256];

	for (; *rels != NULL; rels++) {
		snprintf(p, sizeof(p), "%s/%s", CONF, *rels);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/PromptTemplates", CONF);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/Endpoints", CONF);
	rmdir(p);
	rmdir(CONF);
}

/* WilmerAI's shipped chatml.json and _chatonly.json, verbatim. */
static const char *const chatml = "{\n"
    "  \"promptTemplateAssistantPrefix\": \"<|im_start|>assistant\\n\",\n"
    "  \"promptTemplateAssistantSuffix\": \"\",\n"
    "  \"promptTemplateEndToken\": \"\\n\",\n"
    "  \"promptTemplateSystemPrefix\": \"<|im_start|>system\\n\",\n"
    "  \"promptTemplateSystemSuffix\": \"<|im_end|>\\n\",\n"
    "  \"promptTemplateUserPrefix\": \"<|im_start|>user\\n\",\n"
    "  \"promptTemplateUserSuffix\": \"<|im_end|>\\n\",\n"
    "  \"promptTemplateSystemmesPrefix\": \"<|im_start|>system\\n\",\n"
    "  \"promptTemplateSystemmesSuffix\": \"<|im_end|>\\n\"\n}\n";
static const char *const chatonly = "{\n"
    "  \"promptTemplateSystemPrefix\": \"\",\n"
    "  \"promptTemplateSystemSuffix\": \"\",\n"
    "  \"promptTemplateUserPrefix\": \"\\n\",\n"
    "  \"promptTemplateUserSuffix\": \"\",\n"
    "  \"promptTemplateAssistantPrefix\": \"\\n\",\n"
    "  \"promptTemplateAssistantSuffix\": \"\",\n"
    "  \"promptTemplateEndToken\": \"\"\n}\n";

static struct prompt_template *
template(const char *confdir, const char *name)
{
	struct prompt_template	*pt;
	char			 err[CONF_ERRLEN];

	if (prompt_template_load(confdir, name, &pt, err) == -1)
		ck_abort_msg("%s", err);
	return pt;
}

/* The worker's loader refuses name in confdir with the very message
 * --check-config gives (one rule, common/conf_template.c); returns it. */
static const char *
refused_as_check(const char *confdir, const char *name)
{
	static char		 err[CONF_ERRLEN];
	char			 cerr[CONF_ERRLEN];
	struct prompt_template	*pt = (void *)1;

	ck_assert_int_eq(prompt_template_load(confdir, name, &pt, err), -1);
	ck_assert_ptr_null(pt);
	ck_assert_int_eq(conf_template_check(confdir, name, cerr), -1);
	ck_assert_str_eq(err, cerr);
	return err;
}

#define REFUSED_WITH(dir, name, want) do {				\
	const char *e_ = refused_as_check(dir, name);			\
	ck_assert_msg(strstr(e_, want) != NULL, "%s", e_);		\
} while (0)

START_TEST(template_loading)
{
	const char		*rels[] = { "PromptTemplates/t.json",
				    "PromptTemplates/bad.json",
				    "PromptTemplates/list.json", NULL };
	struct prompt_template	*pt;
	char			 want[CONF_ERRLEN];

	conf_dir();
	put(rels[0], chatml);
	put(rels[1], "{\"promptTemplateUserPrefix\": \"a\",\n"
	    " \"promptTemplateUserSuffix\": 3}");
	put(rels[2], "[]");
	pt = template(CONF, "t");
	ck_assert_str_eq(prompt_template_get(pt, "user", "Prefix"),
	    "<|im_start|>user\n");
	/* systemMes -> Systemmes, as Python's str.capitalize() */
	ck_assert_str_eq(prompt_template_get(pt, "systemMes", "Suffix"),
	    "<|im_end|>\n");
	ck_assert_str_eq(prompt_template_get(pt, "ASSISTANT", "Prefix"),
	    "<|im_start|>assistant\n");
	ck_assert_str_eq(prompt_template_get(pt, "tool", "Prefix"), "");
	ck_assert_str_eq(prompt_template_end(pt), "\n");
	prompt_template_free(pt);
	ck_assert_str_eq(prompt_template_get(NULL, "user", "Prefix"), "");
	REFUSED_WITH(CONF, "bad",
	    "PromptTemplates/bad.json:2:2: 'promptTemplateUserSuffix' must be "
	    "a string, not a number");
	REFUSED_WITH(CONF, "list",
	    "PromptTemplates/list.json:1:1: a prompt template must be an "
	    "object, not a list");
	snprintf(want, sizeof(want), "PromptTemplates/nope.json: no such "
	    "prompt template 'nope' (looked in %s/PromptTemplates/nope.json)",
	    CONF);
	ck_assert_str_eq(refused_as_check(CONF, "nope"), want);
	REFUSED_WITH(CONF, "../t",
	    "refusing unsafe prompt template name '../t'");
	REFUSED_WITH(CONF, ".t",
	    "refusing unsafe prompt template name '.t'");
	REFUSED_WITH(CONF, "a\001b/c",
	    "name 'a?b/c': a name must be one path component");
	REFUSED_WITH(CONF, NULL,
	    "name '':");
	conf_rm(rels);
}
END_TEST

START_TEST(template_choice_and_tags)
{
	struct conf_endpoint	 ep = { .e_prompt_template = NULL };
	struct conf_user	 u = { .u_chat_template = "_chatonly" };
	char			*s;

	ck_assert_str_eq(prompt_template_name(&ep, &u), "_chatonly");
	ep.e_prompt_template = "chatml";
	ck_assert_str_eq(prompt_template_name(&ep, &u), "chatml");
	ep.e_prompt_template = NULL;
	u.u_chat_template = "";
	ck_assert_ptr_null(prompt_template_name(&ep, &u));
	ck_assert_ptr_null(prompt_template_name(&ep, NULL));
	s = prompt_strip_tags("[Beg_Sys]a[Beg_SysMes]b[Beg_User]c[Beg_Assistant]"
	    "d [Beg_Sys e[Beg_[Beg_User]User]");
	/* one pass, as re.sub: a tag formed by a removal stays */
	ck_assert_str_eq(s, "abcd [Beg_Sys e[Beg_User]");
	free(s);
	ck_assert(prompt_is_completion(APIT_OPENAI_COMPLETION));
	ck_assert(prompt_is_completion(APIT_KOBOLD));
	ck_assert(prompt_is_completion(APIT_OLLAMA_GENERATE));
	ck_assert(!prompt_is_completion(APIT_OLLAMA_CHAT));
	ck_assert(!prompt_is_completion(APIT_CLAUDE));
	ck_assert(!prompt_is_completion(APIT_OPENAI_CHAT));
}
END_TEST

/* ---- completion prompts --------------------------------------------------- */

static struct wmsgs
prompt_convo(void)
{
	struct wmsgs	 l = { NULL, 0 };

	wmsgs_add(&l, "system", "You are [Beg_User]terse.");
	wmsgs_add(&l, "user", "u1");
	wmsgs_add(&l, "assistant", "a1");
	wmsgs_add(&l, "systemMes", "note");
	wmsgs_add(&l, "user", "u2 [Beg_Assistant]x");
	wmsgs_add(&l, "assistant", "");
	return l;
}

/* prompt_completion for an endpoint without injections. */
static void
completion_is(const struct prompt_template *pt, const struct prompt_node *pn,
    const char *want)
{
	struct conf_endpoint	 ep = { .e_name = "E" };
	struct wmsgs		 l = prompt_convo();
	char			 err[CONF_ERRLEN], *p;

	p = prompt_completion(&ep, pt, &l, pn, err);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, want);
	free(p);
	wmsgs_free(&l);
}

START_TEST(completion_prompt_chatml)
{
	const char		*rels[] = { "PromptTemplates/chatml.json", NULL };
	struct prompt_template	*pt;
	struct prompt_node	 pn = { "Sys[Beg_Sys]", NULL, 5, false, false,
				    false };

	conf_dir();
	put(rels[0], chatml);
	pt = template(CONF, "chatml");
	/* the last 6 non-system messages; systemMes is kept; the final
	 * assistant turn has no suffix; tags stripped everywhere */
	completion_is(pt, &pn, "<|im_start|>system\nSys<|im_end|>\n"
	    "<|im_start|>user\nu1<|im_end|>\n<|im_start|>assistant\na1"
	    "<|im_start|>system\nnote<|im_end|>\n<|im_start|>user\nu2 x"
	    "<|im_end|>\n<|im_start|>assistant");
	pn = (struct prompt_node){ "Sys", NULL, 1, false, false, false };
	completion_is(pt, &pn, "<|im_start|>system\nSys<|im_end|>\n"
	    "<|im_start|>user\nu2 x<|im_end|>\n<|im_start|>assistant");
	/* Python's l[-0:] is the whole list, l[-(-2):] skips two */
	pn.pn_last_n = -1;
	completion_is(pt, &pn, "<|im_start|>system\nSys<|im_end|>\n"
	    "<|im_start|>user\nu1<|im_end|>\n<|im_start|>assistant\na1"
	    "<|im_start|>system\nnote<|im_end|>\n<|im_start|>user\nu2 x"
	    "<|im_end|>\n<|im_start|>assistant");
	pn.pn_last_n = -3;
	completion_is(pt, &pn, "<|im_start|>system\nSys<|im_end|>\n"
	    "<|im_start|>system\nnote<|im_end|>\n<|im_start|>user\nu2 x"
	    "<|im_end|>\n<|im_start|>assistant");
	prompt_template_free(pt);
	conf_rm(rels);
}
END_TEST

START_TEST(completion_prompt_turns)
{
	const char		*rels[] = { "PromptTemplates/chatml.json", NULL };
	struct prompt_template	*pt;
	struct prompt_node	 pn = { "Sys", "Q?", 5, false, false, false };

	conf_dir();
	put(rels[0], chatml);
	pt = template(CONF, "chatml");
	/* An authored prompt is sent as it is (its tags too). */
	pn.pn_prompt = "Q? [Beg_User]";
	completion_is(pt, &pn, "<|im_start|>system\nSys<|im_end|>\n"
	    "Q? [Beg_User]");
	pn.pn_prompt = "Q?";
	pn.pn_gen_prompt = true;
	completion_is(pt, &pn, "<|im_start|>system\nSys<|im_end|>\n"
	    "Q?<|im_start|>assistant");
	/* user turn, then the open assistant prefix goes in front (as
	 * WilmerAI's format_assistant_turn_with_template does), then the
	 * generation prompt */
	pn.pn_user_turn = pn.pn_open_turn = true;
	completion_is(pt, &pn, "<|im_start|>system\nSys<|im_end|>\n"
	    "<|im_start|>assistant\n<|im_start|>user\nQ?<|im_end|>\n"
	    "<|im_start|>assistant");
	/* an empty system prompt still gets the system turn */
	pn = (struct prompt_node){ "", "Q?", 5, true, false, false };
	completion_is(pt, &pn, "<|im_start|>system\n<|im_end|>\n"
	    "<|im_start|>user\nQ?<|im_end|>");
	/* no template: every part is "" */
	pn = (struct prompt_node){ " S ", NULL, 5, false, false, true };
	completion_is(NULL, &pn, "S u1a1noteu2 x");
	prompt_template_free(pt);
	conf_rm(rels);
}
END_TEST

START_TEST(completion_prompt_chatonly)
{
	const char		*rels[] = { "PromptTemplates/_chatonly.json",
				    NULL };
	struct prompt_template	*pt;
	struct prompt_node	 pn = { "Sys", NULL, 5, false, false, false };

	conf_dir();
	put(rels[0], chatonly);
	pt = template(CONF, "_chatonly");
	completion_is(pt, &pn, "Sys\nu1\na1note\nu2 x");
	/* Python's str.strip() removes Unicode spaces too */
	pn = (struct prompt_node){ "", " \xc2\xa0Q?\xe3\x80\x80\n", 5, false,
	    false, true };
	completion_is(pt, &pn, "Q?");
	prompt_template_free(pt);
	conf_rm(rels);
}
END_TEST

/* ---- endpoint injections -------------------------------------------------- */

/* Endpoints/e.json with the injection keys given (JSON members). */
static struct conf_endpoint *
endpoint(const char *members)
{
	struct conf_endpoint	*ep;
	char			 text[1024], err[CONF_ERRLEN];

	snprintf(text, sizeof(text), "{\"endpoint\": \"http://x\", "
	    "\"apiTypeConfigFileName\": \"A\", \"promptTemplate\": \"chatml\""
	    "%s%s}", members[0] ? ",\n" : "", members);
	put("Endpoints/e.json", text);
	if (conf_endpoint_load(CONF, "", "e", &ep, err) == -1)
		ck_abort_msg("%s", err);
	return ep;
}

static const char *const all_on = "\"addTextToStartOfSystem\": true, "
    "\"textToAddToStartOfSystem\": \"/no_think \", "
    "\"addTextToStartOfPrompt\": true, \"textToAddToStartOfPrompt\": "
    "\"/think_no\", \"addTextToStartOfCompletion\": true, "
    "\"textToAddToStartOfCompletion\": \"<think>\\n</think>\\n\"";

START_TEST(completion_prompt_injections)
{
	const char		*rels[] = { "PromptTemplates/chatml.json",
				    "Endpoints/e.json", NULL };
	struct prompt_template	*pt;
	struct prompt_node	 pn = { "Sys", "Q?", 5, true, false, true };
	struct conf_endpoint	*ep;
	struct wmsgs		 l = prompt_convo();
	char			 err[CONF_ERRLEN], *p;

	conf_dir();
	put(rels[0], chatml);
	pt = template(CONF, "chatml");
	ep = endpoint(all_on);
	/* before the templated system and prompt; after the strip */
	p = prompt_completion(ep, pt, &l, &pn, err);
	ck_assert_str_eq(p, "/no_think <|im_start|>system\nSys<|im_end|>\n"
	    "/think_no<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant"
	    "<think>\n</think>\n");
	free(p);
	conf_endpoint_free(ep);
	/* flags off, or texts empty: nothing added */
	ep = endpoint("\"addTextToStartOfSystem\": false, "
	    "\"textToAddToStartOfSystem\": \"X\", \"addTextToStartOfPrompt\": "
	    "true, \"textToAddToStartOfPrompt\": \"\", "
	    "\"textToAddToStartOfCompletion\": \"Y\"");
	p = prompt_completion(ep, pt, &l, &pn, err);
	ck_assert_str_eq(p, "<|im_start|>system\nSys<|im_end|>\n"
	    "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant");
	free(p);
	conf_endpoint_free(ep);
	ep = endpoint("\"addTextToStartOfPrompt\": \"yes\"");
	ck_assert_ptr_null(prompt_completion(ep, pt, &l, &pn, err));
	ck_assert_ptr_nonnull(strstr(err, "e.json:2:1: 'addTextToStartOfPrompt'"
	    " must be true or false"));
	conf_endpoint_free(ep);
	prompt_template_free(pt);
	wmsgs_free(&l);
	conf_rm(rels);
}
END_TEST

/* Roles and contents of l as "role:content|...". */
static char *
flat(const struct wmsgs *l)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < l->n; i++)
		buf_printf(&b, "%s%s:%s", i ? "|" : "", l->v[i].m_role,
		    l->v[i].m_content);
	return buf_take(&b);
}

/* prompt_chat over l (freed) with endpoint members; the result flat. */
static void
chat_is(struct wmsgs l, const char *members, const char *want)
{
	struct conf_endpoint	*ep = endpoint(members);
	char			 err[CONF_ERRLEN], *s;

	if (prompt_chat(ep, &l, err) == -1)
		ck_abort_msg("%s", err);
	s = flat(&l);
	ck_assert_str_eq(s, want);
	free(s);
	wmsgs_free(&l);
	conf_endpoint_free(ep);
}

static struct wmsgs
two(const char *r1, const char *c1, const char *r2, const char *c2)
{
	struct wmsgs	 l = { NULL, 0 };

	if (r1 != NULL)
		wmsgs_add(&l, r1, c1);
	if (r2 != NULL)
		wmsgs_add(&l, r2, c2);
	return l;
}

START_TEST(chat_injections)
{
	const char	*rels[] = { "Endpoints/e.json", NULL };
	const char	*compl = "\"addTextToStartOfCompletion\": true, "
			    "\"textToAddToStartOfCompletion\": \"<c>\"";
	char		 ens[256];
	struct wmsgs	 l = { NULL, 0 };

	conf_dir();
	wmsgs_add(&l, "systemMes", "S");
	wmsgs_add(&l, "user", "u1");
	wmsgs_add(&l, "assistant", "a1");
	wmsgs_add(&l, "user", "u2");
	wmsgs_add(&l, "assistant", "");
	chat_is(l, all_on, "system:/no_think S|user:u1|assistant:a1|"
	    "user:/think_nou2|assistant:<think>\n</think>\n");
	/* no system or user message: they are created */
	chat_is(two("assistant", "a", NULL, NULL), all_on, "system:/no_think |"
	    "assistant:a|user:/think_no<think>\n</think>\n");
	snprintf(ens, sizeof(ens), "%s, \"ensureTextAddedToAssistantWhen"
	    "ChatCompletion\": true", compl);
	chat_is(two("user", "u", NULL, NULL), ens, "user:u|assistant:<c>");
	chat_is(two("user", "u", "assistant", "a"), ens, "user:u|assistant:a<c>");
	chat_is(two("user", "u", NULL, NULL), compl, "user:u<c>");
	chat_is(two(NULL, NULL, NULL, NULL), compl, "assistant:<c>");
	chat_is(two("systemMes", "x", "user", "u"), "", "system:x|user:u");
	conf_rm(rels);
}
END_TEST

/* ---- WilmerAI's shipped templates ---------------------------------------- */

/* The shipped config folder, or NULL (the test is then skipped). */
static const char *
shipped(char out[PATH_MAX])
{
	const char	*src = getenv("SLUICE_SRC");
	struct stat	 st;

	snprintf(out, PATH_MAX, "%s/../shared/reference/wilmer-configs",
	    src != NULL ? src : ".");
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return out;
	snprintf(out, PATH_MAX, "/work/shared/reference/wilmer-configs");
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return out;
	printf("check_adapters: WilmerAI's shipped configs not found; "
	    "skipping\n");
	return NULL;
}

/* Every shipped template loads. */
static void
load_all(const char *root)
{
	char			 dir[PATH_MAX + 32], name[256], err[CONF_ERRLEN];
	struct prompt_template	*pt;
	struct dirent		*de;
	DIR			*d;
	size_t			 n, count = 0;

	snprintf(dir, sizeof(dir), "%s/PromptTemplates", root);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n <= 5 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), de->d_name);
		if (prompt_template_load(root, name, &pt, err) == -1)
			ck_abort_msg("%s", err);
		prompt_template_free(pt);
		count++;
	}
	closedir(d);
	ck_assert_uint_ge(count, 30);
}

static void
shipped_is(const char *root, const char *name, const char *want)
{
	struct prompt_template	*pt = template(root, name);
	struct prompt_node	 pn = { "Sys", NULL, 2, false, false, true };

	completion_is(pt, &pn, want);
	prompt_template_free(pt);
}

START_TEST(shipped_templates)
{
	char		 buf[PATH_MAX];
	const char	*root = shipped(buf);

	if (root == NULL)
		return;
	load_all(root);
	shipped_is(root, "chatml", "<|im_start|>system\nSys<|im_end|>\n"
	    "<|im_start|>system\nnote<|im_end|>\n<|im_start|>user\nu2 x"
	    "<|im_end|>\n<|im_start|>assistant\n<|im_start|>assistant");
	shipped_is(root, "_chatonly", "Sysnote\nu2 x");
	/* its every prefix is a role tag: all stripped */
	shipped_is(root, "wilmerai", "Sysnoteu2 x");
	shipped_is(root, "llama3", "<|begin_of_text|><|start_header_id|>"
	    "system<|end_header_id|>\n\nSys<|eot_id|><|start_header_id|>system"
	    "<|end_header_id|>\n\nnote<|eot_id|><|start_header_id|>user"
	    "<|end_header_id|>\n\nu2 x<|eot_id|><|start_header_id|>assistant"
	    "<|end_header_id|>\n\n<|start_header_id|>assistant"
	    "<|end_header_id|>");
	shipped_is(root, "mistral", "<s>\n[INST]\n|SYSTEM PROMPT|\nSys\n"
	    "|END OF SYSTEM PROMPT|\n[INST]note\n[INST]u2 x\n[/INST]\n[/INST]");
	/* alpaca has no Systemmes keys: the note goes in bare */
	shipped_is(root, "alpaca", "Sys\nnote\n### Instruction\nu2 x\n\n"
	    "### Response:\n\n### Response:");
}
END_TEST

/* ---- suite ------------------------------------------------------------- */

static void
add(Suite *s, const char *name, const TTest *const *tests)
{
	TCase	*tc = tcase_create(name);

	for (; *tests != NULL; tests++)
		tcase_add_test(tc, *tests);
	suite_add_tcase(s, tc);
}

static Suite *
adapters_suite(void)
{
	Suite	*s = suite_create("adapters");

	add(s, "completion", (const TTest *const[]){ completion_body_like_wilmer,
	    completion_stream_events, completion_whole_answer,
	    preset_nulls_in_body, NULL });
	add(s, "openai_chat", (const TTest *const[]){ openai_chat_tool_calls,
	    openai_stream_usage_body, openai_stream_usage_chunk, NULL });
	add(s, "ollama_chat", (const TTest *const[]){
	    ollama_chat_body_like_wilmer, ollama_chat_stream_lines,
	    ollama_chat_tool_calls, ollama_chat_whole_answer, NULL });
	add(s, "ollama_generate", (const TTest *const[]){
	    ollama_generate_body_like_wilmer, ollama_generate_replies,
	    client_think_only_to_ollama, NULL });
	add(s, "kobold", (const TTest *const[]){ kobold_body_like_wilmer,
	    kobold_replies, NULL });
	add(s, "claude", (const TTest *const[]){ claude_body_like_wilmer,
	    claude_tool_choice, claude_headers_and_path,
	    claude_images_and_prefill, claude_stream_events,
	    claude_stream_ends_and_errors, claude_whole_answer, NULL });
	add(s, "helpers", (const TTest *const[]){ helpers, error_messages,
	    NULL });
	add(s, "templates", (const TTest *const[]){ template_loading,
	    template_choice_and_tags, shipped_templates, NULL });
	add(s, "completion_prompt", (const TTest *const[]){
	    completion_prompt_chatml, completion_prompt_turns,
	    completion_prompt_chatonly, completion_prompt_injections, NULL });
	add(s, "chat_injections", (const TTest *const[]){ chat_injections,
	    NULL });
	return s;
}

int
main(void)
{
	return check_main(adapters_suite());
}
