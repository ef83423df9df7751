/* node_kwsearch.c - ConversationalKeywordSearchPerformerTool and MemoryKeywordSearchPerformerTool: WilmerAI's keyword search, without an LLM, over the conversation or the discussion's memories. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../core/node.h"
#include "../memory/kwsearch.h"
#include "../memory/mem_chunk.h"
#include "../memory/mem_read.h"
#include "../memory/memgen.h"
#include "../store/store_stmt.h"

#define CHUNK_BREAK	"--ChunkBreak--"
#define TOO_SHORT	"There are no memories. This conversation has not " \
			"gone long enough for there to be memories."
#define NO_KEYWORDS	"No keywords specified in Keyword Search node"
#define CHAT_CHUNK	400	/* estimated tokens per conversation chunk */
#define MAX_HITS	10
#define PROXIMITY	5	/* words */
#define SPEAKER_TURNS	10	/* messages whose speakers are no keywords */
#define RECENT_KEPT	3	/* the newest memories are not searched */

/*
 * Both node types are one handler that goes by searchTarget, as in
 * WilmerAI (a MemoryKeywordSearchPerformerTool without it searches the
 * conversation).
 */

/* kw without the speakers named in the last SPEAKER_TURNS messages
 * (leading system messages left out: WilmerAI's extract_last_n_turns
 * for a chat-style node). Caller frees. */
static char *
keywords_for(struct node_ctx *x, const char *kw)
{
	const struct wmsgs	*m = x->nx_msgs;
	const char		**c;
	size_t			 first = 0, i, n;
	char			*r;

	while (first < m->n && strcmp(m->v[first].m_role, "system") == 0)
		first++;
	if (m->n - first > SPEAKER_TURNS)
		first = m->n - SPEAKER_TURNS;
	n = m->n - first;
	c = xcalloc(n + 1, sizeof(*c));
	for (i = 0; i < n; i++)
		c[i] = m->v[first + i].m_content;
	r = kw_filter_speakers(c, n, kw);
	free(c);
	return r;
}

/* The hits, "User: "-style labels removed, empty ones left out, joined
 * by sep. */
static void
put_hits(struct buf *out, char *const *texts, const size_t *hits, size_t n,
    const char *sep)
{
	size_t	 i, had = 0;
	char	*t;

	for (i = 0; i < n; i++) {
		t = memread_unlabel(texts[hits[i]]);
		if (*t != '\0') {
			if (had++ > 0)
				buf_adds(out, sep);
			buf_adds(out, t);
		}
		free(t);
	}
}

/* get_message_chunks: the last lookback messages, or all but the last,
 * in chunks of CHAT_CHUNK estimated tokens; then the scored search. */
static void
conversation_search(struct node_ctx *x, const char *kw, long lookback,
    struct buf *out)
{
	const struct wmsgs	*m = x->nx_msgs;
	struct mem_chunks	 ch;
	char			**texts, *q;
	size_t			 first = 0, count, i, nh, *hits;

	if (m->n == 0)
		return;
	if (lookback > 0 && m->n <= (size_t)lookback) {
		buf_adds(out, TOO_SHORT);
		return;
	}
	if (lookback > 0) {
		first = m->n - (size_t)lookback;
		count = (size_t)lookback;
	} else
		count = m->n - 1;
	mem_chunks_make(m, first, count, CHAT_CHUNK, &ch);
	texts = xcalloc(ch.n + 1, sizeof(*texts));
	for (i = 0; i < ch.n; i++)
		texts[i] = ch.v[i].mc_text;
	q = keywords_for(x, kw);
	hits = kw_search_scored((const char *const *)texts, ch.n, q, MAX_HITS,
	    PROXIMITY, &nh);
	put_hits(out, texts, hits, nh, CHUNK_BREAK);
	free(hits);
	free(q);
	free(texts);
	mem_chunks_free(&ch);
}

/* The discussion's file-style memories, in order (texts NULL-
 * terminated, caller frees with kw_free). 0, or -1 with res filled. */
static int
memory_texts(struct node_ctx *x, const char *key, char ***texts, size_t *n,
    struct wresult *res)
{
	struct store	*s = memory_store(x, res);
	struct store_q	*st;
	int		 r;

	*texts = xcalloc(1, sizeof(**texts));
	*n = 0;
	if (s == NULL)
		return -1;
	if ((st = store_stmt(s, "SELECT text FROM memories WHERE discussion = "
	    "? ORDER BY id")) == NULL || store_bind(s, st, "t", key) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	while ((r = store_step(s, st)) == 1) {
		*texts = xreallocarray(*texts, *n + 2, sizeof(**texts));
		(*texts)[(*n)++] = xstrdup(store_col_text(st, 0));
		(*texts)[*n] = NULL;
	}
	return r == -1 ? node_fail(x, res, 500, "%s", store_err(s)) : 0;
}

/* The memories but the newest RECENT_KEPT (when there are more), the
 * plain search, joined by blank lines. */
static int
memory_search(struct node_ctx *x, const char *kw, struct buf *out,
    struct wresult *res)
{
	char	*key = memory_key(x), **texts, *q;
	size_t	 n, nh, *hits;
	int	 rc;

	if (key == NULL)
		return 0;
	if ((rc = memory_texts(x, key, &texts, &n, res)) == 0) {
		if (n > RECENT_KEPT)
			n -= RECENT_KEPT;
		q = keywords_for(x, kw);
		hits = kw_search_plain((const char *const *)texts, n, q,
		    MAX_HITS, &nh);
		put_hits(out, texts, hits, nh, "\n\n");
		free(hits);
		free(q);
	}
	kw_free(texts);
	free(key);
	return rc;
}

static int
kwsearch_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	const char	*target = node_raw(x, "searchTarget");
	char		*kw;
	int		 rc = 0;

	if (json_object_get(x->nx_node, "keywords") == NULL) {
		buf_adds(out, NO_KEYWORDS);
		return 0;
	}
	if (target == NULL)
		target = "CurrentConversation";
	kw = node_str(x, "keywords");
	if (strcmp(target, "CurrentConversation") == 0)
		conversation_search(x, kw, node_long(x, "lookbackStartTurn", 0),
		    out);
	else if (strcmp(target, "RecentMemories") == 0)
		rc = memory_search(x, kw, out, res);
	free(kw);
	return rc;
}

const struct node_type node_conv_kwsearch = {
    "ConversationalKeywordSearchPerformerTool", kwsearch_run, false };
const struct node_type node_mem_kwsearch = {
    "MemoryKeywordSearchPerformerTool", kwsearch_run, false };
