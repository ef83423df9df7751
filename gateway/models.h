/* models.h - the model routes' bodies: /v1/models, /api/tags, /api/ps and /api/show, each model the gateway lists in its API's shape. */
#ifndef SLUICE_MODELS_H
#define SLUICE_MODELS_H

#include <stddef.h>

#include "../common/buf.h"
#include "api.h"

struct gw;

/* Append the body of GET /v1/models: an OpenAI list of every model
 * users_models() names. */
void	models_openai(struct gw *, struct buf *out);

/* Append the body of GET /api/tags: Ollama's list of the same models,
 * with WilmerAI's placeholder size, digest and details. */
void	models_tags(struct gw *, struct buf *out);

/* Append the body of GET /api/ps: the same models as Ollama's running
 * models. A workflow is never unloaded: expires_at is far ahead. */
void	models_ps(struct gw *, struct buf *out);

/* POST /api/show: request body [body, len) ({"model": name}, or the
 * older {"name": name}). Returns 200 with the answer appended to out,
 * or 400 (malformed body, no model) or 404 (a name the gateway does not
 * list, with or without ":latest") with err set to the message. */
int	models_show(struct gw *, const char *body, size_t len,
	    struct buf *out, char err[API_ERRLEN]);

#endif
