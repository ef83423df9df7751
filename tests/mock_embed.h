/* mock_embed.h - mock-llm's embeddings routes: /v1/embeddings and /api/embed answer a bag-of-words vector per text. */
#ifndef SLUICE_MOCK_EMBED_H
#define SLUICE_MOCK_EMBED_H

#include <stdbool.h>
#include <stdlib.h>

#include <jansson.h>

#include "../common/buf.h"

#define MOCK_EMBED_DIM	64

/* True for the two embeddings paths. */
bool	mock_embed_path(const char *path);

/* The answer to a POST of body (NULL when it was not JSON) on path,
 * appended to out; returns its HTTP status. */
int	mock_embed_answer(const char *path, const json_t *body,
	    struct buf *out);

/* The vector the mock gives text s (tests compute expectations with
 * it). */
void	mock_embed_vector(const char *s, double v[MOCK_EMBED_DIM]);

#endif
