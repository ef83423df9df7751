/* check_engine.c - the workflow engine: a request's workflow chosen, its nodes run in order, the responder's answer delivered; nested runs, routing, message timestamps. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../../worker/engine/flow.h"
#include "../../worker/engine/routing.h"
#include "../../worker/memory/timestamps.h"
#include "../testmain.h"
#include "fakerq.h"
#include "scratchdb.h"
#include "scratchdir.h"
#include "stubs_engine.h"

/*
 * Every test runs requests through flow_run (the engine's entry) with
 * tests/fakerq.h as the loop, in a scratch config folder whose user
 * "tester" runs Workflows/tester/main.json unless the test says
 * otherwise. The node handlers are tests/stubs_engine.c's.
 */

static struct scratchdir	 t_conf;
static struct fakerq		 t_rq;
static struct proto_message	 t_msgs[8];
static struct proto_req_start	 t_rs;
static struct wresult		 t_res;

#define USER_BASE	"'chatCompleteAddUserAssistant': false, " \
			"'chatCompletionAddMissingAssistantGenerator': false"

/* Write rel in the config folder: JSON with ' for ". */
static void
conf(const char *rel, const char *text)
{
	scratchdir_json(&t_conf, rel, text);
}

/* Workflows/tester/<name>.json */
static void
workflow(const char *name, const char *text)
{
	char	*rel = xasprintf("Workflows/tester/%s.json", name);

	conf(rel, text);
	free(rel);
}

/* Append a message to the request. */
static void
msg(const char *role, const char *content)
{
	ck_assert_uint_lt(t_rs.nmsgs, sizeof(t_msgs) / sizeof(t_msgs[0]));
	t_msgs[t_rs.nmsgs].role = str_from(role);
	t_msgs[t_rs.nmsgs].content = str_from(content);
	t_rs.nmsgs++;
}

static void
setup(void)
{
	scratchdir_make(&t_conf, "engine");
	conf("Users/tester.json", "{" USER_BASE ", 'customWorkflowOverride': "
	    "true, 'customWorkflow': 'main'}");
	fakerq_init(&t_rq, "rq-e", -1);
	t_rq.fr_rq.rq_confdir = t_conf.sc_path;
	memset(t_msgs, 0, sizeof(t_msgs));
	memset(&t_rs, 0, sizeof(t_rs));
	t_rs.api = API_OPENAI_CHAT;
	t_rs.msgs = t_msgs;
	msg("user", "hi");
	stub_engine_reset();
}

static void
teardown(void)
{
	fakerq_free(&t_rq);
	scratchdir_remove(&t_conf);
	stub_engine_reset();
}

/* A fresh fake loop and trace, for another request in the same test. */
static void
again(void)
{
	struct store	*s = t_rq.fr_store;

	fakerq_free(&t_rq);
	fakerq_init(&t_rq, "rq-e", -1);
	t_rq.fr_rq.rq_confdir = t_conf.sc_path;
	t_rq.fr_store = s;
	stub_engine_reset();
}

/* Run the request as user "tester" (unless it names one) into t_res;
 * returns the client's text (borrowed: the fake loop's). */
static const char *
run(void)
{
	memset(&t_res, 0, sizeof(t_res));
	t_res.r_prompt_tokens = t_res.r_completion_tokens = -1;
	flow_run(&t_rq.fr_rq, &t_rs, "tester", &t_res);
	buf_addc(&t_rq.fr_text, '\0');
	t_rq.fr_text.b_len--;
	return t_rq.fr_text.b_data;
}

/* The trace, "" when no node ran. */
static const char *
trace(void)
{
	return stub_trace.b_data != NULL ? stub_trace.b_data : "";
}

/* The request succeeded and the client got want. */
#define ck_answer(want) do {						\
	const char	*got_ = run();					\
	ck_assert_msg(t_res.r_status == RQ_OK, "failed: %u %s",		\
	    t_res.r_http, t_res.r_message);				\
	ck_assert_str_eq(got_, want);					\
} while (0)

/* The request failed with http, code and a message holding needle. */
static void
ck_error(uint32_t http, const char *code, const char *needle)
{
	run();
	ck_assert_uint_eq(t_res.r_status, RQ_ERROR);
	ck_assert_uint_eq(t_res.r_http, http);
	ck_assert_str_eq(t_res.r_code, code);
	ck_assert_msg(strstr(t_res.r_message, needle) != NULL,
	    "no '%s' in '%s'", needle, t_res.r_message);
}

/* ---- the responder ---- */

START_TEST(last_node_answers)
{
	workflow("main", "[{'text': 'a'}, {'text': 'b'}]");
	ck_answer("b");
	ck_assert_str_eq(trace(), "main:1T main:2RDT ");
	ck_assert(!t_rq.fr_answered);
}
END_TEST

/* The first node marked so answers, by any of WilmerAI's three keys. */
START_TEST(marked_node_answers)
{
	static const char *const keys[] = { "is_responder", "returnToUser",
	    "isResponder" };
	char		 text[160];
	size_t		 i;

	for (i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), "[{'text': 'a'}, {'text': 'b', "
		    "'%s': true}, {'text': 'c', 'returnToUser': true}]",
		    keys[i]);
		workflow("main", text);
		again();
		ck_answer("b");
		ck_assert_str_eq(trace(), "main:1T main:2RDT main:3T ");
	}
}
END_TEST

/* finish "stop", completion tokens estimated from the answer, prompt
 * tokens 0, when the nodes said nothing of them. */
START_TEST(usage_estimated)
{
	workflow("main", "[{'text': 'four words in here'}]");
	ck_answer("four words in here");
	ck_assert_str_eq(t_res.r_finish, "stop");
	ck_assert_int_gt(t_res.r_completion_tokens, 0);
	ck_assert(t_res.r_usage_estimated);
	ck_assert_int_eq(t_res.r_prompt_tokens, 0);
}
END_TEST

/* ---- delivery ---- */

START_TEST(one_chunk_without_stream)
{
	workflow("main", "[{'type': 'StaticResponse', 'text': 'a b  c'}]");
	ck_answer("a b  c");
	ck_assert_int_eq(t_rq.fr_emits, 1);
	ck_assert_int_eq(stub_static_runs, 1);
}
END_TEST

/* A StaticResponse responder streams word by word; other types' text
 * goes in one chunk. */
START_TEST(words_when_streaming)
{
	t_rs.stream = true;
	workflow("main", "[{'type': 'StaticResponse', 'text': 'a b  c'}]");
	ck_answer("a b  c");
	ck_assert_int_eq(t_rq.fr_emits, 5);
	ck_assert_str_eq(trace(), "main:1RDST ");
	again();
	workflow("main", "[{'text': 'a b  c'}]");
	ck_answer("a b  c");
	ck_assert_int_eq(t_rq.fr_emits, 1);
}
END_TEST

/* A node that streamed its output is not sent it again; an empty
 * answer sends nothing. */
START_TEST(streamed_output_not_repeated)
{
	t_rs.stream = true;
	workflow("main", "[{'text': 'abcd', 'stream': true}]");
	ck_answer("abcd");
	ck_assert_int_eq(t_rq.fr_emits, 2);
	again();
	workflow("main", "[{'text': ''}]");
	ck_answer("");
	ck_assert_int_eq(t_rq.fr_emits, 0);
}
END_TEST

/* ---- variables ---- */

START_TEST(agent_outputs)
{
	workflow("main", "[{'text': 'x'}, {'text': '{agent1Output}y'}, "
	    "{'text': '{agent1Output}-{agent2Output}-{agent3Output}'}]");
	ck_answer("x-xy-{agent3Output}");
}
END_TEST

/* The workflow's own keys are variables (templates, expanded once). */
START_TEST(workflow_keys)
{
	workflow("main", "{'who': 'Ann', 'greeting': 'hello {who}', "
	    "'nodes': [{'text': '{greeting}!'}]}");
	ck_answer("hello Ann!");
}
END_TEST

/* ---- nested workflows (rq_flow) ---- */

/* The custom node answers: the child's responder streams to the
 * client, and the parent does not send it again. */
START_TEST(child_answers)
{
	t_rs.stream = true;
	workflow("main", "[{'text': 'p'}, {'type': 'CustomWorkflow', "
	    "'workflowName': 'child'}]");
	workflow("child", "[{'text': 'c1'}, {'text': 'c2', 'stream': true}]");
	ck_answer("c2");
	ck_assert_str_eq(trace(), "main:1T main:2RDST child:1T child:2RDST ");
	ck_assert_int_eq(t_rq.fr_emits, 2);
	ck_assert_int_eq(stub_custom_runs, 1);
}
END_TEST

/* A custom node that does not answer: the child's result is its
 * output, the child is neither delivered nor top-level. */
START_TEST(child_result_is_output)
{
	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'child'}, {'text': '<{agent1Output}>'}]");
	workflow("child", "[{'text': 'c1'}, {'text': 'c2'}]");
	ck_answer("<c2>");
	ck_assert_str_eq(trace(), "main:1T child:1 child:2R main:2RDT ");
}
END_TEST

/* scoped_variables become the child's agentNInput, in the child only. */
START_TEST(child_inputs)
{
	workflow("main", "[{'text': 'A'}, {'type': 'CustomWorkflow', "
	    "'workflowName': 'child', 'scoped_variables': ['{agent1Output}1',"
	    " 'two']}, {'text': '{agent2Output}/{agent1Input}'}]");
	workflow("child", "[{'text': '{agent1Input}+{agent2Input}'}]");
	ck_answer("A1+two/{agent1Input}");
}
END_TEST

/* The parent's overrides replace the prompts of the child's first node
 * that has systemPrompt or prompt, and of no other. */
START_TEST(first_node_overrides)
{
	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'child', 'firstNodeSystemPromptOverride': 'SYS', "
	    "'firstNodePromptOverride': 'PR'}]");
	workflow("child", "[{'text': 'none:', 'show': 'system'}, "
	    "{'text': 'first:', 'systemPrompt': 'mine', 'show': 'system'}, "
	    "{'text': '{agent2Output},', 'show': 'prompt'}, "
	    "{'text': '{agent3Output}', 'prompt': 'own', 'show': 'prompt', "
	    "'systemPrompt': 'own'}]");
	ck_answer("first:SYS,(none)own");
	again();
	workflow("child", "[{'text': 'a', 'prompt': 'orig', 'show': "
	    "'prompt'}, {'text': '{agent1Output}', 'show': 'system', "
	    "'systemPrompt': 'two'}]");
	ck_answer("aPRtwo");
}
END_TEST

/* A workflow that runs itself stops at the depth limit, with an error
 * that says why. */
START_TEST(depth_limit)
{
	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'main'}]");
	ck_error(500, "config_error", "nested more than 16 deep");
	ck_assert_int_eq(stub_custom_runs, 16);
}
END_TEST

/* A node that ends the run ends its parents too, successfully. */
START_TEST(early_end_ends_parents)
{
	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'child'}, {'text': 'after'}]");
	workflow("child", "[{'text': 'c1'}, {'end': true}, {'text': 'c3'}]");
	ck_answer("");
	ck_assert_str_eq(trace(), "main:1T child:1 child:2 ");
}
END_TEST

/* ---- the answer before the end (rq_answer) ---- */

/* Nodes after the responder: the loop is told the answer is complete
 * as soon as it is, and they still run. */
START_TEST(answer_before_later_nodes)
{
	workflow("main", "[{'text': 'ans', 'returnToUser': true}, "
	    "{'text': 'later'}]");
	ck_answer("ans");
	ck_assert(t_rq.fr_answered);
	ck_assert_uint_eq(t_rq.fr_answer.r_status, RQ_OK);
	ck_assert_str_eq(t_rq.fr_answer.r_finish, "stop");
	ck_assert_str_eq(trace(), "main:1RDT main:2T ");
}
END_TEST

/* The responder of a child that is its workflow's last node, with
 * nodes left in the parent. */
START_TEST(answer_before_parent_nodes)
{
	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'child', 'returnToUser': true}, {'text': 'post'}]");
	workflow("child", "[{'text': 'c'}]");
	ck_answer("c");
	ck_assert(t_rq.fr_answered);
	ck_assert_str_eq(trace(), "main:1RDT child:1RD main:2T ");
}
END_TEST

/* ---- node types ---- */

/* A type WilmerAI does not know either runs as Standard, as does a node
 * without a type. */
START_TEST(unknown_type_runs_as_standard)
{
	workflow("main", "[{'type': 'NoSuchType', 'text': 'x'}, "
	    "{'text': '{agent1Output}y'}]");
	ck_answer("xy");
	ck_assert_int_eq(stub_standard_runs, 2);
}
END_TEST

/* A failing node fails the request with its error; nothing after it
 * runs. */
START_TEST(failing_node_stops_the_run)
{
	workflow("main", "[{'text': 'a'}, {'fail': 503}, {'text': 'c'}]");
	ck_error(503, "node_error", "workflow 'main' node 2 (Standard): "
	    "told to fail");
	ck_assert_str_eq(trace(), "main:1T main:2T ");
}
END_TEST

/* Stopped between two nodes: cancelled, no further node. */
START_TEST(cancel_between_nodes)
{
	workflow("main", "[{'text': 'a', 'cancel': true}, {'text': 'b'}]");
	run();
	ck_assert_uint_eq(t_res.r_status, RQ_CANCELLED);
	ck_assert_str_eq(trace(), "main:1T ");
	ck_assert_int_eq(t_rq.fr_emits, 0);
}
END_TEST

/* ---- the workflow a request selects (flow.c) ---- */

/* A shared workflow named by the model field wins over the user's
 * custom workflow: _DefaultWorkflow of Workflows/_shared/<name>/. */
START_TEST(shared_workflow_first)
{
	workflow("main", "[{'text': 'custom'}]");
	conf("Workflows/_shared/coder/_DefaultWorkflow.json",
	    "[{'text': 'shared'}]");
	t_rs.workflow = str_from("coder");
	ck_answer("shared");
	ck_assert_str_eq(trace(), "_DefaultWorkflow:1RDT ");
}
END_TEST

/* The request's user, else the worker's. */
START_TEST(user_of_the_request)
{
	conf("Users/other.json", "{" USER_BASE ", 'customWorkflowOverride': "
	    "true, 'customWorkflow': 'mine'}");
	conf("Workflows/other/mine.json", "[{'text': 'other'}]");
	workflow("main", "[{'text': 'tester'}]");
	t_rs.user = str_from("other");
	ck_answer("other");
}
END_TEST

START_TEST(config_errors)
{
	t_rs.user = str_from("nobody");
	ck_error(500, "config_error", "nobody");
	t_rs.user = STR_NULL;
	ck_error(500, "config_error", "main");
	workflow("main", "[]");
	ck_error(500, "config_error", "workflow 'main' has no nodes");
	conf("Users/tester.json", "{" USER_BASE "}");
	ck_error(500, "config_error", "user 'tester' selects no workflow");
	ck_assert_str_eq(trace(), "");
}
END_TEST

/* Chat routes get WilmerAI's rewriting; every route loses the
 * discussion tags and its empty messages; nodes see the id. */
START_TEST(messages_made_ready)
{
	conf("Users/tester.json", "{'chatCompleteAddUserAssistant': true, "
	    "'chatCompletionAddMissingAssistantGenerator': true, "
	    "'customWorkflowOverride': true, 'customWorkflow': 'main'}");
	workflow("main", "[{'show': 'messages'}, {'show': 'discussion', "
	    "'text': '{agent1Output}id='}]");
	t_rs.nmsgs = 0;
	msg("system", "[DiscussionId]d-1[/DiscussionId]be brief");
	msg("user", "  \n");
	msg("user", "hi");
	ck_answer("system|be brief\nuser|User:   \n\nuser|User: hi\n"
	    "assistant|Assistant:\nid=d-1");
	again();
	t_rs.api = API_OPENAI_COMPLETION;
	ck_answer("system|be brief\nuser|hi\nid=d-1");
}
END_TEST

/* The seam's rq_flow runs the request's workflows while it runs, and
 * is gone after; the request's tools reach the nodes. */
START_TEST(seam_set_while_running)
{
	workflow("main", "[{'show': 'flow'}, {'show': 'tools', 'text': "
	    "'{agent1Output} '}]");
	t_rs.tools = str_from("[{\"type\":\"function\"}]");
	ck_answer("set [{\"type\":\"function\"}]");
	ck_assert_ptr_null(t_rq.fr_rq.rq_flow);
	ck_assert_ptr_null(t_rq.fr_rq.rq_engine);
}
END_TEST

/* A child given its own conversation and no tools (as
 * ConversationChunkProcessor's): its nodes and its own children see
 * those; the parent's nodes after it see the request's again. */
START_TEST(child_messages_and_tools)
{
	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'child', 'lastMessageOnly': true, 'noTools': true}, "
	    "{'show': 'tools', 'text': '{agent1Output}/'}, {'show': "
	    "'messages', 'text': '{agent2Output}/'}]");
	workflow("child", "[{'show': 'messages'}, {'type': 'CustomWorkflow', "
	    "'workflowName': 'grandchild'}, {'text': '{agent1Output}"
	    "{agent2Output}'}]");
	workflow("grandchild", "[{'show': 'tools', 'text': '<'}, {'show': "
	    "'messages', 'text': '{agent1Output}>'}]");
	msg("user", "two");
	t_rs.tools = str_from("[{\"type\":\"function\"}]");
	ck_answer("user|two\n<(none)>user|two\n/"
	    "[{\"type\":\"function\"}]/user|hi\nuser|two\n");
}
END_TEST

/* ---- routing ---- */

static json_t *
cats(const char *text)
{
	json_error_t	 e;
	json_t		*j = json_loads(text, 0, &e);

	ck_assert_msg(j != NULL, "%s", e.text);
	return j;
}

/* Punctuation dropped, case ignored, the first word naming a category
 * (as a substring) wins, then the first category in file order. */
START_TEST(match_rules)
{
	json_t	*r = cats("{\"Coding\": {}, \"Chat-Bot\": {}, \"Art\": {}, "
		    "\"!!!\": {}}");

	ck_assert_str_eq(routing_match(r, "coding"), "Coding");
	ck_assert_str_eq(routing_match(r, "  It's CODING.\n"), "Coding");
	ck_assert_str_eq(routing_match(r, "chatbot"), "Chat-Bot");
	ck_assert_str_eq(routing_match(r, "smart chatbot"), "Art");
	ck_assert_str_eq(routing_match(r, "chatbot smart"), "Chat-Bot");
	ck_assert_str_eq(routing_match(r, "chatbotcoding"), "Coding");
	ck_assert_str_eq(routing_match(r, "cod.ing"), "Coding");
	ck_assert_ptr_null(routing_match(r, "code chat bot"));
	ck_assert_ptr_null(routing_match(r, "!!!"));
	ck_assert_ptr_null(routing_match(r, ""));
	json_decref(r);
}
END_TEST

/* The user's routing: categoriser, then the category's workflow. */
static void
routing_user(int attempts)
{
	char	 u[300];

	snprintf(u, sizeof(u), "{" USER_BASE ", 'routingConfig': 'router', "
	    "'categorizationWorkflow': 'cat', 'maxCategorizationAttempts': "
	    "%d}", attempts);
	conf("Users/tester.json", u);
	conf("Routing/router.json", "{'Chat': {'description': 'talk', "
	    "'workflow': 'chat'}, 'Coding': {'description': 'code', "
	    "'workflow': 'code'}}");
	workflow("chat", "[{'text': 'chatting'}]");
	workflow("code", "[{'text': 'coding'}]");
	workflow("_DefaultWorkflow", "[{'text': 'default'}]");
}

/* The categoriser is neither delivered nor top-level; its output picks
 * the workflow that answers. */
START_TEST(routing_picks_workflow)
{
	routing_user(1);
	workflow("cat", "[{'text': 'I would say: CODING!'}]");
	ck_answer("coding");
	ck_assert_str_eq(trace(), "cat:1R code:1RDT ");
}
END_TEST

/* The categoriser sees the categories as variables. */
START_TEST(routing_category_variables)
{
	routing_user(1);
	workflow("cat", "[{'text': '{category_list}'}]");
	ck_answer("chatting");
}
END_TEST

/* Up to maxCategorizationAttempts runs, then _DefaultWorkflow. */
START_TEST(routing_attempts)
{
	routing_user(3);
	workflow("cat", "[{'texts': ['hmm', 'not sure', 'chat']}]");
	ck_answer("chatting");
	ck_assert_str_eq(trace(), "cat:1R cat:1R cat:1R chat:1RDT ");
	again();
	routing_user(2);
	ck_answer("default");
	ck_assert_str_eq(trace(), "cat:1R cat:1R _DefaultWorkflow:1RDT ");
}
END_TEST

/* A categoriser that ends early (a WorkflowLock held) ends the request,
 * as any workflow that ends early does: no other attempt, no category
 * workflow. */
START_TEST(routing_early_end)
{
	routing_user(3);
	workflow("cat", "[{'end': true}]");
	ck_answer("");
	ck_assert_str_eq(trace(), "cat:1R ");
}
END_TEST

START_TEST(routing_errors)
{
	routing_user(1);
	workflow("cat", "[{'fail': 502}]");
	ck_error(502, "node_error", "workflow 'cat' node 1");
	conf("Users/tester.json", "{" USER_BASE ", 'routingConfig': 'none', "
	    "'categorizationWorkflow': 'cat'}");
	ck_error(500, "config_error", "none");
}
END_TEST

/* ---- message timestamps (wf_ts.c) ---- */

static struct scratchdb	 t_db;
static bool		 t_give_up;	/* the store's lock waits give up */

static int
on_wait(void *arg)
{
	return t_give_up ? 1 : 0;
}

/* A store whose lock waits are short (and give up with t_give_up). */
static void
ts_setup(void)
{
	struct store_opts	 o = { .so_busy_ms = 300,
				    .so_on_wait = on_wait };
	char			 err[STORE_ERRLEN];

	setup();
	scratchdb_open(&t_db, "engine");
	store_close(t_db.sd_store);
	t_db.sd_store = store_open(t_db.sd_path, &o, err);
	ck_assert_msg(t_db.sd_store != NULL, "%s", err);
	t_rq.fr_store = t_db.sd_store;
	t_give_up = false;
	t_rs.nmsgs = 0;
	msg("system", "sys[DiscussionId]d1[/DiscussionId]");
	msg("user", "hi");
}

static void
ts_teardown(void)
{
	scratchdb_close(&t_db);
	teardown();
}

/* The number sql counts in the store. */
static long
count(const char *sql)
{
	char	*r = scratchdb_rows(&t_db, sql);
	long	 n = atol(r);

	free(r);
	return n;
}

#define STAMPS		"SELECT count(*) FROM timestamps WHERE " \
			"discussion = 'd1'"
#define PLACEHOLDERS	STAMPS " AND msg_hash = '" TS_PLACEHOLDER "'"

/* got is head, a stamp, tail; the stamp of t0 or of a second later
 * (the request may have crossed a second). */
static void
ck_stamped(const char *got, time_t t0, const char *head, const char *tail)
{
	char	 st[TS_LEN], *a, *b;

	ts_format(ts_wall(t0), st);
	a = xasprintf("%s%s%s", head, st, tail);
	ts_format(ts_wall(t0 + 1), st);
	b = xasprintf("%s%s%s", head, st, tail);
	ck_assert_msg(strcmp(got, a) == 0 || strcmp(got, b) == 0,
	    "got '%s', want '%s'", got, a);
	free(a);
	free(b);
}

/* The flag stamps the messages (not the system one) for its node; the
 * history is kept, and the answer's placeholder saved. */
START_TEST(ts_stamped_messages)
{
	time_t	 t0 = time(NULL);

	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'show': 'messages'}]");
	ck_stamped(run(), t0, "system|sys\nuser|", " hi\n");
	ck_assert_uint_eq(t_res.r_status, RQ_OK);
	ck_assert_int_eq(count(STAMPS), 2);
	ck_assert_int_eq(count(PLACEHOLDERS), 1);
}
END_TEST

START_TEST(ts_relative)
{
	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'useRelativeTimestamps': true, 'show': 'messages'}]");
	ck_answer("system|sys\nuser|[Sent less than a minute ago] hi\n");
}
END_TEST

/* Without a discussion id, or without the flag: nothing stamped,
 * nothing kept. */
START_TEST(ts_needs_id_and_flag)
{
	workflow("main", "[{'show': 'messages'}]");
	ck_answer("system|sys\nuser|hi\n");
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 0);
	again();
	t_msgs[0].content = str_from("sys");
	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'show': 'messages'}]");
	ck_answer("system|sys\nuser|hi\n");
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 0);
}
END_TEST

/* The stamp the store has for msg_hash h (a hash, or the placeholder's
 * name). Caller frees. */
static char *
stamp_of(const char *h)
{
	char	*sql = xasprintf("SELECT stamp FROM timestamps WHERE "
		    "discussion = 'd1' AND msg_hash = '%s'", h);
	char	*r = scratchdb_rows(&t_db, sql);

	ck_assert_msg(strchr(r, '\n') != NULL, "no stamp for %s", h);
	*strchr(r, '\n') = '\0';
	free(sql);
	return r;
}

/* The next request gives the placeholder's stamp to the answer (the
 * newest assistant message without one), then drops it; the others
 * keep theirs. */
START_TEST(ts_placeholder_goes_to_the_answer)
{
	char	 h[SHA256_HEXLEN], *hi, *ans, *want;

	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'text': 'ans'}]");
	ck_answer("ans");
	sha256_hex("hi", 2, h);
	hi = stamp_of(h);
	ans = stamp_of(TS_PLACEHOLDER);
	want = xasprintf("system|sys\nuser|%s hi\nassistant|%s ans\n", hi,
	    ans);
	again();
	msg("assistant", "ans");
	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, 'show': "
	    "'messages'}, {'text': '{agent1Output}'}]");
	ck_answer(want);
	ck_assert_int_eq(count(STAMPS), 2);
	ck_assert_int_eq(count(PLACEHOLDERS), 0);
	free(hi);
	free(ans);
	free(want);
}
END_TEST

/* With useGroupChatTimestampLogic the answer is stamped at once. */
START_TEST(ts_group_chat_commits)
{
	char	 h[SHA256_HEXLEN], *sql;

	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'useGroupChatTimestampLogic': true, 'text': 'ans'}]");
	ck_answer("ans");
	ck_assert_int_eq(count(PLACEHOLDERS), 0);
	sha256_hex("ans", 3, h);
	sql = xasprintf(STAMPS " AND msg_hash = '%s'", h);
	ck_assert_int_eq(count(sql), 1);
	free(sql);
}
END_TEST

START_TEST(ts_time_context)
{
	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'text': '{time_context_summary}'}]");
	ck_answer("[Time Context: The conversation started less than a "
	    "minute ago.]");
}
END_TEST

/* Stamped messages are for top-level runs and streaming children. */
START_TEST(ts_only_top_level)
{
	time_t	 t0 = time(NULL);

	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'child'}, {'text': '{agent1Output}'}]");
	workflow("child", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'show': 'messages'}]");
	ck_answer("system|sys\nuser|hi\n");
	again();
	t_rs.stream = true;
	workflow("main", "[{'type': 'CustomWorkflow', 'workflowName': "
	    "'child'}]");
	ck_stamped(run(), t0, "system|sys\nuser|", " hi\n");
}
END_TEST

/* No database, or a database that stays locked: the request goes on
 * without timestamps. */
START_TEST(ts_database_errors_are_not_fatal)
{
	struct store	*db;

	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true, "
	    "'show': 'messages'}]");
	t_rq.fr_store = NULL;
	ck_answer("system|sys\nuser|hi\n");
	again();
	t_rq.fr_store = t_db.sd_store;
	db = scratchdb_hold(t_db.sd_path);
	ck_answer("system|sys\nuser|hi\n");
	store_close(db);
	ck_assert_int_eq(count("SELECT count(*) FROM timestamps"), 0);
}
END_TEST

/* Stopped while waiting for the database: cancelled before any node. */
START_TEST(ts_cancelled_while_waiting)
{
	struct store	*db;

	workflow("main", "[{'addDiscussionIdTimestampsForLLM': true}]");
	db = scratchdb_hold(t_db.sd_path);
	t_give_up = true;
	run();
	store_close(db);
	ck_assert_uint_eq(t_res.r_status, RQ_CANCELLED);
	ck_assert_str_eq(trace(), "");
}
END_TEST

static Suite *
engine_suite(void)
{
	Suite	*s = suite_create("engine");
	TCase	*tc;

#define TC(name)	do {						\
	tc = tcase_create(name);					\
	tcase_add_checked_fixture(tc, setup, teardown);			\
	suite_add_tcase(s, tc);						\
} while (0)
	TC("responder");
	tcase_add_test(tc, last_node_answers);
	tcase_add_test(tc, marked_node_answers);
	tcase_add_test(tc, usage_estimated);
	TC("deliver");
	tcase_add_test(tc, one_chunk_without_stream);
	tcase_add_test(tc, words_when_streaming);
	tcase_add_test(tc, streamed_output_not_repeated);
	TC("variables");
	tcase_add_test(tc, agent_outputs);
	tcase_add_test(tc, workflow_keys);
	TC("nested");
	tcase_add_test(tc, child_answers);
	tcase_add_test(tc, child_result_is_output);
	tcase_add_test(tc, child_inputs);
	tcase_add_test(tc, child_messages_and_tools);
	tcase_add_test(tc, first_node_overrides);
	tcase_add_test(tc, depth_limit);
	tcase_add_test(tc, early_end_ends_parents);
	TC("early_answer");
	tcase_add_test(tc, answer_before_later_nodes);
	tcase_add_test(tc, answer_before_parent_nodes);
	TC("types");
	tcase_add_test(tc, unknown_type_runs_as_standard);
	tcase_add_test(tc, failing_node_stops_the_run);
	tcase_add_test(tc, cancel_between_nodes);
	TC("select");
	tcase_add_test(tc, shared_workflow_first);
	tcase_add_test(tc, user_of_the_request);
	tcase_add_test(tc, config_errors);
	tcase_add_test(tc, messages_made_ready);
	tcase_add_test(tc, seam_set_while_running);
	TC("routing");
	tcase_add_test(tc, match_rules);
	tcase_add_test(tc, routing_picks_workflow);
	tcase_add_test(tc, routing_category_variables);
	tcase_add_test(tc, routing_attempts);
	tcase_add_test(tc, routing_early_end);
	tcase_add_test(tc, routing_errors);
	tc = tcase_create("timestamps");
	tcase_add_checked_fixture(tc, ts_setup, ts_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, ts_stamped_messages);
	tcase_add_test(tc, ts_relative);
	tcase_add_test(tc, ts_needs_id_and_flag);
	tcase_add_test(tc, ts_placeholder_goes_to_the_answer);
	tcase_add_test(tc, ts_group_chat_commits);
	tcase_add_test(tc, ts_time_context);
	tcase_add_test(tc, ts_only_top_level);
	tcase_add_test(tc, ts_database_errors_are_not_fatal);
	tcase_add_test(tc, ts_cancelled_while_waiting);
	suite_add_tcase(s, tc);
#undef TC
	return s;
}

int
main(void)
{
	return check_main(engine_suite());
}
