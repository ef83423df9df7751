/* check_tools.c - integration: the nodes that call an outside service, through the real gateway and workers, streamed and not. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

static struct it	 T;

/* ---- the Offline Researcher (addendum A2) ------------------------ */

static pid_t	 research;
static int	 research_port;

/* User "it" whose workflow is one researcher node of type type (a
 * responder), with the service at tests/mock-research. */
static void
research_start(const char *type)
{
	char	 wf[512];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	research = it_double_start("mock-research", NULL, &research_port);
	snprintf(wf, sizeof(wf), "[{\"type\": \"%s\", \"promptToSearch\": "
	    "\"{chat_user_prompt_last_one}\", \"includeSources\": true}]",
	    type);
	it_file(&T, "Workflows/it/Main.json", wf);
	it_user_set(&T, "useOfflineResearcherApi", json_true());
	it_user_set(&T, "offlineResearcherApiHost", json_string("127.0.0.1"));
	it_user_set(&T, "offlineResearcherApiPort",
	    json_integer(research_port));
	it_gateway_start(&T, NULL);
}

static void
research_stop(void)
{
	it_stop_clean(&T);
	it_double_stop(research);
}

/* GET path of the researcher double as JSON. Caller decrefs. */
static json_t *
research_get(const char *path)
{
	char		 url[128];
	struct it_resp	 r;
	json_t		*v;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", research_port,
	    path);
	ck_assert_int_eq(it_request_url("GET", url, NULL, NULL, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	v = it_json(r.r_body.b_data);
	it_resp_free(&r);
	return v;
}

/* How the double answers from now on (its POST /_script). */
static void
research_script(const char *script)
{
	char		 url[128];
	struct it_resp	 r;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_script",
	    research_port);
	ck_assert_int_eq(it_request_url("POST", url, NULL, script, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
}

/* A chat asking user_text, streamed or not: 200 and the answer's text
 * (caller frees). */
static char *
chat_text(bool stream, const char *user_text)
{
	json_t		*b = json_pack("{s:s,s:b,s:[{s:s,s:s}]}", "model", "x",
			    "stream", stream, "messages", "role", "user",
			    "content", user_text), *j;
	char		*body = json_dumps(b, 0), *out;
	struct it_resp	 r;
	struct sse_summary ss;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status, r.r_body.b_data);
	if (stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert(ss.ss_done && !ss.ss_error);
		out = ss.ss_text;
	} else {
		j = it_json(r.r_body.b_data);
		out = strdup(json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0),
		    "message"), "content")));
		json_decref(j);
	}
	it_resp_free(&r);
	free(body);
	json_decref(b);
	return out;
}

/* The body the double last received, parsed. Caller decrefs. */
static json_t *
research_sent(void)
{
	json_t	*last = research_get("/_last"), *body;

	body = it_json(json_string_value(json_object_get(last, "body")));
	ck_assert_str_eq(json_string_value(json_object_get(last, "path")),
	    "/search");
	json_decref(last);
	return body;
}

START_TEST(researcher_answers)
{
	static const char *const types[] = {
	    "OfflineResearcherApiQuickSearch",
	    "OfflineResearcherApiDeepResearch" };
	static const char *const modes[] = { "quick", "deep" };
	json_t	*sent;
	char	*text;
	int	 stream;

	research_start(types[_i]);
	research_script("{\"body\": \"{\\\"status\\\": \\\"answered\\\", "
	    "\\\"answer\\\": \\\"Ada wrote the first program.\\\", "
	    "\\\"sources\\\": [{\\\"book\\\": \\\"Notes\\\", \\\"title\\\": "
	    "\\\"G\\\"}]}\"}");
	for (stream = 0; stream < 2; stream++) {
		text = chat_text(stream, "Who was Ada?");
		ck_assert_str_eq(text, "Ada wrote the first program.\n\n"
		    "Sources:\n- Notes :: G");
		free(text);
		sent = research_sent();
		ck_assert_str_eq(json_string_value(json_object_get(sent,
		    "query")), "Who was Ada?");
		ck_assert_str_eq(json_string_value(json_object_get(sent,
		    "mode")), modes[_i]);
		json_decref(sent);
	}
	/* the service failing is an answer, not an error */
	research_script("{\"status\": 503, \"body\": \"busy\"}");
	for (stream = 0; stream < 2; stream++) {
		text = chat_text(stream, "Who was Ada?");
		ck_assert_msg(strncmp(text, "I'm sorry, the offline researcher "
		    "returned an error (", 53) == 0, "%s", text);
		free(text);
	}
	ck_assert_int_eq(it_mock_requests(&T), 0);
	research_stop();
}
END_TEST

/* A client that leaves while the researcher is still searching: the
 * worker drops the search at once (the double sees its client go) and
 * serves the next request. */
START_TEST(researcher_cancelled_with_client)
{
	json_t		*st;
	char		*body;
	uint64_t	 t0;
	int		 fd;
	bool		 gone = false;

	research_start("OfflineResearcherApiDeepResearch");
	research_script("{\"hang\": true}");
	body = strdup("{\"model\": \"x\", \"stream\": true, \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"slow\"}]}");
	fd = it_connect(&T);
	it_send_post(fd, "/v1/chat/completions", body, NULL);
	for (t0 = it_now(); it_now() - t0 < 5000; usleep(20000)) {
		st = research_get("/_stats");
		gone = json_integer_value(json_object_get(st, "pending")) > 0;
		json_decref(st);
		if (gone)
			break;
	}
	ck_assert_msg(gone, "the search never reached the double");
	close(fd);
	gone = false;
	for (t0 = it_now(); !gone && it_now() - t0 < 3000; usleep(20000)) {
		st = research_get("/_stats");
		gone = json_integer_value(json_object_get(st, "gone")) == 1;
		json_decref(st);
	}
	ck_assert_msg(gone, "the search outlived its client");
	research_script("{}");
	free(chat_text(false, "fast"));
	free(body);
	research_stop();
}
END_TEST

static Suite *
tools_suite(void)
{
	Suite	*s = suite_create("tools");
	TCase	*tc = test_case(s, "researcher", NULL, 60);

	tcase_add_loop_test(tc, researcher_answers, 0, 2);
	tcase_add_test(tc, researcher_cancelled_with_client);
	return s;
}

int
main(void)
{
	return check_main(tools_suite());
}
