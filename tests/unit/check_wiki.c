/* check_wiki.c - the OfflineWikiApi nodes (node_wiki.c, tools/wiki.c) against tests/mock-wiki: every output of addendum A1.4, the exact queries of A1.2, cancellation. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../worker/engine/registry.h"
#include "../../worker/llm/transport.h"
#include "../../worker/nodes/nodes.h"
#include "../../worker/tools/wiki.h"
#include "../testmain.h"
#include "nodefix.h"

static struct nodefix	 F;
static pid_t		 mock;
static int		 port;

#define SORRY(p)	"I'm sorry, I couldn't find any Wikipedia " \
			"information about '" p "'."
#define NOT_IN_DB	" The information may not be available in the " \
			"offline database."

static void
setup(void)
{
	nodefix_init(&F, false);
	mock = it_double_start("mock-wiki", NULL, &port);
	ck_assert_int_eq(transport_init(), 0);
	nodefix_user(&F, "useOfflineWikiApi", json_true());
	nodefix_user(&F, "offlineWikiApiPort", json_integer(port));
}

static void
teardown(void)
{
	transport_cleanup();
	it_double_stop(mock);
	nodefix_free(&F);
}

/* GET path of the mock; its JSON body. Caller decrefs. */
static json_t *
mock_get(const char *path)
{
	char		 url[256];
	struct it_resp	 r;
	json_t		*v;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	ck_assert_int_eq(it_request_url("GET", url, NULL, NULL, &r), 0);
	v = it_json(r.r_body.b_data);
	it_resp_free(&r);
	return v;
}

static void
mode(const char *m)
{
	char	 p[64];

	snprintf(p, sizeof(p), "/_mode?set=%s", m);
	json_decref(mock_get(p));
}

/* Run node type with prompt (and the members of fmt); the output. */
static char *
run(const char *type, const char *prompt)
{
	const struct node_type	*t = node_type_find(type);
	struct buf		 out = BUF_INIT;
	struct wresult		 res;
	bool			 streamed = false;

	ck_assert_ptr_nonnull(t);
	json_object_set_new(F.nf_node, "type", json_string(type));
	if (prompt != NULL)
		json_object_set_new(F.nf_node, "promptToSearch",
		    json_string(prompt));
	memset(&res, 0, sizeof(res));
	ck_assert_msg(t->nt_run(&F.nf_x, &out, &streamed, &res) == 0, "%s",
	    res.r_message);
	ck_assert(!streamed);
	buf_addc(&out, '\0');
	return buf_take(&out);
}

static void
ck_run(const char *type, const char *prompt, const char *want)
{
	char	*got = run(type, prompt);

	ck_assert_str_eq(got, want);
	free(got);
}

/* The last request the mock saw: "path?query". */
static void
ck_last(const char *want, long count)
{
	json_t	*v = mock_get("/_last");
	char	 got[1024];

	ck_assert_int_eq(json_integer_value(json_object_get(v, "count")),
	    count);
	snprintf(got, sizeof(got), "%s?%s", json_string_value(json_object_get(
	    json_object_get(v, "last"), "path")), json_string_value(
	    json_object_get(json_object_get(v, "last"), "query")));
	ck_assert_str_eq(got, want);
	json_decref(v);
}

#define FULL	"OfflineWikiApiFullArticle"
#define BEST	"OfflineWikiApiBestFullArticle"
#define TOPN	"OfflineWikiApiTopNFullArticles"
#define PART	"OfflineWikiApiPartialArticle"
#define PY	"Python is a programming language that lets you work quickly."
#define BALL	"The ball python is a snake found in Africa. It is not a " \
		"programming language."
#define ASEP	"\n\n--- END ARTICLE ---\n\n"
#define SSEP	"\n\n--- END SUMMARY ---\n\n"

START_TEST(disabled_sends_nothing)
{
	nodefix_user(&F, "useOfflineWikiApi", json_false());
	ck_run(FULL, "python", "No additional information provided");
	ck_run(BEST, "python", "No additional information provided");
	ck_run(TOPN, "python", "No additional information provided");
	ck_run(PART, "python", "Title: Offline Wiki Disabled\nNo additional "
	    "information provided");
	ck_last("(null)?(null)", 0);
}
END_TEST

START_TEST(not_found)
{
	ck_run(FULL, "zzz", "No articles found for 'zzz'." NOT_IN_DB);
	ck_run(BEST, "zzz", "No article found for 'zzz'." NOT_IN_DB);
	ck_run(TOPN, "zzz", "No articles found for 'zzz'." NOT_IN_DB);
	ck_run(PART, "zzz", "Title: Not Found\nNo summaries found for "
	    "'zzz'." NOT_IN_DB);
}
END_TEST

/* Node values are ignored by these two (WilmerAI's QUIRK). */
START_TEST(full_and_best)
{
	nodefix_set(&F, "{s:f, s:i, s:i}", "percentile", 0.9, "num_results",
	    7, "top_n_articles", 2);
	ck_run(FULL, "python programming", PY);
	ck_last("/articles?prompt=python+programming&percentile=0.5&"
	    "num_results=1", 1);
	ck_run(BEST, "python programming", PY);
	ck_last("/top_article?prompt=python+programming&percentile=0.5&"
	    "num_results=10", 2);
}
END_TEST

START_TEST(topn_and_partial)
{
	ck_run(TOPN, "python programming", "Title: Python (programming "
	    "language)\n" PY ASEP "Title: Ball python\n" BALL);
	ck_last("/top_n_articles?prompt=python+programming&percentile=0.5&"
	    "num_results=10&num_top_articles=3", 1);
	ck_run(PART, "python programming", "Title: Python (programming "
	    "language)\n" PY);
	ck_last("/summaries?prompt=python+programming&percentile=0.5&"
	    "num_results=1", 2);
	nodefix_set(&F, "{s:i, s:i, s:i}", "percentile", 1, "num_results", 5,
	    "top_n_articles", -1);
	ck_run(TOPN, "python programming", "Title: Python (programming "
	    "language)\n" PY);
	ck_last("/top_n_articles?prompt=python+programming&percentile=1&"
	    "num_results=5&num_top_articles=-1", 3);
	nodefix_set(&F, "{s:f}", "percentile", 0.25);
	ck_run(PART, "python programming", "Title: Python (programming "
	    "language)\n" PY SSEP "Title: Ball python\n" BALL);
	ck_last("/summaries?prompt=python+programming&percentile=0.25&"
	    "num_results=5", 4);
}
END_TEST

/* P is str() of the value with variables filled; the query quoted as
 * Python's urlencode does; a port may be a string. */
START_TEST(prompt_and_query)
{
	nodefix_user(&F, "offlineWikiApiPort", json_sprintf("%d", port));
	ck_run(FULL, "Caf\xc3\xa9 & co's {name}/~", "No articles found for "
	    "'Caf\xc3\xa9 & co's Ann/~'." NOT_IN_DB);
	ck_last("/articles?prompt=Caf%C3%A9+%26+co%27s+Ann%2F~&"
	    "percentile=0.5&num_results=1", 1);
	json_object_set_new(F.nf_node, "promptToSearch", json_integer(42));
	ck_run(FULL, NULL, "No articles found for '42'." NOT_IN_DB);
	ck_last("/articles?prompt=42&percentile=0.5&num_results=1", 2);
}
END_TEST

START_TEST(missing_prompt_fails)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed = false;

	json_object_set_new(F.nf_node, "type", json_string(TOPN));
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(node_wiki_topn.nt_run(&F.nf_x, &out, &streamed,
	    &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 500);
	ck_assert_msg(strstr(res.r_message, "No 'promptToSearch' specified "
	    "for OfflineWikiApi node.") != NULL, "%s", res.r_message);
	ck_last("(null)?(null)", 0);
	buf_free(&out);
}
END_TEST

/* 200 answers that are not what the server normally sends. */
START_TEST(odd_answers)
{
	mode("notext");
	ck_run(FULL, "p", "No text element found");
	ck_run(BEST, "p", "No text element found");
	ck_run(TOPN, "p", "Title: T\nNo text available." ASEP
	    "Title: Untitled Article\nonly text");
	ck_run(PART, "p", "Title: T\nNo text available." SSEP
	    "Title: Untitled Summary\nonly text");
	mode("empty");
	ck_run(FULL, "p", "No article found for 'p'.");
	ck_run(TOPN, "p", "No articles found for 'p' in the offline "
	    "database.");
	ck_run(PART, "p", "No summary found for 'p'.");
	mode("object");
	ck_run(TOPN, "p", "alpha" ASEP "beta");
	ck_run(PART, "p", "No summary found for 'p'.");
	ck_run(FULL, "p", SORRY("p"));
	mode("nonobject");
	ck_run(TOPN, "p", "plain" ASEP "42" ASEP "Title: X\nY");
	ck_run(PART, "p", SORRY("p"));
	ck_run(FULL, "p", SORRY("p"));
	ck_run(BEST, "p", SORRY("p"));
}
END_TEST

START_TEST(failures_say_sorry)
{
	const char	*modes[] = { "status500", "status503", "notjson" };
	const char	*types[] = { FULL, BEST, TOPN, PART };
	size_t		 i, j;

	for (i = 0; i < 3; i++) {
		mode(modes[i]);
		for (j = 0; j < 4; j++)
			ck_run(types[j], "p", SORRY("p"));
	}
	nodefix_user(&F, "offlineWikiApiPort", json_integer(it_dead_port()));
	for (j = 0; j < 4; j++)
		ck_run(types[j], "p", SORRY("p"));
}
END_TEST

/* A 422 (a malformed parameter) raises like any other status. */
START_TEST(status_422)
{
	struct wiki_query	 q = { WIKI_PARTIAL, "p", "0.5", 1, 3 };
	struct buf		 out = BUF_INIT;

	ck_assert_int_eq(wiki_answer(&q, 422, "{}", 2, &out), -1);
	ck_assert_int_eq(wiki_answer(&q, 200, "[]", 2, &out), 0);
	ck_assert_int_eq(out.b_len, strlen("No summary found for 'p'."));
	buf_free(&out);
}
END_TEST

/* A server that never answers: the read timeout cuts it. */
START_TEST(hang_read_timeout)
{
	struct wiki_conf	 c;
	struct wiki_query	 q = { WIKI_FULL, "p", "0.5", 1, 3 };
	struct buf		 out = BUF_INIT;
	json_t			*root = json_pack("{s:b, s:i}",
				    "useOfflineWikiApi", 1,
				    "offlineWikiApiPort", port);
	uint64_t		 t0 = it_now();

	mode("hang");
	wiki_conf_load(&c, root);
	ck_assert_int_eq(c.wc_read_ms, 60000);
	ck_assert_int_eq(c.wc_connect_ms, 5000);
	c.wc_read_ms = 1000;
	ck_assert_int_eq(wiki_search(&c, &q, NULL, &out), 0);
	buf_addc(&out, '\0');
	ck_assert_str_eq(out.b_data, SORRY("p"));
	ck_assert_uint_lt(it_now() - t0, 5000);
	wiki_conf_free(&c);
	json_decref(root);
	buf_free(&out);
}
END_TEST

/* A cancelled request stops the call at once: RQ_CANCELLED. */
START_TEST(hang_cancelled)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed = false;
	uint64_t	 t0 = it_now();

	mode("hang");
	F.nf_rq.fr_cancel_at = 2;
	nodefix_set(&F, "{s:s, s:s}", "type", BEST, "promptToSearch", "p");
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(node_wiki_best.nt_run(&F.nf_x, &out, &streamed,
	    &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_lt(it_now() - t0, 3000);
	ck_last("/top_article?prompt=p&percentile=0.5&num_results=10", 1);
	buf_free(&out);
}
END_TEST

/* Defaults of the settings. */
START_TEST(settings_defaults)
{
	struct wiki_conf	 c;

	wiki_conf_load(&c, NULL);
	ck_assert(!c.wc_use);
	ck_assert_str_eq(c.wc_base, "http://127.0.0.1:5728");
	wiki_conf_free(&c);
	wiki_conf_free(&c);
}
END_TEST

static Suite *
wiki_suite(void)
{
	Suite	*s = suite_create("wiki");
	TCase	*tc = tcase_create("nodes");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, disabled_sends_nothing);
	tcase_add_test(tc, not_found);
	tcase_add_test(tc, full_and_best);
	tcase_add_test(tc, topn_and_partial);
	tcase_add_test(tc, prompt_and_query);
	tcase_add_test(tc, missing_prompt_fails);
	tcase_add_test(tc, odd_answers);
	tcase_add_test(tc, failures_say_sorry);
	tcase_add_test(tc, status_422);
	tcase_add_test(tc, hang_read_timeout);
	tcase_add_test(tc, hang_cancelled);
	tcase_add_test(tc, settings_defaults);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return it_main(wiki_suite());
}
