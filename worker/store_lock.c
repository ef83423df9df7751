/* store_lock.c - named locks with an expiry, shared by every worker (WorkflowLock). */
#include <time.h>

#include "store_int.h"

/*
 * A lock is a row of workflow_locks. Taking one deletes every expired
 * row first, so a lock whose owner died (a killed worker) blocks others
 * only until its expiry; then an upsert inserts the row, or renews it
 * when the same owner holds it, and changes nothing when another owner
 * does. Each operation is one BEGIN IMMEDIATE transaction.
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

int
store_lock(struct store *s, const char *name, const char *owner,
    unsigned ttl_s)
{
	int64_t	 now = (int64_t)time(NULL);
	int	 n;

	if (store_begin(s) == -1)
		return -1;
	if (store_exec(s, "DELETE FROM workflow_locks WHERE expires_at <= ?",
	    "i", now) == -1 ||
	    (n = store_exec(s, "INSERT INTO workflow_locks (lock_id, owner, "
	    "expires_at) VALUES (?, ?, ?) ON CONFLICT (lock_id) DO UPDATE "
	    "SET expires_at = excluded.expires_at "
	    "WHERE workflow_locks.owner = excluded.owner", "tti", name, owner,
	    now + (int64_t)ttl_s)) == -1) {
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

int
store_unlock_owner(struct store *s, const char *owner)
{
	return write1(s, "DELETE FROM workflow_locks WHERE owner = ?", "t",
	    owner);
}
