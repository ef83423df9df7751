/* check_api.c - OpenAI request parsing into REQ_START and the response builder's shapes (embeddings' too). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../gateway/api.h"
#include "../../gateway/api_embed.h"
#include "../../gateway/begtags.h"
#include "../../gateway/owui.h"
#include "../../gateway/resp.h"
#include "../../gateway/resp_embed.h"
#include "../../proto/proto.h"
#include "../testmain.h"
#include "apisame.h"

static struct api_req	 A;
static struct proto_msg	 M;
static const struct api_limits LIM = { 5000, 2, 30000, NULL, NULL, NULL,
    NULL };
static const struct api_limits NOLIM = { 0, 0, 0, NULL, NULL, NULL, NULL };

/* Parse body; on success decode the REQ_START frame into M. */
static int
parse(const char *body, int *status, char *err)
{
	char	 perr[PROTO_ERRLEN];

	if (api_parse_same(API_OPENAI_CHAT, body, strlen(body), "rq-1", &LIM,
	    &A, status, err) == -1)
		return -1;
	ck_assert_int_eq(proto_decode(A.ar_start.b_data + 4,
	    A.ar_start.b_len - 4, &M, perr), 0);
	ck_assert_uint_eq(M.m_type, PROTO_REQ_START);
	return 0;
}

static void
done(void)
{
	proto_msg_free(&M);
	api_req_clear(&A);
}

/* A10.1: the key travels only when the gateway puts it in the limits
 * (the user encrypts with it). */
START_TEST(a10_1_api_key_travels)
{
	struct api_limits	 l = LIM;
	const char		*body = "{\"model\": \"m\", \"messages\": "
				    "[{\"role\": \"user\", \"content\": \"x\"}]}";
	char			 err[API_ERRLEN], perr[PROTO_ERRLEN];
	int			 st;

	ck_assert_int_eq(parse(body, &st, err), 0);
	ck_assert_ptr_null(M.m_u.req_start.api_key.p);
	done();
	l.api_key = "k1";
	ck_assert_int_eq(api_parse_same(API_OPENAI_CHAT, body, strlen(body),
	    "rq-1", &l, &A, &st, err), 0);
	ck_assert_int_eq(proto_decode(A.ar_start.b_data + 4,
	    A.ar_start.b_len - 4, &M, perr), 0);
	ck_assert(str_eq(M.m_u.req_start.api_key, "k1"));
	done();
}
END_TEST

START_TEST(valid_request)
{
	int	 st;
	char	 err[API_ERRLEN];
	const struct proto_req_start *rs = &M.m_u.req_start;

	ck_assert_int_eq(parse("{\"model\":\"u:general\",\"stream\":true,"
	    "\"temperature\":0.2,\"stream_options\":{\"include_usage\":true},"
	    "\"messages\":[{\"role\":\"system\",\"content\":\"S\"},"
	    "{\"role\":\"user\",\"content\":\"hi\",\"name\":\"bob\"}]}",
	    &st, err), 0);
	ck_assert(A.ar_stream);
	ck_assert(A.ar_include_usage);
	ck_assert_str_eq(A.ar_model, "u:general");
	ck_assert(str_eq(M.m_rqid, "rq-1"));
	ck_assert_uint_eq(rs->api, API_OPENAI_CHAT);
	ck_assert(rs->stream);
	ck_assert_uint_eq(rs->nmsgs, 2);
	ck_assert(str_eq(rs->msgs[1].content, "hi"));
	ck_assert(str_eq(rs->msgs[1].name, "bob"));
	ck_assert(str_eq(rs->options, "{\"temperature\":0.2}"));
	ck_assert_uint_eq(rs->deadline_ms, 5000);
	ck_assert_uint_eq(rs->ep_limit, 2);
	ck_assert_uint_eq(rs->ep_wait_ms, 30000);
	done();
}
END_TEST

START_TEST(content_parts_and_images)
{
	int	 st;
	char	 err[API_ERRLEN];
	const struct proto_message *m;

	ck_assert_int_eq(parse("{\"messages\":[{\"role\":\"user\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"one\"},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":\"http://i/x.png\"}},"
	    "{\"type\":\"text\",\"text\":\"two\"},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"base64\","
	    "\"media_type\":\"image/jpeg\",\"data\":\"QUJD\"}}]},"
	    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":"
	    "[{\"id\":\"c1\",\"type\":\"function\"}]}]}", &st, err), 0);
	m = &M.m_u.req_start.msgs[0];
	ck_assert(str_eq(m->content, "one\ntwo"));
	ck_assert_uint_eq(m->nimages, 2);
	ck_assert(str_eq(m->images[0], "http://i/x.png"));
	ck_assert(str_eq(m->images[1], "data:image/jpeg;base64,QUJD"));
	m = &M.m_u.req_start.msgs[1];
	ck_assert(str_eq(m->content, ""));
	ck_assert(str_eq(m->tool_calls,
	    "[{\"id\":\"c1\",\"type\":\"function\"}]"));
	done();
}
END_TEST

/* A body of kind api that must fail with want_status and a message
 * holding want. */
static void
bad_api(int api, const char *body, int want_status, const char *want)
{
	int	 st = 0;
	char	 err[API_ERRLEN];

	ck_assert_int_eq(api_parse_same(api, body, strlen(body), "r", &NOLIM,
	    &A, &st, err), -1);
	ck_assert_int_eq(st, want_status);
	ck_assert_msg(strstr(err, want) != NULL, "got '%s', want '%s'", err,
	    want);
	ck_assert_ptr_null(A.ar_model);
	ck_assert_ptr_null(A.ar_start.b_data);
}

static void
bad(const char *body, int want_status, const char *want)
{
	bad_api(API_OPENAI_CHAT, body, want_status, want);
}

START_TEST(wilmer_validation_messages)
{
	bad("{nope", 400, "Invalid JSON data");
	bad("[1,2]", 400, "must be a JSON object");
	bad("{\"model\":\"x\"}", 400, "The 'messages' field is required.");
	bad("{\"messages\":{}}", 400, "must be a list");
	bad("{\"messages\":[{\"content\":\"x\"}]}", 400,
	    "Each message must have a 'role' field.");
	bad("{\"messages\":[\"hi\"]}", 400,
	    "Each message must have a 'role' field.");
	bad("{\"messages\":[{\"role\":\"user\"}]}", 400,
	    "Each message must have 'content' or 'tool_calls'.");
	bad("{\"messages\":[{\"role\":\"user\",\"content\":5}]}", 400,
	    "messages[0].content must be a string, a list of content parts "
	    "or null.");
	bad("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},"
	    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":{}}]}",
	    400, "messages[1].tool_calls must be a list.");
	bad("{\"messages\":[{\"role\":\"tool\",\"content\":\"a\","
	    "\"tool_call_id\":7}]}", 400, "messages[0]: 'name' and "
	    "'tool_call_id' must be strings.");
	bad("{\"stream\":\"yes\",\"messages\":[]}", 400, "'stream'");
	bad("{\"model\":7,\"messages\":[]}", 400, "'model'");
	/* Path traversal through the model field never reaches a file. */
	bad("{\"model\":\"../../etc\",\"messages\":[]}", 400,
	    "Invalid model name");
	bad("{\"model\":\"u:..\",\"messages\":[]}", 400, "Invalid model name");
	bad("{\"model\":\"a\\\\..\\\\b\",\"messages\":[]}", 400,
	    "Invalid model name");
}
END_TEST

START_TEST(model_names_that_are_fine)
{
	int	 st = 0;
	char	 err[API_ERRLEN];

	/* Hugging Face ids and Ollama tags select no workflow; no error. */
	ck_assert_int_eq(parse("{\"model\":\"meta-llama/Llama-3.1-8B\","
	    "\"messages\":[]}", &st, err), 0);
	done();
	ck_assert_int_eq(parse("{\"model\":\"llama3:8b...q4\","
	    "\"messages\":[]}", &st, err), 0);
	done();
}
END_TEST

static const struct resp_ctx RC = { API_OPENAI_CHAT, "chatcmpl-1",
    "u:wf", 1700000000, true, "rid-1", 0, 0, false };

static struct resp_answer
answer(const struct buf *text, const struct buf *r, const json_t *tools,
    const struct proto_req_done *d)
{
	return (struct resp_answer){ text, r, tools, d };
}

/* Every "data: " event of an SSE text, parsed; [DONE] counted. */
static json_t *
events(const char *sse, int *ndone)
{
	json_t		*a = json_array();
	const char	*p = sse, *e;
	char		*line;

	*ndone = 0;
	while ((e = strstr(p, "\n\n")) != NULL) {
		ck_assert_msg(strncmp(p, "data: ", 6) == 0, "event: %.40s", p);
		line = strndup(p + 6, (size_t)(e - p - 6));
		if (strcmp(line, "[DONE]") == 0)
			(*ndone)++;
		else {
			json_t	*j = json_loads(line, 0, NULL);

			ck_assert_msg(j != NULL, "not JSON: %s", line);
			json_array_append_new(a, j);
		}
		free(line);
		p = e + 2;
	}
	ck_assert_str_eq(p, "");	/* nothing after the last event */
	return a;
}

static const char *
path_str(json_t *j, const char *path)
{
	char	*dup = strdup(path), *tok, *save;
	json_t	*v = j;

	for (tok = strtok_r(dup, ".", &save); tok != NULL && v != NULL;
	    tok = strtok_r(NULL, ".", &save))
		v = (*tok >= '0' && *tok <= '9') ?
		    json_array_get(v, (size_t)atoi(tok)) :
		    json_object_get(v, tok);
	free(dup);
	return json_string_value(v);
}

START_TEST(stream_shapes)
{
	struct buf		 b = BUF_INIT;
	struct proto_req_chunk	 c = { 0, { "t\"\n\x01", 4 }, STR_NULL_INIT,
				    STR_NULL_INIT };
	struct proto_req_done	 d = { RQ_OK, { "length", 6 }, 10, 5, false,
				    0, STR_NULL_INIT, STR_NULL_INIT, false,
				    STR_NULL_INIT, false, STR_NULL_INIT };
	json_t			*a;
	int			 ndone;

	resp_stream_open(&b, &RC);
	resp_stream_chunk(&b, &RC, &c);
	c.content = STR_NULL;
	resp_stream_chunk(&b, &RC, &c);	/* empty: nothing */
	{
		struct buf	 e = BUF_INIT;
		struct resp_answer ra = answer(&e, &e, NULL, &d);

		resp_stream_close(&b, &RC, &ra);
	}
	a = events(b.b_data, &ndone);
	ck_assert_int_eq(ndone, 1);
	ck_assert_uint_eq(json_array_size(a), 4);	/* role, tok, fin, usage */
	ck_assert_str_eq(path_str(a, "0.choices.0.delta.role"), "assistant");
	ck_assert_str_eq(path_str(a, "1.choices.0.delta.content"), "t\"\n\x01");
	ck_assert_str_eq(path_str(a, "1.id"), "chatcmpl-1");
	ck_assert_str_eq(path_str(a, "2.choices.0.finish_reason"), "length");
	ck_assert_str_eq(path_str(a, "2.object"), "chat.completion.chunk");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    json_array_get(a, 3), "usage"), "total_tokens")), 15);
	ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(a, 3),
	    "choices")), 0);
	json_decref(a);
	buf_free(&b);
}
END_TEST

START_TEST(stream_error_then_done)
{
	struct buf	 b = BUF_INIT;
	json_t		*a;
	int		 ndone;

	resp_stream_error(&b, &RC, 502, "worker died");
	a = events(b.b_data, &ndone);
	ck_assert_int_eq(ndone, 1);
	ck_assert_str_eq(path_str(a, "0.error.message"), "worker died");
	ck_assert_str_eq(path_str(a, "0.error.type"), "server_error");
	json_decref(a);
	buf_free(&b);
	resp_stream_heartbeat(&b, &RC);
	ck_assert_str_eq(b.b_data, ":\n\n");
	buf_free(&b);
}
END_TEST

START_TEST(whole_answer_and_errors)
{
	struct buf		 b = BUF_INIT, text = BUF_INIT, r = BUF_INIT;
	struct proto_req_done	 d = { RQ_OK, STR_NULL_INIT, -1, -1, true, 0,
				    STR_NULL_INIT, STR_NULL_INIT, false,
				    STR_NULL_INIT, false, STR_NULL_INIT };
	json_t			*j;

	buf_adds(&text, "caf\xc3\xa9 \xff!");	/* invalid byte kept safe */
	{
		struct resp_answer ra = answer(&text, &r, NULL, &d);

		resp_whole(&b, &RC, &ra);
	}
	j = json_loads(b.b_data, 0, NULL);
	ck_assert_msg(j != NULL, "%s", b.b_data);
	ck_assert_str_eq(path_str(j, "object"), "chat.completion");
	ck_assert_str_eq(path_str(j, "model"), "u:wf");
	ck_assert_str_eq(path_str(j, "choices.0.message.content"),
	    "caf\xc3\xa9 \xef\xbf\xbd!");
	ck_assert_str_eq(path_str(j, "choices.0.finish_reason"), "stop");
	ck_assert_ptr_null(json_object_get(json_object_get(json_array_get(
	    json_object_get(j, "choices"), 0), "message"), "reasoning_content"));
	json_decref(j);
	buf_reset(&b);
	resp_error(&b, false, 413, "too big");
	j = json_loads(b.b_data, 0, NULL);
	ck_assert_str_eq(path_str(j, "error.message"), "too big");
	ck_assert_str_eq(path_str(j, "error.type"), "invalid_request_error");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "error"), "code")), 413);
	json_decref(j);
	buf_reset(&b);
	resp_error(&b, true, 404, "no");
	ck_assert_str_eq(b.b_data, "{\"error\":\"no\"}");
	buf_free(&b);
	buf_free(&text);
}
END_TEST

START_TEST(begtags_rules)
{
	struct begtags	 bt;
	const char	*t = "lead [Beg_Sys] S1 [Beg_User]\n u1 \n[Beg_Assistant]"
			    "a1[Beg_Sys]S2[Beg_SysMes]m[Beg_Odd]x[Beg_User]";

	begtags_parse(t, strlen(t), &bt);
	ck_assert_uint_eq(bt.bt_n, 8);
	ck_assert_str_eq(bt.bt_msgs[0].bm_role, "user");	/* leading text */
	ck_assert_str_eq(bt.bt_msgs[0].bm_content, "lead");
	ck_assert_str_eq(bt.bt_msgs[1].bm_role, "system");
	ck_assert_str_eq(bt.bt_msgs[1].bm_content, "S1");
	ck_assert_str_eq(bt.bt_msgs[2].bm_content, "u1");
	ck_assert_str_eq(bt.bt_msgs[3].bm_role, "assistant");
	ck_assert_str_eq(bt.bt_msgs[4].bm_role, "systemMes");	/* second Sys */
	ck_assert_str_eq(bt.bt_msgs[5].bm_role, "systemMes");
	ck_assert_str_eq(bt.bt_msgs[6].bm_role, "user");	/* unknown tag */
	ck_assert_str_eq(bt.bt_msgs[7].bm_content, "");	/* tagged, empty */
	begtags_free(&bt);
	begtags_parse("  just words  ", 14, &bt);
	ck_assert_uint_eq(bt.bt_n, 1);
	ck_assert_str_eq(bt.bt_msgs[0].bm_role, "user");
	ck_assert_str_eq(bt.bt_msgs[0].bm_content, "just words");
	begtags_free(&bt);
	begtags_parse("   ", 3, &bt);
	ck_assert_uint_eq(bt.bt_n, 0);
	begtags_free(&bt);
	begtags_parse("[Beg_User", 9, &bt);	/* not a tag */
	ck_assert_uint_eq(bt.bt_n, 1);
	ck_assert_str_eq(bt.bt_msgs[0].bm_content, "[Beg_User");
	begtags_free(&bt);
}
END_TEST

static int
parse_api(int api, const char *body, int *st, char *err)
{
	char	 perr[PROTO_ERRLEN];

	if (api_parse_same(api, body, strlen(body), "rq-2", &NOLIM, &A, st,
	    err) == -1)
		return -1;
	ck_assert_int_eq(proto_decode(A.ar_start.b_data + 4,
	    A.ar_start.b_len - 4, &M, perr), 0);
	return 0;
}

START_TEST(ollama_chat_requests)
{
	int	 st;
	char	 err[API_ERRLEN];
	const struct proto_req_start *rs = &M.m_u.req_start;

	ck_assert_int_eq(parse_api(API_OLLAMA_CHAT, "{\"model\":\"m\","
	    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"images\":"
	    "[\"QUJD\"]},{\"role\":\"assistant\",\"content\":\"{\\\"x\\\":1}\","
	    "\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":"
	    "{\"a\":1}}}]}],\"options\":{\"temperature\":0.1}}", &st, err), 0);
	ck_assert(A.ar_stream);			/* Ollama's default */
	ck_assert_uint_eq(rs->api, API_OLLAMA_CHAT);
	ck_assert(str_eq(rs->msgs[0].images[0], "QUJD"));
	ck_assert(str_eq(rs->msgs[1].content, "{\"x\":1}"));
	ck_assert_ptr_nonnull(memmem(rs->msgs[1].tool_calls.p,
	    rs->msgs[1].tool_calls.n, "\"arguments\":\"{\\\"a\\\":1}\"", 23));
	ck_assert_ptr_nonnull(memmem(rs->msgs[1].tool_calls.p,
	    rs->msgs[1].tool_calls.n, "\"id\":\"call_", 11));
	ck_assert(str_eq(rs->options, "{\"temperature\":0.1}"));
	done();
	ck_assert_int_eq(parse_api(API_OLLAMA_CHAT, "{\"model\":\"m\","
	    "\"stream\":\"false\",\"messages\":[]}", &st, err), 0);
	ck_assert(!A.ar_stream);
	done();
	ck_assert_int_eq(parse_api(API_OLLAMA_CHAT, "{\"messages\":[]}", &st,
	    err), -1);
	ck_assert_str_eq(err, "Both 'model' and 'messages' fields are "
	    "required.");
}
END_TEST

/* /api/chat checks its messages as Ollama's server does, with the rule
 * /v1/chat/completions uses (api_msg_check), in Ollama's error shape. */
START_TEST(ollama_validation_messages)
{
	int	 st;
	char	 err[API_ERRLEN];

	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":5}]}", 400,
	    "messages[0].content must be a string.");
	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}]}",
	    400, "messages[0].content must be a string.");
	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[{"
	    "\"content\":\"x\"}]}", 400, "Each message must have a 'role' "
	    "field.");
	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[7]}", 400,
	    "Each message must have a 'role' field.");
	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"x\"},{\"role\":\"user\",\"content\":"
	    "\"y\",\"images\":\"QUJD\"}]}", 400,
	    "messages[1].images must be a list of base64 strings.");
	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"y\",\"images\":[\"QUJD\",5]}]}", 400,
	    "messages[0].images[1] must be a base64 string");
	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"y\",\"images\":[\"data:image/png;"
	    "base64,QUJD\"]}]}", 400, "messages[0].images[0] must be a base64 "
	    "string");
	bad_api(API_OLLAMA_CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"assistant\",\"content\":\"\",\"tool_calls\":\"f\"}]}", 400,
	    "messages[0].tool_calls must be a list.");
	bad_api(API_OLLAMA_GENERATE, "{\"model\":\"m\",\"prompt\":\"x\","
	    "\"images\":[\"http://i/x.png\"]}", 400,
	    "images[0] must be a base64 string");
	/* What Ollama's server takes, Sluice takes: no content, null
	 * content, null images. */
	ck_assert_int_eq(parse_api(API_OLLAMA_CHAT, "{\"model\":\"m\","
	    "\"messages\":[{\"role\":\"user\"},{\"role\":\"assistant\","
	    "\"content\":null,\"images\":null}]}", &st, err), 0);
	ck_assert(str_eq(M.m_u.req_start.msgs[0].content, ""));
	ck_assert(str_eq(M.m_u.req_start.msgs[1].content, ""));
	done();
}
END_TEST

/* "think" is a boolean or a level; it travels as JSON text, and only
 * false turns reasoning off. */
START_TEST(ollama_think_field)
{
	static const char *const ok[][2] = {
		{ "false", "false" }, { "true", "true" },
		{ "\"high\"", "\"high\"" }, { "\"low\"", "\"low\"" },
	};
	static const char *const wrong[] = { "\"yes\"", "\"false\"", "1",
	    "{}", "\"HIGH\"" };
	char		 body[160], err[API_ERRLEN];
	int		 st;
	size_t		 i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(body, sizeof(body), "{\"model\":\"m\",\"think\":%s,"
		    "\"messages\":[]}", ok[i][0]);
		ck_assert_int_eq(parse_api(API_OLLAMA_CHAT, body, &st, err), 0);
		ck_assert_str_eq(A.ar_think, ok[i][1]);
		ck_assert(str_eq(M.m_u.req_start.think, ok[i][1]));
		ck_assert(api_thinking_off(&A) == (i == 0));
		done();
	}
	for (i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		snprintf(body, sizeof(body), "{\"model\":\"m\",\"think\":%s,"
		    "\"messages\":[]}", wrong[i]);
		bad_api(API_OLLAMA_CHAT, body, 400, "'think' must be true, "
		    "false, \"high\", \"medium\" or \"low\".");
	}
	ck_assert_int_eq(parse_api(API_OLLAMA_CHAT, "{\"model\":\"m\","
	    "\"think\":null,\"messages\":[]}", &st, err), 0);
	ck_assert_ptr_null(A.ar_think);
	ck_assert_ptr_null(M.m_u.req_start.think.p);
	ck_assert(!api_thinking_off(&A));
	done();
	ck_assert_int_eq(parse_api(API_OLLAMA_GENERATE, "{\"model\":\"m\","
	    "\"think\":false,\"prompt\":\"x\"}", &st, err), 0);
	ck_assert(str_eq(M.m_u.req_start.think, "false"));
	done();
	bad_api(API_OLLAMA_GENERATE, "{\"model\":\"m\",\"think\":0,"
	    "\"prompt\":\"x\"}", 400, "'think'");
}
END_TEST

/* A tool call without arguments gets "{}" (api_fuzz found the empty
 * object made for it leaked on every such request; ASan's leak check
 * catches it here). */
START_TEST(ollama_tool_call_without_arguments)
{
	int	 st;
	char	 err[API_ERRLEN];
	const struct proto_req_start *rs = &M.m_u.req_start;

	ck_assert_int_eq(parse_api(API_OLLAMA_CHAT, "{\"model\":\"m\","
	    "\"messages\":[{\"role\":\"assistant\",\"content\":\"\","
	    "\"tool_calls\":[{\"function\":{\"name\":\"f\"}}]}]}", &st,
	    err), 0);
	ck_assert_ptr_nonnull(memmem(rs->msgs[0].tool_calls.p,
	    rs->msgs[0].tool_calls.n, "\"arguments\":\"{}\"", 16));
	done();
}
END_TEST

START_TEST(ollama_generate_requests)
{
	int	 st;
	char	 err[API_ERRLEN];
	const struct proto_req_start *rs = &M.m_u.req_start;

	ck_assert_int_eq(parse_api(API_OLLAMA_GENERATE, "{\"model\":\"m\","
	    "\"system\":\"[Beg_Sys]Be kind.\",\"prompt\":\"[Beg_User]Hi"
	    "[Beg_Assistant]Hello[Beg_User]Again\",\"images\":[\"SU1H\"],"
	    "\"stream\":false}", &st, err), 0);
	ck_assert(!A.ar_stream);
	ck_assert_uint_eq(rs->nmsgs, 4);
	ck_assert(str_eq(rs->msgs[0].role, "system"));
	ck_assert(str_eq(rs->msgs[3].content, "Again"));
	ck_assert_uint_eq(rs->msgs[3].nimages, 1);	/* last user message */
	done();
	ck_assert_int_eq(parse_api(API_OLLAMA_GENERATE, "{\"model\":\"m\","
	    "\"prompt\":\"[Beg_Assistant]x\",\"images\":[\"SU1H\"]}", &st, err),
	    0);
	ck_assert_uint_eq(rs->nmsgs, 2);		/* a new user message */
	ck_assert(str_eq(rs->msgs[1].role, "user"));
	ck_assert_uint_eq(rs->msgs[1].nimages, 1);
	done();
	ck_assert_int_eq(parse_api(API_OLLAMA_GENERATE, "{\"prompt\":\"x\"}",
	    &st, err), -1);
	ck_assert_str_eq(err, "The 'model' field is required.");
}
END_TEST

START_TEST(legacy_completion_requests)
{
	int	 st;
	char	 err[API_ERRLEN];
	const struct proto_req_start *rs = &M.m_u.req_start;

	ck_assert_int_eq(parse_api(API_OPENAI_COMPLETION, "{\"model\":\"m\","
	    "\"prompt\":\"Once upon a time\"}", &st, err), 0);
	ck_assert(!A.ar_stream);	/* the OpenAI spec's default */
	ck_assert_uint_eq(rs->nmsgs, 1);	/* not an empty conversation */
	ck_assert(str_eq(rs->msgs[0].content, "Once upon a time"));
	done();
	ck_assert_int_eq(parse_api(API_OPENAI_COMPLETION, "{\"model\":\"m\","
	    "\"stream\":true,\"prompt\":[\"[Beg_User]q\"]}", &st, err), 0);
	ck_assert(A.ar_stream);
	ck_assert(str_eq(rs->msgs[0].content, "q"));
	done();
	ck_assert_int_eq(parse_api(API_OPENAI_COMPLETION, "{\"model\":\"m\"}",
	    &st, err), -1);
	ck_assert_int_eq(st, 400);
}
END_TEST

static json_t *
json_line(const char *s, size_t n)
{
	json_t	*j = json_loadb(s, n, 0, NULL);

	ck_assert_msg(j != NULL, "not JSON: %.*s", (int)n, s);
	return j;
}

START_TEST(ollama_stream_shapes)
{
	struct resp_ctx		 rc = { API_OLLAMA_CHAT, "x", "u", 1, false,
				    "rid-9", 1000, 1500, false };
	struct proto_req_chunk	 c = { 0, { "he", 2 }, { "why", 3 },
				    STR_NULL_INIT };
	struct proto_req_done	 d = { RQ_OK, { "length", 6 }, 7, 3, false, 0,
				    STR_NULL_INIT, STR_NULL_INIT, false,
				    STR_NULL_INIT, false, STR_NULL_INIT };
	struct buf		 b = BUF_INIT, e = BUF_INIT;
	struct resp_answer	 ra = answer(&e, &e, NULL, &d);
	json_t			*j;
	char			*nl;

	resp_stream_open(&b, &rc);
	ck_assert_uint_eq(b.b_len, 0);		/* no role event in NDJSON */
	resp_stream_chunk(&b, &rc, &c);
	nl = strchr(b.b_data, '\n');
	ck_assert_ptr_nonnull(nl);
	j = json_line(b.b_data, (size_t)(nl - b.b_data));
	ck_assert_str_eq(path_str(j, "message.content"), "he");
	ck_assert_str_eq(path_str(j, "message.thinking"), "why");
	ck_assert_str_eq(path_str(j, "request_id"), "rid-9");
	ck_assert(json_is_false(json_object_get(j, "done")));
	json_decref(j);
	buf_reset(&b);
	resp_stream_close(&b, &rc, &ra);
	j = json_line(b.b_data, b.b_len - 1);
	ck_assert(json_is_true(json_object_get(j, "done")));
	ck_assert_str_eq(path_str(j, "done_reason"), "length");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "eval_count")),
	    3);
	ck_assert_int_gt(json_integer_value(json_object_get(j,
	    "total_duration")), 0);
	json_decref(j);
	buf_reset(&b);
	resp_stream_heartbeat(&b, &rc);
	j = json_line(b.b_data, b.b_len - 1);
	ck_assert(json_is_false(json_object_get(j, "done")));
	json_decref(j);
	buf_reset(&b);
	resp_stream_error(&b, &rc, 502, "gone");
	ck_assert_str_eq(b.b_data, "{\"error\":\"gone\"}\n");
	buf_free(&b);
}
END_TEST

/* A stream's tool calls come whole on a done:false line of their own,
 * then the final line without them, as Ollama streams them; a whole
 * answer holds them in its one object. */
START_TEST(ollama_tool_call_shapes)
{
	struct resp_ctx		 rc = { API_OLLAMA_CHAT, "x", "u", 1, false,
				    "rid-9", 1000, 1500, false };
	struct proto_req_done	 d = { RQ_OK, STR_NULL_INIT, 7, 3, false, 0,
				    STR_NULL_INIT, STR_NULL_INIT, false,
				    STR_NULL_INIT, false, STR_NULL_INIT };
	struct buf		 b = BUF_INIT, e = BUF_INIT;
	json_t			*tools = json_loads("[{\"index\":0,\"id\":\"call_1\","
				    "\"type\":\"function\",\"function\":{\"name\":"
				    "\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]", 0, NULL);
	struct resp_answer	 ra = answer(&e, &e, tools, &d);
	json_t			*j;
	char			*nl;

	resp_stream_close(&b, &rc, &ra);
	nl = strchr(b.b_data, '\n');
	ck_assert_ptr_nonnull(nl);
	j = json_line(b.b_data, (size_t)(nl - b.b_data));
	ck_assert(json_is_false(json_object_get(j, "done")));
	ck_assert_str_eq(path_str(j, "message.content"), "");
	ck_assert_str_eq(path_str(j, "message.tool_calls.0.function.name"),
	    "f");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    json_object_get(json_array_get(json_object_get(json_object_get(j,
	    "message"), "tool_calls"), 0), "function"), "arguments"), "a")), 1);
	ck_assert_str_eq(path_str(j, "request_id"), "rid-9");
	json_decref(j);
	j = json_line(nl + 1, strlen(nl + 1) - 1);
	ck_assert(json_is_true(json_object_get(j, "done")));
	ck_assert_str_eq(path_str(j, "done_reason"), "stop");
	ck_assert_ptr_null(json_object_get(json_object_get(j, "message"),
	    "tool_calls"));
	json_decref(j);
	buf_reset(&b);
	resp_whole(&b, &rc, &ra);
	j = json_line(b.b_data, b.b_len);
	ck_assert(json_is_true(json_object_get(j, "done")));
	ck_assert_str_eq(path_str(j, "message.tool_calls.0.function.name"),
	    "f");
	json_decref(j);
	json_decref(tools);
	buf_free(&b);
}
END_TEST

/* "think": false: reasoning stays out of stream lines and whole
 * answers, and a chunk of reasoning alone makes no line. */
START_TEST(ollama_thinking_hidden)
{
	struct resp_ctx		 rc = { API_OLLAMA_CHAT, "x", "u", 1, false,
				    "rid-9", 1000, 1500, true };
	struct proto_req_chunk	 only = { 0, STR_NULL_INIT, { "why", 3 },
				    STR_NULL_INIT };
	struct proto_req_chunk	 both = { 1, { "he", 2 }, { "why", 3 },
				    STR_NULL_INIT };
	struct proto_req_done	 d = { RQ_OK, STR_NULL_INIT, 1, 1, false, 0,
				    STR_NULL_INIT, STR_NULL_INIT, false,
				    STR_NULL_INIT, false, STR_NULL_INIT };
	struct buf		 b = BUF_INIT, t = BUF_INIT, r = BUF_INIT;
	struct resp_answer	 ra;
	json_t			*j;

	resp_stream_chunk(&b, &rc, &only);
	ck_assert_uint_eq(b.b_len, 0);
	resp_stream_chunk(&b, &rc, &both);
	j = json_line(b.b_data, b.b_len - 1);
	ck_assert_str_eq(path_str(j, "message.content"), "he");
	ck_assert_ptr_null(json_object_get(json_object_get(j, "message"),
	    "thinking"));
	json_decref(j);
	buf_reset(&b);
	buf_adds(&t, "answer");
	buf_adds(&r, "reasons");
	ra = answer(&t, &r, NULL, &d);
	resp_whole(&b, &rc, &ra);
	ck_assert_ptr_null(strstr(b.b_data, "thinking"));
	buf_reset(&b);
	rc.rc_api = API_OLLAMA_GENERATE;
	resp_whole(&b, &rc, &ra);
	ck_assert_ptr_null(strstr(b.b_data, "thinking"));
	buf_reset(&b);
	rc.rc_hide_thinking = false;	/* the test can tell */
	resp_whole(&b, &rc, &ra);
	j = json_line(b.b_data, b.b_len);
	ck_assert_str_eq(path_str(j, "thinking"), "reasons");
	json_decref(j);
	buf_free(&b);
	buf_free(&t);
	buf_free(&r);
}
END_TEST

START_TEST(generate_and_completion_whole)
{
	struct resp_ctx		 rc = { API_OLLAMA_GENERATE, "x", "u", 1, false,
				    "rid-3", 1000, 0, false };
	struct proto_req_done	 d = { RQ_OK, STR_NULL_INIT, 2, 2, false, 0,
				    STR_NULL_INIT, STR_NULL_INIT, false,
				    STR_NULL_INIT, false, STR_NULL_INIT };
	struct buf		 b = BUF_INIT, t = BUF_INIT, e = BUF_INIT;
	struct resp_answer	 ra;
	json_t			*j;

	buf_adds(&t, "Hi there");
	ra = answer(&t, &e, NULL, &d);
	resp_whole(&b, &rc, &ra);
	j = json_line(b.b_data, b.b_len);
	ck_assert_str_eq(path_str(j, "response"), "Hi there");
	ck_assert(json_is_true(json_object_get(j, "done")));
	ck_assert_str_eq(path_str(j, "request_id"), "rid-3");
	json_decref(j);
	buf_reset(&b);
	rc.rc_api = API_OPENAI_COMPLETION;
	rc.rc_id = "cmpl-1";
	resp_whole(&b, &rc, &ra);
	j = json_line(b.b_data, b.b_len);
	ck_assert_str_eq(path_str(j, "object"), "text_completion");
	ck_assert_str_eq(path_str(j, "choices.0.text"), "Hi there");
	json_decref(j);
	buf_free(&b);
	buf_free(&t);
}
END_TEST

START_TEST(tool_call_deltas_merge)
{
	json_t			*acc = json_array();
	struct str		 d1 = STR_LIT("[{\"index\":0,\"id\":\"call_a\","
				    "\"type\":\"function\",\"function\":{\"name\":"
				    "\"f\",\"arguments\":\"{\\\"x\"}}]");
	struct str		 d2 = STR_LIT("[{\"index\":0,\"function\":"
				    "{\"arguments\":\"\\\":1}\"}},{\"index\":1,"
				    "\"id\":\"call_b\",\"type\":\"function\","
				    "\"function\":{\"name\":\"g\",\"arguments\":"
				    "\"{}\"}}]");
	struct proto_req_done	 d = { RQ_OK, STR_NULL_INIT, 1, 1, false, 0,
				    STR_NULL_INIT, STR_NULL_INIT, false,
				    STR_NULL_INIT, false, STR_NULL_INIT };
	struct buf		 b = BUF_INIT, e = BUF_INIT;
	struct resp_answer	 ra;
	json_t			*j;

	resp_tool_calls_merge(acc, &d1);
	resp_tool_calls_merge(acc, &d2);
	ck_assert_uint_eq(json_array_size(acc), 2);
	ck_assert_str_eq(path_str(acc, "0.function.arguments"), "{\"x\":1}");
	ra = answer(&e, &e, acc, &d);
	resp_whole(&b, &RC, &ra);
	j = json_line(b.b_data, b.b_len);
	ck_assert(json_is_null(json_object_get(json_object_get(json_array_get(
	    json_object_get(j, "choices"), 0), "message"), "content")));
	ck_assert_str_eq(path_str(j, "choices.0.finish_reason"), "tool_calls");
	ck_assert_str_eq(path_str(j, "choices.0.message.tool_calls.1.id"),
	    "call_b");
	ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(
	    json_object_get(json_array_get(json_object_get(j, "choices"), 0),
	    "message"), "tool_calls"), 0), "index"));
	json_decref(j);
	json_decref(acc);
	buf_free(&b);
}
END_TEST

/* Which bodies are Open WebUI choosing a tool (addendum A8.8). */
START_TEST(owui_tool_request_seen)
{
	static const struct {
		int		 api;
		const char	*body;
		bool		 want;
	} c[] = {
	    { API_OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\", "
	      "\"content\": \"hi\"}, {\"role\": \"system\", \"content\": "
	      "\"x Your task is to choose and return the correct tool(s) from "
	      "the list of available tools based on the query y\"}]}", true },
	    { API_OLLAMA_CHAT, "{\"messages\": [{\"role\": \"system\", "
	      "\"content\": \"Your task is to choose and return the correct "
	      "tool(s) from the list of available tools based on the "
	      "query\"}]}", true },
	    /* the sentence cut short, in a user message, not a string, on
	     * the routes that are not chat, no messages at all */
	    { API_OPENAI_CHAT, "{\"messages\": [{\"role\": \"system\", "
	      "\"content\": \"Your task is to choose and return the correct "
	      "tool(s) from the list of available tools\"}]}", false },
	    { API_OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\", "
	      "\"content\": \"Your task is to choose and return the correct "
	      "tool(s) from the list of available tools based on the "
	      "query\"}]}", false },
	    { API_OPENAI_CHAT, "{\"messages\": [{\"role\": \"system\", "
	      "\"content\": [{\"type\": \"text\", \"text\": \"Your task is "
	      "to choose and return the correct tool(s) from the list of "
	      "available tools based on the query\"}]}]}", false },
	    { API_OLLAMA_GENERATE, "{\"messages\": [{\"role\": \"system\", "
	      "\"content\": \"Your task is to choose and return the correct "
	      "tool(s) from the list of available tools based on the "
	      "query\"}]}", false },
	    { API_OPENAI_CHAT, "{\"messages\": 5}", false },
	    { API_OPENAI_CHAT, "{}", false },
	};
	struct api_body	*ab, *tree;
	char		 err[API_ERRLEN];
	size_t		 i, n;
	int		 st;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		n = strlen(c[i].body);
		ck_assert_int_eq(api_body_load(c[i].body, n, &ab, &st, err), 0);
		ck_assert_int_eq(api_body_load_tree(c[i].body, n, &tree, &st,
		    err), 0);
		ck_assert_msg(owui_tool_request(c[i].api, ab) == c[i].want,
		    "case %zu", i);
		ck_assert_msg(owui_tool_request(c[i].api, tree) == c[i].want,
		    "case %zu (tree)", i);
		api_body_free(ab);
		api_body_free(tree);
	}
}
END_TEST

/* Embeddings bodies: one user message a text, the api, the format. */
START_TEST(embed_requests)
{
	const struct proto_req_start *rs = &M.m_u.req_start;
	char		 err[API_ERRLEN], perr[PROTO_ERRLEN];
	json_t		*root;
	bool		 b64;
	int		 st;

	root = json_loads("{\"model\": \"u\", \"input\": [\"a\", \"\", "
	    "\"c\"], \"encoding_format\": \"base64\", \"dimensions\": 3}", 0,
	    NULL);
	ck_assert_int_eq(api_embed_build(EMBED_OPENAI, root, "rq-1", &LIM, &A,
	    &b64, &st, err), 0);
	json_decref(root);
	ck_assert(b64);
	ck_assert_int_eq(proto_decode(A.ar_start.b_data + 4,
	    A.ar_start.b_len - 4, &M, perr), 0);
	ck_assert_uint_eq(rs->api, API_OPENAI_EMBED);
	ck_assert_uint_eq(rs->nmsgs, 3);
	ck_assert(str_eq(rs->msgs[0].role, "user"));
	ck_assert(str_eq(rs->msgs[1].content, ""));
	ck_assert(str_eq(rs->msgs[2].content, "c"));
	ck_assert_uint_eq(rs->deadline_ms, 5000);
	done();
	root = json_loads("{\"model\": \"u\", \"prompt\": \"p\"}", 0, NULL);
	ck_assert_int_eq(api_embed_build(EMBED_OLLAMA_LEGACY, root, "rq-2",
	    &LIM, &A, &b64, &st, err), 0);
	ck_assert(!b64);
	ck_assert_int_eq(proto_decode(A.ar_start.b_data + 4,
	    A.ar_start.b_len - 4, &M, perr), 0);
	ck_assert_uint_eq(rs->api, API_OLLAMA_EMBED);
	ck_assert_uint_eq(rs->nmsgs, 1);
	ck_assert(str_eq(rs->msgs[0].content, "p"));
	done();
	ck_assert_int_eq(api_embed_build(EMBED_OLLAMA, root, "rq-3", &LIM, &A,
	    &b64, &st, err), 0);	/* no "input": no text */
	ck_assert_int_eq(proto_decode(A.ar_start.b_data + 4,
	    A.ar_start.b_len - 4, &M, perr), 0);
	ck_assert_uint_eq(rs->nmsgs, 0);
	done();
	json_decref(root);
	root = json_loads("{\"input\": [[1]]}", 0, NULL);
	ck_assert_int_eq(api_embed_build(EMBED_OPENAI, root, "rq-4", &LIM, &A,
	    &b64, &st, err), -1);
	ck_assert_int_eq(st, 400);
	ck_assert_ptr_null(A.ar_model);
	json_decref(root);
}
END_TEST

/* The worker's JSON in each route's shape: numbers shortest-round-
 * trip, OpenAI's base64 the little-endian float32s. */
START_TEST(embed_answers)
{
	static const char w[] = "{\"model\":\"back\",\"prompt_tokens\":7,"
	    "\"embeddings\":[[0.1,1.0,-2.5e-05],[1,0.0,3.0]]}";
	struct resp_embed_ctx	 rc = { EMBED_OPENAI, "it", false, 1234 };
	struct buf		 b = BUF_INIT;
	char			 err[RESP_EMBED_ERRLEN];

	ck_assert_int_eq(resp_embed(&b, &rc, w, strlen(w), err), 0);
	ck_assert_str_eq(b.b_data, "{\"object\":\"list\",\"data\":["
	    "{\"object\":\"embedding\",\"index\":0,\"embedding\":"
	    "[0.1,1.0,-2.5e-05]},{\"object\":\"embedding\",\"index\":1,"
	    "\"embedding\":[1.0,0.0,3.0]}],\"model\":\"it\",\"usage\":"
	    "{\"prompt_tokens\":7,\"total_tokens\":7}}");
	buf_reset(&b);
	rc.re_b64 = true;
	rc.re_model = "";	/* the worker's model then */
	ck_assert_int_eq(resp_embed(&b, &rc, w, strlen(w), err), 0);
	/* 1.0f, 0.0f, 3.0f: 0000803f 00000000 00004040 */
	ck_assert_msg(strstr(b.b_data, "\"embedding\":\"AACAPwAAAAAAAEBA\"}") !=
	    NULL, "%s", b.b_data);
	ck_assert_msg(strstr(b.b_data, "\"model\":\"back\"") != NULL, "%s",
	    b.b_data);
	buf_reset(&b);
	rc = (struct resp_embed_ctx){ EMBED_OLLAMA, "it", false, 1234 };
	ck_assert_int_eq(resp_embed(&b, &rc, w, strlen(w), err), 0);
	ck_assert_str_eq(b.b_data, "{\"model\":\"it\",\"embeddings\":"
	    "[[0.1,1.0,-2.5e-05],[1.0,0.0,3.0]],\"total_duration\":1234,"
	    "\"load_duration\":0,\"prompt_eval_count\":7}");
	buf_reset(&b);
	rc.re_shape = EMBED_OLLAMA_LEGACY;
	ck_assert_int_eq(resp_embed(&b, &rc, w, strlen(w), err), 0);
	ck_assert_str_eq(b.b_data, "{\"embedding\":[0.1,1.0,-2.5e-05]}");
	buf_reset(&b);
	ck_assert_int_eq(resp_embed(&b, &rc, "{\"embeddings\":[]}", 17, err),
	    0);
	ck_assert_str_eq(b.b_data, "{\"embedding\":[]}");
	buf_reset(&b);
	ck_assert_int_eq(resp_embed(&b, &rc, "{\"embeddings\":[[\"x\"]]}", 21,
	    err), -1);
	ck_assert_int_eq(resp_embed(&b, &rc, "[", 1, err), -1);
	ck_assert_str_eq(err, "the worker's embeddings answer is not JSON");
	buf_free(&b);
}
END_TEST

/*
 * The scanner's path gives the frames jansson's tree gave (issue 20):
 * every body of the api fuzz corpus and each below, on the four routes
 * with and without limits. api_parse_same compares status, message and
 * frame bytes; the other tests here go through it too.
 */
static const char *const same_bodies[] = {
	"{\"model\": \"m\", \"messages\": [{\"rol\\u0065\": \"us\\u0065r\", "
	"\"content\": \"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"}]}",
	"{\"messages\": [{\"role\": \"user\", \"role\": \"system\", "
	"\"content\": \"x\", \"content\": \"y\"}], \"model\": \"a\", "
	"\"model\": \"b\"}",
	"{\"messages\": [], \"messages\": [{\"role\": \"user\"}]}",
	"{\"messages\": null}", "{\"messages\": \"x\"}", "{\"messages\": {}}",
	"{\"messages\": 5}", "{\"model\": \"m\"}", "{}",
	"{\"model\": \"m\", \"messages\": [\"x\", 1, null, [], true]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": 1}]}",
	"{\"model\": \"m\", \"messages\": [{\"content\": \"x\"}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\"}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"null, \"tool_calls\": null}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"5}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"{\"a\": 1}}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"[\"plain\", {\"type\": \"text\", \"text\": \"t\\u00e9\"}, {\"type\": "
	"\"image_url\", \"image_url\": {\"url\": \"data:image/png;base64,"
	"AAAA\"}}, {\"type\": \"image\", \"source\": {\"type\": \"base64\", "
	"\"media_type\": \"image/jpeg\", \"data\": \"QUJD\"}}, 7, null]}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"assistant\", "
	"\"content\": null, \"tool_calls\": [{\"id\": \"c1\", \"type\": "
	"\"function\", \"function\": {\"name\": \"f\", \"arguments\": "
	"{\"x\": [1, 2.5, -3e2, true, null, \"\\u00e9\"]}}}]}, {\"role\": "
	"\"tool\", \"tool_call_id\": \"c1\", \"name\": \"f\", \"content\": "
	"\"ok\"}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"tool_calls\": []}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"tool_calls\": {}}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"name\": 5}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"tool_call_id\": []}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"images\": [\"QUJD\", \"AAAA\"]}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"images\": [\"data:image/png;base64,AAAA\"]}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"images\": \"QUJD\"}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"images\": null}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"images\": [1]}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"assistant\", "
	"\"content\": \"\", \"tool_calls\": [{\"function\": {\"name\": \"f\", "
	"\"arguments\": {\"a\": 1}}}, {\"function\": {\"name\": \"g\", "
	"\"arguments\": \"{}\"}}, {}]}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"extra\": {\"deep\": [[[{\"a\": \"\\u00e9\"}]]]}, \"n\": "
	"123456789012345678}]}",
	" \t\r\n{ \"model\" : \"m\" , \"messages\" : [ { \"role\" : \"user\" , "
	"\"content\" : \"x\" } ] , \"stream\" : true , \"stream_options\" : "
	"{ \"include_usage\" : true } } \n",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\"}], \"stream\": \"true\", \"think\": \"high\", \"options\": "
	"{\"temperature\": 0.5, \"num_ctx\": 4096}, \"temperature\": 0.25, "
	"\"max_tokens\": 10, \"stop\": [\"a\"], \"seed\": -1, \"user\": \"u\", "
	"\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}],"
	" \"tool_choice\": \"auto\"}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\"}], \"stream\": 1}",
	"{\"model\": 5, \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\"}]}",
	"{\"model\": \"..\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\"}]}",
	"{\"model\": \"m\", \"prompt\": \"[Beg_Sys]s[Beg_User]u\", \"system\": "
	"\"y\", \"images\": [\"QUJD\"]}",
	"{\"model\": \"m\", \"prompt\": [\"p\"]}",
	/* numbers and nesting jscan leaves to jansson */
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"n\": 1e-400, \"b\": 12345678901234567890123}]}",
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": "
	"\"x\", \"n\": 99999999999999999999}]}",
	/* malformed: jansson's message, line and column */
	"", " ", "[]", "\"x\"", "{", "{\"messages\": [", "{\"messages\": [{\"role\"",
	"{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]} x",
	"{\"messages\": [{\"role\": \"user\", \"content\": \"\\ud800\"}]}",
	"{\"messages\": [{\"role\": \"user\", \"content\": \"\\u0000\"}]}",
	"{\"messages\": [{\"role\": \"user\", \"content\": \"\xc3\x28\"}]}",
	"{\"messages\": [{\"role\": \"user\", \"content\": \"a\nb\"}]}",
	"{\"messages\": [{\"role\": \"user\",}]}",
	"{\"model\": 1e400, \"messages\": []}",
};

static void
parse_same_all(const char *body, size_t n)
{
	static const struct api_limits	 lims[2] = {
		{ 0, 0, 0, NULL, NULL, NULL, NULL },
		{ 90000, 4, 1500, "alice", "general", "0123456789abcdef",
		  "k1" },
	};
	char	 err[API_ERRLEN];
	int	 api, l, st;

	for (api = API_OPENAI_CHAT; api <= API_OLLAMA_GENERATE; api++)
		for (l = 0; l < 2; l++) {
			api_parse_same(api, body, n, "rq-s", &lims[l], &A, &st,
			    err);
			api_req_clear(&A);
		}
}

/* A body of the conversation the bench sends, n messages long. */
static void
long_conversation(struct buf *b, int n)
{
	int	 i;

	buf_adds(b, "{\"model\": \"m\", \"stream\": false, \"messages\": [");
	for (i = 0; i < n; i++)
		buf_printf(b, "%s{\"role\": \"%s\", \"content\": \"Message %d: "
		    "some text with \\\"quotes\\\", a tab\\t, caf\xc3\xa9 and "
		    "\\u20ac.\"}", i ? ", " : "", i % 2 ? "assistant" : "user",
		    i);
	buf_adds(b, "]}");
}

START_TEST(scanned_frames_match_the_tree)
{
	const char	*src = getenv("SLUICE_SRC");
	char		 path[4096], *data;
	struct dirent	*de;
	struct buf	 b = BUF_INIT;
	struct api_body	*ab;
	char		 err[API_ERRLEN];
	size_t		 i, n, files = 0;
	int		 st;
	DIR		*d;
	FILE		*f;

	for (i = 0; i < sizeof(same_bodies) / sizeof(same_bodies[0]); i++)
		parse_same_all(same_bodies[i], strlen(same_bodies[i]));
	long_conversation(&b, 1000);
	parse_same_all(b.b_data, b.b_len);
	/* and it was the scanner that read it, not the fallback */
	ck_assert_int_eq(api_body_load(b.b_data, b.b_len, &ab, &st, err), 0);
	ck_assert_ptr_null(json_object_get(api_body_root(ab), "messages"));
	ck_assert_uint_eq(api_body_nmsgs(ab), 1000);
	api_body_free(ab);
	buf_free(&b);
	snprintf(path, sizeof(path), "%s/fuzz/corpus/api", src ? src : ".");
	ck_assert_msg((d = opendir(path)) != NULL, "%s", path);
	data = malloc(1 << 16);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/fuzz/corpus/api/%s",
		    src ? src : ".", de->d_name);
		ck_assert_ptr_nonnull(f = fopen(path, "rb"));
		n = fread(data, 1, 1 << 16, f);
		fclose(f);
		if (n > 1)	/* the harness's header byte first */
			parse_same_all(data + 1, n - 1);
		files++;
	}
	closedir(d);
	free(data);
	ck_assert_uint_gt(files, 5);
}
END_TEST

static Suite *
api_suite(void)
{
	Suite	*s = suite_create("api");
	TCase	*tc;

	tc = tcase_create("openai_requests");
	tcase_add_test(tc, valid_request);
	tcase_add_test(tc, a10_1_api_key_travels);
	tcase_add_test(tc, content_parts_and_images);
	tcase_add_test(tc, wilmer_validation_messages);
	tcase_add_test(tc, model_names_that_are_fine);
	tcase_add_test(tc, begtags_rules);
	tcase_add_test(tc, ollama_chat_requests);
	tcase_add_test(tc, ollama_validation_messages);
	tcase_add_test(tc, ollama_think_field);
	tcase_add_test(tc, ollama_tool_call_without_arguments);
	tcase_add_test(tc, ollama_generate_requests);
	tcase_add_test(tc, legacy_completion_requests);
	suite_add_tcase(s, tc);
	tc = tcase_create("responses");
	tcase_add_test(tc, stream_shapes);
	tcase_add_test(tc, stream_error_then_done);
	tcase_add_test(tc, whole_answer_and_errors);
	tcase_add_test(tc, ollama_stream_shapes);
	tcase_add_test(tc, ollama_tool_call_shapes);
	tcase_add_test(tc, ollama_thinking_hidden);
	tcase_add_test(tc, generate_and_completion_whole);
	tcase_add_test(tc, tool_call_deltas_merge);
	tcase_add_test(tc, owui_tool_request_seen);
	tcase_add_test(tc, scanned_frames_match_the_tree);
	tcase_add_test(tc, embed_requests);
	tcase_add_test(tc, embed_answers);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(api_suite());
}
