/* embed_job.h - the embeddings routes' job: the request's texts through its user's embeddingEndpointName, the vectors back as one JSON text. */
#ifndef SLUICE_EMBED_JOB_H
#define SLUICE_EMBED_JOB_H

#include "../../proto/proto.h"
#include "../rq.h"

/*
 * Run an API_OPENAI_EMBED or API_OLLAMA_EMBED request: load its user
 * (rs->user, else default_user) as a workflow request does, embed each
 * message's content with the user's embeddingEndpointName, and emit
 * {"model", "prompt_tokens", "embeddings": [[...], ...]} (proto.h) in
 * REQ_CHUNKs, vectors in the messages' order, numbers shortest-round-
 * trip. prompt_tokens is the backend's count, else WilmerAI's estimate
 * of the texts. res (zeroed by the caller, tokens -1) gets the
 * outcome: RQ_OK; RQ_CANCELLED; RQ_ERROR 404 when the user names no
 * embeddings endpoint, 500 when the user or the endpoint cannot be
 * loaded (or is not of an embeddings type), else embed_texts' status
 * and message.
 */
void	embed_job_run(struct rq *, const struct proto_req_start *rs,
	    const char *default_user, struct wresult *res);

#endif
