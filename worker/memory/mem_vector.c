/* mem_vector.c - QualityMemory's vector path: new messages after the logged chunk hashes, chunked, turned into facts by an LLM or a workflow, stored one chunk per transaction, then embedded. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../../common/pystr.h"
#include "mem_chunk.h"
#include "mem_state.h"
#include "mem_vector.h"
#include "memgen.h"
#include "vecembed.h"
#include "vecmem.h"
#include "vecmem_text.h"

/*
 * WilmerAI's own default prompts are placeholders ending in "..." that
 * never name the fields it then requires; these ask for them. Braces
 * are left out: the prompts go through the variable pass.
 */
#define VEC_SYSTEM	"You are an expert AI assistant that analyzes text " \
	"and outputs structured JSON. You extract the facts worth " \
	"remembering from a piece of conversation and answer with JSON only."
#define VEC_PROMPT	"Analyze the following memory text and extract the " \
	"facts worth remembering. Answer with a JSON array holding one JSON " \
	"object per fact, each with these keys: \"title\" (a short " \
	"headline), \"summary\" (the fact in one or two complete " \
	"sentences), \"entities\" (a list of the people, places, " \
	"organisations and things it names), \"key_phrases\" (a list of " \
	"short phrases someone might search for) and \"topics\" (a list of " \
	"broad topics). Answer with an empty array when there is nothing " \
	"worth remembering.\nMemory Text:\n[TextChunk]\nJSON Output:"

/* After a chunk's facts are stored (and its hash logged): their
 * embeddings (A9.4), then WilmerAI's state document merges their
 * texts. Best effort; -1 only when the request was cancelled
 * meanwhile. */
static int
after_chunk(struct node_ctx *x, const struct memory_settings *ms,
    const char *key, json_t *const *facts, const int64_t *ids, size_t n,
    struct wresult *res)
{
	char	**texts = xcalloc(n + 1, sizeof(*texts));
	size_t	  k;
	int	  rc;

	for (k = 0; k < n; k++)		/* keep_facts checked each */
		if ((texts[k] = vecmem_fact_text(facts[k])) == NULL)
			texts[k] = xstrdup("");
	rc = vecembed_after_chunk(x, ms, key, ids, texts, n, res);
	if (rc == 0)
		rc = memory_state_update(x, ms, key, texts, n, res);
	for (k = 0; k < n; k++)
		free(texts[k]);
	free(texts);
	return rc;
}

/* Where the new messages start: after the last eligible message (of
 * t[0..end)) whose hash is the newest of the logged hashes that is
 * there at all; 0 when none is. */
static size_t
resume_at(struct node_ctx *x, const struct wmsgs *t, size_t end,
    char **hist, size_t nhist, const char *key)
{
	char	(*h)[MEMORY_HASHLEN] = xcalloc(end + 1, sizeof(*h));
	size_t	 i, k, at = 0;
	bool	 found = false;

	for (i = 0; i < end; i++)
		memory_hash(&t->v[i], h[i]);
	for (k = 0; k < nhist && !found; k++)
		for (i = end; i-- > 0;)
			if (strcmp(h[i], hist[k]) == 0) {
				at = i + 1;
				found = true;
				break;
			}
	if (nhist > 0 && !found)
		log_warnx("[rq %s] discussion '%s': none of the last %zu "
		    "logged chunk hashes is in the conversation; all "
		    "eligible messages are new", x->nx_rq->rq_id, key,
		    nhist);
	free(h);
	return at;
}

/* The facts of one chunk as the LLM (or the vectorMemoryWorkflowName
 * workflow, given the chunk as agent1Input) writes them. */
static int
extract(struct node_ctx *x, const struct memory_settings *ms,
    const char *chunk, struct buf *out, struct wresult *res)
{
	char	*in[2] = { xstrdup(chunk), NULL }, *sys, *pr;
	int	 rc;

	if (ms->ms_vector_workflow != NULL) {
		rc = memory_workflow(x, ms->ms_vector_workflow, in, out, res);
		free(in[0]);
		return rc;
	}
	free(in[0]);
	sys = memory_fill(VEC_SYSTEM, "[TextChunk]", chunk, (char *)NULL);
	pr = memory_fill(VEC_PROMPT, "[TextChunk]", chunk, (char *)NULL);
	rc = memory_llm(x, ms->ms_vector_endpoint != NULL ?
	    ms->ms_vector_endpoint : ms->ms_endpoint, ms->ms_vector_preset !=
	    NULL ? ms->ms_vector_preset : ms->ms_preset, sys, pr,
	    ms->ms_vector_max_tokens, out, res);
	free(sys);
	free(pr);
	return rc;
}

/* The facts of an answer that can be stored (new references into
 * *facts, caller frees the array); the count of parsed objects in
 * *parsed. */
static size_t
facts_of(const char *answer, json_t ***facts, size_t *parsed)
{
	json_t	*j = vecmem_parse(answer), *one;
	char	*text;
	size_t	 i, n = 0, all;

	all = json_is_array(j) ? json_array_size(j) : json_is_object(j) ? 1 : 0;
	*facts = xcalloc(all + 1, sizeof(**facts));
	for (i = 0; i < all; i++) {
		one = json_is_array(j) ? json_array_get(j, i) : j;
		if ((text = vecmem_fact_text(one)) == NULL)
			continue;
		free(text);
		(*facts)[n++] = json_incref(one);
	}
	*parsed = all;
	json_decref(j);
	return n;
}

struct round {
	struct store		*r_store;
	const char		*r_key;
	int64_t			 r_since;	/* the log's last row, read */
	const struct mem_chunks	*r_chunks;
	bool			*r_stored;	/* per chunk: stored now */
};

/* How often this round logged chunk i's hash before chunk i. */
static long
own_logged(const struct round *rd, size_t i)
{
	size_t	 j;
	long	 c = 0;

	for (j = 0; j < i; j++)
		if (rd->r_stored[j] && strcmp(rd->r_chunks->v[j].mc_hash,
		    rd->r_chunks->v[i].mc_hash) == 0)
			c++;
	return c;
}


/* Store what the answer for chunk i holds. A chunk without facts is
 * not logged (WilmerAI): later chunks go on, and when it was the last
 * one its messages are new again next turn. */
static int
keep_facts(struct node_ctx *x, const struct memory_settings *ms,
    struct round *rd, size_t i, const char *answer, struct wresult *res)
{
	json_t	**facts;
	int64_t	 *ids;
	size_t	  n, parsed, k;
	long	  got = 0;

	n = facts_of(answer, &facts, &parsed);
	ids = xcalloc(n + 1, sizeof(*ids));
	if (n == 0)
		log_warnx("[rq %s] discussion '%s': vector memory chunk "
		    "%zu/%zu: %s; its hash is not logged", x->nx_rq->rq_id,
		    rd->r_key, i + 1, rd->r_chunks->n, parsed > 0 ? "no fact "
		    "has title, summary, entities and key_phrases" : "the "
		    "answer holds no JSON facts");
	else if ((got = vecmem_store_chunk(rd->r_store, rd->r_key, facts, n,
	    ms->ms_vector_topics, rd->r_chunks->v[i].mc_hash, rd->r_since,
	    own_logged(rd, i), clock_wall_ms(), ids)) == -1)
		(void)node_fail(x, res, 500, "%s", store_err(rd->r_store));
	else if (got == 0)
		log_info("[rq %s] discussion '%s': vector memory chunk %zu was "
		    "stored by another request meanwhile", x->nx_rq->rq_id,
		    rd->r_key, i + 1);
	else {
		rd->r_stored[i] = true;
		log_info("[rq %s] discussion '%s': %ld vector memories stored "
		    "from chunk %zu/%zu", x->nx_rq->rq_id, rd->r_key, got,
		    i + 1, rd->r_chunks->n);
		if (after_chunk(x, ms, rd->r_key, facts, ids, n, res) == -1)
			got = -1;
	}
	for (k = 0; k < n; k++)
		json_decref(facts[k]);
	free(facts);
	free(ids);
	return got == -1 ? -1 : 0;
}

static int
write_chunks(struct node_ctx *x, const struct memory_settings *ms,
    struct round *rd, struct wresult *res)
{
	struct buf	 out = BUF_INIT;
	size_t		 i;
	int		 rc = 0;

	rd->r_stored = xcalloc(rd->r_chunks->n + 1, sizeof(*rd->r_stored));
	for (i = 0; i < rd->r_chunks->n && rc == 0; i++) {
		if (pystr_blank(rd->r_chunks->v[i].mc_text))
			continue;
		rq_phase(x->nx_rq, "%s node %zu/%zu: vector memory %zu/%zu",
		    x->nx_workflow, x->nx_index + 1, x->nx_count, i + 1,
		    rd->r_chunks->n);
		buf_reset(&out);
		if ((rc = extract(x, ms, rd->r_chunks->v[i].mc_text, &out,
		    res)) == 0) {
			buf_adds(&out, "");
			rc = keep_facts(x, ms, rd, i, out.b_data, res);
		}
		memory_gen_renew(x, rd->r_key);
	}
	free(rd->r_stored);
	buf_free(&out);
	return rc;
}

/* The new messages of t (after the resume point, before the lookback)
 * when a threshold is met: their chunks, else none. */
static int
plan(struct node_ctx *x, const struct memory_settings *ms, struct round *rd,
    const struct wmsgs *t, struct mem_chunks *ch, struct wresult *res)
{
	long	 size = mem_scaled(ms->ms_vector_chunk_tokens, ms->ms_level);
	size_t	 lookback = ms->ms_lookback > 0 ? (size_t)ms->ms_lookback : 0;
	size_t	 end, first, nhist;
	char	**hist;
	int	 rc;

	memset(ch, 0, sizeof(*ch));
	if (t->n <= lookback)
		return 0;
	end = t->n - lookback;
	rc = vecmem_hashes(rd->r_store, rd->r_key, &hist, &nhist,
	    &rd->r_since);
	if (rc == -1) {
		vecmem_strv_free(hist);
		return node_fail(x, res, 500, "%s", store_err(rd->r_store));
	}
	first = resume_at(x, t, end, hist, nhist, rd->r_key);
	vecmem_strv_free(hist);
	if (first >= end || !mem_triggered(t, first, end - first, size, true,
	    ms->ms_vector_max_between)) {
		log_debug("[rq %s] discussion '%s': %zu new messages, below "
		    "both vector memory thresholds", x->nx_rq->rq_id,
		    rd->r_key, end > first ? end - first : 0);
		return 0;
	}
	mem_chunks_make(t, first, end - first, size, ch);
	log_info("[rq %s] discussion '%s': %zu new messages in %zu chunks for "
	    "vector memory", x->nx_rq->rq_id, rd->r_key, end - first, ch->n);
	return 0;
}

int
memory_vector_run(struct node_ctx *x, const struct memory_settings *ms,
    const char *key, struct wresult *res)
{
	struct round		 rd;
	struct mem_chunks	 ch;
	struct wmsgs		 t;
	int			 rc;

	memset(&rd, 0, sizeof(rd));
	if ((rd.r_store = memory_store(x, res)) == NULL)
		return -1;
	rd.r_key = key;
	memory_turns(x->nx_msgs, &t);
	if ((rc = plan(x, ms, &rd, &t, &ch, res)) == 0 && ch.n > 0) {
		rd.r_chunks = &ch;
		rc = write_chunks(x, ms, &rd, res);
	}
	mem_chunks_free(&ch);
	wmsgs_free(&t);
	return rc;
}
