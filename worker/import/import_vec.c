/* import_vec.c - a WilmerAI vector_memory.db (memories with their keyword index and embeddings, the hash log) into the store. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "../store/store_stmt.h"
#include "import_int.h"

/*
 * The source is WilmerAI's schema (vector_db_utils.initialize_vector_db):
 *   memories(id, discussion_id, memory_text, date_added, metadata_json)
 *   memories_fts(title, summary, entities, key_phrases,
 *       memory_text_unweighted), rowid = memories.id
 *   vector_memory_hash_log(id, discussion_id, message_hash, timestamp)
 *   memory_embeddings(memory_id, model, dim, vector): copied with
 *       the memory they belong to, under its new id
 * It is opened read-only and read in one transaction, so a WilmerAI
 * still writing to it is seen at one point in time. That file is
 * WilmerAI's SQLite format, read with sqlite3 here; the shared store
 * is reached through store_stmt.h only.
 */

struct vcopy {
	struct store		*vc_s;
	sqlite3			*vc_db;		/* the source */
	const struct imp_disc	*vc_d;
	struct imp_res		*vc_r;
};

/* The source failed: the discussion is left out as unreadable. */
static int
src_fail(struct vcopy *vc, const char *what)
{
	snprintf(vc->vc_r->ir_err, sizeof(vc->vc_r->ir_err), "%s: %s: %s",
	    vc->vc_d->d_file[IMP_VECTOR], what, vc->vc_db != NULL ?
	    sqlite3_errmsg(vc->vc_db) : "out of memory");
	vc->vc_r->ir_fail = EX_DATAERR;
	return -1;
}

static int
store_fail(struct vcopy *vc)
{
	snprintf(vc->vc_r->ir_err, sizeof(vc->vc_r->ir_err), "%s",
	    store_err(vc->vc_s));
	vc->vc_r->ir_fail = EX_IOERR;
	return -1;
}

static sqlite3_stmt *
src_stmt(struct vcopy *vc, const char *sql)
{
	sqlite3_stmt	*st = NULL;

	if (sqlite3_prepare_v2(vc->vc_db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		src_fail(vc, "cannot read it");
		return NULL;
	}
	return st;
}

/* The number sql (with text parameter arg, or none) counts, or -1. */
static long
src_count(struct vcopy *vc, const char *sql, const char *arg)
{
	sqlite3_stmt	*st = src_stmt(vc, sql);
	long		 n = -1;

	if (st == NULL)
		return -1;
	if (arg != NULL)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	else
		src_fail(vc, "cannot read it");
	sqlite3_finalize(st);
	return n;
}

/* How many rows the store has in table for the discussion, or -1. */
static long
store_count(struct vcopy *vc, const char *sql)
{
	struct store_q	*st = store_stmt(vc->vc_s, sql);
	long		 n;

	if (st == NULL || store_bind(vc->vc_s, st, "t",
	    vc->vc_d->d_key) == -1 || store_step(vc->vc_s, st) != 1)
		return store_fail(vc);
	n = (long)store_col_int(st, 0);
	store_end(st);
	return n;
}

static const char *
col(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* The keyword index row of source memory old as the store's row id; a
 * memory the source never indexed gets its text indexed. */
static int
copy_fts(struct vcopy *vc, sqlite3_stmt *fts, int64_t old, int64_t id,
    const char *text)
{
	int	 rc;

	sqlite3_reset(fts);
	sqlite3_bind_int64(fts, 1, old);
	if ((rc = sqlite3_step(fts)) == SQLITE_ROW)
		rc = store_exec(vc->vc_s, "INSERT INTO vector_fts (rowid, "
		    "title, summary, entities, key_phrases, "
		    "memory_text_unweighted) VALUES (?, ?, ?, ?, ?, ?)",
		    "ittttt", id, col(fts, 0), col(fts, 1), col(fts, 2),
		    col(fts, 3), col(fts, 4));
	else if (rc == SQLITE_DONE)
		rc = store_exec(vc->vc_s, "INSERT INTO vector_fts (rowid, "
		    "memory_text_unweighted) VALUES (?, ?)", "it", id, text);
	else
		return src_fail(vc, "cannot read memories_fts");
	return rc == -1 ? store_fail(vc) : 0;
}

/* The embeddings of source memory old as memory id's (A9.3): each
 * model's vector as it is, when its length is 4 * dim. */
static int
copy_embeddings(struct vcopy *vc, sqlite3_stmt *emb, int64_t old,
    int64_t id)
{
	int64_t	 dim;
	size_t	 len;
	int	 rc;

	if (emb == NULL)
		return 0;
	sqlite3_reset(emb);
	sqlite3_bind_int64(emb, 1, old);
	while ((rc = sqlite3_step(emb)) == SQLITE_ROW) {
		dim = sqlite3_column_int64(emb, 1);
		len = (size_t)sqlite3_column_bytes(emb, 2);
		if (dim <= 0 || len != (size_t)dim * 4) {
			vc->vc_r->ir_bad_vectors++;
			continue;
		}
		if (store_exec(vc->vc_s, "INSERT INTO memory_embeddings "
		    "(memory_id, model, dim, vector) VALUES (?, ?, ?, ?) ON "
		    "CONFLICT (memory_id, model) DO UPDATE SET dim = "
		    "excluded.dim, vector = excluded.vector", "itib", id, col(emb, 0), dim,
		    sqlite3_column_blob(emb, 2), len) == -1)
			return store_fail(vc);
		vc->vc_r->ir_embeddings++;
	}
	return rc == SQLITE_DONE ? 0 : src_fail(vc, "cannot read "
	    "memory_embeddings");
}

/* Every memory in id order (the ids are new; the order is kept), with
 * its keyword index row and its embeddings (emb NULL: none). */
static int
copy_rows(struct vcopy *vc, sqlite3_stmt *mem, sqlite3_stmt *fts,
    sqlite3_stmt *emb)
{
	int64_t	 old, id;
	int	 rc;

	while ((rc = sqlite3_step(mem)) == SQLITE_ROW) {
		old = sqlite3_column_int64(mem, 0);
		if ((vc->vc_r->ir_vectors == 0 &&
		    imp_discussion(vc->vc_s, vc->vc_d->d_key) == -1) ||
		    (id = store_insert(vc->vc_s, "INSERT INTO vector_memories "
		    "(discussion, memory_text, date_added, metadata_json) "
		    "VALUES (?, ?, ?, ?) RETURNING id", "tttt", vc->vc_d->d_key,
		    col(mem, 1), col(mem, 2), col(mem, 3))) <= 0)
			return store_fail(vc);
		if (copy_fts(vc, fts, old, id, col(mem, 1)) == -1 ||
		    copy_embeddings(vc, emb, old, id) == -1)
			return -1;
		vc->vc_r->ir_vectors++;
	}
	return rc == SQLITE_DONE ? 0 : src_fail(vc, "cannot read memories");
}

/* The memories, unless the discussion has vector memories in Sluice. */
static int
copy_memories(struct vcopy *vc, bool has_fts, bool has_emb)
{
	sqlite3_stmt	*mem = NULL, *fts = NULL, *emb = NULL;
	struct imp_res	*r = vc->vc_r;
	long		 have;
	int		 rc = -1;

	if ((have = store_count(vc, "SELECT count(*) FROM vector_memories "
	    "WHERE discussion = ?")) == -1)
		return -1;
	imp_sep(&r->ir_parts, ", ");
	if (have > 0) {
		buf_printf(&r->ir_parts, "vector memories already in Sluice "
		    "(%ld)", have);
		return 0;
	}
	mem = src_stmt(vc, "SELECT id, memory_text, date_added, metadata_json "
	    "FROM memories ORDER BY id");
	fts = src_stmt(vc, has_fts ? "SELECT title, summary, entities, "
	    "key_phrases, memory_text_unweighted FROM memories_fts WHERE "
	    "rowid = ?" : "SELECT 1 WHERE 0 AND ?");
	if (has_emb)
		emb = src_stmt(vc, "SELECT model, dim, vector FROM "
		    "memory_embeddings WHERE memory_id = ? ORDER BY rowid");
	if (mem != NULL && fts != NULL && (emb != NULL || !has_emb))
		rc = copy_rows(vc, mem, fts, emb);
	sqlite3_finalize(mem);
	sqlite3_finalize(fts);
	sqlite3_finalize(emb);
	buf_printf(&r->ir_parts, "%ld vector %s", r->ir_vectors,
	    imp_plural(r->ir_vectors, "memory", "memories"));
	if (r->ir_embeddings > 0)
		buf_printf(&r->ir_parts, " with %ld %s", r->ir_embeddings,
		    imp_plural(r->ir_embeddings, "embedding", "embeddings"));
	if (r->ir_bad_vectors > 0) {
		imp_sep(&r->ir_skips, "; ");
		buf_printf(&r->ir_skips, "%ld %s in memory_embeddings whose "
		    "length is not 4 bytes a dimension", r->ir_bad_vectors,
		    imp_plural(r->ir_bad_vectors, "vector", "vectors"));
	}
	return rc;
}

/* The hash log WilmerAI reads for this discussion (its rows with this
 * discussion_id), oldest first, unless Sluice has one. */
static int
copy_hashlog(struct vcopy *vc)
{
	sqlite3_stmt	*st;
	struct imp_res	*r = vc->vc_r;
	long		 have;
	int64_t		 at;
	int		 rc;

	if ((have = store_count(vc, "SELECT count(*) FROM vector_hash_log "
	    "WHERE discussion = ?")) == -1)
		return -1;
	imp_sep(&r->ir_parts, ", ");
	if (have > 0) {
		buf_printf(&r->ir_parts, "hash log already in Sluice (%ld)",
		    have);
		return 0;
	}
	/* timestamp is UTC ISO-8601 text; SQLite reads its offset. */
	if ((st = src_stmt(vc, "SELECT message_hash, CAST(strftime('%s', "
	    "timestamp) AS INTEGER) FROM vector_memory_hash_log WHERE "
	    "discussion_id = ? ORDER BY timestamp, id")) == NULL)
		return -1;
	sqlite3_bind_text(st, 1, vc->vc_d->d_id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		at = sqlite3_column_type(st, 1) == SQLITE_NULL ?
		    (int64_t)time(NULL) : sqlite3_column_int64(st, 1);
		if ((r->ir_hashlog == 0 && imp_discussion(vc->vc_s,
		    vc->vc_d->d_key) == -1) || store_exec(vc->vc_s, "INSERT "
		    "INTO vector_hash_log (discussion, message_hash, "
		    "logged_at) VALUES (?, ?, ?)", "tti", vc->vc_d->d_key,
		    col(st, 0), at) == -1)
			break;
		r->ir_hashlog++;
	}
	sqlite3_finalize(st);
	buf_printf(&r->ir_parts, "%ld hash log %s", r->ir_hashlog,
	    imp_plural(r->ir_hashlog, "entry", "entries"));
	if (rc == SQLITE_ROW)
		return store_fail(vc);
	return rc == SQLITE_DONE ? 0 : src_fail(vc, "cannot read "
	    "vector_memory_hash_log");
}

/* Which of WilmerAI's tables the source has: bit i for names[i]. */
static int
src_tables(struct vcopy *vc, unsigned *has)
{
	static const char *const names[] = { "memories", "memories_fts",
	    "vector_memory_hash_log", "memory_embeddings" };
	long	 n;
	size_t	 i;

	*has = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = src_count(vc, "SELECT count(*) FROM sqlite_master WHERE "
		    "type = 'table' AND name = ?", names[i]);
		if (n == -1)
			return -1;
		if (n > 0)
			*has |= 1u << i;
	}
	return 0;
}

static int
copy_all(struct vcopy *vc)
{
	unsigned	 has;

	if (sqlite3_exec(vc->vc_db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return src_fail(vc, "cannot read it");
	if (src_tables(vc, &has) == -1)
		return -1;
	if ((has & 1) && copy_memories(vc, (has & 2) != 0, (has & 8) != 0) ==
	    -1)
		return -1;
	if ((has & 4) && copy_hashlog(vc) == -1)
		return -1;
	return 0;
}

int
imp_vec(struct store *s, const struct imp_disc *d, struct imp_res *r)
{
	struct vcopy	 vc = { s, NULL, d, r };
	int		 rc;

	if (d->d_file[IMP_VECTOR] == NULL)
		return 0;
	rc = sqlite3_open_v2(d->d_file[IMP_VECTOR], &vc.vc_db,
	    SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK)
		rc = src_fail(&vc, "cannot open it");
	else {
		/* A WilmerAI writing to it holds the lock briefly. */
		sqlite3_busy_timeout(vc.vc_db, 5000);
		rc = copy_all(&vc);
	}
	sqlite3_close(vc.vc_db);
	return rc;
}
