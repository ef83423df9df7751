/* import_state.c - a WilmerAI discussion's state_document.md (and the .bak of its previous version) into the store. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "import_int.h"

/* A state document as WilmerAI reads it (file_utils.read_plain_text_file):
 * 1 with its text in b, 0 when encrypted (noted) or empty, -1 when it
 * cannot be read (r_err). */
static int
read_doc(const struct imp_disc *d, const char *path, struct buf *b,
    struct imp_res *r)
{
	if (imp_read_file(path, b, r->ir_err) == -1) {
		r->ir_fail = EX_DATAERR;
		return -1;
	}
	if (imp_plain(d, path, b, r) == 0)
		return 0;
	return b->b_len > 0 ? 1 : 0;
}

/* Whether this database keeps state documents; then whether the
 * discussion has one (*have) and it is text (*same). */
static int
doc_state(struct store *s, const char *key, const char *text, bool *kept,
    bool *have, bool *same)
{
	struct store_q	*st = store_stmt(s, store_is_pg(s) ? "SELECT "
			    "count(*) FROM pg_catalog.pg_tables WHERE "
			    "schemaname = current_schema() AND tablename = "
			    "'state_documents'" : "SELECT count(*) FROM "
			    "sqlite_master WHERE type = 'table' AND name = "
			    "'state_documents'");
	int		 rc;

	if (st == NULL || store_step(s, st) != 1)
		return -1;
	*kept = (int)store_col_int(st, 0) > 0;
	store_end(st);
	*have = *same = false;
	if (!*kept)
		return 0;
	st = store_stmt(s, "SELECT text FROM state_documents WHERE "
	    "discussion = ?");
	if (st == NULL || store_bind(s, st, "t", key) == -1 ||
	    (rc = store_step(s, st)) == -1)
		return -1;
	if ((*have = rc == 1)) {
		*same = imp_same(s, key, store_col_text(st, 0), text);
		store_end(st);
	}
	return 0;
}

/* The document is there already, or has no place here: say so. */
static void
doc_left(const struct imp_disc *d, struct imp_res *r, bool kept, bool same)
{
	if (same) {
		imp_sep(&r->ir_parts, ", ");
		buf_adds(&r->ir_parts, "state document already imported");
		return;
	}
	imp_sep(&r->ir_skips, "; ");
	buf_printf(&r->ir_skips, "%s (%s)", imp_file_name(d->d_file[IMP_STATE]),
	    kept ? "the discussion already has a state document in Sluice" :
	    "this database keeps no state documents");
}

/* Insert text, and the .bak when it can be read, as the previous one. */
static int
doc_insert(struct store *s, const struct imp_disc *d, const char *text,
    struct imp_res *r)
{
	struct buf	 bak = BUF_INIT;
	char		*tok, *prev = NULL;
	int		 rc = 0, w;

	if (d->d_file[IMP_STATE_BAK] != NULL &&
	    (rc = read_doc(d, d->d_file[IMP_STATE_BAK], &bak, r)) == -1) {
		buf_free(&bak);
		return -1;
	}
	tok = store_seal(s, text);
	if (rc == 1 && tok != NULL)
		prev = store_seal(s, bak.b_data);
	w = tok == NULL || (rc == 1 && prev == NULL) ||
	    imp_discussion(s, d->d_key) == -1 || store_exec(s, "INSERT INTO "
	    "state_documents (discussion, text, previous, updated_at) VALUES "
	    "(?, ?, ?, ?)", "ttti", d->d_key, tok, prev,
	    (int64_t)time(NULL)) == -1 ? -1 : 0;
	free(tok);
	free(prev);
	if (w == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
		r->ir_fail = EX_IOERR;
		buf_free(&bak);
		return -1;
	}
	imp_sep(&r->ir_parts, ", ");
	buf_adds(&r->ir_parts, rc == 1 ? "state document (with its previous "
	    "version)" : "state document");
	buf_free(&bak);
	return 0;
}

int
imp_state(struct store *s, const struct imp_disc *d, struct imp_res *r)
{
	struct buf	 doc = BUF_INIT;
	bool		 kept, have, same;
	int		 rc;

	if (d->d_file[IMP_STATE] == NULL)
		return 0;
	if ((rc = read_doc(d, d->d_file[IMP_STATE], &doc, r)) != 1) {
		buf_free(&doc);
		return rc;
	}
	if (doc_state(s, d->d_key, doc.b_data, &kept, &have, &same) == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
		r->ir_fail = EX_IOERR;
		rc = -1;
	} else if (!kept || have)
		doc_left(d, r, kept, same);
	else
		rc = doc_insert(s, d, doc.b_data, r);
	buf_free(&doc);
	return rc == -1 ? -1 : 0;
}
