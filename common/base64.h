/* base64.h - the standard base64 alphabet (RFC 4648, section 4): a digit's value, and whether a text is base64. */
#ifndef SLUICE_BASE64_H
#define SLUICE_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* The value (0..63) of the base64 digit c, or -1 when c is not one
 * ('=' is padding, not a digit; NUL is not a digit). */
int	base64_digit(int c);

/* True when s[0..n) is padded standard base64 as Go's
 * base64.StdEncoding reads it (Ollama decodes images so): digits, then
 * at most two '=' that make the count a multiple of four; line breaks,
 * which that decoder skips, may stand anywhere. Empty text is not
 * base64 here: no image is that short. */
bool	base64_valid(const char *s, size_t n);

#endif
