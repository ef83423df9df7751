/* check_cache_it.c - integration: the response cache shared by every worker, through the gateway and against the mock backend. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../testmain.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;

/* The endpoint thinks before it answers; the cleaner drops that, so a
 * hit shows the cleaned answer comes from the raw one. */
static const char endpoint[] = "{\"endpoint\": \"http://127.0.0.1:%d\","
    " \"apiTypeConfigFileName\": \"Open-AI-API\","
    " \"modelNameToSendToAPI\": \"mock-model\", \"promptTemplate\": null,"
    " \"removeThinking\": true, \"startThinkTag\": \"<think>\","
    " \"endThinkTag\": \"</think>\"}\n";

static const char answer[] = "#mock {\\\"text\\\": \\\"<think>hmm</think>Hello "
    "there, friend.\\\", \\\"chunk\\\": 3}";

static void
start(const char *temperature, int workers)
{
	char	 s[512];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	snprintf(s, sizeof(s), "\"min_workers\": %d, \"max_workers\": %d, "
	    "\"cache\": {\"enabled\": true, \"max_entries\": 50, "
	    "\"ttl_minutes\": 60, \"cacheable_temperature\": 0.2}", workers,
	    workers);
	it_config(&T, s, NULL);
	snprintf(s, sizeof(s), endpoint, T.it_mock_port);
	it_file(&T, "Endpoints/it/Mock.json", s);
	snprintf(s, sizeof(s), "{\"temperature\": %s}\n", temperature);
	it_file(&T, "Presets/OpenAI/it/Mock.json", s);
	it_gateway_start(&T, NULL);
}

/* Entries in the cache; 0 when no worker has opened the database. */
static long long
cache_rows(void)
{
	char		 err[256];
	long long	 n;

	if (it_db_try(&T, "SELECT count(*) FROM response_cache", &n, err,
	    sizeof(err)) == -1) {
		ck_assert_str_eq(err, "no database");
		return 0;
	}
	return n;
}

/* One chat; its body and X-Sluice-Cache header ("" when none). */
static long
chat(bool stream, const char *user, struct it_resp *r, char *cache,
    size_t cachelen)
{
	char	 body[1024];

	snprintf(body, sizeof(body), "{\"model\": \"it\", \"stream\": %s, "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"%s\"}]}",
	    stream ? "true" : "false", user);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    r), 0);
	if (it_header(r, "X-Sluice-Cache", cache, cachelen) == NULL)
		cache[0] = '\0';
	return r->r_status;
}

/* The content deltas of an SSE body, joined by '|'. Caller frees. */
static char *
deltas(const char *sse)
{
	struct buf	 b = BUF_INIT;
	const char	*p = sse, *e;
	json_t		*j;
	const char	*c;

	buf_adds(&b, "");
	while ((p = strstr(p, "data: {")) != NULL) {
		p += 6;
		e = strstr(p, "\n\n");
		j = json_loadb(p, e != NULL ? (size_t)(e - p) : strlen(p), 0,
		    NULL);
		c = json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0), "delta"),
		    "content"));
		if (c != NULL && *c != '\0')
			buf_printf(&b, "%s%s", b.b_len > 0 ? "|" : "", c);
		json_decref(j);
	}
	return buf_take(&b);
}

/* The content of a whole answer. Caller frees. */
static char *
content(const struct it_resp *r)
{
	json_t	*j = it_json(r->r_body.b_data);
	char	*s = strdup(json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0),
		    "message"), "content")));

	json_decref(j);
	return s;
}

/* At or below cacheable_temperature: the second request is a hit, the
 * backend is not called, the answer is the same. */
START_TEST(hit_at_low_temperature)
{
	struct it_resp	 r;
	char		 hdr[16], *a, *b;

	start("0.1", 2);
	ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "miss");
	a = content(&r);
	ck_assert_str_eq(a, "Hello there, friend.");
	it_resp_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "hit");
	b = content(&r);
	ck_assert_str_eq(a, b);
	it_resp_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	ck_assert_int_eq(cache_rows(), 1);
	ck_assert(it_metric(&T, "sluice_cache_hits_total") == 1);
	ck_assert(it_metric(&T, "sluice_cache_misses_total") == 1);
	ck_assert(it_metric(&T, "sluice_cache_entries") >= 0);
	free(a);
	free(b);
	it_stop_clean(&T);
}
END_TEST

/* Above it: every request goes to the backend, nothing is kept. */
START_TEST(miss_above_temperature)
{
	struct it_resp	 r;
	char		 hdr[16];
	int		 i;

	start("0.7", 2);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)),
		    200);
		ck_assert_str_eq(hdr, "miss");
		it_resp_free(&r);
	}
	ck_assert_int_eq(it_mock_requests(&T), 2);
	ck_assert_int_eq(cache_rows(), 0);
	it_stop_clean(&T);
}
END_TEST

/* A hit on a stream replays the cleaned answer piece by piece as the
 * first stream sent it; a whole request after a stream hits too. */
START_TEST(stream_replay)
{
	struct it_resp		 r;
	struct sse_summary	 ss;
	char			 hdr[16], *d1, *d2, *w;

	start("0", 2);
	ck_assert_int_eq(chat(true, answer, &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "miss");
	d1 = deltas(r.r_body.b_data);
	it_resp_free(&r);
	ck_assert_int_eq(chat(true, answer, &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "hit");
	d2 = deltas(r.r_body.b_data);
	it_sse_parse(r.r_body.b_data, &ss);
	ck_assert(ss.ss_done && !ss.ss_error && ss.ss_one_id);
	ck_assert_str_eq(ss.ss_text, "Hello there, friend.");
	ck_assert_str_eq(d1, d2);
	ck_assert_ptr_nonnull(strchr(d1, '|'));		/* several pieces */
	it_resp_free(&r);
	ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "hit");
	w = content(&r);
	ck_assert_str_eq(w, ss.ss_text);
	it_resp_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	free(ss.ss_text);
	free(d1);
	free(d2);
	free(w);
	it_stop_clean(&T);
}
END_TEST

/* The worker that kept the answer is killed; its replacement, another
 * process, finds the answer in the shared database. */
START_TEST(hit_in_another_worker)
{
	struct it_resp	 r;
	char		 hdr[16];
	pid_t		 before, after;

	start("0", 1);
	ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)), 200);
	it_resp_free(&r);
	ck_assert_uint_eq(it_worker_pids(&T, &before, 1), 1);
	kill(before, SIGKILL);
	it_sleep(300);
	it_wait_idle(&T, 1);
	ck_assert_uint_eq(it_worker_pids(&T, &after, 1), 1);
	ck_assert_int_ne(after, before);
	ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "hit");
	it_resp_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	it_stop_clean(&T);
}
END_TEST

/* Failed, cut, truncated and cancelled calls are never kept. */
START_TEST(failures_not_kept)
{
	static const char *const bad[] = {
	    "#mock {\\\"status\\\": 500}",
	    "#mock {\\\"disconnect_after\\\": 2, \\\"chunk\\\": 2}",
	    "#mock {\\\"finish_reason\\\": \\\"length\\\"}",
	};
	struct it_resp	 r;
	struct buf	 b = BUF_INIT;
	char		 hdr[16];
	size_t		 i;
	int		 fd;

	start("0", 2);
	for (i = 0; i < 3; i++) {
		(void)chat(i == 1, bad[i], &r, hdr, sizeof(hdr));
		it_resp_free(&r);
	}
	/* a client that leaves in the middle of its stream */
	fd = it_connect(&T);
	it_send_post(fd, "/v1/chat/completions", "{\"stream\": true, "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"left\\n"
	    "#mock {\\\"chunk\\\": 2, \\\"delay_ms\\\": 100}\"}]}", NULL);
	ck_assert(it_read_until(fd, &b, "\"content\":\"", 5000));
	close(fd);
	buf_free(&b);
	it_wait_idle(&T, 2);
	ck_assert_int_eq(cache_rows(), 0);
	it_stop_clean(&T);
}
END_TEST

/* DELETE /admin/cache empties it; the next request calls the backend. */
START_TEST(admin_clear)
{
	struct it_resp	 r;
	char		 hdr[16];
	json_t		*j;

	start("0", 2);
	ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)), 200);
	it_resp_free(&r);
	ck_assert_int_eq(it_request(&T, "DELETE", "/admin/cache", NULL, &r),
	    0);
	ck_assert_int_eq(r.r_status, 200);
	j = it_json(r.r_body.b_data);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "cleared")), 1);
	json_decref(j);
	it_resp_free(&r);
	ck_assert_int_eq(chat(false, answer, &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "miss");
	it_resp_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 2);
	it_stop_clean(&T);
}
END_TEST

/* A request's tools in another order hit the same entry; with the cache
 * off there is no header and nothing is kept. */
START_TEST(tool_order_and_off)
{
	struct it_resp	 r;
	char		 hdr[16], body[1024];
	const char	*order[] = { "\"a\"}}, {\"type\": \"function\", "
			    "\"function\": {\"name\": \"b\"", "\"b\"}}, "
			    "{\"type\": \"function\", \"function\": {\"name\": "
			    "\"a\"" };
	int		 i;

	start("0", 2);
	it_file(&T, "Workflows/it/Main.json", "{\"nodes\": [{\"type\":"
	    " \"Standard\", \"endpointName\": \"Mock\", \"preset\": \"Mock\","
	    " \"prompt\": \"\", \"allowTools\": true,"
	    " \"lastMessagesToSendInsteadOfPrompt\": 5}]}\n");
	for (i = 0; i < 2; i++) {
		snprintf(body, sizeof(body), "{\"model\": \"it\", \"messages\":"
		    " [{\"role\": \"user\", \"content\": \"hi\"}], \"tools\":"
		    " [{\"type\": \"function\", \"function\": {\"name\": %s}}]}",
		    order[i]);
		ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
		    body, &r), 0);
		ck_assert_int_eq(r.r_status, 200);
		ck_assert_str_eq(it_header(&r, "X-Sluice-Cache", hdr,
		    sizeof(hdr)), i == 0 ? "miss" : "hit");
		it_resp_free(&r);
	}
	ck_assert_int_eq(it_mock_requests(&T), 1);
	it_stop_clean(&T);

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, NULL, NULL);
	it_gateway_start(&T, NULL);
	ck_assert_int_eq(chat(false, "hi", &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "");
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* A stream whose head had to go out (a heartbeat) before the answering
 * call looked the cache up cannot say: "unknown". */
START_TEST(early_head_unknown)
{
	struct it_resp	 r;
	char		 hdr[16];

	start("0", 2);
	it_file(&T, "Workflows/it/Main.json", "{\"nodes\": ["
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\","
	    " \"preset\": \"Mock\", \"prompt\": \"slow\\n#mock"
	    " {\\\"head_delay_ms\\\": 1600}\", \"returnToUser\": false},"
	    "{\"type\": \"Standard\", \"endpointName\": \"Mock\","
	    " \"preset\": \"Mock\", \"prompt\": \"\","
	    " \"lastMessagesToSendInsteadOfPrompt\": 5}]}\n");
	ck_assert_int_eq(chat(true, "hi", &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "unknown");
	it_resp_free(&r);
	/* both calls were kept: the same request now answers at once */
	ck_assert_int_eq(chat(true, "hi", &r, hdr, sizeof(hdr)), 200);
	ck_assert_str_eq(hdr, "hit");
	it_resp_free(&r);
	ck_assert_int_eq(it_mock_requests(&T), 2);
	it_stop_clean(&T);
}
END_TEST

static Suite *
cache_it_suite(void)
{
	Suite	*s = suite_create("cache_it");
	TCase	*tc = tcase_create("cache");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hit_at_low_temperature);
	tcase_add_test(tc, miss_above_temperature);
	tcase_add_test(tc, stream_replay);
	tcase_add_test(tc, hit_in_another_worker);
	tcase_add_test(tc, failures_not_kept);
	tcase_add_test(tc, admin_clear);
	tcase_add_test(tc, tool_order_and_off);
	tcase_add_test(tc, early_head_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(cache_it_suite());
}
