/* check_research.c - the researcher nodes against tests/mock-research. */
#include <sys/types.h>
#include <sys/wait.h>
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/jsonw.h"
#include "../../worker/nodes/nodes.h"
#include "../../worker/tools/research.h"
#include "../testmain.h"
#include "nodefix.h"

/* Every test (each in its own process) has a node in a scratch folder
 * (nodefix.h), a user with the researcher on at mock-research, and
 * the mock. The node asks "Tell me about {name}": Q is "Tell me about
 * Ann". */
static struct nodefix	 F;
static pid_t		 mock_pid;
static int		 mock_port;

#define Q	"Tell me about Ann"

static void
setup(void)
{
	nodefix_init(&F, false);
	ck_assert_int_eq(transport_init(), 0);
	mock_pid = it_double_start("mock-research", NULL, &mock_port);
	nodefix_user(&F, "useOfflineResearcherApi", json_true());
	nodefix_user(&F, "offlineResearcherApiPort", json_integer(mock_port));
	nodefix_set(&F, "{s:s, s:s}", "type",
	    "OfflineResearcherApiQuickSearch", "promptToSearch",
	    "Tell me about {name}");
}

/* The mock ends cleanly (an ASan build would say otherwise). */
static void
teardown(void)
{
	it_double_stop(mock_pid);
	nodefix_free(&F);
	transport_cleanup();
}

/* ---- the mock's controls ---- */

static json_t *
mock_get(const char *path)
{
	struct it_resp	 r;
	char		 url[128];
	json_t		*v;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", mock_port, path);
	ck_assert_int_eq(it_request_url("GET", url, NULL, NULL, &r), 0);
	v = it_json(r.r_body.b_data);
	it_resp_free(&r);
	return v;
}

static void
mock_script(const char *json)
{
	struct it_resp	 r;
	char		 url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_script",
	    mock_port);
	ck_assert_int_eq(it_request_url("POST", url, NULL, json, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
}

/* A scripted 200 with body (a C string, sent as it is). */
static void
mock_answer(const char *body)
{
	json_t	*o = json_pack("{s:i, s:s}", "status", 200, "body", body);
	char	*s = json_dumps(o, 0);

	mock_script(s);
	free(s);
	json_decref(o);
}

static long long
mock_stat(const char *name)
{
	json_t		*v = mock_get("/_stats");
	long long	 n = json_integer_value(json_object_get(v, name));

	json_decref(v);
	return n;
}

/* The body of the last request the mock received. */
static char *
last_body(void)
{
	json_t	*v = mock_get("/_last");
	char	*s = strdup(json_string_value(json_object_get(v, "body")));

	json_decref(v);
	return s;
}

/* ---- running the node ---- */

/* Run the node (its "type" says which); its output into out. */
static int
run(struct buf *out, struct wresult *res)
{
	const char		*type = node_raw(&F.nf_x, "type");
	const struct node_type	*t = strcmp(type,
				    "OfflineResearcherApiDeepResearch") == 0 ?
				    &node_research_deep : &node_research_quick;
	bool			 streamed = false;

	memset(res, 0, sizeof(*res));
	buf_reset(out);
	return t->nt_run(&F.nf_x, out, &streamed, res);
}

/* The node succeeds with output want. */
static void
ck_output(const char *want)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_msg(run(&out, &res) == 0, "%s", res.r_message);
	buf_addc(&out, '\0');
	ck_assert_str_eq(out.b_data, want);
	buf_free(&out);
}

/* The node succeeds with the error sentence for reason. */
static void
ck_reason(const char *reason)
{
	char	 want[256];

	snprintf(want, sizeof(want), "I'm sorry, the offline researcher "
	    "returned an error (%s) for '" Q "'.", reason);
	ck_output(want);
}

#define UNREACHABLE	"I'm sorry, the offline researcher could not be " \
			"reached for '" Q "'."
#define NOINFO		"No pertinent information was found in the search"

/* ---- A2.3: the request ---- */

START_TEST(body_quick)
{
	json_t	*last;
	char	*b;

	ck_output("mock answer");
	b = last_body();
	ck_assert_str_eq(b, "{\"query\": \"" Q "\", \"mode\": \"quick\"}");
	free(b);
	last = mock_get("/_last");
	ck_assert_str_eq(json_string_value(json_object_get(last, "method")),
	    "POST");
	ck_assert_str_eq(json_string_value(json_object_get(last, "path")),
	    "/search");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    last, "headers"), "Content-Type")), "application/json");
	json_decref(last);
}
END_TEST

START_TEST(body_deep_iterations)
{
	char	*b;

	nodefix_set(&F, "{s:s, s:i}", "type",
	    "OfflineResearcherApiDeepResearch", "maxIterations", 3);
	ck_output("mock answer");
	b = last_body();
	ck_assert_str_eq(b, "{\"query\": \"" Q "\", \"mode\": \"deep\", "
	    "\"max_iterations\": 3}");
	free(b);
}
END_TEST

/* Forwarded raw, whatever its type; null is not sent. */
START_TEST(body_iterations_raw)
{
	char	*b;

	nodefix_set(&F, "{s:s}", "maxIterations", "5");
	ck_output("mock answer");
	b = last_body();
	ck_assert_str_eq(b, "{\"query\": \"" Q "\", \"mode\": \"quick\", "
	    "\"max_iterations\": \"5\"}");
	free(b);
	nodefix_set(&F, "{s:[f,b]}", "maxIterations", 2.0, 1);
	ck_output("mock answer");
	b = last_body();
	ck_assert_str_eq(b, "{\"query\": \"" Q "\", \"mode\": \"quick\", "
	    "\"max_iterations\": [2.0, true]}");
	free(b);
	nodefix_set(&F, "{s:n}", "maxIterations");
	ck_output("mock answer");
	b = last_body();
	ck_assert_str_eq(b, "{\"query\": \"" Q "\", \"mode\": \"quick\"}");
	free(b);
}
END_TEST

/* str() of a non-string promptToSearch; non-ASCII as \uXXXX. */
START_TEST(body_pyjson_query)
{
	char	*b;

	nodefix_set(&F, "{s:s}", "promptToSearch", "caf\xc3\xa9 \xf0\x9f\x98"
	    "\x80 \"{name}\"");
	ck_output("mock answer");
	b = last_body();
	ck_assert_str_eq(b, "{\"query\": \"caf\\u00e9 \\ud83d\\ude00 "
	    "\\\"Ann\\\"\", \"mode\": \"quick\"}");
	free(b);
	nodefix_set(&F, "{s:b}", "promptToSearch", 1);
	ck_output("mock answer");
	b = last_body();
	ck_assert_str_eq(b, "{\"query\": \"True\", \"mode\": \"quick\"}");
	free(b);
}
END_TEST

START_TEST(missing_prompt)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	json_object_del(F.nf_node, "promptToSearch");
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 500);
	ck_assert_str_eq(res.r_message, "workflow 'wf' node 3 "
	    "(OfflineResearcherApiQuickSearch): No 'promptToSearch' "
	    "specified for OfflineResearcherApi node.");
	ck_assert_int_eq(mock_stat("requests"), 0);
	buf_free(&out);
}
END_TEST

/* The full envelope, PyJSON, and no request. */
START_TEST(disabled)
{
	struct research_settings st;
	struct research_call	 c = { Q, "quick", NULL, NULL, 240 };
	json_t			*env;
	char			*s;

	nodefix_user(&F, "useOfflineResearcherApi", json_false());
	ck_reason("offline_researcher_disabled");
	research_settings_load(F.nf_user->u_file.jf_root, &st);
	ck_assert_int_eq(research_search(&st, &c, NULL, &env),
	    RESEARCH_DONE);
	s = jsonw_dumps(env, JSONW_PYTHON);
	ck_assert_str_eq(s, "{\"status\": \"error\", \"reason\": "
	    "\"offline_researcher_disabled\", \"answer\": null, "
	    "\"no_information_found\": false, \"sources\": []}");
	free(s);
	json_decref(env);
	research_settings_free(&st);
	json_object_del(F.nf_user->u_file.jf_root, "useOfflineResearcherApi");
	ck_reason("offline_researcher_disabled");
	ck_assert_int_eq(mock_stat("requests"), 0);
}
END_TEST

/* Defaults: off, 127.0.0.1, 8890; host and port str()-ed. */
START_TEST(settings)
{
	struct research_settings st;
	json_t			*u = json_pack("{s:s, s:i}",
				    "offlineResearcherApiHost", "localhost",
				    "offlineResearcherApiPort", 99);

	research_settings_load(NULL, &st);
	ck_assert(!st.rs_enabled);
	ck_assert_str_eq(st.rs_host, "127.0.0.1");
	ck_assert_str_eq(st.rs_port, "8890");
	research_settings_free(&st);
	research_settings_load(u, &st);
	ck_assert_str_eq(st.rs_host, "localhost");
	ck_assert_str_eq(st.rs_port, "99");
	research_settings_free(&st);
	json_decref(u);
	nodefix_user(&F, "offlineResearcherApiHost", json_string("localhost"));
	nodefix_user(&F, "offlineResearcherApiPort", json_sprintf("%d",
	    mock_port));
	ck_output("mock answer");
}
END_TEST

/* ---- A2.3: every outcome's envelope, through the node's text ---- */

START_TEST(timeout_read)
{
	uint64_t	 t0;

	mock_script("{\"hang\": true}");
	nodefix_set(&F, "{s:f}", "timeoutSeconds", 0.4);
	t0 = it_now();
	ck_reason("timeout");
	ck_assert_uint_ge(it_now() - t0, 350);
	ck_assert_uint_lt(it_now() - t0, 3000);
}
END_TEST

START_TEST(timeout_connect)
{
	struct it_stuck	 s;

	it_stuck_open(&s);
	nodefix_user(&F, "offlineResearcherApiPort", json_integer(s.s_port));
	nodefix_set(&F, "{s:f}", "timeoutSeconds", 0.5);
	ck_reason("timeout");
	it_stuck_close(&s);
}
END_TEST

START_TEST(refused)
{
	nodefix_user(&F, "offlineResearcherApiPort",
	    json_integer(it_dead_port()));
	ck_reason("transport_error");
}
END_TEST

START_TEST(http_503)
{
	mock_script("{\"status\": 503, \"body\": \"{\\\"answer\\\": "
	    "\\\"A\\\"}\"}");
	ck_reason("http_503");
	mock_script("{\"status\": 201}");
	ck_reason("http_201");
}
END_TEST

START_TEST(invalid_json)
{
	mock_answer("<html>not json</html>");
	ck_reason("invalid_json");
	mock_answer("");
	ck_reason("invalid_json");
}
END_TEST

/* The QUIRK: WilmerAI raises; here a clear node error. */
START_TEST(not_an_object)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	mock_answer("[\"answered\"]");
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 500);
	ck_assert_msg(strstr(res.r_message, "not an object") != NULL, "%s",
	    res.r_message);
	buf_free(&out);
}
END_TEST

/* null: no limit (bounded by the request); a bad value: the call
 * raises, nothing is sent. */
START_TEST(timeout_values)
{
	mock_script("{\"delay_ms\": 300}");
	nodefix_set(&F, "{s:n}", "timeoutSeconds");
	ck_output("mock answer");
	ck_assert_int_eq(mock_stat("requests"), 1);
	nodefix_set(&F, "{s:s}", "timeoutSeconds", "10");
	ck_output(UNREACHABLE);
	nodefix_set(&F, "{s:b}", "timeoutSeconds", 1);
	ck_output(UNREACHABLE);
	nodefix_set(&F, "{s:i}", "timeoutSeconds", 0);
	ck_output(UNREACHABLE);
	nodefix_set(&F, "{s:i}", "timeoutSeconds", -3);
	ck_output(UNREACHABLE);
	ck_assert_int_eq(mock_stat("requests"), 1);
	nodefix_set(&F, "{s:i}", "timeoutSeconds", 2);
	ck_output("mock answer");
	ck_assert_int_eq(mock_stat("requests"), 2);
}
END_TEST

/* ---- A2.4: the output rules ---- */

/* research_text of envelope json with includeSources src. */
static void
ck_text(const char *json, bool src, const char *want)
{
	struct buf	 out = BUF_INIT;
	json_t		*env = json != NULL ? it_json(json) : NULL;

	research_text(env, "q", src, &out);
	buf_addc(&out, '\0');
	ck_assert_msg(strcmp(out.b_data, want) == 0, "%s -> '%s', want '%s'",
	    json != NULL ? json : "NULL", out.b_data, want);
	buf_free(&out);
	json_decref(env);
}

START_TEST(rules_errors)
{
	ck_text(NULL, true, "I'm sorry, the offline researcher could not be "
	    "reached for 'q'.");
	ck_text("{\"status\": \"error\"}", false, "I'm sorry, the offline "
	    "researcher returned an error (unknown) for 'q'.");
	ck_text("{\"status\": \"error\", \"reason\": \"busy\", \"answer\": "
	    "\"A\"}", true, "I'm sorry, the offline researcher returned an "
	    "error (busy) for 'q'.");
	ck_text("{\"status\": \"error\", \"reason\": null}", true,
	    "I'm sorry, the offline researcher returned an error (None) for "
	    "'q'.");
}
END_TEST

START_TEST(rules_no_information)
{
	ck_text("{\"status\": \"answered\", \"answer\": \"A\", "
	    "\"no_information_found\": true}", true, NOINFO);
	ck_text("{\"status\": \"exhausted\", \"answer\": \"\"}", false,
	    NOINFO);
	ck_text("{\"status\": \"answered\", \"answer\": null}", false,
	    NOINFO);
	ck_text("{\"status\": \"answered\"}", false, NOINFO);
	ck_text("{\"answer\": 0}", false, NOINFO);
	ck_text("{\"answer\": \"A\", \"no_information_found\": \"no\"}",
	    false, NOINFO);
	ck_text("{\"answer\": \"A\", \"no_information_found\": 0}", false,
	    "A");
}
END_TEST

START_TEST(rules_answer)
{
	const char	*srcs = "\"sources\": [{\"book\": \"B\", \"title\": "
			    "\"T\"}]";
	char		 env[256];

	snprintf(env, sizeof(env), "{\"status\": \"exhausted\", \"answer\": "
	    "\"A\", %s}", srcs);
	ck_text(env, false, "A");
	ck_text("{\"answer\": \"A\", \"sources\": []}", true, "A");
	ck_text("{\"answer\": \"A\", \"sources\": \"B :: T\"}", true, "A");
	ck_text("{\"answer\": \"A\", \"sources\": [1, \"x\", null]}", true,
	    "A");
	ck_text("{\"answer\": \"A\"}", true, "A");
	ck_text("{\"answer\": \"A\", \"sources\": {\"book\": \"B\"}}", true,
	    "A");
	ck_text("{\"answer\": 42}", false, "42");
}
END_TEST

START_TEST(rules_sources)
{
	ck_text("{\"status\": \"answered\", \"answer\": \"A\", \"sources\": "
	    "[{\"book\": \"B\", \"title\": \"T\"}, {\"title\": \"T2\"}, 3, "
	    "{\"book\": \"B3\"}, {}, {\"book\": 7, \"title\": null}]}", true,
	    "A\n\nSources:\n- B :: T\n-  :: T2\n- B3 :: \n-  :: \n"
	    "- 7 :: None");
	ck_text("{\"answer\": \"A\", \"sources\": [\"x\", {\"book\": \"B\", "
	    "\"title\": \"T\"}]}", true, "A\n\nSources:\n- B :: T");
}
END_TEST

/* Through the node: includeSources by Python truthiness. */
START_TEST(node_sources)
{
	mock_answer("{\"status\": \"answered\", \"answer\": \"The answer.\", "
	    "\"no_information_found\": false, \"sources\": [{\"book\": "
	    "\"Book \\u00e9\", \"title\": \"Ch. 1\"}, {\"book\": \"B2\", "
	    "\"title\": \"Ch. 2\"}]}");
	ck_output("The answer.");
	nodefix_set(&F, "{s:b}", "includeSources", 1);
	ck_output("The answer.\n\nSources:\n- Book \xc3\xa9 :: Ch. 1\n"
	    "- B2 :: Ch. 2");
	nodefix_set(&F, "{s:s}", "includeSources", "false");
	ck_output("The answer.\n\nSources:\n- Book \xc3\xa9 :: Ch. 1\n"
	    "- B2 :: Ch. 2");
	nodefix_set(&F, "{s:i}", "includeSources", 0);
	ck_output("The answer.");
	mock_answer("{\"status\": \"answered\", \"answer\": \"A\", "
	    "\"sources\": [1, \"x\", null]}");
	nodefix_set(&F, "{s:b}", "includeSources", 1);
	ck_output("A");
	mock_answer("{\"status\": \"exhausted\", \"answer\": \"A\", "
	    "\"no_information_found\": true}");
	ck_output(NOINFO);
}
END_TEST

/* ---- cancellation ---- */

/* The request stops while the researcher hangs: the node ends at once
 * with RQ_CANCELLED and the connection is closed. */
START_TEST(cancel_hanging)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	uint64_t	 t0 = it_now();
	int		 i;

	mock_script("{\"hang\": true}");
	F.nf_rq.fr_cancel_at = 3;
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_lt(it_now() - t0, 2000);
	ck_assert_int_eq(mock_stat("requests"), 1);
	for (i = 0; i < 100 && mock_stat("gone") < 1; i++)
		it_sleep(20);
	ck_assert_int_eq(mock_stat("gone"), 1);
	ck_assert_int_eq(mock_stat("pending"), 0);
	buf_free(&out);
}
END_TEST

/* Stopped before it starts: no request at all. */
START_TEST(cancel_before)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	F.nf_rq.fr_stopped = true;
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_int_eq(mock_stat("requests"), 0);
	buf_free(&out);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "body_quick", body_quick },
		{ "body_deep_iterations", body_deep_iterations },
		{ "body_iterations_raw", body_iterations_raw },
		{ "body_pyjson_query", body_pyjson_query },
		{ "missing_prompt", missing_prompt },
		{ "disabled", disabled },
		{ "settings", settings },
		{ "timeout_read", timeout_read },
		{ "timeout_connect", timeout_connect },
		{ "refused", refused },
		{ "http_503", http_503 },
		{ "invalid_json", invalid_json },
		{ "not_an_object", not_an_object },
		{ "timeout_values", timeout_values },
		{ "rules_errors", rules_errors },
		{ "rules_no_information", rules_no_information },
		{ "rules_answer", rules_answer },
		{ "rules_sources", rules_sources },
		{ "node_sources", node_sources },
		{ "cancel_hanging", cancel_hanging },
		{ "cancel_before", cancel_before },
	};

	return it_main(it_suite_fixture("research", cases,
	    sizeof(cases) / sizeof(cases[0]), 15, setup, teardown));
}
