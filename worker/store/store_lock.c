/* store_lock.c - named locks with an expiry, shared by every worker (WorkflowLock, memory generation). */
#include <stdarg.h>
#include <stdbool.h>
#include <time.h>

#include "../../common/log.h"
#include "store_int.h"
#include "store_lock.h"
#include "store_stmt.h"

/*
 * A lock is a row of workflow_locks. Taking one first frees the locks
 * nobody can hold any more: expired rows, and the row of this lock when
 * its holder is gone. Who holds a row is the driver's to say
 * (dr_holder, dr_holder_gone): on SQLite the worker process that took
 * it (pid, pid_start: every worker runs on this machine), on
 * PostgreSQL the database session (pid the server's, pid_start the
 * session's key), which the server ends when the worker, or its whole
 * machine, dies. Then an upsert inserts the row, or renews it when the
 * same owner holds it (recording the holder anew: a reconnected
 * session, another process), and changes nothing when another owner
 * does. Each operation is one write transaction (store_begin).
 */

/* One write statement in its own transaction; returns its changes. */
static int
write1(struct store *s, const char *sql, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (store_begin(s) == -1)
		return -1;
	va_start(ap, fmt);
	n = store_vexec(s, sql, fmt, ap);
	va_end(ap);
	if (n == -1) {
		(void)store_rollback(s);
		return -1;
	}
	return store_commit(s) == -1 ? -1 : n;
}

/* In the transaction: drop lock name when the holder that took it for
 * another owner cannot hold it any more. 0, or -1. */
static int
free_orphan(struct store *s, const char *name, const char *owner)
{
	struct store_q	*st = store_stmt(s, "SELECT pid, pid_start FROM "
			    "workflow_locks WHERE lock_id = ? AND owner <> ?");
	int64_t		 id, key;
	bool		 gone;
	int		 r;

	if (st == NULL || store_bind(s, st, "tt", name, owner) == -1)
		return -1;
	if ((r = store_step(s, st)) != 1)
		return r;
	id = store_col_int(st, 0);
	key = store_col_int(st, 1);
	store_end(st);
	if ((r = s->s_drv->dr_holder_gone(s, id, key, &gone)) != 0)
		return store_fail(s, r, "a lock holder's liveness");
	if (!gone)
		return 0;
	log_info("lock '%s' was held by %s %lld, which is gone; taken over",
	    name, store_is_pg(s) ? "the database session of server process" :
	    "process", (long long)id);
	return store_exec(s, "DELETE FROM workflow_locks WHERE lock_id = ? "
	    "AND pid = ? AND pid_start = ?", "tii", name, id, key) == -1 ?
	    -1 : 0;
}

int
store_lock(struct store *s, const char *name, const char *owner,
    unsigned ttl_s)
{
	int64_t	 now = (int64_t)time(NULL), id, key;
	int	 n;

	if (store_begin(s) == -1)
		return -1;
	s->s_drv->dr_holder(s, &id, &key);
	if (store_exec(s, "DELETE FROM workflow_locks WHERE expires_at <= ?",
	    "i", now) == -1 || free_orphan(s, name, owner) == -1 ||
	    (n = store_exec(s, "INSERT INTO workflow_locks (lock_id, owner, "
	    "expires_at, pid, pid_start) VALUES (?, ?, ?, ?, ?) ON CONFLICT "
	    "(lock_id) DO UPDATE SET expires_at = excluded.expires_at, pid = "
	    "excluded.pid, pid_start = excluded.pid_start WHERE "
	    "workflow_locks.owner = excluded.owner", "ttiii", name, owner,
	    now + (int64_t)ttl_s, id, key)) == -1) {
		(void)store_rollback(s);
		return -1;
	}
	if (store_commit(s) == -1)
		return -1;
	return n > 0 ? 1 : 0;
}

int
store_unlock(struct store *s, const char *name, const char *owner)
{
	return write1(s, "DELETE FROM workflow_locks WHERE lock_id = ? AND "
	    "owner = ?", "tt", name, owner);
}

/* Called at the end of every request that used the database: a read
 * first, so that most requests (holding no lock) write nothing. */
int
store_unlock_owner(struct store *s, const char *owner)
{
	struct store_q	*st = store_stmt(s, "SELECT 1 FROM workflow_locks "
			    "WHERE owner = ? LIMIT 1");
	int		 r;

	if (st == NULL || store_bind(s, st, "t", owner) == -1 ||
	    (r = store_step(s, st)) == -1)
		return -1;
	if (r == 0)
		return 0;
	store_end(st);
	return write1(s, "DELETE FROM workflow_locks WHERE owner = ?", "t",
	    owner);
}
