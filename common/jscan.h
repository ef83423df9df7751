/* jscan.h - a validating JSON scanner: one value at a time, strings viewed in place or unescaped into an arena, no tree. */
#ifndef SLUICE_JSCAN_H
#define SLUICE_JSCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Deepest nesting of objects and arrays accepted. jansson takes 2048;
 * anything deeper is refused here, and a caller that must match
 * jansson falls back to it. */
#define JSCAN_MAX_DEPTH	128

enum jscan_type {
	JS_NONE, JS_OBJECT, JS_ARRAY, JS_STRING, JS_INTEGER, JS_REAL,
	JS_TRUE, JS_FALSE, JS_NULL,
};

/* The state of one scan. Members are private to jscan.c. */
struct jscan {
	const char	*js_base;
	const char	*js_p;		/* next byte to read */
	const char	*js_end;
	char		*js_arena;	/* strings with escapes,
					   unescaped: NULL until the
					   first */
	char		*js_out;	/* next free byte of the arena */
	int		 js_depth;	/* open objects and arrays */
	unsigned char	 js_stack[JSCAN_MAX_DEPTH]; /* their types */
	bool		 js_first;	/* no member read yet in the
					   innermost open container */
};

/* One value as jscan_value read it. */
struct jscan_val {
	enum jscan_type	 jv_type;
	const char	*jv_p;		/* its text in the input: a
					   scalar's whole text, a
					   container's opening bracket
					   (jscan_skip sets jv_n to the
					   whole container) */
	size_t		 jv_n;
	struct str	 jv_str;	/* JS_STRING: the unescaped text (not
					   NUL-terminated): a view of the
					   input when it has no escapes,
					   else of the arena */
};

/*
 * What is accepted is RFC 8259 JSON with jansson's limits, so that a
 * text jscan accepts jansson's json_loadb (flags 0 or JSON_DECODE_ANY)
 * accepts too, with the same values: UTF-8 checked strictly
 * (overlong forms, encoded surrogates and code points above U+10FFFF
 * refused), no control characters in strings, escapes \" \\ \/ \b \f
 * \n \r \t and \uXXXX with surrogates paired, no \u0000 (jansson
 * refuses it without JSON_ALLOW_NUL), integers that fit a long long,
 * reals that do not overflow a double. jscan is stricter only where
 * noted (nesting, reals whose text is very long or that underflow)
 * and where jansson errs: it passes over a NUL byte that follows a
 * number or a literal ("[1\0]"), which jscan refuses as any other
 * stray byte.
 */

/* Start scanning p[0..n), which must outlive the views jscan gives. */
void	jscan_init(struct jscan *, const char *p, size_t n);

/* Free the arena: the views of strings that had escapes die. */
void	jscan_clear(struct jscan *);

/* Read the next value. A scalar is read whole (a string unescaped
 * into the arena); for an object or array only its opening bracket,
 * its contents then read with jscan_member or jscan_element, or passed
 * over with jscan_skip. Returns 0, or -1 on anything invalid. */
int	jscan_value(struct jscan *, struct jscan_val *);

/* In an open object: 1 with the next member's key (unescaped, as
 * jv_str) and its ':' read, the value to be read next; 0 when the
 * object's '}' has been read; -1 on invalid input. */
int	jscan_member(struct jscan *, struct str *key);

/* In an open array: 1 when an element follows (to be read next); 0
 * when the array's ']' has been read; -1 on invalid input. */
int	jscan_element(struct jscan *);

/* Read the rest of v, which jscan_value has just returned, validating
 * it without keeping its strings; v->jv_n becomes the length of its
 * whole text. Nothing to do for a scalar. Returns 0 or -1. */
int	jscan_skip(struct jscan *, struct jscan_val *v);

/* Only whitespace is left: 0, else -1. */
int	jscan_finish(struct jscan *);

/* Offset of the next byte to read, for messages. */
size_t	jscan_offset(const struct jscan *);

#endif
