/* store.c - the shared database: open and close through its driver, errors, transactions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/log.h"
#include "../../common/pgurl.h"
#include "../../common/xmem.h"
#include "store_int.h"
#include "store_stmt.h"

int
store_fail(struct store *s, int rc, const char *what)
{
	const char	*msg = s->s_drv->dr_errmsg(s, rc);
	char		 why[96] = "";

	s->s_gave_up = false;
	if (s->s_drv->dr_busy(rc) && s->s_wait_end == WAIT_TIMEOUT)
		snprintf(why, sizeof(why), " (waited %u ms for another "
		    "process to finish writing)", s->s_opts.so_busy_ms);
	else if (s->s_drv->dr_busy(rc) && s->s_wait_end == WAIT_STOPPED) {
		snprintf(why, sizeof(why), " (stopped waiting: the request "
		    "was stopped)");
		s->s_gave_up = true;
	}
	snprintf(s->s_err, sizeof(s->s_err), "database %s: %s: %s%s",
	    s->s_path, what, msg, why);
	s->s_wait_end = WAIT_NONE;
	if (!s->s_gave_up) {
		s->s_tally.st_fails++;
		s->s_tally.st_failing = true;
		snprintf(s->s_tally.st_why, sizeof(s->s_tally.st_why), "%s%s",
		    msg, why);
	}
	return -1;
}

void
store_wrote(struct store *s)
{
	s->s_tally.st_writes++;
	s->s_tally.st_failing = false;
}

int
store_exists(const char *path)
{
	return pgurl_is(path) ? 0 : access(path, F_OK);
}

char *
store_where_name(const char *path)
{
	return pgurl_is(path) ? pgurl_name(path) : xstrdup(path);
}

bool
store_is_pg(const struct store *s)
{
	return s->s_drv->dr_dialect == DIALECT_PG;
}

void
store_tally(const struct store *s, struct store_tally *t)
{
	*t = s->s_tally;
}

const char *
store_err(const struct store *s)
{
	return s->s_err;
}

bool
store_gave_up(const struct store *s)
{
	return s->s_gave_up;
}

struct store *
store_open(const char *path, const struct store_opts *opts,
    char err[STORE_ERRLEN])
{
	struct store	*s = xcalloc(1, sizeof(*s));
	const char	*what = "settings";
	int		 rc;

	/* a URL selects PostgreSQL; anything else is a SQLite file */
	s->s_drv = pgurl_is(path) ? &store_pg : &store_sqlite;
	s->s_path = s->s_drv->dr_show(path);
	if (opts != NULL)
		s->s_opts = *opts;
	if (s->s_opts.so_busy_ms == 0)
		s->s_opts.so_busy_ms = STORE_BUSY_MS;
	if ((rc = s->s_drv->dr_open(s, path)) != 0) {
		store_fail(s, rc, "cannot open");
		goto fail;
	}
	if ((rc = s->s_drv->dr_setup(s, &what)) != 0) {
		if (rc != -1)
			store_fail(s, rc, what);
		goto fail;
	}
	if (store_migrate(s) == -1)
		goto fail;
	return s;
fail:
	snprintf(err, STORE_ERRLEN, "%s", s->s_err);
	store_close(s);
	return NULL;
}

void
store_close(struct store *s)
{
	int	 rc;

	if (s == NULL)
		return;
	store_stmts_free(s);
	if (s->s_drv->dr_in_tx(s))
		(void)s->s_drv->dr_script(s, "ROLLBACK");
	if ((rc = s->s_drv->dr_close(s)) != 0)
		log_warnx("database %s: close: %s", s->s_path,
		    s->s_drv->dr_errmsg(s, rc));
	free(s->s_path);
	free(s->s_stmts);
	free(s);
}

int
store_begin(struct store *s)
{
	int	 rc;

	if ((rc = s->s_drv->dr_begin(s)) != 0)
		return store_fail(s, rc, "BEGIN (write lock)");
	return 0;
}

/* A failed COMMIT leaves the transaction open: it is rolled back, so a
 * caller never holds the write lock by mistake. */
int
store_commit(struct store *s)
{
	char	 err[STORE_ERRLEN];

	if (store_exec(s, "COMMIT", "") != -1) {
		store_wrote(s);
		return 0;
	}
	memcpy(err, s->s_err, sizeof(err));
	(void)store_rollback(s);
	memcpy(s->s_err, err, sizeof(err));
	return -1;
}

/* After some errors SQLite has rolled back already. */
int
store_rollback(struct store *s)
{
	if (!s->s_drv->dr_in_tx(s))
		return 0;
	return store_exec(s, "ROLLBACK", "") == -1 ? -1 : 0;
}
