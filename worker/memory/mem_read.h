/* memread.h - reading memories back for prompts: recent chat as memory text, memories new since the rolling summary. */
#ifndef SLUICE_MEMREAD_H
#define SLUICE_MEMREAD_H

#include "../core/msgs.h"
#include "memstore.h"

/* WilmerAI's _get_recent_chat_messages_up_to_max: of msgs, the
 * max_turns messages before the last lookback ones, all but the last
 * of them in chunks of about 400 estimated tokens, "User: "-style role
 * labels removed, joined by sep; "There are no memories to grab yet"
 * when there is nothing. Caller frees. */
char	*memread_recent_chat(const struct wmsgs *msgs, long max_turns,
	    long lookback, const char *sep);

/* WilmerAI's clear_out_user_assistant_from_chunks on one text: every
 * "User: ", "USER: ", "Assistant: ", "ASSISTANT: ", "systemMes: " and
 * "SYSTEMMES: " removed. Caller frees. */
char	*memread_unlabel(const char *text);

/* How many memories came after the one the summary was made up to
 * (the last with summary_hash): mem->n when there is no summary
 * (summary_hash NULL), -1 when there are no memories or the hash is
 * not among them (WilmerAI's find_how_many_new_memories_since_last_summary). */
long	memread_new_since(const struct mem_blocks *mem, const char *summary_hash);

/* The memories to fold into the summary next: from memread_new_since,
 * all of them when it is -1. Index of the first into *first, count
 * returned. */
size_t	memread_unsummarised(const struct mem_blocks *mem,
	    const char *summary_hash, size_t *first);

/* The last n memories (all when n is 0) joined by a line of 14
 * dashes, or "No preceding memories to show"; stripped. What a chunk's
 * prompt shows as [Memory_file] (3) and [Full_Memory_file] (0). Caller
 * frees. */
char	*memread_recent(const struct mem_blocks *mem, size_t n);

/* mem->v[first..first+n) texts joined by sep. Caller frees. */
char	*memread_join(const struct mem_blocks *mem, size_t first, size_t n,
	    const char *sep);

#endif
