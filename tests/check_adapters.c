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

#include "../common/buf.h"
#include "../common/conf.h"
#include "../worker/backend.h"
#include "../worker/gen_input.h"
#include "../worker/msgs.h"
#include "../worker/prompt.h"
#include "stubs_worker.h"
#include "testmain.h"

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
	return (struct node_call){ &U, &EP, &AT, preset, l, 300, stream,
	    NULL, NULL, NULL, NULL };
}

/* A fresh parsing state over OUT for nc. */
static struct call_state
state(const struct node_call *nc)
{
	buf_free(&OUT.no_text);
	memset(&OUT, 0, sizeof(OUT));
	OUT.no_prompt_tokens = OUT.no_completion_tokens = -1;
	buf_free(&stub_tokens);
	return (struct call_state){ NULL, nc, &OUT, false, false, "" };
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
	nc.nc_tools = "[]";
	body_is(&adapter_ollama_chat, &nc, "{\"model\": \"m1\", \"messages\": "
	    "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", "
	    "\"content\": \"look\", \"images\": [\"QUJD\", \"REVG\"]}, "
	    "{\"role\": \"assistant\", \"content\": \"ok\"}, {\"role\": "
	    "\"user\", \"content\": \"u2\"}], \"options\": {\"num_ctx\": 8192, "
	    "\"num_predict\": 300}}");
	ck_assert_str_eq(adapter_ollama_chat.ad_path(true), "/api/chat");
	ck_assert_int_eq(adapter_ollama_chat.ad_framing, AD_NDJSON);
	json_decref(preset);
	wmsgs_free(&l);
}
END_TEST
