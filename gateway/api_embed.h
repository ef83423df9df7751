/* api_embed.h - embeddings request bodies (OpenAI /v1/embeddings, Ollama /api/embed and /api/embeddings) turned into REQ_START frames. */
#ifndef SLUICE_API_EMBED_H
#define SLUICE_API_EMBED_H

#include <jansson.h>
#include <stdbool.h>

#include "api.h"

/* Which route asked, so which answer it gets. */
enum embed_shape {
	EMBED_OPENAI,		/* POST /v1/embeddings */
	EMBED_OLLAMA,		/* POST /api/embed */
	EMBED_OLLAMA_LEGACY,	/* POST /api/embeddings {"prompt"} */
};

/* The proto_api of a shape: API_OPENAI_EMBED or API_OLLAMA_EMBED. */
int	api_embed_api(enum embed_shape);

/* True for the Ollama shapes (errors as {"error": "..."}). */
bool	api_embed_ollama(enum embed_shape);

/*
 * Check root (a JSON object) as an embeddings request of the given
 * shape and encode its REQ_START into out: one "user" message a text,
 * in order, with lim's user and deadline. OpenAI: "input" a string or
 * a non-empty list of strings (token ids are refused), and *b64 set
 * for "encoding_format": "base64" ("float" or absent: false). Ollama
 * /api/embed: "model" required, "input" a string, a list of strings,
 * or absent ("" and absent: no text). The legacy /api/embeddings:
 * "model" required, "prompt" a string ("" or absent: no text). Other
 * members (dimensions, user, truncate, options, keep_alive) are
 * ignored. Returns 0, or -1 with *status (400, 413) and err; out is
 * then cleared.
 */
int	api_embed_build(enum embed_shape, json_t *root, const char *rqid,
	    const struct api_limits *, struct api_req *out, bool *b64,
	    int *status, char err[API_ERRLEN]);

#endif
