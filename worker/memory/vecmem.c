/* vecmem.c - vector memory in the shared database: facts and their FTS5 rows, the chunk hash log, BM25 keyword search with weights, recency and entity expansion. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../store/store_stmt.h"
#include "vecmem.h"
#include "vecmem_text.h"

/*
 * One FTS5 index serves every discussion (WilmerAI has a database per
 * discussion), so the search joins the facts and keeps the
 * discussion's own; BM25's statistics are those of the whole index.
 * SQL text is fixed here; keywords, keys and weights are bound.
 */

#define SQL_HEAD	"SELECT m.id, m.memory_text, m.date_added," \
			" m.metadata_json FROM vector_fts JOIN" \
			" vector_memories AS m ON m.id = vector_fts.rowid" \
			" WHERE vector_fts MATCH ?1 AND m.discussion = ?2" \
			" ORDER BY "
#define SQL_BM25	"bm25(vector_fts)"
#define SQL_BM25_W	"bm25(vector_fts, CAST(?5 AS REAL), CAST(?6 AS REAL)," \
			" CAST(?7 AS REAL), CAST(?8 AS REAL), CAST(?9 AS REAL))"
#define SQL_RECENCY	" * sluice_recency(m.date_added, ?4)"
#define SQL_TAIL	" ASC, m.id LIMIT ?3"

/*
 * PostgreSQL: the tsvector of vector_fts (store_schema_pg.c says how
 * its ranking differs from bm25), the query in websearch syntax, which
 * reads the FTS5 query vecmem_query writes ("a b" OR "c") the same way
 * and never fails on odd text; -ts_rank so that lower is better, as
 * with bm25, normalised by the length (1: 1 + log of it) as bm25 is.
 * Without weights every column counts the same, as bm25's default;
 * weights go to ts_rank's classes D, C, B, A (text, the mean of
 * entities and key phrases, summary, title), each relative to the
 * largest (ts_rank takes 0 to 1). ts_rank has no term rarity (bm25's
 * IDF): "vehicle; dog" may rank a dog first where SQLite ranks the
 * rarer vehicle first. sluice_recency is a function of the schema
 * there.
 */
#define PG_HEAD		"SELECT m.id, m.memory_text, m.date_added," \
			" m.metadata_json FROM vector_fts JOIN" \
			" vector_memories AS m ON m.id = vector_fts.rowid," \
			" websearch_to_tsquery('english', ?1) AS q" \
			" WHERE vector_fts.tsv @@ q AND m.discussion = ?2" \
			" ORDER BY "
#define PG_RANK		"-ts_rank('{1, 1, 1, 1}', vector_fts.tsv, q, 1)"
#define PG_RANK_W	"-ts_rank(CAST(ARRAY[CAST(?9 AS real), (CAST(?7 AS" \
			" real) + CAST(?8 AS real)) / 2, CAST(?6 AS real)," \
			" CAST(?5 AS real)] AS real[]), vector_fts.tsv, q, 1)"

/* [postgresql][weights][recency] */
static const char *const search_sql[2][2][2] = {
	{ { SQL_HEAD SQL_BM25 SQL_TAIL,
	    SQL_HEAD SQL_BM25 SQL_RECENCY SQL_TAIL },
	  { SQL_HEAD SQL_BM25_W SQL_TAIL,
	    SQL_HEAD SQL_BM25_W SQL_RECENCY SQL_TAIL } },
	{ { PG_HEAD PG_RANK SQL_TAIL, PG_HEAD PG_RANK SQL_RECENCY SQL_TAIL },
	  { PG_HEAD PG_RANK_W SQL_TAIL,
	    PG_HEAD PG_RANK_W SQL_RECENCY SQL_TAIL } },
};

static int64_t
now_s(void)
{
	return (int64_t)(clock_wall_ms() / 1000);
}

static int
touch(struct store *s, const char *key)
{
	return store_exec(s, "INSERT INTO discussions (key, created_at) "
	    "VALUES (?, ?) ON CONFLICT DO NOTHING", "ti", key, now_s()) == -1 ?
	    -1 : 0;
}

/* The fact as Python's json.dumps writes it: ", " and ": ", ASCII only,
 * lower-case hex digits in its u-escapes. Caller frees. */
static char *
py_dumps(json_t *fact)
{
	char	*t = json_dumps(fact, JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	size_t	 i, k;

	for (i = 0; t != NULL && t[i] != '\0'; i++) {
		if (t[i] != '\\')
			continue;
		if (t[++i] != 'u')
			continue;
		for (k = 1; k <= 4 && t[i + k] != '\0'; k++)
			t[i + k] = (char)tolower((unsigned char)t[i + k]);
	}
	return t;
}

int64_t
vecmem_add(struct store *s, const char *key, json_t *fact, bool topics,
    const char *date)
{
	struct vecmem_fts	 f;
	char			*text = vecmem_fact_text(fact), *meta;
	int64_t			 id = -1;

	if (text == NULL)
		return 0;
	meta = py_dumps(fact);
	if (touch(s, key) == 0 && (id = store_insert(s, "INSERT INTO "
	    "vector_memories (discussion, memory_text, date_added, "
	    "metadata_json) VALUES (?, ?, ?, ?) RETURNING id", "tttt", key,
	    text, date, meta)) == 0)
		id = -1;
	if (id > 0) {
		vecmem_flatten(fact, topics, &f);
		if (store_exec(s, "INSERT INTO vector_fts (rowid, title, "
		    "summary, entities, key_phrases, memory_text_unweighted) "
		    "VALUES (?, ?, ?, ?, ?, ?)", "ittttt", id, f.vf_title,
		    f.vf_summary, f.vf_entities, f.vf_key_phrases, text) == -1)
			id = -1;
		vecmem_fts_free(&f);
	}
	free(meta);
	free(text);
	return id;
}

int64_t
vecmem_log_hash(struct store *s, const char *key, const char *hash,
    int64_t now)
{
	int64_t	 id;

	if (touch(s, key) == -1 || (id = store_insert(s, "INSERT INTO "
	    "vector_hash_log (discussion, message_hash, logged_at) VALUES "
	    "(?, ?, ?) RETURNING id", "tti", key, hash, now)) == 0)
		return -1;
	return id;
}

int
vecmem_hashes(struct store *s, const char *key, char ***out, size_t *n,
    int64_t *last_id)
{
	struct store_q	*st;
	int		 r;

	*out = xcalloc(VECMEM_HISTORY + 1, sizeof(**out));
	*n = 0;
	*last_id = 0;
	if ((st = store_stmt(s, "SELECT id, message_hash FROM vector_hash_log "
	    "WHERE discussion = ? ORDER BY id DESC LIMIT ?")) == NULL ||
	    store_bind(s, st, "ti", key, (int64_t)VECMEM_HISTORY) == -1)
		return -1;
	while ((r = store_step(s, st)) == 1) {
		if (*n == 0)
			*last_id = store_col_int(st, 0);
		if (*n < VECMEM_HISTORY)
			(*out)[(*n)++] = xstrdup(store_col_text(st, 1));
	}
	return r;
}

long
vecmem_logged_since(struct store *s, const char *key, const char *hash,
    int64_t since)
{
	struct store_q	*st;
	long		 c;

	if ((st = store_stmt(s, "SELECT count(*) FROM vector_hash_log WHERE "
	    "discussion = ? AND message_hash = ? AND id > ?")) == NULL ||
	    store_bind(s, st, "tti", key, hash, since) == -1 ||
	    store_step(s, st) != 1)
		return -1;
	c = (long)store_col_int(st, 0);
	return store_step(s, st) == -1 ? -1 : c;
}

long
vecmem_store_chunk(struct store *s, const char *key, json_t *const *facts,
    size_t n, bool topics, const char *hash, int64_t since, long own,
    uint64_t now_ms, int64_t *ids)
{
	char		 date[VECMEM_DATELEN];
	long		 logged;
	int64_t		 id;
	size_t		 i;

	vecmem_date(now_ms, date);
	if (store_begin(s) == -1)
		return -1;
	if ((logged = vecmem_logged_since(s, key, hash, since)) == -1)
		goto fail;
	if (logged > own) {
		(void)store_rollback(s);
		return 0;
	}
	for (i = 0; i < n; i++) {
		if ((id = vecmem_add(s, key, facts[i], topics, date)) <= 0)
			goto fail;
		if (ids != NULL)
			ids[i] = id;
	}
	if (vecmem_log_hash(s, key, hash, (int64_t)(now_ms / 1000)) == -1 ||
	    store_commit(s) == -1)
		goto fail;
	return (long)n;
fail:
	(void)store_rollback(s);
	return -1;
}

/* ---- search --------------------------------------------------------- */

/* sluice_recency(date_added, now): vecmem_recency in SQL. */
static double
recency_fn(const char *date, int64_t now)
{
	return date == NULL ? 1.0 : vecmem_recency(date, now);
}

/* The search statement, sluice_recency registered first when it is
 * used (once a connection: store_func; PostgreSQL's schema has it).
 * Not a prepare that fails and is tried again: that failure would
 * count as the store's. */
static struct store_q *
search_stmt(struct store *s, bool weights, bool recency)
{
	bool	 pg = store_is_pg(s);

	if (recency && !pg && store_func(s, "sluice_recency", recency_fn) ==
	    -1)
		return NULL;
	return store_stmt(s, search_sql[pg][weights][recency]);
}

static char *
col_dup(struct store_q *st, int i)
{
	const char	*t = store_col_text(st, i);

	return t != NULL ? xstrdup(t) : NULL;
}

/* Step st to the end, appending its (id, text, date, meta) rows. */
static int
read_rows(struct store *s, struct store_q *st, struct vecmem_rows *out)
{
	struct vecmem_row	*r;
	int			 rc;

	while ((rc = store_step(s, st)) == 1) {
		out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
		r = &out->v[out->n++];
		r->vr_id = store_col_int(st, 0);
		r->vr_text = col_dup(st, 1);
		if (r->vr_text == NULL)
			r->vr_text = xstrdup("");
		r->vr_date = col_dup(st, 2);
		r->vr_meta = col_dup(st, 3);
	}
	return rc;
}

static int
bind_search(struct store *s, struct store_q *st, const char *match,
    const char *key, const struct vecmem_search *q)
{
	char	 w[VECMEM_NWEIGHTS][32];
	double	 top, v;
	int	 i;

	if (q->vs_weights == NULL)
		return q->vs_recency ? store_bind(s, st, "ttii", match, key,
		    (int64_t)q->vs_limit, q->vs_now) : store_bind(s, st, "tti",
		    match, key, (int64_t)q->vs_limit);
	for (i = 0, top = 0; i < VECMEM_NWEIGHTS; i++)
		if (q->vs_weights[i] > top)
			top = q->vs_weights[i];
	for (i = 0; i < VECMEM_NWEIGHTS; i++) {
		v = q->vs_weights[i];
		if (store_is_pg(s))	/* ts_rank takes 0 to 1: relative */
			v = v > 0 && top > 0 ? v / top : 0;
		snprintf(w[i], sizeof(w[i]), "%.17g", v);
	}
	return store_bind(s, st, "ttiittttt", match, key, (int64_t)q->vs_limit,
	    q->vs_now, w[0], w[1], w[2], w[3], w[4]);
}

/* One keyword pass (no expansion). */
static int
keyword_pass(struct store *s, const char *key, const struct vecmem_search *q,
    struct vecmem_rows *out)
{
	char		*match = vecmem_query(q->vs_keywords);
	struct store_q	*st;
	int		 rc = -1;

	if (match == NULL)
		return 0;
	st = search_stmt(s, q->vs_weights != NULL, q->vs_recency);
	if (st != NULL && bind_search(s, st, match, key, q) == 0)
		rc = read_rows(s, st, out);
	free(match);
	return rc;
}

int
vecmem_expand(struct store *s, const char *key, const struct vecmem_search *q,
    struct vecmem_rows *rows)
{
	struct vecmem_rows	 second = { NULL, 0 };
	struct vecmem_search	 q2 = *q;
	char			*more;
	int			 rc = 0;

	if (!q->vs_expand || rows->n == 0 ||
	    (more = vecmem_harvest(rows, q->vs_keywords)) == NULL)
		return 0;
	q2.vs_keywords = more;
	if ((rc = keyword_pass(s, key, &q2, &second)) == 0)
		vecmem_blend(rows, &second, q->vs_limit);
	vecmem_rows_free(&second);
	free(more);
	return rc;
}

int
vecmem_search(struct store *s, const char *key, const struct vecmem_search *q,
    struct vecmem_rows *out)
{
	struct vecmem_rows	 base = { NULL, 0 };
	size_t			 i;
	int			 rc;

	if ((rc = keyword_pass(s, key, q, &base)) == 0)
		rc = vecmem_expand(s, key, q, &base);
	if (rc == 0) {
		out->v = xreallocarray(out->v, out->n + base.n + 1,
		    sizeof(*out->v));
		for (i = 0; i < base.n; i++)
			out->v[out->n++] = base.v[i];
		base.n = 0;
	}
	vecmem_rows_free(&base);
	return rc;
}

int
vecmem_by_ids(struct store *s, const char *key, const int64_t *ids, size_t n,
    struct vecmem_rows *out)
{
	struct store_q	*st;
	size_t		 i;

	for (i = 0; i < n; i++)
		if ((st = store_stmt(s, "SELECT id, memory_text, date_added, "
		    "metadata_json FROM vector_memories WHERE id = ? AND "
		    "discussion = ?")) == NULL ||
		    store_bind(s, st, "it", ids[i], key) == -1 ||
		    read_rows(s, st, out) == -1)
			return -1;
	return 0;
}
