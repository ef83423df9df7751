/* sha256.c - SHA-256 digests (OpenSSL's libcrypto) as lower-case hex. */
#include <openssl/evp.h>
#include <stdio.h>

#include "log.h"
#include "sha256.h"

void
sha256_hex(const void *p, size_t n, char out[SHA256_HEXLEN])
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 len = 0, i;

	if (EVP_Digest(p, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32)
		fatalx("SHA-256 failed");
	for (i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}
