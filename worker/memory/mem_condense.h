/* mem_condense.h - WilmerAI's condensation: the oldest new memories folded into one by an LLM call. */
#ifndef SLUICE_MEM_CONDENSE_H
#define SLUICE_MEM_CONDENSE_H

#include "memgen.h"

/* WilmerAI's condensation of older memories (mem_condense.c); does
 * nothing unless condenseMemories and memoriesBeforeCondensation are
 * set and enough memories are new since the tracker. The lock held.
 * Returns 0, or -1 with res filled. */
int	memory_condense(struct node_ctx *, const struct memory_settings *,
	    const char *key, struct wresult *res);

#endif
