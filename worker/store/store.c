/* store.c - the shared SQLite database: open with its settings, wait for locks while heartbeating, transactions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "store_int.h"
#include "store_stmt.h"

#define JOURNAL_LIMIT	"67108864"	/* bytes kept of a checkpointed WAL */

/*
 * Waiting for a lock. Debian's SQLite has no SQLITE_ENABLE_SETLK_TIMEOUT,
 * so a busy connection polls: SQLite calls busy_wait() again and again
 * while another process holds the lock. A plain busy_timeout would keep
 * the worker silent for the whole wait and the gateway would take it for
 * hung (hang_timeout_s, 5 s by default), so the wait is done here in
 * short sleeps, and so_on_wait runs every STORE_WAIT_MS: the worker
 * heartbeats there, and gives up when its request is stopped.
 */
static const unsigned	 wait_steps[] = { 1, 2, 4, 8, 16, 25, 35, 50 };
#define NSTEPS		(sizeof(wait_steps) / sizeof(wait_steps[0]))

static void
sleep_ms(unsigned ms)
{
	struct timespec	 ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* One more round of a wait that began at t0: 1 after a short sleep, 0
 * when it must end (s_wait_end says why). *ping is when so_on_wait last
 * ran. */
static int
wait_more(struct store *s, uint64_t t0, uint64_t *ping, int count)
{
	uint64_t	 now = clock_mono_ms(), left;
	unsigned	 ms;

	if (now - t0 >= s->s_opts.so_busy_ms) {
		s->s_wait_end = WAIT_TIMEOUT;
		return 0;
	}
	if (s->s_opts.so_on_wait != NULL && now - *ping >= STORE_WAIT_MS) {
		*ping = now;
		if (s->s_opts.so_on_wait(s->s_opts.so_arg) != 0) {
			s->s_wait_end = WAIT_STOPPED;
			return 0;
		}
	}
	ms = wait_steps[(size_t)count < NSTEPS ? (size_t)count : NSTEPS - 1];
	left = s->s_opts.so_busy_ms - (now - t0);
	sleep_ms(left < ms ? (unsigned)left : ms);
	return 1;
}

/* SQLite's busy handler; count is 0 when a new wait begins. */
static int
busy_wait(void *arg, int count)
{
	struct store	*s = arg;

	if (count == 0) {
		s->s_wait_t0 = s->s_wait_ping = clock_mono_ms();
		s->s_wait_end = WAIT_NONE;
	}
	return wait_more(s, s->s_wait_t0, &s->s_wait_ping, count);
}

int
store_fail(struct store *s, int rc, const char *what)
{
	const char	*msg = s->s_db != NULL ? sqlite3_errmsg(s->s_db) :
			    sqlite3_errstr(rc);
	char		 why[96] = "";

	s->s_gave_up = false;
	if ((rc & 0xff) == SQLITE_BUSY && s->s_wait_end == WAIT_TIMEOUT)
		snprintf(why, sizeof(why), " (waited %u ms for another "
		    "process to finish writing)", s->s_opts.so_busy_ms);
	else if ((rc & 0xff) == SQLITE_BUSY && s->s_wait_end == WAIT_STOPPED) {
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

/* WAL is a property of the file, set by the first opener. Switching a
 * new file to it takes an exclusive lock, and SQLite answers
 * SQLITE_BUSY at once (no busy handler: it would deadlock) when another
 * opener holds a shared one: wait here instead, the same way. */
static int
set_wal(struct store *s)
{
	sqlite3_stmt	*st = store_stmt(s, "PRAGMA journal_mode=WAL");
	const char	*mode;
	uint64_t	 t0 = clock_mono_ms(), ping = t0;
	int		 rc, n = 0;

	if (st == NULL)
		return -1;
	s->s_wait_end = WAIT_NONE;
	while ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		if ((rc & 0xff) != SQLITE_BUSY || !wait_more(s, t0, &ping, n++))
			return store_fail(s, rc, "PRAGMA journal_mode=WAL");
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	if (mode == NULL || strcmp(mode, "wal") != 0) {
		snprintf(s->s_err, sizeof(s->s_err), "database %s: cannot use "
		    "WAL mode (journal_mode is %s)", s->s_path,
		    mode != NULL ? mode : "unknown");
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	return 0;
}

/* The rest are per connection. */
static int
set_pragmas(struct store *s)
{
	char	 sql[256];
	int	 rc;

	if (set_wal(s) == -1)
		return -1;
	snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s; "
	    "PRAGMA journal_size_limit=" JOURNAL_LIMIT "; "
	    "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;",
	    s->s_opts.so_sync_full ? "FULL" : "NORMAL");
	if ((rc = sqlite3_exec(s->s_db, sql, NULL, NULL, NULL)) != SQLITE_OK)
		return store_fail(s, rc, "settings");
	return 0;
}

struct store *
store_open(const char *path, const struct store_opts *opts,
    char err[STORE_ERRLEN])
{
	struct store	*s = xcalloc(1, sizeof(*s));
	int		 rc;

	s->s_path = xstrdup(path);
	if (opts != NULL)
		s->s_opts = *opts;
	if (s->s_opts.so_busy_ms == 0)
		s->s_opts.so_busy_ms = STORE_BUSY_MS;
	rc = sqlite3_open_v2(path, &s->s_db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		store_fail(s, rc, "cannot open");
		goto fail;
	}
	sqlite3_extended_result_codes(s->s_db, 1);
	sqlite3_busy_handler(s->s_db, busy_wait, s);
	if (set_pragmas(s) == -1 || store_migrate(s) == -1)
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
	if (s->s_db != NULL && !sqlite3_get_autocommit(s->s_db))
		(void)sqlite3_exec(s->s_db, "ROLLBACK", NULL, NULL, NULL);
	if ((rc = sqlite3_close(s->s_db)) != SQLITE_OK)
		log_warnx("database %s: close: %s", s->s_path,
		    sqlite3_errstr(rc));
	free(s->s_path);
	free(s->s_stmts);
	free(s);
}

int
store_begin(struct store *s)
{
	return store_exec(s, "BEGIN IMMEDIATE", "") == -1 ? -1 : 0;
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
	if (sqlite3_get_autocommit(s->s_db))
		return 0;
	return store_exec(s, "ROLLBACK", "") == -1 ? -1 : 0;
}
