/* textchunk.h - WilmerAI's text utilities for memories: messages in token-sized chunks, text cut by words. */
#ifndef SLUICE_TEXTCHUNK_H
#define SLUICE_TEXTCHUNK_H

#include <stddef.h>

/* One chunk of messages: indexes [tc_first, tc_first + tc_count). */
struct text_chunk {
	size_t	 tc_first;
	size_t	 tc_count;
};

/* WilmerAI's chunk_messages_by_token_size over the contents of n
 * messages (oldest first): walking newest to oldest, a message joins the
 * current chunk when the chunk is empty or the chunk's estimate plus the
 * message's stays within size * 0.8; otherwise the chunk is closed and
 * the message starts the next one. Returns the chunks oldest first
 * (caller frees) and their count in *nchunks; NULL when n is 0. */
struct text_chunk *text_chunk_messages(const char *const *contents, size_t n,
	    long size, size_t *nchunks);

/* WilmerAI's split_into_tokenized_chunks: the whitespace-separated words
 * of text, words at a time, each chunk the words joined by one space.
 * NULL-terminated; free with text_chunks_free. */
char	**text_split_words(const char *text, size_t words);
void	  text_chunks_free(char **);

/* WilmerAI's reduce_text_to_token_limit: the last n words joined by one
 * space; "" for n <= 0; text unchanged when it has no more than n
 * words. Caller frees. */
char	*text_last_words(const char *text, long n);

#endif
