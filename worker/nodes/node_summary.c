/* node_summary.c - the rolling chat summary: chatSummarySummarizer folds new memories into it, WriteCurrentSummaryToFileAndReturnIt stores a given one. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../core/node.h"
#include "../memory/mem_read.h"
#include "../memory/memory.h"

#define NO_SUMMARY	"There is not yet a summary file"
#define LATEST_SEP	"\n------------\n"

/* What a summarizer works on: the ledger, the summary and where the
 * memories it does not hold yet begin. */
struct fold {
	const char		*f_key;
	struct store		*f_store;
	struct mem_blocks	 f_mem;
	char			*f_summary;	/* or NO_SUMMARY */
	size_t			 f_first;	/* first unsummarised memory */
	size_t			 f_left;	/* how many */
};

static void
fold_free(struct fold *f)
{
	mem_blocks_free(&f->f_mem);
	free(f->f_summary);
}

/* Read the ledger and summary; -1 with res filled. */
static int
fold_load(struct node_ctx *x, struct fold *f, struct wresult *res)
{
	char	*hash = NULL;
	int	 r;

	if ((f->f_store = memory_store(x, res)) == NULL)
		return -1;
	if (memstore_read(f->f_store, f->f_key, &f->f_mem, NULL) == -1 ||
	    (r = memstore_summary(f->f_store, f->f_key, &f->f_summary,
	    &hash)) == -1)
		return node_fail(x, res, 500, "%s", store_err(f->f_store));
	if (r == 0)
		f->f_summary = xstrdup(NO_SUMMARY);
	f->f_left = memread_unsummarised(&f->f_mem, hash, &f->f_first);
	free(hash);
	return 0;
}

/* Store summary as made up to the memory with hash; it is the current
 * one from now on. */
static int
fold_save(struct node_ctx *x, struct fold *f, const char *summary,
    const char *hash, struct wresult *res)
{
	if (memstore_summary_put(f->f_store, f->f_key, summary, hash) == -1)
		return node_fail(x, res, 500, "%s", store_err(f->f_store));
	free(f->f_summary);
	f->f_summary = xstrdup(summary);
	return 0;
}

/* One LLM call over the next n memories: [CHAT_SUMMARY] and
 * [LATEST_MEMORIES] in the node's prompts. */
static int
fold_batch(struct node_ctx *x, struct fold *f, size_t n, struct buf *out,
    struct wresult *res)
{
	const char	*s0 = node_raw(x, "systemPrompt"), *p0 = node_raw(x,
			    "prompt");
	char		*latest = memread_join(&f->f_mem, f->f_first, n,
			    LATEST_SEP), *sys, *pr;
	int		 rc;

	sys = memory_fill(s0 != NULL ? s0 : "", "[CHAT_SUMMARY]", f->f_summary,
	    "[LATEST_MEMORIES]", latest, (char *)NULL);
	pr = memory_fill(p0 != NULL ? p0 : "", "[CHAT_SUMMARY]", f->f_summary,
	    "[LATEST_MEMORIES]", latest, (char *)NULL);
	buf_reset(out);
	rc = memory_llm_node(x, sys, pr, out, res);
	if (rc == 0)
		rc = fold_save(x, f, out->b_data != NULL ? out->b_data : "",
		    f->f_mem.v[f->f_first + n - 1].mb_hash, res);
	f->f_first += n;
	f->f_left -= n;
	free(latest);
	free(sys);
	free(pr);
	return rc;
}

static bool
has_placeholders(struct node_ctx *x)
{
	static const char *const keys[] = { "systemPrompt", "prompt" };
	const char	*v;
	size_t		 i;

	for (i = 0; i < 2; i++)
		if ((v = node_raw(x, keys[i])) != NULL &&
		    (strstr(v, "[CHAT_SUMMARY]") != NULL ||
		    strstr(v, "[LATEST_MEMORIES]") != NULL))
			return true;
	return false;
}

/* Spec 7.4, rolling summary: batches of loopIfMemoriesExceed (3); the
 * last, smaller batch only once it has minMemoriesPerSummary (3). A
 * node whose prompts have neither placeholder is one plain call whose
 * answer becomes the summary. */
static int
fold(struct node_ctx *x, struct fold *f, struct buf *out, struct wresult *res)
{
	long	 loop = node_long(x, "loopIfMemoriesExceed", 3);
	long	 min = node_long(x, "minMemoriesPerSummary", 3);

	if (f->f_left == 0) {
		buf_adds(out, f->f_summary);
		return 0;
	}
	if (!has_placeholders(x)) {
		if (memory_llm_node(x, node_raw(x, "systemPrompt") != NULL ?
		    node_raw(x, "systemPrompt") : "", node_raw(x, "prompt") !=
		    NULL ? node_raw(x, "prompt") : "", out, res) == -1)
			return -1;
		return fold_save(x, f, out->b_data != NULL ? out->b_data : "",
		    f->f_mem.v[f->f_mem.n - 1].mb_hash, res);
	}
	if (loop < 1)
		loop = 1;
	while (f->f_left > (size_t)loop)
		if (fold_batch(x, f, (size_t)loop, out, res) == -1)
			return -1;
	if (f->f_left > 0 && (long)f->f_left >= min)
		return fold_batch(x, f, f->f_left, out, res);
	buf_reset(out);
	buf_adds(out, f->f_summary);
	return 0;
}

static int
summarizer_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct fold	 f;
	char		*key = memory_key(x);
	int		 rc;

	if (key == NULL) {
		buf_adds(out, NO_SUMMARY);
		return 0;
	}
	memset(&f, 0, sizeof(f));
	f.f_key = key;
	rq_phase(x->nx_rq, "%s node %zu/%zu: chat summary", x->nx_workflow,
	    x->nx_index + 1, x->nx_count);
	if ((rc = fold_load(x, &f, res)) == 0)
		rc = fold(x, &f, out, res);
	fold_free(&f);
	free(key);
	return rc;
}

/* input [v] becomes the summary, as made up to the latest memory. */
static int
write_summary_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct fold	 f;
	char		*key, *summary;
	int		 rc = 0;

	if (json_object_get(x->nx_node, "input") == NULL)
		return node_fail(x, res, 500, "No 'input' found in config for "
		    "saving summary.");
	summary = node_str(x, "input");
	memset(&f, 0, sizeof(f));
	if ((key = memory_key(x)) != NULL) {
		f.f_key = key;
		if ((rc = fold_load(x, &f, res)) == 0 && f.f_mem.n == 0)
			rc = node_fail(x, res, 500, "Cannot save summary "
			    "without a last hash and no memory chunks exist.");
		else if (rc == 0)
			rc = fold_save(x, &f, summary,
			    f.f_mem.v[f.f_mem.n - 1].mb_hash, res);
	}
	if (rc == 0)
		buf_adds(out, summary);
	fold_free(&f);
	free(summary);
	free(key);
	return rc;
}

const struct node_type node_summarizer = { "chatSummarySummarizer",
    summarizer_run, false };
const struct node_type node_write_summary = {
    "WriteCurrentSummaryToFileAndReturnIt", write_summary_run, false };
