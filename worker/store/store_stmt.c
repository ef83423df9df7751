/* store_stmt.c - the store's prepared statements: cached by SQL text, bound from a format, stepped. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "store_int.h"
#include "store_stmt.h"

/* The SQL in an error message, shortened. */
static char *
what_of(const char *sql, char *out, size_t outlen)
{
	snprintf(out, outlen, "%.60s%s", sql, strlen(sql) > 60 ? "..." : "");
	return out;
}

static sqlite3_stmt *
prepare(struct store *s, const char *sql)
{
	sqlite3_stmt	*st;
	const char	*tail = NULL;
	char		 what[80];
	int		 rc;

	rc = sqlite3_prepare_v3(s->s_db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &st, &tail);
	if (rc != SQLITE_OK) {
		store_fail(s, rc, what_of(sql, what, sizeof(what)));
		return NULL;
	}
	while (tail != NULL && isspace((unsigned char)*tail))
		tail++;
	if (st == NULL || (tail != NULL && *tail != '\0')) {
		sqlite3_finalize(st);
		snprintf(s->s_err, sizeof(s->s_err), "database %s: %s: not "
		    "exactly one statement", s->s_path,
		    what_of(sql, what, sizeof(what)));
		return NULL;
	}
	return st;
}

/* A linear search: a worker uses a few dozen statements at most. */
sqlite3_stmt *
store_stmt(struct store *s, const char *sql)
{
	struct store_ent	*e;
	sqlite3_stmt		*st;
	size_t			 i;

	for (i = 0; i < s->s_nstmts; i++) {
		e = &s->s_stmts[i];
		if (strcmp(e->se_sql, sql) == 0) {
			sqlite3_reset(e->se_stmt);
			sqlite3_clear_bindings(e->se_stmt);
			return e->se_stmt;
		}
	}
	if ((st = prepare(s, sql)) == NULL)
		return NULL;
	s->s_stmts = xreallocarray(s->s_stmts, s->s_nstmts + 1,
	    sizeof(*s->s_stmts));
	e = &s->s_stmts[s->s_nstmts++];
	e->se_sql = xstrdup(sql);
	e->se_stmt = st;
	return st;
}

void
store_stmts_free(struct store *s)
{
	size_t	 i;

	for (i = 0; i < s->s_nstmts; i++) {
		sqlite3_finalize(s->s_stmts[i].se_stmt);
		free(s->s_stmts[i].se_sql);
	}
	s->s_nstmts = 0;
}

static int
bindv(struct store *s, sqlite3_stmt *st, const char *fmt, va_list ap)
{
	const char	*t;
	char		 what[80];
	size_t		 n;
	int		 i, rc = SQLITE_OK;

	for (i = 1; rc == SQLITE_OK && *fmt != '\0'; fmt++, i++) {
		switch (*fmt) {
		case 't':
			t = va_arg(ap, const char *);
			rc = t != NULL ? sqlite3_bind_text(st, i, t, -1,
			    SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
			break;
		case 'i':
			rc = sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 'n':
			rc = sqlite3_bind_null(st, i);
			break;
		case 'b':
			t = va_arg(ap, const char *);
			n = va_arg(ap, size_t);
			rc = sqlite3_bind_blob64(st, i, t, n, SQLITE_TRANSIENT);
			break;
		default:
			snprintf(s->s_err, sizeof(s->s_err), "database %s: "
			    "store_bind: unknown format '%c'", s->s_path, *fmt);
			return -1;
		}
	}
	if (rc != SQLITE_OK)
		return store_fail(s, rc, what_of(sqlite3_sql(st), what,
		    sizeof(what)));
	return 0;
}

int
store_bind(struct store *s, sqlite3_stmt *st, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = bindv(s, st, fmt, ap);
	va_end(ap);
	return r;
}

/* Reset at the end, and on an error: a statement left running would
 * hold a read snapshot and keep checkpoints from finishing. */
int
store_step(struct store *s, sqlite3_stmt *st)
{
	char	 what[80];
	int	 rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return 0;
	}
	store_fail(s, rc, what_of(sqlite3_sql(st), what, sizeof(what)));
	sqlite3_reset(st);
	return -1;
}

/* sqlite3_changes() keeps the count of the last INSERT, UPDATE or
 * DELETE: a statement that changed nothing (BEGIN, a PRAGMA, an upsert
 * whose WHERE said no) must not report it. */
int
store_vexec(struct store *s, const char *sql, const char *fmt, va_list ap)
{
	sqlite3_stmt	*st;
	int		 r, before = sqlite3_total_changes(s->s_db);

	if ((st = store_stmt(s, sql)) == NULL || bindv(s, st, fmt, ap) == -1)
		return -1;
	while ((r = store_step(s, st)) == 1)
		;
	if (r == -1)
		return -1;
	if (sqlite3_total_changes(s->s_db) == before)
		return 0;
	if (sqlite3_get_autocommit(s->s_db))
		store_wrote(s);		/* a write of its own */
	return sqlite3_changes(s->s_db);
}

int
store_exec(struct store *s, const char *sql, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = store_vexec(s, sql, fmt, ap);
	va_end(ap);
	return r;
}

int64_t
store_last_rowid(const struct store *s)
{
	return sqlite3_last_insert_rowid(s->s_db);
}
