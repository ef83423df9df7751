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
research_start(const char *type, const char *settings)
{
	char	 wf[512];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
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

	research_start(types[_i], NULL);
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

/* Wait until the double's figure name (its /_stats) is at least n;
 * false after ms. */
static bool
research_wait(const char *name, long n, int ms)
{
	json_t		*st;
	uint64_t	 t0;
	bool		 ok = false;

	for (t0 = it_now(); !ok && it_now() - t0 < (uint64_t)ms;
	    usleep(20000)) {
		st = research_get("/_stats");
		ok = json_integer_value(json_object_get(st, name)) >= n;
		json_decref(st);
	}
	return ok;
}

/* DELETE the request the one busy worker runs, after checking it says
 * it is waiting for the researcher. */
static void
delete_busy(void)
{
	json_t		*j = it_get_json(&T, "/admin/workers"), *w;
	struct it_resp	 r;
	char		 body[160], *text;
	size_t		 i;
	const char	*rid = NULL;

	json_array_foreach(json_object_get(j, "workers"), i, w) {
		text = json_dumps(w, 0);
		if (json_is_string(json_object_get(w, "request_id")) &&
		    strstr(text, "offline researcher (deep)") != NULL)
			rid = json_string_value(json_object_get(w,
			    "request_id"));
		free(text);
	}
	ck_assert_msg(rid != NULL, "no worker in the researcher's phase");
	snprintf(body, sizeof(body), "{\"request_id\":\"%s\"}",
	    rid != NULL ? rid : "");
	ck_assert_int_eq(it_request(&T, "DELETE", "/api/chat", body, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
	json_decref(j);
}

/* A search that hangs, ended the three ways a request ends early: its
 * client leaves, a DELETE names it, its deadline passes. The worker
 * drops the search at once (the double sees its client go), the
 * client (if still there) gets the matching error, and the worker
 * serves the next request. */
START_TEST(researcher_stops_with_request)
{
	static const char *const want[] = { NULL, "cancelled by DELETE",
	    "504" };
	struct buf	 out = BUF_INIT;
	uint64_t	 t0;
	int		 fd;

	research_start("OfflineResearcherApiDeepResearch",
	    _i == 2 ? "\"request_timeout_s\": 2" : NULL);
	research_script("{\"hang\": true}");
	fd = it_connect(&T);
	it_send_post(fd, _i == 2 ? "/v1/chat/completions" : "/api/chat",
	    "{\"model\": \"x\", \"stream\": true, \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"slow\"}]}", NULL);
	ck_assert_msg(research_wait("pending", 1, 5000),
	    "the search never reached the double");
	t0 = it_now();
	if (_i == 0)
		close(fd);
	else if (_i == 1)
		delete_busy();
	ck_assert_msg(research_wait("gone", 1, 4000),
	    "the search outlived its request");
	if (_i == 2)
		ck_assert_uint_ge(it_now() - t0, 1000);
	if (want[_i] != NULL) {
		ck_assert_msg(it_read_until(fd, &out, want[_i], 3000),
		    "the client got %s", out.b_data);
		close(fd);
	}
	research_script("{}");
	free(chat_text(false, "fast"));
	buf_free(&out);
	research_stop();
}
END_TEST

/* ---- the offline Wikipedia API (addendum A1) ---------------------- */

#define FOX	"Foxes are small omnivores; the quick brown fox jumps."

static pid_t	 wiki;
static int	 wiki_port;

/* User "it" whose workflow is one wiki node of type type (a responder,
 * its prompt the user's text), the API at tests/mock-wiki over a
 * corpus of two articles. */
static void
wiki_start(const char *type)
{
	char		 wf[512], corpus[300];
	const char	*args[] = { "--corpus", corpus, NULL };

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	it_file(&T, "wiki.json", "[{\"title\": \"Fox\", \"text\": \""
	    FOX "\"}, {\"title\": \"Owl\", \"text\": \"Owls hunt at "
	    "night.\"}]");
	snprintf(corpus, sizeof(corpus), "%s/wiki.json", T.it_dir);
	wiki = it_double_start("mock-wiki", args, &wiki_port);
	snprintf(wf, sizeof(wf), "[{\"type\": \"%s\", \"promptToSearch\": "
	    "\"{chat_user_prompt_last_one}\"}]", type);
	it_file(&T, "Workflows/it/Main.json", wf);
	it_user_set(&T, "useOfflineWikiApi", json_true());
	it_user_set(&T, "offlineWikiApiPort", json_integer(wiki_port));
	it_gateway_start(&T, NULL);
}

/* The path of the last search mock-wiki saw. Caller frees. */
static char *
wiki_path(void)
{
	char		 url[128], *p;
	struct it_resp	 r;
	json_t		*v;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_last", wiki_port);
	ck_assert_int_eq(it_request_url("GET", url, NULL, NULL, &r), 0);
	v = it_json(r.r_body.b_data);
	p = strdup(json_string_value(json_object_get(json_object_get(v,
	    "last"), "path")));
	json_decref(v);
	it_resp_free(&r);
	return p;
}

/* Each of the four types, streamed and not: the article the search
 * found, as A1.4 words it, and A1.4's sentence when nothing matches. */
START_TEST(wiki_answers)
{
	static const struct {
		const char	*type, *path, *found, *none;
	} w[] = {
	    { "OfflineWikiApiFullArticle", "/articles", FOX,
	      "No articles found for 'zebra'. The information may not be "
	      "available in the offline database." },
	    { "OfflineWikiApiBestFullArticle", "/top_article", FOX,
	      "No article found for 'zebra'. The information may not be "
	      "available in the offline database." },
	    { "OfflineWikiApiTopNFullArticles", "/top_n_articles",
	      "Title: Fox\n" FOX, "No articles found for 'zebra'. The "
	      "information may not be available in the offline database." },
	    { "OfflineWikiApiPartialArticle", "/summaries", "Title: Fox\n" FOX,
	      "Title: Not Found\nNo summaries found for 'zebra'. The "
	      "information may not be available in the offline database." },
	};
	char	*text, *path;
	int	 stream;

	wiki_start(w[_i].type);
	for (stream = 0; stream < 2; stream++) {
		text = chat_text(stream, "quick brown fox");
		ck_assert_str_eq(text, w[_i].found);
		free(text);
		path = wiki_path();
		ck_assert_str_eq(path, w[_i].path);
		free(path);
		text = chat_text(stream, "zebra");
		ck_assert_str_eq(text, w[_i].none);
		free(text);
	}
	ck_assert_int_eq(it_mock_requests(&T), 0);
	it_stop_clean(&T);
	it_double_stop(wiki);
}
END_TEST

static Suite *
tools_suite(void)
{
	Suite	*s = suite_create("tools");
	TCase	*tc = test_case(s, "researcher", NULL, 60);

	tcase_add_loop_test(tc, researcher_answers, 0, 2);
	tcase_add_loop_test(tc, researcher_stops_with_request, 0, 3);
	tc = test_case(s, "wiki", NULL, 60);
	tcase_add_loop_test(tc, wiki_answers, 0, 4);
	return s;
}

int
main(void)
{
	return check_main(tools_suite());
}
