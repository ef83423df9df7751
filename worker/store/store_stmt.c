/* store_stmt.c - the store's queries: cached by SQL text, bound from a format, stepped, their columns read through the driver. */
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

static void *
prepare(struct store *s, const char *sql)
{
	void	*st = NULL;
	char	 what[80];
	int	 rc;

	rc = s->s_drv->dr_prepare(s, sql, &st);
	if (rc == STORE_NOT_ONE) {
		snprintf(s->s_err, sizeof(s->s_err), "database %s: %s: not "
		    "exactly one statement", s->s_path,
		    what_of(sql, what, sizeof(what)));
		return NULL;
	}
	if (rc != 0) {
		store_fail(s, rc, what_of(sql, what, sizeof(what)));
		return NULL;
	}
	return st;
}

/* A linear search: a worker uses a few dozen statements at most. */
struct store_q *
store_stmt(struct store *s, const char *sql)
{
	struct store_q	*q;
	void		*st;
	size_t		 i;

	for (i = 0; i < s->s_nstmts; i++) {
		q = s->s_stmts[i];
		if (strcmp(q->q_sql, sql) == 0) {
			s->s_drv->dr_reset(q->q_st, true);
			return q;
		}
	}
	if ((st = prepare(s, sql)) == NULL)
		return NULL;
	q = xcalloc(1, sizeof(*q));
	q->q_s = s;
	q->q_sql = xstrdup(sql);
	q->q_st = st;
	s->s_stmts = xreallocarray(s->s_stmts, s->s_nstmts + 1,
	    sizeof(*s->s_stmts));
	s->s_stmts[s->s_nstmts++] = q;
	return q;
}

void
store_stmts_free(struct store *s)
{
	size_t	 i;

	for (i = 0; i < s->s_nstmts; i++) {
		s->s_drv->dr_finalize(s->s_stmts[i]->q_st);
		free(s->s_stmts[i]->q_sql);
		free(s->s_stmts[i]);
	}
	s->s_nstmts = 0;
	for (i = 0; i < s->s_nfuncs; i++)
		free(s->s_funcs[i]);
	free(s->s_funcs);
	s->s_funcs = NULL;
	s->s_nfuncs = 0;
}

/* One parameter i of fmt's letter c from ap: the driver's code. */
static int
bind1(const struct store_driver *d, void *st, int i, char c, va_list *ap)
{
	const char	*t;
	size_t		 n;

	switch (c) {
	case 't':
		t = va_arg(*ap, const char *);
		return t != NULL ? d->dr_bind_text(st, i, t) :
		    d->dr_bind_null(st, i);
	case 'i':
		return d->dr_bind_int(st, i, va_arg(*ap, int64_t));
	case 'n':
		return d->dr_bind_null(st, i);
	default:	/* 'b' */
		t = va_arg(*ap, const char *);
		n = va_arg(*ap, size_t);
		return d->dr_bind_blob(st, i, t, n);
	}
}

static int
bindv(struct store *s, struct store_q *q, const char *fmt, va_list ap)
{
	char	 what[80];
	int	 i, rc = 0;
	va_list	 aq;

	va_copy(aq, ap);
	for (i = 1; rc == 0 && *fmt != '\0'; fmt++, i++) {
		if (strchr("tinb", *fmt) == NULL) {
			snprintf(s->s_err, sizeof(s->s_err), "database %s: "
			    "store_bind: unknown format '%c'", s->s_path, *fmt);
			va_end(aq);
			return -1;
		}
		rc = bind1(s->s_drv, q->q_st, i, *fmt, &aq);
	}
	va_end(aq);
	if (rc != 0)
		return store_fail(s, rc, what_of(q->q_sql, what,
		    sizeof(what)));
	return 0;
}

int
store_bind(struct store *s, struct store_q *q, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = bindv(s, q, fmt, ap);
	va_end(ap);
	return r;
}

/* Reset at the end, and on an error: a statement left running would
 * hold a read snapshot and keep checkpoints from finishing. */
int
store_step(struct store *s, struct store_q *q)
{
	char	 what[80];
	int	 rc, r = s->s_drv->dr_step(q->q_st, &rc);

	if (r == 1)
		return 1;
	if (r == 0) {
		s->s_drv->dr_reset(q->q_st, false);
		return 0;
	}
	store_fail(s, rc, what_of(q->q_sql, what, sizeof(what)));
	s->s_drv->dr_reset(q->q_st, false);
	return -1;
}

void
store_end(struct store_q *q)
{
	if (q != NULL)
		q->q_s->s_drv->dr_reset(q->q_st, false);
}

int
store_col_count(struct store_q *q)
{
	return q->q_s->s_drv->dr_col_count(q->q_st);
}

enum store_type
store_col_type(struct store_q *q, int col)
{
	return q->q_s->s_drv->dr_col_type(q->q_st, col);
}

bool
store_col_null(struct store_q *q, int col)
{
	return store_col_type(q, col) == STORE_NULL;
}

const char *
store_col_text(struct store_q *q, int col)
{
	return q->q_s->s_drv->dr_col_text(q->q_st, col);
}

int64_t
store_col_int(struct store_q *q, int col)
{
	return q->q_s->s_drv->dr_col_int(q->q_st, col);
}

double
store_col_double(struct store_q *q, int col)
{
	return q->q_s->s_drv->dr_col_double(q->q_st, col);
}

const void *
store_col_blob(struct store_q *q, int col, size_t *len)
{
	return q->q_s->s_drv->dr_col_blob(q->q_st, col, len);
}

int
store_vexec(struct store *s, const char *sql, const char *fmt, va_list ap)
{
	struct store_q	*q;
	int		 r, n;

	if ((q = store_stmt(s, sql)) == NULL || bindv(s, q, fmt, ap) == -1)
		return -1;
	while ((r = store_step(s, q)) == 1)
		;
	if (r == -1)
		return -1;
	if ((n = s->s_drv->dr_changes(s, q->q_st)) > 0 &&
	    !s->s_drv->dr_in_tx(s))
		store_wrote(s);		/* a write of its own */
	return n;
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
store_insert(struct store *s, const char *sql, const char *fmt, ...)
{
	struct store_q	*q;
	va_list		 ap;
	int64_t		 id = 0;
	int		 r;

	if ((q = store_stmt(s, sql)) == NULL)
		return -1;
	va_start(ap, fmt);
	r = bindv(s, q, fmt, ap);
	va_end(ap);
	if (r == -1)
		return -1;
	while ((r = store_step(s, q)) == 1)
		if (id == 0)
			id = store_col_int(q, 0);
	if (r == -1)
		return -1;
	if (id > 0 && !s->s_drv->dr_in_tx(s))
		store_wrote(s);		/* a write of its own */
	return id;
}

int64_t
store_last_rowid(const struct store *s)
{
	return s->s_drv->dr_last_rowid(s);
}

/* Registered once: again would make the connection prepare its
 * statements anew. */
int
store_func(struct store *s, const char *name, store_fn *fn)
{
	size_t	 i;
	int	 rc;

	for (i = 0; i < s->s_nfuncs; i++)
		if (strcmp(s->s_funcs[i], name) == 0)
			return 0;
	if ((rc = s->s_drv->dr_func(s, name, fn)) != 0)
		return store_fail(s, rc, name);
	s->s_funcs = xreallocarray(s->s_funcs, s->s_nfuncs + 1,
	    sizeof(*s->s_funcs));
	s->s_funcs[s->s_nfuncs++] = xstrdup(name);
	return 0;
}
