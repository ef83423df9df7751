/* mem_vector.h - QualityMemory's vector path: new messages after the logged chunk hashes, chunked, turned into facts by an LLM or a workflow, stored one chunk per transaction. */
#ifndef SLUICE_MEM_VECTOR_H
#define SLUICE_MEM_VECTOR_H

#include "vecmem.h"

/* WilmerAI's handle_discussion_id_flow, vector branch: the non-system
 * messages but the last lookbackStartTurn are eligible; those after the
 * newest of the last VECMEM_HISTORY logged chunk hashes are new; when
 * their estimate reaches vectorMemoryChunkEstimatedTokenSize (scaled by
 * the estimation level) or they are vectorMemoryMaxMessagesBetweenChunks
 * or more, each chunk of them goes to the LLM (or the
 * vectorMemoryWorkflowName workflow) and the facts it returns are stored
 * with the chunk's hash, one transaction per chunk. The caller has
 * checked the discussion and the message count and holds the
 * discussion's generation lock. Returns 0 (stored, nothing to do, or a
 * chunk that gave no facts), or -1 with res filled. */
int	 memory_vector_run(struct node_ctx *x, const struct memory_settings *ms,
	    const char *key, struct wresult *res);

#endif
