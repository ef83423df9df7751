/* check_clients.c - the official openai and ollama npm clients against the real gateway. */
#include <check.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

/* Node and the installed packages are optional: without them the test
 * says so and passes (make check installs them when npm exists). */
static const char *
skip_reason(const char *dir)
{
	char		 path[512];
	struct stat	 st;

	if (system("node --version >/dev/null 2>&1") != 0)
		return "node is not installed";
	snprintf(path, sizeof(path), "%s/node_modules/openai", dir);
	if (stat(path, &st) == -1)
		return "tests/clients/node_modules is missing (npm ci failed?)";
	return NULL;
}

/* Run test.mjs (in mode, or all its default checks when NULL)
 * against the gateway of t, then stop t. */
static void
run_clients(struct it *t, const char *dir, const char *mode)
{
	char	 cmd[1024];
	int	 st;

	it_gateway_start(t, NULL);
	snprintf(cmd, sizeof(cmd), "cd '%s' && node test.mjs "
	    "http://127.0.0.1:%d http://127.0.0.1:%d %s", dir, t->it_port,
	    t->it_mock_port, mode != NULL ? mode : "");
	st = system(cmd);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "client checks failed (see above)");
	st = it_stop(t, 15000);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* tests/clients, or NULL when the test is skipped (said why). */
static const char *
clients_dir(char *dir, size_t len)
{
	const char	*src = getenv("SLUICE_SRC"), *why;

	snprintf(dir, len, "%s/tests/clients", src ? src : ".");
	if ((why = skip_reason(dir)) != NULL) {
		printf("check_clients: SKIPPED: %s\n", why);
		return NULL;
	}
	return dir;
}

/* The embeddings routes' endpoint: the mock, as openAIEmbeddings. */
static void
embeddings_endpoint(struct it *t)
{
	char	 url[96];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", t->it_mock_port);
	it_backend(t, NULL, "Emb", "openAIEmbeddings", url, "", "");
	it_user_set(t, "embeddingEndpointName", json_string("Emb"));
}

START_TEST(official_clients)
{
	struct it	 t;
	char		 dir[400];

	if (clients_dir(dir, sizeof(dir)) == NULL)
		return;
	memset(&t, 0, sizeof(t));
	it_mock_start(&t);
	it_config(&t, NULL, NULL);
	/* Reasoning in <think> tags comes back as Ollama's "thinking",
	 * which test.mjs checks "think": false keeps out. */
	it_mock_endpoint(&t, "\"reasoningTags\": true, \"reasoningOutput\": "
	    "\"field\"");
	embeddings_endpoint(&t);
	run_clients(&t, dir, NULL);
}
END_TEST

/* The tool-call settings (addendum A8) as the official clients see
 * them: the user answers Open WebUI's tool question at once and ends a
 * streamed answer without a call with its liveness call; the node
 * forwards tools and lower-cases the names of the calls, and enforces
 * a forced or required tool_choice through structured output. */
START_TEST(official_clients_tool_settings)
{
	struct it	 t;
	char		 dir[400];

	if (clients_dir(dir, sizeof(dir)) == NULL)
		return;
	memset(&t, 0, sizeof(t));
	it_mock_start(&t);
	it_config(&t, NULL, NULL);
	it_file(&t, "Workflows/it/Main.json", "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"Mock\", \"prompt\": \"\", \"allowTools\": "
	    "true, \"lowercaseToolCallFunctionNames\": true, "
	    "\"injectLivenessToolCall\": true}]");
	/* As WilmerAI's shipped Open-AI-API: a forced or required
	 * tool_choice is enforced through the schema. */
	it_file(&t, "ApiTypes/Open-AI-API.json", "{\"type\": "
	    "\"openAIChatCompletion\", \"presetType\": \"OpenAI\", "
	    "\"maxNewTokensPropertyName\": \"max_tokens\", "
	    "\"streamPropertyName\": \"stream\", \"structuredOutput\": "
	    "{\"field\": \"response_format\", \"style\": "
	    "\"openaiJsonSchema\", \"strict\": false}}\n");
	it_user_set(&t, "interceptOpenWebUIToolRequests", json_true());
	it_user_set(&t, "livenessToolCall", json_pack("{s:s,s:{s:s}}",
	    "toolName", "keep_going", "arguments", "note", "[Wilmer] go on"));
	run_clients(&t, dir, "tools");
}
END_TEST

static Suite *
clients_suite(void)
{
	Suite	*s = suite_create("clients");
	TCase	*tc = tcase_create("npm");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, official_clients);
	tcase_add_test(tc, official_clients_tool_settings);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return check_main(clients_suite());
}
