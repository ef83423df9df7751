/* check_wilmer.c - integration: WilmerAI's own example configurations run against the mock backend. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it/harness.h"
#include "testmain.h"

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

static void
stop_clean(void)
{
	int	 st = it_stop(&T, 15000);

	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "gateway did not exit cleanly (status %d)", st);
}

static json_t *
mock_log(void)
{
	struct it_resp	 r;
	json_t		*a;

	ck_assert_int_eq(it_request(&T, "GET", "mock:/mock/requests", NULL,
	    &r), 0);
	a = it_json(r.r_body.b_data);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "DELETE", "mock:/mock/requests", NULL,
	    &r), 0);
	it_resp_free(&r);
	return a;
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
	return mock_log();
}

static json_t *
chat_ok(const char *model, bool stream, const char *user_text)
{
	return chat_want(model, stream, user_text,
	    "The quick brown fox jumps over the lazy dog.");
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
	stop_clean();
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
	json_t		*log, *j;
	struct it_resp	 r;
	char		*body;

	if (!find_shipped())
		return;
	start_as("_simple_router_no_memory");
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
	 * offline wiki workflow runs, whose node types Sluice does not run;
	 * the error names them. */
	j = json_pack("{s:s,s:[{s:s,s:s}]}", "model", "x", "messages", "role",
	    "user", "content", "hi\n#mock {\"text\": \"#mock {\\\"text\\\": "
	    "\\\"WIKI\\\"}\"}");
	body = json_dumps(j, 0);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 501, "%ld %s", r.r_status, r.r_body.b_data);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "OfflineWiki"));
	it_resp_free(&r);
	free(body);
	json_decref(j);
	stop_clean();
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
	stop_clean();
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
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(wilmer_suite());
}
