/* embed.h - WilmerAI's embeddings client (A9.1, A9.2): an endpoint of type openAIEmbeddings or ollamaEmbeddings, texts in, vectors out. */
#ifndef SLUICE_EMBED_H
#define SLUICE_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/conf.h"
#include "../rq.h"

/* An embeddings endpoint and its api type. */
struct embed_target {
	struct conf_endpoint	*et_ep;
	struct conf_apitype	*et_at;
};

/* Load endpoint name from user u's endpoint folder (u may be NULL:
 * Endpoints/ itself) and its api type, and require an embeddings type.
 * Returns 0 with *out filled (free with embed_target_free), or -1 with
 * err set: the loader's message, or WilmerAI's "Endpoint '...' has API
 * type '...', which is not an embeddings type. ..." */
int	embed_target_load(const char *confdir, const struct conf_user *u,
	    const char *name, struct embed_target *out, char err[CONF_ERRLEN]);

/* Free what embed_target_load loaded; t itself stays. NULL-safe. */
void	embed_target_free(struct embed_target *t);

/* The answer: one vector per text, in the texts' order. */
struct embed_vecs {
	double		**ev_v;		/* ev_n vectors of ev_dim[i] floats */
	size_t		 *ev_dim;
	size_t		  ev_n;
	int64_t		  ev_prompt_tokens;	/* the backend's usage, -1 */
	char		 *ev_model;	/* the model it names, or NULL */
};

/*
 * One embeddings request with all n texts (A9.2): POST {endpoint}/v1/
 * embeddings or /api/embed, {"input": [...], "model": ...} (model left
 * out with dontIncludeModel), Authorization: Bearer {apiKey}; one
 * attempt, the user's connect timeout (u may be NULL: 30 s), 120 s
 * without a byte ends it; cancellable through rq. n == 0 answers no
 * vectors without a request. Returns 0 with out filled (free with
 * embed_vecs_free), or -1 with res filled: RQ_CANCELLED, or RQ_ERROR
 * with a message naming the endpoint, r_http 502 (backend error or a
 * malformed answer), 504 (timeout) or 503 (cannot connect), and
 * r_upstream the backend's status when it answered with an error.
 */
int	embed_texts(struct rq *rq, const struct conf_user *u,
	    const struct embed_target *t, const char *const *texts, size_t n,
	    struct embed_vecs *out, struct wresult *res);

/* Free the vectors; v itself stays, zeroed. NULL-safe. */
void	embed_vecs_free(struct embed_vecs *v);

#endif
