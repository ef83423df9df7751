/* stubs_loop.c - for check_loop: a fake engine (flow_run), response-cache clear and embeddings job, driven by the request. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../../worker/engine/embed_job.h"
#include "../../worker/engine/flow.h"
#include "../../worker/llm/callcache.h"
#include "../../worker/store/store_lock.h"
#include "stubs_loop.h"

#define WAIT_MAX_MS	20000

static int	 hooked;

void
stub_loop_hook(void)
{
	hooked++;
}

static void
say(struct rq *rq, const char *s)
{
	rq_emit(rq, str_from(s), STR_NULL);
}

static void
fail(struct wresult *res)
{
	res->r_status = RQ_ERROR;
	res->r_http = 503;
	snprintf(res->r_code, sizeof(res->r_code), "backend_error");
	snprintf(res->r_message, sizeof(res->r_message), "the backend is down");
	snprintf(res->r_endpoint, sizeof(res->r_endpoint), "Fast");
	snprintf(res->r_retry_after, sizeof(res->r_retry_after), "30");
}

/* Until stopped (0) or ms passed (-1): through rq_stopped, or with
 * wake through rq_wake while sleeping on the channel. */
static int
wait_stop(struct rq *rq, uint64_t ms, bool wake)
{
	uint64_t	 end = clock_mono_ms() + ms;
	struct pollfd	 pfd;
	int		 n;

	while (clock_mono_ms() < end) {
		if (!wake) {
			if (rq_stopped(rq))
				return 0;
			(void)poll(NULL, 0, 20);
			continue;
		}
		pfd = (struct pollfd){ rq->rq_wake_fd, POLLIN, 0 };
		n = poll(&pfd, 1, 50);
		if (rq_wake(rq, n == 1) == 1)
			return 0;
	}
	return -1;
}

static void
slot(struct rq *rq, const char *ep, struct wresult *res)
{
	switch (rq_slot_take(rq, ep, 2)) {
	case RQ_SLOT_OK:
		say(rq, "granted");
		rq_slot_give(rq, ep, 2);
		break;
	case RQ_SLOT_TIMEOUT:
		say(rq, "timeout");
		break;
	case RQ_SLOT_STOPPED:
		say(rq, "stopped");
		res->r_status = RQ_CANCELLED;
		break;
	}
}

static void
store(struct rq *rq, const char *arg, struct wresult *res)
{
	char		 err[STORE_ERRLEN], *s;
	struct store	*st = rq_store(rq, err);

	if (st == NULL) {
		s = xasprintf("no store: %s", err);
		say(rq, s);
		free(s);
		return;
	}
	say(rq, rq_store(rq, err) == st ? "same" : "other");
	s = xasprintf(" lock %d", store_lock(st, "wf-lock", rq->rq_id, 600));
	say(rq, s);
	free(s);
	if (strcmp(arg, "hold") == 0 && wait_stop(rq, WAIT_MAX_MS, false) == 0)
		res->r_status = RQ_CANCELLED;
}

static void
early(struct rq *rq, const char *arg, struct wresult *res)
{
	say(rq, "answer");
	rq_answer(rq, res);
	say(rq, "dropped");
	rq_emit_tools(rq, str_from("[{\"index\":0}]"));
	if (strcmp(arg, "fail") == 0)
		fail(res);
	else
		(void)wait_stop(rq, strtoull(arg, NULL, 10), false);
}

/* Text, 300 ms of work that never looks at the gateway, more text;
 * with "wait", text then a wait for the CANCEL. */
static void
gather(struct rq *rq, const char *arg, struct wresult *res)
{
	uint64_t	 end;

	say(rq, "a");
	if (strcmp(arg, "wait") == 0) {
		if (wait_stop(rq, WAIT_MAX_MS, false) == 0)
			res->r_status = RQ_CANCELLED;
		return;
	}
	end = clock_mono_ms() + 300;
	while (clock_mono_ms() < end)
		;
	say(rq, "b");
}

static void
deltas(struct rq *rq)
{
	rq_emit(rq, STR_NULL, str_from("hmm"));
	rq_emit_tools(rq, str_from("[{\"index\":0}]"));
	rq_emit_tools(rq, STR_NULL);
	rq_emit(rq, STR_NULL, STR_NULL);
	say(rq, "done");
}

static void
send_cache(struct rq *rq)
{
	struct proto_msg	 m;

	proto_msg_init(&m, PROTO_CACHE, rq->rq_id);
	m.m_u.cache = (struct proto_cache){ true, true, 7 };
	rq_send(rq, &m);
}

/* The scripts that only say something. */
static bool
simple(struct rq *rq, const char *script, const char *arg,
    const struct proto_req_start *rs, const char *default_user)
{
	char	*s;

	if (strcmp(script, "echo") == 0)
		s = xasprintf("%.*s|%s|%s", (int)rs->user.n,
		    rs->user.p != NULL ? rs->user.p : "", default_user, arg);
	else if (strcmp(script, "hooked") == 0)
		s = xasprintf("%d", hooked);
	else if (strcmp(script, "phase") == 0) {
		rq_phase(rq, "node 1/2: %s", arg);
		s = xstrdup("ok");
	} else
		return false;
	say(rq, s);
	free(s);
	return true;
}

void
flow_run(struct rq *rq, const struct proto_req_start *rs,
    const char *default_user, struct wresult *res)
{
	char	*script = str_dup(rs->model);
	char	*arg = rs->nmsgs > 0 ?
		    str_dup(rs->msgs[rs->nmsgs - 1].content) : xstrdup("");

	res->r_prompt_tokens = 3;
	res->r_completion_tokens = 4;
	snprintf(res->r_finish, sizeof(res->r_finish), "stop");
	if (simple(rq, script, arg, rs, default_user))
		;
	else if (strcmp(script, "fail") == 0)
		fail(res);
	else if (strcmp(script, "wait") == 0 || strcmp(script, "wake") == 0) {
		if (wait_stop(rq, WAIT_MAX_MS,
		    strcmp(script, "wake") == 0) == 0)
			res->r_status = RQ_CANCELLED;
	} else if (strcmp(script, "wait_answer") == 0) {
		(void)wait_stop(rq, WAIT_MAX_MS, false);
		rq_answer(rq, res);
	} else if (strcmp(script, "deltas") == 0)
		deltas(rq);
	else if (strcmp(script, "gather") == 0)
		gather(rq, arg, res);
	else if (strcmp(script, "send") == 0)
		send_cache(rq);
	else if (strcmp(script, "early") == 0)
		early(rq, arg, res);
	else if (strcmp(script, "slot") == 0)
		slot(rq, arg, res);
	else if (strcmp(script, "store") == 0)
		store(rq, arg, res);
	else
		fail(res);
	free(script);
	free(arg);
}

void
callcache_clear_request(struct rq *rq, struct wresult *res)
{
	say(rq, "cleared");
}

void
embed_job_run(struct rq *rq, const struct proto_req_start *rs,
    const char *default_user, struct wresult *res)
{
	say(rq, "embedded");
}
