/* base64.h - base64 (RFC 4648): the standard alphabet's digits, validity and encoding, and the URL-safe alphabet's encoding with padding. */
#ifndef SLUICE_BASE64_H
#define SLUICE_BASE64_H

#include <stdbool.h>
#include <stddef.h>

struct buf;

/* The value (0..63) of the base64 digit c, or -1 when c is not one
 * ('=' is padding, not a digit; NUL is not a digit). */
int	base64_digit(int c);

/* True when s[0..n) is padded standard base64 as Go's
 * base64.StdEncoding reads it (Ollama decodes images so): digits, then
 * at most two '=' that make the count a multiple of four; line breaks,
 * which that decoder skips, may stand anywhere. Empty text is not
 * base64 here: no image is that short. */
bool	base64_valid(const char *s, size_t n);

/* Append p[0..n) to out in the standard alphabet ('+' and '/'), with
 * '=' padding: Python's base64.b64encode. */
void	base64_encode(struct buf *out, const void *p, size_t n);

/* Append p[0..n) to out in the URL-safe alphabet ('-' and '_'), with
 * '=' padding: Python's base64.urlsafe_b64encode. */
void	base64url_encode(struct buf *out, const void *p, size_t n);

/* Append the bytes of s[0..n), URL-safe base64 with its padding, to
 * out. Line breaks are skipped. Returns 0, or -1 when s is not that
 * (another character, a digit after '=', a length that padding does
 * not make a multiple of four); out may then hold part of it. */
int	base64url_decode(const char *s, size_t n, struct buf *out);

#endif
