/* check_ask.c - one LLM call of a workflow against mock-llm: a node's fields (worker/llm/ask.c), one attempt with its cleaner, tools and usage (attempt.c), retries and failover. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/tokens.h"
#include "../../worker/core/msgs_edit.h"
#include "../../worker/core/vars.h"
#include "../../worker/llm/ask_node.h"
#include "../../worker/llm/transport.h"
#include "../testmain.h"
#include "nodefix.h"

/* Every test (each runs in its own process) has a node (tests/nodefix.h)
 * whose endpoints are the mock: a Standard node on endpoint "Mock" with
 * preset "Mock" (temperature 0.5), the streaming responder of the
 * top-level workflow. */
static struct nodefix	 F;

static void
setup(void)
{
	nodefix_init(&F, true);
	ck_assert_int_eq(transport_init(), 0);
	nodefix_set(&F, "{s:s, s:s, s:i}", "endpointName", "Mock", "preset",
	    "Mock", "maxResponseSizeInTokens", 50);
}

static void
teardown(void)
{
	transport_cleanup();
	nodefix_free(&F);
}

/* The user's message, with the mock's script. */
static void
say(const char *text)
{
	nodefix_conv(&F, "user", text, (char *)NULL);
}

/* Run the node's call; out gets its text (as a string). */
static int
ask(struct buf *out, struct wresult *res)
{
	int	 rc;

	memset(res, 0, sizeof(*res));
	buf_reset(out);
	rc = ask_node(&F.nf_x, out, res);
	buf_addc(out, '\0');
	out->b_len--;
	return rc;
}

/* The fake loop's content so far, as a string (borrowed). */
static const char *
emitted(void)
{
	struct buf	*b = &F.nf_rq.fr_text;

	buf_addc(b, '\0');
	b->b_len--;
	return b->b_data;
}

/* The bodies the mock received, oldest first (caller decrefs). */
static json_t *
requests(void)
{
	return it_mock_log(&F.nf_it, false);
}

static json_t *
body_of(json_t *log, size_t i)
{
	return json_object_get(json_array_get(log, i), "body");
}

/* An OpenAI chat endpoint name at the mock whose api type takes the
 * "OpenAI" presets, with extra members ("" or ", \"key\": value"). */
static void
endpoint(const char *name, const char *ep_extra)
{
	nodefix_backend(&F, name, "openAIChatCompletion",
	    ", \"presetType\": \"OpenAI\"", ep_extra);
}

/* ---- one call ---- */

/* A streaming responder: its tokens reach the loop as they come, the
 * node gets the whole text, the request its finish and the backend's
 * usage; the phase names the endpoint. */
START_TEST(streams_to_loop)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*log;

	say("hi\n#mock {\"text\": \"one two\"}");
	ck_assert_int_eq(ask(&out, &res), 0);
	ck_assert_str_eq(out.b_data, "one two");
	ck_assert_str_eq(emitted(), "one two");
	ck_assert_int_eq(F.nf_rq.fr_emits, 2);
	ck_assert_str_eq(res.r_finish, "stop");
	ck_assert(!res.r_usage_estimated);
	ck_assert_int_eq(res.r_completion_tokens, 2);
	ck_assert_int_gt(res.r_prompt_tokens, 0);
	ck_assert_str_eq(F.nf_rq.fr_phase, "wf node 3/5: waiting for Mock");
	log = requests();
	ck_assert_int_eq(json_integer_value(json_object_get(body_of(log, 0),
	    "max_tokens")), 50);
	ck_assert(json_real_value(json_object_get(body_of(log, 0),
	    "temperature")) == 0.5);
	json_decref(log);
	buf_free(&out);
}
END_TEST

/* A call that does not stream to the client emits nothing. */
START_TEST(whole_not_emitted)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	F.nf_x.nx_stream = false;
	say("hi\n#mock {\"text\": \"one two\"}");
	ck_assert_int_eq(ask(&out, &res), 0);
	ck_assert_str_eq(out.b_data, "one two");
	ck_assert_int_eq(F.nf_rq.fr_emits, 0);
	ck_assert_int_eq(res.r_completion_tokens, 2);
	buf_free(&out);
}
END_TEST

/* Without the backend's counts the usage is estimated (and says so);
 * a node that is not the responder leaves the request's usage alone. */
START_TEST(usage_estimated)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	nodefix_backend(&F, "Quiet", "openAIChatCompletion",
	    ", \"streamIncludeUsage\": false", "");
	nodefix_set(&F, "{s:s, s:s}", "endpointName", "Quiet", "preset", "");
	say("hi\n#mock {\"text\": \"one two three four\"}");
	ck_assert_int_eq(ask(&out, &res), 0);
	ck_assert(res.r_usage_estimated);
	ck_assert_int_eq(res.r_completion_tokens, tokens_estimate(out.b_data,
	    out.b_len, TOKENS_MARGIN));
	ck_assert_int_gt(res.r_completion_tokens, 0);
	ck_assert_int_gt(res.r_prompt_tokens, 0);
	F.nf_x.nx_responder = false;
	ck_assert_int_eq(ask(&out, &res), 0);
	ck_assert_str_eq(out.b_data, "one two three four");
	ck_assert_str_eq(res.r_finish, "");
	ck_assert_int_eq(res.r_completion_tokens, 0);
	ck_assert(!res.r_usage_estimated);
	buf_free(&out);
}
END_TEST

/* allowTools: the request's tools go to the backend, and its tool
 * calls come back to the client as one chunk, each with its index,
 * streamed or not (Claude's whole answers number none themselves). */
START_TEST(tool_calls_emitted)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*log, *calls;
	int		 i;

	F.nf_x.nx_tools = "[{\"type\": \"function\", \"function\": {\"name\": "
	    "\"f\", \"parameters\": {}}}]";
	say("hi\n#mock {\"tool_calls\": [{\"name\": \"f\", \"arguments\": "
	    "{\"a\": 1}}, {\"name\": \"g\"}]}");
	ck_assert_int_eq(ask(&out, &res), 0);
	log = requests();
	ck_assert_ptr_null(json_object_get(body_of(log, 0), "tools"));
	json_decref(log);
	nodefix_set(&F, "{s:b}", "allowTools", 1);
	nodefix_backend(&F, "Claude", "claudeMessages",
	    ", \"presetType\": \"OpenAI\"", "");
	for (i = 0; i < 3; i++) {
		F.nf_x.nx_stream = i == 0;
		if (i == 2)
			nodefix_set(&F, "{s:s}", "endpointName", "Claude");
		buf_reset(&F.nf_rq.fr_tools);
		ck_assert_int_eq(ask(&out, &res), 0);
		ck_assert_str_eq(res.r_finish, "tool_calls");
		log = requests();
		ck_assert_ptr_nonnull(json_object_get(body_of(log,
		    (size_t)i + 1), "tools"));
		json_decref(log);
		buf_addc(&F.nf_rq.fr_tools, '\0');
		calls = it_json(F.nf_rq.fr_tools.b_data);
		ck_assert_uint_eq(json_array_size(calls), 2);
		ck_assert_int_eq(json_integer_value(json_object_get(
		    json_array_get(calls, 0), "index")), 0);
		ck_assert_int_eq(json_integer_value(json_object_get(
		    json_array_get(calls, 1), "index")), 1);
		ck_assert_str_eq(json_string_value(json_object_get(
		    json_object_get(json_array_get(calls, 1), "function"),
		    "name")), "g");
		json_decref(calls);
	}
	buf_free(&out);
}
END_TEST

/* endpointName and preset see only the early variables; the default
 * answer length is 400; a node without endpointName
 * fails. */
START_TEST(of_node)
{
	struct llm_ask	 a;
	struct wresult	 res;
	struct buf	 out = BUF_INIT;
	struct vars	*early = vars_new();

	vars_set(early, "ep", "Mock");
	vars_set(F.nf_vars, "ep", "Other");
	F.nf_x.nx_early = early;
	json_object_del(F.nf_node, "maxResponseSizeInTokens");
	nodefix_set(&F, "{s:s, s:s, s:s}", "endpointName", "{ep}", "preset",
	    "{ep}x", "systemPrompt", "S {name}");
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(ask_of_node(&F.nf_x, &a, &res), 0);
	ck_assert_str_eq(a.la_endpoint, "Mock");
	ck_assert_str_eq(a.la_preset, "Mockx");
	ck_assert_str_eq(a.la_system, "S {name}");
	ck_assert_ptr_null(a.la_prompt);
	ck_assert_int_eq(a.la_max_tokens, 400);
	ck_assert_ptr_eq(a.la_opts, F.nf_node);
	ask_clear(&a);
	json_object_clear(F.nf_node);
	nodefix_set(&F, "{s:s}", "type", "Standard");
	ck_assert_int_eq(ask(&out, &res), -1);
	nodefix_ck_fail(&res, 500, "no endpointName");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 0);
	vars_free(early);
	buf_free(&out);
}
END_TEST

/* The response filters shape the client's answer only; an agent
 * output keeps the whole text. A cleaner setting that is wrong fails
 * the node. */
START_TEST(filters_for_the_client)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	nodefix_user(&F, "responseFilters", json_pack("[{s:s, s:i}]", "type",
	    "maxLength", "maxChars", 3));
	say("hi\n#mock {\"text\": \"one two\"}");
	ck_assert_int_eq(ask(&out, &res), 0);
	ck_assert_str_eq(out.b_data, "one\n\n[Response truncated]");
	F.nf_x.nx_deliver = F.nf_x.nx_responder = F.nf_x.nx_stream = false;
	ck_assert_int_eq(ask(&out, &res), 0);
	ck_assert_str_eq(out.b_data, "one two");
	it_mock_endpoint(&F.nf_it, "\"reasoningOutput\": \"sideways\"");
	ck_assert_int_eq(ask(&out, &res), -1);
	nodefix_ck_fail(&res, 500, "reasoningOutput");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 2);
	buf_free(&out);
}
END_TEST

/* ImageProcessor's call carries exactly its one image, on the last
 * user message. */
START_TEST(one_image)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*log, *msgs, *m, *part;
	size_t		 i, j, images = 0;

	nodefix_conv(&F, "user", "look", "assistant", "ok", (char *)NULL);
	wmsg_add_image(&F.nf_msgs.v[0], "data:image/png;base64,AAAA");
	say("and this");
	F.nf_x.nx_image = "data:image/png;base64,BBBB";
	nodefix_set(&F, "{s:b}", "acceptImages", 1);
	ck_assert_int_eq(ask(&out, &res), 0);
	log = requests();
	msgs = json_object_get(body_of(log, 0), "messages");
	json_array_foreach(msgs, i, m)
		json_array_foreach(json_object_get(m, "content"), j, part)
			if (json_object_get(part, "image_url") != NULL) {
				images++;
				ck_assert_uint_eq(i, json_array_size(msgs) - 1);
				ck_assert_str_eq(json_string_value(
				    json_object_get(json_object_get(part,
				    "image_url"), "url")),
				    "data:image/png;base64,BBBB");
			}
	ck_assert_uint_eq(images, 1);
	json_decref(log);
	buf_free(&out);
}
END_TEST

/* ---- retries ---- */

/* The mock's arrival times of requests i and i + 1, apart. */
static long long
gap_ms(json_t *log, size_t i)
{
	return json_integer_value(json_object_get(json_array_get(log, i + 1),
	    "t_ms")) - json_integer_value(json_object_get(json_array_get(log,
	    i), "t_ms"));
}

/* A 5xx from an endpoint without backup is tried again, 1 s then 2 s
 * later: a backend that recovers on the third call answers. */
START_TEST(retry_then_success)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*log;

	say("hi\n#mock {\"status\": 503, \"status_times\": 2, \"text\": "
	    "\"back\"}");
	ck_assert_msg(ask(&out, &res) == 0, "%s", res.r_message);
	ck_assert_int_eq(res.r_status, RQ_OK);
	ck_assert_str_eq(out.b_data, "back");
	ck_assert_str_eq(emitted(), "back");
	log = requests();
	ck_assert_uint_eq(json_array_size(log), 3);
	ck_assert_int_ge(gap_ms(log, 0), 900);
	ck_assert_int_ge(gap_ms(log, 1), 1900);
	json_decref(log);
	buf_free(&out);
}
END_TEST

/* Three attempts at most; the last answer is the error. */
START_TEST(retries_exhausted)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	say("hi\n#mock {\"status\": 500}");
	ck_assert_int_eq(ask(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 502);
	ck_assert_int_eq(res.r_upstream, 500);
	ck_assert_str_eq(res.r_endpoint, "Mock");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 3);
	buf_free(&out);
}
END_TEST

/* Only a server's 500, 502, 503, 504 or a refused connection is tried
 * again: a refusal of the request, a rate limit (passed on with its
 * Retry-After) or another status is not. */
START_TEST(not_retried)
{
	static const struct {
		const char	*script;
		int		 http;
	} c[] = {
		{ "#mock {\"status\": 400}", 400 },
		{ "#mock {\"status\": 429, \"retry_after\": \"7\"}", 429 },
		{ "#mock {\"status\": 401}", 502 },
		{ "#mock {\"status\": 501}", 502 },
	};
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	size_t		 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		wmsgs_free(&F.nf_msgs);
		say(c[i].script);
		ck_assert_int_eq(ask(&out, &res), -1);
		ck_assert_int_eq(res.r_http, c[i].http);
		ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"),
		    (long long)i + 1);
	}
	ck_assert_int_eq(res.r_http, 502);
	wmsgs_free(&F.nf_msgs);
	say(c[1].script);
	ck_assert_int_eq(ask(&out, &res), -1);
	ck_assert_str_eq(res.r_retry_after, "7");
	buf_free(&out);
}
END_TEST

/* A request stopped while waiting to try again ends cancelled. */
START_TEST(retry_stops_on_cancel)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	F.nf_rq.fr_cancel_at = 1;
	say("hi\n#mock {\"status\": 503}");
	ck_assert_int_eq(ask(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 1);
	buf_free(&out);
}
END_TEST

/* Once the client has tokens, a failure is final. */
START_TEST(no_retry_after_tokens)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	say("hi\n#mock {\"text\": \"a b c d\", \"disconnect_after\": 2}");
	ck_assert_int_eq(ask(&out, &res), -1);
	ck_assert_int_eq(res.r_http, 502);
	ck_assert_str_eq(emitted(), "a b");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 1);
	buf_free(&out);
}
END_TEST

/* ---- failover ---- */

/* On failure the call moves to backupEndpointName at once (no retries
 * where there is a backup), with backupPresetName; a backup without
 * one of its own keeps the preset it was given. */
START_TEST(failover_chain)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*log;

	it_mock_endpoint(&F.nf_it, "\"backupEndpointName\": \"B\", "
	    "\"backupPresetName\": \"Hot\"");
	it_file(&F.nf_it, "Presets/OpenAI/it/Hot.json",
	    "{\"temperature\": 0.9}\n");
	endpoint("B", ", \"backupEndpointName\": \"C\"");
	endpoint("C", "");
	say("hi\n#mock {\"status\": 500, \"status_times\": 2, \"text\": "
	    "\"from C\"}");
	ck_assert_msg(ask(&out, &res) == 0, "%s", res.r_message);
	ck_assert_str_eq(out.b_data, "from C");
	ck_assert_str_eq(emitted(), "from C");
	log = requests();
	ck_assert_uint_eq(json_array_size(log), 3);
	ck_assert_str_eq(json_string_value(json_object_get(body_of(log, 0),
	    "model")), "mock-model");
	ck_assert(json_real_value(json_object_get(body_of(log, 0),
	    "temperature")) == 0.5);
	ck_assert(json_real_value(json_object_get(body_of(log, 1),
	    "temperature")) == 0.9);
	ck_assert(json_real_value(json_object_get(body_of(log, 2),
	    "temperature")) == 0.9);
	ck_assert_str_eq(json_string_value(json_object_get(body_of(log, 2),
	    "model")), "m");
	ck_assert_str_eq(F.nf_rq.fr_phase, "wf node 3/5: waiting for C");
	json_decref(log);
	buf_free(&out);
}
END_TEST

/* An endpoint that cannot be reached fails over too. */
START_TEST(failover_from_unreachable)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	char		 url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", it_dead_port());
	it_backend(&F.nf_it, NULL, "Gone", "openAIChatCompletion", url,
	    ", \"presetType\": \"OpenAI\"",
	    ", \"backupEndpointName\": \"Mock\"");
	nodefix_set(&F, "{s:s}", "endpointName", "Gone");
	say("hi\n#mock {\"text\": \"here\"}");
	ck_assert_msg(ask(&out, &res) == 0, "%s", res.r_message);
	ck_assert_str_eq(out.b_data, "here");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 1);
	buf_free(&out);
}
END_TEST

/* A chain that comes back to an endpoint already tried (or an
 * endpoint that is its own backup) stops there, with the last
 * failure's cause. */
START_TEST(failover_cycle)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	it_mock_endpoint(&F.nf_it, "\"backupEndpointName\": \"B\"");
	endpoint("B", ", \"backupEndpointName\": \"Mock\"");
	say("hi\n#mock {\"status\": 500}");
	ck_assert_int_eq(ask(&out, &res), -1);
	nodefix_ck_fail(&res, 500, "failover cycle detected: endpoint 'Mock' "
	    "is already in the chain (after 'B': endpoint 'B' (");
	ck_assert_msg(strstr(res.r_message, "answered HTTP 500") != NULL, "%s",
	    res.r_message);
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 2);
	endpoint("B", ", \"backupEndpointName\": \"B\"");
	ck_assert_int_eq(ask(&out, &res), -1);
	nodefix_ck_fail(&res, 500, "failover cycle detected: endpoint 'B' "
	    "is already in the chain (after 'B': ");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 4);
	buf_free(&out);
}
END_TEST

/* At most 16 endpoints for one call. */
START_TEST(failover_chain_limit)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	char		 name[16], extra[64], url[64];
	int		 i;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", it_dead_port());
	for (i = 0; i <= 16; i++) {
		snprintf(name, sizeof(name), "E%d", i);
		snprintf(extra, sizeof(extra), ", \"backupEndpointName\": "
		    "\"E%d\"", i + 1);
		it_backend(&F.nf_it, NULL, name, "openAIChatCompletion", url,
		    "", extra);
	}
	nodefix_set(&F, "{s:s, s:s}", "endpointName", "E0", "preset", "");
	say("hi");
	ck_assert_int_eq(ask(&out, &res), -1);
	nodefix_ck_fail(&res, 500, "failover chain longer than 16 endpoints");
	buf_free(&out);
}
END_TEST

/* A backup on a public address needs its own allowRemoteBackup: the
 * call is refused before anything is sent there. A backup that does
 * not exist is named. */
START_TEST(failover_refused)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	it_mock_endpoint(&F.nf_it, "\"backupEndpointName\": \"R\"");
	it_backend(&F.nf_it, NULL, "R", "openAIChatCompletion",
	    "http://8.8.8.8:9", ", \"presetType\": \"OpenAI\"", "");
	say("hi\n#mock {\"status\": 500}");
	ck_assert_int_eq(ask(&out, &res), -1);
	nodefix_ck_fail(&res, 502, "backup endpoint 'R' (http://8.8.8.8:9) is "
	    "on a public address");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 1);
	it_mock_endpoint(&F.nf_it, "\"backupEndpointName\": \"Nowhere\"");
	ck_assert_int_eq(ask(&out, &res), -1);
	nodefix_ck_fail(&res, 500, "Endpoints/it/Nowhere.json");
	buf_free(&out);
}
END_TEST

/* No failover once the client has tokens, nor after a cancel. */
START_TEST(no_failover_after_tokens_or_cancel)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	it_mock_endpoint(&F.nf_it, "\"backupEndpointName\": \"B\"");
	endpoint("B", "");
	say("hi\n#mock {\"text\": \"a b c d\", \"disconnect_after\": 2}");
	ck_assert_int_eq(ask(&out, &res), -1);
	ck_assert_int_eq(res.r_http, 502);
	ck_assert_str_eq(res.r_endpoint, "Mock");
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 1);
	wmsgs_free(&F.nf_msgs);
	F.nf_rq.fr_cancel_at = F.nf_rq.fr_wakes + F.nf_rq.fr_stops + 2;
	say("hi\n#mock {\"forever\": true, \"delay_ms\": 20}");
	ck_assert_int_eq(ask(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_int_eq(it_mock_stat(&F.nf_it, "requests"), 2);
	buf_free(&out);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "streams_to_loop", streams_to_loop },
		{ "whole_not_emitted", whole_not_emitted },
		{ "usage_estimated", usage_estimated },
		{ "tool_calls_emitted", tool_calls_emitted },
		{ "of_node", of_node },
		{ "filters_for_the_client", filters_for_the_client },
		{ "one_image", one_image },
		{ "retry_then_success", retry_then_success },
		{ "retries_exhausted", retries_exhausted },
		{ "not_retried", not_retried },
		{ "retry_stops_on_cancel", retry_stops_on_cancel },
		{ "no_retry_after_tokens", no_retry_after_tokens },
		{ "failover_chain", failover_chain },
		{ "failover_from_unreachable", failover_from_unreachable },
		{ "failover_cycle", failover_cycle },
		{ "failover_chain_limit", failover_chain_limit },
		{ "failover_refused", failover_refused },
		{ "no_failover_after_tokens_or_cancel",
		    no_failover_after_tokens_or_cancel },
	};

	return it_main(it_suite_fixture("ask", cases,
	    sizeof(cases) / sizeof(cases[0]), 20, setup, teardown));
}
