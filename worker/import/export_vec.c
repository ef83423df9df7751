/* export_vec.c - a discussion's vector memories, keyword index, embeddings and hash log as a WilmerAI vector_memory.db. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "../../common/xmem.h"
#include "../store/store_stmt.h"
#include "export_int.h"

/*
 * The file written is WilmerAI's own SQLite format, made with sqlite3
 * here; the rows come from the shared store through store_stmt.h only.
 */

/* WilmerAI's schema (vector_db_utils.initialize_vector_db). */
static const char schema[] =
	"CREATE TABLE IF NOT EXISTS memories (\n"
	"    id INTEGER PRIMARY KEY,\n"
	"    discussion_id TEXT NOT NULL,\n"
	"    memory_text TEXT NOT NULL,\n"
	"    date_added TEXT NOT NULL,\n"
	"    metadata_json TEXT\n"
	");\n"
	"CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(\n"
	"    title,\n"
	"    summary,\n"
	"    entities,\n"
	"    key_phrases,\n"
	"    memory_text_unweighted,\n"
	"    tokenize='porter'\n"
	");\n"
	"CREATE TABLE IF NOT EXISTS vector_memory_hash_log (\n"
	"    id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
	"    discussion_id TEXT NOT NULL,\n"
	"    message_hash TEXT NOT NULL,\n"
	"    timestamp DATETIME NOT NULL\n"
	");\n"
	"CREATE TABLE IF NOT EXISTS memory_embeddings (\n"
	"    memory_id INTEGER NOT NULL,\n"
	"    model TEXT NOT NULL,\n"
	"    dim INTEGER NOT NULL,\n"
	"    vector BLOB NOT NULL,\n"
	"    PRIMARY KEY (memory_id, model)\n"
	");\n";

struct vout {
	struct store		*vo_s;
	sqlite3			*vo_db;		/* the file written */
	const struct exp_disc	*vo_d;
	struct imp_res		*vo_r;
	char			*vo_path;
};

static int
out_fail(struct vout *vo, const char *what)
{
	snprintf(vo->vo_r->ir_err, sizeof(vo->vo_r->ir_err), "%s: %s: %s",
	    vo->vo_path, what, vo->vo_db != NULL ? sqlite3_errmsg(vo->vo_db) :
	    "out of memory");
	vo->vo_r->ir_fail = EX_CANTCREAT;
	return -1;
}

static int
db_fail(struct vout *vo)
{
	snprintf(vo->vo_r->ir_err, sizeof(vo->vo_r->ir_err), "%s",
	    store_err(vo->vo_s));
	vo->vo_r->ir_fail = EX_IOERR;
	return -1;
}

/* Whether the discussion has rows for a vector_memory.db: 1, 0, -1. */
static int
has_rows(struct vout *vo)
{
	struct store_q	*st;
	int		 r;

	if ((st = store_stmt(vo->vo_s, "SELECT EXISTS (SELECT 1 FROM "
	    "vector_memories WHERE discussion = ?1) OR EXISTS (SELECT 1 FROM "
	    "vector_hash_log WHERE discussion = ?1)")) == NULL ||
	    store_bind(vo->vo_s, st, "t", vo->vo_d->e_key) == -1 ||
	    store_step(vo->vo_s, st) != 1)
		return -1;
	r = (int)store_col_int(st, 0);
	store_end(st);
	return r;
}

/* Bind column col of the store's row q, as the type it has, to
 * parameter k of the file's statement st. */
static void
bind_col(sqlite3_stmt *st, int k, struct store_q *q, int col)
{
	const void	*p;
	size_t		 n;

	switch (store_col_type(q, col)) {
	case STORE_INTEGER:
		sqlite3_bind_int64(st, k, store_col_int(q, col));
		break;
	case STORE_FLOAT:
		sqlite3_bind_double(st, k, store_col_double(q, col));
		break;
	case STORE_TEXT:
		sqlite3_bind_text(st, k, store_col_text(q, col), -1,
		    SQLITE_TRANSIENT);
		break;
	case STORE_BLOB:
		if ((p = store_col_blob(q, col, &n)) == NULL)
			sqlite3_bind_zeroblob(st, k, 0);
		else
			sqlite3_bind_blob64(st, k, p, n, SQLITE_TRANSIENT);
		break;
	default:
		sqlite3_bind_null(st, k);
		break;
	}
}

/* Run sql on the file with the values of row src's columns from ..
 * from + n - 1 bound after the leading ones (id when it is not 0, then
 * the discussion id when did). */
static int
put(struct vout *vo, const char *sql, int64_t id, bool did,
    struct store_q *src, int from, int n)
{
	sqlite3_stmt	*st = NULL;
	int		 i, k = 1, rc;

	if (sqlite3_prepare_v2(vo->vo_db, sql, -1, &st, NULL) != SQLITE_OK)
		return out_fail(vo, "cannot write it");
	if (id > 0)
		sqlite3_bind_int64(st, k++, id);
	if (did)
		sqlite3_bind_text(st, k++, vo->vo_d->e_id, -1, SQLITE_STATIC);
	for (i = from; i < from + n; i++)
		bind_col(st, k++, src, i);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : out_fail(vo, "cannot write it");
}

/* Memory old's keyword index row and embeddings under its new id. */
static int
copy_extras(struct vout *vo, int64_t old, int64_t id)
{
	struct store_q	*st;
	int		 r;

	if ((st = store_stmt(vo->vo_s, "SELECT title, summary, entities, "
	    "key_phrases, memory_text_unweighted FROM vector_fts WHERE rowid = "
	    "?")) == NULL || store_bind(vo->vo_s, st, "i", old) == -1 ||
	    (r = store_step(vo->vo_s, st)) == -1)
		return db_fail(vo);
	if (r == 1) {
		r = put(vo, "INSERT INTO memories_fts (rowid, title, summary, "
		    "entities, key_phrases, memory_text_unweighted) VALUES (?, "
		    "?, ?, ?, ?, ?)", id, false, st, 0, 5);
		store_end(st);
		if (r == -1)
			return -1;
	}
	if ((st = store_stmt(vo->vo_s, "SELECT model, dim, vector FROM "
	    "memory_embeddings WHERE memory_id = ? ORDER BY model")) == NULL ||
	    store_bind(vo->vo_s, st, "i", old) == -1)
		return db_fail(vo);
	while ((r = store_step(vo->vo_s, st)) == 1) {
		if (put(vo, "INSERT INTO memory_embeddings (memory_id, model, "
		    "dim, vector) VALUES (?, ?, ?, ?)", id, false, st, 0, 3) ==
		    -1) {
			store_end(st);
			return -1;
		}
		vo->vo_r->ir_embeddings++;
	}
	return r == -1 ? db_fail(vo) : 0;
}

/* The memories, in the store's order, numbered from 1. */
static int
copy_memories(struct vout *vo)
{
	struct store_q	*st;
	int64_t		 id = 0;
	int		 r;

	if ((st = store_stmt(vo->vo_s, "SELECT id, memory_text, date_added, "
	    "metadata_json FROM vector_memories WHERE discussion = ? ORDER BY "
	    "id")) == NULL || store_bind(vo->vo_s, st, "t",
	    vo->vo_d->e_key) == -1)
		return db_fail(vo);
	while ((r = store_step(vo->vo_s, st)) == 1) {
		id++;
		if (put(vo, "INSERT INTO memories (id, discussion_id, "
		    "memory_text, date_added, metadata_json) VALUES (?, ?, ?, ?, "
		    "?)", id, true, st, 1, 3) == -1 ||
		    copy_extras(vo, store_col_int(st, 0), id) == -1) {
			store_end(st);
			return -1;
		}
		vo->vo_r->ir_vectors++;
	}
	return r == -1 ? db_fail(vo) : 0;
}

/*
 * WilmerAI's hash log time: datetime.now(timezone.utc).isoformat(). The
 * store keeps whole seconds; WilmerAI orders the log by this text, so
 * an entry logged in the same second as the one before it is written a
 * microsecond later, and the order holds.
 */
static void
iso_time(int64_t t, int64_t *last, long *us, char out[40])
{
	struct tm	 tm;
	time_t		 tt;
	size_t		 n;

	if (t <= *last && *us < 999999)
		(*us)++;
	else {
		*last = t;
		*us = 0;
	}
	tt = (time_t)*last;
	gmtime_r(&tt, &tm);
	n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	if (*us > 0)
		n += (size_t)snprintf(out + n, 40 - n, ".%06ld", *us);
	snprintf(out + n, 40 - n, "+00:00");
}

static int
copy_hash_log(struct vout *vo)
{
	struct store_q	*st;
	sqlite3_stmt	*in = NULL;
	int64_t		 last = INT64_MIN;
	long		 us = 0;
	char		 when[40];
	int		 r;

	if ((st = store_stmt(vo->vo_s, "SELECT message_hash, logged_at FROM "
	    "vector_hash_log WHERE discussion = ? ORDER BY id")) == NULL ||
	    store_bind(vo->vo_s, st, "t", vo->vo_d->e_key) == -1)
		return db_fail(vo);
	if (sqlite3_prepare_v2(vo->vo_db, "INSERT INTO vector_memory_hash_log "
	    "(discussion_id, message_hash, timestamp) VALUES (?, ?, ?)", -1,
	    &in, NULL) != SQLITE_OK) {
		store_end(st);
		return out_fail(vo, "cannot write it");
	}
	while ((r = store_step(vo->vo_s, st)) == 1) {
		iso_time(store_col_int(st, 1), &last, &us, when);
		sqlite3_reset(in);
		sqlite3_bind_text(in, 1, vo->vo_d->e_id, -1, SQLITE_STATIC);
		bind_col(in, 2, st, 0);
		sqlite3_bind_text(in, 3, when, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(in) != SQLITE_DONE) {
			store_end(st);
			r = -2;
			break;
		}
		vo->vo_r->ir_hashlog++;
	}
	sqlite3_finalize(in);
	if (r == -2)
		return out_fail(vo, "cannot write it");
	return r == -1 ? db_fail(vo) : 0;
}

static void
report(struct imp_res *r)
{
	if (r->ir_vectors > 0) {
		imp_sep(&r->ir_parts, ", ");
		buf_printf(&r->ir_parts, "%ld vector %s", r->ir_vectors,
		    imp_plural(r->ir_vectors, "memory", "memories"));
		if (r->ir_embeddings > 0)
			buf_printf(&r->ir_parts, " with %ld %s",
			    r->ir_embeddings, imp_plural(r->ir_embeddings,
			    "embedding", "embeddings"));
	}
	if (r->ir_hashlog > 0) {
		imp_sep(&r->ir_parts, ", ");
		buf_printf(&r->ir_parts, "%ld hash log %s", r->ir_hashlog,
		    imp_plural(r->ir_hashlog, "entry", "entries"));
	}
}

/* The schema and every row in one transaction of the new file. */
static int
fill(struct vout *vo)
{
	if (sqlite3_exec(vo->vo_db, schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(vo->vo_db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return out_fail(vo, "cannot create it");
	if (copy_memories(vo) == -1 || copy_hash_log(vo) == -1)
		return -1;
	if (sqlite3_exec(vo->vo_db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return out_fail(vo, "cannot write it");
	return 0;
}

int
exp_vec(struct store *s, const struct exp_disc *d, struct imp_res *r)
{
	struct vout	 vo = { s, NULL, d, r, NULL };
	int		 rc;

	if ((rc = has_rows(&vo)) == -1)
		return db_fail(&vo);
	if (rc == 0)
		return 0;
	vo.vo_path = xasprintf("%s/vector_memory.db", d->e_dir);
	if (sqlite3_open_v2(vo.vo_path, &vo.vo_db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		rc = out_fail(&vo, "cannot create it");
		sqlite3_close(vo.vo_db);
		free(vo.vo_path);
		return rc;
	}
	if ((rc = fill(&vo)) == 0)
		report(r);
	if (sqlite3_close(vo.vo_db) != SQLITE_OK && rc == 0)
		rc = out_fail(&vo, "cannot close it");
	free(vo.vo_path);
	return rc;
}
