/* store_lock.c - named locks with an expiry, shared by every worker (WorkflowLock, memory generation). */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/log.h"
#include "store_int.h"
#include "store_lock.h"
#include "store_stmt.h"

/*
 * A lock is a row of workflow_locks. Taking one first frees the locks
 * nobody can hold any more: expired rows, and the row of this lock when
 * the worker process that took it is gone (a killed worker). Pids are
 * of this machine, where every worker of the database runs, in one pid
 * namespace; a pid the kernel has given to another process since is
 * told apart by the process's start time. Then an upsert inserts the
 * row, or
 * renews it when the same owner holds it, and changes nothing when
 * another owner does. Each operation is one BEGIN IMMEDIATE
 * transaction.
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

static int64_t
my_start(void)
{
	static int64_t	 start = -1;

	if (start == -1)
		start = proc_start(getpid());
	return start;
}

/* Whether the process that took a lock (pid, started at start) cannot
 * hold it any more. */
static bool
holder_gone(int64_t pid, int64_t start)
{
	int64_t	 now;

	if (pid <= 0 || pid == (int64_t)getpid())
		return false;		/* unknown, or another owner here */
	if (kill((pid_t)pid, 0) == -1 && errno == ESRCH)
		return true;
	now = start != 0 ? proc_start((pid_t)pid) : 0;
	return now != 0 && now != start;	/* the pid was reused */
}

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

/* In the transaction: drop lock name when the process holding it for
 * another owner cannot hold it any more. 0, or -1. */
static int
free_orphan(struct store *s, const char *name, const char *owner)
{
	struct store_q	*st = store_stmt(s, "SELECT pid, pid_start FROM "
			    "workflow_locks WHERE lock_id = ? AND owner <> ?");
	int64_t		 pid, start;
	int		 r;

	if (st == NULL || store_bind(s, st, "tt", name, owner) == -1)
		return -1;
	if ((r = store_step(s, st)) != 1)
		return r;
	pid = store_col_int(st, 0);
	start = store_col_int(st, 1);
	store_end(st);
	if (!holder_gone(pid, start))
		return 0;
	log_info("lock '%s' was held by process %lld, which is gone; taken "
	    "over", name, (long long)pid);
	return store_exec(s, "DELETE FROM workflow_locks WHERE lock_id = ? "
	    "AND pid = ?", "ti", name, pid) == -1 ? -1 : 0;
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
	    "i", now) == -1 || free_orphan(s, name, owner) == -1 ||
	    (n = store_exec(s, "INSERT INTO workflow_locks (lock_id, owner, "
	    "expires_at, pid, pid_start) VALUES (?, ?, ?, ?, ?) ON CONFLICT "
	    "(lock_id) DO UPDATE SET expires_at = excluded.expires_at "
	    "WHERE workflow_locks.owner = excluded.owner", "ttiii", name,
	    owner, now + (int64_t)ttl_s, (int64_t)getpid(), my_start())) ==
	    -1) {
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
