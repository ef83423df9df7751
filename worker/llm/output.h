/* output.h - what a call's text becomes: the cleaner, the node's output, the client's stream, the tool calls found in it. */
#ifndef SLUICE_OUTPUT_H
#define SLUICE_OUTPUT_H

#include "adapter.h"

struct cache_entry;

/* Hand a token to the node output (and to the client when streaming),
 * through the call's cleaner when it has one. */
void	output_token(struct call_state *, const char *p, size_t n);

/* The end of the output: what the cleaner still held, then the tool
 * calls it found, numbered after the backend's own. */
void	output_finish(struct call_state *);

/* A response-cache hit, as if the backend had answered it: its text
 * through the cleaner (to the client when streaming), its tool calls,
 * finish and counts. */
void	output_replay(struct call_state *, const struct cache_entry *e);

#endif
