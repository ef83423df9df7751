/* fernet.c - WilmerAI's encryption of discussion files: the key derived from an API key and a user name, and Fernet tokens (addendum A10). */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <string.h>

#include "base64.h"
#include "buf.h"
#include "fernet.h"
#include "sha256.h"

#define VERSION		0x80
#define HEADLEN		(1 + 8 + 16)	/* version, time, IV */
#define MACLEN		32
#define BLOCK		16
#define ROUNDS		100000
#define TOKEN_MIN	100	/* base64 of the shortest token */

void
fernet_dir(const char *api_key, char out[FERNET_DIRLEN])
{
	char	 hex[SHA256_HEXLEN];

	sha256_hex(api_key, strlen(api_key), hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
}

int
fernet_derive(struct fernet_key *k, const char *api_key, const char *user)
{
	char	 salt[12 + SHA256_HEXLEN] = "WilmerAI-v1-";
	int	 ok;

	if (user != NULL)
		sha256_hex(user, strlen(user), salt + 12);
	else
		(void)strcpy(salt, "WilmerAI-encryption-salt-v1");
	ok = PKCS5_PBKDF2_HMAC(api_key, (int)strlen(api_key),
	    (const unsigned char *)salt, (int)strlen(salt), ROUNDS,
	    EVP_sha256(), (int)sizeof(k->fk_bytes), k->fk_bytes);
	if (ok != 1) {
		fernet_wipe(k);
		return -1;
	}
	return 0;
}

void
fernet_text(const struct fernet_key *k, char out[FERNET_TEXTLEN])
{
	struct buf	 b = BUF_INIT;

	base64url_encode(&b, k->fk_bytes, sizeof(k->fk_bytes));
	memcpy(out, b.b_data, FERNET_TEXTLEN - 1);
	out[FERNET_TEXTLEN - 1] = '\0';
	OPENSSL_cleanse(b.b_data, b.b_len);
	buf_free(&b);
}

/* AES-128-CBC of in[0..n) with PKCS#7 padding (enc 1) or its inverse
 * (enc 0) into out, which has room for n + BLOCK bytes. The length, or
 * -1. */
static int
cbc(const struct fernet_key *k, int enc, const unsigned char *iv,
    const unsigned char *in, size_t n, unsigned char *out)
{
	EVP_CIPHER_CTX	*c = EVP_CIPHER_CTX_new();
	int		 a = 0, b = 0, ok;

	if (c == NULL)
		return -1;
	ok = EVP_CipherInit_ex(c, EVP_aes_128_cbc(), NULL, k->fk_bytes + 16,
	    iv, enc) == 1 &&
	    EVP_CipherUpdate(c, out, &a, in, (int)n) == 1 &&
	    EVP_CipherFinal_ex(c, out + a, &b) == 1;
	EVP_CIPHER_CTX_free(c);
	return ok ? a + b : -1;
}

/* HMAC-SHA256 with the signing half of k. */
static int
mac(const struct fernet_key *k, const unsigned char *p, size_t n,
    unsigned char out[MACLEN])
{
	unsigned int	 len = MACLEN;

	return HMAC(EVP_sha256(), k->fk_bytes, 16, p, n, out, &len) != NULL &&
	    len == MACLEN ? 0 : -1;
}

int
fernet_encrypt(const struct fernet_key *k, const void *p, size_t n,
    uint64_t now, const unsigned char *iv, struct buf *out)
{
	struct buf	 t = BUF_INIT;
	unsigned char	*u;
	int		 i, len;

	buf_reserve(&t, HEADLEN + n + BLOCK + MACLEN);
	u = (unsigned char *)t.b_data;
	u[0] = VERSION;
	for (i = 0; i < 8; i++)
		u[1 + i] = (unsigned char)(now >> (56 - 8 * i));
	if (iv != NULL)
		memcpy(u + 9, iv, 16);
	else if (RAND_bytes(u + 9, 16) != 1) {
		buf_free(&t);
		return -1;
	}
	if ((len = cbc(k, 1, u + 9, p, n, u + HEADLEN)) >= 0 &&
	    mac(k, u, HEADLEN + (size_t)len, u + HEADLEN + len) == 0) {
		base64url_encode(out, u, HEADLEN + (size_t)len + MACLEN);
		buf_free(&t);
		return 0;
	}
	buf_free(&t);
	return -1;
}

int
fernet_decrypt(const struct fernet_key *k, const char *tok, size_t n,
    struct buf *out)
{
	struct buf		 t = BUF_INIT;
	unsigned char		 want[MACLEN], *u, *plain;
	size_t			 body;
	int			 len = -1;

	if (base64url_decode(tok, n, &t) == -1 || t.b_len < HEADLEN + MACLEN +
	    BLOCK || (t.b_len - HEADLEN - MACLEN) % BLOCK != 0 ||
	    (unsigned char)t.b_data[0] != VERSION)
		goto done;
	u = (unsigned char *)t.b_data;
	body = t.b_len - MACLEN;
	if (mac(k, u, body, want) == -1 || CRYPTO_memcmp(want, u + body,
	    MACLEN) != 0)
		goto done;
	buf_reserve(out, body - HEADLEN + BLOCK);
	plain = (unsigned char *)out->b_data + out->b_len;
	if ((len = cbc(k, 0, u + 9, u + HEADLEN, body - HEADLEN, plain)) >= 0)
		out->b_len += (size_t)len;
	else
		OPENSSL_cleanse(plain, body - HEADLEN + BLOCK);
	out->b_data[out->b_len] = '\0';
done:
	buf_free(&t);
	return len >= 0 ? 0 : -1;
}

bool
fernet_is_token(const char *s, size_t n)
{
	size_t	 i;

	if (n < TOKEN_MIN || strncmp(s, "gAAAAA", 6) != 0)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' &&
		    s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '-' || s[i] == '_' || s[i] == '='))
			return false;
	return true;
}

void
fernet_wipe(struct fernet_key *k)
{
	OPENSSL_cleanse(k->fk_bytes, sizeof(k->fk_bytes));
}
