/* check_api.c - OpenAI request parsing into REQ_START and the response builder's shapes. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../gateway/api.h"
#include "../gateway/resp.h"
#include "../proto/proto.h"
#include "testmain.h"

static struct api_req	 A;
static struct proto_msg	 M;

/* Parse body; on success decode the REQ_START frame into M. */
static int
parse(const char *body, int *status, char *err)
{
	char	 perr[PROTO_ERRLEN];

	if (api_openai_chat(body, strlen(body), "rq-1", 5000, &A, status,
	    err) == -1)
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

static void
bad(const char *body, int want_status, const char *want)
{
	int	 st = 0;
	char	 err[API_ERRLEN];

	ck_assert_int_eq(api_openai_chat(body, strlen(body), "r", 0, &A, &st,
	    err), -1);
	ck_assert_int_eq(st, want_status);
	ck_assert_msg(strstr(err, want) != NULL, "got '%s', want '%s'", err,
	    want);
	ck_assert_ptr_null(A.ar_model);
	ck_assert_ptr_null(A.ar_start.b_data);
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
	    "content");
	bad("{\"stream\":\"yes\",\"messages\":[]}", 400, "'stream'");
	bad("{\"model\":7,\"messages\":[]}", 400, "'model'");
}
END_TEST

static const struct resp_ctx RC = { API_OPENAI_CHAT, "chatcmpl-1",
    "u:wf", 1700000000, true };

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
				    0, STR_NULL_INIT, STR_NULL_INIT, false };
	json_t			*a;
	int			 ndone;

	resp_stream_open(&b, &RC);
	resp_stream_chunk(&b, &RC, &c);
	c.content = STR_NULL;
	resp_stream_chunk(&b, &RC, &c);	/* empty: nothing */
	resp_stream_close(&b, &RC, &d);
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
				    STR_NULL_INIT, STR_NULL_INIT, false };
	json_t			*j;

	buf_adds(&text, "caf\xc3\xa9 \xff!");	/* invalid byte kept safe */
	resp_whole(&b, &RC, &text, &r, &d);
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

static Suite *
api_suite(void)
{
	Suite	*s = suite_create("api");
	TCase	*tc;

	tc = tcase_create("openai_requests");
	tcase_add_test(tc, valid_request);
	tcase_add_test(tc, content_parts_and_images);
	tcase_add_test(tc, wilmer_validation_messages);
	suite_add_tcase(s, tc);
	tc = tcase_create("responses");
	tcase_add_test(tc, stream_shapes);
	tcase_add_test(tc, stream_error_then_done);
	tcase_add_test(tc, whole_answer_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(api_suite());
}
