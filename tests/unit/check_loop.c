/* check_loop.c - the worker's request loop over a socketpair: HELLO, requests, chunks and REQ_DONE, cancel, deadline, heartbeats, shutdown, retirement, early answers, endpoint slots, the store. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../../worker/loop/wloop.h"
#include "../../worker/loop/wloop_store.h"
#include "../testmain.h"
#include "fakegw.h"
#include "scratchdb.h"
#include "scratchdir.h"
#include "stubs_loop.h"

/*
 * The loop runs in a forked child (tests/fakegw.h) as sluice-worker's
 * main runs it, with t_wc's settings; the test is the gateway. The
 * engine is tests/stubs_loop.c's: the model field of each request
 * names what it does.
 */

#define WAIT_MS		5000	/* for a frame that must come */
#define QUIET_MS	300	/* for one that must not */

static struct wctx	 t_wc;
static struct fakegw	 t_gw;
static struct scratchdir t_dir;

/* The worker's log lines go to t_dir/worker.log. */
static int
worker(int fd, void *arg)
{
	struct wctx	 wc = t_wc;
	char		*log = scratchdir_path(&t_dir, "worker.log");
	int		 rc;

	if (freopen(log, "a", stderr) == NULL)
		return 98;
	free(log);
	if (wloop_init(&wc, fd) == -1)
		return 99;
	rc = wloop_run(&wc);
	wloop_store_close(&wc);
	wloop_free(&wc);
	return rc;
}

static void
setup(void)
{
	scratchdir_make(&t_dir, "loop");
	t_gw = (struct fakegw){ .fg_fd = -1, .fg_pid = -1 };	/* none yet */
	memset(&t_wc, 0, sizeof(t_wc));
	t_wc.wc_confdir = t_dir.sc_path;
	t_wc.wc_user = "wuser";
}

static void
teardown(void)
{
	fakegw_free(&t_gw);
	scratchdir_remove(&t_dir);
}

/* Start the worker; its HELLO is checked. */
static void
start(void)
{
	struct proto_msg	 m;

	fakegw_start(&t_gw, worker, NULL);
	fakegw_next(&t_gw, &m, WAIT_MS);
	ck_assert_uint_eq(m.m_type, PROTO_HELLO);
	ck_assert_uint_eq(m.m_version, PROTO_VERSION);
	ck_assert_uint_eq(m.m_u.hello.version, PROTO_VERSION);
	ck_assert_int_eq(m.m_u.hello.pid, t_gw.fg_pid);
	ck_assert_uint_gt(m.m_u.hello.build.n, 0);
	ck_assert_ptr_null(m.m_rqid.p);
	proto_msg_free(&m);
}

/* m: REQ_START rqid, a chat whose model names the fake engine's
 * script and whose one message, *pm, has content arg; slot waits of
 * 1234 ms. */
static void
request_init(struct proto_msg *m, struct proto_message *pm,
    const char *rqid, const char *model, const char *arg)
{
	memset(pm, 0, sizeof(*pm));
	pm->role = str_from("user");
	pm->content = str_from(arg);
	proto_msg_init(m, PROTO_REQ_START, rqid);
	m->m_u.req_start.api = API_OPENAI_CHAT;
	m->m_u.req_start.model = str_from(model);
	m->m_u.req_start.msgs = pm;
	m->m_u.req_start.nmsgs = 1;
	m->m_u.req_start.ep_wait_ms = 1234;
}

/* Send that request, with a deadline and of api. */
static void
request_ex(const char *rqid, const char *model, const char *arg,
    uint64_t deadline_ms, uint32_t api)
{
	struct proto_message	 pm;
	struct proto_msg	 m;

	request_init(&m, &pm, rqid, model, arg);
	m.m_u.req_start.deadline_ms = deadline_ms;
	m.m_u.req_start.api = api;
	fakegw_send(&t_gw, &m);
}

static void
request(const char *rqid, const char *model, const char *arg)
{
	request_ex(rqid, model, arg, 0, API_OPENAI_CHAT);
}

/* The next frame (heartbeats skipped) is of type for rqid. proto_msg_free
 * it. */
static void
expect(struct proto_msg *m, uint32_t type, const char *rqid)
{
	fakegw_next_busy(&t_gw, m, WAIT_MS);
	ck_assert_msg(m->m_type == type, "got %s, want %s",
	    proto_type_name(m->m_type), proto_type_name(type));
	ck_assert_msg(str_eq(m->m_rqid, rqid), "for request '%.*s', not %s",
	    (int)m->m_rqid.n, m->m_rqid.p ? m->m_rqid.p : "", rqid);
}

/* The next frame is a chunk for rqid with content text. */
static void
expect_chunk(const char *rqid, const char *text)
{
	struct proto_msg	 m;
	char			*got;

	expect(&m, PROTO_REQ_CHUNK, rqid);
	got = str_dup(m.m_u.req_chunk.content);
	ck_assert_str_eq(got, text);
	free(got);
	proto_msg_free(&m);
}

/* The next frame is REQ_DONE for rqid with status; m keeps it. */
static void
expect_done(struct proto_msg *m, const char *rqid, uint32_t status)
{
	expect(m, PROTO_REQ_DONE, rqid);
	ck_assert_uint_eq(m->m_u.req_done.status, status);
	ck_assert(!m->m_u.req_done.background);
}

/* The next frame is STORE for rqid: errors failed calls, failing or
 * not. */
static void
expect_store(const char *rqid, uint64_t errors, bool failing)
{
	struct proto_msg	 m;

	expect(&m, PROTO_STORE, rqid);
	ck_assert_uint_eq(m.m_u.store.errors, errors);
	ck_assert(m.m_u.store.failing == failing);
	proto_msg_free(&m);
}

static void
expect_status(const char *rqid, uint32_t status)
{
	struct proto_msg	 m;

	expect_done(&m, rqid, status);
	proto_msg_free(&m);
}

/* Nothing but heartbeats for QUIET_MS, and the worker still there. */
static void
expect_quiet(void)
{
	struct proto_msg	 m;
	const unsigned char	*p;
	size_t			 n;
	uint64_t		 end = clock_mono_ms() + QUIET_MS;
	char			 err[PROTO_ERRLEN];
	enum fakegw_got		 got;

	while (clock_mono_ms() < end) {
		got = fakegw_frame(&t_gw, &p, &n, QUIET_MS);
		ck_assert_msg(got == FG_FRAME || got == FG_TIMEOUT,
		    "the worker's channel: %s", got == FG_EOF ? "EOF" :
		    "an oversize frame");
		if (got != FG_FRAME)
			continue;
		ck_assert_int_eq(proto_decode(p, n, &m, err), 0);
		ck_assert_msg(m.m_type == PROTO_HEARTBEAT, "got %s",
		    proto_type_name(m.m_type));
		proto_msg_free(&m);
	}
}

/* The worker exits with status within WAIT_MS. */
static void
expect_exit(int status)
{
	int	 st = fakegw_wait(&t_gw, WAIT_MS);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == status,
	    "status %#x, want exit %d", st, status);
}

/* The worker's log has a line with needle. */
static void
ck_logged(const char *needle)
{
	char	*path = scratchdir_path(&t_dir, "worker.log"), line[1024];
	FILE	*f = fopen(path, "r");
	bool	 found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, needle) != NULL;
	fclose(f);
	free(path);
	ck_assert_msg(found, "no '%s' in the worker's log", needle);
}

/* ---- HELLO ---- */

START_TEST(hello_first)
{
	start();
	request("r1", "echo", "x");
	expect_chunk("r1", "|wuser|x");
	expect_status("r1", RQ_OK);
}
END_TEST

/* SLUICE_FAULT=bad_version: a HELLO of the next protocol version. */
START_TEST(hello_version_skew)
{
	const unsigned char	*p;
	size_t			 n;
	struct proto_msg	 m;
	char			 err[PROTO_ERRLEN];

	t_wc.wc_faults.wf_version_skew = 1;
	fakegw_start(&t_gw, worker, NULL);
	ck_assert_int_eq(fakegw_frame(&t_gw, &p, &n, WAIT_MS), FG_FRAME);
	ck_assert_int_eq(proto_decode(p, n, &m, err), -1);
	ck_assert_uint_eq(m.m_version, PROTO_VERSION + 1);
	ck_assert_uint_eq(m.m_type, PROTO_HELLO);
	proto_msg_free(&m);
}
END_TEST

/* ---- a request ---- */

/* Chunks in order, then REQ_DONE with the engine's usage; the worker's
 * user unless the request names one. */
START_TEST(chunks_then_done)
{
	struct proto_msg	 m;

	start();
	request("r1", "echo", "hello");
	expect(&m, PROTO_REQ_CHUNK, "r1");
	ck_assert_uint_eq(m.m_u.req_chunk.seq, 0);
	ck_assert(str_eq(m.m_u.req_chunk.content, "|wuser|hello"));
	proto_msg_free(&m);
	expect_done(&m, "r1", RQ_OK);
	ck_assert(str_eq(m.m_u.req_done.finish, "stop"));
	ck_assert_int_eq(m.m_u.req_done.prompt_tokens, 3);
	ck_assert_int_eq(m.m_u.req_done.completion_tokens, 4);
	ck_assert(!m.m_u.req_done.retiring);
	ck_assert_ptr_null(m.m_u.req_done.code.p);
	proto_msg_free(&m);
}
END_TEST

/* Reasoning and tool-call deltas are chunks too, numbered on; empty
 * deltas are not sent. */
START_TEST(deltas_numbered)
{
	struct proto_msg	 m;

	start();
	request("r1", "deltas", "");
	expect(&m, PROTO_REQ_CHUNK, "r1");
	ck_assert_uint_eq(m.m_u.req_chunk.seq, 0);
	ck_assert(str_eq(m.m_u.req_chunk.reasoning, "hmm"));
	ck_assert_ptr_null(m.m_u.req_chunk.content.p);
	proto_msg_free(&m);
	expect(&m, PROTO_REQ_CHUNK, "r1");
	ck_assert_uint_eq(m.m_u.req_chunk.seq, 1);
	ck_assert(str_eq(m.m_u.req_chunk.tool_calls, "[{\"index\":0}]"));
	proto_msg_free(&m);
	expect(&m, PROTO_REQ_CHUNK, "r1");
	ck_assert_uint_eq(m.m_u.req_chunk.seq, 2);
	proto_msg_free(&m);
	expect_status("r1", RQ_OK);
	request("r2", "echo", "");
	expect(&m, PROTO_REQ_CHUNK, "r2");
	ck_assert_uint_eq(m.m_u.req_chunk.seq, 0);
	proto_msg_free(&m);
	expect_status("r2", RQ_OK);
}
END_TEST

/* An engine error reaches REQ_DONE whole. */
START_TEST(error_done)
{
	struct proto_msg	 m;

	start();
	request("r1", "fail", "");
	expect_done(&m, "r1", RQ_ERROR);
	ck_assert_uint_eq(m.m_u.req_done.http_status, 503);
	ck_assert(str_eq(m.m_u.req_done.code, "backend_error"));
	ck_assert(str_eq(m.m_u.req_done.message, "the backend is down"));
	ck_assert(str_eq(m.m_u.req_done.endpoint, "Fast"));
	ck_assert(str_eq(m.m_u.req_done.retry_after, "30"));
	proto_msg_free(&m);
}
END_TEST

/* The request's user goes to the engine. */
START_TEST(request_user)
{
	struct proto_message	 pm;
	struct proto_msg	 m;

	start();
	request_init(&m, &pm, "r1", "echo", "c");
	m.m_u.req_start.user = str_from("ann");
	fakegw_send(&t_gw, &m);
	expect_chunk("r1", "ann|wuser|c");
	expect_status("r1", RQ_OK);
}
END_TEST

/* DELETE /admin/cache is not a workflow. */
START_TEST(cache_clear_route)
{
	start();
	request_ex("r1", "echo", "", 0, API_CACHE_CLEAR);
	expect_chunk("r1", "cleared");
	expect_status("r1", RQ_OK);
}
END_TEST

/* ro_send: the engine's own frames (CACHE) go out as they are. */
START_TEST(engine_frames)
{
	struct proto_msg	 m;

	start();
	request("r1", "send", "");
	expect(&m, PROTO_CACHE, "r1");
	ck_assert(m.m_u.cache.hit && m.m_u.cache.answer);
	ck_assert_int_eq(m.m_u.cache.entries, 7);
	proto_msg_free(&m);
	expect_status("r1", RQ_OK);
}
END_TEST

/* A phase goes out at once as a HEARTBEAT of the request. */
START_TEST(phase_heartbeat)
{
	struct proto_msg	 m;

	start();
	request("r1", "phase", "thinking");
	fakegw_next(&t_gw, &m, WAIT_MS);
	ck_assert_uint_eq(m.m_type, PROTO_HEARTBEAT);
	ck_assert(str_eq(m.m_rqid, "r1"));
	ck_assert(str_eq(m.m_u.heartbeat.phase, "node 1/2: thinking"));
	proto_msg_free(&m);
	expect_chunk("r1", "ok");
	expect_status("r1", RQ_OK);
}
END_TEST

/* Text gathers until the next frame of another kind: the answer's last
 * text leaves with its REQ_DONE, one write and one wake-up of the
 * gateway. Nothing waits past a look at the gateway: text before a
 * wait arrives while the worker waits. */
START_TEST(chunks_gather)
{
	const unsigned char	*p;
	size_t			 n;

	start();
	request("r1", "gather", "");
	ck_assert_int_eq(fakegw_frame(&t_gw, &p, &n, 150), FG_TIMEOUT);
	expect_chunk("r1", "a");
	expect_chunk("r1", "b");
	expect_status("r1", RQ_OK);
	request("r2", "gather", "wait");
	expect_chunk("r2", "a");
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r2");
	expect_status("r2", RQ_CANCELLED);
}
END_TEST

/* The fault hook runs once for each request. */
START_TEST(request_hook)
{
	t_wc.wc_faults.wf_on_request = stub_loop_hook;
	start();
	request("r1", "hooked", "");
	expect_chunk("r1", "1");
	expect_status("r1", RQ_OK);
	request("r2", "hooked", "");
	expect_chunk("r2", "2");
	expect_status("r2", RQ_OK);
}
END_TEST

/* ---- cancel ---- */

START_TEST(cancel_mid_request)
{
	start();
	request("r1", "wait", "");
	expect_quiet();
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r1");
	expect_status("r1", RQ_CANCELLED);
}
END_TEST

/* The same through rq_wake, as a backend call sleeps. */
START_TEST(cancel_while_sleeping)
{
	start();
	request("r1", "wake", "");
	expect_quiet();
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r1");
	expect_status("r1", RQ_CANCELLED);
}
END_TEST

/* A CANCEL of another request is not this one's; a late CANCEL, once
 * idle, is dropped. */
START_TEST(cancel_of_another_request)
{
	start();
	request("r1", "wait", "");
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r0");
	expect_quiet();
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r1");
	expect_status("r1", RQ_CANCELLED);
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r1");
	request("r2", "echo", "");
	expect_chunk("r2", "|wuser|");
	expect_status("r2", RQ_OK);
}
END_TEST

/* A request and its CANCEL in one write. */
static void
request_cancelled(const char *rqid, const char *model, const char *arg)
{
	struct proto_message	 pm;
	struct proto_msg	 m;
	struct buf		 b = BUF_INIT;

	request_init(&m, &pm, rqid, model, arg);
	ck_assert_int_eq(proto_encode(&b, &m), 0);
	proto_msg_init(&m, PROTO_CANCEL, rqid);
	ck_assert_int_eq(proto_encode(&b, &m), 0);
	ck_assert_int_eq(frame_write_all(t_gw.fg_fd, b.b_data, b.b_len), 0);
	buf_free(&b);
}

/* A CANCEL that came with its REQ_START, in one write. */
START_TEST(cancel_with_the_request)
{
	start();
	request_cancelled("r1", "wait", "");
	expect_status("r1", RQ_CANCELLED);
}
END_TEST

/* A cancelled request is not answered early. */
START_TEST(no_early_answer_when_cancelled)
{
	start();
	request("r1", "wait_answer", "");
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r1");
	expect_status("r1", RQ_CANCELLED);
}
END_TEST

/* ---- the deadline ---- */

/* Past its deadline a request stops with 504 "deadline". */
START_TEST(deadline_expires)
{
	struct proto_msg	 m;
	uint64_t		 t0 = clock_mono_ms();

	start();
	request_ex("r1", "wait", "", 200, API_OPENAI_CHAT);
	expect_done(&m, "r1", RQ_ERROR);
	ck_assert_uint_ge(clock_mono_ms() - t0, 200);
	ck_assert_uint_eq(m.m_u.req_done.http_status, 504);
	ck_assert(str_eq(m.m_u.req_done.code, PROTO_CODE_DEADLINE));
	ck_assert(str_eq(m.m_u.req_done.message,
	    "the request exceeded its deadline"));
	proto_msg_free(&m);
}
END_TEST

/* ---- heartbeats ---- */

/* A busy worker says what it does at least once a second (and not
 * what the request before it did). */
START_TEST(heartbeat_while_busy)
{
	struct proto_msg	 m;
	uint64_t		 t0;
	int			 beats = 0;

	start();
	request("r1", "phase", "x");
	fakegw_next(&t_gw, &m, WAIT_MS);	/* the phase's own */
	proto_msg_free(&m);
	expect_chunk("r1", "ok");
	expect_status("r1", RQ_OK);
	request("r2", "wait", "");
	t0 = clock_mono_ms();
	while (clock_mono_ms() - t0 < 2600) {
		fakegw_next(&t_gw, &m, 1500);
		ck_assert_uint_eq(m.m_type, PROTO_HEARTBEAT);
		ck_assert(str_eq(m.m_rqid, "r2"));
		ck_assert_uint_eq(m.m_u.heartbeat.phase.n, 0);
		proto_msg_free(&m);
		beats++;
	}
	ck_assert_int_ge(beats, 2);
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r2");
	expect_status("r2", RQ_CANCELLED);
}
END_TEST

/* ---- the end of a worker ---- */

START_TEST(shutdown_when_idle)
{
	start();
	fakegw_send_simple(&t_gw, PROTO_SHUTDOWN, NULL);
	expect_exit(0);
}
END_TEST

/* SHUTDOWN during a request: the request ends as it would, then the
 * worker. */
START_TEST(shutdown_after_the_request)
{
	start();
	request("r1", "wait", "");
	fakegw_send_simple(&t_gw, PROTO_SHUTDOWN, NULL);
	expect_quiet();
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r1");
	expect_status("r1", RQ_CANCELLED);
	expect_exit(0);
}
END_TEST

/* The gateway gone: exit 0, idle or busy. */
START_TEST(eof_ends_the_worker)
{
	start();
	fakegw_close(&t_gw);
	expect_exit(0);
	fakegw_free(&t_gw);
	start();
	request("r1", "wait", "");
	expect_quiet();
	fakegw_close(&t_gw);
	expect_exit(0);
	ck_logged("gateway channel closed; exiting");
}
END_TEST

/* max_requests: the last REQ_DONE says so, then the worker exits. */
START_TEST(retire_after_max_requests)
{
	struct proto_msg	 m;

	t_wc.wc_max_requests = 2;
	start();
	request("r1", "echo", "");
	expect_chunk("r1", "|wuser|");
	expect_done(&m, "r1", RQ_OK);
	ck_assert(!m.m_u.req_done.retiring);
	proto_msg_free(&m);
	request("r2", "fail", "");
	expect_done(&m, "r2", RQ_ERROR);
	ck_assert(m.m_u.req_done.retiring);
	proto_msg_free(&m);
	expect_exit(0);
}
END_TEST

/* Frames the gateway may not send: the worker stops (EX_SOFTWARE). */
START_TEST(protocol_violations)
{
	static const unsigned char junk[] = { 0, 0, 0, 2, 0xc1, 0xc1 };
	struct proto_msg	 m;

	start();
	ck_assert_int_eq(frame_write_all(t_gw.fg_fd, junk, sizeof(junk)), 0);
	expect_exit(EX_SOFTWARE);
	ck_logged("bad frame from gateway: ");
	fakegw_free(&t_gw);
	start();
	proto_msg_init(&m, PROTO_REQ_CHUNK, "r1");
	fakegw_send(&t_gw, &m);
	expect_exit(EX_SOFTWARE);
	ck_logged("gateway sent REQ_CHUNK");
	fakegw_free(&t_gw);
	start();
	request("r1", "wait", "");
	request("r2", "echo", "");
	expect_exit(EX_SOFTWARE);
	ck_logged("gateway sent REQ_START during a request");
	fakegw_free(&t_gw);
	start();
	fakegw_send_simple(&t_gw, PROTO_REQ_START, NULL);
	expect_exit(EX_SOFTWARE);
	ck_logged("REQ_START without a request id");
}
END_TEST

START_TEST(init_needs_a_socket)
{
	struct wctx	 wc;
	int		 p[2];

	memset(&wc, 0, sizeof(wc));
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(wloop_init(&wc, p[0]), -1);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* ---- the answer before the end ---- */

/* REQ_DONE (background) at the answer; what comes after it is not
 * sent; POST_DONE at the end. */
START_TEST(early_answer)
{
	struct proto_msg	 m;

	t_wc.wc_max_requests = 1;
	start();
	request("r1", "early", "");
	expect_chunk("r1", "answer");
	expect(&m, PROTO_REQ_DONE, "r1");
	ck_assert_uint_eq(m.m_u.req_done.status, RQ_OK);
	ck_assert(m.m_u.req_done.background);
	ck_assert(!m.m_u.req_done.retiring);
	proto_msg_free(&m);
	expect(&m, PROTO_POST_DONE, "r1");
	ck_assert(!m.m_u.post_done.failed);
	ck_assert(m.m_u.post_done.retiring);
	proto_msg_free(&m);
	expect_exit(0);
}
END_TEST

/* The work after the answer fails: POST_DONE says so; a CANCEL after
 * the answer does not stop that work. */
START_TEST(after_the_answer)
{
	struct proto_msg	 m;

	start();
	request("r1", "early", "fail");
	expect_chunk("r1", "answer");
	expect(&m, PROTO_REQ_DONE, "r1");
	proto_msg_free(&m);
	expect(&m, PROTO_POST_DONE, "r1");
	ck_assert(m.m_u.post_done.failed);
	ck_assert(str_eq(m.m_u.post_done.message, "the backend is down"));
	proto_msg_free(&m);
	request("r2", "early", "600");
	expect_chunk("r2", "answer");
	expect(&m, PROTO_REQ_DONE, "r2");
	proto_msg_free(&m);
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r2");
	expect_quiet();
	expect(&m, PROTO_POST_DONE, "r2");
	ck_assert(!m.m_u.post_done.failed);
	proto_msg_free(&m);
}
END_TEST

/* SLUICE_FAULT=after_ms: the answer when the workflow returns, then
 * that long of work, said in a heartbeat. */
START_TEST(fault_after_ms)
{
	struct proto_msg	 m;
	uint64_t		 t0;

	t_wc.wc_faults.wf_after_ms = 300;
	start();
	request("r1", "echo", "");
	expect_chunk("r1", "|wuser|");
	expect(&m, PROTO_REQ_DONE, "r1");
	ck_assert(m.m_u.req_done.background);
	proto_msg_free(&m);
	t0 = clock_mono_ms();
	fakegw_next(&t_gw, &m, WAIT_MS);
	ck_assert_uint_eq(m.m_type, PROTO_HEARTBEAT);
	ck_assert(str_eq(m.m_u.heartbeat.phase,
	    "fault: 300 ms of work after the answer"));
	proto_msg_free(&m);
	expect(&m, PROTO_POST_DONE, "r1");
	ck_assert_uint_ge(clock_mono_ms() - t0, 250);
	proto_msg_free(&m);
	request("r2", "fail", "");
	expect_status("r2", RQ_ERROR);
}
END_TEST

/* ---- endpoint slots ---- */

/* The SLOT_ACQUIRE of the request, answered with granted. */
static void
slot_answer(const char *rqid, const char *ep, bool granted)
{
	struct proto_msg	 m;

	expect(&m, PROTO_SLOT_ACQUIRE, "r1");
	ck_assert(str_eq(m.m_u.slot.endpoint, "Fast"));
	ck_assert_uint_eq(m.m_u.slot.limit, 2);
	ck_assert_uint_eq(m.m_u.slot.timeout_ms, 1234);
	proto_msg_free(&m);
	proto_msg_init(&m, PROTO_SLOT_GRANT, rqid);
	m.m_u.slot.endpoint = str_from(ep);
	m.m_u.slot.granted = granted;
	fakegw_send(&t_gw, &m);
}

/* A turn asked, waited for (heartbeating the wait), granted and given
 * back. */
START_TEST(slot_granted_and_given_back)
{
	struct proto_msg	 m;

	start();
	request("r1", "slot", "Fast");
	fakegw_next(&t_gw, &m, WAIT_MS);
	ck_assert_uint_eq(m.m_type, PROTO_HEARTBEAT);
	ck_assert(str_eq(m.m_u.heartbeat.phase,
	    "waiting for a slot on endpoint Fast (limit 2)"));
	proto_msg_free(&m);
	slot_answer("r1", "Fast", true);
	expect_chunk("r1", "granted");
	expect(&m, PROTO_SLOT_RELEASE, "r1");
	ck_assert(str_eq(m.m_u.slot.endpoint, "Fast"));
	proto_msg_free(&m);
	expect_status("r1", RQ_OK);
}
END_TEST

/* Refused (the gateway's wait ran out): nothing to give back. */
START_TEST(slot_refused)
{
	start();
	request("r1", "slot", "Fast");
	slot_answer("r1", "Fast", false);
	expect_chunk("r1", "timeout");
	expect_status("r1", RQ_OK);
}
END_TEST

/* Answers for another endpoint or request are not this wait's. */
START_TEST(slot_answer_for_another)
{
	struct proto_msg	 m;

	start();
	request("r1", "slot", "Fast");
	slot_answer("r0", "Fast", true);
	proto_msg_init(&m, PROTO_SLOT_GRANT, "r1");
	m.m_u.slot.endpoint = str_from("Slow");
	m.m_u.slot.granted = false;
	fakegw_send(&t_gw, &m);
	expect_quiet();
	proto_msg_init(&m, PROTO_SLOT_GRANT, "r1");
	m.m_u.slot.endpoint = str_from("Fast");
	m.m_u.slot.granted = true;
	fakegw_send(&t_gw, &m);
	expect_chunk("r1", "granted");
	expect(&m, PROTO_SLOT_RELEASE, "r1");
	proto_msg_free(&m);
	expect_status("r1", RQ_OK);
	proto_msg_init(&m, PROTO_SLOT_GRANT, "r1");	/* late, when idle */
	m.m_u.slot.endpoint = str_from("Fast");
	fakegw_send(&t_gw, &m);
	request("r2", "echo", "");
	expect_chunk("r2", "|wuser|");
	expect_status("r2", RQ_OK);
}
END_TEST

/* Cancelled while waiting: the wait is given up with SLOT_RELEASE. */
START_TEST(slot_cancelled)
{
	struct proto_msg	 m;

	start();
	request("r1", "slot", "Fast");
	expect(&m, PROTO_SLOT_ACQUIRE, "r1");
	proto_msg_free(&m);
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r1");
	expect(&m, PROTO_SLOT_RELEASE, "r1");
	ck_assert(str_eq(m.m_u.slot.endpoint, "Fast"));
	proto_msg_free(&m);
	expect_chunk("r1", "stopped");
	expect_status("r1", RQ_CANCELLED);
}
END_TEST

/* A request stopped already asks for no turn. */
START_TEST(slot_when_stopped)
{
	start();
	request_cancelled("r1", "slot", "Fast");
	expect_chunk("r1", "stopped");
	expect_status("r1", RQ_CANCELLED);
}
END_TEST

/* ---- the store ---- */

/* sluice.db in the state folder exists: 1, or 0. */
static int
db_exists(void)
{
	char		*p = scratchdir_path(&t_dir, "state/sluice.db");
	struct stat	 st;
	int		 r = stat(p, &st) == 0;

	free(p);
	return r;
}

/* Opened by the first request that uses it, once; the locks a run took
 * are dropped when it ends. */
START_TEST(store_on_first_use)
{
	char	*path;

	scratchdir_mkdir(&t_dir, "state");
	t_wc.wc_store_at = path = scratchdir_path(&t_dir, "state/sluice.db");
	start();
	request("r1", "echo", "");
	expect_chunk("r1", "|wuser|");
	expect_status("r1", RQ_OK);
	ck_assert_int_eq(db_exists(), 0);
	request("r2", "store", "");
	expect_chunk("r2", "same");
	expect_chunk("r2", " lock 1");
	expect_store("r2", 0, false);
	expect_status("r2", RQ_OK);
	ck_assert_int_eq(db_exists(), 1);
	free(path);
	path = scratchdir_path(&t_dir, "state/sluice.db");
	ck_assert_int_eq(scratchdb_int(path, "SELECT count(*) FROM "
	    "workflow_locks"), 0);
	free(path);
	request("r3", "store", "");
	expect_chunk("r3", "same");
	expect_chunk("r3", " lock 1");
	expect_store("r3", 0, false);
	expect_status("r3", RQ_OK);
}
END_TEST

/* Hold the database's write lock, as another worker would. */
static struct store *
db_lock(void)
{
	char		*path = scratchdir_path(&t_dir, "state/sluice.db");
	struct store	*db = scratchdb_hold(path);

	free(path);
	return db;
}

static void
db_unlock(struct store *db)
{
	ck_assert_int_eq(store_commit(db), 0);
	store_close(db);
}

/* Waiting for another process's write lock heartbeats, and a CANCEL
 * ends the wait; but dropping the run's locks at its end is waited
 * for. */
START_TEST(store_wait)
{
	struct proto_msg	 m;
	struct store		*db;
	char			*state = scratchdir_path(&t_dir, "state/sluice.db");

	scratchdir_mkdir(&t_dir, "state");
	t_wc.wc_store_at = state;
	start();
	request("r1", "store", "");
	expect_chunk("r1", "same");
	expect_chunk("r1", " lock 1");
	expect_store("r1", 0, false);
	expect_status("r1", RQ_OK);
	db = db_lock();
	request("r2", "store", "");
	expect_chunk("r2", "same");
	fakegw_next(&t_gw, &m, 2500);
	ck_assert_uint_eq(m.m_type, PROTO_HEARTBEAT);
	ck_assert(str_eq(m.m_rqid, "r2"));
	proto_msg_free(&m);
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r2");
	expect_chunk("r2", " lock -1");
	expect_status("r2", RQ_CANCELLED);
	db_unlock(db);
	request("r3", "store", "hold");
	expect_chunk("r3", "same");
	expect_chunk("r3", " lock 1");
	db = db_lock();
	fakegw_send_simple(&t_gw, PROTO_CANCEL, "r3");
	expect_quiet();
	db_unlock(db);
	expect_store("r3", 0, false);
	expect_status("r3", RQ_CANCELLED);
	request("r4", "store", "");
	expect_chunk("r4", "same");
	expect_chunk("r4", " lock 1");
	expect_store("r4", 0, false);
	expect_status("r4", RQ_OK);
	free(state);
}
END_TEST

START_TEST(store_without_state_dir)
{
	start();
	request("r1", "store", "");
	expect_chunk("r1", "no store: no database: sluice-worker was started "
	    "without --state-dir");
	expect_status("r1", RQ_OK);
}
END_TEST

static Suite *
loop_suite(void)
{
	Suite	*s = suite_create("loop");
	TCase	*tc;

#define TC(name)	do {						\
	tc = tcase_create(name);					\
	tcase_add_checked_fixture(tc, setup, teardown);			\
	tcase_set_timeout(tc, 30);					\
	suite_add_tcase(s, tc);						\
} while (0)
	TC("hello");
	tcase_add_test(tc, hello_first);
	tcase_add_test(tc, hello_version_skew);
	TC("request");
	tcase_add_test(tc, chunks_then_done);
	tcase_add_test(tc, deltas_numbered);
	tcase_add_test(tc, error_done);
	tcase_add_test(tc, request_user);
	tcase_add_test(tc, cache_clear_route);
	tcase_add_test(tc, engine_frames);
	tcase_add_test(tc, phase_heartbeat);
	tcase_add_test(tc, chunks_gather);
	tcase_add_test(tc, request_hook);
	TC("cancel");
	tcase_add_test(tc, cancel_mid_request);
	tcase_add_test(tc, cancel_while_sleeping);
	tcase_add_test(tc, cancel_of_another_request);
	tcase_add_test(tc, cancel_with_the_request);
	tcase_add_test(tc, no_early_answer_when_cancelled);
	TC("deadline");
	tcase_add_test(tc, deadline_expires);
	TC("heartbeat");
	tcase_add_test(tc, heartbeat_while_busy);
	TC("end");
	tcase_add_test(tc, shutdown_when_idle);
	tcase_add_test(tc, shutdown_after_the_request);
	tcase_add_test(tc, eof_ends_the_worker);
	tcase_add_test(tc, retire_after_max_requests);
	tcase_add_test(tc, protocol_violations);
	tcase_add_test(tc, init_needs_a_socket);
	TC("early_answer");
	tcase_add_test(tc, early_answer);
	tcase_add_test(tc, after_the_answer);
	tcase_add_test(tc, fault_after_ms);
	TC("slots");
	tcase_add_test(tc, slot_granted_and_given_back);
	tcase_add_test(tc, slot_refused);
	tcase_add_test(tc, slot_answer_for_another);
	tcase_add_test(tc, slot_cancelled);
	tcase_add_test(tc, slot_when_stopped);
	TC("store");
	tcase_add_test(tc, store_on_first_use);
	tcase_add_test(tc, store_wait);
	tcase_add_test(tc, store_without_state_dir);
#undef TC
	return s;
}

int
main(void)
{
	return check_main(loop_suite());
}
