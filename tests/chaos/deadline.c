/* deadline.c - chaos: a backend that trickles a token every 10 s forever meets the request deadline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos.h"

#define DEADLINE_MS	2000	/* request_timeout_s */

static struct it	 T;

/* ms until the mock has no call left and saw exactly one client leave,
 * or -1 after timeout_ms. */
static long
wait_backend_closed(int timeout_ms)
{
	uint64_t	 t0 = it_now();
	long		 active, gone;

	do {
		chaos_mock_stats(&T, &active, &gone);
		if (active == 0 && gone == 1)
			return (long)(it_now() - t0);
		it_sleep(5);
	} while (it_now() - t0 < (uint64_t)timeout_ms);
	return -1;
}

/* The X-Request-Id of a raw response head into id. */
static void
head_id(const char *resp, char *id, size_t len)
{
	const char	*p = strstr(resp, "X-Request-Id: ");

	ck_assert_ptr_nonnull(p);
	snprintf(id, len, "%.*s", (int)strcspn(p + 14, "\r\n"), p + 14);
}

/* ms until worker pid is idle again, or -1 after timeout_ms. */
static long
wait_idle_pid(long pid, int timeout_ms)
{
	struct chaos_worker	 w[2 * CHAOS_WORKERS];
	uint64_t		 t0 = it_now();
	size_t			 n, i;

	do {
		n = chaos_workers(&T, w, 2 * CHAOS_WORKERS);
		for (i = 0; i < n; i++)
			if (w[i].cw_pid == pid &&
			    strcmp(w[i].cw_state, "idle") == 0)
				return (long)(it_now() - t0);
		it_sleep(5);
	} while (it_now() - t0 < (uint64_t)timeout_ms);
	return -1;
}

/* A normal request after the trickle: served, by which worker. */
static long
next_request_worker(void)
{
	struct it_resp	 r;
	char		*body = chaos_body(false, "{\"text\": \"next\"}"), id[64];
	char		*log;
	size_t		 len;
	long		 pid;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	ck_assert_ptr_nonnull(it_header(&r, "X-Request-Id", id, sizeof(id)));
	it_resp_free(&r);
	free(body);
	it_sleep(50);		/* the access log line follows the reply */
	log = chaos_log(&T, &len);
	pid = chaos_access_worker(log, id);
	free(log);
	return pid;
}

START_TEST(trickle_meets_deadline)
{
	struct buf		 out = BUF_INIT;
	struct sse_summary	 ss;
	char			*body = chaos_body(true, "{\"text\": \"tick\", "
				    "\"forever\": true, \"delay_ms\": 10000}");
	char			 id[64], *log;
	long			 ended, closed, pid, next, idle;
	long			 hi = chaos_limit(500, 1000);
	uint64_t		 t0;
	size_t			 len;
	int			 fd;

	chaos_start(&T, "\"request_timeout_s\": 2", NULL);
	fd = it_connect(&T);
	t0 = it_now();
	it_send_post(fd, "/v1/chat/completions", body, NULL);
	it_read_until(fd, &out, "data: [DONE]", 15000);
	ended = (long)(it_now() - t0);
	closed = wait_backend_closed(3000);
	close(fd);
	head_id(out.b_data, id, sizeof(id));
	it_sse_parse(strstr(out.b_data, "\r\n\r\n") + 4, &ss);
	chaos_say("trickle: answer ended %ld ms after the request "
	    "(request_timeout %d ms; limit +%ld ms), backend call closed %ld "
	    "ms later", ended, DEADLINE_MS, hi, closed);
	ck_assert_msg(ss.ss_error && strstr(out.b_data, "deadline") != NULL,
	    "no deadline error: %.400s", out.b_data);
	ck_assert_str_eq(ss.ss_text, "tick");	/* one token came */
	free(ss.ss_text);
	ck_assert_int_ge(ended, DEADLINE_MS - 50);
	ck_assert_int_le(ended, DEADLINE_MS + hi);
	ck_assert_int_ge(closed, 0);
	ck_assert_int_le(closed, hi);
	log = chaos_log(&T, &len);
	pid = chaos_access_worker(log, id);
	ck_assert_ptr_null(strstr(log, "killing worker"));
	free(log);
	ck_assert_int_gt(pid, 0);
	idle = wait_idle_pid(pid, 2000);
	next = next_request_worker();
	chaos_say("trickle: worker pid %ld served the trickle and was idle "
	    "again (waited %ld ms); the next request went to pid %ld", pid,
	    idle, next);
	ck_assert_int_ge(idle, 0);
	ck_assert_int_eq(next, pid);
	buf_free(&out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

void
chaos_add_deadline(Suite *s)
{
	chaos_tcase(s, "trickle", trickle_meets_deadline, 60);
}
