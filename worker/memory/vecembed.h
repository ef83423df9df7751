/* vecembed.h - embeddings of vector memories (A9.3-A9.5): kept per model beside the facts, written after each chunk with a backlog, ranked by cosine for semantic and hybrid search. */
#ifndef SLUICE_VECEMBED_H
#define SLUICE_VECEMBED_H

#include <stddef.h>
#include <stdint.h>

#include "../store/store.h"

struct node_ctx;
struct memory_settings;
struct wresult;

#define VECEMBED_BATCH	20	/* embeddingBackfillBatchSize */

/* Keep v (dim floats, as float32) as memory id's embedding by model,
 * replacing one it had. 0 or -1 (store_err). */
int	vecembed_put(struct store *, int64_t id, const char *model,
	    const double *v, size_t dim);

/* Up to limit memories of discussion key without an embedding by
 * model, oldest first, leaving out the nskip ids of skip: their ids
 * and texts appended to ids/texts (grown; the texts the caller frees),
 * their number added to *n. 0 or -1. */
int	vecembed_backlog(struct store *, const char *key, const char *model,
	    long limit, const int64_t *skip, size_t nskip, int64_t **ids,
	    char ***texts, size_t *n);

/*
 * A9.4, after a chunk's n facts (ids, texts) are stored and its hash
 * logged: when the settings name an embeddingEndpointName, one request
 * embeds them and up to embeddingBackfillBatchSize older memories that
 * have no embedding by that endpoint's model, and the vectors are
 * kept. Best effort: every failure is logged and swallowed. Returns 0,
 * or -1 only when the request was cancelled (res says so).
 */
int	vecembed_after_chunk(struct node_ctx *, const struct memory_settings *,
	    const char *key, const int64_t *ids, char *const *texts,
	    size_t n, struct wresult *res);

/*
 * A9.5 step 3: the memories of key ranked by the cosine similarity of
 * their embeddings (by endpoint's model) to that of query, the best
 * limit (< 0: all) ids into *ids (caller frees) and their number into
 * *n. Returns 1 ranked (none when query is blank or nothing is
 * stored), 0 when it failed (logged: the caller falls back to keyword
 * search), -1 when the request was cancelled (res says so).
 */
int	vecembed_rank(struct node_ctx *, const char *endpoint, const char *key,
	    const char *query, long limit, int64_t **ids, size_t *n,
	    struct wresult *res);

#endif
