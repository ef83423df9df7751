/* check_wilmer.c - integration: WilmerAI's own example configurations run against the mock backend. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../testmain.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;
static char		 shipped[PATH_MAX];

static bool
find_shipped(void)
{
	const char	*src = getenv("SLUICE_SRC");
	struct stat	 st;

	snprintf(shipped, sizeof(shipped), "%s/../shared/reference/"
	    "wilmer-configs", src != NULL ? src : ".");
	return stat(shipped, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A copy of the shipped folder whose every endpoint is the mock. */
static void
start_as(const char *user)
{
	char	 cmd[PATH_MAX * 3], cur[128];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "cp -r '%s'/. '%s'/ && find '%s/Endpoints' "
	    "-name '*.json' -exec sed -i -E 's#\"endpoint\": *\"[^\"]*\"#"
	    "\"endpoint\": \"http://127.0.0.1:%d\"#' {} +", shipped, T.it_dir,
	    T.it_dir, T.it_mock_port);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cur, sizeof(cur), "{\"currentUser\": \"%s\"}", user);
	it_file(&T, "Users/_current-user.json", cur);
	it_gateway_start(&T, NULL);
}

/* The shipped users' offline Wikipedia API: tests/mock-wiki, with an
 * article that the mock's default text finds and one that "WIKI"
 * finds; the users' port pointed at it. */
static pid_t	 wiki;
static int	 wiki_port;

#define WIKI_FOX	"Foxes are small omnivores; the quick brown fox " \
			"jumps over the lazy dog."
#define WIKI_WIKI	"A wiki is a website that its readers edit."

static void
wiki_start(void)
{
	char		 cmd[PATH_MAX * 2], corpus[PATH_MAX];
	const char	*args[] = { "--corpus", corpus, NULL };

	it_file(&T, "wiki-corpus.json", "[{\"title\": \"Fox\", "
	    "\"text\": \"" WIKI_FOX "\"}, {\"title\": \"Wiki\", "
	    "\"text\": \"" WIKI_WIKI "\"}]");
	snprintf(corpus, sizeof(corpus), "%s/wiki-corpus.json", T.it_dir);
	wiki = it_double_start("mock-wiki", args, &wiki_port);
	snprintf(cmd, sizeof(cmd), "sed -i -E 's#\"offlineWikiApiPort\": "
	    "*[0-9]+#\"offlineWikiApiPort\": %d#' '%s'/Users/*.json",
	    wiki_port, T.it_dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void
wiki_stop(void)
{
	it_double_stop(wiki);
}

/* What mock-wiki saw: {"count": N, "last": {"path", "query",
 * "headers"}}. Caller decrefs. */
static json_t *
wiki_last(void)
{
	char		 url[128];
	struct it_resp	 r;
	json_t		*v;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_last", wiki_port);
	ck_assert_int_eq(it_request_url("GET", url, NULL, NULL, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	v = it_json(r.r_body.b_data);
	it_resp_free(&r);
	return v;
}

/* A chat with the model field, streamed or not: 200 and the mock's text
 * back; returns the backend requests it caused. */
static json_t *
chat_want(const char *model, bool stream, const char *user_text,
    const char *want)
{
	json_t		*b = json_pack("{s:s,s:b,s:[{s:s,s:s},{s:s,s:s}]}",
			    "model", model, "stream", stream, "messages", "role",
			    "system", "content", "You are Wilmer.", "role",
			    "user", "content", user_text);
	char		*body = json_dumps(b, 0);
	struct it_resp	 r;
	struct sse_summary ss;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "model %s: %ld %s", model, r.r_status,
	    r.r_body.b_data);
	if (stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert_str_eq(ss.ss_text, want);
		ck_assert(ss.ss_done && !ss.ss_error);
		free(ss.ss_text);
	} else
		ck_assert_msg(strstr(r.r_body.b_data, want) != NULL,
		    "model %s: %s", model, r.r_body.b_data);
	it_resp_free(&r);
	free(body);
	json_decref(b);
	return it_mock_log(&T, true);
}

static json_t *
chat_ok(const char *model, bool stream, const char *user_text)
{
	return chat_want(model, stream, user_text,
	    "The quick brown fox jumps over the lazy dog.");
}

/* True when a request of log sent text somewhere in its messages. */
static bool
log_has(json_t *log, const char *text)
{
	json_t	*req;
	char	*s;
	size_t	 i;
	bool	 found = false;

	json_array_foreach(log, i, req) {
		s = json_dumps(json_object_get(req, "body"), 0);
		found = found || (s != NULL && strstr(s, text) != NULL);
		free(s);
	}
	return found;
}

/* A request whose workflow reaches the shipped OfflineWikiApiBestFull-
 * Article node: 200, streamed or not; mock-wiki asked for the top
 * article at least once more, with the prompt the workflow made; the
 * article in a backend request after it. Returns the last query sent
 * (caller frees). */
static char *
expect_wiki(bool stream, const char *user_text, const char *article)
{
	json_t		*b = json_pack("{s:s,s:b,s:[{s:s,s:s}]}", "model", "x",
			    "stream", stream, "messages", "role", "user",
			    "content", user_text), *last, *seen, *log;
	char		*body = json_dumps(b, 0), *prompt;
	long		 before;
	struct it_resp	 r;
	struct sse_summary ss;

	last = wiki_last();
	before = json_integer_value(json_object_get(last, "count"));
	json_decref(last);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status, r.r_body.b_data);
	if (stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert(ss.ss_done && !ss.ss_error);
		free(ss.ss_text);
	}
	last = wiki_last();
	ck_assert_int_gt(json_integer_value(json_object_get(last, "count")),
	    before);
	seen = json_object_get(last, "last");
	ck_assert_str_eq(json_string_value(json_object_get(seen, "path")),
	    "/top_article");
	prompt = strdup(json_string_value(json_object_get(seen, "query")));
	log = it_mock_log(&T, true);
	ck_assert_msg(log_has(log, article), "article not passed on "
	    "(searched %s)", prompt);
	json_decref(log);
	json_decref(last);
	it_resp_free(&r);
	free(body);
	json_decref(b);
	return prompt;
}

/* The shared workflows of chat-ui, chosen by the model field. */
START_TEST(shared_workflows_by_model)
{
	static const char *const models[] = { "general", "chat-ui:fast",
	    "task", "general-reasoning:latest", "fast-reasoning" };
	json_t		*log, *msgs;
	size_t		 i;
	const char	*sys;

	if (!find_shipped()) {
		fprintf(stderr, "check_wilmer: %s absent; skipped\n", shipped);
		return;
	}
	start_as("chat-ui");
	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		log = chat_ok(models[i], i % 2 == 1, "How tall is Everest?");
		ck_assert_uint_eq(json_array_size(log), 1);
		msgs = json_object_get(json_object_get(json_array_get(log, 0),
		    "body"), "messages");
		sys = json_string_value(json_object_get(json_array_get(msgs, 0),
		    "content"));
		/* _common/General's system prompt, variables filled in, the
		 * client's system prompt inside it. */
		ck_assert_ptr_nonnull(sys);
		ck_assert_msg(strstr(sys, "{") == NULL, "unfilled: %.300s", sys);
		ck_assert_ptr_nonnull(strstr(sys, "You are Wilmer."));
		json_decref(log);
	}
	it_stop_clean(&T);
}
END_TEST

/* The content of message i of backend request k. */
static const char *
sent(json_t *log, size_t k, size_t i)
{
	return json_string_value(json_object_get(json_array_get(
	    json_object_get(json_object_get(json_array_get(log, k), "body"),
	    "messages"), i), "content"));
}

/* Routing: the categoriser's two calls, then the route it names. */
START_TEST(simple_router)
{
	json_t	*log;
	int	 stream;

	if (!find_shipped())
		return;
	start_as("_simple_router_no_memory");
	wiki_start();
	/* The mock's answer names no category: _DefaultWorkflow runs. */
	log = chat_ok("x", false, "hello");
	ck_assert_uint_eq(json_array_size(log), 3);
	ck_assert_ptr_nonnull(strstr(sent(log, 1, 1), "\n- WIKI\n- GENERAL."));
	ck_assert_ptr_nonnull(strstr(sent(log, 0, 1), "- WIKI: The request"));
	json_decref(log);
	/* Scripted to say GENERAL: the general route answers. */
	log = chat_want("x", true, "hello\n#mock {\"text\": \"General.\"}",
	    "General.");
	ck_assert_uint_eq(json_array_size(log), 3);
	json_decref(log);
	/* The analyser's reply scripts the categoriser to say WIKI: the
	 * offline wiki workflow runs and searches mock-wiki, streamed or
	 * not. */
	for (stream = 0; stream < 2; stream++)
		free(expect_wiki(stream, "hi\n#mock {\"text\": \"#mock "
		    "{\\\"text\\\": \\\"WIKI\\\"}\"}", WIKI_WIKI));
	wiki_stop();
	it_stop_clean(&T);
}
END_TEST

/* Chain of thought: _common/General_CoT's two Standard nodes, the
 * second seeing the first's output. */
START_TEST(cot_user)
{
	json_t	*log;

	if (!find_shipped())
		return;
	start_as("chat-ui-cot");
	log = chat_ok("general-reasoning", false, "Why is the sky blue?");
	ck_assert_uint_eq(json_array_size(log), 2);
	/* The responder's prompt carries the thinker's output. */
	ck_assert_ptr_nonnull(strstr(sent(log, 1, 1),
	    "The quick brown fox jumps over the lazy dog."));
	ck_assert_ptr_null(strstr(sent(log, 0, 1), "quick brown fox"));
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* ---- the chat-ui family, every shared workflow ---------------------- */

/* One shared workflow: its backend calls, in order, with the max-new-
 * tokens value each sends (from the parent's scoped_variables through
 * {agentNInput}) and the temperature of the endpoint's presetSamplers
 * (0.6 for the *-Reasoning-Endpoint files, 0.3 for the others). */
struct shared_wf {
	const char	*sw_model;
	size_t		 sw_calls;
	long		 sw_tokens[2];
	double		 sw_temp;
};

struct family {
	const char		*fa_user;
	struct shared_wf	 fa_wf[5];
};

#define ONE(m, t)	{ m, 1, { 8000 }, t }
#define BIG(m)		{ m, 1, { 12000 }, 0.6 }
#define COT(m)		{ m, 2, { 12000, 8000 }, 0.3 }

static const struct family families[] = {
	{ "chat-ui", { ONE("general", 0.3), ONE("fast", 0.3),
	    ONE("task", 0.3), BIG("general-reasoning"),
	    BIG("fast-reasoning") } },
	{ "chat-ui-cot", { ONE("general", 0.3), ONE("fast", 0.3),
	    ONE("task", 0.3), COT("general-reasoning"),
	    COT("fast-reasoning") } },
	/* ImageProcessor first: no image in the request, no call. */
	{ "chat-ui-discussionid", { ONE("general", 0.3), ONE("fast", 0.3),
	    ONE("task", 0.3), ONE("general-reasoning", 0.6),
	    ONE("fast-reasoning", 0.6) } },
	{ "chat-ui-cot-discussionid", { ONE("general", 0.3),
	    ONE("fast", 0.3), ONE("task", 0.3), COT("general-reasoning"),
	    COT("fast-reasoning") } },
};

/* Each call of log as sw says; only the last one (the responder's)
 * streams, and only when the client streams. */
static void
check_calls(const char *user, const struct shared_wf *sw, json_t *log,
    bool stream)
{
	json_t		*body, *msgs;
	const char	*sys;
	size_t		 k;

	ck_assert_msg(json_array_size(log) == sw->sw_calls, "%s %s: %zu "
	    "calls", user, sw->sw_model, json_array_size(log));
	for (k = 0; k < sw->sw_calls; k++) {
		body = json_object_get(json_array_get(log, k), "body");
		ck_assert_str_eq(json_string_value(json_object_get(
		    json_array_get(log, k), "path")), "/v1/chat/completions");
		ck_assert_msg(json_integer_value(json_object_get(body,
		    "n_predict")) == sw->sw_tokens[k], "%s %s call %zu: %s",
		    user, sw->sw_model, k, json_dumps(body, 0));
		ck_assert(json_real_value(json_object_get(body,
		    "temperature")) == sw->sw_temp);
		ck_assert(json_is_true(json_object_get(body, "stream")) ==
		    (stream && k + 1 == sw->sw_calls));
		msgs = json_object_get(body, "messages");
		sys = json_string_value(json_object_get(json_array_get(msgs,
		    0), "content"));
		ck_assert_ptr_nonnull(sys);
		ck_assert_msg(strstr(sys, "You are Wilmer.") != NULL &&
		    strchr(sys, '{') == NULL, "%s %s call %zu: %.400s", user,
		    sw->sw_model, k, sys);
	}
}

static void
run_family(const struct family *fa)
{
	const struct shared_wf	*sw;
	json_t			*log;
	size_t			 i;
	int			 stream;

	if (!find_shipped())
		return;
	start_as(fa->fa_user);
	for (i = 0; i < 5; i++)
		for (stream = 0; stream < 2; stream++) {
			sw = &fa->fa_wf[i];
			log = chat_ok(sw->sw_model, stream, "How tall is "
			    "Everest?");
			check_calls(fa->fa_user, sw, log, stream);
			json_decref(log);
		}
	it_stop_clean(&T);
}

START_TEST(family_chat_ui)
{
	run_family(&families[0]);
}
END_TEST

START_TEST(family_chat_ui_cot)
{
	run_family(&families[1]);
}
END_TEST

START_TEST(family_chat_ui_discussionid)
{
	run_family(&families[2]);
}
END_TEST

START_TEST(family_chat_ui_cot_discussionid)
{
	run_family(&families[3]);
}
END_TEST

/* ---- the offline Wikipedia examples -------------------------------- */

START_TEST(wikipedia_users)
{
	static const char *const users[] = { "_wikipedia_quick_workflow",
	    "_wikipedia_multi_step_workflow" };
	size_t	 i;
	int	 stream;
	char	*q;

	if (!find_shipped())
		return;
	for (i = 0; i < 2; i++) {
		start_as(users[i]);
		wiki_start();
		/* The search prompt is what the workflow's LLM calls made
		 * of the question (the mock's text), form-encoded. */
		for (stream = 0; stream < 2; stream++) {
			q = expect_wiki(stream, "Who was Ada Lovelace?",
			    WIKI_FOX);
			ck_assert_str_eq(q, "prompt=The+quick+brown+fox+jumps+"
			    "over+the+lazy+dog.&percentile=0.5&"
			    "num_results=10");
			free(q);
		}
		wiki_stop();
		it_stop_clean(&T);
	}
}
END_TEST

/* ---- the memory examples --------------------------------------------- */

/* The shipped user file with its files folder (userWideWorkflowVariables
 * var) pointed at the test's folder, which sluiceFileDirectories then
 * allows (Sluice opens no other path); a file there. */
static void
own_files(const char *user, const char *var)
{
	char	 path[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32];
	json_t	*u, *wide;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/Users/%s.json", T.it_dir, user);
	snprintf(dir, sizeof(dir), "%s/files", T.it_dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "%s/world_info.txt", dir);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fputs("The world is a small island.\n", f);
	fclose(f);
	ck_assert_ptr_nonnull(u = json_load_file(path, 0, NULL));
	wide = json_object_get(u, "userWideWorkflowVariables");
	json_object_set_new(wide, var, json_string(dir));
	json_object_set_new(u, "sluiceFileDirectories", json_pack("[s]", dir));
	ck_assert_int_eq(json_dump_file(u, path, JSON_INDENT(2)), 0);
	json_decref(u);
}

/* A conversation of n messages in discussion "ex"; streamed or not, the
 * responder's answer (the mock's) comes back. Returns the backend
 * requests it caused. */
static json_t *
long_turn(int n, bool stream)
{
	json_t			*msgs = json_array(), *b;
	char			 text[96], *body;
	struct it_resp		 r;
	struct sse_summary	 ss;
	int			 k;

	json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system",
	    "content", "A game. [DiscussionId]ex[/DiscussionId]"));
	for (k = 1; k <= n; k++) {
		snprintf(text, sizeof(text), "%s %d: the party walks on along "
		    "the shore", k % 2 ? "Hero" : "Guide", k);
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    k % 2 ? "user" : "assistant", "content", text));
	}
	b = json_pack("{s:s,s:b,s:o}", "model", "x", "stream", stream,
	    "messages", msgs);
	body = json_dumps(b, 0);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status,
	    r.r_body.b_data);
	if (stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert(ss.ss_done && !ss.ss_error);
		ck_assert_str_eq(ss.ss_text, "The quick brown fox jumps over "
		    "the lazy dog.");
		free(ss.ss_text);
	} else
		ck_assert_msg(strstr(r.r_body.b_data, "lazy dog.") != NULL,
		    "%s", r.r_body.b_data);
	it_resp_free(&r);
	free(body);
	json_decref(b);
	it_wait_idle(&T, 1);	/* the nodes after the answer are done */
	return it_mock_log(&T, true);
}

/* The file-memory game bot: no memory on the first turn (no ledger yet,
 * and few tokens), memories on the second (more than
 * maxMessagesBetweenChunks new messages), the summary tool workflow
 * when they are new, the world file in the responder's prompt. */
START_TEST(game_bot_file_memory)
{
	json_t	*log;

	if (!find_shipped())
		return;
	start_as("_example_game_bot_with_file_memory");
	own_files("_example_game_bot_with_file_memory", "gameTempDir");
	log = long_turn(30, false);
	ck_assert(log_has(log, "The world is a small island."));
	ck_assert(!log_has(log, "summarize the new messages into a new"));
	json_decref(log);
	log = long_turn(32, true);
	ck_assert(log_has(log, "summarize the new messages into a new"));
	ck_assert(log_has(log, "Hero 1: the party walks on"));
	json_decref(log);
	/* 25 new messages (7 held back) in one chunk of 12000 tokens */
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories WHERE "
	    "discussion = 'ex'"), 1);
	it_stop_clean(&T);
}
END_TEST

/* The vector-memory assistant: facts are asked of Memory_Vector_Workflow
 * on the first turn already (the vector path counts messages without a
 * ledger); the mock's answer holds none, so the chunk is not logged and
 * the next turn asks again. The keyword search and the state document
 * answer without facts. */
START_TEST(assistant_vector_memory)
{
	json_t	*log;
	int	 turn;

	if (!find_shipped())
		return;
	start_as("_example_assistant_with_vector_memory");
	own_files("_example_assistant_with_vector_memory", "personaDir");
	for (turn = 0; turn < 2; turn++) {
		log = long_turn(30 + 2 * turn, turn == 1);
		ck_assert(log_has(log, "You are a Fact Extraction Agent"));
		ck_assert(log_has(log, "No state document has been created "
		    "yet"));
		json_decref(log);
	}
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM "
	    "vector_hash_log"), 0);
	it_stop_clean(&T);
}
END_TEST

/* MCPToolCall: WilmerAI's shipped MCP example drives it from a
 * PythonModule and jinja2 nodes (a7_mcp_example_renders), so a workflow
 * of our own in the shipped folder, under chat-ui's shared workflows:
 * the node is the responder, its tool's text the answer, streamed word
 * by word or not; a failing call is the answer with onError "return",
 * an HTTP 500 without. The server is tests/mcp/fake_server.py over
 * stdio. chat-ui adds "User: " to the prompt. */
static void
mcp_workflow(const char *model, const char *tool, const char *on_error)
{
	char	 path[256], wf[1024];

	snprintf(path, sizeof(path), "Workflows/_shared/%s/_DefaultWorkflow."
	    "json", model);
	snprintf(wf, sizeof(wf), "{\"nodes\": [{\"type\": \"MCPToolCall\", "
	    "\"server\": \"fake\", \"tool\": \"%s\", \"onError\": \"%s\", "
	    "\"arguments\": {\"said\": \"{chat_user_prompt_last_one}\", "
	    "\"n\": 3}}]}", tool, on_error);
	it_file(&T, path, wf);
}

START_TEST(mcp_tool_call)
{
	char		 srv[PATH_MAX * 2], cwd[PATH_MAX / 2];
	struct it_resp	 r;
	struct sse_summary ss;
	json_t		*log;
	int		 stream;

	if (!find_shipped())
		return;
	start_as("chat-ui");
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	snprintf(srv, sizeof(srv), "{\"transport\": \"stdio\", \"command\": "
	    "\"python3\", \"args\": [\"%s/tests/mcp/fake_server.py\"]}", cwd);
	it_file(&T, "MCPServers/fake.json", srv);
	mcp_workflow("mcp-say", "say", "raise");
	mcp_workflow("mcp-return", "rpcerror", "return");
	mcp_workflow("mcp-raise", "rpcerror", "raise");
	for (stream = 0; stream < 2; stream++) {
		log = chat_want("mcp-say", stream, "Hello there",
		    "User: Hello there (3)");
		ck_assert_uint_eq(json_array_size(log), 0);
		json_decref(log);
		json_decref(chat_want("mcp-return", stream, "Hi",
		    "MCP call to 'fake.rpcerror' failed: Unknown tool: "
		    "rpcerror"));
	}
	/* streamed word by word, as WilmerAI's static content */
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"model\": \"mcp-say\", \"stream\": true, \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"a b c\"}]}", &r), 0);
	it_sse_parse(r.r_body.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "User: a b c (3)");
	ck_assert_int_ge(ss.ss_chunks, 9);
	free(ss.ss_text);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"model\": \"mcp-raise\", \"stream\": false, \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"Hi\"}]}", &r), 0);
	ck_assert_int_eq(r.r_status, 500);
	ck_assert_msg(strstr(r.r_body.b_data, "Unknown tool: rpcerror") != NULL,
	    "%s", r.r_body.b_data);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* A Standard node with "jinja2": true (addendum A7), under chat-ui's
 * shared workflows: the workflow's list and string keys, the messages
 * (their braces as they were), a literal {name} kept; the exact prompt
 * reaches the backend. StringConcatenator and StaticResponse render
 * too ("jinja2" truthy as Python sees it), streamed or not. A template that fails answers HTTP 500 naming
 * it, and nothing is sent. */
START_TEST(a7_jinja_standard_node)
{
	json_t		*log, *msgs;
	struct it_resp	 r;

	if (!find_shipped())
		return;
	start_as("chat-ui");
	it_file(&T, "Workflows/_shared/jinja-chat/_DefaultWorkflow.json",
	    "{\"persona\": \"Sluice\", \"rules\": [\"be brief\", "
	    "\"be kind\"], \"nodes\": [{\"title\": \"Jinja Responder\", "
	    "\"type\": \"Standard\", \"endpointName\": \"General-Endpoint\", "
	    "\"preset\": \"General-Endpoint\", \"maxResponseSizeInTokens\": "
	    "100, \"jinja2\": true, \"systemPrompt\": \"You are {{ persona "
	    "}}.{% for r in rules %} Rule {{ loop.index }}: {{ r }}.{% endfor "
	    "%}\", \"prompt\": \"{% for m in messages if m.role == 'user' %}"
	    "{{ m.role | upper }} said: {{ m.content | trim }}\\n{% endfor %}"
	    "{{ messages | length }} messages; {literal} stays.\"}]}");
	it_file(&T, "Workflows/_shared/jinja-broken/_DefaultWorkflow.json",
	    "{\"nodes\": [{\"title\": \"Broken\", \"type\": "
	    "\"Standard\", \"endpointName\": \"General-Endpoint\", "
	    "\"jinja2\": true, \"prompt\": \"ok\\n{{ messages[0].nope.x "
	    "}}\"}]}");
	it_file(&T, "Workflows/_shared/jinja-static/_DefaultWorkflow.json",
	    "{\"nodes\": [{\"type\": \"StringConcatenator\", \"jinja2\": "
	    "\"yes\", \"delimiter\": \"-\", \"strings\": [\"{{ messages | "
	    "length }}\", \"{{ 'x' | upper }}\", \"{kept}\"]}, {\"type\": "
	    "\"StaticResponse\", \"jinja2\": 1, \"content\": \"{{ "
	    "agent1Output }}/{{ agent1Output | length }}\"}]}");
	/* 44: the template sees agent1Output's braces as sentinels (A7) */
	json_decref(chat_want("jinja-static", false, "Hi", "2-X-{kept}/"
	    "44"));
	json_decref(chat_want("jinja-static", true, "Hi", "2-X-{kept}/"
	    "44"));
	log = chat_ok("jinja-chat", false, "Say {hi}");
	ck_assert_uint_eq(json_array_size(log), 1);
	msgs = json_object_get(json_object_get(json_array_get(log, 0),
	    "body"), "messages");
	ck_assert_uint_eq(json_array_size(msgs), 2);
	ck_assert_str_eq(sent(log, 0, 0), "You are Sluice. Rule 1: be brief. "
	    "Rule 2: be kind.");
	ck_assert_str_eq(sent(log, 0, 1), "USER said: User: Say {hi}\n"
	    "2 messages; {literal} stays.");
	json_decref(log);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"model\": \"jinja-broken\", \"stream\": false, "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}",
	    &r), 0);
	ck_assert_int_eq(r.r_status, 500);
	ck_assert_msg(strstr(r.r_body.b_data, "template 'prompt' of node "
	    "'Broken', line 2: UndefinedError: ") != NULL, "%s",
	    r.r_body.b_data);
	it_resp_free(&r);
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 0);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* WilmerAI's shipped MCP example (isevendays...-mcp) runs through: its
 * PythonModule scripts are not shipped, so stubs stand in, the first
 * returning a dict as the real one does. Its jinja2 nodes read that
 * object (agent2Output.chat_system_prompt, agent2Output['messages'] |
 * tojson), the LLM's answer (agent3Output) and the sanitizer's
 * (agent4Output); what each rendered reaches the backend. */
START_TEST(a7_mcp_example_renders)
{
	static const char *dir = "Public/workflow_python_scripts/"
	    "_isevendays_mcp_scripts/";
	static const char *fox = "The quick brown fox jumps over the lazy "
	    "dog.";
	char		 path[256], want[512];
	json_t		*log;
	const char	*p;

	if (!find_shipped())
		return;
	start_as("isevendays-openwebui-norouting-general-offline-mcp");
	snprintf(path, sizeof(path), "%sensure_system_prompt.py", dir);
	it_file(&T, path, "def Invoke(*a, **k):\n    return {"
	    "'chat_system_prompt': 'SYS for ' + k['user_identified_services'],"
	    " 'messages': [{'role': 'user', 'content': 'm'}], "
	    "'discovered_tools_map': {'time': 't'}}\n");
	snprintf(path, sizeof(path), "%ssanitize_llm_response.py", dir);
	it_file(&T, path, "def Invoke(*a, **k):\n    return 'clean<' + "
	    "a[0] + '>'\n");
	snprintf(path, sizeof(path), "%smcp_workflow_integration.py", dir);
	it_file(&T, path, "def Invoke(*a, **k):\n    return repr((a, k))\n");
	log = chat_ok("x", false, "What time is it?");
	/* node 1, node 3 (jinja2), node 6 */
	ck_assert_uint_eq(json_array_size(log), 3);
	snprintf(want, sizeof(want), "SYS for %s", fox);
	ck_assert_str_eq(sent(log, 1, 0), want);
	p = sent(log, 2, 1);
	ck_assert_ptr_nonnull(p);
	/* tojson sorts keys, as jinja2's does */
	ck_assert_msg(strstr(p, "(('[{\"content\": \"m\", \"role\": "
	    "\"user\"}]',), {'original_response': 'clean<") != NULL, "%s", p);
	snprintf(want, sizeof(want), "clean<%s>', 'tool_execution_map': "
	    "'{\"time\": \"t\"}'})", fox);
	ck_assert_msg(strstr(p, want) != NULL, "%s", p);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

static Suite *
wilmer_suite(void)
{
	Suite	*s = suite_create("wilmer");
	TCase	*tc = tcase_create("shipped");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, shared_workflows_by_model);
	tcase_add_test(tc, simple_router);
	tcase_add_test(tc, cot_user);
	tcase_add_test(tc, family_chat_ui);
	tcase_add_test(tc, family_chat_ui_cot);
	tcase_add_test(tc, family_chat_ui_discussionid);
	tcase_add_test(tc, family_chat_ui_cot_discussionid);
	tcase_add_test(tc, wikipedia_users);
	tcase_add_test(tc, game_bot_file_memory);
	tcase_add_test(tc, assistant_vector_memory);
	tcase_add_test(tc, mcp_tool_call);
	tcase_add_test(tc, a7_jinja_standard_node);
	tcase_add_test(tc, a7_mcp_example_renders);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(wilmer_suite());
}
