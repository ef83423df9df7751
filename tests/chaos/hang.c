/* hang.c - chaos: a busy worker stopped with SIGSTOP, and a hung worker that ignores SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos.h"

#define HANG_MS		2000	/* hang_timeout_s, the smallest allowed */
#define GRACE_MS	1000	/* kill_grace_s of the SIGTERM test */

static struct it	 T;

/* The pid and slot of the only busy worker; fails the test after 5 s. */
static pid_t
busy_worker(unsigned *slot)
{
	struct chaos_worker	 w[2 * CHAOS_WORKERS];
	uint64_t		 t0 = it_now();
	size_t			 n, i;

	while (it_now() - t0 < 5000) {
		n = chaos_workers(&T, w, 2 * CHAOS_WORKERS);
		for (i = 0; i < n; i++)
			if (strcmp(w[i].cw_state, "busy") == 0) {
				*slot = w[i].cw_slot;
				return w[i].cw_pid;
			}
		it_sleep(10);
	}
	ck_abort_msg("no busy worker");
	return 0;
}

/* Wait until pid is gone (reaped by the gateway); ms after t0, or -1. */
static long
wait_gone(pid_t pid, uint64_t t0, int timeout_ms)
{
	while (it_now() - t0 < (uint64_t)timeout_ms) {
		if (chaos_proc_state(pid) == 0)
			return (long)(it_now() - t0);
		it_sleep(5);
	}
	return -1;
}

/* A normal request is served (by the pool as it is now). */
static void
expect_served(void)
{
	struct it_resp	 r;
	char		*body = chaos_body(false, "{\"text\": \"still here\"}");

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200 && strstr(r.r_body.b_data,
	    "still here") != NULL, "%ld %s", r.r_status, r.r_body.b_data);
	it_resp_free(&r);
	free(body);
}

/* The stream the stopped worker held: its error, then the end. */
static void
check_client(int fd, struct buf *out)
{
	struct sse_summary	 ss;
	const char		*body;

	it_read_until(fd, out, "data: [DONE]", 10000);
	close(fd);
	body = strstr(out->b_data, "\r\n\r\n");
	ck_assert_ptr_nonnull(body);
	it_sse_parse(body + 4, &ss);
	ck_assert_msg(ss.ss_error && strstr(body, "stopped responding") !=
	    NULL, "the client got no error: %.300s", body);
	free(ss.ss_text);
}

START_TEST(sigstop_busy_worker)
{
	struct buf	 out = BUF_INIT;
	char		*body = chaos_body(true, "{\"text\": \"a b c d e f g h i j "
			    "k l m n o p q r s t u v w x y z\", \"delay_ms\": "
			    "400}");
	unsigned	 slot;
	pid_t		 pid;
	uint64_t	 t0;
	long		 gone, limit = HANG_MS + 1000;
	size_t		 from;
	int		 fd;

	chaos_start(&T, "\"hang_timeout_s\": 2", NULL);
	fd = it_connect(&T);
	it_send_post(fd, "/v1/chat/completions", body, NULL);
	ck_assert(it_read_until(fd, &out, "\"content\":\"a\"", 5000));
	pid = busy_worker(&slot);
	from = it_log_size(&T);
	t0 = it_now();
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	gone = wait_gone(pid, t0, 15000);
	chaos_say("sigstop: worker %u pid %d stopped mid-stream; gone after "
	    "%ld ms (hang_timeout %d ms, kill_grace 2000 ms; limit %ld ms)",
	    slot, (int)pid, gone, HANG_MS, limit);
	ck_assert_msg(gone >= 0 && gone <= limit, "stopped worker gone after "
	    "%ld ms", gone);
	ck_assert(it_log_wait(&T, "hung", &from, 1000));
	check_client(fd, &out);
	it_wait_idle(&T, CHAOS_WORKERS);
	expect_served();
	buf_free(&out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* ms between the lines holding a and b (b after a), or -1. */
static long
log_gap(const char *log, const char *a[], const char *b[])
{
	const char	*la = chaos_find_line(log, 0, a), *lb;

	if (la == NULL || (lb = chaos_find_line(log, (size_t)(la - log),
	    b)) == NULL)
		return -1;
	return (long)(chaos_line_ms(log, lb) - chaos_line_ms(log, la));
}

START_TEST(ignored_sigterm_gets_sigkill)
{
	struct it_resp	 r;
	char		*body = chaos_body(false, "{\"text\": \"never\"}");
	char		 spid[32], scolon[32], *log;
	const char	*killing[] = { "killing worker", ": hung", NULL, NULL };
	const char	*sigkill[] = { "ignored SIGTERM for", "sending SIGKILL",
			    NULL, NULL };
	const char	*exited[] = { "exited on signal 9", NULL, NULL };
	long		 to_kill, to_exit, hi = chaos_limit(400, 1000);
	size_t		 len, from;
	unsigned	 slot;
	pid_t		 pid;

	chaos_start(&T, "\"hang_timeout_s\": 2, \"kill_grace_s\": 1",
	    "SLUICE_FAULT=hang,ignore_term");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_int_eq(r.r_status, 502);
	it_resp_free(&r);
	from = 0;
	ck_assert(it_log_wait(&T, "sending SIGKILL", &from, 5000));
	ck_assert(it_log_wait(&T, "exited on signal 9", &from, 2000));
	log = chaos_log(&T, &len);
	ck_assert_int_eq(sscanf(chaos_find_line(log, 0, killing),
	    "%*s %*s %*s killing worker %u pid %d", &slot, &pid), 2);
	snprintf(spid, sizeof(spid), "pid %d ", (int)pid);
	snprintf(scolon, sizeof(scolon), "pid %d:", (int)pid);
	killing[2] = scolon;
	sigkill[2] = exited[1] = spid;
	to_kill = log_gap(log, killing, sigkill);
	to_exit = log_gap(log, killing, exited);
	chaos_say("ignore_term: worker %u pid %d hung; SIGTERM ignored, "
	    "SIGKILL %ld ms after it, exit seen after %ld ms (kill_grace %d "
	    "ms; limit %ld ms)", slot, (int)pid, to_kill, to_exit, GRACE_MS,
	    GRACE_MS + hi);
	ck_assert_int_ge(to_kill, GRACE_MS - 10);
	ck_assert_int_le(to_kill, GRACE_MS + hi);
	ck_assert_int_le(to_exit, GRACE_MS + hi);
	ck_assert_int_eq(chaos_proc_state(pid), 0);
	free(log);
	it_wait_idle(&T, CHAOS_WORKERS);
	free(body);
	it_stop_clean(&T);
}
END_TEST

void
chaos_add_hang(Suite *s)
{
	chaos_tcase(s, "sigstop", sigstop_busy_worker, 60);
	chaos_tcase(s, "ignore_term", ignored_sigterm_gets_sigkill, 60);
}
