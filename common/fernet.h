/* fernet.h - WilmerAI's encryption of discussion files: the key derived from an API key and a user name, and Fernet tokens (addendum A10). */
#ifndef SLUICE_FERNET_H
#define SLUICE_FERNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

#define FERNET_DIRLEN	17	/* 16 hex digits and NUL */
#define FERNET_TEXTLEN	45	/* a key's 44 base64 characters and NUL */

/* A derived key: the first half signs (HMAC-SHA256), the second
 * encrypts (AES-128-CBC). Wipe it with fernet_wipe after use. */
struct fernet_key {
	unsigned char	fk_bytes[32];
};

/* The folder an API key's discussions live in: the first 16 hex digits
 * of SHA-256 of the key (A10.1). */
void	fernet_dir(const char *api_key, char out[FERNET_DIRLEN]);

/* A10.2: PBKDF2-HMAC-SHA256 of the API key, 100,000 rounds, salted with
 * "WilmerAI-v1-" and the hex SHA-256 of user (exactly as configured),
 * or with "WilmerAI-encryption-salt-v1" when user is NULL. Returns 0,
 * or -1 when libcrypto fails (k wiped). */
int	fernet_derive(struct fernet_key *k, const char *api_key,
	    const char *user);

/* The key as Python's cryptography writes it: URL-safe base64 of its
 * 32 bytes, 44 characters. */
void	fernet_text(const struct fernet_key *k, char out[FERNET_TEXTLEN]);

/* Append the token of p[0..n) to out: URL-safe base64 of 0x80, the
 * time (big-endian seconds), the IV, the AES-128-CBC ciphertext of the
 * PKCS#7-padded text, and the HMAC of all that. iv NULL: 16 random
 * bytes. Returns 0, or -1 when libcrypto fails (out unchanged). */
int	fernet_encrypt(const struct fernet_key *k, const void *p, size_t n,
	    uint64_t now, const unsigned char *iv, struct buf *out);

/* Append the text of token tok[0..n) to out. The time is not checked
 * (WilmerAI sets no TTL). Returns 0, or -1 for any invalid token (not
 * base64, another version, too short, a wrong HMAC - another key or a
 * changed byte -, bad padding); out is unchanged then. */
int	fernet_decrypt(const struct fernet_key *k, const char *tok, size_t n,
	    struct buf *out);

/* Whether s[0..n) has a token's shape: at least 100 characters (the
 * base64 of the shortest token), all URL-safe base64, starting
 * "gAAAAA" (the version 0x80 and a time whose top bytes are zero).
 * Never true of JSON; a plain text of that shape is unlikely. */
bool	fernet_is_token(const char *s, size_t n);

/* Overwrite k so the key does not linger in memory. */
void	fernet_wipe(struct fernet_key *k);

#endif
