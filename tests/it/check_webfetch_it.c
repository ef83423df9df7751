/* check_webfetch_it.c - integration: a WebFetch responder through the real gateway and workers, streamed and not, against tests/mock-web. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../testmain.h"
#include "harness.h"

static struct it	 T;
static pid_t		 web;
static int		 web_port;

/* User "it" whose workflow is one WebFetch node (the responder) with
 * the members in node (JSON text, "url" relative to tests/mock-web). */
static void
web_start(const char *path, const char *node)
{
	char	 wf[1024];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	web = it_double_start("mock-web", NULL, &web_port);
	snprintf(wf, sizeof(wf), "[{\"type\": \"WebFetch\", \"url\": "
	    "\"http://127.0.0.1:%d%s\"%s}]", web_port, path, node);
	it_file(&T, "Workflows/it/Main.json", wf);
	it_gateway_start(&T, NULL);
}

static void
web_stop(void)
{
	it_stop_clean(&T);
	it_double_stop(web);
}

/* The page, stripped, is the answer, streamed word by word or whole;
 * the prompt went into the URL; nothing but the node's own headers
 * was sent, and the LLM was never asked. */
START_TEST(page_answers)
{
	json_t		*last;
	const char	*k;
	json_t		*v;
	char		*text;
	long		 st;
	int		 stream;

	web_start("/r?ctype=text/html&body=%3Chead%3Ehidden%3C/head%3E%3Cp%3E"
	    "Fetched%20page%3C/p%3E%3Cp%3Etwo%20%20words%3C/p%3E&q="
	    "{chat_user_prompt_last_one}",
	    ", \"outputFormat\": \"html-stripped\", "
	    "\"headers\": {\"X-Asked\": \"{chat_user_prompt_last_one}\"}");
	for (stream = 0; stream < 2; stream++) {
		text = it_chat_text(&T, stream, "ada", &st);
		ck_assert_int_eq(st, 200);
		ck_assert_str_eq(text, "Fetched page\ntwo  words");
		free(text);
		last = it_double_json(web_port, "/_last");
		ck_assert_msg(strstr(json_string_value(json_object_get(last,
		    "uri")), "&q=ada") != NULL, "%s", json_string_value(
		    json_object_get(last, "uri")));
		json_object_foreach(json_object_get(last, "headers"), k, v) {
			ck_assert_msg(strcasecmp(k, "Authorization") != 0 &&
			    strcasestr(k, "key") == NULL &&
			    strcasecmp(k, "Cookie") != 0, "sent %s", k);
			if (strcasecmp(k, "X-Asked") == 0)
				ck_assert_str_eq(json_string_value(v), "ada");
		}
		json_decref(last);
	}
	ck_assert_int_eq(it_mock_requests(&T), 0);
	web_stop();
}
END_TEST

/* An HTTP error: under onError "raise" the request fails (500 when not
 * streamed); under "return" the error page is the answer. */
START_TEST(error_page)
{
	char	*text;
	long	 st;
	int	 stream;

	web_start("/r?status=404&reason=Not%20Found&body=gone%20away", "");
	text = it_chat_text(&T, false, "x", &st);
	ck_assert_int_eq(st, 500);
	ck_assert_ptr_null(text);
	web_stop();
	web_start("/r?status=404&reason=Not%20Found&body=gone%20away",
	    ", \"onError\": \"return\"");
	for (stream = 0; stream < 2; stream++) {
		text = it_chat_text(&T, stream, "x", &st);
		ck_assert_int_eq(st, 200);
		ck_assert_str_eq(text, "gone away");
		free(text);
	}
	web_stop();
}
END_TEST

static Suite *
webfetch_it_suite(void)
{
	Suite	*s = suite_create("webfetch_it");

	test_case(s, "page_answers", page_answers, 60);
	test_case(s, "error_page", error_page, 60);
	return s;
}

int
main(void)
{
	return check_main(webfetch_it_suite());
}
