/* check_ops.c - integration: systemd notify and watchdog, reload, scaling, auth. */
#include <check.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

static struct it	 T;
static int		 nfd = -1;	/* our fake systemd */
static char		 npath[108];

static void
start_env(const char *settings, const char *env)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	it_gateway_start(&T, env);
}

static void
stop_clean(void)
{
	int	 st = it_stop(&T, 15000);

	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "gateway did not exit cleanly (status %d)", st);
	if (nfd != -1) {
		close(nfd);
		unlink(npath);
		nfd = -1;
	}
}

/* A datagram socket playing systemd; returns the env for the gateway. */
static char *
fake_systemd(const char *extra)
{
	struct sockaddr_un	 sa;
	char			*env;

	snprintf(npath, sizeof(npath), "/tmp/sluice-notify.%d", (int)getpid());
	unlink(npath);
	nfd = socket(AF_UNIX, SOCK_DGRAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", npath);
	ck_assert_int_eq(bind(nfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (asprintf(&env, "NOTIFY_SOCKET=%s%s%s", npath, extra ? ";" : "",
	    extra ? extra : "") == -1)
		abort();
	return env;
}

/* Collect notify messages for ms milliseconds into out. */
static void
collect(struct buf *out, int ms)
{
	uint64_t	 end = it_now() + (uint64_t)ms;
	char		 msg[512];
	ssize_t		 k;
	struct timeval	 tv = { 0, 20000 };

	setsockopt(nfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (it_now() < end)
		if ((k = recv(nfd, msg, sizeof(msg) - 1, 0)) > 0) {
			msg[k] = '\0';
			buf_adds(out, msg);
			buf_addc(out, '|');
		}
	buf_adds(out, "");
}

static int
count(const char *hay, const char *needle)
{
	int	 n = 0;

	for (; (hay = strstr(hay, needle)) != NULL; hay++)
		n++;
	return n;
}

START_TEST(notify_protocol)
{
	struct buf	 b = BUF_INIT;
	char		*env = fake_systemd("WATCHDOG_USEC=400000");

	start_env(NULL, env);
	collect(&b, 1200);
	ck_assert_int_eq(count(b.b_data, "READY=1"), 1);
	ck_assert_ptr_nonnull(strstr(b.b_data, "STATUS="));
	ck_assert_ptr_nonnull(strstr(b.b_data, " idle, "));
	ck_assert_int_ge(count(b.b_data, "WATCHDOG=1"), 4);	/* every 200 ms */
	buf_reset(&b);
	kill(T.it_gw, SIGHUP);
	collect(&b, 500);
	ck_assert_ptr_nonnull(strstr(b.b_data, "RELOADING=1\nMONOTONIC_USEC="));
	ck_assert_ptr_nonnull(strstr(strstr(b.b_data, "RELOADING=1"),
	    "READY=1"));
	kill(T.it_gw, SIGTERM);
	buf_reset(&b);
	collect(&b, 300);
	ck_assert_ptr_nonnull(strstr(b.b_data, "STOPPING=1"));
	buf_free(&b);
	free(env);
	stop_clean();
}
END_TEST

START_TEST(watchdog_stops_when_wedged)
{
	struct buf	 b = BUF_INIT;
	char		*env = fake_systemd("WATCHDOG_USEC=400000;"
			    "SLUICE_FAULT=wedge_gateway");

	start_env(NULL, env);
	collect(&b, 3500);		/* the tick goes stale after 3 s */
	buf_reset(&b);
	collect(&b, 1000);
	ck_assert_int_eq(count(b.b_data, "WATCHDOG=1"), 0);
	buf_free(&b);
	free(env);
	stop_clean();
}
END_TEST

static json_int_t
health_workers(const char *key)
{
	json_t		*j = it_get_json(&T, "/health");
	json_int_t	 v = json_integer_value(json_object_get(
			    json_object_get(j, "workers"), key));

	json_decref(j);
	return v;
}

struct storm {
	int	 sighups;	/* signals still to send */
	int	 ok, bad;	/* the side request loop */
};

static void
one_request(struct storm *st)
{
	struct it_resp	 r;

	if (it_request(&T, "POST", "/v1/chat/completions", "{\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"#mock {\\\"text\\\": "
	    "\\\"side\\\"}\"}]}", &r) == 0 && r.r_status == 200 &&
	    strstr(r.r_body.b_data, "\"side\"") != NULL)
		st->ok++;
	else
		st->bad++;
	it_resp_free(&r);
}

/* Once the streams run: 25 SIGHUPs 0..24 ms apart with a request
 * after each; then the request loop goes on. */
static void
storm_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct storm	*st = arg;
	size_t		 k, started = 0;

	for (k = 0; k < n; k++)
		started += s[k].s_out.b_len > 0;
	while (st->sighups > 0 && started > 0) {
		kill(t->it_gw, SIGHUP);
		it_sleep(25 - st->sighups);
		st->sighups--;
		one_request(st);
	}
	one_request(st);
}

START_TEST(reload_storm_under_load)
{
	struct it_stream	 s[64];
	struct sse_summary	 ss;
	struct storm		 st = { 25, 0, 0 };
	const char		*text = "r1 r2 r3 r4 r5 r6 r7 r8 r9 r10 r11 r12 "
				    "r13 r14 r15 r16 r17 r18 r19 r20 r21 r22 r23 r24";
	char			*body;
	int			 i;

	/* Room for the 64 streams and the side requests at once. */
	start_env("\"min_workers\": 8, \"max_workers\": 80", NULL);
	if (asprintf(&body, "{\"stream\":true,\"messages\":[{\"role\":\"user\","
	    "\"content\":\"#mock {\\\"text\\\": \\\"%s\\\", \\\"delay_ms\\\": "
	    "80}\"}]}", text) == -1)
		abort();
	/* The configuration the storm must end on. */
	it_settings(&T, "\"min_workers\": 4, \"max_workers\": 90");
	memset(s, 0, sizeof(s));
	for (i = 0; i < 64; i++)
		s[i].s_body = body;
	it_streams(&T, s, 64, 60000, storm_tick, &st);
	ck_assert_int_eq(st.sighups, 0);
	for (i = 0; i < 64; i++) {
		ck_assert_msg(s[i].s_status == 200, "stream %d: %ld", i,
		    s[i].s_status);
		it_sse_parse(s[i].s_out.b_data, &ss);
		ck_assert_msg(strcmp(ss.ss_text, text) == 0 && ss.ss_done &&
		    !ss.ss_error, "stream %d: '%s'", i, ss.ss_text);
		free(ss.ss_text);
		buf_free(&s[i].s_out);
	}
	ck_assert_int_eq(st.bad, 0);
	ck_assert_int_gt(st.ok, 10);
	ck_assert_int_eq(health_workers("max"), 90);	/* final config */
	/* Every worker of the old configurations left. */
	for (i = 0; i < 300 && health_workers("live") > 90; i++)
		it_sleep(20);
	ck_assert_int_le(health_workers("live"), 90);
	/* ...and the pool is back to min_workers: awaited, since on a busy
	 * machine (ASan, parallel builds) the last reload's workers may
	 * still be starting. */
	for (i = 0; i < 750 && health_workers("live") < 4; i++)
		it_sleep(20);
	ck_assert_int_ge(health_workers("live"), 4);
	free(body);
	stop_clean();
}
END_TEST

START_TEST(broken_reload_keeps_serving)
{
	struct it_resp	 r;
	size_t		 from = 0;

	start_env(NULL, NULL);
	it_settings(&T, "\"min_workers\": 2,\n  \"max_wrokers\": 3");
	kill(T.it_gw, SIGHUP);
	ck_assert(it_log_wait(&T, "sluice.json:2:", &from, 3000));
	ck_assert(it_log_wait(&T, "reload refused", &from, 3000));
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	it_resp_free(&r);
	ck_assert_int_eq(health_workers("max"), 8);	/* unchanged */
	stop_clean();
}
END_TEST

struct scale {
	int	 step;		/* ticks so far */
	int	 ok, bad;
};

/* Up by 15 workers, then down by 15, one signal per tick, requests
 * flowing all the while. Each tick also makes a request of its own, so
 * a slow build (the sanitizers) ticks slowly: the streams last 3.2 s,
 * long enough for the 30 ticks either way. */
static void
scale_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct scale	*sc = arg;
	struct storm	 st = { 0, 0, 0 };

	if (sc->step < 15)
		kill(t->it_gw, SIGTTIN);
	else if (sc->step < 30)
		kill(t->it_gw, SIGTTOU);
	sc->step++;
	one_request(&st);
	sc->ok += st.ok;
	sc->bad += st.bad;
}

START_TEST(scale_up_and_down_under_load)
{
	struct it_stream	 s[8];
	struct scale		 sc = { 0, 0, 0 };
	char			*body = "{\"stream\":true,\"messages\":[{\"role\":"
				    "\"user\",\"content\":\"#mock {\\\"text\\\": "
				    "\\\"a b c d e f g h i j k l m n o p\\\", "
				    "\\\"delay_ms\\\": 200}\"}]}";
	int			 i;

	start_env("\"min_workers\": 1, \"max_workers\": 1, \"queue_max\": 256",
	    NULL);
	memset(s, 0, sizeof(s));
	for (i = 0; i < 8; i++)
		s[i].s_body = body;
	it_streams(&T, s, 8, 60000, scale_tick, &sc);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(s[i].s_status, 200);
		ck_assert_ptr_nonnull(strstr(s[i].s_out.b_data, "data: [DONE]"));
		ck_assert_ptr_null(strstr(s[i].s_out.b_data, "\"error\""));
		buf_free(&s[i].s_out);
	}
	ck_assert_int_ge(sc.step, 30);
	ck_assert_int_eq(sc.bad, 0);
	ck_assert_int_eq(health_workers("max"), 1);
	stop_clean();
}
END_TEST

START_TEST(recycling_under_load)
{
	struct storm	 st = { 0, 0, 0 };
	int		 i;

	start_env("\"min_workers\": 2, \"max_workers\": 2, \"max_requests\": 3",
	    NULL);
	for (i = 0; i < 60; i++)
		one_request(&st);
	ck_assert_int_eq(st.bad, 0);
	ck_assert_int_eq(st.ok, 60);
	stop_clean();
}
END_TEST

static long
status_with_key(const char *path, const char *key, char *body, size_t len)
{
	CURL			*h = curl_easy_init();
	struct curl_slist	*hd = NULL;
	char			 url[128], auth[128];
	long			 code = 0;
	FILE			*f = fmemopen(body, len, "w");

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", T.it_port, path);
	if (key != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
		hd = curl_slist_append(hd, auth);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
	curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	fclose(f);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	return code;
}

START_TEST(api_and_admin_keys)
{
	char	 body[4096];

	start_env("\"api_keys\": [\"user-key-1234\"], \"admin_api_keys\": "
	    "[\"admin-key-5678\"]", NULL);
	memset(body, 0, sizeof(body));
	ck_assert_int_eq(status_with_key("/v1/models", NULL, body,
	    sizeof(body)), 401);
	ck_assert_int_eq(status_with_key("/v1/models", "wrong-key-000",
	    body, sizeof(body)), 401);
	ck_assert_ptr_null(strstr(body, "wrong-key"));	/* never echoed */
	ck_assert_int_eq(status_with_key("/v1/models", "user-key-1234", body,
	    sizeof(body)), 200);
	ck_assert_int_eq(status_with_key("/metrics", "user-key-1234", body,
	    sizeof(body)), 401);
	ck_assert_int_eq(status_with_key("/metrics", "admin-key-5678", body,
	    sizeof(body)), 200);
	ck_assert_int_eq(status_with_key("/admin/workers", "admin-key-5678",
	    body, sizeof(body)), 200);
	ck_assert_int_eq(status_with_key("/health", NULL, body, sizeof(body)),
	    200);
	stop_clean();
}
END_TEST

/* The text of path, or NULL. Caller frees. */
static char *
slurp(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	*s = NULL;
	size_t	 n = 0;

	if (f == NULL)
		return NULL;
	if (getdelim(&s, &n, '\0', f) == -1) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

/* A11: WilmerAI's command line works as its start scripts write it:
 * --PublicDirectory P finds the configuration in P/Configs and makes
 * P/SqlLiteDBs the state folder; --file-logging writes P/logs/sluice.log
 * in WilmerAI's line format, from the gateway and from its workers. */
START_TEST(a11_wilmer_flags)
{
	char	 pub[64], link[80], path[400], *text, *log;
	long	 status;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"max_workers\": 1", NULL);
	ck_assert_int_lt(snprintf(pub, sizeof(pub), "%s.pub", T.it_dir),
	    (int)sizeof(pub));
	ck_assert_int_eq(mkdir(pub, 0750), 0);
	snprintf(link, sizeof(link), "%s/Configs", pub);
	ck_assert_int_eq(symlink(T.it_dir, link), 0);
	snprintf(T.it_args, sizeof(T.it_args), "--PublicDirectory %s/ "
	    "--file-logging --DiscussionDirectory %s/DiscussionIds -v", pub,
	    pub);
	it_gateway_start(&T, NULL);
	text = it_chat_text(&T, false, "Hello", &status);
	ck_assert_int_eq(status, 200);
	free(text);
	snprintf(path, sizeof(path), "%s/SqlLiteDBs", pub);	/* state_dir */
	ck_assert_msg(access(path, W_OK) == 0, "no %s", path);
	it_stop_clean(&T);
	snprintf(path, sizeof(path), "%s/logs/sluice.log", pub);
	ck_assert_ptr_nonnull(log = slurp(path));
	ck_assert_msg(strstr(log, "] INFO [system] [gateway] listening on ") !=
	    NULL, "%s", log);
	ck_assert_msg(strstr(log, "] DEBUG [system] [worker") != NULL, "%s",
	    log);
	ck_assert_msg(strstr(log, "Sluice keeps discussion memory in ") !=
	    NULL, "%s", log);
	ck_assert_int_eq(log[0], '[');
	ck_assert_int_eq(log[20], ']');		/* [YYYY-MM-DD HH:MM:SS] */
	free(log);
	snprintf(path, sizeof(path), "rm -rf '%s'", pub);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* A connection accepted just before SIGTERM is still served when its
 * request comes afterwards (not closed in silence), then closed. */
START_TEST(drain_answers_fresh_connections)
{
	int		 fd;
	struct buf	 out = BUF_INIT;

	start_env(NULL, NULL);
	fd = it_connect(&T);
	it_sleep(100);
	kill(T.it_gw, SIGTERM);
	it_sleep(100);
	it_send_post(fd, "/v1/chat/completions", "{\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"hi\"}]}", NULL);
	it_read_until(fd, &out, "\"usage\"", 3000);
	ck_assert_msg(strncmp(out.b_data, "HTTP/1.1 200", 12) == 0,
	    "got: %.80s", out.b_data);
	ck_assert_ptr_nonnull(strstr(out.b_data, "Connection: close"));
	close(fd);
	buf_free(&out);
	stop_clean();
}
END_TEST

static Suite *
ops_suite(void)
{
	Suite	*s = suite_create("operations");

	test_case(s, "notify", notify_protocol, 60);
	test_case(s, "watchdog", watchdog_stops_when_wedged, 60);
	test_case(s, "reload_storm", reload_storm_under_load, 120);
	test_case(s, "broken_reload", broken_reload_keeps_serving, 60);
	test_case(s, "scale", scale_up_and_down_under_load, 120);
	test_case(s, "recycle", recycling_under_load, 60);
	test_case(s, "auth", api_and_admin_keys, 60);
	test_case(s, "drain_fresh", drain_answers_fresh_connections, 60);
	test_case(s, "wilmer_flags", a11_wilmer_flags, 60);
	return s;
}

int
main(void)
{
	return it_main(ops_suite());
}
