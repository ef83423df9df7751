/* check_it.c - integration: real gateway, real workers, mock backend, real HTTP. */
#include <check.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

static struct it	 T;

static void
start(const char *settings)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	it_gateway_start(&T, NULL);
}

/* A chat body whose user message scripts the mock. */
static char *
chat_body(bool stream, const char *mock_json)
{
	json_t	*b = json_pack("{s:s,s:b,s:[{s:s,s:s},{s:s,s:s+}]}", "model",
		    "anything", "stream", stream, "messages", "role", "system",
		    "content", "Be terse.", "role", "user", "content",
		    "#mock ", mock_json);
	char	*s = json_dumps(b, 0);

	json_decref(b);
	return s;
}

static json_t *
last_mock_body(void)
{
	struct it_resp	 r;
	json_t		*a, *body;

	ck_assert_int_eq(it_request(&T, "GET", "mock:/mock/requests", NULL,
	    &r), 0);
	a = it_json(r.r_body.b_data);
	body = json_incref(json_object_get(json_array_get(a,
	    json_array_size(a) - 1), "body"));
	json_decref(a);
	it_resp_free(&r);
	return body;
}

START_TEST(nonstream_chat)
{
	struct it_resp	 r;
	json_t		*j, *sent;
	char		*body = chat_body(false, "{\"text\": \"Hello there, friend.\"}");
	char		 h[128];

	start(NULL);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	ck_assert_str_eq(it_header(&r, "Content-Type", h, sizeof(h)),
	    "application/json");
	ck_assert_uint_eq(strlen(it_header(&r, "X-Request-Id", h, sizeof(h))),
	    36);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(j, "object")),
	    "chat.completion");
	ck_assert_str_eq(json_string_value(json_object_get(j, "model")), "it");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(j, "choices"), 0), "message"),
	    "content")), "Hello there, friend.");
	ck_assert_int_gt(json_integer_value(json_object_get(json_object_get(j,
	    "usage"), "total_tokens")), 0);
	json_decref(j);
	/* What the backend received. */
	sent = last_mock_body();
	ck_assert_str_eq(json_string_value(json_object_get(sent, "model")),
	    "mock-model");
	ck_assert(json_is_false(json_object_get(sent, "stream")));
	ck_assert_int_eq(json_integer_value(json_object_get(sent, "max_tokens")),
	    300);
	ck_assert(json_real_value(json_object_get(sent, "temperature")) == 0.5);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(sent, "messages"), 0), "content")), "Be terse.");
	ck_assert_uint_eq(json_array_size(json_object_get(sent, "messages")), 2);
	json_decref(sent);
	it_resp_free(&r);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(stream_chat)
{
	struct it_stream	 s;
	struct sse_summary	 ss;
	char			*body = chat_body(true, "{\"text\": \"one two "
				    "three four five six\", \"delay_ms\": 5}");

	start(NULL);
	memset(&s, 0, sizeof(s));
	s.s_body = body;
	it_streams(&T, &s, 1, 10000, NULL, NULL);
	ck_assert_int_eq(s.s_status, 200);
	ck_assert(s.s_finished);
	it_sse_parse(s.s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "one two three four five six");
	ck_assert(ss.ss_first_has_role);
	ck_assert(ss.ss_one_id);
	ck_assert(ss.ss_done);
	ck_assert(!ss.ss_error);
	ck_assert_str_eq(ss.ss_finish, "stop");
	ck_assert_int_ge(ss.ss_chunks, 8);	/* role + 6 words + final */
	free(ss.ss_text);
	buf_free(&s.s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(concurrent_streams)
{
	struct it_stream	 s[32];
	struct sse_summary	 ss;
	char			*bodies[32], text[64], mock[128];
	int			 i;

	start("\"min_workers\": 8, \"max_workers\": 8");
	memset(s, 0, sizeof(s));
	for (i = 0; i < 32; i++) {
		snprintf(text, sizeof(text), "stream %d says alpha beta gamma", i);
		snprintf(mock, sizeof(mock), "{\"text\": \"%s\", \"delay_ms\": 10}",
		    text);
		s[i].s_body = bodies[i] = chat_body(true, mock);
	}
	it_streams(&T, s, 32, 30000, NULL, NULL);
	for (i = 0; i < 32; i++) {
		snprintf(text, sizeof(text), "stream %d says alpha beta gamma", i);
		ck_assert_msg(s[i].s_status == 200 && s[i].s_finished,
		    "stream %d: status %ld", i, s[i].s_status);
		it_sse_parse(s[i].s_out.b_data, &ss);
		ck_assert_str_eq(ss.ss_text, text);
		ck_assert(ss.ss_done && !ss.ss_error);
		free(ss.ss_text);
		buf_free(&s[i].s_out);
		free(bodies[i]);
	}
	it_stop_clean(&T);
}
END_TEST

struct kill_plan {
	int		 kp_sig;
	bool		 kp_done;
	size_t		 kp_log;	/* log offset at the kill */
	size_t		 kp_min_bytes;
};

/* Once every stream has begun, signal one busy worker. */
static void
kill_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct kill_plan	*kp = arg;
	size_t			 i;
	pid_t			 pid;

	if (kp->kp_done)
		return;
	for (i = 0; i < n; i++)
		if (s[i].s_out.b_len < kp->kp_min_bytes)
			return;
	if ((pid = it_busy_worker(t)) == 0)
		return;
	kp->kp_log = it_log_size(t);
	kill(pid, kp->kp_sig);
	kp->kp_done = true;
}

START_TEST(kill9_worker_midstream)
{
	struct it_stream	 s[4];
	struct sse_summary	 ss;
	struct kill_plan	 kp = { SIGKILL, false, 0, 300 };
	const char		*words = "a1 b2 c3 d4 e5 f6 g7 h8 i9 j10 k11 "
				    "l12 m13 n14 o15 p16 q17 r18 s19 t20";
	char			 mock[256], *body;
	int			 i, errors = 0, complete = 0;
	long			 gap;

	start("\"min_workers\": 4, \"max_workers\": 4");
	snprintf(mock, sizeof(mock), "{\"text\": \"%s\", \"delay_ms\": 60}",
	    words);
	body = chat_body(true, mock);
	memset(s, 0, sizeof(s));
	for (i = 0; i < 4; i++)
		s[i].s_body = body;
	it_streams(&T, s, 4, 20000, kill_tick, &kp);
	ck_assert(kp.kp_done);
	for (i = 0; i < 4; i++) {
		it_sse_parse(s[i].s_out.b_data, &ss);
		ck_assert_msg(ss.ss_done, "stream %d did not end properly", i);
		if (ss.ss_error)
			errors++;
		else if (strcmp(ss.ss_text, words) == 0)
			complete++;
		free(ss.ss_text);
		buf_free(&s[i].s_out);
	}
	ck_assert_int_eq(errors, 1);
	ck_assert_int_eq(complete, 3);
	/* The replacement said HELLO within a second of the death. */
	gap = it_log_gap(&T, kp.kp_log, "exited on signal 9", "ready in");
	ck_assert_msg(gap >= 0 && gap < 1000, "replacement after %ld ms", gap);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(sigstop_worker_is_replaced)
{
	struct it_stream	 s;
	struct kill_plan	 kp = { SIGSTOP, false, 0, 0 };
	char			*body = chat_body(false, "{\"text\": \"x\", "
				    "\"head_delay_ms\": 20000}");
	json_t			*j;
	size_t			 from;

	start("\"min_workers\": 2, \"max_workers\": 2, \"hang_timeout_s\": 2,"
	    " \"kill_grace_s\": 1");
	memset(&s, 0, sizeof(s));
	s.s_body = body;
	it_streams(&T, &s, 1, 15000, kill_tick, &kp);
	ck_assert(kp.kp_done);
	ck_assert_int_eq(s.s_status, 502);
	j = it_json(s.s_out.b_data);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
	    json_object_get(j, "error"), "message")), "stopped responding"));
	json_decref(j);
	ck_assert_uint_lt(s.s_end_ms, 6000);
	from = kp.kp_log;
	ck_assert(it_log_wait(&T, "hung", &from, 1000));
	ck_assert(it_log_wait(&T, "ready in", &from, 3000));
	buf_free(&s.s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

static void
expect_error(const char *method, const char *path, const char *body,
    long status, const char *needle)
{
	struct it_resp	 r;
	json_t		*j;
	const char	*msg;
	char		 h[64];

	ck_assert_int_eq(it_request(&T, method, path, body, &r), 0);
	ck_assert_int_eq(r.r_status, status);
	ck_assert_ptr_nonnull(it_header(&r, "X-Request-Id", h, sizeof(h)));
	j = it_json(r.r_body.b_data);
	msg = json_string_value(json_object_get(json_object_get(j, "error"),
	    "message"));
	ck_assert_msg(msg != NULL && strstr(msg, needle) != NULL,
	    "%ld body: %s", status, r.r_body.b_data);
	json_decref(j);
	it_resp_free(&r);
}

START_TEST(bad_requests_get_json_errors)
{
	char	*big = malloc(100001);

	start("\"max_body_bytes\": 65536");
	expect_error("POST", "/v1/chat/completions", "{not json", 400,
	    "Invalid JSON");
	expect_error("POST", "/v1/chat/completions", "{\"model\": \"x\"}",
	    400, "The 'messages' field is required.");
	expect_error("POST", "/v1/chat/completions",
	    "{\"messages\": [{\"content\": \"hi\"}]}", 400, "'role'");
	memset(big, 'a', 100000);
	big[100000] = '\0';
	expect_error("POST", "/v1/chat/completions", big, 413, "");
	expect_error("GET", "/nope", NULL, 404, "No route");
	expect_error("GET", "/v1/chat/completions", NULL, 405, "not allowed");
	free(big);
	it_stop_clean(&T);
}
END_TEST

START_TEST(backend_down_names_endpoint)
{
	char	*body = chat_body(false, "{}");

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, "http://127.0.0.1:1");
	it_gateway_start(&T, NULL);
	expect_error("POST", "/v1/chat/completions", body, 502,
	    "endpoint 'Mock' (http://127.0.0.1:1)");
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(backend_errors_are_502)
{
	char	*e500 = chat_body(false, "{\"status\": 500}");
	char	*garbage = chat_body(false, "{\"garbage\": true}");
	char	*sgarbage = chat_body(true, "{\"garbage\": true}");

	start(NULL);
	expect_error("POST", "/v1/chat/completions", e500, 502,
	    "answered HTTP 500");
	expect_error("POST", "/v1/chat/completions", garbage, 502, "Mock");
	expect_error("POST", "/v1/chat/completions", sgarbage, 502, "Mock");
	free(e500);
	free(garbage);
	free(sgarbage);
	it_stop_clean(&T);
}
END_TEST

START_TEST(backend_cut_midstream)
{
	struct it_stream	 s;
	struct sse_summary	 ss;
	char			*body = chat_body(true, "{\"text\": \"a b c d e f\","
				    " \"disconnect_after\": 3, \"delay_ms\": 5}");

	start(NULL);
	memset(&s, 0, sizeof(s));
	s.s_body = body;
	it_streams(&T, &s, 1, 10000, NULL, NULL);
	ck_assert_int_eq(s.s_status, 200);
	it_sse_parse(s.s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "a b c");
	ck_assert(ss.ss_error);
	ck_assert(ss.ss_done);
	free(ss.ss_text);
	buf_free(&s.s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(disconnect_cancels_backend_call)
{
	char		*body = chat_body(true, "{\"forever\": true, "
			    "\"delay_ms\": 20}");
	char		*req;
	struct buf	 resp = BUF_INIT;
	json_t		*j;
	uint64_t	 t0;
	int		 gone = 0, busy = 1;

	start(NULL);
	if (asprintf(&req, "POST /v1/chat/completions HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n%s", T.it_port, strlen(body),
	    body) == -1)
		abort();
	it_raw(&T, req, strlen(req), &resp, 400);	/* then hang up */
	ck_assert_ptr_nonnull(strstr(resp.b_data, "data: "));
	t0 = it_now();
	while (it_now() - t0 < 2000 && (gone == 0 || busy != 0)) {
		j = it_get_json(&T, "mock:/mock/stats");
		gone = (int)json_integer_value(json_object_get(j, "client_gone"));
		json_decref(j);
		j = it_get_json(&T, "/health");
		busy = (int)json_integer_value(json_object_get(json_object_get(j,
		    "workers"), "busy"));
		json_decref(j);
		it_sleep(20);
	}
	ck_assert_int_eq(gone, 1);	/* the backend saw us leave */
	ck_assert_int_eq(busy, 0);	/* and the worker is free again */
	ck_assert_uint_lt(it_now() - t0, 1000);
	buf_free(&resp);
	free(req);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* Workers hold stdio, their channel and what they open themselves;
 * nothing the gateway inherited from its own parent (here, Check's
 * temporary files and the test's log descriptor). Looked at once every
 * worker is idle: one still starting may hold a file of its own open
 * for a moment (OpenSSL reads its configuration as libcurl starts). */
static void
assert_worker_fds_clean(void)
{
	pid_t	 pids[16];
	size_t	 n = it_worker_pids(&T, pids, 16), i;
	char	 path[64], target[256];
	ssize_t	 k;
	int	 fd;

	ck_assert_uint_ge(n, 1);
	it_wait_idle(&T, (int)n);
	n = it_worker_pids(&T, pids, 16);
	for (i = 0; i < n; i++)
		for (fd = 4; fd < 256; fd++) {
			snprintf(path, sizeof(path), "/proc/%d/fd/%d",
			    (int)pids[i], fd);
			if ((k = readlink(path, target, sizeof(target) - 1)) < 0)
				continue;
			target[k] = '\0';
			ck_assert_msg(strncmp(target, "socket:", 7) == 0 ||
			    strncmp(target, "anon_inode:", 11) == 0,
			    "worker %d inherited fd %d -> %s", (int)pids[i], fd,
			    target);
		}
}

START_TEST(models_and_health)
{
	json_t	*j;

	start(NULL);
	assert_worker_fds_clean();
	j = it_get_json(&T, "/v1/models");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(j, "data"), 0), "id")), "it");
	json_decref(j);
	j = it_get_json(&T, "/models");
	ck_assert_str_eq(json_string_value(json_object_get(j, "object")), "list");
	json_decref(j);
	j = it_get_json(&T, "/health");
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
	json_decref(j);
	it_stop_clean(&T);
}
END_TEST

static void
term_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	bool	*sent = arg;

	if (!*sent && s[0].s_out.b_len > 200) {
		kill(t->it_gw, SIGTERM);
		*sent = true;
	}
}

START_TEST(graceful_stop_finishes_streams)
{
	struct it_stream	 s;
	struct sse_summary	 ss;
	bool			 sent = false;
	char			*body = chat_body(true, "{\"text\": \"w1 w2 w3 w4 "
				    "w5 w6 w7 w8 w9 w10\", \"delay_ms\": 50}");
	pid_t			 pids[16];
	size_t			 n, i;

	start(NULL);
	n = it_worker_pids(&T, pids, 16);
	ck_assert_uint_ge(n, 1);
	memset(&s, 0, sizeof(s));
	s.s_body = body;
	it_streams(&T, &s, 1, 10000, term_tick, &sent);
	ck_assert(sent);
	it_sse_parse(s.s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10");
	ck_assert(ss.ss_done && !ss.ss_error);
	free(ss.ss_text);
	buf_free(&s.s_out);
	free(body);
	it_stop_clean(&T);
	for (i = 0; i < n; i++)		/* every worker is gone too */
		ck_assert_msg(kill(pids[i], 0) == -1, "worker %d survived",
		    (int)pids[i]);
}
END_TEST

struct third {
	bool		 t_done;
	struct it_resp	 t_resp;
};

/* With one worker busy and one request queued, a third is refused. */
static void
third_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct third	*th = arg;
	char		*body;
	json_t		*h;
	int		 busy, queued;

	if (th->t_done)
		return;
	h = it_get_json(&T, "/health");
	busy = (int)json_integer_value(json_object_get(json_object_get(h,
	    "workers"), "busy"));
	queued = (int)json_integer_value(json_object_get(h, "queue"));
	json_decref(h);
	if (busy != 1 || queued != 1)
		return;
	body = chat_body(false, "{}");
	it_request(t, "POST", "/v1/chat/completions", body, &th->t_resp);
	free(body);
	th->t_done = true;
}

/* With every worker busy and requests waiting, /health says so. */
static void
saturated_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	bool	*seen = arg;
	json_t	*h;

	if (*seen)
		return;
	h = it_get_json(&T, "/health");
	if (json_integer_value(json_object_get(h, "queue")) > 0)
		*seen = strcmp(json_string_value(json_object_get(h, "status")),
		    "degraded") == 0;
	json_decref(h);
}

START_TEST(health_degraded_when_saturated)
{
	struct it_stream	 s[3];
	bool			 seen = false;
	char			*body = chat_body(false, "{\"head_delay_ms\": 600}");

	start("\"min_workers\": 1, \"max_workers\": 1");
	memset(s, 0, sizeof(s));
	s[0].s_body = s[1].s_body = s[2].s_body = body;
	it_streams(&T, s, 3, 10000, saturated_tick, &seen);
	ck_assert(seen);
	ck_assert_int_eq(s[2].s_status, 200);
	buf_free(&s[0].s_out);
	buf_free(&s[1].s_out);
	buf_free(&s[2].s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(full_queue_answers_503)
{
	struct it_stream	 s[2];
	struct third		 th;
	char			*body = chat_body(false, "{\"text\": \"slow\", "
				    "\"head_delay_ms\": 800}");
	char			 h[32];
	json_t			*j;

	start("\"min_workers\": 1, \"max_workers\": 1, \"queue_max\": 1");
	memset(s, 0, sizeof(s));
	memset(&th, 0, sizeof(th));
	s[0].s_body = s[1].s_body = body;
	it_streams(&T, s, 2, 10000, third_tick, &th);
	ck_assert(th.t_done);
	ck_assert_int_eq(th.t_resp.r_status, 503);
	ck_assert_str_eq(it_header(&th.t_resp, "Retry-After", h, sizeof(h)),
	    "1");
	j = it_json(th.t_resp.r_body.b_data);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
	    json_object_get(j, "error"), "message")), "queue is full"));
	json_decref(j);
	ck_assert_int_eq(s[0].s_status, 200);	/* the queued one is served */
	ck_assert_int_eq(s[1].s_status, 200);
	it_resp_free(&th.t_resp);
	buf_free(&s[0].s_out);
	buf_free(&s[1].s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(workers_recycle_after_max_requests)
{
	struct it_resp	 r;
	char		*body = chat_body(false, "{\"text\": \"ok\"}");
	size_t		 from = 0;
	int		 i;

	start("\"min_workers\": 1, \"max_workers\": 1, \"max_requests\": 2");
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
		    body, &r), 0);
		ck_assert_int_eq(r.r_status, 200);
		it_resp_free(&r);
	}
	ck_assert(it_log_wait(&T, "retired after max_requests", &from, 2000));
	ck_assert(it_log_wait(&T, "retired after max_requests", &from, 2000));
	free(body);
	it_stop_clean(&T);
}
END_TEST

static void
start_faulty(const char *settings, const char *fault)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	it_gateway_start(&T, fault);
}

START_TEST(crashing_worker_costs_one_request)
{
	char		*body = chat_body(false, "{}");
	json_t		*j;
	size_t		 from = 0;
	json_int_t	 crashes = 0;
	uint64_t	 t0;

	start_faulty("\"min_workers\": 2, \"max_workers\": 2",
	    "SLUICE_FAULT=crash");
	expect_error("POST", "/v1/chat/completions", body, 502, "died");
	ck_assert(it_log_wait(&T, "retrying on another worker", &from, 2000));
	from = 0;
	ck_assert(it_log_wait(&T, "exited on signal 6", &from, 2000));
	/* Both deaths are counted once their exits are reaped. */
	for (t0 = it_now(); crashes < 2 && it_now() - t0 < 2000; it_sleep(20)) {
		j = it_get_json(&T, "/health");
		crashes = json_integer_value(json_object_get(j, "crashes"));
		json_decref(j);
	}
	ck_assert_int_ge(crashes, 2);
	ck_assert(it_log_wait(&T, "ready in", &from, 3000));	/* replaced */
	free(body);
	it_stop_clean(&T);
}
END_TEST

static void
expect_unavailable(const char *log_needle)
{
	char		*body = chat_body(false, "{}");
	struct it_resp	 r;
	json_t		*j;
	size_t		 from = 0;

	ck_assert(it_log_wait(&T, log_needle, &from, 5000));
	ck_assert(it_log_wait(&T, log_needle, &from, 5000));	/* both */
	it_sleep(300);
	ck_assert_int_eq(it_request(&T, "GET", "/health", NULL, &r), 0);
	ck_assert_int_eq(r.r_status, 503);
	j = it_json(r.r_body.b_data);
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")),
	    "unavailable");
	json_decref(j);
	it_resp_free(&r);
	expect_error("POST", "/v1/chat/completions", body, 503,
	    "no worker can start");
	free(body);
}

START_TEST(config_exit_is_not_respawned)
{
	start_faulty("\"min_workers\": 2, \"max_workers\": 2",
	    "SLUICE_FAULT=exit_config");
	expect_unavailable("not respawning");
	it_stop_clean(&T);
}
END_TEST

START_TEST(version_mismatch_is_not_respawned)
{
	start_faulty("\"min_workers\": 2, \"max_workers\": 2",
	    "SLUICE_FAULT=bad_version");
	expect_unavailable("not respawning");
	it_stop_clean(&T);
}
END_TEST

START_TEST(silent_backend_is_not_a_hang)
{
	struct it_stream	 s;
	struct sse_summary	 ss;
	char			*body = chat_body(true, "{\"text\": \"late but "
				    "fine\", \"silent_ms\": 3500}");
	json_t			*j;

	start("\"hang_timeout_s\": 2");
	memset(&s, 0, sizeof(s));
	s.s_body = body;
	it_streams(&T, &s, 1, 15000, NULL, NULL);
	ck_assert_int_eq(s.s_status, 200);
	/* The head and SSE keep-alives went out while the backend was
	 * silent, long before the first token. */
	ck_assert_uint_lt(s.s_first_ms, 2000);
	ck_assert_ptr_nonnull(strstr(s.s_out.b_data, "\n\n:\n\n"));
	it_sse_parse(s.s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "late but fine");
	ck_assert(ss.ss_done && !ss.ss_error);
	free(ss.ss_text);
	j = it_get_json(&T, "/health");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "hung")), 0);
	json_decref(j);
	buf_free(&s.s_out);
	free(body);
	it_stop_clean(&T);
}
END_TEST

START_TEST(deadline_answers_504_and_frees_worker)
{
	char	*body = chat_body(false, "{\"head_delay_ms\": 10000}");
	json_t	*j;
	uint64_t t0;
	int	 busy = 1, gone = 0;

	start("\"request_timeout_s\": 1");
	t0 = it_now();
	expect_error("POST", "/v1/chat/completions", body, 504, "deadline");
	ck_assert_uint_lt(it_now() - t0, 3000);
	/* The worker is free again and the backend saw its call end. */
	while ((busy != 0 || gone != 1) && it_now() - t0 < 5000) {
		j = it_get_json(&T, "/health");
		busy = (int)json_integer_value(json_object_get(json_object_get(j,
		    "workers"), "busy"));
		json_decref(j);
		j = it_get_json(&T, "mock:/mock/stats");
		gone = (int)json_integer_value(json_object_get(j,
		    "client_gone"));
		json_decref(j);
		it_sleep(20);
	}
	ck_assert_int_eq(busy, 0);
	ck_assert_int_eq(gone, 1);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* A non-streaming chat request is answered 200 with text. */
static void
expect_text(const char *body, const char *text)
{
	struct it_resp	 r;
	json_t		*j;
	const char	*got;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld: %s", r.r_status,
	    r.r_body.b_data);
	j = it_json(r.r_body.b_data);
	got = json_string_value(json_object_get(json_object_get(json_array_get(
	    json_object_get(j, "choices"), 0), "message"), "content"));
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, text);
	json_decref(j);
	it_resp_free(&r);
}

static bool
wait_worker_in(const char *state, int timeout_ms)
{
	uint64_t	 t0 = it_now();

	while (it_worker_in(&T, state) == 0) {
		if (it_now() - t0 >= (uint64_t)timeout_ms)
			return false;
		it_sleep(20);
	}
	return true;
}

/* Seen while the second request waits: it queued behind the worker
 * that is past its first answer. */
static void
queued_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	bool	*seen = arg;
	json_t	*h;

	if (*seen)
		return;
	h = it_get_json(&T, "/health");
	*seen = json_integer_value(json_object_get(h, "queue")) == 1 &&
	    json_integer_value(json_object_get(json_object_get(h, "workers"),
	    "busy")) == 1 &&
	    json_integer_value(json_object_get(json_object_get(h, "workers"),
	    "idle")) == 0 && it_worker_in(t, "after") != 0;
	json_decref(h);
}

START_TEST(answer_before_work_after)
{
	char			*first = chat_body(false, "{\"text\": \"first "
				    "answer\"}");
	char			*second = chat_body(false, "{\"text\": "
				    "\"second answer\"}");
	char			*streamed = chat_body(true, "{\"text\": \"one "
				    "two three\", \"delay_ms\": 5}");
	struct it_stream	 s;
	struct sse_summary	 ss;
	bool			 queued = false;
	uint64_t		 t0, answered;
	json_t			*j, *w;

	start_faulty("\"min_workers\": 1, \"max_workers\": 1",
	    "SLUICE_FAULT=after_ms=1500");
	t0 = it_now();
	expect_text(first, "first answer");
	answered = it_now();
	ck_assert_uint_lt(answered - t0, 1000);
	/* The worker is still at work for the answered request. */
	j = it_get_json(&T, "/admin/workers");
	w = json_array_get(json_object_get(j, "workers"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(w, "state")),
	    "after");
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(w,
	    "request_id"))), 36);
	json_decref(j);
	/* The next request waits for it, then is served. */
	memset(&s, 0, sizeof(s));
	s.s_body = second;
	it_streams(&T, &s, 1, 10000, queued_tick, &queued);
	ck_assert(queued);
	ck_assert_int_eq(s.s_status, 200);
	ck_assert_ptr_nonnull(strstr(s.s_out.b_data, "second answer"));
	ck_assert_uint_ge(it_now() - answered, 1300);
	buf_free(&s.s_out);
	/* A stream ends with [DONE] while the work after it goes on. */
	ck_assert(wait_worker_in("idle", 3000));
	memset(&s, 0, sizeof(s));
	s.s_body = streamed;
	it_streams(&T, &s, 1, 10000, NULL, NULL);
	ck_assert_int_ne(it_worker_in(&T, "after"), 0);
	ck_assert_int_eq(s.s_status, 200);
	ck_assert_uint_lt(s.s_end_ms, 1000);
	it_sse_parse(s.s_out.b_data, &ss);
	ck_assert_str_eq(ss.ss_text, "one two three");
	ck_assert(ss.ss_done && !ss.ss_error);
	free(ss.ss_text);
	buf_free(&s.s_out);
	free(first);
	free(second);
	free(streamed);
	it_stop_clean(&T);
}
END_TEST

START_TEST(kill9_worker_after_answer)
{
	char	*first = chat_body(false, "{\"text\": \"before\"}");
	char	*next = chat_body(false, "{\"text\": \"after the death\"}");
	pid_t	 pid, pid2;
	size_t	 from, start;
	json_t	*j;

	start_faulty("\"min_workers\": 1, \"max_workers\": 1",
	    "SLUICE_FAULT=after_ms=5000");
	expect_text(first, "before");
	ck_assert_int_ne(pid = it_worker_in(&T, "after"), 0);
	start = from = it_log_size(&T);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert(it_log_wait(&T, "exited on signal 9", &from, 3000));
	ck_assert(it_log_wait(&T, "ready in", &from, 3000));
	expect_text(next, "after the death");	/* by the new worker */
	pid2 = it_worker_in(&T, "after");
	ck_assert_int_ne(pid2, 0);
	ck_assert_int_ne(pid2, pid);
	/* Nothing was retried or failed: the client had its answer. */
	from = start;
	ck_assert(!it_log_wait(&T, "retrying", &from, 50));
	from = start;
	ck_assert(!it_log_wait(&T, "failed", &from, 50));
	j = it_get_json(&T, "/health");
	ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "crashes")), 1);
	json_decref(j);
	free(first);
	free(next);
	it_stop_clean(&T);
}
END_TEST

static Suite *
it_suite(void)
{
	Suite	*s = suite_create("integration");

	test_case(s, "nonstream", nonstream_chat, 60);
	test_case(s, "stream", stream_chat, 60);
	test_case(s, "concurrency", concurrent_streams, 60);
	test_case(s, "kill9", kill9_worker_midstream, 60);
	test_case(s, "sigstop", sigstop_worker_is_replaced, 60);
	test_case(s, "bad_requests", bad_requests_get_json_errors, 60);
	test_case(s, "backend_down", backend_down_names_endpoint, 60);
	test_case(s, "backend_errors", backend_errors_are_502, 60);
	test_case(s, "backend_cut", backend_cut_midstream, 60);
	test_case(s, "disconnect", disconnect_cancels_backend_call, 60);
	test_case(s, "models_health", models_and_health, 60);
	test_case(s, "graceful_stop", graceful_stop_finishes_streams, 60);
	test_case(s, "queue_full", full_queue_answers_503, 60);
	test_case(s, "saturated", health_degraded_when_saturated, 60);
	test_case(s, "recycle", workers_recycle_after_max_requests, 60);
	test_case(s, "crash", crashing_worker_costs_one_request, 60);
	test_case(s, "exit_config", config_exit_is_not_respawned, 60);
	test_case(s, "bad_version", version_mismatch_is_not_respawned, 60);
	test_case(s, "silent_backend", silent_backend_is_not_a_hang, 60);
	test_case(s, "deadline", deadline_answers_504_and_frees_worker, 60);
	test_case(s, "after", answer_before_work_after, 60);
	test_case(s, "after_kill9", kill9_worker_after_answer, 60);
	return s;
}

int
main(void)
{
	return it_main(it_suite());
}
