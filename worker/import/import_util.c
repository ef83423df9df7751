/* import_util.c - what every part of --import-wilmer and --export-wilmer shares: the discussions row, the report's lines, lists and plurals. */
#include <stdint.h>
#include <stdio.h>
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
	return store_exec(s, "INSERT INTO discussions (key, created_at) "
	    "VALUES (?, ?) ON CONFLICT DO NOTHING", "ti", key,
	    (int64_t)time(NULL)) == -1 ? -1 : 0;
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

void
imp_print_done(const char *key, const struct imp_res *r, const char *none,
    struct imp_counts *c)
{
	printf("%s: %s", key, r->ir_parts.b_len > 0 ? r->ir_parts.b_data :
	    none);
	if (r->ir_skips.b_len > 0)
		printf("; skipped: %s", r->ir_skips.b_data);
	putchar('\n');
	c->c_memories += r->ir_memories;
	c->c_summaries += r->ir_summaries;
	c->c_timestamps += r->ir_timestamps;
	c->c_vectors += r->ir_vectors;
	c->c_hashlog += r->ir_hashlog;
}

void
imp_print_counts(const struct imp_counts *c)
{
	printf("%ld %s, %ld %s, %ld %s, %ld vector %s, %ld hash log %s\n",
	    c->c_memories, imp_plural(c->c_memories, "memory", "memories"),
	    c->c_summaries, imp_plural(c->c_summaries, "summary", "summaries"),
	    c->c_timestamps, imp_plural(c->c_timestamps, "timestamp",
	    "timestamps"), c->c_vectors, imp_plural(c->c_vectors, "memory",
	    "memories"), c->c_hashlog, imp_plural(c->c_hashlog, "entry",
	    "entries"));
}
