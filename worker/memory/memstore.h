/* memstore.h - a discussion's memory ledger, rolling summary and condensation tracker in the shared database. */
#ifndef SLUICE_MEMSTORE_H
#define SLUICE_MEMSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../store/store.h"

/* One memory: WilmerAI's {"text_block", "hash"}, the hash being that
 * of the last message of the chunk it was made from. */
struct mem_block {
	int64_t	 mb_id;		/* its row: the ledger's order */
	char	*mb_text;
	char	*mb_hash;
};

struct mem_blocks {
	struct mem_block	*v;
	size_t			 n;
};

void	mem_blocks_free(struct mem_blocks *);	/* leaves it empty */

/* The discussion's memories in order into out (empty when none), and
 * whether its ledger exists (WilmerAI: memories.json exists) into
 * *ledger (may be NULL). Returns 0, or -1 with store_err set. */
int	memstore_read(struct store *, const char *key, struct mem_blocks *out,
	    bool *ledger);

/* Whether the discussion's ledger existed, into *existed; it exists
 * afterwards, with the discussion (WilmerAI creates an empty
 * memories.json when it first reads it). 0, or -1. */
int	memstore_touch_ledger(struct store *, const char *key, bool *existed);

/* Append one memory, in one transaction, if the ledger's last memory
 * still has id last_id (0: the ledger must still be empty): a worker
 * that lost the discussion's generation lock never writes behind
 * another's back. Returns the new row's id (> 0), 0 when the ledger
 * changed meanwhile (nothing written), or -1 with store_err set. */
int64_t	memstore_append(struct store *, const char *key, int64_t last_id,
	    const char *text, const char *hash);

/* Replace the memories with ids first..last (a run of the ledger, all
 * still there) by one memory that takes the id first, and set the
 * condensation tracker to hash, in one transaction. Returns 1, 0 when
 * the run changed meanwhile (nothing written), or -1. */
int	memstore_condense(struct store *, const char *key, int64_t first,
	    int64_t last, size_t count, const char *text, const char *hash);

/* The rolling summary: 1 with *text and *hash (caller frees both), 0
 * when there is none, -1 on error. */
int	memstore_summary(struct store *, const char *key, char **text,
	    char **hash);

/* Replace the rolling summary (WilmerAI overwrites chat_summary.json
 * with one entry). 0, or -1. */
int	memstore_summary_put(struct store *, const char *key, const char *text,
	    const char *hash);

/* The condensation tracker's last hash: 1 with *hash (caller frees), 0
 * when unset, -1 on error. memstore_tracker_put sets it (creating the
 * ledger if needed); 0 or -1. */
int	memstore_tracker(struct store *, const char *key, char **hash);
int	memstore_tracker_put(struct store *, const char *key, const char *hash);

/* The state document: 1 with *text (caller frees), 0 when there is
 * none, -1. memstore_state_put replaces it, keeping the one it replaces
 * as the previous version (WilmerAI's .bak); 0 or -1. */
int	memstore_state(struct store *, const char *key, char **text);
int	memstore_state_put(struct store *, const char *key, const char *text);

/* ContextCompactor's state (WilmerAI's context_compactor_old.json and
 * context_compactor_oldest.json): section "old" or "oldest", its
 * entries in order into out (mb_id their position; empty when none).
 * Returns 0, or -1 with store_err set. */
int	memstore_section(struct store *, const char *key, const char *section,
	    struct mem_blocks *out);

/* Replace the "old" section's entries by old's and the "oldest"
 * section's by oldest's (NULL: that section is left as it is), in one
 * transaction. 0, or -1. */
int	memstore_sections_put(struct store *, const char *key,
	    const struct mem_blocks *old, const struct mem_blocks *oldest);

/* ImageProcessor's vision-response cache (WilmerAI's
 * vision_responses.json): the description kept for a message's key
 * (vision_key) in discussion key. 1 with *text (caller frees), 0 when
 * there is none, -1 with store_err set. */
int	memstore_vision(struct store *, const char *key, const char *msg_key,
	    char **text);

/* Keep text for msg_key (replacing one kept before). 0, or -1. */
int	memstore_vision_put(struct store *, const char *key,
	    const char *msg_key, const char *text);

#endif
