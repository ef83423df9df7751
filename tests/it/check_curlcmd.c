/* check_curlcmd.c - integration: a workflow whose responder is a CurlCommand node, through the real gateway and workers, streamed and not, and dropped with its client. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../testmain.h"
#include "harness.h"

static struct it	 T;

/* User "it" whose workflow is one CurlCommand node with args (a JSON
 * list) and the members in extra (", ..." or ""). */
static void
curl_start(const char *args, const char *extra)
{
	char	 wf[1024];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	snprintf(wf, sizeof(wf), "[{\"type\": \"CurlCommand\", \"args\": %s%s}]",
	    args, extra);
	it_file(&T, "Workflows/it/Main.json", wf);
	it_gateway_start(&T, NULL);
}

/* A chat asking user_text, streamed or not: its HTTP status, and the
 * answer's text into *text (caller frees) when 200. */
static long
chat(bool stream, const char *user_text, char **text)
{
	json_t		*b = json_pack("{s:s,s:b,s:[{s:s,s:s}]}", "model", "x",
			    "stream", stream, "messages", "role", "user",
			    "content", user_text), *j;
	char		*body = json_dumps(b, 0);
	struct it_resp	 r;
	struct sse_summary ss;
	long		 st;

	*text = NULL;
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	if ((st = r.r_status) == 200 && stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert(ss.ss_done && !ss.ss_error);
		*text = ss.ss_text;
	} else if (st == 200) {
		j = it_json(r.r_body.b_data);
		*text = strdup(json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0),
		    "message"), "content")));
		json_decref(j);
	} else
		*text = strdup(r.r_body.b_data != NULL ? r.r_body.b_data : "");
	it_resp_free(&r);
	free(body);
	json_decref(b);
	return st;
}

START_TEST(curl_answers)
{
	pid_t	 wiki;
	int	 port, stream;
	char	 args[512], *text;

	wiki = it_double_start("mock-wiki", NULL, &port);
	snprintf(args, sizeof(args), "[\"-sS\", \"-o\", \"/dev/null\", \"-w\", "
	    "\"%%{http_code} {chat_user_prompt_last_one}\", "
	    "\"http://127.0.0.1:%d/articles?prompt=python\"]", port);
	curl_start(args, "");
	for (stream = 0; stream < 2; stream++) {
		ck_assert_int_eq(chat(stream, "Who was  Ada?", &text), 200);
		ck_assert_str_eq(text, "200 Who was  Ada?");
		free(text);
	}
	ck_assert_int_eq(it_mock_requests(&T), 0);
	it_stop_clean(&T);
	it_double_stop(wiki);
}
END_TEST

/* curl failing: raised (HTTP 500 naming the status), or returned as
 * text with onError "return". */
START_TEST(curl_fails)
{
	char	 args[256], want[128], *text;
	int	 port = it_dead_port(), stream;

	snprintf(args, sizeof(args), "[\"-sS\", \"http://127.0.0.1:%d/\"]",
	    port);
	curl_start(args, "");
	ck_assert_int_eq(chat(false, "hi", &text), 500);
	ck_assert_msg(strstr(text, "CurlCommand exited with status 7: curl: "
	    "(7) Failed to connect") != NULL, "%s", text);
	free(text);
	it_stop_clean(&T);
	curl_start(args, ", \"onError\": \"return\", \"outputFormat\": "
	    "\"full\"");
	snprintf(want, sizeof(want), "{\"stdout\": \"\", \"stderr\": \"curl: "
	    "(7) Failed to connect to 127.0.0.1 port %d", port);
	for (stream = 0; stream < 2; stream++) {
		ck_assert_int_eq(chat(stream, "hi", &text), 200);
		ck_assert_msg(strncmp(text, want, strlen(want)) == 0 &&
		    strstr(text, "\"returncode\": 7}") != NULL, "%s", text);
		free(text);
	}
	it_stop_clean(&T);
}
END_TEST

/* Processes whose command line holds needle. */
static int
procs_with(const char *needle)
{
	DIR		*d = opendir("/proc");
	struct dirent	*e;
	char		 p[300], cmd[4096];
	size_t		 n, i;
	FILE		*f;
	int		 count = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		snprintf(p, sizeof(p), "/proc/%s/cmdline", e->d_name);
		if ((f = fopen(p, "r")) == NULL)
			continue;
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		for (i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, needle) != NULL)
			count++;
	}
	closedir(d);
	return count;
}

/* A client that leaves while curl waits: curl is killed at once and
 * the worker serves the next request. */
START_TEST(curl_cancelled_with_client)
{
	struct it_stuck	 s;
	char		 needle[64], *body, *text;
	uint64_t	 t0;
	int		 fd, n = 0;

	it_stuck_open(&s);
	snprintf(needle, sizeof(needle), "http://127.0.0.1:%d/stuck",
	    s.s_port);
	curl_start("[\"-s\", \"-o\", \"/dev/null\", \"-w\", \"ok\", "
	    "\"{chat_user_prompt_last_one}\"]", ", \"timeout\": 60, "
	    "\"onError\": \"return\"");
	body = xasprintf("{\"model\": \"x\", \"stream\": true, \"messages\": "
	    "[{\"role\": \"user\", \"content\": \"%s\"}]}", needle);
	fd = it_connect(&T);
	it_send_post(fd, "/v1/chat/completions", body, NULL);
	for (t0 = it_now(); it_now() - t0 < 5000; usleep(20000))
		if ((n = procs_with(needle)) > 0)
			break;
	ck_assert_msg(n == 1, "curl never started (%d)", n);
	close(fd);
	for (t0 = it_now(); it_now() - t0 < 3000; usleep(20000))
		if ((n = procs_with(needle)) == 0)
			break;
	ck_assert_msg(n == 0, "curl outlived its client");
	ck_assert_uint_lt(it_now() - t0, 2000);
	/* The same worker pool goes on: curl fails to connect, -w still
	 * writes. */
	snprintf(needle, sizeof(needle), "http://127.0.0.1:%d/",
	    it_dead_port());
	ck_assert_int_eq(chat(false, needle, &text), 200);
	ck_assert_str_eq(text, "ok");
	free(text);
	free(body);
	it_stop_clean(&T);
	it_stuck_close(&s);
}
END_TEST

static Suite *
curlcmd_suite(void)
{
	Suite	*s = suite_create("curlcmd");
	TCase	*tc = test_case(s, "curl", curl_answers, 60);

	tcase_add_test(tc, curl_fails);
	tcase_add_test(tc, curl_cancelled_with_client);
	return s;
}

int
main(void)
{
	return check_main(curlcmd_suite());
}
