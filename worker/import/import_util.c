/* import_util.c - what every part of --import-wilmer shares: the discussions row, the report's lists and plurals. */
#include <stdint.h>
#include <time.h>

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
