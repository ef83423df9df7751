/* import_util.c - what every part of --import-wilmer shares: the discussions row, the report's lists and plurals. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "import_int.h"

void
imp_sep(struct buf *b, const char *sep)
{
	if (b->b_len > 0)
		buf_adds(b, sep);
}

const char *
imp_plural(long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

int
imp_discussion(struct store *s, const char *key)
{
	return store_exec(s, "INSERT OR IGNORE INTO discussions (key, "
	    "created_at) VALUES (?, ?)", "ti", key, (int64_t)time(NULL)) == -1 ?
	    -1 : 0;
}

bool
imp_same(struct store *s, const char *d, const char *v, const char *plain)
{
	char	*t;
	bool	 same;

	if (store_unseal(s, d, "rows", v, &t) == -1)
		return false;
	same = strcmp(t, plain) == 0;
	free(t);
	return same;
}
