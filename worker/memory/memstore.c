/* memstore.c - a discussion's memory ledger, rolling summary and condensation tracker in the shared database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/xmem.h"
#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "memstore.h"

void
mem_blocks_free(struct mem_blocks *b)
{
	size_t	 i;

	for (i = 0; i < b->n; i++) {
		free(b->v[i].mb_text);
		free(b->v[i].mb_hash);
	}
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

static char *
col_dup(struct store_q *st, int col)
{
	const char	*t = store_col_text(st, col);

	return xstrdup(t != NULL ? t : "");
}

/* 1 when the discussion has a ledger, 0 when not, -1 on error. */
static int
has_ledger(struct store *s, const char *key)
{
	struct store_q	*st = store_stmt(s, "SELECT 1 FROM memory_ledgers "
			    "WHERE discussion = ?");
	int		 r;

	if (st == NULL || store_bind(s, st, "t", key) == -1)
		return -1;
	if ((r = store_step(s, st)) == 1)
		store_end(st);
	return r;
}

/* The (id, text, hash) rows of bound statement st into out (empty on
 * error), the texts opened (store_unseal: discussion key's what). 0,
 * or -1. */
static int
read_blocks(struct store *s, struct store_q *st, const char *key,
    const char *what, struct mem_blocks *out)
{
	struct mem_block *m;
	int		 r;

	while ((r = store_step(s, st)) == 1) {
		out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
		m = &out->v[out->n++];
		m->mb_id = store_col_int(st, 0);
		m->mb_hash = col_dup(st, 2);
		if (store_unseal(s, key, what,
		    store_col_text(st, 1),
		    &m->mb_text) == -1) {
			store_end(st);
			r = -1;
			break;
		}
	}
	if (r == -1)
		mem_blocks_free(out);
	return r;
}

int
memstore_read(struct store *s, const char *key, struct mem_blocks *out,
    bool *ledger)
{
	struct store_q	*st;
	int		 r;

	memset(out, 0, sizeof(*out));
	if (ledger != NULL) {
		if ((r = has_ledger(s, key)) == -1)
			return -1;
		*ledger = r == 1;
	}
	st = store_stmt(s, "SELECT id, text, hash FROM memories WHERE "
	    "discussion = ? ORDER BY id");
	if (st == NULL || store_bind(s, st, "t", key) == -1)
		return -1;
	return read_blocks(s, st, key, "memories", out);
}

/* Inside a transaction: the discussion's row. */
static int
ensure_discussion(struct store *s, const char *key)
{
	return store_exec(s, "INSERT INTO discussions (key, created_at) "
	    "VALUES (?, ?) ON CONFLICT DO NOTHING", "ti", key,
	    (int64_t)time(NULL)) == -1 ? -1 : 0;
}

/* Inside a transaction: the discussion and its ledger rows. */
static int
ensure_ledger(struct store *s, const char *key)
{
	if (ensure_discussion(s, key) == -1 ||
	    store_exec(s, "INSERT INTO memory_ledgers (discussion) VALUES (?) "
	    "ON CONFLICT DO NOTHING", "t", key) == -1)
		return -1;
	return 0;
}

/* Commit, or roll back when r is -1; returns r (or -1 when the commit
 * fails). */
static int64_t
finish(struct store *s, int64_t r)
{
	if (r == -1) {
		(void)store_rollback(s);
		return -1;
	}
	return store_commit(s) == -1 ? -1 : r;
}

int
memstore_touch_ledger(struct store *s, const char *key, bool *existed)
{
	int	 r = has_ledger(s, key);

	if (r == -1)
		return -1;
	if ((*existed = r == 1))
		return 0;
	if (store_begin(s) == -1)
		return -1;
	return (int)finish(s, ensure_ledger(s, key));
}

/* The id of the discussion's last memory (0 when none), or -1. */
static int64_t
last_id(struct store *s, const char *key)
{
	struct store_q	*st = store_stmt(s, "SELECT coalesce(max(id), 0) FROM "
			    "memories WHERE discussion = ?");
	int64_t		 id;

	if (st == NULL || store_bind(s, st, "t", key) == -1 ||
	    store_step(s, st) != 1)
		return -1;
	id = store_col_int(st, 0);
	store_end(st);
	return id;
}

static int64_t
append_locked(struct store *s, const char *key, int64_t expect,
    const char *text, const char *hash)
{
	int64_t	 last = last_id(s, key), id;
	char	*tok;

	if (last == -1 || ensure_ledger(s, key) == -1)
		return -1;
	if (last != expect)
		return 0;
	if (store_seal_prepare(s, "memories", key) == -1 ||
	    (tok = store_seal(s, text)) == NULL)
		return -1;
	id = store_insert(s, "INSERT INTO memories (discussion, text, hash, "
	    "created_at) VALUES (?, ?, ?, ?) RETURNING id", "ttti", key, tok,
	    hash, (int64_t)time(NULL));
	free(tok);
	return id > 0 ? id : -1;
}

int64_t
memstore_append(struct store *s, const char *key, int64_t expect,
    const char *text, const char *hash)
{
	if (store_begin(s) == -1)
		return -1;
	return finish(s, append_locked(s, key, expect, text, hash));
}

/* 1 when ids first..last of the discussion are still count rows. */
static int
run_intact(struct store *s, const char *key, int64_t first, int64_t last,
    size_t count)
{
	struct store_q	*st = store_stmt(s, "SELECT count(*), min(id), "
			    "max(id) FROM memories WHERE discussion = ? AND "
			    "id BETWEEN ? AND ?");
	int		 ok;

	if (st == NULL || store_bind(s, st, "tii", key, first, last) == -1 ||
	    store_step(s, st) != 1)
		return -1;
	ok = (size_t)store_col_int(st, 0) == count &&
	    store_col_int(st, 1) == first &&
	    store_col_int(st, 2) == last;
	store_end(st);
	return ok;
}

static int
condense_locked(struct store *s, const char *key, int64_t first,
    int64_t last, size_t count, const char *text, const char *hash)
{
	int	 r = run_intact(s, key, first, last, count);
	char	*tok;

	if (r != 1)
		return r;
	if (store_seal_prepare(s, "memories", key) == -1 ||
	    (tok = store_seal(s, text)) == NULL)
		return -1;
	r = store_exec(s, "DELETE FROM memories WHERE discussion = ? AND id "
	    "BETWEEN ? AND ?", "tii", key, first, last) == -1 ||
	    store_exec(s, "INSERT INTO memories (id, discussion, text, hash, "
	    "created_at) VALUES (?, ?, ?, ?, ?)", "ittti", first, key, tok,
	    hash, (int64_t)time(NULL)) != 1 ||
	    ensure_ledger(s, key) == -1 ||
	    store_exec(s, "UPDATE memory_ledgers SET condensed_hash = ? "
	    "WHERE discussion = ?", "tt", hash, key) == -1 ? -1 : 1;
	free(tok);
	return r;
}

int
memstore_condense(struct store *s, const char *key, int64_t first,
    int64_t last, size_t count, const char *text, const char *hash)
{
	if (store_begin(s) == -1)
		return -1;
	return (int)finish(s, condense_locked(s, key, first, last, count, text,
	    hash));
}

/* One row of one or two text columns: 1 found (copies), 0 none, -1.
 * The first is a sealed text (store_unseal) when what names it, else
 * plain. */
static int
get_texts(struct store *s, const char *sql, const char *key,
    const char *what, char **a, char **b)
{
	struct store_q	*st = store_stmt(s, sql);
	int		 r;

	if (st == NULL || store_bind(s, st, "t", key) == -1)
		return -1;
	if ((r = store_step(s, st)) != 1)
		return r;
	if (store_col_null(st, 0)) {
		store_end(st);
		return 0;
	}
	if (what == NULL)
		*a = col_dup(st, 0);
	else if (store_unseal(s, key, what,
	    store_col_text(st, 0), a) == -1) {
		store_end(st);
		return -1;
	}
	if (b != NULL)
		*b = col_dup(st, 1);
	store_end(st);
	return 1;
}

int
memstore_summary(struct store *s, const char *key, char **text, char **hash)
{
	return get_texts(s, "SELECT text, hash FROM summaries WHERE "
	    "discussion = ?", key, "chat summary", text, hash);
}

static int
summary_put_locked(struct store *s, const char *key, const char *text,
    const char *hash)
{
	char	*tok;
	int	 r;

	if (ensure_discussion(s, key) == -1 ||
	    store_seal_prepare(s, "summaries", key) == -1 ||
	    (tok = store_seal(s, text)) == NULL)
		return -1;
	r = store_exec(s, "INSERT INTO summaries (discussion, text, hash, "
	    "updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (discussion) DO "
	    "UPDATE SET text = excluded.text, hash = excluded.hash, "
	    "updated_at = excluded.updated_at", "ttti", key, tok, hash,
	    (int64_t)time(NULL));
	free(tok);
	return r == -1 ? -1 : 0;
}

int
memstore_summary_put(struct store *s, const char *key, const char *text,
    const char *hash)
{
	if (store_begin(s) == -1)
		return -1;
	return (int)finish(s, summary_put_locked(s, key, text, hash));
}

int
memstore_tracker(struct store *s, const char *key, char **hash)
{
	return get_texts(s, "SELECT condensed_hash FROM memory_ledgers WHERE "
	    "discussion = ?", key, NULL, hash, NULL);
}

static int
tracker_put_locked(struct store *s, const char *key, const char *hash)
{
	if (ensure_ledger(s, key) == -1 ||
	    store_exec(s, "UPDATE memory_ledgers SET condensed_hash = ? "
	    "WHERE discussion = ?", "tt", hash, key) == -1)
		return -1;
	return 0;
}

int
memstore_tracker_put(struct store *s, const char *key, const char *hash)
{
	if (store_begin(s) == -1)
		return -1;
	return (int)finish(s, tracker_put_locked(s, key, hash));
}

int
memstore_state(struct store *s, const char *key, char **text)
{
	return get_texts(s, "SELECT text FROM state_documents WHERE "
	    "discussion = ?", key, "state document", text, NULL);
}

static int
state_put_locked(struct store *s, const char *key, const char *text)
{
	char	*tok;
	int	 r;

	if (ensure_discussion(s, key) == -1 ||
	    store_seal_prepare(s, "state_documents", key) == -1 ||
	    (tok = store_seal(s, text)) == NULL)
		return -1;
	r = store_exec(s, "INSERT INTO state_documents (discussion, text, "
	    "updated_at) VALUES (?, ?, ?) ON CONFLICT (discussion) DO UPDATE "
	    "SET previous = state_documents.text, text = excluded.text, "
	    "updated_at = excluded.updated_at", "tti", key, tok,
	    (int64_t)time(NULL));
	free(tok);
	return r == -1 ? -1 : 0;
}

int
memstore_state_put(struct store *s, const char *key, const char *text)
{
	if (store_begin(s) == -1)
		return -1;
	return (int)finish(s, state_put_locked(s, key, text));
}

int
memstore_section(struct store *s, const char *key, const char *section,
    struct mem_blocks *out)
{
	struct store_q	*st;

	memset(out, 0, sizeof(*out));
	st = store_stmt(s, "SELECT pos, text, hash FROM compactor_sections "
	    "WHERE discussion = ? AND section = ? ORDER BY pos");
	if (st == NULL || store_bind(s, st, "tt", key, section) == -1)
		return -1;
	return read_blocks(s, st, key, "context compactor state", out);
}

/* Inside a transaction: section's entries replaced by b's. */
static int
section_put_locked(struct store *s, const char *key, const char *section,
    const struct mem_blocks *b)
{
	size_t	 i;
	char	*tok;
	int	 r = 0;

	if (store_exec(s, "DELETE FROM compactor_sections WHERE discussion = ? "
	    "AND section = ?", "tt", key, section) == -1)
		return -1;
	for (i = 0; i < b->n && r == 0; i++) {
		if ((tok = store_seal(s, b->v[i].mb_text)) == NULL)
			return -1;
		r = store_exec(s, "INSERT INTO compactor_sections (discussion, "
		    "section, pos, text, hash) VALUES (?, ?, ?, ?, ?)", "ttitt",
		    key, section, (int64_t)i, tok, b->v[i].mb_hash) == -1 ?
		    -1 : 0;
		free(tok);
	}
	return r;
}

int
memstore_sections_put(struct store *s, const char *key,
    const struct mem_blocks *old, const struct mem_blocks *oldest)
{
	int	 r;

	if (store_begin(s) == -1)
		return -1;
	r = ensure_discussion(s, key);
	if (r == 0)
		r = store_seal_prepare(s, "compactor_sections", key);
	if (r == 0 && old != NULL)
		r = section_put_locked(s, key, "old", old);
	if (r == 0 && oldest != NULL)
		r = section_put_locked(s, key, "oldest", oldest);
	return (int)finish(s, r);
}

int
memstore_vision(struct store *s, const char *key, const char *msg_key,
    char **text)
{
	struct store_q	*st = store_stmt(s, "SELECT text FROM vision_responses "
			    "WHERE discussion = ? AND message_key = ?");
	int		 r;

	*text = NULL;
	if (st == NULL || store_bind(s, st, "tt", key, msg_key) == -1)
		return -1;
	if ((r = store_step(s, st)) != 1)
		return r;
	r = store_unseal(s, key, "vision responses",
	    store_col_text(st, 0), text);
	store_end(st);
	return r == -1 ? -1 : 1;
}

static int
vision_put_locked(struct store *s, const char *key, const char *msg_key,
    const char *text)
{
	char	*tok;
	int	 r;

	if (ensure_discussion(s, key) == -1 ||
	    store_seal_prepare(s, "vision_responses", key) == -1 ||
	    (tok = store_seal(s, text)) == NULL)
		return -1;
	r = store_exec(s, "INSERT INTO vision_responses (discussion, "
	    "message_key, text, created_at) VALUES (?, ?, ?, ?) ON CONFLICT "
	    "(discussion, message_key) DO UPDATE SET text = excluded.text",
	    "ttti", key, msg_key, tok, (int64_t)time(NULL));
	free(tok);
	return r == -1 ? -1 : 0;
}

int
memstore_vision_put(struct store *s, const char *key, const char *msg_key,
    const char *text)
{
	if (store_begin(s) == -1)
		return -1;
	return (int)finish(s, vision_put_locked(s, key, msg_key, text));
}
