/* node_memory.c - the nodes that read memories back: RecentMemorySummarizerTool, GetCurrentMemoryFromFile, GetCurrentSummaryFromFile, ChatSummaryMemoryGatheringTool. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../core/node.h"
#include "../memory/mem_read.h"
#include "../memory/memory.h"

#define CHUNK_BREAK	"--ChunkBreak--"
#define SUMMARY_SEP	"\n------------\n"
#define NO_MEMORIES	"There are not yet any memories"
#define NO_SUMMARY	"There is not yet a summary file"

/* The discussion's memories (and key); -1 with res filled on a
 * database error. */
static int
load(struct node_ctx *x, const char *key, struct mem_blocks *mem,
    struct wresult *res)
{
	struct store	*s = memory_store(x, res);

	memset(mem, 0, sizeof(*mem));
	if (s == NULL)
		return -1;
	if (memstore_read(s, key, mem, NULL) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	return 0;
}

/* customDelimiter given (even ""): it replaces the chunk breaks. */
static void
put_delimited(struct node_ctx *x, const char *text, const char *dflt,
    struct buf *out)
{
	const char	*d = node_raw(x, "customDelimiter");
	char		*r;

	if (d == NULL)
		d = dflt;
	r = memory_replace(text, CHUNK_BREAK, d);
	buf_adds(out, r);
	free(r);
}

/* Spec 7.6: the latest memories (maxSummaryChunksFromFile, 0 meaning 3
 * and -1 all), or without a discussion the recent messages themselves. */
static int
recent_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	long			 want = node_long(x, "maxSummaryChunksFromFile", 0);
	char			*key = memory_key(x), *text;
	struct mem_blocks	 mem;
	size_t			 n;

	if (key == NULL)
		text = memread_recent_chat(x->nx_msgs, node_long(x,
		    "maxTurnsToPull", 0), node_long(x, "lookbackStart", 0),
		    CHUNK_BREAK);
	else if (load(x, key, &mem, res) == -1) {
		free(key);
		return -1;
	} else {
		n = want > 0 ? (size_t)want : 3;
		if (want == -1 || n > mem.n)
			n = mem.n;
		text = mem.n == 0 ? xstrdup("No memories have been generated "
		    "yet") : memread_join(&mem, mem.n - n, n, CHUNK_BREAK);
		mem_blocks_free(&mem);
	}
	put_delimited(x, text, CHUNK_BREAK, out);
	free(text);
	free(key);
	return 0;
}

/* Every memory, joined by customDelimiter ("--ChunkBreak--"). */
static int
current_memory_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char			*key = memory_key(x), *text;
	struct mem_blocks	 mem;

	if (key == NULL) {
		buf_adds(out, NO_MEMORIES);
		return 0;
	}
	if (load(x, key, &mem, res) == -1) {
		free(key);
		return -1;
	}
	text = mem.n == 0 ? xstrdup(NO_MEMORIES) :
	    memread_join(&mem, 0, mem.n, CHUNK_BREAK);
	put_delimited(x, text, CHUNK_BREAK, out);
	free(text);
	mem_blocks_free(&mem);
	free(key);
	return 0;
}

/* The rolling summary (state false) or the state document: 1 with
 * *text, 0 when there is none (or no discussion id), -1 with res
 * filled. */
static int
stored(struct node_ctx *x, bool state, char **text, struct wresult *res)
{
	char		*key = memory_key(x), *hash = NULL;
	struct store	*s;
	int		 r = 0;

	*text = NULL;
	if (key != NULL && (s = memory_store(x, res)) == NULL)
		r = -1;
	else if (key != NULL && (r = state ? memstore_state(s, key, text) :
	    memstore_summary(s, key, text, &hash)) == -1)
		r = node_fail(x, res, 500, "%s", store_err(s));
	free(hash);
	free(key);
	return r;
}

static int
current_summary_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*text;
	int	 r = stored(x, false, &text, res);

	if (r != -1)
		buf_adds(out, r == 1 ? text : NO_SUMMARY);
	free(text);
	return r == -1 ? -1 : 0;
}

/* The memories the rolling summary does not hold yet, or without a
 * discussion the recent messages (maxTurnsToPull). */
static int
gathering_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char			*key = memory_key(x), *text = NULL, *hash = NULL;
	struct mem_blocks	 mem;
	struct store		*s;
	size_t			 first, n;

	if (key == NULL) {
		text = memread_recent_chat(x->nx_msgs, node_long(x,
		    "maxTurnsToPull", 0), 0, SUMMARY_SEP);
		buf_adds(out, text);
		free(text);
		return 0;
	}
	if (load(x, key, &mem, res) == -1) {
		free(key);
		return -1;
	}
	s = memory_store(x, res);	/* open: load() opened it */
	if (memstore_summary(s, key, &text, &hash) == -1) {
		mem_blocks_free(&mem);
		free(key);
		return node_fail(x, res, 500, "%s", store_err(s));
	}
	n = memread_unsummarised(&mem, hash, &first);
	free(text);
	text = memread_join(&mem, first, n, SUMMARY_SEP);
	buf_adds(out, text);
	free(text);
	free(hash);
	mem_blocks_free(&mem);
	free(key);
	return 0;
}

/* WilmerAI's state document, or the sentence saying there is none. */
static int
state_document_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*text, *st = NULL;
	int	 r = stored(x, true, &text, res);

	if (r == 1 && *(st = memory_strip(text)) != '\0')
		buf_adds(out, text);
	else if (r != -1)
		buf_adds(out, "No state document has been created yet");
	free(st);
	free(text);
	return r == -1 ? -1 : 0;
}

const struct node_type node_recent_summarizer = {
    "RecentMemorySummarizerTool", recent_run, false };
const struct node_type node_current_memory = { "GetCurrentMemoryFromFile",
    current_memory_run, false };
const struct node_type node_current_summary = { "GetCurrentSummaryFromFile",
    current_summary_run, false };
const struct node_type node_summary_gathering = {
    "ChatSummaryMemoryGatheringTool", gathering_run, false };
const struct node_type node_state_document = { "GetCurrentStateDocument",
    state_document_run, false };
