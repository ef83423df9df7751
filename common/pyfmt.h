/* pyfmt.h - values as Python 3 prints them: repr() of a float or a string, str() and repr() of what json.loads makes of a JSON value. */
#ifndef SLUICE_PYFMT_H
#define SLUICE_PYFMT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/*
 * WilmerAI keeps JSON values as the Python objects json.loads gives
 * (dict, list, str, int, float, True/False/None) and turns them into
 * text with str(): "5", "2.0", "True", "None", and for containers
 * "{'a': [1, None]}" (repr() of each member, dict order kept). For
 * json.dumps' text use jsonw.h instead.
 */

/* Append repr(d) (which is also str(d)): the shortest digits that read
 * back as d, positional for decimal exponents -4..15 with ".0" when
 * integral ("1.0", "0.0001", "1e+16", "1e-05", "1.5e+300"), and
 * "-0.0", "inf", "-inf", "nan". */
void	 pyfmt_float(struct buf *out, double d);

/* Append repr() of the UTF-8 string s[0..n): in single quotes unless it
 * holds a single quote and no double quote; backslash and that quote
 * escaped, \t \n \r, other characters str.isprintable() rejects as
 * \xNN, \uNNNN or \UNNNNNNNN, everything else as it is. A byte that
 * starts no valid UTF-8 sequence is copied unchanged (Python's str
 * cannot hold one; jansson strings never do). */
void	 pyfmt_repr_str(struct buf *out, const char *s, size_t n);

/* Append repr() of v's Python object. */
void	 pyfmt_repr(struct buf *out, const json_t *v);

/* Append str() of v's Python object: a string as it is, anything else
 * as pyfmt_repr. */
void	 pyfmt_str(struct buf *out, const json_t *v);

/* str() of v as a new NUL-terminated string the caller frees (never
 * NULL). */
char	*pyfmt_strdup(const json_t *v);

/* bool(v) in Python: false for None, False, 0, 0.0, "", [] and {}, and
 * for NULL (a missing key); true for everything else. */
bool	 pyfmt_truthy(const json_t *v);

/* Python's str.isprintable() for one code point (Unicode database
 * pyfmt_unicode_version; ASCII: space to '~'). */
bool	 pyfmt_printable(uint32_t cp);

/* The Unicode version pyfmt_printable follows, e.g. "14.0.0". */
extern const char pyfmt_unicode_version[];

#endif
