/* mem_condense.c - WilmerAI's condensation: the oldest new memories folded into one by an LLM call. */
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "mem_condense.h"
#include "mem_read.h"
#include "memgen.h"

#define SEP		"\n--------------\n"
#define NO_PRECEDING	"No preceding memories to show"

static const char default_system[] =
    "You are an expert summarizer. You take a collection of conversation "
    "memories and condense them into a single, cohesive summary that "
    "preserves all important details, context, and narrative flow.";

static const char default_prompt[] =
    "A user is currently in an online conversation via a chat program. "
    "Over the course of the conversation, memories have been generated "
    "summarizing what has transpired.\n\n"
    "The most recent memories leading up to the ones being condensed, if "
    "any exist, can be found here:\n\n"
    "<preceding_memories>\n"
    "[Memories_Before_Memories_to_Condense]\n"
    "</preceding_memories>\n\n"
    "The following are the memories to be condensed into a single "
    "cohesive summary:\n\n"
    "<memories_to_condense>\n"
    "[MemoriesToCondense]\n"
    "</memories_to_condense>\n\n"
    "Please condense the memories within <memories_to_condense> into a "
    "single cohesive summary that captures all key details, events, and "
    "context. Preserve names, important facts, and the narrative flow. If "
    "preceding memories exist, write the condensed summary as a "
    "continuation of those events. Please respond with text only.";

/* Where the memories new since the last condensation start: after the
 * first memory with the tracker's hash; 0 without a tracker, or when
 * its hash is gone (then all count as new, as in WilmerAI). */
static size_t
new_start(const struct mem_blocks *mem, const char *tracked, const char *key)
{
	size_t	 i;

	if (tracked == NULL)
		return 0;
	for (i = 0; i < mem->n; i++)
		if (strcmp(mem->v[i].mb_hash, tracked) == 0)
			return i + 1;
	log_warnx("discussion '%s': the condensation tracker's hash is not in "
	    "the memories; all of them count as new", key);
	return 0;
}

/* The LLM call: the settings' condense* prompts (or WilmerAI's), the
 * memories to condense as [MemoriesToCondense] (and [TextChunk]), up to
 * three before them as [Memories_Before_Memories_to_Condense]. */
static int
condense_call(struct node_ctx *x, const struct memory_settings *ms,
    const char *combined, const char *preceding, struct buf *out,
    struct wresult *res)
{
	const char	*sys0 = memory_setting_str(ms,
			    "condenseMemoriesSystemPrompt", default_system);
	const char	*pr0 = memory_setting_str(ms, "condenseMemoriesPrompt",
			    default_prompt);
	char		*sys, *pr;
	long		 max = memory_setting_long(ms,
			    "condenseMemoriesMaxResponseSizeInTokens",
			    memory_setting_long(ms, "maxResponseSizeInTokens",
			    500));
	int		 rc;

	sys = memory_fill(sys0, "[Memories_Before_Memories_to_Condense]",
	    preceding, "[TextChunk]", combined, (char *)NULL);
	pr = memory_fill(pr0, "[MemoriesToCondense]", combined,
	    "[Memories_Before_Memories_to_Condense]", preceding,
	    "[TextChunk]", combined, (char *)NULL);
	rc = memory_llm(x, memory_setting_str(ms,
	    "condenseMemoriesEndpointName", ms->ms_endpoint),
	    memory_setting_str(ms, "condenseMemoriesPreset", ms->ms_preset),
	    sys, pr, max, out, res);
	free(sys);
	free(pr);
	return rc;
}

/* Condense mem->v[start..start+n) into one memory. */
static int
condense_run(struct node_ctx *x, const struct memory_settings *ms,
    struct store *s, const char *key, const struct mem_blocks *mem,
    size_t start, size_t n, struct wresult *res)
{
	size_t		 before = start > 3 ? start - 3 : 0;
	char		*combined = memread_join(mem, start, n, SEP);
	char		*preceding = start > before ? memread_join(mem, before,
			    start - before, SEP) : xstrdup(NO_PRECEDING);
	struct buf	 out = BUF_INIT;
	const char	*hash = mem->v[start + n - 1].mb_hash;
	int		 rc, r = 0;

	rq_phase(x->nx_rq, "%s node %zu/%zu: condensing %zu memories",
	    x->nx_workflow, x->nx_index + 1, x->nx_count, n);
	rc = condense_call(x, ms, combined, preceding, &out, res);
	if (rc == 0 && (out.b_len == 0 || strspn(out.b_data, " \t\r\n") ==
	    out.b_len))
		log_warnx("[rq %s] discussion '%s': condensation came back "
		    "empty; the memories stay as they are", x->nx_rq->rq_id,
		    key);
	else if (rc == 0 && (r = memstore_condense(s, key, mem->v[start].mb_id,
	    mem->v[start + n - 1].mb_id, n, out.b_data, hash)) == -1)
		rc = node_fail(x, res, 500, "%s", store_err(s));
	else if (rc == 0 && r == 0)
		log_warnx("[rq %s] discussion '%s': the memories changed during "
		    "condensation; left as they are", x->nx_rq->rq_id, key);
	else if (rc == 0)
		log_info("[rq %s] discussion '%s': condensed %zu memories into "
		    "one", x->nx_rq->rq_id, key, n);
	buf_free(&out);
	free(combined);
	free(preceding);
	return rc;
}

int
memory_condense(struct node_ctx *x, const struct memory_settings *ms,
    const char *key, struct wresult *res)
{
	struct store		*s = memory_store(x, res);
	struct mem_blocks	 mem;
	char			*tracked = NULL;
	long			 n = ms->ms_condense_count, need;
	size_t			 start;
	int			 rc = 0;

	if (!ms->ms_condense)
		return 0;
	if (n <= 0) {
		log_warnx("[rq %s] condenseMemories is on but "
		    "memoriesBeforeCondensation is not set; not condensing",
		    x->nx_rq->rq_id);
		return 0;
	}
	if (s == NULL)
		return -1;
	if (memstore_read(s, key, &mem, NULL) == -1 ||
	    memstore_tracker(s, key, &tracked) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	start = new_start(&mem, tracked, key);
	need = n + (ms->ms_condense_buffer > 0 ? ms->ms_condense_buffer : 0);
	if (mem.n > 0 && (long)(mem.n - start) >= need)
		rc = condense_run(x, ms, s, key, &mem, start, (size_t)n, res);
	free(tracked);
	mem_blocks_free(&mem);
	return rc;
}
