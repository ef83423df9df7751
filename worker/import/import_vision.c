/* import_vision.c - importing ImageProcessor's kept descriptions: vision_responses.json into vision_responses. */
#include <stdint.h>
#include <time.h>

#include "../store/store_stmt.h"
#include "import_int.h"

/* Is key's description already kept? 1, 0, or -1. */
static int
kept(struct store *s, const char *disc, const char *key)
{
	sqlite3_stmt	*st = store_stmt(s, "SELECT 1 FROM vision_responses "
			    "WHERE discussion = ? AND message_key = ?");
	int		 rc;

	if (st == NULL || store_bind(s, st, "tt", disc, key) == -1)
		return -1;
	if ((rc = store_step(s, st)) == 1)
		sqlite3_reset(st);
	return rc;
}

int
imp_vision(struct store *s, const struct imp_disc *d,
    const struct imp_json *j, struct imp_res *r)
{
	json_t		*o = j->j_f[IMP_VISION].jf_root;
	const char	*key;
	json_t		*v;
	long		 added = 0, old = 0;
	int		 k;

	if (json_object_size(o) == 0)
		return 0;
	if (imp_discussion(s, d->d_key) == -1)
		return -1;
	json_object_foreach(o, key, v) {
		if ((k = kept(s, d->d_key, key)) == -1)
			return -1;
		if (k == 1) {
			old++;
			continue;
		}
		if (store_exec(s, "INSERT INTO vision_responses (discussion, "
		    "message_key, text, created_at) VALUES (?, ?, ?, ?)",
		    "ttti", d->d_key, key, json_string_value(v),
		    (int64_t)time(NULL)) == -1)
			return -1;
		added++;
	}
	imp_sep(&r->ir_parts, ", ");
	buf_printf(&r->ir_parts, "%ld image %s", added, imp_plural(added,
	    "description", "descriptions"));
	if (old > 0)
		buf_printf(&r->ir_parts, " (%ld already present)", old);
	return 0;
}
