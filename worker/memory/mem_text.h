/* memtext.h - the text helpers of the memory features: message hashes, turns, strip, placeholder filling. */
#ifndef SLUICE_MEMTEXT_H
#define SLUICE_MEMTEXT_H

#include "../core/msgs.h"

struct buf;

#define MEMORY_HASHLEN	65	/* sha256 hex + NUL */

/* WilmerAI's message hash: sha256 of the content, or for a message
 * with images and no text, of the content and its images sorted. */
void	 memory_hash(const struct wmsg *, char out[MEMORY_HASHLEN]);

/* Append m's images to b, sorted (code point order), with nothing
 * between: Python's "".join(sorted(images)). */
void	 memory_images_sorted(const struct wmsg *m, struct buf *b);

/* The conversation without its system messages (WilmerAI's memory
 * paths never see them). Copies; free with wmsgs_free. */
void	 memory_turns(const struct wmsgs *in, struct wmsgs *out);

/* s without leading and trailing whitespace (Python's str.strip()).
 * Caller frees. */
char	*memory_strip(const char *s);

/* text with every occurrence of placeholder replaced by value, as it
 * is. Caller frees. */
char	*memory_replace(const char *text, const char *placeholder,
	    const char *value);

/* s with its braces as WilmerAI's sentinels: a variable pass
 * (memory_llm, vars_format) or a Jinja2 render gives it back as it is.
 * Caller frees. */
char	*memory_literal(const char *s);

/* tmpl with each placeholder of the (placeholder, value) pairs, ended
 * by (char *)NULL, replaced by its value, in order, WilmerAI's literal string
 * replace; the values' braces become WilmerAI's sentinels so that a
 * later variable pass (memory_llm, vars_format, a Jinja2 render) gives
 * them back as they are. Caller frees. */
char	*memory_fill(const char *tmpl, ...);

#endif
