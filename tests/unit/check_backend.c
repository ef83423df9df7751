/* check_backend.c - one LLM call against mock-llm: framing, the client's stream, errors naming the endpoint, slots, the cleaner's output, the response cache. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../../worker/clean/clean_conf.h"
#include "../../worker/llm/backend.h"
#include "../../worker/llm/callcache.h"
#include "../../worker/llm/transport.h"
#include "../it/harness.h"
#include "../testmain.h"
#include "fakerq.h"
#include "scratchdb.h"

/* The world of every test (each runs in its own process): the mock,
 * it_config's folder (user "it", endpoint "Mock": OpenAI chat with
 * preset "Mock" at temperature 0.5), the fake loop. */
static struct it	 T;
static struct fakerq	 R;
static struct conf_user	*U;
static struct scratchdb	 D;	/* the cache tests' database */

/* User "it" (again, after a test rewrote its file). */
static void
user_load(void)
{
	char	 err[CONF_ERRLEN];

	conf_user_free(U);
	ck_assert_msg(conf_user_load(T.it_dir, "it", &U, err) == 0, "%s", err);
}

static void
setup(void)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	ck_assert_int_eq(transport_init(), 0);
	fakerq_init(&R, "t", -1);
	U = NULL;
	user_load();
}

static void
teardown(void)
{
	if (D.sd_store != NULL)
		scratchdb_close(&D);
	conf_user_free(U);
	fakerq_free(&R);
	transport_cleanup();
	it_stop(&T, 2000);
}

/* A fresh fake loop (what the last one recorded is dropped). */
static void
loop_reset(void)
{
	struct store	*st = R.fr_store;
	const struct cache_conf *cc = R.fr_rq.rq_cache;

	fakerq_free(&R);
	fakerq_init(&R, "t", -1);
	R.fr_store = st;
	R.fr_rq.rq_cache = cc;
}

/* One call and everything it borrows. */
struct call {
	struct conf_endpoint	*c_ep;
	struct conf_apitype	*c_at;
	json_t			*c_preset;
	struct wmsgs		 c_msgs;
	struct node_call	 c_nc;
	struct node_out		 c_out;
	struct wresult		 c_res;
	struct clean_setup	 c_cs;
};

/* A call of endpoint ep (with preset, or none when NULL) whose user
 * message is text; streamed to the client or not. */
static void
call_init(struct call *c, const char *ep, const char *preset,
    const char *text, bool stream)
{
	char	 err[CONF_ERRLEN];

	memset(c, 0, sizeof(*c));
	ck_assert_msg(conf_endpoint_load(T.it_dir, U->u_endpoint_subdir, ep,
	    &c->c_ep, err) == 0, "%s", err);
	ck_assert_msg(conf_apitype_load(T.it_dir, c->c_ep->e_apitype_name,
	    &c->c_at, err) == 0, "%s", err);
	if (preset != NULL)
		ck_assert_msg(conf_preset_resolve_ep(T.it_dir, U, c->c_ep,
		    c->c_at, preset, &c->c_preset, err) == 0, "%s", err);
	wmsgs_add(&c->c_msgs, "user", text);
	c->c_nc.nc_user = U;
	c->c_nc.nc_ep = c->c_ep;
	c->c_nc.nc_at = c->c_at;
	c->c_nc.nc_preset = c->c_preset;
	c->c_nc.nc_msgs = &c->c_msgs;
	c->c_nc.nc_max_tokens = 100;
	c->c_nc.nc_stream = stream;
	c->c_nc.nc_deliver = true;
	node_out_init(&c->c_out);
}

/* The endpoint's cleaner (its reasoning and marker settings, the
 * user's filters) on the call. */
static void
call_clean(struct call *c)
{
	struct clean_src	 src;
	char			 err[CONF_ERRLEN];

	memset(&src, 0, sizeof(src));
	src.sr_ep = c->c_ep;
	src.sr_user = U;
	ck_assert_msg(clean_conf_build(&c->c_cs, &src, err) == 0, "%s", err);
	c->c_nc.nc_clean = clean_new(&c->c_cs.su_conf);
	ck_assert_ptr_nonnull(c->c_nc.nc_clean);
}

static int
call_run(struct call *c)
{
	memset(&c->c_res, 0, sizeof(c->c_res));
	return backend_call(&R.fr_rq, &c->c_nc, &c->c_out, &c->c_res);
}

/* The node's output as a string (borrowed). */
static const char *
call_text(struct call *c)
{
	buf_addc(&c->c_out.no_text, '\0');
	c->c_out.no_text.b_len--;
	return c->c_out.no_text.b_data;
}

static void
call_free(struct call *c)
{
	clean_free(c->c_nc.nc_clean);
	clean_conf_free(&c->c_cs);
	json_decref(c->c_nc.nc_tool_calls);
	node_out_free(&c->c_out);
	wmsgs_free(&c->c_msgs);
	json_decref(c->c_preset);
	conf_apitype_free(c->c_at);
	conf_endpoint_free(c->c_ep);
}

/* What the fake loop was sent as content, as a string (borrowed). */
static const char *
emitted(void)
{
	buf_addc(&R.fr_text, '\0');
	R.fr_text.b_len--;
	return R.fr_text.b_data != NULL ? R.fr_text.b_data : "";
}

static void
mock_url(char *out, size_t len)
{
	snprintf(out, len, "http://127.0.0.1:%d", T.it_mock_port);
}

/* Endpoint name of api type type at the mock, with extra members ("" or
 * ", \"key\": value"). */
static void
mock_backend(const char *name, const char *type, const char *ep_extra)
{
	char	 url[64];

	mock_url(url, sizeof(url));
	it_backend(&T, NULL, name, type, url, "", ep_extra);
}

/* Assert a failed call: status, code, the endpoint named in the
 * message, which contains needle. */
static void
ck_failed(const struct call *c, int http, const char *code, const char *ep,
    const char *needle)
{
	char	 head[160];

	ck_assert_int_eq(c->c_res.r_status, RQ_ERROR);
	ck_assert_int_eq(c->c_res.r_http, http);
	ck_assert_str_eq(c->c_res.r_code, code);
	ck_assert_str_eq(c->c_res.r_endpoint, ep);
	snprintf(head, sizeof(head), "endpoint '%s' (", ep);
	ck_assert_msg(strncmp(c->c_res.r_message, head, strlen(head)) == 0,
	    "message '%s' does not start with '%s'", c->c_res.r_message, head);
	ck_assert_msg(strstr(c->c_res.r_message, needle) != NULL,
	    "message '%s' lacks '%s'", c->c_res.r_message, needle);
}

/* ---- the client's stream ---- */

/* Every framing (SSE, NDJSON, SSE without end marker) brings a stream's
 * tokens to the fake loop one emit a piece, and to the node's output. */
START_TEST(stream_tokens_emitted)
{
	static const struct {
		const char	*name, *type;
	} b[] = {
		{ "Mock", NULL },
		{ "Ollama", "ollamaApiChat" },
		{ "Claude", "claudeMessages" },
		{ "Kobold", "koboldCppGenerate" },
	};
	struct call	 c;
	size_t		 i;

	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		if (b[i].type != NULL)
			mock_backend(b[i].name, b[i].type, "");
		loop_reset();
		call_init(&c, b[i].name, NULL, "hi\n#mock {\"text\": "
		    "\"one two three\"}", true);
		if (strcmp(b[i].name, "Kobold") == 0)
			c.c_nc.nc_prompt = "hi\n#mock {\"text\": "
			    "\"one two three\"}";
		ck_assert_msg(call_run(&c) == 0, "%s: %s", b[i].name,
		    c.c_res.r_message);
		ck_assert_str_eq(call_text(&c), "one two three");
		ck_assert_str_eq(emitted(), "one two three");
		ck_assert_msg(R.fr_emits == 3, "%s: %d emits", b[i].name,
		    R.fr_emits);
		call_free(&c);
	}
}
END_TEST

/* A call that does not stream to the client gives the node its text
 * and the loop nothing. */
START_TEST(whole_not_emitted)
{
	struct call	 c;

	call_init(&c, "Mock", NULL, "#mock {\"text\": \"one two\"}", false);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_str_eq(call_text(&c), "one two");
	ck_assert_int_eq(R.fr_emits, 0);
	ck_assert_str_eq(c.c_out.no_finish, "stop");
	call_free(&c);
}
END_TEST

/* The backend's own counts when it reports them, whole or streamed
 * (stream_options.include_usage); -1 when it does not (an api type with
 * streamIncludeUsage off). */
START_TEST(usage_reported)
{
	const char	*script = "#mock {\"text\": \"a b c\"}";
	struct call	 c;
	char		 url[64];
	int		 stream;

	for (stream = 0; stream < 2; stream++) {
		call_init(&c, "Mock", NULL, script, stream);
		ck_assert_int_eq(call_run(&c), 0);
		ck_assert_int_eq(c.c_out.no_completion_tokens, 3);
		ck_assert_int_gt(c.c_out.no_prompt_tokens, 0);
		call_free(&c);
	}
	mock_url(url, sizeof(url));
	it_backend(&T, NULL, "Quiet", "openAIChatCompletion", url,
	    ", \"streamIncludeUsage\": false", "");
	call_init(&c, "Quiet", NULL, script, true);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_str_eq(call_text(&c), "a b c");
	ck_assert_int_eq(c.c_out.no_prompt_tokens, -1);
	ck_assert_int_eq(c.c_out.no_completion_tokens, -1);
	call_free(&c);
}
END_TEST

/* The backend's native tool calls land in nc_tool_calls, streamed or
 * not, in OpenAI shape. */
START_TEST(native_tool_calls)
{
	const char	*script = "#mock {\"tool_calls\": [{\"name\": \"w\", "
			    "\"arguments\": {\"city\": \"Paris\"}}]}";
	struct call	 c;
	json_t		*f;
	int		 stream;

	for (stream = 0; stream < 2; stream++) {
		call_init(&c, "Mock", NULL, script, stream);
		c.c_nc.nc_tool_calls = json_array();
		ck_assert_int_eq(call_run(&c), 0);
		ck_assert_uint_eq(json_array_size(c.c_nc.nc_tool_calls), 1);
		f = json_object_get(json_array_get(c.c_nc.nc_tool_calls, 0),
		    "function");
		ck_assert_str_eq(json_string_value(json_object_get(f, "name")),
		    "w");
		ck_assert_str_eq(json_string_value(json_object_get(f,
		    "arguments")), "{\"city\":\"Paris\"}");
		ck_assert_str_eq(c.c_out.no_finish, "tool_calls");
		call_free(&c);
	}
}
END_TEST

/* The apiKey goes to the backend as a Bearer token. */
START_TEST(api_key_sent)
{
	struct call	 c;
	json_t		*log;

	mock_backend("Keyed", "openAIChatCompletion", ", \"apiKey\": \"sk-1\"");
	call_init(&c, "Keyed", NULL, "hi", false);
	ck_assert_int_eq(call_run(&c), 0);
	log = it_mock_log(&T, false);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(log, 0), "headers"), "Authorization")),
	    "Bearer sk-1");
	json_decref(log);
	call_free(&c);
}
END_TEST

/* ---- errors, each naming the endpoint ---- */

/* Nothing listens: 502, the endpoint and its URL named, its
 * credentials not. */
START_TEST(connect_refused_502)
{
	struct call	 c;
	char		 text[160];
	int		 port = it_dead_port();

	snprintf(text, sizeof(text), "http://bob:hunter2@127.0.0.1:%d", port);
	it_backend(&T, NULL, "Dead", "openAIChatCompletion", text, "",
	    ", \"apiKey\": \"sk-secret\"");
	call_init(&c, "Dead", NULL, "hi", true);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 502, "backend_unavailable", "Dead", "connection refused");
	snprintf(text, sizeof(text), "(http://***@127.0.0.1:%d/", port);
	ck_assert_msg(strstr(c.c_res.r_message, text) != NULL, "%s",
	    c.c_res.r_message);
	ck_assert_ptr_null(strstr(c.c_res.r_message, "hunter2"));
	ck_assert_ptr_null(strstr(c.c_res.r_message, "bob"));
	ck_assert_ptr_null(strstr(c.c_res.r_message, "sk-secret"));
	ck_assert_int_eq(R.fr_emits, 0);
	call_free(&c);
}
END_TEST

/* The backend does not take the connection within the user's
 * connectTimeoutInSeconds: 504. */
START_TEST(connect_timeout_504)
{
	struct it_stuck	 st;
	struct call	 c;
	char		 url[64];

	it_stuck_open(&st);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", st.s_port);
	it_backend(&T, NULL, "Slow", "openAIChatCompletion", url, "", "");
	U->u_connect_timeout_s = 1;
	call_init(&c, "Slow", NULL, "hi", false);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 504, "backend_timeout", "Slow", url);
	it_stuck_close(&st);
	call_free(&c);
}
END_TEST

/* 429 is passed on with the backend's Retry-After and its message. */
START_TEST(rate_limited_429)
{
	struct call	 c;

	call_init(&c, "Mock", NULL, "#mock {\"status\": 429, \"retry_after\": "
	    "\"7\", \"error\": \"slow down\"}", true);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 429, "backend_http_error", "Mock",
	    "answered HTTP 429: slow down");
	ck_assert_int_eq(c.c_res.r_upstream, 429);
	ck_assert_str_eq(c.c_res.r_retry_after, "7");
	ck_assert_int_eq(R.fr_emits, 0);
	call_free(&c);
}
END_TEST

/* docs/api.md's table: 429 and 503 passed on, 400 and 413 the client's,
 * anything else 502; r_upstream always the backend's. */
START_TEST(http_status_mapping)
{
	static const struct { int up, client; } m[] = {
		{ 503, 503 }, { 400, 400 }, { 413, 400 }, { 401, 502 },
		{ 404, 502 }, { 500, 502 }, { 504, 502 }, { 302, 502 },
	};
	struct call	 c;
	char		 script[80], want[40];
	size_t		 i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		snprintf(script, sizeof(script), "#mock {\"status\": %d}",
		    m[i].up);
		snprintf(want, sizeof(want), "answered HTTP %d", m[i].up);
		call_init(&c, "Mock", NULL, script, false);
		ck_assert_int_eq(call_run(&c), -1);
		ck_failed(&c, m[i].client, "backend_http_error", "Mock", want);
		ck_assert_int_eq(c.c_res.r_upstream, m[i].up);
		ck_assert_str_eq(c.c_res.r_retry_after, "");
		call_free(&c);
	}
}
END_TEST

/* A stream that ends without its end marker is truncated (502), except
 * in a dialect that has none (KoboldCpp). */
START_TEST(truncated_stream)
{
	struct call	 c;

	call_init(&c, "Mock", NULL, "#mock {\"no_done\": true}", true);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 502, "backend_truncated", "Mock", "ended before");
	call_free(&c);
	mock_backend("Kobold", "koboldCppGenerate", "");
	call_init(&c, "Kobold", NULL, "", true);
	c.c_nc.nc_prompt = "#mock {\"text\": \"x y\", \"no_done\": true}";
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_str_eq(call_text(&c), "x y");
	call_free(&c);
}
END_TEST

/* What is not the dialect's JSON is a bad response (502), streamed or
 * not; so is a backend that hangs up mid-stream (connection lost). */
START_TEST(bad_responses)
{
	struct call	 c;

	call_init(&c, "Mock", NULL, "#mock {\"garbage\": true}", true);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 502, "backend_bad_response", "Mock", "");
	call_free(&c);
	call_init(&c, "Mock", NULL, "#mock {\"garbage\": true}", false);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 502, "backend_bad_response", "Mock", "");
	call_free(&c);
	call_init(&c, "Mock", NULL, "#mock {\"disconnect_after\": 2}", true);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 502, "backend_error", "Mock", "connection lost");
	call_free(&c);
}
END_TEST

/* A9.1: an embeddings endpoint named for text generation fails with
 * WilmerAI's message, and no call. */
START_TEST(a9_1_embeddings_not_for_generation)
{
	struct call	 c;

	mock_backend("Embed", "openAIEmbeddings", "");
	call_init(&c, "Embed", NULL, "hi", false);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 500, "embeddings_endpoint", "Embed", "uses embeddings "
	    "API type 'openAIEmbeddings' and cannot be used for text "
	    "generation");
	ck_assert_int_eq(it_mock_stat(&T, "requests"), 0);
	call_free(&c);
}
END_TEST

/* ---- cancellation and slots ---- */

/* The fake loop says stop mid-stream: the call ends cancelled, the
 * tokens before stay with the client, the backend sees the connection
 * close. */
START_TEST(cancel_mid_stream)
{
	struct call	 c;

	R.fr_cancel_at = 2;
	call_init(&c, "Mock", NULL, "#mock {\"forever\": true, \"delay_ms\": "
	    "20}", true);
	ck_assert_int_eq(call_run(&c), -1);
	ck_assert_int_eq(c.c_res.r_status, RQ_CANCELLED);
	ck_assert_int_ge(R.fr_wakes, 2);
	ck_assert_int_gt(R.fr_emits, 0);
	ck_assert_msg(it_mock_wait(&T, "client_gone", 1, 5000),
	    "the backend did not see the client leave");
	call_free(&c);
}
END_TEST

/* A limited endpoint takes a turn and gives it back; its own limit
 * wins over the worker's, and without either no turn is taken. */
START_TEST(slot_taken_and_given)
{
	struct call	 c;

	mock_backend("Two", "openAIChatCompletion",
	    ", \"maxConcurrentRequests\": 2");
	R.fr_rq.rq_ep_limit = 5;
	call_init(&c, "Two", NULL, "hi", false);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_int_eq(R.fr_slot_takes, 1);
	ck_assert_int_eq(R.fr_slot_gives, 1);
	ck_assert_str_eq(R.fr_slot_ep, "Two");
	ck_assert_uint_eq(R.fr_slot_limit, 2);
	call_free(&c);
	call_init(&c, "Mock", NULL, "#mock {\"status\": 500}", false);
	ck_assert_int_eq(call_run(&c), -1);
	ck_assert_int_eq(R.fr_slot_takes, 2);
	ck_assert_int_eq(R.fr_slot_gives, 2);
	ck_assert_str_eq(R.fr_slot_ep, "Mock");
	ck_assert_uint_eq(R.fr_slot_limit, 5);
	call_free(&c);
	R.fr_rq.rq_ep_limit = 0;
	call_init(&c, "Mock", NULL, "hi", false);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_int_eq(R.fr_slot_takes, 2);
	call_free(&c);
}
END_TEST

/* No turn within the wait: 503 endpoint_busy, nothing sent, nothing to
 * give back; a request stopped while waiting is cancelled. */
START_TEST(slot_refused)
{
	struct call	 c;

	R.fr_rq.rq_ep_limit = 1;
	R.fr_rq.rq_ep_wait_ms = 1500;
	R.fr_slot_answer = RQ_SLOT_TIMEOUT;
	call_init(&c, "Mock", NULL, "hi", false);
	ck_assert_int_eq(call_run(&c), -1);
	ck_failed(&c, 503, "endpoint_busy", "Mock", "within 1.5 s");
	call_free(&c);
	R.fr_slot_answer = RQ_SLOT_STOPPED;
	call_init(&c, "Mock", NULL, "hi", false);
	ck_assert_int_eq(call_run(&c), -1);
	ck_assert_int_eq(c.c_res.r_status, RQ_CANCELLED);
	call_free(&c);
	ck_assert_int_eq(R.fr_slot_gives, 0);
	ck_assert_int_eq(it_mock_stat(&T, "requests"), 0);
}
END_TEST

/* ---- the cleaner between backend and client ---- */

/* Reasoning the cleaner takes out reaches the loop as reasoning, not
 * content; a call that does not stream still sends it (the gateway
 * keeps it), but not its content. */
START_TEST(cleaner_reasoning)
{
	const char	*script = "#mock {\"text\": \"<think>hmm</think>Hi "
			    "there\", \"chunk\": 3}";
	struct call	 c;

	mock_backend("Think", "openAIChatCompletion", ", \"reasoningTags\": "
	    "true, \"reasoningOutput\": \"field\"");
	call_init(&c, "Think", NULL, script, true);
	call_clean(&c);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_str_eq(call_text(&c), "Hi there");
	ck_assert_str_eq(emitted(), "Hi there");
	buf_addc(&R.fr_reasoning, '\0');
	ck_assert_str_eq(R.fr_reasoning.b_data, "hmm");
	call_free(&c);
	loop_reset();
	call_init(&c, "Think", NULL, script, false);
	call_clean(&c);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_str_eq(call_text(&c), "Hi there");
	ck_assert_str_eq(emitted(), "");
	buf_addc(&R.fr_reasoning, '\0');
	ck_assert_str_eq(R.fr_reasoning.b_data, "hmm");
	call_free(&c);
}
END_TEST

/* Tool calls the cleaner finds in the text follow the backend's own,
 * numbered after them. */
START_TEST(cleaner_tool_markers)
{
	const char	*script = "#mock {\"text\": \"<tool_call>"
			    "{\\\"name\\\": \\\"b\\\", "
			    "\\\"arguments\\\": {}}</tool_call>\", "
			    "\"tool_calls\": [{\"name\": \"a\"}]}";
	struct call	 c;
	json_t		*tc;

	mock_backend("Ollama", "ollamaApiChat", "");
	call_init(&c, "Ollama", NULL, script, false);
	call_clean(&c);
	c.c_nc.nc_tool_calls = json_array();
	ck_assert_int_eq(call_run(&c), 0);
	tc = c.c_nc.nc_tool_calls;
	ck_assert_msg(json_array_size(tc) == 2, "%s", call_text(&c));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(tc, 0), "function"), "name")), "a");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(tc, 1), "function"), "name")), "b");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(tc,
	    1), "index")), 1);
	ck_assert_str_eq(call_text(&c), "");
	call_free(&c);
}
END_TEST

/* A filter that ends the answer (maxLength) hangs up on the backend:
 * the call succeeds with the cut text and the notice. */
START_TEST(cleaner_stops_backend)
{
	struct call	 c;

	it_user_set(&T, "responseFilters", json_pack("[{s:s, s:i}]", "type",
	    "maxLength", "maxChars", 5));
	user_load();
	call_init(&c, "Mock", NULL, "#mock {\"forever\": true, \"text\": "
	    "\"abc \", \"delay_ms\": 5}", true);
	call_clean(&c);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_str_eq(call_text(&c), "abc a\n\n[Response truncated]");
	ck_assert_str_eq(emitted(), "abc a\n\n[Response truncated]");
	ck_assert_msg(it_mock_wait(&T, "client_gone", 1, 5000),
	    "the backend did not see the client leave");
	call_free(&c);
}
END_TEST

/* ---- the response cache ---- */

static const struct cache_conf	 cache_on = { true, 100, 600000, 1.0 };

/* The loop's database, the response cache on (temperatures up to 1). */
static void
cache_start(void)
{
	scratchdb_open(&D, "backend");
	R.fr_store = D.sd_store;
	R.fr_rq.rq_cache = &cache_on;
}

/* A second identical call is answered from the cache: no backend call,
 * the same text streamed to the loop, tool calls, finish and counts
 * replayed; each lookup is reported to the gateway. */
START_TEST(cache_hit_replayed)
{
	const char	*script = "#mock {\"text\": \"a b\", \"tool_calls\": "
			    "[{\"name\": \"f\"}], \"usage\": true}";
	struct call	 c;
	int64_t		 tokens = -1;
	int		 i;

	cache_start();
	for (i = 0; i < 2; i++) {
		loop_reset();
		call_init(&c, "Mock", "Mock", script, true);
		c.c_nc.nc_tool_calls = json_array();
		ck_assert_int_eq(call_run(&c), 0);
		ck_assert_str_eq(call_text(&c), "a b");
		ck_assert_str_eq(emitted(), "a b");
		ck_assert_int_eq(R.fr_emits, 2);
		ck_assert_uint_eq(json_array_size(c.c_nc.nc_tool_calls), 1);
		ck_assert_str_eq(c.c_out.no_finish, "tool_calls");
		ck_assert_int_gt(c.c_out.no_completion_tokens, 0);
		if (i == 1)
			ck_assert_int_eq(c.c_out.no_completion_tokens, tokens);
		tokens = c.c_out.no_completion_tokens;
		ck_assert_int_eq(R.fr_sent[PROTO_CACHE], 1);
		ck_assert_int_eq(it_mock_stat(&T, "requests"), 1);
		call_free(&c);
	}
	ck_assert_int_eq(cache_count(D.sd_store), 1);
}
END_TEST

/* Not kept: an answer cut at its token limit, one a filter ended, a
 * call whose preset leaves the temperature to the backend (not
 * cacheable, no lookup at all). */
START_TEST(cache_not_kept)
{
	struct call	 c;
	int		 i;

	cache_start();
	for (i = 0; i < 2; i++) {
		call_init(&c, "Mock", "Mock", "#mock {\"finish_reason\": "
		    "\"length\"}", false);
		ck_assert_int_eq(call_run(&c), 0);
		call_free(&c);
	}
	ck_assert_int_eq(it_mock_stat(&T, "requests"), 2);
	ck_assert_int_eq(R.fr_sent[PROTO_CACHE], 2);
	for (i = 0; i < 2; i++) {
		call_init(&c, "Mock", NULL, "hi", false);
		ck_assert_int_eq(call_run(&c), 0);
		call_free(&c);
	}
	ck_assert_int_eq(it_mock_stat(&T, "requests"), 4);
	ck_assert_int_eq(R.fr_sent[PROTO_CACHE], 2);
	ck_assert_int_eq(cache_count(D.sd_store), 0);
}
END_TEST

/* Without its database the cache is skipped: the call still works. */
START_TEST(cache_without_store)
{
	struct call	 c;

	R.fr_rq.rq_cache = &cache_on;
	call_init(&c, "Mock", "Mock", "hi", false);
	ck_assert_int_eq(call_run(&c), 0);
	ck_assert_str_eq(call_text(&c), "The quick brown fox jumps over the "
	    "lazy dog.");
	ck_assert_int_eq(R.fr_sent[PROTO_CACHE], 0);
	call_free(&c);
}
END_TEST

/* DELETE /admin/cache: every entry gone, the count as the answer; an
 * error (no database) is a 500. */
START_TEST(cache_cleared)
{
	struct call	 c;
	struct wresult	 res;

	cache_start();
	call_init(&c, "Mock", "Mock", "hi", false);
	ck_assert_int_eq(call_run(&c), 0);
	call_free(&c);
	ck_assert_int_eq(cache_count(D.sd_store), 1);
	memset(&res, 0, sizeof(res));
	callcache_clear_request(&R.fr_rq, &res);
	ck_assert_int_eq(res.r_status, RQ_OK);
	ck_assert_str_eq(emitted(), "1");
	ck_assert_int_eq(cache_count(D.sd_store), 0);
	R.fr_store = NULL;
	callcache_clear_request(&R.fr_rq, &res);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 500);
	ck_assert_str_eq(res.r_code, "cache_error");
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "stream_tokens_emitted", stream_tokens_emitted },
		{ "whole_not_emitted", whole_not_emitted },
		{ "usage_reported", usage_reported },
		{ "native_tool_calls", native_tool_calls },
		{ "api_key_sent", api_key_sent },
		{ "connect_refused_502", connect_refused_502 },
		{ "connect_timeout_504", connect_timeout_504 },
		{ "rate_limited_429", rate_limited_429 },
		{ "http_status_mapping", http_status_mapping },
		{ "truncated_stream", truncated_stream },
		{ "bad_responses", bad_responses },
		{ "a9_1_embeddings_not_for_generation",
		    a9_1_embeddings_not_for_generation },
		{ "cancel_mid_stream", cancel_mid_stream },
		{ "slot_taken_and_given", slot_taken_and_given },
		{ "slot_refused", slot_refused },
		{ "cleaner_reasoning", cleaner_reasoning },
		{ "cleaner_tool_markers", cleaner_tool_markers },
		{ "cleaner_stops_backend", cleaner_stops_backend },
		{ "cache_hit_replayed", cache_hit_replayed },
		{ "cache_not_kept", cache_not_kept },
		{ "cache_without_store", cache_without_store },
		{ "cache_cleared", cache_cleared },
	};

	return it_main(it_suite_fixture("backend", cases,
	    sizeof(cases) / sizeof(cases[0]), 15, setup, teardown));
}
