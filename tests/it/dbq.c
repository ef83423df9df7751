/* dbq.c - integration tests: look into the gateway's shared database (<config dir>/state/sluice.db, or the PostgreSQL database of it_store) from outside. */
#include <check.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbq.h"

/* One query's first row, from either database. */
struct row {
	sqlite3		*r_db;
	sqlite3_stmt	*r_st;
	PGconn		*r_pg;
	PGresult	*r_res;
};

static int
db_open(struct it *t, sqlite3 **db)
{
	char	 path[512];

	snprintf(path, sizeof(path), "%s/state/sluice.db", t->it_dir);
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(*db);
		return -1;
	}
	sqlite3_busy_timeout(*db, 5000);
	return 0;
}

/* PostgreSQL: the connection, or NULL with err. */
static PGconn *
pg_open(struct it *t, char *err, size_t errlen)
{
	PGconn	*c = PQconnectdb(t->it_store);

	if (PQstatus(c) == CONNECTION_OK)
		return c;
	snprintf(err, errlen, "%s", PQerrorMessage(c));
	PQfinish(c);
	return NULL;
}

static int
pg_first_row(struct it *t, struct row *r, const char *sql, char *err,
    size_t errlen)
{
	if ((r->r_pg = pg_open(t, err, errlen)) == NULL)
		return -1;
	r->r_res = PQexec(r->r_pg, sql);
	if (PQresultStatus(r->r_res) == PGRES_TUPLES_OK &&
	    PQntuples(r->r_res) > 0)
		return 0;
	snprintf(err, errlen, "%s", PQresultStatus(r->r_res) ==
	    PGRES_TUPLES_OK ? "no row" : PQresultErrorMessage(r->r_res));
	PQclear(r->r_res);
	PQfinish(r->r_pg);
	return -1;
}

/* The first row of sql ready in *r; -1 with err. */
static int
first_row(struct it *t, struct row *r, const char *sql, char *err,
    size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (t->it_store[0] != '\0')
		return pg_first_row(t, r, sql, err, errlen);
	snprintf(err, errlen, "no database");
	if (db_open(t, &r->r_db) == -1)
		return -1;
	if (sqlite3_prepare_v2(r->r_db, sql, -1, &r->r_st, NULL) ==
	    SQLITE_OK && sqlite3_step(r->r_st) == SQLITE_ROW)
		return 0;
	snprintf(err, errlen, "%s", r->r_st != NULL &&
	    sqlite3_errcode(r->r_db) == SQLITE_DONE ? "no row" :
	    sqlite3_errmsg(r->r_db));
	sqlite3_finalize(r->r_st);
	sqlite3_close(r->r_db);
	return -1;
}

/* The first column's text (NULL for SQL NULL), borrowed from r. */
static const char *
row_text(const struct row *r)
{
	if (r->r_pg != NULL)
		return PQgetisnull(r->r_res, 0, 0) ? NULL :
		    PQgetvalue(r->r_res, 0, 0);
	return (const char *)sqlite3_column_text(r->r_st, 0);
}

static void
row_end(struct row *r)
{
	if (r->r_pg != NULL) {
		PQclear(r->r_res);
		PQfinish(r->r_pg);
		return;
	}
	sqlite3_finalize(r->r_st);
	sqlite3_close(r->r_db);
}

int
it_db_try(struct it *t, const char *sql, long long *v, char *err,
    size_t errlen)
{
	struct row	 r;
	const char	*s;

	if (first_row(t, &r, sql, err, errlen) == -1)
		return -1;
	s = row_text(&r);
	*v = s != NULL ? strtoll(s, NULL, 10) : 0;
	row_end(&r);
	return 0;
}

long long
it_db_int(struct it *t, const char *sql)
{
	char		 err[256];
	long long	 v = 0;

	ck_assert_msg(it_db_try(t, sql, &v, err, sizeof(err)) == 0, "%s: %s",
	    sql, err);
	return v;
}

char *
it_db_text(struct it *t, const char *sql)
{
	struct row	 r;
	const char	*s;
	char		 err[256], *v;

	ck_assert_msg(first_row(t, &r, sql, err, sizeof(err)) == 0,
	    "%s: %s", sql, err);
	s = row_text(&r);
	v = s != NULL ? strdup(s) : NULL;
	row_end(&r);
	return v;
}

void
it_db_exec(struct it *t, const char *sql)
{
	sqlite3		*db;
	PGconn		*c;
	PGresult	*res;
	char		 err[256], *e = NULL;

	if (t->it_store[0] != '\0') {
		ck_assert_msg((c = pg_open(t, err, sizeof(err))) != NULL,
		    "%s", err);
		res = PQexec(c, sql);
		ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK ||
		    PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", sql,
		    PQresultErrorMessage(res));
		PQclear(res);
		PQfinish(c);
		return;
	}
	ck_assert_int_eq(db_open(t, &db), 0);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &e) == SQLITE_OK,
	    "%s: %s", sql, e);
	sqlite3_close(db);
}

bool
it_db_wait(struct it *t, const char *sql, long long want, int timeout_ms)
{
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;
	long long	 v;
	char		 err[256];

	do {
		if (it_db_try(t, sql, &v, err, sizeof(err)) == 0 && v == want)
			return true;
		it_sleep(20);
	} while (it_now() < end);
	return false;
}
