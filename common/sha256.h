/* sha256.h - SHA-256 digests (OpenSSL's libcrypto) as lower-case hex. */
#ifndef SLUICE_SHA256_H
#define SLUICE_SHA256_H

#include <stddef.h>

#define SHA256_HEXLEN	65	/* 64 digits and NUL */

/* Hash n bytes of p into out. fatalx()s if libcrypto fails. */
void	sha256_hex(const void *p, size_t n, char out[SHA256_HEXLEN]);

#endif
