/* node_vecsearch.c - VectorMemorySearch: the discussion's vector memories found by keywords (BM25 with column weights, recency, entity expansion). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../memory/memory.h"
#include "../memory/vecmem.h"
#include "../memory/vecmem_text.h"

#define NO_ID		"Cannot perform VectorMemorySearch without a " \
			"discussionId."
#define NOTHING		"No relevant memories found in the vector " \
			"database for the given keywords."

/* bm25Weights: exactly VECMEM_NWEIGHTS numbers, else ignored (logged). */
static bool
weights_of(struct node_ctx *x, double w[VECMEM_NWEIGHTS])
{
	json_t	*a = json_object_get(x->nx_node, "bm25Weights"), *v;
	size_t	 i;

	if (a == NULL || json_is_null(a))
		return false;
	for (i = 0; json_is_array(a) && json_array_size(a) ==
	    VECMEM_NWEIGHTS && i < VECMEM_NWEIGHTS; i++) {
		if (!json_is_number(v = json_array_get(a, i)))
			break;
		w[i] = json_number_value(v);
	}
	if (i == VECMEM_NWEIGHTS)
		return true;
	log_warnx("[rq %s] workflow '%s' node %zu: bm25Weights must be a list "
	    "of exactly 5 numbers (title, summary, entities, key_phrases, "
	    "memory text); ignored", x->nx_rq->rq_id, x->nx_workflow,
	    x->nx_index + 1);
	return false;
}

/* Sluice has no embeddings: semantic and hybrid search by keywords, as
 * WilmerAI does when its embeddings are unavailable. */
static void
check_mode(struct node_ctx *x)
{
	const char	*m = node_raw(x, "searchMode");

	if (m == NULL || strcasecmp(m, "keyword") == 0)
		return;
	if (strcasecmp(m, "semantic") == 0 || strcasecmp(m, "hybrid") == 0)
		log_warnx("[rq %s] workflow '%s' node %zu: searchMode '%s' "
		    "needs embeddings, which Sluice does not store yet; "
		    "searching by keywords", x->nx_rq->rq_id,
		    x->nx_workflow, x->nx_index + 1, m);
	else
		log_warnx("[rq %s] workflow '%s' node %zu: unknown searchMode "
		    "'%s'; searching by keywords", x->nx_rq->rq_id,
		    x->nx_workflow, x->nx_index + 1, m);
}

static int
search(struct node_ctx *x, const char *key, const struct vecmem_search *q,
    struct buf *out, struct wresult *res)
{
	struct vecmem_rows	 rows = { NULL, 0 };
	struct store		*s;
	char			*text;

	if ((s = memory_store(x, res)) == NULL)
		return -1;
	if (vecmem_search(s, key, q, &rows) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	if (rows.n == 0)
		buf_adds(out, NOTHING);
	else {
		text = vecmem_format(&rows, node_bool(x, "includeDates",
		    false));
		buf_adds(out, text);
		free(text);
	}
	vecmem_rows_free(&rows);
	return 0;
}

static int
vecsearch_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct vecmem_search	 q;
	double			 w[VECMEM_NWEIGHTS];
	char			*key = memory_key(x), *kw;
	int			 rc;

	if (key == NULL) {
		buf_adds(out, NO_ID);
		return 0;
	}
	check_mode(x);
	kw = node_str(x, "input");
	memset(&q, 0, sizeof(q));
	q.vs_keywords = kw;
	q.vs_limit = node_long(x, "limit", 5);
	q.vs_weights = weights_of(x, w) ? w : NULL;
	q.vs_recency = node_bool(x, "useRecencyScoring", false);
	q.vs_now = (int64_t)(clock_wall_ms() / 1000);
	q.vs_expand = node_bool(x, "useEntityExpansion", false);
	log_debug("[rq %s] searching the vector memories of '%s' for '%s'",
	    x->nx_rq->rq_id, key, kw);
	rc = search(x, key, &q, out, res);
	free(kw);
	free(key);
	return rc;
}

const struct node_type node_vecsearch = { "VectorMemorySearch",
    vecsearch_run, false };
