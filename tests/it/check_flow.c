/* check_flow.c - integration: multi-node WilmerAI workflows through the real gateway, workers and mock backend. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

static struct it	 T;

static void
start_with(const char *settings, const char *main_workflow)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	if (main_workflow != NULL)
		it_file(&T, "Workflows/it/Main.json", main_workflow);
}

static void
go(void)
{
	it_gateway_start(&T, NULL);
}

/* An endpoint file for the mock (or url) with extra JSON members. */
static void
endpoint(const char *name, const char *url, const char *apitype,
    const char *extra)
{
	char	 path[256], text[1024], murl[64];

	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d", T.it_mock_port);
	snprintf(path, sizeof(path), "Endpoints/it/%s.json", name);
	snprintf(text, sizeof(text), "{\"endpoint\": \"%s\", "
	    "\"apiTypeConfigFileName\": \"%s\", \"modelNameToSendToAPI\": "
	    "\"%s\", \"promptTemplate\": null, \"maxContextTokenSize\": 4096%s%s}",
	    url != NULL ? url : murl, apitype, name, extra ? ", " : "",
	    extra ? extra : "");
	it_file(&T, path, text);
}

static char *
chat(bool stream, const char *user_text)
{
	json_t	*b = json_pack("{s:s,s:b,s:[{s:s,s:s}]}", "model", "x",
		    "stream", stream, "messages", "role", "user", "content",
		    user_text);
	char	*s = json_dumps(b, 0);

	json_decref(b);
	return s;
}

/* POST a non-streaming chat; returns the answer's content (caller
 * frees) and checks the status. */
static char *
ask(const char *user_text, long want_status)
{
	struct it_resp	 r;
	char		*body = chat(false, user_text), *out;
	json_t		*j;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == want_status, "status %ld, want %ld: %s",
	    r.r_status, want_status, r.r_body.b_data);
	j = it_json(r.r_body.b_data);
	if (want_status == 200)
		out = strdup(json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0),
		    "message"), "content")));
	else
		out = strdup(json_string_value(json_object_get(json_object_get(
		    j, "error"), "message")));
	json_decref(j);
	it_resp_free(&r);
	free(body);
	return out;
}

/* Message i of backend request k's body, as "role: content". */
static char *
sent_msg(json_t *log, size_t k, size_t i)
{
	json_t	*m = json_array_get(json_object_get(json_object_get(
		    json_array_get(log, k), "body"), "messages"), i);
	char	*s;

	ck_assert_ptr_nonnull(m);
	if (asprintf(&s, "%s: %s", json_string_value(json_object_get(m,
	    "role")), json_string_value(json_object_get(m, "content"))) == -1)
		abort();
	return s;
}

#define ASSERT_SENT(log, k, i, want) do {				\
	char *s_ = sent_msg(log, k, i);					\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

START_TEST(agent_outputs_chain)
{
	json_t	*log;
	char	*a;

	start_with(NULL, "{\"persona\": \"You are terse.\", \"nodes\": ["
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", \"preset\":"
	    " \"Mock\", \"systemPrompt\": \"Summarise.\", \"prompt\": "
	    "\"{chat_user_prompt_last_one}\\n#mock {\\\"text\\\": \\\"alpha "
	    "beta\\\"}\"},"
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", \"preset\":"
	    " \"Mock\", \"systemPrompt\": \"{persona} Summary: {agent1Output}\","
	    " \"prompt\": \"\", \"lastMessagesToSendInsteadOfPrompt\": 3}]}");
	go();
	a = ask("What is up?", 200);
	ck_assert_str_eq(a, "The quick brown fox jumps over the lazy dog.");
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 2);
	ASSERT_SENT(log, 0, 0, "system: Summarise.");
	ASSERT_SENT(log, 0, 1, "user: What is up?\n#mock {\"text\": \"alpha "
	    "beta\"}");
	ASSERT_SENT(log, 1, 0, "system: You are terse. Summary: alpha beta");
	ASSERT_SENT(log, 1, 1, "user: What is up?");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* The client has its answer before the nodes after the responder end. */
START_TEST(post_responder_nodes_run_after_the_answer)
{
	json_t		*log;
	char		*a;
	uint64_t	 t0, waited;

	start_with("\"min_workers\": 1, \"max_workers\": 1", "{\"nodes\": ["
	    "{\"type\": \"StaticResponse\", \"content\": \"Hello there\", "
	    "\"returnToUser\": true},"
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", \"prompt\":"
	    " \"Remember: {agent1Output}\\n#mock {\\\"head_delay_ms\\\": "
	    "1200}\"}]}");
	go();
	t0 = it_now();
	a = ask("hi", 200);
	waited = it_now() - t0;
	ck_assert_str_eq(a, "Hello there");
	free(a);
	ck_assert_msg(waited < 900, "answered after %llu ms",
	    (unsigned long long)waited);
	/* The post-responder call happens, with the responder's output. */
	for (t0 = it_now(); it_now() - t0 < 5000; it_sleep(50)) {
		log = it_mock_log(&T, false);
		if (json_array_size(log) == 1 && !json_is_null(json_object_get(
		    json_array_get(log, 0), "t_end_ms")))
			break;
		json_decref(log);
		log = NULL;
	}
	ck_assert_ptr_nonnull(log);
	ASSERT_SENT(log, 0, 0, "user: Remember: Hello there\n#mock "
	    "{\"head_delay_ms\": 1200}");
	json_decref(log);
	a = ask("again", 200);		/* the worker is free again */
	free(a);
	it_stop_clean(&T);
}
END_TEST

START_TEST(nested_workflow_streams_through_parent)
{
	char			*body = chat(true, "Tell me");
	struct it_stream	 s[1] = { { .s_body = body } };
	struct sse_summary	 ss;
	json_t			*log;

	start_with(NULL, "{\"nodes\": ["
	    "{\"type\": \"StaticResponse\", \"content\": \"context-A\"},"
	    "{\"type\": \"CustomWorkflow\", \"workflowName\": \"Child\", "
	    "\"scoped_variables\": [\"{agent1Output}\", \"{chat_user_prompt_"
	    "last_one}\"], \"is_responder\": true}]}");
	it_file(&T, "Workflows/it/Child.json", "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"Mock\", \"systemPrompt\": \"In: {agent1Input} "
	    "/ {agent2Input} / {agent1Output}\", \"prompt\": \"\"}]");
	go();
	it_streams(&T, s, 1, 20000, NULL, NULL);
	ck_assert_int_eq(s[0].s_status, 200);
	it_sse_parse(s[0].s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text,
	    "The quick brown fox jumps over the lazy dog.");
	ck_assert(ss.ss_done && !ss.ss_error);
	ck_assert_int_gt(ss.ss_chunks, 5);	/* streamed, not one piece */
	free(ss.ss_text);
	log = it_mock_log(&T, false);
	/* The child sees its inputs, not the parent's outputs. */
	ASSERT_SENT(log, 0, 0, "system: In: context-A / Tell me / "
	    "{agent1Output}");
	ck_assert(json_is_true(json_object_get(json_object_get(json_array_get(
	    log, 0), "body"), "stream")));
	json_decref(log);
	buf_free(&s[0].s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(conditional_workflow_picks_by_key)
{
	char	*a;

	start_with(NULL, "{\"nodes\": ["
	    "{\"type\": \"StaticResponse\", \"content\": \"  Yes \"},"
	    "{\"type\": \"ConditionalCustomWorkflow\", \"conditionalKey\": "
	    "\"{agent1Output}\", \"conditionalWorkflows\": {\"YES\": \"A\", "
	    "\"Default\": \"B\"}, \"routeOverrides\": {\"yes\": "
	    "{\"systemPromptOverride\": \"overridden {agent1Output}\"}}}]}");
	it_file(&T, "Workflows/it/A.json", "[{\"type\": \"StaticResponse\", "
	    "\"systemPrompt\": \"x\", \"content\": \"went A\"}]");
	it_file(&T, "Workflows/it/B.json", "[{\"type\": \"StaticResponse\", "
	    "\"content\": \"went B\"}]");
	go();
	a = ask("hi", 200);
	ck_assert_str_eq(a, "went A");
	free(a);
	/* No match and no default: UseDefaultContentInsteadOfWorkflow. */
	it_file(&T, "Workflows/it/Main.json", "{\"nodes\": ["
	    "{\"type\": \"StaticResponse\", \"content\": \"maybe\"},"
	    "{\"type\": \"ConditionalCustomWorkflow\", \"conditionalKey\": "
	    "\"{agent1Output}\", \"conditionalWorkflows\": {\"yes\": \"A\"}, "
	    "\"UseDefaultContentInsteadOfWorkflow\": \"fallback {agent1Output}"
	    "\"}]}");
	a = ask("hi", 200);
	ck_assert_str_eq(a, "fallback maybe");
	free(a);
	it_stop_clean(&T);
}
END_TEST

/* Spec 10: the categoriser's word picks the category (substring,
 * upper-cased, punctuation gone); no match runs _DefaultWorkflow. */
START_TEST(prompt_routing)
{
	char	*a;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	it_file(&T, "Users/it.json", "{\"chatCompleteAddUserAssistant\": "
	    "false, \"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"endpointConfigsSubDirectory\": \"it\", \"routingConfig\": "
	    "\"Cats\", \"categorizationWorkflow\": \"Categorise\"}");
	it_file(&T, "Routing/Cats.json", "{\"CODING\": {\"description\": "
	    "\"Code\", \"workflow\": \"Coder\"}, \"GENERAL\": {\"description\":"
	    " \"Other\", \"workflow\": \"General\"}}");
	it_file(&T, "Workflows/it/Categorise.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"Answer: generally, "
	    "{categoriesSeparatedByOr}.\"}]");
	it_file(&T, "Workflows/it/General.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"general answer\"}]");
	it_file(&T, "Workflows/it/Coder.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"coder answer\"}]");
	it_file(&T, "Workflows/it/_DefaultWorkflow.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"default answer\"}]");
	go();
	a = ask("hi", 200);
	ck_assert_str_eq(a, "general answer");	/* GENERALLY has GENERAL */
	free(a);
	it_file(&T, "Workflows/it/Categorise.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"no idea\"}]");
	a = ask("hi", 200);
	ck_assert_str_eq(a, "default answer");
	free(a);
	it_stop_clean(&T);
}
END_TEST

START_TEST(static_response_streams_word_by_word)
{
	char			*body = chat(true, "x");
	struct it_stream	 s[1] = { { .s_body = body } };
	struct sse_summary	 ss;

	start_with(NULL, "[{\"type\": \"StaticResponse\", \"content\": "
	    "\"one two  three\"}]");
	go();
	it_streams(&T, s, 1, 10000, NULL, NULL);
	it_sse_parse(s[0].s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "one two  three");
	/* role chunk + 5 pieces + finish chunk */
	ck_assert_int_eq(ss.ss_chunks, 7);
	free(ss.ss_text);
	buf_free(&s[0].s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(failover_to_backup_endpoint)
{
	json_t	*log;
	char	*a;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Down\", \"preset\": \"Mock\", \"prompt\": \"hi\"}]");
	endpoint("Down", "http://127.0.0.1:9", "Open-AI-API",
	    "\"backupEndpointName\": \"Mock\"");
	go();
	a = ask("x", 200);
	ck_assert_str_eq(a, "The quick brown fox jumps over the lazy dog.");
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(log, 0), "body"), "model")), "mock-model");
	json_decref(log);
	/* A chain that comes back to itself is refused, naming the cycle. */
	endpoint("Down", "http://127.0.0.1:9", "Open-AI-API",
	    "\"backupEndpointName\": \"Down2\"");
	endpoint("Down2", "http://127.0.0.1:9", "Open-AI-API",
	    "\"backupEndpointName\": \"Down\"");
	a = ask("x", 500);
	ck_assert_msg(strstr(a, "failover cycle") != NULL, "%s", a);
	free(a);
	it_stop_clean(&T);
}
END_TEST

/* Issue 10: a call that cannot get a slot in time moves to the backup. */
START_TEST(slot_timeout_fails_over)
{
	char			*hold = chat(true, "x");
	struct it_stream	 s[1] = { { .s_body = hold } };
	json_t			*log;
	char			*a;
	pid_t			 child;
	int			 st;

	start_with("\"min_workers\": 2, \"max_workers\": 2, "
	    "\"concurrency_timeout_s\": 0.3", "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"Busy\", \"prompt\": \"{chat_user_prompt_last_"
	    "one}\"}]");
	endpoint("Busy", NULL, "Open-AI-API", "\"maxConcurrentRequests\": 1, "
	    "\"backupEndpointName\": \"Spare\"");
	endpoint("Spare", NULL, "Open-AI-API", NULL);
	go();
	it_wait_idle(&T, 2);	/* else the second request queues for a worker */
	free(hold);
	hold = chat(true, "#mock {\"delay_ms\": 150}");
	s[0].s_body = hold;
	/* One stream holds Busy for ~1.4 s; meanwhile ask once more. */
	if ((child = fork()) == 0) {
		it_sleep(200);
		a = ask("second", 200);
		_exit(strcmp(a, "The quick brown fox jumps over the lazy "
		    "dog.") == 0 ? 0 : 1);
	}
	it_streams(&T, s, 1, 20000, NULL, NULL);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(log, 0), "body"), "model")), "Busy");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(log, 1), "body"), "model")), "Spare");
	json_decref(log);
	buf_free(&s[0].s_out);
	free(hold);
	it_stop_clean(&T);
}
END_TEST

START_TEST(discussion_id_and_chat_rewriting)
{
	json_t	*log;
	char	*a;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"systemPrompt\": \"id={Discussion_Id}\", \"prompt\": "
	    "\"\", \"lastMessagesToSendInsteadOfPrompt\": 5}]");
	it_file(&T, "Users/it.json", "{\"customWorkflowOverride\": true, "
	    "\"customWorkflow\": \"Main\", \"chatCompleteAddUserAssistant\": "
	    "true, \"chatCompletionAddMissingAssistantGenerator\": true, "
	    "\"endpointConfigsSubDirectory\": \"it\"}");
	go();
	a = ask("[DiscussionId]talk-7[/DiscussionId]Hello", 200);
	free(a);
	log = it_mock_log(&T, false);
	ASSERT_SENT(log, 0, 0, "system: id=talk-7");
	ASSERT_SENT(log, 0, 1, "user: User: Hello");
	ASSERT_SENT(log, 0, 2, "assistant: Assistant:");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* A completion endpoint's broken prompt template: the worker answers
 * 500 with the message --check-config gives (common/conf_template.c),
 * naming file and line. */
START_TEST(broken_prompt_template_is_500_naming_the_file)
{
	char	*a, url[64];
	char	 text[512];

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Templ\", \"preset\": \"Mock\", \"prompt\": \"hi\"}]");
	go();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", T.it_mock_port);
	it_file(&T, "ApiTypes/Compl.json", "{\"type\": \"openAIV1Completion\", "
	    "\"presetType\": \"OpenAI\", \"maxNewTokensPropertyName\": "
	    "\"max_tokens\"}");
	snprintf(text, sizeof(text), "{\"endpoint\": \"%s\", "
	    "\"apiTypeConfigFileName\": \"Compl\", "
	    "\"modelNameToSendToAPI\": \"m\", \"promptTemplate\": "
	    "\"broken\", \"maxContextTokenSize\": 4096}", url);
	it_file(&T, "Endpoints/it/Templ.json", text);
	it_file(&T, "PromptTemplates/broken.json",
	    "{\"promptTemplateUserPrefix\": \"a\",\n"
	    " \"promptTemplateUserSuffix\": [1]}");
	a = ask("x", 500);
	ck_assert_msg(strstr(a, "PromptTemplates/broken.json:2:2: "
	    "'promptTemplateUserSuffix' must be a string, not a list") !=
	    NULL, "%s", a);
	free(a);
	it_file(&T, "PromptTemplates/broken.json", "");
	a = ask("x", 500);
	ck_assert_msg(strstr(a, "PromptTemplates/broken.json:") != NULL, "%s",
	    a);
	free(a);
	it_stop_clean(&T);
}
END_TEST

/* Issue 5: cancelling a request reaches the backend call of a nested
 * workflow too. */
START_TEST(disconnect_cancels_nested_call)
{
	char		*body = chat(true, "#mock {\"forever\": true, "
			    "\"delay_ms\": 20}");
	char		*req;
	struct buf	 resp = BUF_INIT;
	struct it_resp	 r;
	json_t		*j;
	uint64_t	 t0;
	int		 gone = 0;

	start_with(NULL, "[{\"type\": \"CustomWorkflow\", \"workflowName\": "
	    "\"Child\"}]");
	it_file(&T, "Workflows/it/Child.json", "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"Mock\", \"prompt\": \"\"}]");
	go();
	if (asprintf(&req, "POST /v1/chat/completions HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n%s", T.it_port, strlen(body),
	    body) == -1)
		abort();
	it_raw(&T, req, strlen(req), &resp, 400);
	ck_assert_ptr_nonnull(strstr(resp.b_data, "data: "));
	for (t0 = it_now(); it_now() - t0 < 2000 && gone == 0; it_sleep(20)) {
		ck_assert_int_eq(it_request(&T, "GET", "mock:/mock/stats", NULL,
		    &r), 0);
		j = it_json(r.r_body.b_data);
		gone = (int)json_integer_value(json_object_get(j,
		    "client_gone"));
		json_decref(j);
		it_resp_free(&r);
	}
	ck_assert_int_eq(gone, 1);
	ck_assert_uint_lt(it_now() - t0, 1000);
	buf_free(&resp);
	free(req);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* Without a backup, a 5xx or a refused connection is tried three times,
 * 1 s then 2 s apart; a 4xx once. The client gets the last answer's
 * status as docs/api.md maps it. */
START_TEST(retries_without_backup)
{
	json_t		*log;
	char		*a;
	uint64_t	 t0;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"prompt\": \"{chat_user_prompt_last_one}\"}]");
	go();
	t0 = it_now();
	a = ask("#mock {\"status\": 503}", 503);
	ck_assert_uint_ge(it_now() - t0, 2900);
	ck_assert_msg(strstr(a, "answered HTTP 503") != NULL, "%s", a);
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 3);
	json_decref(log);
	a = ask("#mock {\"status\": 400}", 400);
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 4);	/* one more */
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* allowTools: the request's tools reach the backend and the backend's
 * tool calls reach the client. */
START_TEST(tool_calls_pass_through)
{
	const char	*body = "{\"model\": \"x\", \"messages\": [{\"role\": "
			    "\"user\", \"content\": \"weather?\\n#mock "
			    "{\\\"tool_calls\\\": [{\\\"name\\\": \\\"get_weather"
			    "\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Paris"
			    "\\\"}}]}\"}], \"tools\": [{\"type\": \"function\", "
			    "\"function\": {\"name\": \"get_weather\", "
			    "\"parameters\": {\"type\": \"object\"}}}]}";
	struct it_resp	 r;
	json_t		*j, *msg, *call, *log;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"prompt\": \"\", \"allowTools\": true}]");
	go();
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	j = it_json(r.r_body.b_data);
	msg = json_object_get(json_array_get(json_object_get(j, "choices"), 0),
	    "message");
	call = json_array_get(json_object_get(msg, "tool_calls"), 0);
	ck_assert_msg(call != NULL, "%s", r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(call,
	    "function"), "name")), "get_weather");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "choices"), 0), "finish_reason")), "tool_calls");
	json_decref(j);
	it_resp_free(&r);
	log = it_mock_log(&T, false);
	ck_assert_ptr_nonnull(json_object_get(json_object_get(json_array_get(
	    log, 0), "body"), "tools"));
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* lowercaseToolCallFunctionNames (addendum A8.3): the responder's
 * tool-call names reach the client lower-cased, streamed and not; the
 * arguments and a node without the flag are left alone. */
START_TEST(tool_call_names_lowercased)
{
	static const char *const nodes[] = {
	    "[{\"type\": \"Standard\", \"endpointName\": \"Mock\", "
	    "\"prompt\": \"\", \"allowTools\": true, "
	    "\"lowercaseToolCallFunctionNames\": true}]",
	    "[{\"type\": \"Standard\", \"endpointName\": \"Mock\", "
	    "\"prompt\": \"\", \"allowTools\": true, "
	    "\"lowercaseToolCallFunctionNames\": false}]" };
	static const char *const want[] = { "\"name\":\"get_\xc3\xa9t\xc3\xa9\"",
	    "\"name\":\"Get_\xc3\x89t\xc3\xa9\"" };
	struct it_resp	 r;
	char		*body;
	int		 stream;

	start_with(NULL, nodes[_i]);
	go();
	for (stream = 0; stream < 2; stream++) {
		if (asprintf(&body, "{\"model\": \"x\", \"stream\": %s, "
		    "\"messages\": [{\"role\": \"user\", \"content\": "
		    "\"#mock {\\\"tool_calls\\\": [{\\\"name\\\": "
		    "\\\"Get_\xc3\x89t\xc3\xa9\\\", \\\"arguments\\\": "
		    "{\\\"City\\\": \\\"PARIS\\\"}}]}\"}], \"tools\": "
		    "[{\"type\": \"function\", \"function\": {\"name\": "
		    "\"Get_\xc3\x89t\xc3\xa9\"}}]}", stream ? "true" : "false")
		    == -1)
			abort();
		ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
		    body, &r), 0);
		ck_assert_int_eq(r.r_status, 200);
		ck_assert_msg(strstr(r.r_body.b_data, want[_i]) != NULL,
		    "%s", r.r_body.b_data);
		ck_assert_msg(strstr(r.r_body.b_data, "PARIS") != NULL,
		    "%s", r.r_body.b_data);
		it_resp_free(&r);
		free(body);
	}
	it_stop_clean(&T);
}
END_TEST

/* includeToolCallsInConversation (addendum A8.4) through the gateway:
 * the node's prompt variable shows the client's tool exchange. */
START_TEST(tool_calls_in_prompt_variables)
{
	const char	*body = "{\"model\": \"x\", \"messages\": ["
			    "{\"role\": \"user\", \"content\": \"ls?\"}, "
			    "{\"role\": \"assistant\", \"content\": null, "
			    "\"tool_calls\": [{\"id\": \"c1\", \"type\": "
			    "\"function\", \"function\": {\"name\": \"bash\", "
			    "\"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}]},"
			    " {\"role\": \"tool\", \"tool_call_id\": \"c1\", "
			    "\"content\": \"a.txt\"}, {\"role\": \"user\", "
			    "\"content\": \"and?\"}]}";
	struct it_resp	 r;
	json_t		*log;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"prompt\": \"{chat_user_prompt_last_four}\", "
	    "\"includeToolCallsInConversation\": true}]");
	go();
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%s", r.r_body.b_data);
	it_resp_free(&r);
	log = it_mock_log(&T, false);
	ASSERT_SENT(log, 0, 0, "user: ls?\n[Tool Call: bash] ls\n"
	    "[Tool Result: bash ls] a.txt\nand?");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* livenessToolCall (addendum A8.7): a streamed chat answer without a
 * tool call gets the user's liveness call when the node asks or the
 * answer is empty; never a whole answer, never one that has calls,
 * never the completions route. */
START_TEST(liveness_call_injected)
{
	static const struct {
		bool		 flag, stream;
		const char	*path, *mock;
		bool		 want;
	} c[] = {
	    { true, true, "/v1/chat/completions", "{\\\"text\\\": \\\"hi\\\"}",
	      true },
	    { false, true, "/v1/chat/completions", "{\\\"text\\\": \\\"  \\\"}",
	      true },
	    { true, true, "/api/chat", "{\\\"text\\\": \\\"hi\\\"}", true },
	    { false, true, "/v1/chat/completions", "{\\\"text\\\": \\\"hi\\\"}",
	      false },
	    { true, false, "/v1/chat/completions", "{\\\"text\\\": \\\"hi\\\"}",
	      false },
	    { true, true, "/v1/chat/completions", "{\\\"tool_calls\\\": "
	      "[{\\\"name\\\": \\\"ls\\\", \\\"arguments\\\": {}}]}",
	      false },
	};
	struct it_resp	 r;
	char		*body, wf[256];
	json_t		*lv = json_pack("{s:s,s:{s:s}}", "toolName", " keep_going ",
			    "arguments", "note", "[Wilmer] liveness");
	bool		 got;

	snprintf(wf, sizeof(wf), "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"prompt\": \"\", \"allowTools\": true, "
	    "\"injectLivenessToolCall\": %s}]", c[_i].flag ? "true" : "false");
	start_with(NULL, wf);
	it_user_set(&T, "livenessToolCall", lv);
	go();
	if (asprintf(&body, "{\"model\": \"x\", \"stream\": %s, "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"go\\n"
	    "#mock %s\"}]}", c[_i].stream ? "true" : "false", c[_i].mock) == -1)
		abort();
	ck_assert_int_eq(it_request(&T, "POST", c[_i].path, body, &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status, r.r_body.b_data);
	got = strstr(r.r_body.b_data, "keep_going") != NULL;
	ck_assert_msg(got == c[_i].want, "case %d: %s", _i, r.r_body.b_data);
	if (got && strcmp(c[_i].path, "/api/chat") != 0) {
		ck_assert_ptr_nonnull(strstr(r.r_body.b_data,
		    "\"id\":\"wilmer_liveness_"));
		ck_assert_ptr_nonnull(strstr(r.r_body.b_data,
		    "\"name\":\"keep_going\""));
		ck_assert_ptr_nonnull(strstr(r.r_body.b_data,
		    "\"finish_reason\":\"tool_calls\""));
		ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "{\\\"note\\\": "
		    "\\\"[Wilmer] liveness\\\"}"));
	}
	if (got && strcmp(c[_i].path, "/api/chat") == 0)
		ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"arguments\":"
		    "{\"note\":\"[Wilmer] liveness\"}"));
	it_resp_free(&r);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* livenessToolCall on the way in: the calls Sluice added, and their
 * results, never reach the backend. */
START_TEST(liveness_machinery_stripped)
{
	const char	*body = "{\"model\": \"x\", \"messages\": ["
			    "{\"role\": \"user\", \"content\": \"u1\"}, "
			    "{\"role\": \"assistant\", \"content\": null, "
			    "\"tool_calls\": [{\"id\": \"wilmer_liveness_ab12cd34\","
			    " \"type\": \"function\", \"function\": {\"name\": "
			    "\"keep_going\", \"arguments\": \"{}\"}}]}, "
			    "{\"role\": \"tool\", \"tool_call_id\": "
			    "\"wilmer_liveness_ab12cd34\", \"content\": \"ok\"}, "
			    "{\"role\": \"user\", \"content\": \"u2\"}]}";
	struct it_resp	 r;
	json_t		*log, *msgs;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"prompt\": \"\"}]");
	it_user_set(&T, "livenessToolCall", json_pack("{s:s}", "toolName",
	    "keep_going"));
	go();
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%s", r.r_body.b_data);
	it_resp_free(&r);
	log = it_mock_log(&T, false);
	msgs = json_object_get(json_object_get(json_array_get(log, 0), "body"),
	    "messages");
	ck_assert_uint_eq(json_array_size(msgs), 2);
	ASSERT_SENT(log, 0, 0, "user: u1");
	ASSERT_SENT(log, 0, 1, "user: u2");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* Spec 8 on every LLM node: think blocks out, prefixes off, reasoning
 * as a field when the endpoint asks; non-responders are cleaned too. */
START_TEST(outputs_are_cleaned)
{
	char			*body;
	struct it_stream	 st[1];
	struct sse_summary	 ss;
	json_t			*log, *j;
	struct it_resp		 r;
	char			*a;

	start_with(NULL, "{\"responseFilters\": [{\"type\": "
	    "\"redactKeywords\", \"keywords\": [\"secret\"]}, {\"type\": "
	    "\"appendFooter\", \"text\": \" [f]\"}], \"nodes\": ["
	    "{\"type\": \"Standard\", \"endpointName\": \"Think\", "
	    "\"prompt\": \"#mock {\\\"text\\\": \\\"<think>hm</think>  "
	    "Step: one\\\"}\", \"removeCustomTextFromResponseStart\": true,"
	    " \"responseStartTextToRemove\": [\"Step: \"]},"
	    "{\"type\": \"Standard\", \"endpointName\": \"Think\", "
	    "\"systemPrompt\": \"Got: {agent1Output}\", \"prompt\": \"\"}]}");
	endpoint("Think", NULL, "Open-AI-API", "\"removeThinking\": true, "
	    "\"startThinkTag\": \"<think>\", \"endThinkTag\": \"</think>\","
	    " \"reasoningOutput\": \"field\"");
	go();
	a = ask("<think>a plan</think>The secret answer\n#mock {\"echo\": "
	    "true}", 200);
	ck_assert_str_eq(a, "The [REDACTED] answer [f]");
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(json_object_get(json_array_get(log, 1), "body"),
	    "messages"), 0), "content")), "Got: one");
	json_decref(log);
	/* Streamed: the same text, the reasoning as reasoning_content. */
	body = chat(true, "<think>a plan</think>The secret answer\n#mock "
	    "{\"echo\": true, \"chunk\": 3}");
	memset(st, 0, sizeof(st));
	st[0].s_body = body;
	it_streams(&T, st, 1, 10000, NULL, NULL);
	it_sse_parse(st[0].s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "The [REDACTED] answer [f]");
	ck_assert_ptr_nonnull(strstr(st[0].s_out.b_data,
	    "\"reasoning_content\":\"a"));
	free(ss.ss_text);
	buf_free(&st[0].s_out);
	free(body);
	/* Whole answers carry it in the message. */
	body = chat(false, "<think>a plan</think>Fine\n#mock {\"echo\": true}");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(j, "choices"), 0), "message"),
	    "reasoning_content")), "a plan");
	json_decref(j);
	it_resp_free(&r);
	/* Ollama's field is message.thinking. */
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat", body, &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "thinking")), "a plan");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "content")), "Fine [f]");
	json_decref(j);
	it_resp_free(&r);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* Tool calls the model writes as text become structured calls, also
 * when the stream splits the markers at every few bytes. */
START_TEST(tool_call_markers_become_calls)
{
	char			*body;
	struct it_stream	 st[1];
	struct sse_summary	 ss;
	const char		*script = "{\"text\": \"Let me check.<tool_call>"
				    "{\\\"name\\\": \\\"get_time\\\", "
				    "\\\"arguments\\\": {\\\"tz\\\": "
				    "\\\"UTC\\\"}}</tool_call>\", \"chunk\": 3, "
				    "\"split\": 5}";
	char			 user[512];

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"prompt\": \"\"}]");
	go();
	snprintf(user, sizeof(user), "time?\n#mock %s", script);
	body = chat(true, user);
	memset(st, 0, sizeof(st));
	st[0].s_body = body;
	it_streams(&T, st, 1, 10000, NULL, NULL);
	it_sse_parse(st[0].s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "Let me check.");
	ck_assert_ptr_nonnull(strstr(st[0].s_out.b_data, "\"tool_calls\":[{"));
	ck_assert_ptr_nonnull(strstr(st[0].s_out.b_data, "get_time"));
	ck_assert_ptr_null(strstr(st[0].s_out.b_data, "<tool_call>"));
	ck_assert_str_eq(ss.ss_finish, "tool_calls");
	free(ss.ss_text);
	buf_free(&st[0].s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* A group chat's generation prompt goes before a reply without one. */
START_TEST(group_chat_speaker)
{
	const char	*body = "{\"model\": \"x\", \"messages\": [{\"role\": "
			    "\"user\", \"content\": \"hi\"}, {\"role\": "
			    "\"assistant\", \"content\": \"Roland:\"}]}";
	struct it_resp	 r;
	json_t		*j;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Mock\", \"prompt\": \"\", \"useGroupChatTimestampLogic\": "
	    "true}]");
	go();
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(j, "choices"), 0), "message"),
	    "content")), "Roland: The quick brown fox jumps over the lazy dog.");
	json_decref(j);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* Several --user: the model field picks the user ("bob" or
 * "alice:wf"); a model naming nobody is refused with the user list. */
START_TEST(multi_user_mode)
{
	struct it_resp	 r;
	json_t		*j, *ids;
	char		*a;
	const char	*user_file = "{\"customWorkflowOverride\": true, "
			    "\"customWorkflow\": \"Main\", "
			    "\"chatCompleteAddUserAssistant\": false, "
			    "\"chatCompletionAddMissingAssistantGenerator\": false, "
			    "\"allowSharedWorkflows\": true}";

	start_with(NULL, NULL);
	it_file(&T, "Users/alice.json", user_file);
	it_file(&T, "Users/bob.json", user_file);
	it_file(&T, "Workflows/alice/Main.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"alice main\"}]");
	it_file(&T, "Workflows/bob/Main.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"bob main\"}]");
	it_file(&T, "Workflows/_shared/quick/_DefaultWorkflow.json", "[{"
	    "\"type\": \"StaticResponse\", \"content\": \"shared quick\"}]");
	snprintf(T.it_users, sizeof(T.it_users), "alice bob");
	go();
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"model\": \"bob\", \"messages\": [{\"role\": \"user\", "
	    "\"content\": \"x\"}]}", &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")), "bob");
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "bob main"));
	json_decref(j);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"model\": \"alice:quick:latest\", \"messages\": [{\"role\": "
	    "\"user\", \"content\": \"x\"}]}", &r), 0);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")),
	    "alice:quick");
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "shared quick"));
	json_decref(j);
	it_resp_free(&r);
	a = ask("x", 400);		/* model "x" is nobody */
	ck_assert_str_eq(a, "Multi-user mode is active. The model field must "
	    "specify a configured user (or user:workflow). Available users: "
	    "alice, bob");
	free(a);
	ck_assert_int_eq(it_request(&T, "GET", "/v1/models", NULL, &r), 0);
	j = it_json(r.r_body.b_data);
	ids = json_object_get(j, "data");
	ck_assert_uint_eq(json_array_size(ids), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ids,
	    0), "id")), "alice:quick");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ids,
	    1), "id")), "bob:quick");
	json_decref(j);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* ImageProcessor: a vision call per image; the description joins the
 * conversation for the next node. */
START_TEST(image_processor)
{
	const char	*body = "{\"model\": \"x\", \"messages\": [{\"role\": "
			    "\"user\", \"content\": [{\"type\": \"text\", "
			    "\"text\": \"What is this?\"}, {\"type\": "
			    "\"image_url\", \"image_url\": {\"url\": "
			    "\"data:image/png;base64,iVBORw0KGgo=\"}}]}]}";
	struct it_resp	 r;
	json_t		*log, *c0, *msgs;
	const char	*inserted;

	start_with(NULL, "[{\"type\": \"ImageProcessor\", \"endpointName\": "
	    "\"Mock\", \"systemPrompt\": \"Describe the image.\", "
	    "\"prompt\": \"{chat_user_prompt_last_one}\", "
	    "\"addAsUserMessage\": true, \"message\": \"[seen: "
	    "[IMAGE_BLOCK]]\"},"
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", "
	    "\"prompt\": \"\", \"lastMessagesToSendInsteadOfPrompt\": 5}]");
	go();
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 2);
	c0 = json_object_get(json_array_get(json_object_get(json_object_get(
	    json_array_get(log, 0), "body"), "messages"), 1), "content");
	ck_assert_msg(json_is_array(c0), "the vision call has no image");
	msgs = json_object_get(json_object_get(json_array_get(log, 1), "body"),
	    "messages");
	/* One message before: WilmerAI appends (it inserts before the last
	 * message only when there are two or more). */
	inserted = json_string_value(json_object_get(json_array_get(msgs, 1),
	    "content"));
	ck_assert_str_eq(inserted, "[seen: The quick brown fox jumps over the "
	    "lazy dog.]");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* One streamed chat: its parsed SSE (caller frees ss_text) and the
 * milliseconds until the client's stream ended. */
static uint64_t
stream_chat(const char *user_text, struct sse_summary *ss)
{
	char			*body = chat(true, user_text);
	struct it_stream	 st[1];
	uint64_t		 end;

	memset(st, 0, sizeof(st));
	st[0].s_body = body;
	it_streams(&T, st, 1, 15000, NULL, NULL);
	ck_assert_msg(st[0].s_status == 200 && st[0].s_finished, "%ld %s",
	    st[0].s_status, st[0].s_out.b_data);
	it_sse_parse(st[0].s_out.b_data, ss);
	end = st[0].s_end_ms;
	buf_free(&st[0].s_out);
	free(body);
	return end;
}

/* The "model" field of backend request k. */
static const char *
sent_model(json_t *log, size_t k)
{
	return json_string_value(json_object_get(json_object_get(
	    json_array_get(log, k), "body"), "model"));
}

/* Spec 11: a stream fails over to backupEndpointName while nothing has
 * reached the client (an error status, a cut before the first token),
 * never after: then the client keeps the partial answer and gets a
 * clean error. The primary's script comes from its own
 * textToAddToStartOfPrompt, so the backup answers normally. */
START_TEST(stream_failover_only_before_first_token)
{
	static const char *const before[] = { "{\\\"status\\\": 500}",
	    "{\\\"disconnect_after\\\": 0}" };
	struct sse_summary	 ss;
	json_t			*log;
	char			 extra[256];
	size_t			 i;

	start_with(NULL, "[{\"type\": \"Standard\", \"endpointName\": "
	    "\"Primary\", \"prompt\": \"\", \"lastMessagesToSendInsteadOf"
	    "Prompt\": 1}]");
	endpoint("Backup", NULL, "Open-AI-API", NULL);
	go();
	for (i = 0; i < 2; i++) {
		snprintf(extra, sizeof(extra), "\"backupEndpointName\": "
		    "\"Backup\", \"addTextToStartOfPrompt\": true, "
		    "\"textToAddToStartOfPrompt\": \"#mock %s\\n\"", before[i]);
		endpoint("Primary", NULL, "Open-AI-API", extra);
		stream_chat("hello", &ss);
		ck_assert_str_eq(ss.ss_text, "The quick brown fox jumps over "
		    "the lazy dog.");
		ck_assert(ss.ss_done && !ss.ss_error);
		free(ss.ss_text);
		log = it_mock_log(&T, false);
		ck_assert_uint_eq(json_array_size(log), 2 * (i + 1));
		ck_assert_str_eq(sent_model(log, 2 * i), "Primary");
		ck_assert_str_eq(sent_model(log, 2 * i + 1), "Backup");
		json_decref(log);
	}
	/* Three tokens out, then the connection drops: no failover. */
	endpoint("Primary", NULL, "Open-AI-API", "\"backupEndpointName\": "
	    "\"Backup\", \"addTextToStartOfPrompt\": true, "
	    "\"textToAddToStartOfPrompt\": \"#mock {\\\"text\\\": "
	    "\\\"a b c d e f\\\", \\\"disconnect_after\\\": 3}\\n\"");
	stream_chat("hello", &ss);
	ck_assert_str_eq(ss.ss_text, "a b c");
	ck_assert(ss.ss_error && ss.ss_done);
	free(ss.ss_text);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 5);
	ck_assert_str_eq(sent_model(log, 4), "Primary");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* Spec 10 step 4: a categoriser answer naming no category is asked
 * for again, up to maxCategorizationAttempts times in all. */
static void
routing_user(const char *attempts)
{
	char	 user[512];

	snprintf(user, sizeof(user), "{\"chatCompleteAddUserAssistant\": "
	    "false, \"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"endpointConfigsSubDirectory\": \"it\", \"routingConfig\": "
	    "\"Cats\", \"categorizationWorkflow\": \"Categorise\"%s}",
	    attempts);
	it_file(&T, "Users/it.json", user);
	it_file(&T, "Routing/Cats.json", "{\"CODING\": {\"description\": "
	    "\"Code\", \"workflow\": \"Coder\"}, \"GENERAL\": "
	    "{\"description\": \"Other\", \"workflow\": \"General\"}}");
	it_file(&T, "Workflows/it/Coder.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"coder answer\"}]");
	it_file(&T, "Workflows/it/_DefaultWorkflow.json", "[{\"type\": "
	    "\"StaticResponse\", \"content\": \"default answer\"}]");
}

START_TEST(categorisation_attempts)
{
	json_t	*log;
	char	*a;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	routing_user(", \"maxCategorizationAttempts\": 3");
	/* The mock's answer names no category. */
	it_file(&T, "Workflows/it/Categorise.json", "[{\"type\": "
	    "\"Standard\", \"endpointName\": \"Mock\", \"prompt\": "
	    "\"Pick one of {categoriesSeparatedByOr}: "
	    "{chat_user_prompt_last_one}\"}]");
	go();
	a = ask("hi", 200);
	ck_assert_str_eq(a, "default answer");
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 3);
	ASSERT_SENT(log, 2, 0, "user: Pick one of CODING or GENERAL: hi");
	json_decref(log);
	/* An answer that names one stops asking. */
	a = ask("#mock {\"text\": \"Coding!\"}", 200);
	ck_assert_str_eq(a, "coder answer");
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 4);
	json_decref(log);
	/* The default is one attempt. */
	routing_user("");
	a = ask("hi", 200);
	ck_assert_str_eq(a, "default answer");
	free(a);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 5);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* "isResponder" (which WilmerAI ignores, though its configs use it)
 * picks the answer; the node after it still runs. */
START_TEST(is_responder_honoured)
{
	json_t	*log;
	char	*a;
	int	 i;

	start_with("\"min_workers\": 1, \"max_workers\": 1", "{\"nodes\": ["
	    "{\"type\": \"StaticResponse\", \"content\": \"first\", "
	    "\"isResponder\": true},"
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", "
	    "\"prompt\": \"after {agent1Output}\"}]}");
	go();
	a = ask("hi", 200);
	ck_assert_str_eq(a, "first");
	free(a);
	for (i = 0; i < 100; i++, it_sleep(50)) {
		log = it_mock_log(&T, false);
		if (json_array_size(log) == 1)
			break;
		json_decref(log);
		log = NULL;
	}
	ck_assert_ptr_nonnull(log);
	ASSERT_SENT(log, 0, 0, "user: after first");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* A streamed LLM answer, then a Standard node whose backend answers
 * 1.5 s later: the client's stream ends first, and the call happens. */
START_TEST(post_responder_call_after_streamed_answer)
{
	struct sse_summary	 ss;
	json_t			*log = NULL, *rec;
	uint64_t		 end, t0;

	start_with("\"min_workers\": 1, \"max_workers\": 1", "{\"nodes\": ["
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", "
	    "\"prompt\": \"{chat_user_prompt_last_one}\", \"returnToUser\":"
	    " true},"
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", "
	    "\"prompt\": \"Remember: {agent1Output}\\n#mock "
	    "{\\\"head_delay_ms\\\": 1500}\"}]}");
	go();
	end = stream_chat("#mock {\"text\": \"Hello there, friend\", "
	    "\"chunk\": 3}", &ss);
	ck_assert_str_eq(ss.ss_text, "Hello there, friend");
	ck_assert(ss.ss_done && !ss.ss_error);
	ck_assert_int_gt(ss.ss_chunks, 5);
	free(ss.ss_text);
	ck_assert_msg(end < 1000, "the stream ended after %llu ms",
	    (unsigned long long)end);
	for (t0 = it_now(); it_now() - t0 < 5000; it_sleep(50)) {
		log = it_mock_log(&T, false);
		rec = json_array_get(log, 1);
		if (rec != NULL && !json_is_null(json_object_get(rec,
		    "t_end_ms")))
			break;
		json_decref(log);
		log = NULL;
	}
	ck_assert_ptr_nonnull(log);
	ck_assert(json_is_true(json_object_get(json_object_get(json_array_get(
	    log, 0), "body"), "stream")));
	ASSERT_SENT(log, 1, 0, "user: Remember: Hello there, friend\n#mock "
	    "{\"head_delay_ms\": 1500}");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* Streaming through a ConditionalCustomWorkflow: the chosen child's
 * LLM streams through; with no match the default content streams. */
START_TEST(conditional_workflow_streams)
{
	struct sse_summary	 ss;
	json_t			*log;

	start_with(NULL, "{\"nodes\": ["
	    "{\"type\": \"StaticResponse\", \"content\": \"{chat_user_"
	    "prompt_last_one}\"},"
	    "{\"type\": \"ConditionalCustomWorkflow\", \"conditionalKey\": "
	    "\"{agent1Output}\", \"conditionalWorkflows\": {\"Yes\": "
	    "\"A\"}, \"UseDefaultContentInsteadOfWorkflow\": \"no match for "
	    "{agent1Output}\"}]}");
	it_file(&T, "Workflows/it/A.json", "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"Mock\", \"prompt\": \"go\"}]");
	go();
	stream_chat("yes", &ss);
	ck_assert_str_eq(ss.ss_text, "The quick brown fox jumps over the lazy "
	    "dog.");
	ck_assert(ss.ss_done && !ss.ss_error);
	ck_assert_int_gt(ss.ss_chunks, 5);
	free(ss.ss_text);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 1);
	ck_assert(json_is_true(json_object_get(json_object_get(json_array_get(
	    log, 0), "body"), "stream")));
	json_decref(log);
	stream_chat("perhaps", &ss);
	ck_assert_str_eq(ss.ss_text, "no match for perhaps");
	ck_assert(ss.ss_done && !ss.ss_error);
	ck_assert_int_eq(ss.ss_chunks, 2 + 7);	/* role, 7 words, finish */
	free(ss.ss_text);
	it_stop_clean(&T);
}
END_TEST

/* Prompt routing while streaming: the categoriser runs whole, the
 * category's workflow streams. */
START_TEST(prompt_routing_streams)
{
	struct sse_summary	 ss;
	json_t			*log;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	routing_user("");
	it_file(&T, "Workflows/it/Categorise.json", "[{\"type\": "
	    "\"Standard\", \"endpointName\": \"Mock\", \"prompt\": "
	    "\"{chat_user_prompt_last_one}\\n#mock {\\\"text\\\": "
	    "\\\"general.\\\"}\"}]");
	it_file(&T, "Workflows/it/General.json", "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"Mock\", \"prompt\": \"answer: "
	    "{chat_user_prompt_last_one}\"}]");
	go();
	stream_chat("what is up", &ss);
	ck_assert_str_eq(ss.ss_text, "The quick brown fox jumps over the lazy "
	    "dog.");
	ck_assert(ss.ss_done && !ss.ss_error);
	ck_assert_int_gt(ss.ss_chunks, 5);
	free(ss.ss_text);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 2);
	ck_assert(!json_is_true(json_object_get(json_object_get(json_array_get(
	    log, 0), "body"), "stream")));
	ck_assert(json_is_true(json_object_get(json_object_get(json_array_get(
	    log, 1), "body"), "stream")));
	ASSERT_SENT(log, 1, 0, "user: answer: what is up");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* The client's Ollama "think" is about its answer: it reaches the
 * responder's call over the preset's, while the calls before it keep
 * their preset. */
START_TEST(client_think_reaches_the_responder_only)
{
	struct it_resp	 r;
	json_t		*log;

	start_with(NULL, "{\"nodes\": [{\"type\": \"Standard\", "
	    "\"endpointName\": \"Oll\", \"preset\": \"Deep\", "
	    "\"systemPrompt\": \"Plan.\", \"prompt\": "
	    "\"{chat_user_prompt_last_one}\"}, {\"type\": \"Standard\", "
	    "\"endpointName\": \"Oll\", \"preset\": \"Deep\", "
	    "\"systemPrompt\": \"Plan: {agent1Output}\", \"prompt\": \"\", "
	    "\"lastMessagesToSendInsteadOfPrompt\": 2}]}");
	it_file(&T, "ApiTypes/Ollama.json", "{\"type\": \"ollamaApiChat\", "
	    "\"presetType\": \"Ollama\", \"maxNewTokensPropertyName\": "
	    "\"num_predict\", \"streamPropertyName\": \"stream\"}\n");
	it_file(&T, "Presets/Ollama/it/Deep.json", "{\"think\": true}\n");
	endpoint("Oll", NULL, "Ollama", NULL);
	go();
	ck_assert_int_eq(it_request(&T, "POST", "/api/chat", "{\"model\": "
	    "\"x\", \"stream\": false, \"think\": false, \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"hi\"}]}", &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status,
	    r.r_body.b_data);
	it_resp_free(&r);
	log = it_mock_log(&T, false);
	ck_assert_uint_eq(json_array_size(log), 2);
	ck_assert(json_is_true(json_object_get(json_object_get(json_array_get(
	    log, 0), "body"), "think")));
	ck_assert(json_is_false(json_object_get(json_object_get(
	    json_array_get(log, 1), "body"), "think")));
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

static Suite *
flow_suite(void)
{
	Suite	*s = suite_create("flow");
	TCase	*tc = tcase_create("flow");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, agent_outputs_chain);
	tcase_add_test(tc, post_responder_nodes_run_after_the_answer);
	tcase_add_test(tc, nested_workflow_streams_through_parent);
	tcase_add_test(tc, conditional_workflow_picks_by_key);
	tcase_add_test(tc, prompt_routing);
	tcase_add_test(tc, static_response_streams_word_by_word);
	tcase_add_test(tc, failover_to_backup_endpoint);
	tcase_add_test(tc, retries_without_backup);
	tcase_add_test(tc, tool_calls_pass_through);
	tcase_add_loop_test(tc, tool_call_names_lowercased, 0, 2);
	tcase_add_test(tc, tool_calls_in_prompt_variables);
	tcase_add_loop_test(tc, liveness_call_injected, 0, 6);
	tcase_add_test(tc, liveness_machinery_stripped);
	tcase_add_test(tc, outputs_are_cleaned);
	tcase_add_test(tc, tool_call_markers_become_calls);
	tcase_add_test(tc, group_chat_speaker);
	tcase_add_test(tc, multi_user_mode);
	tcase_add_test(tc, image_processor);
	tcase_add_test(tc, slot_timeout_fails_over);
	tcase_add_test(tc, discussion_id_and_chat_rewriting);
	tcase_add_test(tc, broken_prompt_template_is_500_naming_the_file);
	tcase_add_test(tc, disconnect_cancels_nested_call);
	tcase_add_test(tc, stream_failover_only_before_first_token);
	tcase_add_test(tc, categorisation_attempts);
	tcase_add_test(tc, is_responder_honoured);
	tcase_add_test(tc, post_responder_call_after_streamed_answer);
	tcase_add_test(tc, conditional_workflow_streams);
	tcase_add_test(tc, prompt_routing_streams);
	suite_add_tcase(s, tc);
	tc = tcase_create("think");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, client_think_reaches_the_responder_only);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(flow_suite());
}
