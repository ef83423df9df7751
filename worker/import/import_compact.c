/* import_compact.c - importing ContextCompactor's state: context_compactor_old.json and context_compactor_oldest.json into compactor_sections. */
#include <stdbool.h>
#include <string.h>

#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "import_int.h"

static const struct {
	enum imp_file	 f;
	const char	*section;
} parts[] = {
	{ IMP_COMPACT_OLD, "old" },
	{ IMP_COMPACT_OLDEST, "oldest" },
};

static const char *
field(json_t *arr, size_t i, const char *k)
{
	return json_string_value(json_object_get(json_array_get(arr, i), k));
}

/* What key's section holds now: *have rows, *same when they are arr's
 * entries (an earlier import of this file). 0, or -1. */
static int
section_state(struct store *s, const char *key, const char *section,
    json_t *arr, size_t *have, bool *same)
{
	struct store_q	*st = store_stmt(s, "SELECT text, hash FROM "
			    "compactor_sections WHERE discussion = ? AND "
			    "section = ? ORDER BY pos");
	const char	*t, *h;
	int		 rc;

	*have = 0;
	*same = true;
	if (st == NULL || store_bind(s, st, "tt", key, section) == -1)
		return -1;
	while ((rc = store_step(s, st)) == 1) {
		t = store_col_text(st, 0);
		h = store_col_text(st, 1);
		if (*have >= json_array_size(arr) || !imp_same(s, key, t,
		    field(arr, *have, "text_block")) || strcmp(h, field(arr,
		    *have, "hash")) != 0)
			*same = false;
		(*have)++;
	}
	if (*have != json_array_size(arr))
		*same = false;
	return rc;
}

static int
section_write(struct store *s, const char *key, const char *section,
    json_t *arr)
{
	size_t	 i;
	char	*tok;
	int	 rc = 0;

	if (imp_discussion(s, key) == -1)
		return -1;
	for (i = 0; i < json_array_size(arr) && rc == 0; i++) {
		if ((tok = store_seal(s, field(arr, i, "text_block"))) == NULL)
			return -1;
		rc = store_exec(s, "INSERT INTO compactor_sections (discussion, "
		    "section, pos, text, hash) VALUES (?, ?, ?, ?, ?)", "ttitt",
		    key, section, (int64_t)i, tok, field(arr, i, "hash")) ==
		    -1 ? -1 : 0;
		free(tok);
	}
	return rc;
}

int
imp_compact(struct store *s, const struct imp_disc *d,
    const struct imp_json *j, struct imp_res *r)
{
	json_t	*arr;
	size_t	 i, have, done = 0, again = 0;
	bool	 same;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		arr = j->j_f[parts[i].f].jf_root;
		if (json_array_size(arr) == 0)		/* none, or [] */
			continue;
		if (section_state(s, d->d_key, parts[i].section, arr, &have,
		    &same) == -1)
			return -1;
		if (have == 0) {
			if (section_write(s, d->d_key, parts[i].section,
			    arr) == -1)
				return -1;
			done++;
		} else if (same)
			again++;
		else {
			imp_sep(&r->ir_skips, "; ");
			buf_printf(&r->ir_skips, "%s (the discussion already "
			    "has compactor state in Sluice)",
			    imp_file_name(d->d_file[parts[i].f]));
		}
	}
	if (done > 0 || again > 0) {
		imp_sep(&r->ir_parts, ", ");
		buf_adds(&r->ir_parts, done > 0 ? "compactor state" :
		    "compactor state already imported");
	}
	return 0;
}
