/* gen_input.h - WilmerAI's gen_input: the generation parameters a backend request carries. */
#ifndef SLUICE_GEN_INPUT_H
#define SLUICE_GEN_INPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "adapter.h"

/* WilmerAI's set_gen_input: nc's resolved preset as written, then the
 * api type's stream property (always), its context-size property (when
 * the endpoint sets maxContextTokenSize) and its max-new-tokens property
 * (node maxResponseSizeInTokens), each of the last two unless the
 * preset set it to null; then conf_gen_normalize (nulls dropped,
 * "__wilmer_null__" sent as null). Keys keep their first insertion
 * order, as a Python dict does. A new object (caller owns it). */
json_t		*gen_input_new(const struct node_call *nc);

/* root.update(gen_input): the gen_input's keys set on root (an object
 * the caller owns), replacing values in place, new keys at the end. */
void		 gen_input_apply(json_t *root, const struct node_call *nc);

/* Ask an OpenAI-compatible server to end a stream with its usage: sets
 * "stream_options": {"include_usage": true} on root (an object the
 * caller owns) when nc streams and its api type's streamIncludeUsage
 * is on, unless the preset set stream_options itself. WilmerAI never
 * sends it (docs/migrating-from-wilmer.md). */
void		 gen_input_stream_usage(json_t *root, const struct node_call *nc);

#endif
