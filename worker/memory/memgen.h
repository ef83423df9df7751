/* memgen.h - writing a discussion's memories: which messages are new, when to write, chunks, the file-style ledger, condensation. */
#ifndef SLUICE_MEMGEN_H
#define SLUICE_MEMGEN_H

#include <stdbool.h>
#include <stddef.h>

#include "memory.h"
#include "memstore.h"

/* A run of messages turned into memory text: the contents joined by
 * "\n" and the hash of the run's last message (WilmerAI's
 * chunk_messages_with_hashes). */
struct mem_chunk {
	char	*mc_text;
	char	 mc_hash[MEMORY_HASHLEN];
};

struct mem_chunks {
	struct mem_chunk	*v;
	size_t			 n;
};

void	mem_chunks_free(struct mem_chunks *);

/* The messages msgs[first..first+count) in chunks of about size
 * estimated tokens (spec 7.2), oldest first. */
void	mem_chunks_make(const struct wmsgs *msgs, size_t first, size_t count,
	    long size, struct mem_chunks *out);

/* WilmerAI's either-threshold trigger: the estimate of the contents
 * joined by "\n" reaches size, or (when by_count) there are at least
 * max_between messages. */
bool	mem_triggered(const struct wmsgs *msgs, size_t first, size_t count,
	    long size, bool by_count, long max_between);

/* A chunk size from the settings file scaled by its estimation level
 * (WilmerAI's int(size * level)). */
long	mem_scaled(long size, double level);

/* Generate the discussion's memories when enough new messages have
 * come (spec 7.4): the vector store when the settings say
 * useVectorForQualityMemory and force_file is false, else the
 * file-style ledger (then condensation). Does nothing without a
 * discussion id or with fewer than 3 messages. Holds the discussion's
 * generation lock while it writes. Returns 0 (written, or nothing to
 * do, or skipped because another request was writing), or -1 with res
 * filled. */
int	memory_generate(struct node_ctx *, bool force_file, struct wresult *res);

/* The file-style path, settings loaded, the lock held (mem_file.c). */
int	memory_file_run(struct node_ctx *, const struct memory_settings *,
	    const char *key, struct wresult *res);

/* WilmerAI's condensation of older memories (mem_condense.c); does
 * nothing unless condenseMemories and memoriesBeforeCondensation are
 * set and enough memories are new since the tracker. The lock held.
 * Returns 0, or -1 with res filled. */
int	memory_condense(struct node_ctx *, const struct memory_settings *,
	    const char *key, struct wresult *res);

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
