/* store_sqlite.c - the store's SQLite driver: every sqlite3 call of the shared store, its settings and its busy handler. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "store_int.h"

#define JOURNAL_LIMIT	"67108864"	/* bytes kept of a checkpointed WAL */

/* A statement, and what dr_changes needs: the connection's total of
 * changes when the run began, and the run's own count once done. */
struct sq_st {
	sqlite3_stmt	*ss_st;
	sqlite3		*ss_db;
	bool		 ss_running;
	int		 ss_before;
	int		 ss_changes;
};

#define DB(s)	((sqlite3 *)(s)->s_conn)

/*
 * SQLite-only: waiting for a lock. Debian's SQLite has no
 * SQLITE_ENABLE_SETLK_TIMEOUT, so a busy connection polls: SQLite calls
 * busy_wait() again and again while another process holds the lock. A
 * plain busy_timeout would keep the worker silent for the whole wait
 * and the gateway would take it for hung (hang_timeout_s, 5 s by
 * default), so the wait is done in short sleeps (store_wait_more), and
 * so_on_wait runs every STORE_WAIT_MS: the worker heartbeats there, and
 * gives up when its request is stopped.
 */
static int
busy_wait(void *arg, int count)
{
	struct store	*s = arg;

	if (count == 0) {
		s->s_wait_t0 = s->s_wait_ping = clock_mono_ms();
		s->s_wait_end = WAIT_NONE;
	}
	return store_wait_more(s, s->s_wait_t0, &s->s_wait_ping, count);
}

static int
sq_open(struct store *s, const char *path)
{
	sqlite3	*db = NULL;
	int	 rc;

	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	s->s_conn = db;
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_handler(db, busy_wait, s);
	return 0;
}

/* SQLite-only: WAL is a property of the file, set by the first opener.
 * Switching a new file to it takes an exclusive lock, and SQLite
 * answers SQLITE_BUSY at once (no busy handler: it would deadlock) when
 * another opener holds a shared one: wait here instead, the same way.
 * 0, an error code, or -1 with s_err set. */
static int
set_wal(struct store *s)
{
	sqlite3_stmt	*st;
	const char	*mode;
	uint64_t	 t0 = clock_mono_ms(), ping = t0;
	int		 rc, n = 0;

	if ((rc = sqlite3_prepare_v2(DB(s), "PRAGMA journal_mode=WAL", -1,
	    &st, NULL)) != SQLITE_OK)
		return rc;
	s->s_wait_end = WAIT_NONE;
	while ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_reset(st);
		if ((rc & 0xff) != SQLITE_BUSY ||
		    !store_wait_more(s, t0, &ping, n++)) {
			sqlite3_finalize(st);
			return rc;
		}
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	rc = 0;
	if (mode == NULL || strcmp(mode, "wal") != 0) {
		snprintf(s->s_err, sizeof(s->s_err), "database %s: cannot use "
		    "WAL mode (journal_mode is %s)", s->s_path,
		    mode != NULL ? mode : "unknown");
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

/* SQLite-only: the rest of the settings are per connection. */
static int
sq_setup(struct store *s, const char **what)
{
	char	 sql[256];
	int	 rc;

	*what = "PRAGMA journal_mode=WAL";
	if ((rc = set_wal(s)) != 0)
		return rc;
	snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s; "
	    "PRAGMA journal_size_limit=" JOURNAL_LIMIT "; "
	    "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;",
	    s->s_opts.so_sync_full ? "FULL" : "NORMAL");
	*what = "settings";
	return sqlite3_exec(DB(s), sql, NULL, NULL, NULL);
}

static int
sq_close(struct store *s)
{
	int	 rc = sqlite3_close(DB(s));

	s->s_conn = NULL;
	return rc;
}

static int
sq_prepare(struct store *s, const char *sql, void **out)
{
	struct sq_st	*ss;
	sqlite3_stmt	*st = NULL;
	const char	*tail = NULL;
	int		 rc;

	rc = sqlite3_prepare_v3(DB(s), sql, -1, SQLITE_PREPARE_PERSISTENT,
	    &st, &tail);
	if (rc != SQLITE_OK)
		return rc;
	while (tail != NULL && isspace((unsigned char)*tail))
		tail++;
	if (st == NULL || (tail != NULL && *tail != '\0')) {
		sqlite3_finalize(st);
		return STORE_NOT_ONE;
	}
	ss = xcalloc(1, sizeof(*ss));
	ss->ss_st = st;
	ss->ss_db = DB(s);
	*out = ss;
	return 0;
}

static void
sq_finalize(void *st)
{
	struct sq_st	*ss = st;

	if (ss == NULL)
		return;
	sqlite3_finalize(ss->ss_st);
	free(ss);
}

static void
sq_reset(void *st, bool clear)
{
	struct sq_st	*ss = st;

	sqlite3_reset(ss->ss_st);
	if (clear)
		sqlite3_clear_bindings(ss->ss_st);
	ss->ss_running = false;
}

static int
sq_bind_text(void *st, int i, const char *t)
{
	return sqlite3_bind_text(((struct sq_st *)st)->ss_st, i, t, -1,
	    SQLITE_TRANSIENT);
}

static int
sq_bind_int(void *st, int i, int64_t v)
{
	return sqlite3_bind_int64(((struct sq_st *)st)->ss_st, i, v);
}

static int
sq_bind_null(void *st, int i)
{
	return sqlite3_bind_null(((struct sq_st *)st)->ss_st, i);
}

static int
sq_bind_blob(void *st, int i, const void *p, size_t n)
{
	return sqlite3_bind_blob64(((struct sq_st *)st)->ss_st, i, p, n,
	    SQLITE_TRANSIENT);
}

/* sqlite3_changes() keeps the count of the last INSERT, UPDATE or
 * DELETE: a statement that changed nothing (BEGIN, a PRAGMA, an upsert
 * whose WHERE said no) must not report it, hence the total before. */
static int
sq_step(void *st, int *rc)
{
	struct sq_st	*ss = st;

	if (!ss->ss_running) {
		ss->ss_running = true;
		ss->ss_before = sqlite3_total_changes(ss->ss_db);
		ss->ss_changes = 0;
	}
	*rc = sqlite3_step(ss->ss_st);
	if (*rc == SQLITE_ROW)
		return 1;
	ss->ss_running = false;
	if (*rc != SQLITE_DONE)
		return -1;
	ss->ss_changes = sqlite3_total_changes(ss->ss_db) == ss->ss_before ?
	    0 : sqlite3_changes(ss->ss_db);
	*rc = 0;
	return 0;
}

static int
sq_changes(struct store *s, void *st)
{
	return ((struct sq_st *)st)->ss_changes;
}

static int
sq_col_count(void *st)
{
	return sqlite3_column_count(((struct sq_st *)st)->ss_st);
}

static enum store_type
sq_col_type(void *st, int col)
{
	switch (sqlite3_column_type(((struct sq_st *)st)->ss_st, col)) {
	case SQLITE_INTEGER:
		return STORE_INTEGER;
	case SQLITE_FLOAT:
		return STORE_FLOAT;
	case SQLITE_TEXT:
		return STORE_TEXT;
	case SQLITE_BLOB:
		return STORE_BLOB;
	default:
		return STORE_NULL;
	}
}

static const char *
sq_col_text(void *st, int col)
{
	return (const char *)sqlite3_column_text(((struct sq_st *)st)->ss_st,
	    col);
}

static int64_t
sq_col_int(void *st, int col)
{
	return sqlite3_column_int64(((struct sq_st *)st)->ss_st, col);
}

static double
sq_col_double(void *st, int col)
{
	return sqlite3_column_double(((struct sq_st *)st)->ss_st, col);
}

/* The blob first, then its size (SQLite's order: the size of the value
 * as it is then). */
static const void *
sq_col_blob(void *st, int col, size_t *len)
{
	sqlite3_stmt	*s3 = ((struct sq_st *)st)->ss_st;
	const void	*p = sqlite3_column_blob(s3, col);

	*len = p != NULL ? (size_t)sqlite3_column_bytes(s3, col) : 0;
	return p;
}

static int64_t
sq_last_rowid(const struct store *s)
{
	return sqlite3_last_insert_rowid(DB(s));
}

static const char *
sq_errmsg(const struct store *s, int rc)
{
	return s->s_conn != NULL ? sqlite3_errmsg(DB(s)) : sqlite3_errstr(rc);
}

static bool
sq_busy(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY;
}

static bool
sq_in_tx(const struct store *s)
{
	return s->s_conn != NULL && !sqlite3_get_autocommit(DB(s));
}

static char *
sq_show(const char *path)
{
	return xstrdup(path);
}

/* The busy handler waits for another writer. */
static int
sq_begin(struct store *s)
{
	return sqlite3_exec(DB(s), "BEGIN IMMEDIATE", NULL, NULL, NULL);
}

static int
sq_script(struct store *s, const char *sql)
{
	return sqlite3_exec(DB(s), sql, NULL, NULL, NULL);
}

/* SQLite-only: the schema version is PRAGMA user_version. */
static int
sq_version(struct store *s, int *v)
{
	sqlite3_stmt	*st;
	int		 rc;

	*v = 0;
	if ((rc = sqlite3_prepare_v2(DB(s), "PRAGMA user_version", -1, &st,
	    NULL)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static int
sq_set_version(struct store *s, int v)
{
	char	 sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	return sqlite3_exec(DB(s), sql, NULL, NULL, NULL);
}

/* store_func's function, held as the SQL function's user data. */
struct sq_fn {
	store_fn	*sf_fn;
};

static void
call_fn(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	const struct sq_fn	*f = sqlite3_user_data(cx);

	sqlite3_result_double(cx, f->sf_fn((const char *)sqlite3_value_text(
	    argv[0]), sqlite3_value_int64(argv[1])));
}

static int
sq_func(struct store *s, const char *name, store_fn *fn)
{
	struct sq_fn	*f = xmalloc(sizeof(*f));

	f->sf_fn = fn;
	/* on failure SQLite calls free(f) itself */
	return sqlite3_create_function_v2(DB(s), name, 2, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC, f, call_fn, NULL, NULL, free);
}

/*
 * SQLite-only: a lock's holder is a process. Every worker of a SQLite
 * database runs on this machine, in one pid namespace (WAL needs
 * shared memory), so a holder is gone when its pid is; a pid the
 * kernel has given to another process since is told apart by the
 * process's start time.
 */

/* The start time of process pid (/proc/<pid>/stat field 22, clock
 * ticks after boot), or 0 when it cannot be read. */
static int64_t
proc_start(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	unsigned long long start;
	FILE		*f;
	size_t		 n;
	int		 i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name (field 2) is in parentheses and may hold anything */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (i = 2; i < 22 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu", &start) != 1)
		return 0;
	return (int64_t)start;
}

static void
sq_holder(struct store *s, int64_t *id, int64_t *key)
{
	static pid_t	 me;		/* whose start is known: a child of
					   fork() has its own */
	static int64_t	 start;

	if (me != getpid()) {
		me = getpid();
		start = proc_start(me);
	}
	*id = (int64_t)me;
	*key = start;
}

static int
sq_holder_gone(struct store *s, int64_t pid, int64_t start, bool *gone)
{
	int64_t	 now;

	*gone = false;
	if (pid <= 0 || pid == (int64_t)getpid())
		return 0;		/* unknown, or another owner here */
	if (kill((pid_t)pid, 0) == -1 && errno == ESRCH)
		*gone = true;
	else {
		now = start != 0 ? proc_start((pid_t)pid) : 0;
		*gone = now != 0 && now != start;	/* the pid was reused */
	}
	return 0;
}

const struct store_driver store_sqlite = {
	.dr_name = "sqlite",
	.dr_dialect = DIALECT_SQLITE,
	.dr_show = sq_show,
	.dr_open = sq_open,
	.dr_setup = sq_setup,
	.dr_close = sq_close,
	.dr_prepare = sq_prepare,
	.dr_finalize = sq_finalize,
	.dr_reset = sq_reset,
	.dr_bind_text = sq_bind_text,
	.dr_bind_int = sq_bind_int,
	.dr_bind_null = sq_bind_null,
	.dr_bind_blob = sq_bind_blob,
	.dr_step = sq_step,
	.dr_col_count = sq_col_count,
	.dr_col_type = sq_col_type,
	.dr_col_text = sq_col_text,
	.dr_col_int = sq_col_int,
	.dr_col_double = sq_col_double,
	.dr_col_blob = sq_col_blob,
	.dr_changes = sq_changes,
	.dr_last_rowid = sq_last_rowid,
	.dr_errmsg = sq_errmsg,
	.dr_busy = sq_busy,
	.dr_in_tx = sq_in_tx,
	.dr_begin = sq_begin,
	.dr_script = sq_script,
	.dr_version = sq_version,
	.dr_set_version = sq_set_version,
	.dr_func = sq_func,
	.dr_holder = sq_holder,
	.dr_holder_gone = sq_holder_gone,
};
