/* gwkill.c - chaos: kill -9 of the gateway takes every worker with it, busy or idle. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chaos.h"

#define NBUSY		4	/* workers mid-stream at the kill */
#define LIMIT_MS	2000

static struct it	 T;

struct orphan {
	pid_t	 o_pid;
	long	 o_ms;		/* from the kill to its exit; -1 not yet */
	int	 o_status;
};

/* Reap the orphans (we are their subreaper) until all are gone or
 * timeout_ms passes; returns how many are left. */
static size_t
reap(struct orphan *o, size_t n, uint64_t t0, int timeout_ms)
{
	size_t	 i, left = n;
	int	 st;

	while (left > 0 && it_now() - t0 < (uint64_t)timeout_ms) {
		for (i = 0, left = 0; i < n; i++) {
			if (o[i].o_ms >= 0)
				continue;
			if (waitpid(o[i].o_pid, &st, WNOHANG) == o[i].o_pid) {
				o[i].o_ms = (long)(it_now() - t0);
				o[i].o_status = st;
			} else
				left++;
		}
		it_sleep(2);
	}
	return left;
}

/* NBUSY streams that have begun; their fds in fds. */
static void
busy_streams(int *fds)
{
	struct buf	 out = BUF_INIT;
	char		*body = chaos_body(true, "{\"text\": \"a b c d e f g h i "
			    "j k l m n o p\", \"delay_ms\": 500}");
	int		 i;

	for (i = 0; i < NBUSY; i++) {
		fds[i] = it_connect(&T);
		it_send_post(fds[i], "/v1/chat/completions", body, NULL);
	}
	for (i = 0; i < NBUSY; i++) {
		buf_reset(&out);
		ck_assert(it_read_until(fds[i], &out, "\"content\":\"a\"",
		    5000));
	}
	buf_free(&out);
	free(body);
}

/* Live processes of ours but the mock once the workers are gone, after
 * reaping every zombie as init would. The sanitizer build has a few
 * more: a busy worker that sees its channel close exits, and
 * LeakSanitizer's check at exit forks a helper task, orphaned when
 * PR_SET_PDEATHSIG's SIGTERM ends the worker; it soon goes too. */
static size_t
orphans_left(void)
{
	uint64_t	 t0 = it_now();
	size_t		 live;
	int		 st;

	do {
		while (waitpid(-1, &st, WNOHANG) > 0)
			;
		live = chaos_children(getpid(), 0, NULL, 0) - 1;
		if (live == 0)
			break;
		it_sleep(10);
	} while (it_now() - t0 < 2000);
	return live;
}

static void
report(const struct orphan *o, size_t n, size_t left)
{
	long	 v[4 * CHAOS_WORKERS];
	size_t	 i, sig = 0, eof = 0;

	for (i = 0; i < n; i++) {
		v[i] = o[i].o_ms;
		if (WIFSIGNALED(o[i].o_status))
			sig++;
		else if (WIFEXITED(o[i].o_status) &&
		    WEXITSTATUS(o[i].o_status) == 0)
			eof++;
	}
	chaos_say("gwkill: %zu workers (%d mid-stream) gone %ld ms (max) "
	    "after kill -9 of the gateway, median %ld ms; %zu on a signal "
	    "(PR_SET_PDEATHSIG), %zu exited 0 (channel EOF), %zu left (limit "
	    "%d ms)", n, NBUSY, chaos_pct(v, n, 100), chaos_pct(v, n, 50),
	    sig, eof, left, LIMIT_MS);
}

START_TEST(gateway_kill9_takes_workers)
{
	struct orphan	 o[4 * CHAOS_WORKERS];
	pid_t		 pids[4 * CHAOS_WORKERS];
	int		 fds[NBUSY], st, i;
	size_t		 n, k, left;
	uint64_t	 t0;
	long		 active = -1, gone;

	/* Orphans come to us, not to init: we can time their exits. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	chaos_start(&T, NULL, NULL);
	busy_streams(fds);
	n = it_worker_pids(&T, pids, 4 * CHAOS_WORKERS);
	ck_assert_uint_eq(n, CHAOS_WORKERS);
	for (k = 0; k < n; k++)
		o[k] = (struct orphan){ pids[k], -1, 0 };
	t0 = it_now();
	ck_assert_int_eq(kill(T.it_gw, SIGKILL), 0);
	ck_assert_int_eq(waitpid(T.it_gw, &st, 0), T.it_gw);
	T.it_gw = 0;
	left = reap(o, n, t0, 5000);
	report(o, n, left);
	ck_assert_uint_eq(left, 0);
	for (k = 0; k < n; k++)
		ck_assert_int_le(o[k].o_ms, LIMIT_MS);
	ck_assert_uint_eq(orphans_left(), 0);
	/* The backend saw every call end. */
	for (t0 = it_now(); it_now() - t0 < 2000 && active != 0; it_sleep(10))
		chaos_mock_stats(&T, &active, &gone);
	chaos_say("gwkill: backend calls left open: %2$ld (checked within %1$llu ms)",
	    (unsigned long long)(it_now() - t0), active);
	ck_assert_int_eq(active, 0);
	for (i = 0; i < NBUSY; i++)
		close(fds[i]);
	it_stop(&T, 1000);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}
END_TEST

void
chaos_add_gwkill(Suite *s)
{
	chaos_tcase(s, "gwkill", gateway_kill9_takes_workers, 60);
}
