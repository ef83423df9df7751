/* mem_chunk.h - which messages become memory text: WilmerAI's threshold trigger and hashed chunks. */
#ifndef SLUICE_MEM_CHUNK_H
#define SLUICE_MEM_CHUNK_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/msgs.h"
#include "mem_text.h"

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

#endif
