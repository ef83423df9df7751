/* memgen.h - writing a discussion's memories: which messages are new, when to write, chunks, the file-style ledger, condensation. */
#ifndef SLUICE_MEMGEN_H
#define SLUICE_MEMGEN_H

#include <stdbool.h>
#include <stddef.h>

#include "memory.h"
#include "memstore.h"

/* Generate the discussion's memories when enough new messages have
 * come (spec 7.4): the vector store when the settings say
 * useVectorForQualityMemory and force_file is false, else the
 * file-style ledger (then condensation). Does nothing without a
 * discussion id or with fewer than 3 messages. Holds the discussion's
 * generation lock while it writes. Returns 0 (written, or nothing to
 * do, or skipped because another request was writing), or -1 with res
 * filled. */
int	memory_generate(struct node_ctx *, bool force_file, struct wresult *res);

#endif
