/* names.h - checks for names that become path components. */
#ifndef SLUICE_NAMES_H
#define SLUICE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NAME_MAX_LEN	128

/* True when s[0..n) is a single flat path component that is safe to put
 * into a file name: 1..NAME_MAX_LEN bytes, no '/', '\\', NUL or control
 * byte, not "." or "..", no leading '.'. Names from requests (model
 * field, workflow names) must pass this before any open(). */
bool	name_is_safe(const char *s, size_t n);

#endif
