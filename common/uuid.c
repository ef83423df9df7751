/* uuid.c - random (version 4) UUIDs for request ids. */
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>

#include "log.h"
#include "uuid.h"

static void
random_bytes(uint8_t b[16])
{
	if (getrandom(b, 16, 0) != 16)
		fatal("getrandom");
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);	/* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
}

void
uuid_new(char out[UUID_BUFLEN])
{
	uint8_t	 b[16];

	random_bytes(b);
	snprintf(out, UUID_BUFLEN,
	    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x",
	    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
	    b[10], b[11], b[12], b[13], b[14], b[15]);
}

void
uuid_new_hex(char out[33])
{
	uint8_t	 b[16];
	int	 i;

	random_bytes(b);
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}
