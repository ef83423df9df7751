/* check_sup.c - supervisor transitions driven by fake pids and a fake clock. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>

#include "../../common/buf.h"
#include "../../common/log.h"
#include "../../gateway/sup.h"
#include "../../gateway/sup_int.h"	/* the table test moves a slot itself */
#include "../testmain.h"

#define MAXP	128
#define MAXF	256

struct sent { unsigned slot; uint32_t type; char rqid[65]; };

static struct fake {
	uint64_t	 now, timer_at;
	pid_t		 next_pid;
	pid_t		 pid_of[16];	/* current pid per slot */
	unsigned	 last_slot;	/* where the last spawn went */
	unsigned	 maxreq_of[16];
	int		 nspawn, fail_spawn, fail_send;
	uint64_t	 spawn_at[MAXP];	/* F.now of each spawn */
	struct { pid_t pid; int sig; } kills[MAXP];
	int		 nkills;
	struct sent	 sent[MAXF];
	int		 nsent;
	int		 closed[16], paused[16];
	int		 nchunks, ndone, nfail, ready, stopped;
	int		 fail_status;
	char		 fail_why[128];
	struct sup_req	*last_done;
	int		 exits[SUP_EXIT_SHUTDOWN + 1];
	int		 nslotframes, nfreed;
	pid_t		 slot_pid;
	int		 ncache;
	struct sup_req	*cache_req;	/* of the last CACHE frame */
	struct proto_cache cache_last;
	int		 nstore;
	uint64_t	 store_errors;	/* summed over STORE frames */
} F;

static struct sup	*S;

static int
f_spawn(void *arg, unsigned slot, unsigned maxreq, pid_t *pid)
{
	if (F.fail_spawn)
		return -1;
	*pid = F.pid_of[slot] = ++F.next_pid;
	F.last_slot = slot;
	F.maxreq_of[slot] = maxreq;
	ck_assert_int_lt(F.nspawn, MAXP);
	F.spawn_at[F.nspawn++] = F.now;
	F.closed[slot] = 0;
	return 0;
}

static void
f_kill(void *arg, pid_t pid, int sig)
{
	ck_assert_int_lt(F.nkills, MAXP);
	F.kills[F.nkills].pid = pid;
	F.kills[F.nkills++].sig = sig;
}

static int
f_send(void *arg, unsigned slot, const void *frame, size_t len)
{
	struct proto_msg	 m;
	char			 err[PROTO_ERRLEN];

	if (F.fail_send)
		return -1;
	ck_assert_int_eq(proto_decode((const char *)frame + 4, len - 4, &m,
	    err), 0);
	ck_assert_int_lt(F.nsent, MAXF);
	F.sent[F.nsent].slot = slot;
	F.sent[F.nsent].type = m.m_type;
	snprintf(F.sent[F.nsent++].rqid, 65, "%.*s", (int)m.m_rqid.n,
	    m.m_rqid.p ? m.m_rqid.p : "");
	proto_msg_free(&m);
	return 0;
}

static void f_close(void *arg, unsigned slot) { F.closed[slot]++; }
static void f_pause(void *arg, unsigned slot, bool p) { F.paused[slot] = p; }
static uint64_t f_now(void *arg) { return F.now; }
static void f_arm(void *arg, uint64_t at) { F.timer_at = at; }

static void
f_chunk(void *arg, struct sup_req *sr, const struct proto_msg *m)
{
	F.nchunks++;
	sr->sr_forwarded = true;
}

static void
f_done(void *arg, struct sup_req *sr, const struct proto_msg *m)
{
	F.ndone++;
	F.last_done = sr;
}

static void
f_fail(void *arg, struct sup_req *sr, int status, const char *why)
{
	F.nfail++;
	F.fail_status = status;
	snprintf(F.fail_why, sizeof(F.fail_why), "%s", why);
}

static void
f_event(void *arg, enum sup_event ev)
{
	if (ev == SUP_EV_READY)
		F.ready++;
	else
		F.stopped++;
}

static void
f_exited(void *arg, enum sup_exit cause)
{
	F.exits[cause]++;
}

static void
f_slot_frame(void *arg, unsigned slot, pid_t pid, const struct proto_msg *m)
{
	F.nslotframes++;
	F.slot_pid = pid;
}

static void
f_freed(void *arg, unsigned slot, pid_t pid)
{
	F.nfreed++;
}

static void
f_cache(void *arg, struct sup_req *sr, const struct proto_msg *m)
{
	F.ncache++;
	F.cache_req = sr;
	F.cache_last = m->m_u.cache;
}

static void
f_store(void *arg, const struct proto_msg *m)
{
	F.nstore++;
	F.store_errors += m->m_u.store.errors;
}

static const struct sup_ops ops = { f_spawn, f_kill, f_send, f_close,
    f_pause, f_now, f_arm, f_chunk, f_done, f_fail, f_event, f_exited,
    f_slot_frame, f_freed, f_cache, f_store };

/* ---- helpers ---- */

static struct sup_conf
conf(unsigned min, unsigned max)
{
	struct sup_conf	 c;

	sup_conf_default(&c);
	c.min_workers = min;
	c.max_workers = max;
	c.queue_max = 4;
	return c;
}

static void
setup_with(struct sup_conf c)
{
	memset(&F, 0, sizeof(F));
	F.now = 1000;
	F.next_pid = 100;
	S = sup_new(&c, &ops, NULL);
	sup_start(S);
}

static void
teardown(void)
{
	sup_free(S);
	S = NULL;
}

static void
frame(unsigned slot, struct proto_msg *m)
{
	sup_chan_frame(S, slot, m);
}

static void
hello(unsigned slot)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_HELLO, NULL);
	m.m_u.hello.version = PROTO_VERSION;
	m.m_u.hello.pid = F.pid_of[slot];
	frame(slot, &m);
}

static void
chunk(unsigned slot, const char *rqid, uint64_t seq)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_REQ_CHUNK, rqid);
	m.m_u.req_chunk.seq = seq;
	m.m_u.req_chunk.content = STR_LIT("x");
	frame(slot, &m);
}

static void
done(unsigned slot, const char *rqid, uint32_t status)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_REQ_DONE, rqid);
	m.m_u.req_done.status = status;
	frame(slot, &m);
}

/* REQ_DONE after which the worker retires (its max_requests). */
static void
done_retiring(unsigned slot, const char *rqid, uint32_t status)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_REQ_DONE, rqid);
	m.m_u.req_done.status = status;
	m.m_u.req_done.retiring = true;
	frame(slot, &m);
}

/* REQ_DONE for an early answer: the worker goes on after it. */
static void
done_bg(unsigned slot, const char *rqid, uint32_t status)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_REQ_DONE, rqid);
	m.m_u.req_done.status = status;
	m.m_u.req_done.background = true;
	frame(slot, &m);
}

static void
post_done(unsigned slot, const char *rqid, bool failed, bool retiring)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_POST_DONE, rqid);
	m.m_u.post_done.failed = failed;
	m.m_u.post_done.retiring = retiring;
	if (failed)
		m.m_u.post_done.message = STR_LIT("memory node failed");
	frame(slot, &m);
}

static void
heartbeat(unsigned slot, const char *rqid)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_HEARTBEAT, rqid);
	m.m_u.heartbeat.phase = STR_LIT("waiting");
	frame(slot, &m);
}

/* Move the fake clock, firing the armed timer whenever it is due. */
static void
advance(uint64_t ms)
{
	uint64_t	 end = F.now + ms;
	int		 spins = 0;

	while (F.timer_at != 0 && F.timer_at <= end) {
		if (F.timer_at > F.now)
			F.now = F.timer_at;
		else
			ck_assert_msg(++spins < 1000,
			    "timer re-armed in the past without progress");
		sup_timer(S);
	}
	F.now = end;
}

static void
die(unsigned slot, int wstatus)
{
	sup_child_exit(S, F.pid_of[slot], wstatus);
	sup_chan_eof(S, slot);
}

static struct buf	 startbuf[8];

static void
mkreq(struct sup_req *sr, const char *id)
{
	struct proto_msg m;
	int		 i = id[strlen(id) - 1] % 8;

	memset(sr, 0, sizeof(*sr));
	snprintf(sr->sr_id, sizeof(sr->sr_id), "%s", id);
	proto_msg_init(&m, PROTO_REQ_START, id);
	m.m_u.req_start.api = API_OPENAI_CHAT;
	buf_reset(&startbuf[i]);
	proto_encode(&startbuf[i], &m);
	sr->sr_start = startbuf[i].b_data;
	sr->sr_start_len = startbuf[i].b_len;
}

static int
submit(struct sup_req *sr, const char *id)
{
	int		 st;
	const char	*why;

	mkreq(sr, id);
	return sup_submit(S, sr, &st, &why);
}

static struct sup_stats
stats(void)
{
	struct sup_stats st;

	sup_stats(S, &st);
	return st;
}

static int
last_sig_for(pid_t pid)
{
	int	 i;

	for (i = F.nkills - 1; i >= 0; i--)
		if (F.kills[i].pid == pid)
			return F.kills[i].sig;
	return 0;
}

static const struct sent *
last_sent(void)
{
	return F.nsent > 0 ? &F.sent[F.nsent - 1] : NULL;
}

static void
setup_one(void)
{
	setup_with(conf(1, 1));
	hello(0);
}

static void
setup_two(void)
{
	setup_with(conf(2, 2));
	hello(0);
	hello(1);
}

/* ---- startup ---- */

START_TEST(spawns_min_and_becomes_ready)
{
	setup_with(conf(2, 4));
	ck_assert_int_eq(F.nspawn, 2);
	ck_assert_uint_eq(stats().st_count[W_SPAWNING], 2);
	ck_assert_int_eq(F.ready, 0);
	hello(0);
	ck_assert_int_eq(F.ready, 1);
	hello(1);
	ck_assert_int_eq(F.ready, 1);	/* once per gateway life */
	ck_assert_uint_eq(stats().st_count[W_IDLE], 2);
	teardown();
}
END_TEST

START_TEST(spawn_timeout_escalates_to_sigkill)
{
	pid_t	 pid;

	setup_with(conf(1, 1));
	pid = F.pid_of[0];
	advance(5000);
	ck_assert_int_eq(last_sig_for(pid), SIGTERM);
	ck_assert_uint_eq(stats().st_count[W_KILLING], 1);
	/* A replacement starts in a spare slot meanwhile. */
	ck_assert_int_eq(F.nspawn, 2);
	advance(2000);
	ck_assert_int_eq(last_sig_for(pid), SIGKILL);
	die(0, SIGKILL);
	ck_assert_int_eq(F.closed[0], 1);
	ck_assert_uint_eq(stats().st_crashes, 1);
	advance(1000);
	ck_assert_int_eq(F.nspawn, 2);	/* one worker is enough */
	teardown();
}
END_TEST

START_TEST(hello_twice_is_a_violation)
{
	setup_one();
	hello(0);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

/* ---- the table of moves ---- */

/* The moves docs/HACKING.md allows, written out again: the supervisor's
 * table must say the same. */
static bool
documented_move(enum w_state from, enum w_state to)
{
	static const char *const moves[W_NSTATES] = {
		[W_EMPTY] = "S",
		[W_SPAWNING] = "IKD",
		[W_IDLE] = "BRKD",
		[W_BUSY] = "IACRKD",
		[W_AFTER] = "IRKD",
		[W_CANCELLING] = "IARKD",
		[W_RETIRING] = "KD",
		[W_KILLING] = "D",
		[W_DEAD] = "KE",
	};
	/* one letter per state, in enum order */
	static const char letter[W_NSTATES + 1] = "ESIBACRKD";

	return strchr(moves[from], letter[to]) != NULL;
}

/* Slot 0, whatever its state, put in state st by hand. */
static struct worker *
slot0_in(enum w_state st)
{
	struct worker	*w = &S->s_w[0];

	w->w_state = st;
	w->w_deadline = 0;
	return w;
}

START_TEST(every_documented_move_is_allowed)
{
	enum w_state	 from, to;
	unsigned	 n = 0;

	setup_with(conf(1, 1));
	for (from = W_EMPTY; from < W_NSTATES; from++)
		for (to = W_EMPTY; to < W_NSTATES; to++) {
			struct worker	*w;

			if (!documented_move(from, to))
				continue;
			w = slot0_in(from);
			F.now += 10;
			ck_assert_msg(w_set_state(S, w, to, 500) == 0,
			    "%s -> %s refused", sup_state_name(from),
			    sup_state_name(to));
			ck_assert_int_eq(w->w_state, to);
			ck_assert_uint_eq(w->w_state_at, F.now);
			ck_assert_uint_eq(w->w_deadline, F.now + 500);
			n++;
		}
	ck_assert_uint_eq(n, 28);
	ck_assert_uint_eq(stats().st_bad_moves, 0);
	teardown();
}
END_TEST

START_TEST(undocumented_moves_are_refused)
{
	enum w_state	 from, to;
	uint64_t	 n = 0;

	setup_with(conf(1, 1));
	for (from = W_EMPTY; from < W_NSTATES; from++)
		for (to = W_EMPTY; to < W_NSTATES; to++) {
			struct worker	*w;

			if (documented_move(from, to))
				continue;
			w = slot0_in(from);
			w->w_state_at = 7;
			ck_assert_msg(w_set_state(S, w, to, 500) == -1,
			    "%s -> %s allowed", sup_state_name(from),
			    sup_state_name(to));
			ck_assert_int_eq(w->w_state, from);
			ck_assert_uint_eq(w->w_state_at, 7);
			ck_assert_uint_eq(w->w_deadline, 0);
			ck_assert_uint_eq(stats().st_bad_moves, ++n);
		}
	ck_assert_uint_eq(n, 81 - 28);
	teardown();
}
END_TEST

/* The examples of issue 16, with what the callers make of a refusal. */
START_TEST(named_illegal_moves_change_nothing)
{
	struct sup_req	 r;
	struct worker	*w;

	setup_one();
	w = &S->s_w[0];
	ck_assert_int_eq(w_set_state(S, w, W_CANCELLING, 0), -1);
	ck_assert_int_eq(w->w_state, W_IDLE);
	/* the refused worker still takes a request */
	ck_assert_int_eq(submit(&r, "r1"), 0);
	ck_assert_int_eq(w->w_state, W_BUSY);
	ck_assert_int_eq(w_set_state(S, w, W_SPAWNING, 0), -1);
	ck_assert_int_eq(w_set_state(S, w, W_EMPTY, 0), -1);
	ck_assert_int_eq(w->w_state, W_BUSY);
	done(0, "r1", RQ_OK);
	ck_assert_int_eq(F.ndone, 1);
	die(0, SIGSEGV);
	ck_assert_int_eq(w->w_state, W_EMPTY);	/* through DEAD */
	w = slot0_in(W_DEAD);
	ck_assert_int_eq(w_set_state(S, w, W_BUSY, 0), -1);
	w = slot0_in(W_SPAWNING);
	ck_assert_int_eq(w_set_state(S, w, W_BUSY, 0), -1);
	ck_assert_int_eq(w->w_state, W_SPAWNING);
	ck_assert_uint_eq(stats().st_bad_moves, 5);
	teardown();
}
END_TEST

/* ---- requests ---- */

START_TEST(dispatch_chunks_done)
{
	struct sup_req	 r;

	setup_one();
	ck_assert_int_eq(submit(&r, "r1"), 0);
	ck_assert_uint_eq(last_sent()->type, PROTO_REQ_START);
	ck_assert_str_eq(last_sent()->rqid, "r1");
	ck_assert_uint_eq(stats().st_count[W_BUSY], 1);
	chunk(0, "r1", 0);
	chunk(0, "r1", 1);
	ck_assert_int_eq(F.nchunks, 2);
	done(0, "r1", RQ_OK);
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_ptr_eq(F.last_done, &r);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_uint_eq(stats().st_served, 1);
	teardown();
}
END_TEST

START_TEST(queue_then_on_demand_spawn)
{
	struct sup_req	 a, b, c;

	setup_with(conf(1, 2));
	hello(0);
	submit(&a, "a1");
	ck_assert_int_eq(F.nspawn, 1);
	submit(&b, "b2");		/* queued; a second worker is started */
	ck_assert_uint_eq(stats().st_queued, 1);
	ck_assert_int_eq(F.nspawn, 2);
	hello(1);
	ck_assert_uint_eq(stats().st_queued, 0);
	ck_assert_str_eq(last_sent()->rqid, "b2");
	submit(&c, "c3");		/* no third slot: waits */
	ck_assert_int_eq(F.nspawn, 2);
	done(0, "a1", RQ_OK);
	ck_assert_str_eq(last_sent()->rqid, "c3");
	ck_assert_uint_eq(last_sent()->slot, 0);
	teardown();
}
END_TEST

START_TEST(queue_full_refused)
{
	struct sup_req	 r[6];
	char		 id[16];
	int		 i, st;
	const char	*why;

	setup_one();
	for (i = 0; i < 5; i++) {	/* one running + queue_max 4 */
		snprintf(id, sizeof(id), "q%d", i);
		ck_assert_int_eq(submit(&r[i], id), 0);
	}
	mkreq(&r[5], "q5");
	ck_assert_int_eq(sup_submit(S, &r[5], &st, &why), -1);
	ck_assert_int_eq(st, 503);
	ck_assert_ptr_nonnull(strstr(why, "queue is full"));
	teardown();
}
END_TEST

START_TEST(queue_timeout_fails_503)
{
	struct sup_req	 a, b;

	setup_one();
	submit(&a, "a1");
	submit(&b, "b2");
	heartbeat(0, "a1");
	advance(4000);
	heartbeat(0, "a1");
	ck_assert_int_eq(F.nfail, 0);
	/* keep the worker alive past the queue timeout */
	while (F.nfail == 0 && F.now < 400000) {
		advance(1000);
		heartbeat(0, "a1");
	}
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 503);
	ck_assert_uint_eq(stats().st_queued, 0);
	ck_assert_uint_ge(F.now, 1000 + 300000);
	teardown();
}
END_TEST

/* ---- hangs, pauses, deadlines ---- */

START_TEST(hang_is_killed_and_request_failed)
{
	struct sup_req	 r;
	pid_t		 pid;

	setup_one();
	pid = F.pid_of[0];
	submit(&r, "r1");
	advance(3000);
	heartbeat(0, "r1");		/* a slow backend is not a hang */
	advance(4900);
	ck_assert_int_eq(F.nfail, 0);
	advance(200);
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 502);
	ck_assert_ptr_nonnull(strstr(F.fail_why, "stopped responding"));
	ck_assert_int_eq(last_sig_for(pid), SIGTERM);
	ck_assert_uint_eq(stats().st_hung, 1);
	die(0, SIGTERM);
	ck_assert_int_eq(F.exits[SUP_EXIT_HANG], 1);
	advance(100);
	ck_assert_int_eq(F.nspawn, 2);	/* replaced */
	teardown();
}
END_TEST

START_TEST(paused_worker_is_not_hung)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	sup_pause(S, &r, true);
	ck_assert_int_eq(F.paused[0], 1);
	advance(60000);
	ck_assert_int_eq(F.nfail, 0);
	sup_pause(S, &r, false);
	ck_assert_int_eq(F.paused[0], 0);
	advance(4000);
	ck_assert_int_eq(F.nfail, 0);
	advance(1500);
	ck_assert_int_eq(F.nfail, 1);
	teardown();
}
END_TEST

START_TEST(deadline_cancels_and_answers_504)
{
	struct sup_req	 r;

	setup_one();
	mkreq(&r, "r1");
	r.sr_deadline = F.now + 2500;
	{
		int st; const char *why;
		ck_assert_int_eq(sup_submit(S, &r, &st, &why), 0);
	}
	advance(1000);
	heartbeat(0, "r1");
	advance(1600);
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 504);
	ck_assert_uint_eq(last_sent()->type, PROTO_CANCEL);
	ck_assert_uint_eq(stats().st_count[W_CANCELLING], 1);
	done(0, "r1", RQ_CANCELLED);
	ck_assert_int_eq(F.ndone, 0);	/* owner already answered */
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	teardown();
}
END_TEST

/* ---- cancellation ---- */

START_TEST(cancel_then_ack_reuses_worker)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	chunk(0, "r1", 0);
	sup_cancel(S, &r);
	ck_assert_uint_eq(last_sent()->type, PROTO_CANCEL);
	ck_assert_str_eq(last_sent()->rqid, "r1");
	chunk(0, "r1", 1);		/* in flight: dropped, no callback */
	ck_assert_int_eq(F.nchunks, 1);
	done(0, "r1", RQ_CANCELLED);
	ck_assert_int_eq(F.ndone, 0);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_int_eq(F.nkills, 0);
	teardown();
}
END_TEST

START_TEST(cancel_without_ack_kills)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	sup_cancel(S, &r);
	advance(2000);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	ck_assert_int_eq(F.nfail, 0);	/* owner left: no callback */
	die(0, SIGTERM);
	ck_assert_int_eq(F.exits[SUP_EXIT_CANCEL_KILL], 1);
	teardown();
}
END_TEST

/* The last request of a recycled worker was cancelled: its REQ_DONE
 * still says it retires, and it goes without being killed. */
START_TEST(cancelled_last_request_retires)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	sup_cancel(S, &r);
	done_retiring(0, "r1", RQ_CANCELLED);
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 1);
	ck_assert_int_eq(F.ndone, 0);
	ck_assert_int_eq(F.nfreed, 1);
	die(0, 0);
	ck_assert_int_eq(F.exits[SUP_EXIT_RECYCLE], 1);
	ck_assert_uint_eq(stats().st_crashes, 0);
	ck_assert_int_eq(F.nkills, 0);
	teardown();
}
END_TEST

/* Dead while cancelling: the owner has left, so nothing is failed or
 * retried, and the crash counts. */
START_TEST(death_while_cancelling)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	sup_cancel(S, &r);
	sup_chan_eof(S, 0);
	ck_assert_uint_eq(stats().st_count[W_DEAD], 1);
	sup_child_exit(S, F.pid_of[0], SIGSEGV);
	ck_assert_uint_eq(stats().st_count[W_DEAD], 0);
	ck_assert_int_eq(F.nfail, 0);
	ck_assert_uint_eq(stats().st_retried, 0);
	ck_assert_uint_eq(stats().st_crashes, 1);
	ck_assert_int_eq(F.closed[0], 1);
	teardown();
}
END_TEST

START_TEST(cancel_queued_request)
{
	struct sup_req	 a, b;

	setup_one();
	submit(&a, "a1");
	submit(&b, "b2");
	sup_cancel(S, &b);
	ck_assert_uint_eq(stats().st_queued, 0);
	done(0, "a1", RQ_OK);
	ck_assert_uint_eq(last_sent()->type, PROTO_REQ_START);
	ck_assert_str_eq(last_sent()->rqid, "a1");	/* b never sent */
	teardown();
}
END_TEST

/* ---- deaths ---- */

START_TEST(death_before_output_retries_once)
{
	struct sup_req	 r;

	setup_two();
	submit(&r, "r1");
	ck_assert_uint_eq(last_sent()->slot, 1);
	die(1, SIGKILL);
	ck_assert_int_eq(F.exits[SUP_EXIT_CRASH], 1);
	ck_assert_int_eq(F.nfail, 0);
	ck_assert_str_eq(last_sent()->rqid, "r1");
	ck_assert_uint_eq(last_sent()->slot, 0);	/* retried */
	ck_assert_uint_eq(stats().st_retried, 1);
	die(0, SIGKILL);		/* second death: give up */
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 502);
	teardown();
}
END_TEST

START_TEST(death_after_output_fails)
{
	struct sup_req	 r;

	setup_two();
	submit(&r, "r1");
	chunk(1, "r1", 0);		/* f_chunk marks it forwarded */
	sup_chan_eof(S, 1);		/* EOF before the exit is reaped */
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 502);
	ck_assert_uint_eq(stats().st_count[W_DEAD], 1);
	sup_child_exit(S, F.pid_of[1], SIGKILL);
	ck_assert_uint_eq(stats().st_count[W_DEAD], 0);
	ck_assert_uint_eq(stats().st_crashes, 1);
	advance(100);
	ck_assert_int_eq(F.nspawn, 3);
	teardown();
}
END_TEST

START_TEST(frames_after_exit_still_count)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	/* SIGCHLD handled before the channel's last frames were read */
	sup_child_exit(S, F.pid_of[0], 0);
	ck_assert_int_eq(F.nfail, 0);
	done(0, "r1", RQ_OK);
	ck_assert_int_eq(F.ndone, 1);
	sup_chan_eof(S, 0);
	ck_assert_int_eq(F.nfail, 0);
	ck_assert_uint_eq(stats().st_crashes, 0);
	ck_assert_int_eq(F.nspawn, 2);
	teardown();
}
END_TEST

START_TEST(eof_without_exit_gets_sigkill)
{
	setup_one();
	sup_chan_eof(S, 0);
	ck_assert_uint_eq(stats().st_count[W_DEAD], 1);
	advance(2000);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGKILL);
	sup_child_exit(S, F.pid_of[0], SIGKILL);
	ck_assert_uint_eq(stats().st_count[W_EMPTY], 1);
	teardown();
}
END_TEST

START_TEST(exit_without_eof_closes_channel)
{
	setup_one();
	sup_child_exit(S, F.pid_of[0], SIGSEGV);
	ck_assert_int_eq(F.closed[0], 0);	/* channel may hold frames */
	advance(1999);
	ck_assert_int_eq(F.closed[0], 0);
	advance(1);
	ck_assert_int_eq(F.closed[0], 1);
	ck_assert_uint_eq(stats().st_crashes, 1);
	teardown();
}
END_TEST

START_TEST(ignoring_sigterm_gets_sigkill)
{
	struct sup_req	 r;
	pid_t		 pid;

	setup_one();
	pid = F.pid_of[0];
	submit(&r, "r1");
	advance(5100);			/* hang */
	ck_assert_int_eq(last_sig_for(pid), SIGTERM);
	advance(1800);
	ck_assert_int_eq(last_sig_for(pid), SIGTERM);
	advance(200);
	ck_assert_int_eq(last_sig_for(pid), SIGKILL);
	teardown();
}
END_TEST

/* ---- protocol violations ---- */

START_TEST(foreign_request_id_kills)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	chunk(0, "other", 0);
	ck_assert_int_eq(F.nchunks, 0);
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

START_TEST(out_of_sequence_kills)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	chunk(0, "r1", 0);
	chunk(0, "r1", 5);
	ck_assert_int_eq(F.nchunks, 1);
	ck_assert_int_eq(F.nfail, 1);
	teardown();
}
END_TEST

START_TEST(wrong_direction_kills)
{
	struct proto_msg m;

	setup_one();
	proto_msg_init(&m, PROTO_SHUTDOWN, NULL);
	frame(0, &m);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

START_TEST(malformed_frame_kills)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	sup_chan_error(S, 0, false, "oversize frame");
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	die(0, SIGTERM);
	advance(100);
	ck_assert_int_eq(F.nspawn, 2);	/* ordinary respawn */
	teardown();
}
END_TEST

START_TEST(version_mismatch_not_respawned)
{
	setup_with(conf(1, 1));
	sup_chan_error(S, 0, true, "protocol version 9, expected 1");
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	die(0, SIGTERM);
	advance(60000);
	ck_assert_int_eq(F.nspawn, 1);
	ck_assert(stats().st_broken);
	{
		struct sup_req r; int st; const char *why;
		mkreq(&r, "r1");
		ck_assert_int_eq(sup_submit(S, &r, &st, &why), -1);
		ck_assert_ptr_nonnull(strstr(why, "version"));
	}
	teardown();
}
END_TEST

START_TEST(ex_config_not_respawned)
{
	struct sup_conf	 c = conf(1, 1);

	setup_with(c);
	die(0, EX_CONFIG << 8);		/* exited with code EX_CONFIG */
	ck_assert_int_eq(F.exits[SUP_EXIT_CONFIG], 1);
	advance(60000);
	ck_assert_int_eq(F.nspawn, 1);
	ck_assert(stats().st_broken);
	ck_assert_uint_eq(stats().st_crashes, 0);
	sup_reload(S, &c);		/* fixed */
	ck_assert(!stats().st_broken);
	ck_assert_int_eq(F.nspawn, 2);
	ck_assert_uint_eq(F.last_slot, 0);	/* the same slot again */
	teardown();
}
END_TEST

/* One worker that cannot start marks the pool broken; the workers still
 * alive go on serving (the pool refuses only when none is left). */
START_TEST(broken_pool_serves_with_live_workers)
{
	struct sup_req	 r;

	setup_with(conf(2, 2));
	hello(0);
	die(1, EX_CONFIG << 8);
	advance(1000);
	ck_assert(stats().st_broken);
	ck_assert_uint_eq(stats().st_live, 1);
	ck_assert_int_eq(submit(&r, "r1"), 0);
	ck_assert_uint_eq(stats().st_count[W_BUSY], 1);	/* dispatched */
	teardown();
}
END_TEST

/* ---- backoff and crash loops ---- */

/* A worker that never said HELLO dies young, even in a slot whose
 * last worker had been healthy for long. */
START_TEST(ready_is_not_inherited_from_the_slot)
{
	setup_one();
	advance(5000);
	die(0, SIGSEGV);		/* healthy: 100 ms */
	advance(100);
	ck_assert_int_eq(F.nspawn, 2);
	ck_assert_uint_eq(F.last_slot, 0);
	advance(1000);
	die(0, SIGSEGV);		/* young: doubled */
	advance(199);
	ck_assert_int_eq(F.nspawn, 2);
	advance(1);
	ck_assert_int_eq(F.nspawn, 3);
	teardown();
}
END_TEST

START_TEST(backoff_doubles_and_resets)
{
	setup_with(conf(1, 1));
	die(F.last_slot, SIGSEGV);	/* never said HELLO */
	advance(99);
	ck_assert_int_eq(F.nspawn, 1);
	advance(1);
	ck_assert_int_eq(F.nspawn, 2);
	die(F.last_slot, SIGSEGV);
	advance(199);
	ck_assert_int_eq(F.nspawn, 2);
	advance(1);
	ck_assert_int_eq(F.nspawn, 3);
	die(F.last_slot, SIGSEGV);
	advance(400);
	ck_assert_int_eq(F.nspawn, 4);
	hello(F.last_slot);		/* healthy for a while: reset */
	advance(5000);
	die(F.last_slot, SIGSEGV);
	advance(100);
	ck_assert_int_eq(F.nspawn, 5);
	teardown();
}
END_TEST

START_TEST(backoff_is_capped)
{
	struct sup_conf	 c = conf(1, 1);
	int		 i;

	c.spawn_timeout_ms = 3600000;	/* no timeouts muddling counts */
	setup_with(c);
	for (i = 0; i < 12; i++) {
		hello(F.last_slot);	/* up, but dies young */
		die(F.last_slot, SIGSEGV);
		advance(30000);
	}
	ck_assert_int_eq(F.nspawn, 13);
	hello(F.last_slot);
	die(F.last_slot, SIGSEGV);
	advance(29999);
	ck_assert_int_eq(F.nspawn, 13);
	advance(1);
	ck_assert_int_eq(F.nspawn, 14);
	teardown();
}
END_TEST

START_TEST(crash_loop_cannot_hop_slots)
{
	setup_with(conf(1, 2));		/* 4 slots, 1 worker */
	hello(F.last_slot);
	die(F.last_slot, SIGSEGV);
	ck_assert_int_eq(F.nspawn, 1);	/* held, in every slot */
	advance(99);
	ck_assert_int_eq(F.nspawn, 1);
	advance(1);
	ck_assert_int_eq(F.nspawn, 2);
	teardown();
}
END_TEST

START_TEST(crash_loop_marks_degraded)
{
	struct sup_conf	 c = conf(4, 4);
	int		 i;

	c.backoff_max_ms = 100;
	c.spawn_timeout_ms = 3600000;
	setup_with(c);
	ck_assert(!stats().st_degraded);
	for (i = 0; i < 10; i++) {
		die(F.last_slot, SIGSEGV);
		advance(1000);		/* from the fifth, a start a second */
	}
	ck_assert_int_eq(F.nspawn, 4 + 10);
	ck_assert(stats().st_degraded);
	ck_assert_uint_eq(stats().st_crashes, 10);
	advance(61000);			/* quiet: healthy again */
	ck_assert(!stats().st_degraded);
	teardown();
}
END_TEST

/* Spawns in each second of secs seconds from from. */
static void
spawns_per_second(uint64_t from, int secs, int *per)
{
	int	 i;

	memset(per, 0, (size_t)secs * sizeof(*per));
	for (i = 0; i < F.nspawn; i++)
		if (F.spawn_at[i] >= from &&
		    F.spawn_at[i] < from + (uint64_t)secs * 1000)
			per[(F.spawn_at[i] - from) / 1000]++;
}

/* Four workers dying before HELLO, twice. After the first four failures
 * the hold ends with the four starting at once; from the fifth failure
 * on, they start one a second. */
START_TEST(crash_loop_paces_starts)
{
	struct sup_conf	 c = conf(4, 4);
	static const int paced[8] = { 0, 0, 0, 1, 1, 1, 1, 0 };
	uint64_t	 hold;
	int		 per[8], i;

	c.spawn_timeout_ms = 3600000;	/* no timeouts muddling counts */
	setup_with(c);
	for (i = 0; i < 4; i++)
		die(i, SIGSEGV);	/* held 100, 200, 400, 800 ms */
	hold = F.now + 800;
	advance(2000);
	ck_assert_int_eq(F.nspawn, 8);
	for (i = 4; i < 8; i++)
		ck_assert_uint_eq(F.spawn_at[i], hold);
	for (i = 0; i < 4; i++)
		die(i, SIGSEGV);	/* 1.6, 3.2, 6.4 and 12.8 s */
	hold = F.now + 12800;
	advance(20000);
	ck_assert_int_eq(F.nspawn, 12);
	spawns_per_second(hold - 3000, 8, per);
	for (i = 0; i < 8; i++)
		ck_assert_msg(per[i] == paced[i], "%d spawns in second %d of "
		    "the hold's end", per[i], i - 3);
	ck_assert_uint_eq(F.spawn_at[8], hold);
	teardown();
}
END_TEST

/* Paced starts end once a new worker has stayed up for healthy_after;
 * a crash of a healthy worker starts a new count. */
START_TEST(a_worker_that_stays_up_ends_the_pacing)
{
	struct sup_conf	 c = conf(4, 4);
	uint64_t	 hold;
	int		 i;

	c.spawn_timeout_ms = 3600000;
	setup_with(c);
	for (i = 0; i < 4; i++)
		die(i, SIGSEGV);
	advance(800);
	for (i = 0; i < 4; i++)
		die(i, SIGSEGV);	/* eight in a row */
	hold = F.now + 12800;
	advance(12800);
	ck_assert_int_eq(F.nspawn, 9);
	hello(F.last_slot);
	advance(999);
	ck_assert_int_eq(F.nspawn, 9);
	advance(1);			/* up for a second: the rest at once */
	ck_assert_int_eq(F.nspawn, 12);
	for (i = 9; i < 12; i++)
		ck_assert_uint_eq(F.spawn_at[i], hold + 1000);
	die(0, SIGSEGV);		/* the healthy one: count from one */
	for (i = 1; i < 4; i++)
		die(i, SIGSEGV);	/* four in a row: not paced yet */
	advance(800);
	ck_assert_int_eq(F.nspawn, 16);
	ck_assert_uint_eq(F.spawn_at[15], F.spawn_at[12]);
	teardown();
}
END_TEST

/* ---- sizing and recycling ---- */

START_TEST(idle_reaping_above_min)
{
	struct sup_req	 a, b;

	setup_with(conf(1, 3));
	hello(0);
	submit(&a, "a1");
	submit(&b, "b2");
	hello(1);
	done(0, "a1", RQ_OK);
	done(1, "b2", RQ_OK);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 2);
	advance(10000);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 1);
	ck_assert_uint_eq(last_sent()->type, PROTO_SHUTDOWN);
	die(last_sent()->slot, 0);
	ck_assert_int_eq(F.exits[SUP_EXIT_IDLE], 1);
	advance(60000);
	ck_assert_uint_eq(stats().st_live, 1);	/* never below min */
	ck_assert_int_eq(F.nspawn, 2);
	ck_assert_uint_eq(stats().st_crashes, 0);
	teardown();
}
END_TEST

START_TEST(retire_then_clean_respawn)
{
	struct sup_conf	 c = conf(1, 1);
	struct sup_req	 r, r2;

	c.max_requests = 1;
	setup_with(c);
	ck_assert_uint_eq(F.maxreq_of[0], 1);
	hello(0);
	submit(&r, "r1");
	done_retiring(0, "r1", RQ_OK);	/* its last one */
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 1);
	submit(&r2, "r2");		/* never handed to the leaving worker */
	ck_assert_str_eq(last_sent()->rqid, "r1");
	ck_assert_uint_eq(stats().st_queued, 1);
	/* Its replacement already started in a spare slot. */
	ck_assert_int_eq(F.nspawn, 2);
	die(0, 0);
	ck_assert_int_eq(F.nspawn, 2);
	ck_assert_uint_eq(stats().st_crashes, 0);
	ck_assert_int_eq(F.exits[SUP_EXIT_RECYCLE], 1);
	hello(F.last_slot);
	ck_assert_str_eq(last_sent()->rqid, "r2");
	teardown();
}
END_TEST

START_TEST(retire_crossing_a_request_requeues_it)
{
	struct proto_msg m;
	struct sup_req	 r;

	setup_with(conf(1, 1));
	hello(0);
	submit(&r, "r1");		/* REQ_START is on its way... */
	proto_msg_init(&m, PROTO_RETIRE, NULL);
	frame(0, &m);			/* ...while the idle worker left */
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 1);
	ck_assert_uint_eq(stats().st_queued, 1);
	die(0, 0);
	hello(0);
	ck_assert_str_eq(last_sent()->rqid, "r1");
	ck_assert_uint_eq(last_sent()->type, PROTO_REQ_START);
	ck_assert_int_eq(F.nfail, 0);
	teardown();
}
END_TEST

START_TEST(max_requests_jitter_in_range)
{
	struct sup_conf	 c = conf(4, 4);
	int		 i;

	c.max_requests = 100;
	c.max_requests_jitter = 10;
	setup_with(c);
	for (i = 0; i < 4; i++) {
		ck_assert_uint_ge(F.maxreq_of[i], 100);
		ck_assert_uint_le(F.maxreq_of[i], 110);
	}
	teardown();
}
END_TEST

/* ---- endpoint slots ---- */

static void
slot_msg(unsigned slot, uint32_t type, const char *rqid)
{
	struct proto_msg m;

	proto_msg_init(&m, type, rqid);
	m.m_u.slot.endpoint = STR_LIT("Fast");
	m.m_u.slot.limit = 1;
	frame(slot, &m);
}

START_TEST(slot_frames_forwarded_and_freed)
{
	struct sup_req	 r;

	setup_one();
	submit(&r, "r1");
	slot_msg(0, PROTO_SLOT_ACQUIRE, "r1");
	ck_assert_int_eq(F.nslotframes, 1);
	ck_assert_int_eq(F.slot_pid, F.pid_of[0]);
	slot_msg(0, PROTO_SLOT_RELEASE, "r1");
	ck_assert_int_eq(F.nslotframes, 2);
	done(0, "r1", RQ_OK);
	ck_assert_int_eq(F.nfreed, 1);		/* request over */
	slot_msg(0, PROTO_SLOT_ACQUIRE, "r1");	/* not busy any more */
	ck_assert_int_eq(F.nslotframes, 2);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	die(0, SIGTERM);
	ck_assert_int_eq(F.nfreed, 2);		/* and gone */
	teardown();
}
END_TEST

/* ---- response-cache lookups ---- */

static void
cache_msg(unsigned slot, const char *rqid, bool hit, bool answer,
    int64_t entries)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_CACHE, rqid);
	m.m_u.cache.hit = hit;
	m.m_u.cache.answer = answer;
	m.m_u.cache.entries = entries;
	frame(slot, &m);
}

/* Busy (before and between chunks): with the request; after the
 * answer and while cancelling: counted, without it. */
START_TEST(cache_frames_forwarded)
{
	struct sup_req	 a, b;

	setup_one();
	submit(&a, "a1");
	cache_msg(0, "a1", false, false, 3);	/* before any chunk */
	ck_assert_int_eq(F.ncache, 1);
	ck_assert_ptr_eq(F.cache_req, &a);
	ck_assert(!F.cache_last.hit && !F.cache_last.answer);
	ck_assert_int_eq(F.cache_last.entries, 3);
	chunk(0, "a1", 0);
	cache_msg(0, "a1", true, true, 4);	/* between chunks */
	ck_assert_int_eq(F.ncache, 2);
	ck_assert_ptr_eq(F.cache_req, &a);
	ck_assert(F.cache_last.hit && F.cache_last.answer);
	chunk(0, "a1", 1);			/* the sequence goes on */
	ck_assert_int_eq(F.nchunks, 2);
	done_bg(0, "a1", RQ_OK);
	cache_msg(0, "a1", true, false, -1);	/* after the answer */
	ck_assert_int_eq(F.ncache, 3);
	ck_assert_ptr_null(F.cache_req);
	ck_assert_int_eq(F.cache_last.entries, -1);
	post_done(0, "a1", false, false);
	submit(&b, "b2");
	cache_msg(0, "b2", false, true, 5);
	ck_assert_ptr_eq(F.cache_req, &b);
	sup_cancel(S, &b);
	cache_msg(0, "b2", false, true, 5);	/* while cancelling */
	ck_assert_int_eq(F.ncache, 5);
	ck_assert_ptr_null(F.cache_req);
	done(0, "b2", RQ_CANCELLED);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_int_eq(F.nkills, 0);
	ck_assert_int_eq(F.nfail, 0);
	teardown();
}
END_TEST

/* A CACHE frame naming another request, or none, or sent while idle
 * is a protocol violation. */
START_TEST(cache_frame_for_another_request_kills)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	cache_msg(0, "other", true, true, 1);
	ck_assert_int_eq(F.ncache, 0);
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 502);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();

	setup_one();
	cache_msg(0, "a1", false, false, 1);	/* idle: owns nothing */
	ck_assert_int_eq(F.ncache, 0);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();

	setup_one();
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	cache_msg(0, NULL, false, false, 1);	/* after: no id at all */
	ck_assert_int_eq(F.ncache, 0);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

/* ---- store reports ---- */

static void
store_msg(unsigned slot, const char *rqid, uint64_t errors)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_STORE, rqid);
	m.m_u.store.errors = errors;
	m.m_u.store.failing = errors > 0;
	frame(slot, &m);
}

/* Before REQ_DONE, after an early answer, while cancelling: passed on.
 * For another request: a violation, and nothing counted. */
START_TEST(store_frames_forwarded)
{
	struct sup_req	 a, b;

	setup_one();
	submit(&a, "a1");
	store_msg(0, "a1", 2);
	done(0, "a1", RQ_OK);
	submit(&b, "b2");
	done_bg(0, "b2", RQ_OK);
	store_msg(0, "b2", 0);
	post_done(0, "b2", false, false);
	submit(&a, "a3");
	sup_cancel(S, &a);
	store_msg(0, "a3", 1);
	done(0, "a3", RQ_CANCELLED);
	ck_assert_int_eq(F.nstore, 3);
	ck_assert_uint_eq(F.store_errors, 3);
	ck_assert_int_eq(F.nkills, 0);
	submit(&a, "a4");
	store_msg(0, "other", 5);
	ck_assert_int_eq(F.nstore, 3);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

/* ---- reload and resize ---- */

static int
count_sent(uint32_t type)
{
	int	 i, n = 0;

	for (i = 0; i < F.nsent; i++)
		n += F.sent[i].type == type;
	return n;
}

START_TEST(reload_rolls_workers_without_failing)
{
	struct sup_conf	 c = conf(2, 2);
	struct sup_req	 r;
	unsigned	 busy;

	setup_two();
	submit(&r, "r1");
	busy = last_sent()->slot;
	sup_reload(S, &c);
	/* The idle one leaves at once, two new ones start. */
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 1);
	ck_assert_int_eq(F.nspawn, 4);
	chunk(busy, "r1", 0);
	ck_assert_int_eq(F.nchunks, 1);		/* still served */
	done(busy, "r1", RQ_OK);
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 2);	/* then leaves */
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 2);
	ck_assert_int_eq(F.nfail, 0);
	teardown();
}
END_TEST

START_TEST(reload_while_spawning)
{
	struct sup_conf	 c = conf(1, 1);

	setup_with(conf(1, 1));
	sup_reload(S, &c);		/* slot 0 still spawning */
	ck_assert_int_eq(F.nspawn, 2);	/* the new one */
	hello(0);			/* the old one arrives late */
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 1);
	ck_assert_uint_eq(last_sent()->slot, 0);
	teardown();
}
END_TEST

START_TEST(reload_grows_the_pool)
{
	struct sup_conf	 c = conf(5, 6);

	setup_one();
	sup_reload(S, &c);
	ck_assert_int_eq(F.nspawn, 6);	/* first + five new */
	ck_assert_uint_eq(sup_get_conf(S)->max_workers, 6);
	teardown();
}
END_TEST

START_TEST(resize_up_and_down)
{
	struct sup_req	 a, b;

	setup_two();
	sup_resize(S, +1);
	ck_assert_int_eq(F.nspawn, 3);
	hello(2);
	submit(&a, "a1");
	submit(&b, "b2");
	sup_resize(S, -1);		/* the idle one goes */
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 1);
	sup_resize(S, -1);		/* both busy: nobody is killed */
	ck_assert_int_eq(F.nkills, 0);
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 1);
	done(last_sent()->slot == 0 ? 0 : 0, "x", RQ_OK);	/* ignored */
	teardown();
}
END_TEST

START_TEST(scale_down_waits_for_busy_worker)
{
	struct sup_req	 a;
	unsigned	 slot;

	setup_one();
	submit(&a, "a1");
	slot = last_sent()->slot;
	sup_resize(S, +1);
	hello(1);
	sup_resize(S, -1);		/* slot 1 idle: it goes */
	sup_resize(S, -1);		/* floor: one worker */
	ck_assert_uint_eq(sup_get_conf(S)->max_workers, 1);
	chunk(slot, "a1", 0);
	done(slot, "a1", RQ_OK);
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_int_eq(F.nfail, 0);
	ck_assert_int_eq(F.nkills, 0);
	teardown();
}
END_TEST

/* ---- early answers: work after the responder ---- */

START_TEST(early_answer_keeps_worker_busy)
{
	struct sup_req	 a, b;

	setup_one();
	submit(&a, "a1");
	chunk(0, "a1", 0);
	done_bg(0, "a1", RQ_OK);
	ck_assert_int_eq(F.ndone, 1);		/* the client has its answer */
	ck_assert_ptr_eq(F.last_done, &a);
	ck_assert_uint_eq(stats().st_served, 1);
	ck_assert_uint_eq(stats().st_count[W_AFTER], 1);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 0);
	ck_assert_uint_eq(stats().st_live, 1);
	ck_assert_int_eq(F.nfreed, 0);		/* still working */
	submit(&b, "b2");			/* waits for the worker */
	ck_assert_uint_eq(stats().st_queued, 1);
	ck_assert_str_eq(last_sent()->rqid, "a1");
	heartbeat(0, "a1");			/* still its request */
	advance(3000);
	heartbeat(0, "a1");
	ck_assert_int_eq(F.nkills, 0);
	post_done(0, "a1", false, false);
	ck_assert_int_eq(F.nfreed, 1);
	ck_assert_uint_eq(stats().st_queued, 0);
	ck_assert_uint_eq(last_sent()->type, PROTO_REQ_START);
	ck_assert_str_eq(last_sent()->rqid, "b2");
	ck_assert_uint_eq(stats().st_count[W_BUSY], 1);
	done(0, "b2", RQ_OK);
	ck_assert_int_eq(F.ndone, 2);
	ck_assert_int_eq(F.nfreed, 2);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_int_eq(F.nfail, 0);
	teardown();
}
END_TEST

START_TEST(early_answer_spawns_for_the_next)
{
	struct sup_req	 a, b;

	setup_with(conf(1, 2));
	hello(0);
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	submit(&b, "b2");		/* not for the worker past its answer */
	ck_assert_int_eq(F.nspawn, 2);
	ck_assert_uint_eq(stats().st_queued, 1);
	hello(1);
	ck_assert_str_eq(last_sent()->rqid, "b2");
	ck_assert_uint_eq(last_sent()->slot, 1);
	post_done(0, "a1", false, false);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_uint_eq(stats().st_count[W_BUSY], 1);
	teardown();
}
END_TEST

START_TEST(early_answer_error_is_plain_done)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	done_bg(0, "a1", RQ_ERROR);	/* background means nothing here */
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_uint_eq(stats().st_count[W_AFTER], 0);
	ck_assert_int_eq(F.nfreed, 1);
	post_done(0, "a1", false, false);	/* then nothing is after it */
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

START_TEST(slots_held_after_the_answer)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	slot_msg(0, PROTO_SLOT_ACQUIRE, "a1");
	done_bg(0, "a1", RQ_OK);
	ck_assert_int_eq(F.nfreed, 0);
	slot_msg(0, PROTO_SLOT_RELEASE, "a1");
	slot_msg(0, PROTO_SLOT_ACQUIRE, "a1");
	ck_assert_int_eq(F.nslotframes, 3);
	ck_assert_int_eq(sup_slot_answer(S, 0, F.pid_of[0], "Fast", true), 0);
	ck_assert_uint_eq(last_sent()->type, PROTO_SLOT_GRANT);
	ck_assert_str_eq(last_sent()->rqid, "a1");
	ck_assert_int_eq(F.nkills, 0);
	post_done(0, "a1", true, false);	/* failed: logged only */
	ck_assert_int_eq(F.nfreed, 1);
	ck_assert_int_eq(F.nfail, 0);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_int_eq(sup_slot_answer(S, 0, F.pid_of[0], "Fast", true),
	    -1);
	teardown();
}
END_TEST

START_TEST(hang_after_the_answer_kills)
{
	struct sup_req	 a;
	pid_t		 pid;

	setup_one();
	pid = F.pid_of[0];
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	advance(4000);
	heartbeat(0, "a1");
	advance(4900);
	ck_assert_int_eq(F.nkills, 0);
	advance(200);
	ck_assert_int_eq(last_sig_for(pid), SIGTERM);
	ck_assert_uint_eq(stats().st_hung, 1);
	ck_assert_int_eq(F.nfail, 0);		/* nobody left to fail */
	ck_assert_int_eq(F.nfreed, 0);
	die(0, SIGTERM);
	ck_assert_int_eq(F.exits[SUP_EXIT_HANG], 1);
	ck_assert_int_eq(F.nfreed, 1);
	advance(100);
	ck_assert_int_eq(F.nspawn, 2);		/* replaced */
	teardown();
}
END_TEST

START_TEST(death_after_the_answer_fails_nothing)
{
	struct sup_req	 a, b;

	setup_one();
	submit(&a, "a1");
	chunk(0, "a1", 0);
	done_bg(0, "a1", RQ_OK);
	submit(&b, "b2");
	die(0, SIGKILL);
	ck_assert_int_eq(F.nfail, 0);
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_int_eq(F.nfreed, 1);
	ck_assert_int_eq(F.exits[SUP_EXIT_CRASH], 1);
	ck_assert_uint_eq(stats().st_queued, 1);
	advance(100);
	ck_assert_int_eq(F.nspawn, 2);
	hello(F.last_slot);
	ck_assert_str_eq(last_sent()->rqid, "b2");
	teardown();
}
END_TEST

START_TEST(violations_after_the_answer)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	chunk(0, "a1", 0);
	done_bg(0, "a1", RQ_OK);
	chunk(0, "a1", 1);		/* the answer was complete */
	ck_assert_int_eq(F.nchunks, 1);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	ck_assert_int_eq(F.nfail, 0);
	teardown();

	setup_one();
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	done(0, "a1", RQ_OK);		/* a second answer */
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();

	setup_one();
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	post_done(0, "other", false, false);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();

	setup_one();
	submit(&a, "a1");
	post_done(0, "a1", false, false);	/* never answered */
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 502);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

START_TEST(post_done_retiring)
{
	struct sup_conf	 c = conf(1, 1);
	struct sup_req	 a, b;

	c.max_requests = 1;
	setup_with(c);
	hello(0);
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	submit(&b, "b2");
	post_done(0, "a1", false, true);
	ck_assert_int_eq(F.nfreed, 1);
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 1);
	ck_assert_uint_eq(stats().st_queued, 1);	/* not for it */
	ck_assert_int_eq(F.nspawn, 2);
	die(0, 0);
	ck_assert_int_eq(F.exits[SUP_EXIT_RECYCLE], 1);
	ck_assert_uint_eq(stats().st_crashes, 0);
	hello(F.last_slot);
	ck_assert_str_eq(last_sent()->rqid, "b2");
	teardown();
}
END_TEST

START_TEST(cancel_after_the_answer_is_harmless)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	sup_cancel(S, &a);
	sup_pause(S, &a, true);
	ck_assert_int_eq(count_sent(PROTO_CANCEL), 0);
	ck_assert_int_eq(F.paused[0], 0);
	ck_assert_uint_eq(stats().st_count[W_AFTER], 1);
	post_done(0, "a1", false, false);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	ck_assert_int_eq(F.nkills, 0);
	teardown();
}
END_TEST

START_TEST(answer_crossing_cancel_goes_after)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	sup_cancel(S, &a);
	ck_assert_uint_eq(stats().st_count[W_CANCELLING], 1);
	done_bg(0, "a1", RQ_OK);	/* it answered before seeing CANCEL */
	ck_assert_int_eq(F.ndone, 0);	/* the owner had left */
	ck_assert_uint_eq(stats().st_count[W_AFTER], 1);
	advance(2500);			/* past cancel_grace: not killed */
	heartbeat(0, "a1");
	ck_assert_int_eq(F.nkills, 0);
	post_done(0, "a1", false, false);
	ck_assert_uint_eq(stats().st_count[W_IDLE], 1);
	teardown();
}
END_TEST

START_TEST(paused_answer_unpauses)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	chunk(0, "a1", 0);
	sup_pause(S, &a, true);
	ck_assert_int_eq(F.paused[0], 1);
	done_bg(0, "a1", RQ_OK);	/* read at EOF, or already in hand */
	ck_assert_int_eq(F.paused[0], 0);
	advance(5100);			/* so silence counts again */
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	teardown();
}
END_TEST

START_TEST(drain_waits_for_work_after_the_answer)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	sup_drain(S);
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 0);
	ck_assert_int_eq(F.nkills, 0);
	advance(3000);
	heartbeat(0, "a1");
	ck_assert_int_eq(F.nkills, 0);
	ck_assert_int_eq(F.stopped, 0);
	post_done(0, "a1", false, false);
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 1);
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 1);
	die(0, 0);
	ck_assert_int_eq(F.stopped, 1);
	ck_assert_int_eq(F.nfail, 0);
	teardown();
}
END_TEST

START_TEST(drain_timeout_stops_work_after_the_answer)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	done_bg(0, "a1", RQ_OK);
	sup_drain(S);
	while (F.now < 30000) {
		advance(1000);
		if (F.nkills == 0)
			heartbeat(0, "a1");
	}
	ck_assert_int_eq(F.nkills, 0);
	while (F.now < 32000) {
		advance(1000);
		if (F.nkills == 0)
			heartbeat(0, "a1");
	}
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	ck_assert_int_eq(F.nfail, 0);
	die(0, SIGTERM);
	ck_assert_int_eq(F.stopped, 1);
	ck_assert_int_eq(F.exits[SUP_EXIT_SHUTDOWN], 1);
	teardown();
}
END_TEST

START_TEST(reload_and_scale_down_wait_for_after)
{
	struct sup_conf	 c = conf(2, 2);
	struct sup_req	 a, b;
	unsigned	 sa, sb;

	setup_two();
	submit(&a, "a1");
	sa = last_sent()->slot;
	done_bg(sa, "a1", RQ_OK);
	sup_reload(S, &c);		/* the idle one leaves at once */
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 1);
	ck_assert_uint_eq(stats().st_count[W_AFTER], 1);
	ck_assert_int_eq(F.nkills, 0);
	post_done(sa, "a1", false, false);
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 2);	/* then it */
	teardown();

	setup_two();
	submit(&a, "a1");
	sa = last_sent()->slot;
	submit(&b, "b2");
	sb = last_sent()->slot;
	done_bg(sa, "a1", RQ_OK);
	sup_resize(S, -1);		/* both working: nobody goes now */
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 0);
	ck_assert_int_eq(F.nkills, 0);
	done(sb, "b2", RQ_OK);		/* the busy one stays */
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 0);
	post_done(sa, "a1", false, false);	/* the one past its answer */
	ck_assert_int_eq(count_sent(PROTO_SHUTDOWN), 1);
	ck_assert_uint_eq(last_sent()->slot, sa);
	ck_assert_int_eq(F.nfail, 0);
	teardown();
}
END_TEST

/* ---- stopping ---- */

START_TEST(drain_finishes_work_then_stops)
{
	struct sup_req	 a, b;

	unsigned	 slot;

	setup_two();
	submit(&a, "a1");
	slot = last_sent()->slot;
	sup_drain(S);
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 1);	/* the idle */
	{
		int st; const char *why;
		mkreq(&b, "b2");
		ck_assert_int_eq(sup_submit(S, &b, &st, &why), -1);
	}
	chunk(slot, "a1", 0);
	done(slot, "a1", RQ_OK);
	ck_assert_int_eq(F.ndone, 1);
	ck_assert_uint_eq(stats().st_count[W_RETIRING], 2);
	ck_assert_int_eq(F.stopped, 0);
	die(0, 0);
	die(1, 0);
	ck_assert_int_eq(F.stopped, 1);
	ck_assert_int_eq(F.nspawn, 2);
	teardown();
}
END_TEST

START_TEST(drain_timeout_terminates)
{
	struct sup_req	 a;

	setup_one();
	submit(&a, "a1");
	sup_drain(S);
	while (F.now < 40000) {
		advance(1000);
		if (F.nfail == 0)
			heartbeat(0, "a1");
	}
	ck_assert_int_eq(F.nfail, 1);
	ck_assert_int_eq(F.fail_status, 503);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGKILL);
	die(0, SIGKILL);
	ck_assert_int_eq(F.stopped, 1);
	teardown();
}
END_TEST

START_TEST(terminate_fails_queue)
{
	struct sup_req	 a, b;

	setup_one();
	submit(&a, "a1");
	submit(&b, "b2");
	sup_terminate(S);
	ck_assert_int_eq(F.nfail, 2);
	ck_assert_int_eq(last_sig_for(F.pid_of[0]), SIGTERM);
	die(0, SIGTERM);
	ck_assert_int_eq(F.stopped, 1);
	ck_assert_uint_eq(stats().st_crashes, 0);
	teardown();
}
END_TEST

START_TEST(workers_listing)
{
	struct sup_winfo wi[4];
	struct sup_req	 r;

	setup_two();
	submit(&r, "r9");
	heartbeat(1, "r9");
	ck_assert_uint_eq(sup_workers(S, wi, 4), 2);
	ck_assert_str_eq(sup_state_name(wi[1].wi_state), "busy");
	ck_assert_str_eq(wi[1].wi_rqid, "r9");
	ck_assert_str_eq(wi[1].wi_phase, "waiting");
	done_bg(1, "r9", RQ_OK);
	ck_assert_uint_eq(sup_workers(S, wi, 4), 2);
	ck_assert_str_eq(sup_state_name(wi[1].wi_state), "after");
	ck_assert_str_eq(wi[1].wi_rqid, "r9");
	ck_assert_str_eq(sup_state_name(W_CANCELLING), "cancelling");
	ck_assert_str_eq(sup_state_name(W_DEAD), "dead");
	teardown();
}
END_TEST

static Suite *
sup_suite(void)
{
	Suite	*s = suite_create("sup");
	TCase	*tc;

#define TC(name, ...) do {						\
	tc = test_case(s, name, NULL, 0);				\
	__VA_ARGS__							\
} while (0)
#define T(fn)	tcase_add_test(tc, fn);
	TC("startup", T(spawns_min_and_becomes_ready)
	    T(spawn_timeout_escalates_to_sigkill) T(hello_twice_is_a_violation));
	TC("moves", T(every_documented_move_is_allowed)
	    T(undocumented_moves_are_refused)
	    T(named_illegal_moves_change_nothing));
	TC("requests", T(dispatch_chunks_done) T(queue_then_on_demand_spawn)
	    T(queue_full_refused) T(queue_timeout_fails_503));
	TC("timeouts", T(hang_is_killed_and_request_failed)
	    T(paused_worker_is_not_hung) T(deadline_cancels_and_answers_504));
	TC("cancel", T(cancel_then_ack_reuses_worker)
	    T(cancel_without_ack_kills) T(cancelled_last_request_retires)
	    T(death_while_cancelling) T(cancel_queued_request));
	TC("deaths", T(death_before_output_retries_once)
	    T(death_after_output_fails) T(frames_after_exit_still_count)
	    T(eof_without_exit_gets_sigkill) T(exit_without_eof_closes_channel)
	    T(ignoring_sigterm_gets_sigkill));
	TC("violations", T(foreign_request_id_kills) T(out_of_sequence_kills)
	    T(wrong_direction_kills) T(malformed_frame_kills)
	    T(version_mismatch_not_respawned) T(ex_config_not_respawned)
	    T(broken_pool_serves_with_live_workers));
	TC("backoff", T(ready_is_not_inherited_from_the_slot)
	    T(backoff_doubles_and_resets) T(backoff_is_capped)
	    T(crash_loop_cannot_hop_slots) T(crash_loop_marks_degraded)
	    T(crash_loop_paces_starts)
	    T(a_worker_that_stays_up_ends_the_pacing));
	TC("sizing", T(idle_reaping_above_min) T(retire_then_clean_respawn)
	    T(retire_crossing_a_request_requeues_it)
	    T(max_requests_jitter_in_range));
	TC("slots", T(slot_frames_forwarded_and_freed));
	TC("cache", T(cache_frames_forwarded)
	    T(cache_frame_for_another_request_kills));
	TC("store", T(store_frames_forwarded));
	TC("after", T(early_answer_keeps_worker_busy)
	    T(early_answer_spawns_for_the_next)
	    T(early_answer_error_is_plain_done) T(slots_held_after_the_answer)
	    T(hang_after_the_answer_kills)
	    T(death_after_the_answer_fails_nothing)
	    T(violations_after_the_answer) T(post_done_retiring)
	    T(cancel_after_the_answer_is_harmless)
	    T(answer_crossing_cancel_goes_after) T(paused_answer_unpauses)
	    T(drain_waits_for_work_after_the_answer)
	    T(drain_timeout_stops_work_after_the_answer)
	    T(reload_and_scale_down_wait_for_after));
	TC("reload", T(reload_rolls_workers_without_failing)
	    T(reload_while_spawning) T(reload_grows_the_pool)
	    T(resize_up_and_down) T(scale_down_waits_for_busy_worker));
	TC("stopping", T(drain_finishes_work_then_stops)
	    T(drain_timeout_terminates) T(terminate_fails_queue)
	    T(workers_listing));
#undef T
#undef TC
	return s;
}

int
main(void)
{
	return check_main(sup_suite());
}
