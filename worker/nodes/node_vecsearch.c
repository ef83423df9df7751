/* node_vecsearch.c - VectorMemorySearch: the discussion's vector memories found by keywords (BM25 with column weights, recency, entity expansion), by embeddings, or both fused (A9.5). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../memory/memory.h"
#include "../memory/vecembed.h"
#include "../memory/vecmath.h"
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

enum mode { KEYWORD, SEMANTIC, HYBRID };

/* searchMode, case-insensitive; semantic and hybrid need an
 * embeddingEndpointName (A9.5 step 1). */
static enum mode
mode_of(struct node_ctx *x, const char *endpoint)
{
	const char	*m = node_raw(x, "searchMode");
	enum mode	 r;

	if (m == NULL || strcasecmp(m, "keyword") == 0)
		return KEYWORD;
	if (strcasecmp(m, "semantic") == 0)
		r = SEMANTIC;
	else if (strcasecmp(m, "hybrid") == 0)
		r = HYBRID;
	else {
		log_warnx("[rq %s] workflow '%s' node %zu: unknown searchMode "
		    "'%s'; searching by keywords", x->nx_rq->rq_id,
		    x->nx_workflow, x->nx_index + 1, m);
		return KEYWORD;
	}
	if (endpoint != NULL && *endpoint != '\0')
		return r;
	log_warnx("[rq %s] workflow '%s' node %zu: searchMode '%s' needs an "
	    "embeddingEndpointName; searching by keywords", x->nx_rq->rq_id,
	    x->nx_workflow, x->nx_index + 1, m);
	return KEYWORD;
}

/* The semantic query: semanticQuery, else the keywords with every ';'
 * made a space (A9.5 step 3). Caller frees. */
static char *
query_of(struct node_ctx *x, const char *kw)
{
	char	*q = node_str(x, "semanticQuery"), *p;

	if (q != NULL && *q != '\0')
		return q;
	free(q);
	q = xstrdup(kw);
	for (p = q; *p != '\0'; p++)
		if (*p == ';')
			*p = ' ';
	return q;
}

/* Reciprocal Rank Fusion of the keyword rows and the ranked ids, cut to
 * the limit; the rows of ids only the ranking found are read by id. */
static int
fuse(struct store *s, const char *key, long limit, struct vecmem_rows *kw,
    const int64_t *ranked, size_t nr)
{
	struct vecmem_rows	 out = { NULL, 0 };
	int64_t			*kid = xcalloc(kw->n + 1, sizeof(*kid)), *ids;
	const int64_t		*lists[2] = { kid, ranked };
	size_t			 lens[2] = { kw->n, nr }, n, i, k;
	int			 rc = 0;

	for (i = 0; i < kw->n; i++)
		kid[i] = kw->v[i].vr_id;
	ids = vecmath_rrf(lists, lens, 2, &n);
	if (limit >= 0 && (size_t)limit < n)
		n = (size_t)limit;
	for (i = 0; i < n && rc == 0; i++) {
		for (k = 0; k < kw->n && kid[k] != ids[i]; k++)
			;
		if (k < kw->n) {
			out.v = xreallocarray(out.v, out.n + 1, sizeof(*out.v));
			out.v[out.n++] = kw->v[k];
			kw->v[k] = (struct vecmem_row){ 0, NULL, NULL, NULL };
		} else
			rc = vecmem_by_ids(s, key, &ids[i], 1, &out);
	}
	vecmem_rows_free(kw);
	*kw = out;
	free(ids);
	free(kid);
	return rc;
}

/* A9.5 steps 2-4: the keyword rows, the semantic ranking, merged. */
static int
find(struct node_ctx *x, struct store *s, const char *key,
    const struct vecmem_search *q, enum mode m, const char *endpoint,
    struct vecmem_rows *rows, struct wresult *res)
{
	struct vecmem_search	 kq = *q;
	int64_t			*ranked = NULL;
	size_t			 nr = 0;
	char			*query;
	int			 r = 0, rc = 0;

	kq.vs_expand = false;
	if (m != KEYWORD) {
		query = query_of(x, q->vs_keywords);
		r = vecembed_rank(x, endpoint, key, query, q->vs_limit,
		    &ranked, &nr, res);
		free(query);
		if (r == -1)
			return -1;
	}
	if (m != SEMANTIC || nr == 0)
		rc = vecmem_search(s, key, &kq, rows);
	if (rc == 0 && nr > 0 && rows->n > 0)
		rc = fuse(s, key, q->vs_limit, rows, ranked, nr);
	else if (rc == 0 && nr > 0)
		rc = vecmem_by_ids(s, key, ranked, q->vs_limit >= 0 &&
		    (size_t)q->vs_limit < nr ? (size_t)q->vs_limit : nr, rows);
	if (rc == 0)
		rc = vecmem_expand(s, key, q, rows);
	free(ranked);
	return rc == -1 ? node_fail(x, res, 500, "%s", store_err(s)) : 0;
}

static int
search(struct node_ctx *x, const char *key, const struct vecmem_search *q,
    struct buf *out, struct wresult *res)
{
	struct vecmem_rows	 rows = { NULL, 0 };
	struct store		*s;
	const char		*ep = node_raw(x, "embeddingEndpointName");
	char			*text;

	if ((s = memory_store(x, res)) == NULL)
		return -1;
	if (find(x, s, key, q, mode_of(x, ep), ep, &rows, res) == -1) {
		vecmem_rows_free(&rows);
		return -1;
	}
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
	kw = node_str(x, "input");
	memset(&q, 0, sizeof(q));
	q.vs_keywords = kw;
	q.vs_limit = node_long(x, "limit", 5);
	q.vs_weights = weights_of(x, w) ? w : NULL;
	q.vs_recency = node_bool(x, "useRecencyScoring", false);
	q.vs_now = (int64_t)(clock_wall_ms() / 1000);
	q.vs_expand = node_bool(x, "useEntityExpansion", false);
	log_debug("[rq %s] searching the vector memories of '%s' for '%s'",
	    x->nx_rq->rq_id, key, log_text(kw));
	rc = search(x, key, &q, out, res);
	free(kw);
	free(key);
	return rc;
}

const struct node_type node_vecsearch = { "VectorMemorySearch",
    vecsearch_run, false };
