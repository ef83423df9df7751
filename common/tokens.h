/* tokens.h - WilmerAI's token estimate for text (no tokenizer needed). */
#ifndef SLUICE_TOKENS_H
#define SLUICE_TOKENS_H

#include <stddef.h>

#define TOKENS_MARGIN	1.10

/* int(max(words * 1.35, chars / 3.5) * margin), where words are runs of
 * non-whitespace (Python str.split()) and chars are code points. */
long	tokens_estimate(const char *text, size_t len, double margin);

/* wilmerContextEstimationLevel's budget multiplier: level (NULL: not
 * a string) stripped, ignoring case: conservative 1.0, balanced 1.25,
 * aggressive 1.5, xaggressive 1.85; anything else 1.0. */
double	tokens_level(const char *level);

#endif
