/* kwsearch.h - WilmerAI's keyword search without an LLM (search_utils.py): word tokens, speaker filtering, scored and plain chunk search. */
#ifndef SLUICE_KWSEARCH_H
#define SLUICE_KWSEARCH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Words are Python's \b\w+\b: maximal runs of letters, digits and '_'
 * (Unicode letters and digits by the C.UTF-8 locale's iswalnum), and
 * lower-casing is Python's str.lower() as far as towlower goes (one code
 * point to one code point).
 */

/* s lower-cased. Caller frees. */
char	*kw_lower(const char *s);

/* The words of text (lower-cased when lower), NULL-terminated; the
 * count in *n when n is not NULL. Free with kw_free. */
char	**kw_tokens(const char *text, bool lower, size_t *n);
void	  kw_free(char **);

/* filter_keywords_by_speakers: the words of keywords (and parentheses),
 * without the speakers named in contents (a word directly followed by
 * ':' in any of them, compared lower-cased) and without "label:" words,
 * joined by spaces and tidied as WilmerAI does. Caller frees. */
char	*kw_filter_speakers(const char *const *contents, size_t n,
	    const char *keywords);

/* advanced_search_in_chunks: the chunks holding query words, scored by
 * how often they hold them plus pairs of different query words at most
 * proximity words apart; speaker labels of a chunk do not make it a
 * hit. Best first (ties: earlier chunk first), at most max. Returns the
 * chunk indexes (caller frees), their count in *nout; NULL when none. */
size_t	*kw_search_scored(const char *const *chunks, size_t n,
	    const char *query, size_t max, size_t proximity, size_t *nout);

/* search_in_chunks: the chunks sharing a word with query, in order, at
 * most max (0: all). Indexes as for kw_search_scored. */
size_t	*kw_search_plain(const char *const *chunks, size_t n,
	    const char *query, size_t max, size_t *nout);

#endif
