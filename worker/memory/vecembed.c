/* vecembed.c - embeddings of vector memories (A9.3-A9.5): kept per model beside the facts, written after each chunk with a backlog, ranked by cosine for semantic and hybrid search. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../../common/pystr.h"
#include "../core/node.h"
#include "../llm/embed.h"
#include "../store/store_stmt.h"
#include "memory.h"
#include "vecembed.h"
#include "vecmath.h"
#include "vecmem_text.h"

/* ---- the store ------------------------------------------------------ */

int
vecembed_put(struct store *s, int64_t id, const char *model, const double *v,
    size_t dim)
{
	unsigned char	*blob = vecmath_blob(v, dim);
	int		 r;

	r = store_exec(s, "INSERT INTO memory_embeddings (memory_id, model, "
	    "dim, vector) VALUES (?, ?, ?, ?) ON CONFLICT (memory_id, model) "
	    "DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
	    "itib", id, model, (int64_t)dim, blob, dim * sizeof(float));
	free(blob);
	return r == -1 ? -1 : 0;
}

static bool
has_id(const int64_t *v, size_t n, int64_t id)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

int
vecembed_backlog(struct store *s, const char *key, const char *model,
    long limit, const int64_t *skip, size_t nskip, int64_t **ids,
    char ***texts, size_t *n)
{
	struct store_q	*st;
	const char	*t;
	int64_t		 id;
	int		 r;

	if ((st = store_stmt(s, "SELECT id, memory_text FROM vector_memories "
	    "WHERE discussion = ? AND id NOT IN (SELECT memory_id FROM "
	    "memory_embeddings WHERE model = ?) ORDER BY id ASC LIMIT ?")) ==
	    NULL || store_bind(s, st, "tti", key, model, (int64_t)limit) == -1)
		return -1;
	while ((r = store_step(s, st)) == 1) {
		id = store_col_int(st, 0);
		if (has_id(skip, nskip, id))
			continue;
		t = store_col_text(st, 1);
		*ids = xreallocarray(*ids, *n + 1, sizeof(**ids));
		*texts = xreallocarray(*texts, *n + 2, sizeof(**texts));
		(*ids)[*n] = id;
		(*texts)[(*n)++] = xstrdup(t != NULL ? t : "");
		(*texts)[*n] = NULL;
	}
	return r;
}

/* Every embedding of key's memories by model, in the order they were
 * written (WilmerAI reads them without ORDER BY). 0 or -1. */
static int
load_all(struct store *s, const char *key, const char *model,
    struct vecmath_item **items, size_t *n)
{
	struct store_q	*st;
	const void	*blob;
	size_t		 dim, len;
	double		*v;
	int		 r;

	if ((st = store_stmt(s, "SELECT e.memory_id, e.vector FROM "
	    "memory_embeddings AS e JOIN vector_memories AS m ON m.id = "
	    "e.memory_id WHERE m.discussion = ? AND e.model = ? ORDER BY "
	    "e.rowid")) == NULL || store_bind(s, st, "tt", key, model) == -1)
		return -1;
	while ((r = store_step(s, st)) == 1) {
		blob = store_col_blob(st, 1, &len);
		if ((v = vecmath_unblob(blob, len, &dim)) == NULL)
			continue;	/* an empty or torn blob scores nothing */
		*items = xreallocarray(*items, *n + 1, sizeof(**items));
		(*items)[(*n)++] = (struct vecmath_item){
		    store_col_int(st, 0), v, dim, 0 };
	}
	return r;
}

static void
items_free(struct vecmath_item *items, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(items[i].vi_v);
	free(items);
}

/* ---- the write path (A9.4) ------------------------------------------ */

/* embeddingBackfillBatchSize: a JSON integer, default VECEMBED_BATCH;
 * anything else (true, "5", 2.5) reads as 0, with a warning. */
static long
batch_size(struct node_ctx *x, const struct memory_settings *ms)
{
	json_t	*v = json_object_get(ms->ms_file.jf_root,
		    "embeddingBackfillBatchSize");

	if (v == NULL)
		return VECEMBED_BATCH;
	if (json_is_integer(v))
		return (long)json_integer_value(v);
	log_warnx("[rq %s] %s: embeddingBackfillBatchSize must be an integer; "
	    "no older memories are embedded", x->nx_rq->rq_id,
	    ms->ms_file.jf_path);
	return 0;
}

/* Embed texts[0..n) and keep each vector as ids[i]'s. */
static int
embed_and_keep(struct node_ctx *x, const struct embed_target *t,
    const char *key, const int64_t *ids, char *const *texts, size_t n,
    struct wresult *res)
{
	struct embed_vecs	 v;
	struct wresult		 er;
	struct store		*s;
	size_t			 i;

	memset(&er, 0, sizeof(er));
	if (embed_texts(x->nx_rq, x->nx_user, t, (const char *const *)texts, n,
	    &v, &er) == -1) {
		if (er.r_status == RQ_CANCELLED) {
			res->r_status = RQ_CANCELLED;
			return -1;
		}
		log_warnx("[rq %s] discussion '%s': no embeddings for %zu "
		    "memories: %s", x->nx_rq->rq_id, key, n,
		    log_text(er.r_message));
		return 0;
	}
	if ((s = memory_store(x, &er)) != NULL)
		for (i = 0; i < v.ev_n; i++)
			if (vecembed_put(s, ids[i], t->et_ep->e_model, v.ev_v[i],
			    v.ev_dim[i]) == -1) {
				log_warnx("[rq %s] discussion '%s': %s",
				    x->nx_rq->rq_id, key, store_err(s));
				break;
			}
	log_info("[rq %s] discussion '%s': %zu memories embedded by '%s'",
	    x->nx_rq->rq_id, key, v.ev_n, t->et_ep->e_name);
	embed_vecs_free(&v);
	return 0;
}

int
vecembed_after_chunk(struct node_ctx *x, const struct memory_settings *ms,
    const char *key, const int64_t *ids, char *const *texts, size_t n,
    struct wresult *res)
{
	const char		*name = memory_setting_str(ms,
				    "embeddingEndpointName", NULL);
	struct embed_target	 t;
	struct wresult		 er;
	struct store		*s;
	char			 err[CONF_ERRLEN], **all = NULL;
	int64_t			*all_ids = NULL;
	long			 batch;
	size_t			 k, m = 0;
	int			 rc = 0;

	if (name == NULL || *name == '\0' || n == 0)
		return 0;
	if (embed_target_load(x->nx_confdir, x->nx_user, name, &t, err) == -1) {
		log_warnx("[rq %s] discussion '%s': embeddingEndpointName: %s",
		    x->nx_rq->rq_id, key, err);
		return 0;
	}
	for (k = 0; k < n; k++) {
		all_ids = xreallocarray(all_ids, m + 1, sizeof(*all_ids));
		all = xreallocarray(all, m + 2, sizeof(*all));
		all_ids[m] = ids[k];
		all[m++] = xstrdup(texts[k]);
		all[m] = NULL;
	}
	memset(&er, 0, sizeof(er));
	if ((batch = batch_size(x, ms)) > 0 && (s = memory_store(x, &er)) !=
	    NULL && vecembed_backlog(s, key, t.et_ep->e_model, batch, ids, n,
	    &all_ids, &all, &m) == -1)
		log_warnx("[rq %s] discussion '%s': %s", x->nx_rq->rq_id, key,
		    store_err(s));
	rc = embed_and_keep(x, &t, key, all_ids, all, m, res);
	vecmem_strv_free(all);
	free(all_ids);
	embed_target_free(&t);
	return rc;
}

/* ---- semantic ranking (A9.5) ---------------------------------------- */


/* Rank the stored vectors against the query's vector v. */
static int
rank_stored(struct node_ctx *x, const struct embed_target *t,
    const char *key, const struct embed_vecs *v, long limit, int64_t **ids,
    size_t *n, struct wresult *res)
{
	struct vecmath_item	*items = NULL;
	struct store		*s;
	size_t			 m = 0, keep, i;

	if ((s = memory_store(x, res)) == NULL)
		return 0;
	if (load_all(s, key, t->et_ep->e_model, &items, &m) == -1) {
		log_warnx("[rq %s] discussion '%s': %s", x->nx_rq->rq_id, key,
		    store_err(s));
		items_free(items, m);
		return 0;
	}
	keep = vecmath_rank(v->ev_v[0], v->ev_dim[0], items, m, limit);
	*ids = xcalloc(keep + 1, sizeof(**ids));
	for (i = 0; i < keep; i++)
		(*ids)[i] = items[i].vi_id;
	*n = keep;
	items_free(items, m);
	return 1;
}

int
vecembed_rank(struct node_ctx *x, const char *endpoint, const char *key,
    const char *query, long limit, int64_t **ids, size_t *n,
    struct wresult *res)
{
	struct embed_target	 t;
	struct embed_vecs	 v;
	struct wresult		 er;
	char			 err[CONF_ERRLEN];
	int			 rc;

	*ids = NULL;
	*n = 0;
	if (pystr_blank(query))
		return 1;
	if (embed_target_load(x->nx_confdir, x->nx_user, endpoint, &t,
	    err) == -1) {
		log_warnx("[rq %s] VectorMemorySearch: %s", x->nx_rq->rq_id,
		    err);
		return 0;
	}
	memset(&er, 0, sizeof(er));
	if (embed_texts(x->nx_rq, x->nx_user, &t, &query, 1, &v, &er) == -1) {
		embed_target_free(&t);
		if (er.r_status == RQ_CANCELLED) {
			res->r_status = RQ_CANCELLED;
			return -1;
		}
		log_warnx("[rq %s] VectorMemorySearch: no embedding for the "
		    "query: %s", x->nx_rq->rq_id, log_text(er.r_message));
		return 0;
	}
	rc = rank_stored(x, &t, key, &v, limit, ids, n, &er);
	embed_vecs_free(&v);
	embed_target_free(&t);
	return rc;
}
