/* pystr.h - Python's whitespace on UTF-8 text: str.isspace() of one character, str.strip(). */
#ifndef SLUICE_PYSTR_H
#define SLUICE_PYSTR_H

#include <stdbool.h>
#include <stddef.h>

/* How many bytes the character s[0..n) starts with takes when it is
 * whitespace to Python (str.isspace(): \t-\r, \x1c-\x1f, space, U+0085,
 * U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
 * U+3000); 0 when it is not (or n is 0); -1 when s ends inside a
 * character that could still be whitespace (a stream: wait for more). */
int	pystr_space(const char *s, size_t n);

/* Python's str.strip() (lstrip with left only, rstrip with right only)
 * on s[0..n): *off and *len say what is left. A character cut short at
 * either end is not whitespace. */
void	pystr_strip(const char *s, size_t n, bool left, bool right,
	    size_t *off, size_t *len);

/* pystr_strip of both ends, in place: *p and *n move in. */
void	pystr_trim(const char **p, size_t *n);

/* Python's not s.strip(): s is empty or whitespace only. */
bool	pystr_blank(const char *s);

/* Python's int(s) of a string: optional sign, decimal digits (single
 * underscores between them allowed), whitespace around. 0 with *out
 * (saturated: a value past LLONG_MAX stays near it), or -1 when
 * Python would raise ValueError. */
int	pystr_int(const char *s, long long *out);

#endif
