/* uuid.c - random (version 4) UUIDs for request ids. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include "log.h"
#include "uuid.h"

/*
 * Random bytes are drawn 256 at a time (the most getrandom() always
 * returns whole) and handed out 16 per id, so the gateway makes one
 * system call per 16 requests instead of one per request. A child of
 * fork() starts with an empty pool, so it never repeats its parent's
 * ids.
 */
#define POOL_LEN	256

static uint8_t	 pool[POOL_LEN];
static size_t	 pool_left;

static void
pool_forget(void)
{
	explicit_bzero(pool, sizeof(pool));
	pool_left = 0;
}

static void
random_bytes(uint8_t b[16])
{
	static bool	 registered;

	if (!registered) {
		if (pthread_atfork(NULL, NULL, pool_forget) != 0)
			fatalx("pthread_atfork failed");
		registered = true;
	}
	if (pool_left < 16) {
		if (getrandom(pool, sizeof(pool), 0) != (ssize_t)sizeof(pool))
			fatal("getrandom");
		pool_left = sizeof(pool);
	}
	memcpy(b, pool + sizeof(pool) - pool_left, 16);
	explicit_bzero(pool + sizeof(pool) - pool_left, 16);
	pool_left -= 16;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);	/* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
}

/* n bytes of b as 2n lower-case hex digits at o; returns the end. */
static char *
put_hex(char *o, const uint8_t *b, size_t n)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < n; i++) {
		*o++ = digits[b[i] >> 4];
		*o++ = digits[b[i] & 0x0f];
	}
	return o;
}

void
uuid_new(char out[UUID_BUFLEN])
{
	static const uint8_t	 groups[] = { 4, 2, 2, 2, 6 };
	uint8_t			 b[16];
	const uint8_t		*p = b;
	char			*o = out;
	size_t			 i;

	random_bytes(b);
	for (i = 0; i < sizeof(groups); i++) {
		if (i > 0)
			*o++ = '-';
		o = put_hex(o, p, groups[i]);
		p += groups[i];
	}
	*o = '\0';
}

void
uuid_new_hex(char out[33])
{
	uint8_t	 b[16];

	random_bytes(b);
	*put_hex(out, b, sizeof(b)) = '\0';
}
