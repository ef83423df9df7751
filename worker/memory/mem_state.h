/* mem_state.h - WilmerAI's state document: what is true now, merged from each round's new facts by the user's workflow. */
#ifndef SLUICE_MEM_STATE_H
#define SLUICE_MEM_STATE_H

#include "memgen.h"

/* WilmerAI's state document (useStateDocument): the n facts just
 * stored merged into the discussion's document by the
 * stateDocumentWorkflowName workflow (agent1Input: the facts as "- "
 * lines; agent2Input: the document, "" when none). Best effort: an
 * empty answer, or one that shrinks a document of over 500 characters
 * below stateDocumentMinRetentionRatio (0.5) of its size, is refused,
 * and any failure is logged with the document left as it was and res
 * untouched. Returns 0, or -1 only when the request was cancelled. */
int	memory_state_update(struct node_ctx *, const struct memory_settings *,
	    const char *key, char *const *facts, size_t n,
	    struct wresult *res);

#endif
