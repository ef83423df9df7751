/* resp_embed.h - the embeddings routes' answers, shaped from the worker's neutral JSON. */
#ifndef SLUICE_RESP_EMBED_H
#define SLUICE_RESP_EMBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "api_embed.h"

#define RESP_EMBED_ERRLEN	128

/* How to answer: the route, the model to echo (the client's field;
 * "" echoes the model the worker names), OpenAI's base64 encoding,
 * and the time the request took (Ollama's total_duration). */
struct resp_embed_ctx {
	enum embed_shape	 re_shape;
	const char		*re_model;
	bool			 re_b64;
	uint64_t		 re_total_ns;
};

/*
 * Append the client's 200 body to out, from the worker's answer text
 * {"model", "prompt_tokens", "embeddings": [[...], ...]} (proto.h,
 * API_OPENAI_EMBED). OpenAI: {"object": "list", "data": [{"object":
 * "embedding", "index", "embedding"}], "model", "usage"}, each vector a
 * list of numbers or, with re_b64, its little-endian float32 bytes in
 * standard base64. Ollama /api/embed: {"model", "embeddings",
 * "total_duration", "load_duration", "prompt_eval_count"}; the legacy
 * /api/embeddings: {"embedding"} (the first vector, [] without one).
 * Numbers are written shortest-round-trip. Returns 0, or -1 with err
 * when the text is not that JSON (out may hold part of an answer).
 */
int	resp_embed(struct buf *out, const struct resp_embed_ctx *,
	    const char *text, size_t len, char err[RESP_EMBED_ERRLEN]);

#endif
