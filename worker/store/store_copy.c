/* store_copy.c - one store's rows into another (SQLite or PostgreSQL, either way), table by table, idempotently, and checked row by row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "store_copy.h"
#include "store_int.h"
#include "store_stmt.h"

#define MAXCOLS	8

/*
 * The tables of user data (store_schema.c says what each holds), parents
 * before the rows that refer to them, so that the target's foreign keys
 * hold at every insert. Columns are named one by one, keys first: the
 * two dialects have the same names, and PostgreSQL's generated tsvector
 * (vector_fts.tsv) is left for the target to compute. A new table in the
 * schema is a new row here, or one of skipped[] (check_copystore fails
 * until it is either).
 */
static const struct ctab {
	const char	*ct_name;
	int		 ct_nkeys;	/* the first ct_nkeys columns */
	const char	*ct_serial;	/* PostgreSQL's identity column */
	const char	*ct_cols[MAXCOLS];	/* NULL-ended */
} tables[] = {
	{ "discussions", 1, NULL, { "key", "created_at" } },
	{ "memories", 1, "id",
	    { "id", "discussion", "text", "hash", "created_at" } },
	{ "memory_ledgers", 1, NULL, { "discussion", "condensed_hash" } },
	{ "summaries", 1, NULL,
	    { "discussion", "text", "hash", "updated_at" } },
	{ "state_documents", 1, NULL,
	    { "discussion", "text", "previous", "updated_at" } },
	{ "timestamps", 2, NULL, { "discussion", "msg_hash", "stamp" } },
	{ "vector_memories", 1, "id", { "id", "discussion", "memory_text",
	    "date_added", "metadata_json" } },
	/* the keyword index's text: the target indexes it (FTS5 or the
	 * tsvector), so nothing derived is copied */
	{ "vector_fts", 1, NULL, { "rowid", "title", "summary", "entities",
	    "key_phrases", "memory_text_unweighted" } },
	{ "vector_hash_log", 1, "id",
	    { "id", "discussion", "message_hash", "logged_at" } },
	{ "compactor_sections", 3, NULL,
	    { "discussion", "section", "pos", "text", "hash" } },
	{ "vision_responses", 2, NULL,
	    { "discussion", "message_key", "text", "created_at" } },
	{ "memory_embeddings", 2, NULL,
	    { "memory_id", "model", "dim", "vector" } },
};
#define NTABLES	((int)(sizeof(tables) / sizeof(tables[0])))

/* Tables that are not copied. */
static const struct {
	const char	*sk_name;
	const char	*sk_why;
} skipped[] = {
	{ "response_cache", "a cache of LLM answers: expendable, refilled "
	    "as requests come" },
	{ "workflow_locks", "held by running processes, and none may run "
	    "during a copy" },
};
#define NSKIPPED	((int)(sizeof(skipped) / sizeof(skipped[0])))

/* A table's statements. */
struct csql {
	char	*cs_scan;	/* every row, by key */
	char	*cs_find;	/* the row of a key */
	char	*cs_put;	/* a new row */
};

/* What the target holds for a source row. */
enum found {
	FOUND_NONE,
	FOUND_SAME,
	FOUND_OTHER,
};

int
store_copy_ntables(void)
{
	return NTABLES;
}

const char *
store_copy_table(int i)
{
	return i >= 0 && i < NTABLES ? tables[i].ct_name : NULL;
}

const char *
store_copy_skipped(int i, const char **why)
{
	if (i < 0 || i >= NSKIPPED)
		return NULL;
	*why = skipped[i].sk_why;
	return skipped[i].sk_name;
}

/* cols[from..to) into b joined by sep, each its name then after, or
 * only "?" when after is NULL. */
static void
join(struct buf *b, const char *const *cols, int from, int to,
    const char *after, const char *sep)
{
	int	 i;

	for (i = from; i < to && cols[i] != NULL; i++) {
		if (i > from)
			buf_adds(b, sep);
		buf_adds(b, after != NULL ? cols[i] : "?");
		if (after != NULL)
			buf_adds(b, after);
	}
}

static int
ncols(const struct ctab *t)
{
	int	 n = 0;

	while (n < MAXCOLS && t->ct_cols[n] != NULL)
		n++;
	return n;
}

static void
csql_make(const struct ctab *t, struct csql *q)
{
	struct buf	 b = BUF_INIT;
	int		 n = ncols(t);

	buf_adds(&b, "SELECT ");
	join(&b, t->ct_cols, 0, n, "", ", ");
	buf_printf(&b, " FROM %s ORDER BY ", t->ct_name);
	join(&b, t->ct_cols, 0, t->ct_nkeys, "", ", ");
	q->cs_scan = buf_take(&b);

	buf_adds(&b, "SELECT ");
	join(&b, t->ct_cols, 0, n, "", ", ");
	buf_printf(&b, " FROM %s WHERE ", t->ct_name);
	join(&b, t->ct_cols, 0, t->ct_nkeys, " = ?", " AND ");
	q->cs_find = buf_take(&b);

	buf_printf(&b, "INSERT INTO %s (", t->ct_name);
	join(&b, t->ct_cols, 0, n, "", ", ");
	buf_adds(&b, ") VALUES (");
	join(&b, t->ct_cols, 0, n, NULL, ", ");
	buf_adds(&b, ")");
	q->cs_put = buf_take(&b);
}

static void
csql_free(struct csql *q)
{
	free(q->cs_scan);
	free(q->cs_find);
	free(q->cs_put);
}

/* "id=5" or "discussion=alice, msg_hash=m1": the key of src's row, for
 * messages (keys only: values may be private, or sealed). */
static void
key_text(const struct ctab *t, struct store_q *src, char *out, size_t len)
{
	struct buf	 b = BUF_INIT;
	const char	*v;
	int		 i;

	for (i = 0; i < t->ct_nkeys; i++) {
		v = store_col_text(src, i);
		buf_printf(&b, "%s%s=%.40s%s", i > 0 ? ", " : "",
		    t->ct_cols[i], v != NULL ? v : "NULL",
		    v != NULL && strlen(v) > 40 ? "..." : "");
	}
	snprintf(out, len, "%s", b.b_data != NULL ? b.b_data : "");
	buf_free(&b);
}

/* Bind parameter i of dst to column col of src's row, with its type: an
 * integer stays one, a blob stays bytes (an empty one is not NULL). */
static int
bind_from(struct store *to, struct store_q *dst, int i, struct store_q *src,
    int col)
{
	const struct store_driver	*d = to->s_drv;
	const void			*p;
	size_t				 n;
	int				 rc;

	switch (store_col_type(src, col)) {
	case STORE_NULL:
		rc = d->dr_bind_null(dst->q_st, i);
		break;
	case STORE_INTEGER:
		rc = d->dr_bind_int(dst->q_st, i, store_col_int(src, col));
		break;
	case STORE_BLOB:
		p = store_col_blob(src, col, &n);
		rc = d->dr_bind_blob(dst->q_st, i, p != NULL ? p : "", n);
		break;
	default:
		rc = d->dr_bind_text(dst->q_st, i, store_col_text(src, col));
		break;
	}
	return rc != 0 ? store_fail(to, rc, "bind") : 0;
}

/* Whether column col holds the same value in a's row and b's: NULL only
 * equals NULL, bytes equal bytes, anything else compares as its text
 * (an integer is "5" on either backend). */
static bool
same_value(struct store_q *a, struct store_q *b, int col)
{
	enum store_type	 ta = store_col_type(a, col);
	enum store_type	 tb = store_col_type(b, col);
	const void	*pa, *pb;
	size_t		 na, nb;

	if (ta == STORE_NULL || tb == STORE_NULL)
		return ta == tb;
	if (ta == STORE_BLOB || tb == STORE_BLOB) {
		if (ta != tb)
			return false;
		pa = store_col_blob(a, col, &na);
		pb = store_col_blob(b, col, &nb);
		return na == nb && (na == 0 || memcmp(pa, pb, na) == 0);
	}
	return strcmp(store_col_text(a, col), store_col_text(b, col)) == 0;
}

/* What the target holds for src's row, into *f. 0 or -1 (to's error). */
static int
find_row(struct store *to, const struct csql *q, const struct ctab *t,
    struct store_q *src, enum found *f)
{
	struct store_q	*st;
	int		 i, r, n = ncols(t);

	if ((st = store_stmt(to, q->cs_find)) == NULL)
		return -1;
	for (i = 0; i < t->ct_nkeys; i++)
		if (bind_from(to, st, i + 1, src, i) == -1)
			return -1;
	if ((r = store_step(to, st)) == -1)
		return -1;
	*f = FOUND_NONE;
	if (r == 0)
		return 0;
	*f = FOUND_SAME;
	for (i = 0; i < n && *f == FOUND_SAME; i++)
		if (!same_value(src, st, i))
			*f = FOUND_OTHER;
	store_end(st);
	return 0;
}

static int
put_row(struct store *to, const struct csql *q, const struct ctab *t,
    struct store_q *src)
{
	struct store_q	*st;
	int		 i, r, n = ncols(t);

	if ((st = store_stmt(to, q->cs_put)) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (bind_from(to, st, i + 1, src, i) == -1)
			return -1;
	while ((r = store_step(to, st)) == 1)
		;
	return r;
}

/* err for table t: "table T[, row KEY]: REASON". -1. */
static int
fail(const struct ctab *t, const char *key, const char *why,
    char err[STORE_ERRLEN])
{
	snprintf(err, STORE_ERRLEN, "table %s%s%s: %s", t->ct_name,
	    key != NULL ? ", row " : "", key != NULL ? key : "", why);
	return -1;
}

/* Note a row that differs or is missing: the first one's key. */
static void
note_row(const struct ctab *t, struct store_q *src,
    struct store_copy_count *c)
{
	if (c->cc_first[0] == '\0')
		key_text(t, src, c->cc_first, sizeof(c->cc_first));
}

/* One source row: found or put. */
static int
copy_one(struct store *to, const struct csql *q, const struct ctab *t,
    struct store_q *src, struct store_copy_count *c)
{
	enum found	 f;

	if (find_row(to, q, t, src, &f) == -1)
		return -1;
	if (f == FOUND_SAME)
		c->cc_there++;
	else if (f == FOUND_OTHER) {
		c->cc_differ++;
		note_row(t, src, c);
	} else if (put_row(to, q, t, src) == -1)
		return -1;
	else
		c->cc_copied++;
	return 0;
}

/* The check of one source row. */
static int
check_one(struct store *to, const struct csql *q, const struct ctab *t,
    struct store_q *src, struct store_copy_count *c)
{
	enum found	 f;

	if (find_row(to, q, t, src, &f) == -1)
		return -1;
	if (f == FOUND_NONE)
		c->cc_missing++;
	else if (f == FOUND_OTHER)
		c->cc_differ++;
	if (f != FOUND_SAME)
		note_row(t, src, c);
	return 0;
}

typedef int	row_fn(struct store *, const struct csql *, const struct ctab *,
		    struct store_q *, struct store_copy_count *);

/* fn for every row of table i of from, counting them into *n. */
static int
each_row(struct store *from, struct store *to, int i, row_fn *fn,
    struct store_copy_count *c, int64_t *n, char err[STORE_ERRLEN])
{
	const struct ctab	*t = &tables[i];
	struct store_q		*scan;
	struct csql		 q;
	char			 key[96];
	int			 r;

	csql_make(t, &q);
	if ((scan = store_stmt(from, q.cs_scan)) == NULL) {
		csql_free(&q);
		return fail(t, NULL, store_err(from), err);
	}
	while ((r = store_step(from, scan)) == 1) {
		(*n)++;
		if (fn(to, &q, t, scan, c) == -1) {
			key_text(t, scan, key, sizeof(key));
			store_end(scan);
			csql_free(&q);
			return fail(t, key, store_err(to), err);
		}
	}
	csql_free(&q);
	return r == -1 ? fail(t, NULL, store_err(from), err) : 0;
}

int
store_copy_rows(struct store *from, struct store *to, int i,
    struct store_copy_count *c, char err[STORE_ERRLEN])
{
	c->cc_source = 0;
	return each_row(from, to, i, copy_one, c, &c->cc_source, err);
}

int
store_copy_check(struct store *from, struct store *to, int i,
    struct store_copy_count *c, char err[STORE_ERRLEN])
{
	int64_t	 n = 0;

	c->cc_missing = c->cc_differ = 0;
	c->cc_first[0] = '\0';
	if (each_row(from, to, i, check_one, c, &n, err) == -1)
		return -1;
	c->cc_target = store_copy_count_rows(to, tables[i].ct_name, err);
	return c->cc_target == -1 ? -1 : 0;
}

int64_t
store_copy_count_rows(struct store *s, const char *table,
    char err[STORE_ERRLEN])
{
	struct store_q	*st;
	char		*sql = xasprintf("SELECT count(*) FROM %s", table);
	int64_t		 n = -1;

	if ((st = store_stmt(s, sql)) != NULL && store_step(s, st) == 1) {
		n = store_col_int(st, 0);
		store_end(st);
	} else
		snprintf(err, STORE_ERRLEN, "table %s: %s", table,
		    store_err(s));
	free(sql);
	return n;
}

/*
 * An identity column hands out the next value of its sequence and
 * knows nothing of ids written explicitly, as the copy writes them: the
 * sequence is set past the highest id, and never back (an id handed
 * out before and deleted since is not handed out again). setval is not
 * undone by a rollback; moving a sequence forward is harmless.
 */
int
store_copy_ids(struct store *to, char err[STORE_ERRLEN])
{
	const struct ctab	*t;
	char			*sql;
	int			 i, r;

	if (!store_is_pg(to))
		return 0;
	for (i = 0; i < NTABLES; i++) {
		if ((t = &tables[i])->ct_serial == NULL)
			continue;
		sql = xasprintf("SELECT setval(pg_get_serial_sequence('%s', "
		    "'%s'), greatest((SELECT coalesce(max(%s), 0) FROM %s), "
		    "coalesce(pg_sequence_last_value(pg_get_serial_sequence("
		    "'%s', '%s')::regclass), 0)) + 1, false)", t->ct_name,
		    t->ct_serial, t->ct_serial, t->ct_name, t->ct_name,
		    t->ct_serial);
		r = store_exec(to, sql, "");
		free(sql);
		if (r == -1)
			return fail(t, NULL, store_err(to), err);
	}
	return 0;
}
