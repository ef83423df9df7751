/* htmlstrip.h - WebFetch's html-stripped output: the visible text of an HTML page, as WilmerAI's html.parser-based extractor finds it (addendum A3.3.5). */
#ifndef SLUICE_HTMLSTRIP_H
#define SLUICE_HTMLSTRIP_H

#include <stddef.h>

#include "../../common/buf.h"

/* Append the visible text of the UTF-8 page html[0..n) to out: every
 * run of text outside script, style, head, noscript and iframe, with
 * character references decoded, stripped of Python's whitespace,
 * empties dropped, joined with "\n". Never fails: broken HTML gives
 * what a lenient tokenizer makes of it. */
void	htmlstrip(const char *html, size_t n, struct buf *out);

/* Append html.unescape(s[0..n)) (Python's, with the named references
 * of the HTML 4.01 set, &apos; and the upper-case legacy forms; see
 * scripts/gen_entities.py) to out. */
void	htmlstrip_unescape(const char *s, size_t n, struct buf *out);

/* What Python's html.unescape makes of &#N; in the 0x80-0x9f range:
 * the windows-1252 character, or N itself where that has none. Also
 * the windows-1252 decoder's table. */
unsigned long	htmlstrip_cp1252(unsigned long n);

#endif
