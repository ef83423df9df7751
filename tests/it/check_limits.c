/* check_limits.c - integration: --concurrency and per-endpoint slots held by the gateway across workers. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../testmain.h"
#include "../unit/pgtmp.h"
#include "harness.h"

static struct it	 T;
static struct pgtmp	 L_cluster;	/* main starts it, for the pg case */

static const char endpoint_fmt[] = "{\"endpoint\": \"http://127.0.0.1:%d\","
    " \"apiTypeConfigFileName\": \"Open-AI-API\", \"modelNameToSendToAPI\":"
    " \"mock-model\", \"promptTemplate\": null, \"maxContextTokenSize\":"
    " 4096, \"maxConcurrentRequests\": %d}\n";

/* Start with settings (every test runs two workers at least), the Mock
 * endpoint allowing limit calls at once (0: no limit of its own). The
 * tests need both workers up: a request queued for a worker is not one
 * waiting for a slot. */
static void
start(const char *settings, int limit)
{
	char	 ep[512];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	snprintf(ep, sizeof(ep), endpoint_fmt, T.it_mock_port, limit);
	it_file(&T, "Endpoints/it/Mock.json", ep);
	it_gateway_start(&T, NULL);
	it_wait_idle(&T, 2);
}

static char *
chat_body(bool stream, const char *mock_json)
{
	json_t	*b = json_pack("{s:s,s:b,s:[{s:s,s:s+}]}", "model", "x",
		    "stream", stream, "messages", "role", "user", "content",
		    "#mock ", mock_json);
	char	*s = json_dumps(b, 0);

	json_decref(b);
	return s;
}

static json_int_t
mock_requests(void)
{
	json_t		*j = it_get_json(&T, "mock:/mock/stats");
	json_int_t	 v = json_integer_value(json_object_get(j, "requests"));

	json_decref(j);
	return v;
}

static double
metric(const char *series)
{
	return it_metric(&T, series);
}

#define SLOTS_USED	"sluice_endpoint_slots_in_use{endpoint=\"Mock\"}"
#define SLOTS_WAITING	"sluice_endpoint_slots_waiting{endpoint=\"Mock\"}"

/* Both backend calls in the mock's log, oldest first: the later must
 * have started after the earlier ended. */
static void
assert_calls_serialized(void)
{
	json_t		*a = it_get_json(&T, "mock:/mock/requests");
	json_int_t	 end0, start1;

	ck_assert_uint_eq(json_array_size(a), 2);
	end0 = json_integer_value(json_object_get(json_array_get(a, 0),
	    "t_end_ms"));
	start1 = json_integer_value(json_object_get(json_array_get(a, 1),
	    "t_ms"));
	ck_assert_msg(end0 > 0 && start1 >= end0, "second call started at %lld,"
	    " before the first ended at %lld", (long long)start1,
	    (long long)end0);
	json_decref(a);
}

struct seen {
	bool	 waiting_seen;	/* metrics showed one waiter */
	bool	 phase_seen;	/* a worker's phase said so */
};

static void
watch_waiting(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct seen	*sn = arg;
	json_t		*j, *w;
	size_t		 i;

	if (sn->waiting_seen && sn->phase_seen)
		return;
	if (metric(SLOTS_WAITING) == 1 && metric(SLOTS_USED) == 1)
		sn->waiting_seen = true;
	j = it_get_json(&T, "/admin/workers");
	json_array_foreach(json_object_get(j, "workers"), i, w)
		if (strstr(json_string_value(json_object_get(w, "phase")),
		    "waiting for a slot on endpoint Mock") != NULL)
			sn->phase_seen = true;
	json_decref(j);
}

static void
two_streams_one_at_a_time(void)
{
	char		*body = chat_body(true, "{\"delay_ms\": 60}");
	struct it_stream s[2] = { { .s_body = body }, { .s_body = body } };
	struct seen	 sn = { false, false };
	struct sse_summary ss;
	size_t		 i;

	it_streams(&T, s, 2, 20000, watch_waiting, &sn);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(s[i].s_status, 200);
		it_sse_parse(s[i].s_out.b_data, &ss);
		ck_assert_str_eq(ss.ss_text,
		    "The quick brown fox jumps over the lazy dog.");
		ck_assert(ss.ss_done && !ss.ss_error);
		free(ss.ss_text);
		buf_free(&s[i].s_out);
	}
	ck_assert_msg(sn.waiting_seen, "/metrics never showed the waiter");
	ck_assert_msg(sn.phase_seen, "no worker phase said it was waiting");
	assert_calls_serialized();
	ck_assert(metric(SLOTS_USED) == 0 && metric(SLOTS_WAITING) == 0);
	free(body);
}

START_TEST(endpoint_limit_serializes_calls)
{
	start("\"min_workers\": 2, \"max_workers\": 2", 1);
	two_streams_one_at_a_time();
	it_stop_clean(&T);
}
END_TEST

/* Whether a worker of t says it waits for a turn across gateways. */
static bool
turn_waiter(struct it *t)
{
	json_t	*j = it_get_json(t, "/admin/workers"), *w;
	size_t	 i;
	bool	 seen = false;

	json_array_foreach(json_object_get(j, "workers"), i, w)
		if (strstr(json_string_value(json_object_get(w, "phase")),
		    "waiting for a turn on endpoint Mock across gateways") !=
		    NULL)
			seen = true;
	json_decref(j);
	return seen;
}

struct turn_watch {
	struct it	*tw_other;	/* the second gateway */
	bool		 tw_seen;	/* a worker of either waited */
};

static void
watch_turns(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct turn_watch	*tw = arg;

	if (!tw->tw_seen)
		tw->tw_seen = turn_waiter(t) || turn_waiter(tw->tw_other);
}

/*
 * Two gateways on one PostgreSQL store, each with its own slots: the
 * endpoint's limit of 1 still holds across them (issue 21 item 3). A
 * stream through each: the second backend call starts after the first
 * ended, and the one that waited said so in its phase.
 */
START_TEST(pg_limit_holds_across_gateways)
{
	char		 url[512], set[900], ep[512], murl[64];
	char		*body = chat_body(true, "{\"delay_ms\": 60}");
	struct it	 B;
	struct it_stream s[2] = { { .s_body = body }, { .s_body = body } };
	struct turn_watch tw = { &B, false };
	size_t		 i;

	ck_assert_int_eq(pgtmp_newdb(&L_cluster, url, sizeof(url)), 0);
	snprintf(set, sizeof(set), "\"min_workers\": 2, \"max_workers\": 2, "
	    "\"store\": {\"url\": \"%s\"}", url);
	start(set, 1);
	memset(&B, 0, sizeof(B));
	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d", T.it_mock_port);
	it_config(&B, set, murl);
	snprintf(ep, sizeof(ep), endpoint_fmt, T.it_mock_port, 1);
	it_file(&B, "Endpoints/it/Mock.json", ep);
	it_gateway_start(&B, NULL);
	it_wait_idle(&B, 2);
	s[1].s_port = B.it_port;
	it_streams(&T, s, 2, 20000, watch_turns, &tw);
	ck_assert_msg(tw.tw_seen, "no worker said it waited for a turn "
	    "across gateways");
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(s[i].s_status, 200);
		buf_free(&s[i].s_out);
	}
	assert_calls_serialized();
	it_stop_clean(&B);
	it_stop_clean(&T);
	free(body);
}
END_TEST

/* WilmerAI's --concurrency-level endpoint: the same limit on every
 * endpoint that sets none. */
START_TEST(endpoint_level_applies_to_every_endpoint)
{
	start("\"min_workers\": 2, \"max_workers\": 2, \"concurrency\": 1,"
	    " \"concurrency_level\": \"endpoint\"", 0);
	two_streams_one_at_a_time();
	it_stop_clean(&T);
}
END_TEST

struct gate_probe {
	bool		 done;
	long		 models_status;
	uint64_t	 models_ms;
	struct it_resp	 openai;	/* a sixth request, not streamed */
	struct it_resp	 ollama;
};

/* While the five wait: GET routes answer at once, and refused requests
 * carry the exact bodies and Retry-After. */
static void
probe_gate(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct gate_probe	*p = arg;
	struct it_resp		 r;
	char			*b;
	uint64_t		 t0;

	if (p->done || metric("sluice_concurrency_waiting") < 3)
		return;
	p->done = true;
	t0 = it_now();
	ck_assert_int_eq(it_request(t, "GET", "/v1/models", NULL, &r), 0);
	p->models_ms = it_now() - t0;
	p->models_status = r.r_status;
	it_resp_free(&r);
	b = chat_body(false, "{}");
	ck_assert_int_eq(it_request(t, "POST", "/v1/chat/completions", b,
	    &p->openai), 0);
	ck_assert_int_eq(it_request(t, "POST", "/api/chat", b, &p->ollama), 0);
	free(b);
}

START_TEST(global_limit_refuses_with_503)
{
	char		*body = chat_body(true, "{\"delay_ms\": 400}");
	struct it_stream s[5];
	struct gate_probe p;
	char		 h[64];
	int		 ok = 0, busy = 0;
	size_t		 i;

	memset(&p, 0, sizeof(p));
	memset(s, 0, sizeof(s));
	start("\"min_workers\": 2, \"max_workers\": 4, \"concurrency\": 2,"
	    " \"concurrency_timeout_s\": 0.6", 0);
	for (i = 0; i < 5; i++)
		s[i].s_body = body;
	it_streams(&T, s, 5, 30000, probe_gate, &p);
	for (i = 0; i < 5; i++) {
		if (s[i].s_status == 200)
			ok++;
		else if (s[i].s_status == 503 && strcmp(s[i].s_out.b_data,
		    "{\"error\":{\"message\":\"Server busy, concurrency limit "
		    "reached\",\"type\":\"server_error\",\"code\":503}}") == 0)
			busy++;
		buf_free(&s[i].s_out);
	}
	ck_assert_int_eq(ok, 2);
	ck_assert_int_eq(busy, 3);
	ck_assert(p.done);
	ck_assert_int_eq(p.models_status, 200);
	ck_assert_uint_lt(p.models_ms, 300);
	ck_assert_int_eq(p.openai.r_status, 503);
	ck_assert_str_eq(p.openai.r_body.b_data, "{\"error\":{\"message\":"
	    "\"Server busy, concurrency limit reached\",\"type\":"
	    "\"server_error\",\"code\":503}}");
	ck_assert_ptr_nonnull(it_header(&p.openai, "Retry-After", h,
	    sizeof(h)));
	ck_assert_int_eq(p.ollama.r_status, 503);
	ck_assert_str_eq(p.ollama.r_body.b_data,
	    "{\"error\":\"Server busy, concurrency limit reached\"}");
	ck_assert_int_eq(mock_requests(), 2);	/* refused ones never ran */
	ck_assert(metric("sluice_concurrency_active") == 0);
	it_resp_free(&p.openai);
	it_resp_free(&p.ollama);
	free(body);
	it_stop_clean(&T);
}
END_TEST

/* The busy worker that is not waiting for a slot: the holder. */
static pid_t
slot_holder(void)
{
	json_t		*j = it_get_json(&T, "/admin/workers"), *w;
	size_t		 i;
	pid_t		 pid = 0;
	const char	*st, *ph;

	json_array_foreach(json_object_get(j, "workers"), i, w) {
		st = json_string_value(json_object_get(w, "state"));
		ph = json_string_value(json_object_get(w, "phase"));
		if (st != NULL && strcmp(st, "busy") == 0 && ph != NULL &&
		    strstr(ph, "waiting for a slot") == NULL)
			pid = (pid_t)json_integer_value(json_object_get(w,
			    "pid"));
	}
	json_decref(j);
	return pid;
}

struct killer {
	pid_t		 asker;		/* the second request, in a child */
	pid_t		 victim;
	uint64_t	 killed_at;
	json_int_t	 before;
	uint64_t	 reached_ms;	/* kill to the waiter's backend call */
};

/* The second request, once the first holds the slot: it must wait, be
 * served after the kill, and get the whole answer. */
static void
ask_second(void)
{
	char		*body = chat_body(false, "{}");
	struct it_resp	 r;
	int		 ok;

	ok = it_request(&T, "POST", "/v1/chat/completions", body, &r) == 0 &&
	    r.r_status == 200 && strstr(r.r_body.b_data,
	    "The quick brown fox jumps over the lazy dog.") != NULL;
	_exit(ok ? 0 : 1);
}

/* When the first stream holds the slot, send the second request; once
 * it waits, kill -9 the holder and time how long until the waiter's
 * call reaches the mock. */
static void
kill_holder(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct killer	*k = arg;

	if (k->asker == 0) {
		if (metric(SLOTS_USED) != 1)
			return;
		if ((k->asker = fork()) == 0)
			ask_second();
	} else if (k->victim == 0) {
		if (metric(SLOTS_WAITING) != 1)
			return;
		k->victim = slot_holder();
		ck_assert_int_gt(k->victim, 0);
		k->before = mock_requests();
		k->killed_at = it_now();
		ck_assert_int_eq(kill(k->victim, SIGKILL), 0);
	} else if (k->reached_ms == 0 && mock_requests() > k->before)
		k->reached_ms = it_now() - k->killed_at;
}

START_TEST(killed_holder_gives_its_slot_back)
{
	char		*hold = chat_body(true, "{\"forever\": true, "
			    "\"delay_ms\": 50}");
	struct it_stream s[1] = { { .s_body = hold } };
	struct killer	 k = { 0, 0, 0, 0, 0 };
	struct sse_summary ss;
	int		 st;

	start("\"min_workers\": 2, \"max_workers\": 2", 1);
	it_streams(&T, s, 1, 20000, kill_holder, &k);
	/* The killed stream ends at once: keep watching for the waiter. */
	while (k.victim > 0 && k.reached_ms == 0 &&
	    it_now() - k.killed_at < 3000) {
		kill_holder(&T, s, 1, &k);
		it_sleep(5);
	}
	ck_assert_int_gt(k.asker, 0);
	ck_assert_int_eq(waitpid(k.asker, &st, 0), k.asker);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the waiting request did not get its answer");
	ck_assert_int_gt(k.victim, 0);
	ck_assert_msg(k.reached_ms > 0 && k.reached_ms < 1000,
	    "the waiter reached the backend %llu ms after the kill",
	    (unsigned long long)k.reached_ms);
	it_sse_parse(s[0].s_out.b_data, &ss);
	ck_assert(ss.ss_error);		/* the killed one says so */
	free(ss.ss_text);
	buf_free(&s[0].s_out);
	free(hold);
	it_stop_clean(&T);
}
END_TEST

START_TEST(cancelled_waiter_never_reaches_backend)
{
	char		*hold = chat_body(true, "{\"delay_ms\": 150}");
	char		*waiter = chat_body(true, "{}");
	struct it_stream s[1] = { { .s_body = hold } };
	int		 fd;
	pid_t		 child;

	start("\"min_workers\": 2, \"max_workers\": 2", 1);
	/* The holder streams for ~1.4 s; the waiter leaves meanwhile. */
	if ((child = fork()) == 0) {
		it_sleep(150);
		fd = it_connect(&T);
		it_send_post(fd, "/v1/chat/completions", waiter, NULL);
		it_sleep(400);
		close(fd);
		_exit(0);
	}
	it_streams(&T, s, 1, 20000, NULL, NULL);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	ck_assert_int_eq(s[0].s_status, 200);
	ck_assert_int_eq(mock_requests(), 1);
	it_sleep(300);			/* the slot it would have had is free */
	ck_assert_int_eq(mock_requests(), 1);
	ck_assert(metric(SLOTS_WAITING) == 0 && metric(SLOTS_USED) == 0);
	buf_free(&s[0].s_out);
	free(hold);
	free(waiter);
	it_stop_clean(&T);
}
END_TEST

struct late {
	bool		 done;
	struct it_resp	 r;
};

static void
late_request(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct late	*l = arg;
	char		*b;

	if (l->done || metric(SLOTS_USED) != 1)
		return;
	l->done = true;
	b = chat_body(false, "{}");
	ck_assert_int_eq(it_request(t, "POST", "/v1/chat/completions", b,
	    &l->r), 0);
	free(b);
}

/* No backupEndpointName: a call that cannot get a turn in time fails
 * with 503 naming the endpoint. */
START_TEST(slot_timeout_is_503_naming_endpoint)
{
	char		*hold = chat_body(true, "{\"delay_ms\": 200}");
	struct it_stream s[1] = { { .s_body = hold } };
	struct late	 l;
	json_t		*j;
	const char	*msg;

	memset(&l, 0, sizeof(l));
	start("\"min_workers\": 2, \"max_workers\": 2, \"concurrency\": 1,"
	    " \"concurrency_level\": \"endpoint\", \"concurrency_timeout_s\":"
	    " 0.4", 0);
	it_streams(&T, s, 1, 20000, late_request, &l);
	ck_assert(l.done);
	ck_assert_int_eq(l.r.r_status, 503);
	j = it_json(l.r.r_body.b_data);
	msg = json_string_value(json_object_get(json_object_get(j, "error"),
	    "message"));
	ck_assert_ptr_nonnull(msg);
	ck_assert_msg(strstr(msg, "endpoint 'Mock'") != NULL &&
	    strstr(msg, "busy") != NULL, "message: %s", msg);
	json_decref(j);
	ck_assert_int_eq(s[0].s_status, 200);
	ck_assert_int_eq(mock_requests(), 1);
	it_resp_free(&l.r);
	buf_free(&s[0].s_out);
	free(hold);
	it_stop_clean(&T);
}
END_TEST

static Suite *
limits_suite(bool pg)
{
	Suite	*s = suite_create("limits");
	TCase	*tc = tcase_create("limits");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, endpoint_limit_serializes_calls);
	tcase_add_test(tc, endpoint_level_applies_to_every_endpoint);
	tcase_add_test(tc, global_limit_refuses_with_503);
	tcase_add_test(tc, killed_holder_gives_its_slot_back);
	tcase_add_test(tc, cancelled_waiter_never_reaches_backend);
	tcase_add_test(tc, slot_timeout_is_503_naming_endpoint);
	suite_add_tcase(s, tc);
	if (!pg)
		return s;
	tc = tcase_create("pg");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pg_limit_holds_across_gateways);
	suite_add_tcase(s, tc);
	return s;
}

/* The PostgreSQL case needs the cluster: started here, once (skipped,
 * loudly, without PostgreSQL). */
int
main(void)
{
	bool	 pg = pgtmp_start(&L_cluster, "check_limits") == 0;
	int	 rc = check_main(limits_suite(pg));

	pgtmp_stop(&L_cluster);
	return rc;
}
