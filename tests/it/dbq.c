/* dbq.c - integration tests: look into the gateway's shared database (<config dir>/state/sluice.db) from outside. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbq.h"

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

/* The first row of sql ready in *st; -1 with err. */
static int
first_row(struct it *t, sqlite3 **db, sqlite3_stmt **st, const char *sql,
    char *err, size_t errlen)
{
	*st = NULL;
	snprintf(err, errlen, "no database");
	if (db_open(t, db) == -1)
		return -1;
	if (sqlite3_prepare_v2(*db, sql, -1, st, NULL) == SQLITE_OK &&
	    sqlite3_step(*st) == SQLITE_ROW)
		return 0;
	snprintf(err, errlen, "%s", *st != NULL && sqlite3_errcode(*db) ==
	    SQLITE_DONE ? "no row" : sqlite3_errmsg(*db));
	sqlite3_finalize(*st);
	sqlite3_close(*db);
	return -1;
}

int
it_db_try(struct it *t, const char *sql, long long *v, char *err,
    size_t errlen)
{
	sqlite3		*db;
	sqlite3_stmt	*st;

	if (first_row(t, &db, &st, sql, err, errlen) == -1)
		return -1;
	*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
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
	sqlite3			*db;
	sqlite3_stmt		*st;
	const unsigned char	*s;
	char			 err[256], *r;

	ck_assert_msg(first_row(t, &db, &st, sql, err, sizeof(err)) == 0,
	    "%s: %s", sql, err);
	s = sqlite3_column_text(st, 0);
	r = s != NULL ? strdup((const char *)s) : NULL;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return r;
}

void
it_db_exec(struct it *t, const char *sql)
{
	sqlite3	*db;
	char	*err = NULL;

	ck_assert_int_eq(db_open(t, &db), 0);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK,
	    "%s: %s", sql, err);
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
