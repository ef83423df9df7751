/* mem_file.c - the file-style memory ledger: new messages since the last memory, chunked and summarised one chunk at a time. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../../common/pystr.h"
#include "mem_chunk.h"
#include "mem_condense.h"
#include "mem_file.h"
#include "mem_read.h"
#include "memgen.h"

#define NO_SUMMARY	"There is not yet a summary file"

/*
 * Spec 7.4, file path. The new messages are those after the newest
 * message (outside the last lookbackStartTurn) whose hash ends a stored
 * memory, up to the lookback; with no memory yet, all but the lookback.
 * WilmerAI's own arithmetic starts lookbackStartTurn + 1 messages
 * earlier than that match, so each round summarises again messages an
 * earlier memory already holds; Sluice starts right after the match
 * (docs/migrating-from-wilmer.md).
 */
static bool
is_stored(const struct mem_blocks *mem, const char *hash)
{
	size_t	 i;

	for (i = 0; i < mem->n; i++)
		if (strcmp(mem->v[i].mb_hash, hash) == 0)
			return true;
	return false;
}

static void
new_span(const struct wmsgs *t, const struct mem_blocks *mem, long lookback,
    size_t *first, size_t *count)
{
	char	 h[MEMORY_HASHLEN];
	size_t	 end, i;

	*first = *count = 0;
	if (lookback < 0)
		lookback = 0;
	if (t->n <= (size_t)lookback)
		return;
	end = t->n - (size_t)lookback;
	*count = end;
	if (mem->n == 0)
		return;
	for (i = end < t->n ? end + 1 : end; i-- > 0;) {
		memory_hash(&t->v[i], h);
		if (is_stored(mem, h)) {
			*first = i + 1;
			*count = end > i + 1 ? end - (i + 1) : 0;
			return;
		}
	}
}

static void
mem_push(struct mem_blocks *mem, int64_t id, const char *text,
    const char *hash)
{
	mem->v = xreallocarray(mem->v, mem->n + 1, sizeof(*mem->v));
	mem->v[mem->n].mb_id = id;
	mem->v[mem->n].mb_text = xstrdup(text);
	mem->v[mem->n++].mb_hash = xstrdup(hash);
}

/* One memory from one chunk: the settings' prompts through their
 * endpoint, or the fileMemoryWorkflowName workflow with the chunk, the
 * last three memories, all of them and the summary as its inputs. */
static int
summarise(struct node_ctx *x, const struct memory_settings *ms,
    const char *chunk, const struct mem_blocks *mem, const char *summary,
    struct buf *out, struct wresult *res)
{
	char	*cur = memread_recent(mem, 3), *full = memread_recent(mem, 0);
	char	*sys, *pr;
	char	*in[5] = { xstrdup(chunk), cur, full, xstrdup(summary), NULL };
	int	 rc;

	if (ms->ms_file_workflow != NULL) {
		rc = memory_workflow(x, ms->ms_file_workflow, in, out, res);
		free(in[0]);
		free(in[3]);
		free(cur);
		free(full);
		return rc;
	}
	free(in[0]);
	free(in[3]);
	sys = memory_fill(ms->ms_system, "[Memory_file]", cur,
	    "[Full_Memory_file]", full, "[Chat_Summary]", summary,
	    "[TextChunk]", chunk, (char *)NULL);
	pr = memory_fill(ms->ms_prompt, "[Memory_file]", cur,
	    "[Full_Memory_file]", full, "[Chat_Summary]", summary,
	    "[TextChunk]", chunk, (char *)NULL);
	rc = memory_llm(x, ms->ms_endpoint, ms->ms_preset, sys, pr,
	    ms->ms_max_tokens, out, res);
	free(sys);
	free(pr);
	free(cur);
	free(full);
	return rc;
}


/* The summary's text, stripped, or NO_SUMMARY. Caller frees. */
static char *
summary_text(struct store *s, const char *key)
{
	char	*text = NULL, *hash = NULL, *r;

	if (memstore_summary(s, key, &text, &hash) != 1)
		return xstrdup(NO_SUMMARY);
	r = memory_strip(text);
	free(text);
	free(hash);
	return r;
}

/* Chunk by chunk, each memory committed before the next is made (the
 * next chunk's prompt shows it; a worker killed half-way loses only
 * the chunk in progress). An empty answer stops the round unwritten:
 * its messages are still new next time. */
static int
write_chunks(struct node_ctx *x, const struct memory_settings *ms,
    struct store *s, const char *key, struct mem_blocks *mem,
    const struct mem_chunks *ch, struct wresult *res)
{
	struct buf	 out = BUF_INIT;
	char		*summary = summary_text(s, key);
	int64_t		 id;
	size_t		 i;
	int		 rc = 0;

	for (i = 0; i < ch->n && rc == 0; i++) {
		buf_reset(&out);
		rq_phase(x->nx_rq, "%s node %zu/%zu: memory %zu/%zu",
		    x->nx_workflow, x->nx_index + 1, x->nx_count, i + 1, ch->n);
		if ((rc = summarise(x, ms, ch->v[i].mc_text, mem, summary,
		    &out, res)) == -1)
			break;
		if (out.b_len == 0 || pystr_blank(out.b_data)) {
			log_warnx("[rq %s] discussion '%s': the memory of chunk "
			    "%zu came back empty; not stored, tried again next "
			    "turn", x->nx_rq->rq_id, key, i + 1);
			break;
		}
		id = memstore_append(s, key, mem->n > 0 ?
		    mem->v[mem->n - 1].mb_id : 0, out.b_data, ch->v[i].mc_hash);
		if (id == -1)
			rc = node_fail(x, res, 500, "%s", store_err(s));
		else if (id == 0) {
			log_warnx("[rq %s] discussion '%s': another request "
			    "wrote memories meanwhile; stopping this round",
			    x->nx_rq->rq_id, key);
			break;
		} else {
			mem_push(mem, id, out.b_data, ch->v[i].mc_hash);
			memory_gen_renew(x, key);
		}
	}
	buf_free(&out);
	free(summary);
	return rc;
}

/* What a round would write: the ledger as it is and the chunks of the
 * new messages when a threshold is met (ch->n == 0: nothing to do).
 * existed: the ledger existed before this request looked (WilmerAI's
 * memories.json existed), which turns the message-count trigger on. */
static int
plan(struct node_ctx *x, const struct memory_settings *ms, struct store *s,
    const char *key, const struct wmsgs *t, bool existed,
    struct mem_blocks *mem, struct mem_chunks *ch, struct wresult *res)
{
	long	 size = mem_scaled(ms->ms_chunk_tokens, ms->ms_level);
	size_t	 first, count;

	memset(ch, 0, sizeof(*ch));
	if (memstore_read(s, key, mem, NULL) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	new_span(t, mem, ms->ms_lookback, &first, &count);
	if (count == 0)
		return 0;
	if (!mem_triggered(t, first, count, size, existed,
	    ms->ms_max_between)) {
		log_debug("[rq %s] discussion '%s': %zu new messages, below "
		    "both thresholds", x->nx_rq->rq_id, key, count);
		return 0;
	}
	mem_chunks_make(t, first, count, size, ch);
	return 0;
}

/* Under the lock: plan again (another request may have written), write,
 * seed the tracker of a ledger made from scratch, condense. */
static int
locked_round(struct node_ctx *x, const struct memory_settings *ms,
    struct store *s, const char *key, const struct wmsgs *t, bool existed,
    struct wresult *res)
{
	struct mem_blocks	 mem;
	struct mem_chunks	 ch;
	size_t			 had = 0;
	int			 rc;

	if ((rc = plan(x, ms, s, key, t, existed, &mem, &ch, res)) == 0) {
		had = mem.n;
		if (ch.n > 0)
			rc = write_chunks(x, ms, s, key, &mem, &ch, res);
	}
	/* The tracker starts at the last memory this round stored: a round
	 * that stopped early (an empty answer) stored fewer than planned,
	 * and the hash of a chunk not stored is in no memory. */
	if (rc == 0 && mem.n > had && !existed && ms->ms_condense &&
	    memstore_tracker_put(s, key, mem.v[mem.n - 1].mb_hash) == -1)
		rc = node_fail(x, res, 500, "%s", store_err(s));
	if (rc == 0 && ch.n > 0)
		rc = memory_condense(x, ms, key, res);
	mem_blocks_free(&mem);
	mem_chunks_free(&ch);
	return rc;
}

int
memory_file_run(struct node_ctx *x, const struct memory_settings *ms,
    const char *key, struct wresult *res)
{
	struct store		*s = memory_store(x, res);
	struct wmsgs		 t;
	struct mem_blocks	 mem;
	struct mem_chunks	 ch;
	bool			 existed;
	int			 rc;

	if (s == NULL)
		return -1;
	if (memstore_touch_ledger(s, key, &existed) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	memory_turns(x->nx_msgs, &t);
	rc = plan(x, ms, s, key, &t, existed, &mem, &ch, res);
	mem_blocks_free(&mem);
	if (rc == 0 && ch.n > 0) {
		rc = memory_gen_lock(x, key, ms->ms_condense_lock_s, res);
		if (rc == 1) {
			rc = locked_round(x, ms, s, key, &t, existed, res);
			memory_gen_unlock(x, key);
		}
	}
	mem_chunks_free(&ch);
	wmsgs_free(&t);
	return rc == -1 ? -1 : 0;
}
