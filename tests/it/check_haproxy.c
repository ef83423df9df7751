/* check_haproxy.c - deploy/haproxy.cfg as shipped, run by HAProxy in front of two gateways that share one state folder. */
#include <check.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "front.h"
#include "harness.h"

/*
 * The file under test is deploy/haproxy.cfg itself: its addresses come
 * from SLUICE_FRONT, SLUICE_A and SLUICE_B, which the test sets. The
 * mock paces every stream (--pace): the first word after FIRST_MS, then
 * one word every GAP_MS, EVENTS words in all (about 3.1 s). Figures go
 * to stderr on lines starting "haproxy: " (docs/scaling.md has them).
 */
#define FIRST_MS	200
#define EVENTS		FRONT_EVENTS
#define GAP_MS		100
#define PACE		"200,30,100"
#define QUICK		"hi\n#mock {\"first_ms\":0,\"delay_ms\":0}"
#define STREAM_BODY	"{\"model\":\"x\",\"stream\":true,\"messages\":" \
			"[{\"role\":\"user\",\"content\":\"hi\"}]}"
/* The bound deploy/haproxy.cfg documents for a dead or stopping
 * gateway to be marked DOWN (inter 1s + fastinter 500ms), with room
 * for a busy machine. */
#define DOWN_BOUND_MS	3000
#define SIGNAL_AT_MS	700	/* into the streams: SIGTERM or SIGKILL A */
#define ASK_UNTIL_MS	2600	/* requests while A's stream still runs */

static struct it	 GW[2];		/* gateways A and B, one state folder */
static struct it	 F;		/* the front: it_port is HAProxy's */
static pid_t		 HAP;
static char		 HLOG[300];	/* HAProxy's output */

/* HAProxy in front of A and B, its output in HLOG. */
static void
haproxy_start(void)
{
	char	 a[32], b[32];

	snprintf(a, sizeof(a), "127.0.0.1:%d", GW[0].it_port);
	snprintf(b, sizeof(b), "127.0.0.1:%d", GW[1].it_port);
	snprintf(HLOG, sizeof(HLOG), "%s/haproxy.log", GW[0].it_dir);
	HAP = front_start(&F, a, b, HLOG, NULL);
}

/* The mock (paced), gateway A, gateway B with A's state folder, and
 * HAProxy in front of both. */
static void
setup(void)
{
	static const char *const args[] = { "--listen", "127.0.0.1:0",
	    "--quiet", "--text", "one two three", "--pace", PACE, NULL };

	memset(GW, 0, sizeof(GW));
	memset(&F, 0, sizeof(F));
	HAP = 0;
	GW[0].it_mock = it_double_start("mock-llm", args,
	    &GW[0].it_mock_port);
	GW[1].it_mock_port = F.it_mock_port = GW[0].it_mock_port;
	it_config(&GW[0], "\"min_workers\": 2", NULL);
	it_config(&GW[1], "\"min_workers\": 2", NULL);
	/* mkdtemp names: /tmp/sluice-it.XXXXXX */
	ck_assert_int_lt(snprintf(GW[1].it_args, sizeof(GW[1].it_args),
	    "--config-dir %.64s --state-dir %.64s/state", GW[1].it_dir,
	    GW[0].it_dir), (int)sizeof(GW[1].it_args));
	it_gateway_start(&GW[0], NULL);
	it_gateway_start(&GW[1], NULL);
	haproxy_start();
}

/* B first: its state folder is A's. A gateway a test killed or saw
 * exit has it_gw 0 and is skipped. */
static void
teardown(void)
{
	int	 st;

	if (HAP > 0) {
		kill(HAP, SIGTERM);
		waitpid(HAP, &st, 0);
	}
	it_stop_clean(&GW[1]);
	it_stop_clean(&GW[0]);
}

/* Which gateway's log names request id: 0 (A), 1 (B), or -1 when
 * neither does within 2 s. */
static int
served_by(const char *id)
{
	uint64_t	 end = it_now() + 2000;
	char		 needle[96], *text;
	int		 i, hit;

	snprintf(needle, sizeof(needle), "[rq %s]", id);
	do {
		for (i = 0; i < 2; i++) {
			text = it_file_text(GW[i].it_log);
			hit = strstr(text, needle) != NULL;
			free(text);
			if (hit)
				return i;
		}
		it_sleep(20);
	} while (it_now() < end);
	return -1;
}

/* Whether HAProxy has said that needle ("gateways/a is DOWN"). */
static bool
hlog_has(const char *needle)
{
	return front_log_has(HLOG, needle);
}

/* Requests HAProxy sent to another gateway after a refused connection
 * (its log's retries field reads "+N" then). */
static int
hlog_redispatched(void)
{
	char		*text = it_file_text(HLOG);
	const char	*p;
	int		 n = 0;

	for (p = text; (p = strstr(p, "/+")) != NULL; p += 2)
		n++;
	free(text);
	return n;
}

/* One whole OpenAI chat through the front: its status, its
 * X-Request-Id in id ("" when none); a 200 must hold the paced text. */
static long
front_chat(char *id, size_t idlen)
{
	struct it_resp	 r;
	char		*body = it_way_body(IT_OPENAI, "x", "hi"), want[256];
	long		 st;

	ck_assert_int_eq(it_request(&F, "POST", "/v1/chat/completions", body,
	    &r), 0);
	st = r.r_status;
	if (it_header(&r, "X-Request-Id", id, idlen) == NULL)
		id[0] = '\0';
	snprintf(want, sizeof(want), "\"content\":\"%s\"", front_paced_text());
	if (st == 200)
		ck_assert_msg(strstr(r.r_body.b_data, want) != NULL,
		    "wrong answer: %s", r.r_body.b_data);
	it_resp_free(&r);
	free(body);
	return st;
}

/* The text of an Ollama NDJSON stream; *done when its last line said
 * "done":true. Caller frees. */
static char *
ndjson_text(const char *body, bool *done)
{
	struct buf	 b = BUF_INIT;
	const char	*p = body, *e;
	json_t		*j;
	const char	*c;

	buf_adds(&b, "");
	*done = false;
	for (; (e = strchr(p, '\n')) != NULL; p = e + 1) {
		if ((j = json_loadb(p, (size_t)(e - p), 0, NULL)) == NULL)
			continue;
		c = json_string_value(json_object_get(json_object_get(j,
		    "message"), "content"));
		if (c != NULL)
			buf_adds(&b, c);
		*done = json_is_true(json_object_get(j, "done"));
		json_decref(j);
	}
	return buf_take(&b);
}

/* An OpenAI SSE stream came whole: [DONE], no error, the paced text. */
static void
expect_sse_whole(const struct it_stream *s, const char *what)
{
	struct sse_summary	 ss;

	ck_assert_msg(s->s_finished && s->s_status == 200,
	    "%s: finished %d, status %ld", what, s->s_finished, s->s_status);
	it_sse_parse(s->s_out.b_data, &ss);
	ck_assert_msg(ss.ss_done && !ss.ss_error, "%s: done %d error %d: %s",
	    what, ss.ss_done, ss.ss_error, s->s_out.b_data);
	ck_assert_str_eq(ss.ss_text, front_paced_text());
	free(ss.ss_text);
}

/* Requests through the front reach both gateways and are answered
 * right, whole and streamed, OpenAI and Ollama. */
START_TEST(front_spreads)
{
	struct it_resp	 r;
	json_t		*j;
	char		 id[64], *body, *text;
	int		 by[2] = { 0, 0 }, i, g;
	long		 st;
	bool		 done;

	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(front_chat(id, sizeof(id)), 200);
		ck_assert_int_ge(g = served_by(id), 0);
		by[g]++;
	}
	ck_assert_msg(by[0] > 0 && by[1] > 0, "A served %d, B %d", by[0],
	    by[1]);
	text = it_chat_text(&F, true, QUICK, &st);
	ck_assert_int_eq(st, 200);
	ck_assert_str_eq(text, front_paced_text());
	free(text);
	body = it_way_body(IT_OLLAMA_STREAM, "x", QUICK);
	ck_assert_int_eq(it_request(&F, "POST", "/api/chat", body, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	text = ndjson_text(r.r_body.b_data, &done);
	ck_assert(done);
	ck_assert_str_eq(text, front_paced_text());
	free(text);
	free(body);
	it_resp_free(&r);
	body = it_way_body(IT_OLLAMA, "x", "hi");
	ck_assert_int_eq(it_request(&F, "POST", "/api/chat", body, &r), 0);
	ck_assert_int_eq(r.r_status, 200);
	j = it_json(r.r_body.b_data);
	ck_assert(json_is_true(json_object_get(j, "done")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "message"), "content")), front_paced_text());
	json_decref(j);
	free(body);
	it_resp_free(&r);
	fprintf(stderr, "haproxy: 6 whole chats: %d on A, %d on B\n", by[0],
	    by[1]);
}
END_TEST

struct firstword {
	uint64_t	 fw_t0;
	uint64_t	 fw_ms[2];	/* when the first word came */
};

static void
first_word_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct firstword	*fw = arg;
	size_t			 i;

	for (i = 0; i < n; i++)
		if (fw->fw_ms[i] == 0 && s[i].s_out.b_data != NULL &&
		    strstr(s[i].s_out.b_data, "\"content\":\"one\"") != NULL)
			fw->fw_ms[i] = it_now() - fw->fw_t0;
}

/* The same SSE stream straight to gateway B: HAProxy may add little to
 * the first word (via_ms). Without "option http-no-delay" it adds
 * about 200 ms (the kernel holds the small write for more), which the
 * bound of 150 ms catches. */
static void
direct_first_word(uint64_t via_ms)
{
	struct it_stream	 s;
	struct buf		 hd;
	struct firstword	 fw = { 0, { 0, 0 } };

	front_streams_init(&s, &hd, 1, NULL, STREAM_BODY);
	fw.fw_t0 = it_now();
	it_streams(&GW[1], &s, 1, 10000, first_word_tick, &fw);
	expect_sse_whole(&s, "straight to B");
	fprintf(stderr, "haproxy: openai sse straight to B: first word after "
	    "%llu ms, end after %llu ms\n", (unsigned long long)fw.fw_ms[0],
	    (unsigned long long)s.s_end_ms);
	ck_assert_msg(via_ms <= fw.fw_ms[0] + 150, "HAProxy delayed the "
	    "first word: %llu ms, %llu ms straight", (unsigned long long)
	    via_ms, (unsigned long long)fw.fw_ms[0]);
	front_streams_free(&s, &hd, 1);
}

/* A stream's first word came soon after the mock sent it (FIRST_MS),
 * and long before its end (end_ms): it was not held back. */
static void
expect_early(const char *what, uint64_t first_ms, uint64_t end_ms)
{
	fprintf(stderr, "haproxy: %s: first word after %llu ms, end after "
	    "%llu ms\n", what, (unsigned long long)first_ms,
	    (unsigned long long)end_ms);
	ck_assert_msg(first_ms > 0 && first_ms < FIRST_MS + 1000,
	    "%s: first word after %llu ms", what,
	    (unsigned long long)first_ms);
	ck_assert_msg(end_ms >= first_ms + (EVENTS - 1) * GAP_MS * 3 / 4,
	    "%s: the first word came %llu ms before the end: held back",
	    what, (unsigned long long)(end_ms - first_ms));
}

/* A paced stream through the front arrives word by word: the first
 * word soon after the mock sends it, long before the stream's end
 * (HAProxy does not hold it back), OpenAI SSE and Ollama NDJSON. */
START_TEST(front_streams_as_they_come)
{
	static const char *const what[2] = { "openai sse", "ollama ndjson" };
	struct it_stream	 s[2];
	struct buf		 hd[2];
	struct firstword	 fw = { 0, { 0, 0 } };
	char			*text, *ob = it_way_body(IT_OLLAMA_STREAM,
				    "x", "hi");
	char			 id[64];
	bool			 done;
	size_t			 i;

	/* a request each first: a worker's first request is slower,
	 * and the straight stream below runs on a warm one */
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(front_chat(id, sizeof(id)), 200);
	front_streams_init(s, hd, 2, NULL, STREAM_BODY);
	s[1].s_body = ob;
	s[1].s_path = "/api/chat";
	fw.fw_t0 = it_now();
	it_streams(&F, s, 2, 10000, first_word_tick, &fw);
	expect_sse_whole(&s[0], what[0]);
	ck_assert(s[1].s_finished && s[1].s_status == 200);
	text = ndjson_text(s[1].s_out.b_data, &done);
	ck_assert(done);
	ck_assert_str_eq(text, front_paced_text());
	free(text);
	for (i = 0; i < 2; i++)
		expect_early(what[i], fw.fw_ms[i], s[i].s_end_ms);
	direct_first_word(fw.fw_ms[0]);
	front_streams_free(s, hd, 2);
	free(ob);
}
END_TEST

/* Requests made during a test's streams, and where they went. */
struct probe {
	uint64_t	 p_t0;
	uint64_t	 p_sig_ms;	/* when A got its signal; 0 before */
	uint64_t	 p_next_ms;	/* the next request's time */
	long		 p_down_ms;	/* HAProxy marked A DOWN after the
					   signal; -1 not yet */
	int		 p_exit;	/* A's wait status; -1 while it runs */
	int		 p_n;		/* requests made */
	int		 p_bad;		/* of them not 200 */
	int		 p_on_a;	/* of them served by A */
	int		 p_during;	/* of them while A's process lived */
	char		 p_busy[64];	/* the request A ran at the signal */
	int		 p_signal;	/* SIGTERM or SIGKILL */
};

/* Reap A once it has gone; note when HAProxy marks it DOWN. */
static void
probe_watch(struct probe *p, uint64_t ms)
{
	int	 st;

	if (p->p_exit == -1 && GW[0].it_gw > 0 &&
	    waitpid(GW[0].it_gw, &st, WNOHANG) == GW[0].it_gw) {
		p->p_exit = st;
		GW[0].it_gw = 0;
	}
	if (p->p_down_ms == -1 && hlog_has("gateways/a is DOWN"))
		p->p_down_ms = (long)(ms - p->p_sig_ms);
}

/* One whole chat through the front, counted. */
static void
probe_ask(struct probe *p)
{
	char	 id[64];
	bool	 alive = p->p_exit == -1;

	p->p_n++;
	if (alive)
		p->p_during++;
	if (front_chat(id, sizeof(id)) != 200)
		p->p_bad++;
	else if (served_by(id) != 1)
		p->p_on_a++;
}

/* The request id gateway A runs now ("" when none). */
static void
busy_on_a(char *id, size_t idlen)
{
	json_t		*j = it_get_json(&GW[0], "/admin/workers"), *w;
	const char	*rq;
	size_t		 i;

	id[0] = '\0';
	json_array_foreach(json_object_get(j, "workers"), i, w) {
		rq = json_string_value(json_object_get(w, "request_id"));
		if (rq != NULL && *rq != '\0')
			snprintf(id, idlen, "%s", rq);
	}
	json_decref(j);
}

/* SIGNAL_AT_MS into the streams, note what A runs and send it
 * p_signal; after it, until ASK_UNTIL_MS, a whole chat every 150 ms. */
static void
probe_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct probe	*p = arg;
	uint64_t	 ms = it_now() - p->p_t0;

	if (p->p_sig_ms == 0) {
		if (ms < SIGNAL_AT_MS)
			return;
		busy_on_a(p->p_busy, sizeof(p->p_busy));
		kill(GW[0].it_gw, p->p_signal);
		p->p_sig_ms = ms;
		p->p_next_ms = ms;
		return;
	}
	probe_watch(p, ms);
	if (ms < p->p_next_ms || ms > ASK_UNTIL_MS)
		return;
	p->p_next_ms = ms + 150;
	probe_ask(p);
}

/* Run two paced streams (one lands on each gateway: leastconn) with
 * probe_tick sending sig to A; then wait for HAProxy's DOWN mark. */
static void
probe_run(struct probe *p, struct it_stream *s, struct buf *hd, int sig)
{
	uint64_t	 end;

	memset(p, 0, sizeof(*p));
	p->p_down_ms = -1;
	p->p_exit = -1;
	p->p_signal = sig;
	front_streams_init(s, hd, 2, NULL, STREAM_BODY);
	p->p_t0 = it_now();
	it_streams(&F, s, 2, 10000, probe_tick, p);
	end = it_now() + DOWN_BOUND_MS;
	while (p->p_down_ms == -1 && it_now() < end) {
		probe_watch(p, it_now() - p->p_t0);
		it_sleep(10);
	}
}

/* Wait up to timeout_ms for A to exit; its wait status, or -1. */
static int
a_exit(struct probe *p, int timeout_ms)
{
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;

	while (p->p_exit == -1 && it_now() < end) {
		probe_watch(p, it_now() - p->p_t0);
		it_sleep(10);
	}
	return p->p_exit;
}

/* After A is gone, requests keep being answered, by B. */
static void
expect_b_alone(void)
{
	char	 id[64];
	int	 i;

	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(front_chat(id, sizeof(id)), 200);
		ck_assert_int_eq(served_by(id), 1);
	}
}

/* What either signal must give: at least 5 requests after it, every
 * one answered by B, some of them after A refused them; A DOWN within
 * the bound; and B alone afterwards. */
static void
probe_expect(const struct probe *p, const char *what)
{
	int	 moved = hlog_redispatched();

	fprintf(stderr, "haproxy: %s: %d requests after it (%d while A "
	    "lived), %d failed, %d on A, %d refused by A and sent to B; A "
	    "DOWN after %ld ms\n", what, p->p_n, p->p_during, p->p_bad,
	    p->p_on_a, moved, p->p_down_ms);
	ck_assert_int_ge(moved, 1);
	ck_assert_int_ge(p->p_n, 5);
	ck_assert_int_eq(p->p_bad, 0);
	ck_assert_int_eq(p->p_on_a, 0);
	ck_assert_msg(p->p_down_ms >= 0 && p->p_down_ms <= DOWN_BOUND_MS,
	    "A marked DOWN after %ld ms", p->p_down_ms);
	expect_b_alone();
}

/* SIGTERM to A during a stream through the front: the stream completes
 * byte for byte, new requests go to B while A drains, A exits 0 once
 * its stream is done, and B serves everything after. */
START_TEST(front_respects_drain)
{
	struct it_stream	 s[2];
	struct buf		 hd[2];
	struct probe		 p;
	char			 id[64];
	int			 on[2] = { 0, 0 }, i, st;

	probe_run(&p, s, hd, SIGTERM);
	for (i = 0; i < 2; i++) {
		expect_sse_whole(&s[i], "stream during the drain");
		front_stream_id(&s[i], id, sizeof(id));
		ck_assert_int_ge(st = served_by(id), 0);
		on[st]++;
	}
	ck_assert_msg(on[0] == 1 && on[1] == 1, "streams: %d on A, %d on B",
	    on[0], on[1]);
	ck_assert_msg(p.p_busy[0] != '\0', "A ran nothing at the SIGTERM");
	st = a_exit(&p, 10000);
	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "A did not exit cleanly after its drain (status %d)", st);
	probe_expect(&p, "SIGTERM");
	ck_assert_int_ge(p.p_during, 3);
	front_streams_free(s, hd, 2);
}
END_TEST

/* kill -9 of A during a stream on each gateway: B's stream completes,
 * A's is cut (no [DONE]), HAProxy marks A DOWN within the bound, and
 * every request meanwhile and after is answered by B. */
START_TEST(front_survives_kill)
{
	struct it_stream	 s[2];
	struct buf		 hd[2];
	struct sse_summary	 ss;
	struct probe		 p;
	char			 id[64];
	int			 i, st, cut = 0;

	probe_run(&p, s, hd, SIGKILL);
	ck_assert_msg(p.p_busy[0] != '\0', "A ran nothing at the kill");
	for (i = 0; i < 2; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		if (strcmp(id, p.p_busy) != 0) {
			expect_sse_whole(&s[i], "B's stream");
			continue;
		}
		it_sse_parse(s[i].s_out.b_data, &ss);
		ck_assert_msg(!ss.ss_done, "A's stream ended with [DONE]");
		fprintf(stderr, "haproxy: kill -9: A's stream cut after %d "
		    "events (curl finished %d, status %ld)\n", ss.ss_chunks,
		    s[i].s_finished, s[i].s_status);
		free(ss.ss_text);
		cut++;
	}
	ck_assert_int_eq(cut, 1);
	st = a_exit(&p, 5000);
	ck_assert(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	probe_expect(&p, "kill -9");
	front_streams_free(s, hd, 2);
}
END_TEST

/* Wait up to timeout_ms for HAProxy to say needle. */
static bool
hlog_wait(const char *needle, int timeout_ms)
{
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;

	while (!hlog_has(needle)) {
		if (it_now() >= end)
			return false;
		it_sleep(20);
	}
	return true;
}

/* A gateway that answers /health with 503 gets no request: A stopped,
 * then started again on its port with workers that never become ready
 * (SLUICE_FAULT=no_hello), so it listens but says "starting". HAProxy's
 * HTTP check fails on the status, A stays DOWN, and B answers all. */
START_TEST(front_skips_unready)
{
	struct it_resp	 r;
	char		 id[64];
	int		 i, st;

	kill(GW[0].it_gw, SIGTERM);
	ck_assert_int_eq(waitpid(GW[0].it_gw, &st, 0), GW[0].it_gw);
	GW[0].it_gw = 0;
	ck_assert(hlog_wait("gateways/a is DOWN", DOWN_BOUND_MS));
	snprintf(GW[0].it_listen, sizeof(GW[0].it_listen), "127.0.0.1:%d",
	    GW[0].it_port);
	unlink(GW[0].it_log);	/* else the old "listening on" may count */
	it_gateway_start(&GW[0], "SLUICE_FAULT=no_hello");
	ck_assert_int_eq(it_request(&GW[0], "GET", "/health", NULL, &r), 0);
	ck_assert_int_eq(r.r_status, 503);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "\"starting\""));
	it_resp_free(&r);
	ck_assert_msg(hlog_wait("Layer7 wrong status, code: 503", 5000),
	    "HAProxy did not see A's 503; see %s", HLOG);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(front_chat(id, sizeof(id)), 200);
		ck_assert_int_eq(served_by(id), 1);
	}
	ck_assert_msg(!hlog_has("gateways/a is UP"), "A came back unready");
}
END_TEST

struct cancels {
	int	 c_sent;	/* DELETEs sent */
	int	 c_ok;		/* of them answered 200 */
	int	 c_on[2];	/* streams by gateway */
};

/* Once every stream has its head, DELETE each through the front. */
static void
cancel_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct cancels	*c = arg;
	char		 id[64];
	size_t		 i;
	int		 g;

	if (c->c_sent > 0 || !front_streams_headed(s, n))
		return;
	for (i = 0; i < n; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		c->c_sent++;
		c->c_ok += front_delete(&F, id) == 200;
		if ((g = served_by(id)) >= 0)
			c->c_on[g]++;
	}
}

#define NCANCEL	4
#define FOREVER	"{\"model\":\"x\",\"stream\":true,\"messages\":[{\"role\":" \
		"\"user\",\"content\":\"#mock {\\\"forever\\\":true," \
		"\\\"first_ms\\\":0,\\\"delay_ms\\\":100}\"}]}"
#define HANG	"{\"model\":\"x\",\"messages\":[{\"role\":\"user\"," \
		"\"content\":\"#mock {\\\"head_delay_ms\\\":5000}\"}]}"

/* Cancellation through the front: a DELETE naming a request reaches the
 * gateway that runs it (the stick table on X-Request-Id), whichever
 * that is; a client that leaves cancels its request's backend call. */
START_TEST(front_cancels)
{
	struct it_stream	 s[NCANCEL];
	struct buf		 hd[NCANCEL];
	struct cancels		 c = { 0, 0, { 0, 0 } };
	long long		 gone;
	size_t			 i;
	int			 fd;

	front_streams_init(s, hd, NCANCEL, NULL, FOREVER);
	it_streams(&F, s, NCANCEL, 10000, cancel_tick, &c);
	ck_assert_int_eq(c.c_sent, NCANCEL);
	ck_assert_int_eq(c.c_ok, NCANCEL);
	ck_assert_msg(c.c_on[0] > 0 && c.c_on[1] > 0, "streams: %d on A, %d "
	    "on B", c.c_on[0], c.c_on[1]);
	for (i = 0; i < NCANCEL; i++)
		ck_assert_msg(s[i].s_finished && strstr(s[i].s_out.b_data,
		    "cancelled by DELETE") != NULL, "stream %zu: %s", i,
		    s[i].s_out.b_data);
	front_streams_free(s, hd, NCANCEL);
	gone = it_mock_stat(&F, "client_gone");
	fd = it_connect(&F);
	it_send_post(fd, "/v1/chat/completions", HANG, NULL);
	it_sleep(500);
	close(fd);
	ck_assert_msg(it_mock_wait(&F, "client_gone", gone + 1, 3000),
	    "the backend call went on after the client left");
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "spreads", front_spreads },
		{ "streams", front_streams_as_they_come },
		{ "drain", front_respects_drain },
		{ "kill", front_survives_kill },
		{ "cancels", front_cancels },
		{ "unready", front_skips_unready },
	};

	if (front_haproxy_bin() == NULL) {
		fprintf(stderr, "\n*** check_haproxy: SKIPPED: haproxy is not "
		    "installed, so deploy/haproxy.cfg was NOT tested.\n"
		    "*** Install it (apt-get install haproxy); make check "
		    "does (scripts/deps.sh check).\n\n");
		printf("check_haproxy: SKIPPED: haproxy is not installed\n");
		return 0;
	}
	return it_main(it_suite_fixture("haproxy", cases,
	    sizeof(cases) / sizeof(cases[0]), 30, setup, teardown));
}
