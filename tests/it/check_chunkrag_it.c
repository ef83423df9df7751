/* check_chunkrag_it.c - integration: ConversationChunkProcessor and SlowButQualityRAG through the real gateway and workers against the mock LLM, checking what the backend was sent. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../testmain.h"
#include "harness.h"

#define FOX	"The quick brown fox jumps over the lazy dog."

static struct it	 T;

static void
start(const char *main_wf)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	it_file(&T, "Workflows/it/Main.json", main_wf);
	it_file(&T, "Workflows/it/Chunk.json", "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"Mock\", \"preset\": \"Mock\", \"systemPrompt\": "
	    "\"chunk: {agent1Input} / {agent2Input}\", \"prompt\": \"\", "
	    "\"lastMessagesToSendInsteadOfPrompt\": 20}]");
	it_gateway_start(&T, NULL);
}

/* A non-streamed chat of the messages msgs (a JSON list text): the
 * answer's text. Caller frees. */
static char *
chat(const char *msgs)
{
	char		*body = xasprintf("{\"model\": \"x\", \"stream\": false, "
			    "\"messages\": %s}", msgs);
	struct it_resp	 r;
	json_t		*j;
	char		*text;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld: %s", (long)r.r_status,
	    r.r_body.b_data);
	j = it_json(r.r_body.b_data);
	text = xstrdup(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(j, "choices"), 0), "message"),
	    "content")));
	json_decref(j);
	it_resp_free(&r);
	free(body);
	return text;
}

/* Backend call i of log sent exactly these messages (a JSON text). */
static void
ck_sent(json_t *log, size_t i, const char *want)
{
	json_t	*got = json_object_get(json_object_get(json_array_get(log, i),
		    "body"), "messages"), *w = it_json(want);
	char	*gs = json_dumps(got, JSON_COMPACT);

	ck_assert_msg(json_equal(got, w), "call %zu sent %s", i, gs);
	free(gs);
	json_decref(w);
}

#define CONV	"[{\"role\": \"user\", \"content\": " \
		"\"one[DiscussionId]d1[/DiscussionId]\"}, " \
		"{\"role\": \"assistant\", \"content\": \"two\"}, " \
		"{\"role\": \"user\", \"content\": \"three\"}, " \
		"{\"role\": \"assistant\", \"content\": \"four\"}, " \
		"{\"role\": \"user\", \"content\": \"five\"}]"

/* Two chunks of two messages, the last message left for later: each
 * child call sends its chunk only; a resend runs no child. */
START_TEST(a6_1_chunks_through_gateway)
{
	char	 wf[1024], *text, *cur, line[128];
	json_t	*log;
	FILE	*fp;
	int	 lines = 0;

	start("[]");	/* the cursor folder is under T.it_dir */
	snprintf(wf, sizeof(wf), "[{\"type\": \"ConversationChunkProcessor\", "
	    "\"id\": \"ev\", \"workflowName\": \"Chunk\", \"chunkSize\": 2, "
	    "\"lookbackMessages\": 1, \"cursorDirectory\": \"%s/cur\", "
	    "\"scoped_variables\": [\"extra\"]}, {\"type\": \"Standard\", "
	    "\"endpointName\": \"Mock\", \"preset\": \"Mock\", \"prompt\": "
	    "\"after: {agent1Output}\"}]", T.it_dir);
	it_file(&T, "Workflows/it/Main.json", wf);
	text = chat(CONV);
	ck_assert_str_eq(text, FOX);
	free(text);
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 3);
	ck_sent(log, 0, "[{\"role\": \"system\", \"content\": \"chunk: one\\ntwo"
	    " / extra\"}, {\"role\": \"user\", \"content\": \"one\"}, "
	    "{\"role\": \"assistant\", \"content\": \"two\"}]");
	ck_sent(log, 1, "[{\"role\": \"system\", \"content\": \"chunk: three\\n"
	    "four / extra\"}, {\"role\": \"user\", \"content\": \"three\"}, "
	    "{\"role\": \"assistant\", \"content\": \"four\"}]");
	ck_sent(log, 2, "[{\"role\": \"user\", \"content\": \"after: "
	    "ConversationChunkProcessor 'ev' processed 2 chunk(s).\"}]");
	json_decref(log);
	cur = xasprintf("%s/cur/chunk_cursor_ev_d1.txt", T.it_dir);
	ck_assert_ptr_nonnull(fp = fopen(cur, "r"));
	while (fgets(line, sizeof(line), fp) != NULL)
		lines++;
	fclose(fp);
	ck_assert_int_eq(lines, 2);
	free(cur);
	/* the same conversation again: nothing new to process */
	free(chat(CONV));
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 1);
	ck_sent(log, 0, "[{\"role\": \"user\", \"content\": \"after: "
	    "ConversationChunkProcessor 'ev' processed 0 chunk(s).\"}]");
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* Two chunks, two calls; the second sees the first answer as a
 * preceding memory; the answers joined with nothing between. */
START_TEST(a6_2_rag_through_gateway)
{
	char	*text;
	json_t	*log, *body;

	start("[{\"type\": \"SlowButQualityRAG\", \"ragTarget\": "
	    "\"alpha--ChunkBreak--beta\", \"ragType\": \"x\", \"systemPrompt\": "
	    "\"System: [TextChunk]\", \"prompt\": \"Prompt: [TextChunk] after "
	    "[Memory_file]\", \"endpointName\": \"Mock\", \"preset\": \"Mock\"}]");
	text = chat("[{\"role\": \"user\", \"content\": "
	    "\"hi[DiscussionId]r1[/DiscussionId]\"}]");
	ck_assert_str_eq(text, FOX FOX);
	free(text);
	log = it_mock_log(&T, true);
	ck_assert_uint_eq(json_array_size(log), 2);
	ck_sent(log, 0, "[{\"role\": \"system\", \"content\": \"System: alpha\"}, "
	    "{\"role\": \"user\", \"content\": \"Prompt: alpha after No "
	    "preceding memories to show\"}]");
	ck_sent(log, 1, "[{\"role\": \"system\", \"content\": \"System: beta\"}, "
	    "{\"role\": \"user\", \"content\": \"Prompt: beta after " FOX "\"}]");
	body = json_object_get(json_array_get(log, 1), "body");
	ck_assert_int_eq(json_integer_value(json_object_get(body,
	    "max_tokens")), 400);
	ck_assert(json_is_false(json_object_get(body, "stream")));
	json_decref(log);
	/* without a discussion: "" and no call */
	text = chat("[{\"role\": \"user\", \"content\": \"hi\"}]");
	ck_assert_str_eq(text, "");
	free(text);
	ck_assert_uint_eq(json_array_size(log = it_mock_log(&T, true)), 0);
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "a6_1_chunks_through_gateway", a6_1_chunks_through_gateway },
		{ "a6_2_rag_through_gateway", a6_2_rag_through_gateway },
	};

	return it_main(it_suite_cases("chunkrag_it", cases,
	    sizeof(cases) / sizeof(cases[0]), 60));
}
