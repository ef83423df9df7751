/* utf8.h - UTF-8 code points: read one, write one, and text lower-cased as Python's str.lower() does (one code point to one). */
#ifndef SLUICE_UTF8_H
#define SLUICE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define UTF8_BAD	0xfffdu		/* what an invalid byte reads as */

/* The code point at s[0..n) (n > 0; SIZE_MAX for a NUL-terminated s,
 * whose NUL ends any sequence) and its length in *len. An invalid
 * sequence (overlong, a surrogate, above U+10FFFF, cut short) reads as
 * UTF8_BAD, *len being its maximal invalid prefix (at least 1), as
 * Unicode's substitution practice and Python's 'replace' count it. */
uint32_t	utf8_next(const char *s, size_t n, size_t *len);

/* Append code point c (at most U+10FFFF) to b. */
void		utf8_put(struct buf *b, uint32_t c);

/* Is c a letter or digit to Unicode (iswalnum in C.UTF-8)? ASCII by
 * isalnum; when the C.UTF-8 locale is missing every code point above
 * ASCII counts. */
bool		utf8_isalnum(uint32_t c);

/* s[0..n) lower-cased onto b, each code point through towlower in
 * C.UTF-8 (ASCII only when that locale is missing); invalid sequences
 * are copied as they are. Python's few one-to-many lower cases (U+0130)
 * stay one code point. */
void		utf8_lower(struct buf *b, const char *s, size_t n);

#endif
