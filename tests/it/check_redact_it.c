/* check_redact_it.c - integration: redactLogOutput keeps a user's conversation out of the gateway's and workers' log, on stderr and in the --file-logging file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../testmain.h"
#include "harness.h"

static struct it	 T;

/* Markers only the conversation holds: the user's text (which the mock
 * echoes back, so the answer holds it too) and a backend error body. */
#define SAID	"zq-said-7731"
#define ERRED	"zq-erred-7731"

/* Answer at once, then ask the mock: its failure comes after the
 * answer (POST_DONE), and only the gateway's log says it. */
static const char late[] = "{\"nodes\": ["
    "{\"type\": \"StaticResponse\", \"content\": \"hi\","
    " \"returnToUser\": true},"
    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", \"preset\":"
    " \"Mock\", \"prompt\": \"\", \"lastMessagesToSendInsteadOfPrompt\": 1,"
    " \"maxResponseSizeInTokens\": 50}]}\n";

/* The gateway at debug level with user "it"'s redactLogOutput set to
 * redact, and its log file on (state/logs/sluice.log). */
static void
start(bool redact)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1, "
	    "\"log_level\": \"debug\"", NULL);
	it_user_set(&T, "useFileLogging", json_true());
	it_user_set(&T, "redactLogOutput", json_boolean(redact));
	it_gateway_start(&T, NULL);
}

/* Two requests whose answer echoes SAID, whole and streamed, one the
 * backend refuses with ERRED in its error body, and one it refuses so
 * after the answer; each waited for to its last line. */
static void
converse(void)
{
	size_t	 from = it_log_size(&T);
	char	*text;
	long	 status;

	text = it_chat_text(&T, false, "Hello " SAID
	    "\n#mock {\"echo\": true}", &status);
	ck_assert_int_eq(status, 200);
	ck_assert_ptr_nonnull(strstr(text, SAID));
	free(text);
	ck_assert(it_log_wait(&T, "done in", &from, it_slow(5000)));
	text = it_chat_text(&T, true, "Streamed " SAID
	    "\n#mock {\"echo\": true}", &status);
	ck_assert_int_eq(status, 200);
	ck_assert_ptr_nonnull(strstr(text, SAID));
	free(text);
	ck_assert(it_log_wait(&T, "done in", &from, it_slow(5000)));
	text = it_chat_text(&T, false, "#mock {\"status\": 400, \"error\": "
	    "\"no: " ERRED "\"}", &status);
	ck_assert_int_eq(status, 400);
	free(text);
	ck_assert(it_log_wait(&T, "done in", &from, it_slow(5000)));
	/* the worker reads the user's file for each request */
	it_file(&T, "Workflows/it/Late.json", late);
	it_user_set(&T, "customWorkflow", json_string("Late"));
	text = it_chat_text(&T, false, "#mock {\"status\": 400, \"error\": "
	    "\"late: " ERRED "\"}", &status);
	ck_assert_int_eq(status, 200);
	free(text);
	ck_assert(it_log_wait(&T, "after the answer: ", &from,
	    it_slow(5000)));
}

/* Both logs, stderr's and the file's, in *err and *file. */
static void
logs(char **err, char **file)
{
	char	 path[400];

	snprintf(path, sizeof(path), "%s/state/logs/sluice.log", T.it_dir);
	*err = it_file_text(T.it_log);
	*file = it_file_text(path);
	ck_assert_msg(strstr(*file, "] DEBUG [system] [worker") != NULL,
	    "no worker lines in the log file: %s", *file);
}

/* Off (WilmerAI's default): the debug lines show the request and the
 * answer, and the error lines the backend's words. This is what the
 * redacting test must not find. */
START_TEST(off_shows_the_conversation)
{
	char	*err, *file;

	start(false);
	converse();
	logs(&err, &file);
	ck_assert_msg(strstr(err, "request: ") && strstr(err, SAID),
	    "%s", err);
	ck_assert_msg(strstr(err, "answered: Hello " SAID), "%s", err);
	ck_assert_msg(strstr(err, "answered: Streamed " SAID), "%s", err);
	ck_assert_msg(strstr(err, "after the answer: endpoint 'Mock' (") &&
	    strstr(err, "400: late: " ERRED), "%s", err);
	ck_assert_msg(strstr(err, "failed: endpoint 'Mock' (") &&
	    strstr(err, "400: no: " ERRED), "%s", err);
	ck_assert_ptr_nonnull(strstr(file, SAID));
	ck_assert_ptr_nonnull(strstr(file, ERRED));
	ck_assert_ptr_null(strstr(err, "[redacted"));
	free(err);
	free(file);
	it_stop_clean(&T);
}
END_TEST

/* On: neither marker anywhere, in either log; the lines are still
 * there, with the length of what they leave out. */
START_TEST(on_keeps_it_out)
{
	char	*err, *file;

	start(true);
	converse();
	logs(&err, &file);
	ck_assert_msg(strstr(err, SAID) == NULL, "%s", err);
	ck_assert_msg(strstr(err, ERRED) == NULL, "%s", err);
	ck_assert_msg(strstr(file, SAID) == NULL, "%s", file);
	ck_assert_msg(strstr(file, ERRED) == NULL, "%s", file);
	ck_assert_msg(strstr(err, "request: [redacted, ") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "answered: [redacted, ") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "failed: [redacted, ") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "after the answer: [redacted, ") != NULL,
	    "%s", err);
	ck_assert_ptr_nonnull(strstr(file, "request: [redacted, "));
	free(err);
	free(file);
	it_stop_clean(&T);
}
END_TEST

static Suite *
redact_suite(void)
{
	Suite	*s = suite_create("redact_it");

	test_case(s, "off", off_shows_the_conversation, 60);
	test_case(s, "on", on_keeps_it_out, 60);
	return s;
}

int
main(void)
{
	return check_main(redact_suite());
}
