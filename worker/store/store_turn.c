/* store_turn.c - turns on a shared resource counted across every gateway of a PostgreSQL store: one of N session-level advisory locks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/sha256.h"
#include "store_stmt.h"
#include "store_turn.h"

/* The first number of name's keys: 32 bits of a digest, as a signed
 * int4 (advisory locks' two-number form). The workflow locks' session
 * keys live in the one-number form, a space of their own. */
static int64_t
turn_class(const char *name)
{
	char		 d[SHA256_HEXLEN], hex[9];
	uint32_t	 v;

	sha256_hex(name, strlen(name), d);
	memcpy(hex, d, 8);
	hex[8] = '\0';
	v = (uint32_t)strtoul(hex, NULL, 16);
	return (int64_t)(int32_t)v;
}

int
store_turn_try(struct store *s, const char *name, unsigned limit,
    unsigned *index)
{
	int64_t		 cls = turn_class(name);
	struct store_q	*q;
	unsigned	 i;
	int		 r;

	if (!store_is_pg(s)) {
		*index = 0;
		return 1;
	}
	for (i = 0; i < limit; i++) {
		q = store_stmt(s, "SELECT pg_try_advisory_lock(?, ?)::int");
		if (q == NULL || store_bind(s, q, "ii", cls, (int64_t)i) == -1)
			return -1;
		if ((r = store_step(s, q)) != 1)
			return r == 0 ? -1 : r;
		r = (int)store_col_int(q, 0);
		store_end(q);
		if (r == 1) {
			*index = i;
			return 1;
		}
	}
	return 0;
}

int
store_turn_give(struct store *s, const char *name, unsigned index)
{
	if (!store_is_pg(s))
		return 0;
	return store_exec(s, "SELECT pg_advisory_unlock(?, ?)", "ii",
	    turn_class(name), (int64_t)index) == -1 ? -1 : 0;
}
