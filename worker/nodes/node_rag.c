/* node_rag.c - SlowButQualityRAG: each chunk of a text summarised with the discussion's memories and summary as context. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../core/node.h"
#include "../core/vars.h"
#include "../core/vars_json.h"
#include "../memory/mem_read.h"
#include "../memory/memory.h"

/*
 * Addendum A6.2. The memories and the summary are read, never written
 * (the ledger is created empty when missing, as WilmerAI creates
 * memories.json). Each chunk of ragTarget (split on --ChunkBreak--) is
 * one LLM call through the node's endpoint, or one run of
 * fileMemoryWorkflowName; later chunks see earlier answers as
 * preceding memories. The answers are joined with nothing between
 * them. Where Sluice differs on purpose (one variable pass, each answer
 * cleaned as it comes): docs/migrating-from-wilmer.md.
 */

#define CHUNK_BREAK	"--ChunkBreak--"
#define NO_SUMMARY	"There is not yet a summary file"

struct rag {
	char			*r_key;		/* the discussion's */
	char			*r_system;	/* the raw templates */
	char			*r_prompt;
	const char		*r_workflow;	/* fileMemoryWorkflowName */
	char			*r_summary;	/* stripped */
	struct mem_blocks	 r_mem;
};

static void
rag_clear(struct rag *g)
{
	free(g->r_key);
	free(g->r_system);
	free(g->r_prompt);
	free(g->r_summary);
	mem_blocks_free(&g->r_mem);
	memset(g, 0, sizeof(*g));
}

/* A field as str() shows it, "" when absent; not substituted. */
static char *
raw_field(struct node_ctx *x, const char *key)
{
	json_t	*v = json_object_get(x->nx_node, key);

	return v != NULL ? vars_py_str(v) : xstrdup("");
}

/* The discussion's memories and summary; -1 with res filled. */
static int
rag_load(struct node_ctx *x, struct rag *g, struct wresult *res)
{
	struct store	*s = memory_store(x, res);
	char		*text = NULL, *hash = NULL;
	bool		 existed;
	int		 r;

	if (s == NULL)
		return -1;
	if (memstore_touch_ledger(s, g->r_key, &existed) == -1 ||
	    memstore_read(s, g->r_key, &g->r_mem, NULL) == -1 ||
	    (r = memstore_summary(s, g->r_key, &text, &hash)) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	g->r_summary = memory_strip(r == 1 ? text : NO_SUMMARY);
	free(text);
	free(hash);
	return 0;
}

/* The memory just made joins the ledger this node shows later chunks. */
static void
rag_remember(struct rag *g, const char *text)
{
	struct mem_blocks	*m = &g->r_mem;

	m->v = xreallocarray(m->v, m->n + 1, sizeof(*m->v));
	m->v[m->n].mb_id = 0;
	m->v[m->n].mb_text = xstrdup(text);
	m->v[m->n++].mb_hash = xstrdup("");
}

/* One chunk: the child workflow, or the node's own LLM call with the
 * placeholders filled. The answer into out. */
static int
rag_chunk(struct node_ctx *x, const struct rag *g, const char *chunk,
    struct buf *out, struct wresult *res)
{
	char	*cur = memread_recent(&g->r_mem, 3);
	char	*full = memread_recent(&g->r_mem, 0);
	char	*in[5] = { xstrdup(chunk), cur, full, g->r_summary, NULL };
	char	*sys, *pr;
	int	 rc;

	if (g->r_workflow != NULL)
		rc = memory_workflow(x, g->r_workflow, in, out, res);
	else {
		sys = memory_fill(g->r_system, "[Memory_file]", cur,
		    "[Full_Memory_file]", full, "[Chat_Summary]", g->r_summary,
		    "[TextChunk]", chunk, (char *)NULL);
		pr = memory_fill(g->r_prompt, "[Memory_file]", cur,
		    "[Full_Memory_file]", full, "[Chat_Summary]", g->r_summary,
		    "[TextChunk]", chunk, (char *)NULL);
		rc = memory_llm_node(x, sys, pr, out, res);
		free(sys);
		free(pr);
	}
	free(in[0]);
	free(cur);
	free(full);
	return rc;
}

/* Every chunk of target in order, the answers appended to out. */
static int
rag_chunks(struct node_ctx *x, struct rag *g, const char *target,
    struct buf *out, struct wresult *res)
{
	struct buf	 one = BUF_INIT;
	const char	*p = target, *q;
	size_t		 k = 0;
	char		*chunk;
	int		 rc = 0;

	for (; rc == 0 && p != NULL; k++) {
		if (rq_stopped(x->nx_rq)) {
			res->r_status = RQ_CANCELLED;
			rc = -1;
			break;
		}
		q = strstr(p, CHUNK_BREAK);
		chunk = q != NULL ? xstrndup(p, (size_t)(q - p)) : xstrdup(p);
		p = q != NULL ? q + strlen(CHUNK_BREAK) : NULL;
		rq_phase(x->nx_rq, "%s node %zu/%zu: chunk %zu", x->nx_workflow,
		    x->nx_index + 1, x->nx_count, k + 1);
		buf_reset(&one);
		buf_adds(&one, "");
		if ((rc = rag_chunk(x, g, chunk, &one, res)) == 0) {
			buf_add(out, one.b_data, one.b_len);
			rag_remember(g, one.b_data);
		}
		free(chunk);
	}
	buf_free(&one);
	return rc;
}

static int
rag_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct rag	 g;
	char		*target;
	int		 rc;

	(void)streamed;
	if (json_object_get(x->nx_node, "ragTarget") == NULL) {
		buf_adds(out, "No rag target specified in Slow But Quality "
		    "RAG node");
		return 0;
	}
	if (json_object_get(x->nx_node, "ragType") == NULL) {
		buf_adds(out, "No rag type specified in Slow But Quality RAG "
		    "node");
		return 0;
	}
	memset(&g, 0, sizeof(g));
	if ((g.r_key = memory_key(x)) == NULL)
		return 0;		/* no discussion: "" */
	g.r_system = raw_field(x, "systemPrompt");
	g.r_prompt = raw_field(x, "prompt");
	g.r_workflow = node_raw(x, "fileMemoryWorkflowName");
	if (g.r_workflow != NULL && *g.r_workflow == '\0')
		g.r_workflow = NULL;
	target = raw_field(x, "ragTarget");
	rc = rag_load(x, &g, res);
	if (rc == 0) {
		char	*t = vars_format(x->nx_vars, target);

		rc = rag_chunks(x, &g, t, out, res);
		free(t);
	}
	free(target);
	rag_clear(&g);
	return rc;
}

const struct node_type node_slow_rag = { "SlowButQualityRAG", rag_run, false };
