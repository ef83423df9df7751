/* check_cluster.c - two gateway nodes on one PostgreSQL store behind HAProxy, each on a host of its own (network namespaces): shared memory, cancellation across nodes, a node killed, the database restarted. */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../unit/pgtmp.h"
#include "dbq.h"
#include "front.h"
#include "harness.h"
#include "netlab.h"

/*
 * The hosts (tests/it/netlab.c): the test's own (the mock and HAProxy),
 * "db" (PostgreSQL on TCP), "a" and "b" (a gateway each, with its
 * workers). Each node has its own config folder and state folder, as
 * two machines would, and names the other in "peers". The mock paces
 * every stream: the first word after 200 ms, then one every 100 ms, 30
 * words (about 3.1 s). Figures go to stderr on lines starting
 * "cluster: " (docs/scaling.md has them).
 */
#define PACE		"200,30,100"
#define NWORKERS	24	/* per node: every stream gets a worker,
				   however HAProxy spreads them */
#define NKILL		32	/* streams during the kill */
#define KILL_AT_MS	1000	/* into those streams, at the earliest */
#define DOWN_BOUND_MS	3000	/* deploy/haproxy.cfg: out within 1.5 s */
#define LOCK_BOUND_MS	5000	/* docs/scaling.md: a killed holder's
				   lock is free at once */
#define QUICK_MOCK	"#mock {\"first_ms\":0,\"delay_ms\":0}"
/* the paced words 200 ms apart: some 6 s, time to start 32 streams on
 * a busy machine and kill a node amid them */
#define SLOW_MOCK	"hi\n#mock {\"delay_ms\":200}"

static struct netlab	 L;
static struct pgtmp	 PG;
static struct it	 N[2];		/* nodes A and B */
static struct it	 F;		/* it_port: HAProxy's front */
static pid_t		 MOCK, HAP;
static int		 PORT;		/* each node's port */

/* ---- the cluster ---------------------------------------------------- */

/* The mock on the test's host, where both nodes reach it; the test
 * reaches it on 127.0.0.1 too (it_mock_stat). */
static void
mock_start(void)
{
	static char	 listen[32];
	const char	*args[] = { "--listen", listen, "--quiet", "--text",
			    "one two three", "--pace", PACE, NULL };

	snprintf(listen, sizeof(listen), "%s:0", L.nl_ns ? "0.0.0.0" :
	    L.nl_addr[NL_HOST]);
	putenv((char *)(uintptr_t)netlab_mark(&L, NL_HOST));
	MOCK = it_double_start("mock-llm", args, &F.it_mock_port);
	unsetenv("SLUICE_NETLAB");
}

/* PostgreSQL on the database host's address; its database's URL into
 * url. */
static void
db_start(char *url, size_t len)
{
	int	 rc;

	netlab_enter(&L, NL_DB);
	rc = pgtmp_start_on(&PG, "check_cluster", L.nl_addr[NL_DB]);
	netlab_enter(&L, NL_HOST);
	ck_assert_msg(rc == 0, "PostgreSQL did not start (see above)");
	ck_assert_int_eq(pgtmp_newdb(&PG, url, len), 0);
}

/* Shared workflows every node has, chosen by the model field. */
static void
node_workflows(struct it *t)
{
	it_allow_shared(t);
	/* a workflow lock per discussion, then the streamed answer */
	it_file(t, "Workflows/_shared/locked/_DefaultWorkflow.json",
	    "{\"nodes\": [{\"type\": \"WorkflowLock\", \"workflowLockId\":"
	    " \"L-{Discussion_Id}\"}, {\"type\": \"Standard\","
	    " \"endpointName\": \"Mock\", \"preset\": \"Mock\","
	    " \"prompt\": \"\","
	    " \"lastMessagesToSendInsteadOfPrompt\": 5,"
	    " \"maxResponseSizeInTokens\": 300}]}\n");
	/* the answer, then memories; and a reader of them */
	it_file(t, "Workflows/_shared/memwrite/_DefaultWorkflow.json",
	    "{\"nodes\": [{\"type\": \"StaticResponse\", \"content\": \"ok\","
	    " \"returnToUser\": true}, {\"type\": \"QualityMemory\"}]}\n");
	it_file(t, "Workflows/_shared/memread/_DefaultWorkflow.json",
	    "{\"nodes\": [{\"type\": \"GetCurrentMemoryFromFile\","
	    " \"customDelimiter\": \" / \"}, {\"type\": \"StaticResponse\","
	    " \"content\": \"[{agent1Output}]\"}]}\n");
	it_file(t, "Workflows/it/MemSettings.json", "{\"endpointName\":"
	    " \"Mock\", \"preset\": \"Mock\", \"maxResponseSizeInTokens\": 100,"
	    " \"systemPrompt\": \"\", \"prompt\": \"Summarise [TextChunk]\\n"
	    "#mock {\\\"echo\\\": true}\", \"chunkEstimatedTokenSize\": 10,"
	    " \"maxMessagesBetweenChunks\": 2, \"lookbackStartTurn\": 2}\n");
	it_user_set(t, "discussionIdMemoryFileWorkflowSettings",
	    json_string("MemSettings"));
}

/* Node i's folder: the store, the other node as its peer, its own
 * address; limit: the Mock endpoint's maxConcurrentRequests (0:
 * none). */
static void
node_config(int i, const char *store, int limit)
{
	struct it	*t = &N[i];
	char		 s[1400], murl[64], ep[400];

	memset(t, 0, sizeof(*t));
	snprintf(murl, sizeof(murl), "http://%s:%d", L.nl_addr[NL_HOST],
	    F.it_mock_port);
	snprintf(s, sizeof(s), "\"min_workers\": %d, \"max_workers\": %d, "
	    "\"store\": {\"url\": \"%s\"}, \"peers\": [\"http://%s:%d\"], "
	    "\"allow_unauthenticated_remote\": true", NWORKERS, NWORKERS,
	    store, L.nl_addr[NL_A + !i], PORT);
	it_config(t, s, murl);
	if (limit > 0) {
		snprintf(ep, sizeof(ep), "{\"endpoint\": \"%s\","
		    " \"apiTypeConfigFileName\": \"Open-AI-API\","
		    " \"modelNameToSendToAPI\": \"mock-model\","
		    " \"promptTemplate\": null, \"maxContextTokenSize\": 4096,"
		    " \"maxConcurrentRequests\": %d}\n", murl, limit);
		it_file(t, "Endpoints/it/Mock.json", ep);
	}
	netlab_own(&L, t->it_dir);
	snprintf(t->it_store, sizeof(t->it_store), "%s", store);
	snprintf(t->it_listen, sizeof(t->it_listen), "%s:%d",
	    L.nl_addr[NL_A + i], PORT);
	snprintf(t->it_host, sizeof(t->it_host), "%s", L.nl_addr[NL_A + i]);
	t->it_mock_port = F.it_mock_port;
	node_workflows(t);
}

/* Node i's gateway, started from its host. */
static void
node_start(int i)
{
	char	 env[64];

	snprintf(env, sizeof(env), "%s", netlab_mark(&L, NL_A + i));
	netlab_enter(&L, NL_A + i);
	it_gateway_start(&N[i], env);
	netlab_enter(&L, NL_HOST);
}

/* HAProxy on the test's host, in front of both nodes. */
static void
haproxy_start(void)
{
	char	 a[32], b[32], hlog[300];

	snprintf(a, sizeof(a), "%s:%d", L.nl_addr[NL_A], PORT);
	snprintf(b, sizeof(b), "%s:%d", L.nl_addr[NL_B], PORT);
	snprintf(hlog, sizeof(hlog), "%s/haproxy.log", L.nl_dir);
	HAP = front_start(&F, a, b, hlog, netlab_mark(&L, NL_HOST));
}

/* The whole cluster; limit as node_config's. */
static void
cluster_up(int limit)
{
	char	 store[512];
	int	 i;

	memset(&F, 0, sizeof(F));
	MOCK = HAP = 0;
	netlab_up(&L);
	mock_start();
	db_start(store, sizeof(store));
	PORT = it_dead_port();
	for (i = 0; i < 2; i++)
		node_config(i, store, limit);
	for (i = 0; i < 2; i++)
		node_start(i);
	haproxy_start();
	for (i = 0; i < 2; i++)
		it_wait_idle(&N[i], NWORKERS);
}

static void
setup(void)
{
	cluster_up(0);
}

static void
setup_limit(void)
{
	cluster_up(1);
}

/* Everything goes, in an order where nothing waits for what is gone. */
static void
teardown(void)
{
	int	 st, i;

	if (HAP > 0) {
		kill(HAP, SIGTERM);
		waitpid(HAP, &st, 0);
	}
	/* a clean exit: 0 (an ASan build reports leaks through it); a
	 * node the test killed has it_gw 0 */
	for (i = 0; i < 2; i++)
		it_stop_clean(&N[i]);
	if (MOCK > 0) {
		kill(MOCK, SIGTERM);
		waitpid(MOCK, &st, 0);
	}
	netlab_enter(&L, NL_DB);
	pgtmp_stop(&PG);
	netlab_enter(&L, NL_HOST);
	netlab_down(&L);
}

/* ---- requests -------------------------------------------------------- */

/* A chat body for model: the discussion's id in the system message
 * (when not NULL), then n messages, user and assistant by turns, the
 * last user's being last (or "Msg k ..." when last is NULL). Caller
 * frees. */
static char *
chat_body(const char *model, const char *disc, int n, const char *last,
    bool stream)
{
	json_t	*msgs = json_array(), *b;
	char	 sys[96], text[64], *out;
	int	 k;

	if (disc != NULL) {
		snprintf(sys, sizeof(sys), "[DiscussionId]%s[/DiscussionId]",
		    disc);
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    "system", "content", sys));
	}
	for (k = 1; k <= n; k++) {
		snprintf(text, sizeof(text), "Msg %d alpha beta gamma delta "
		    "epsilon zeta", k);
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    k % 2 ? "user" : "assistant", "content", k == n &&
		    last != NULL ? last : text));
	}
	b = json_pack("{s:s,s:b,s:o}", "model", model, "stream", stream,
	    "messages", msgs);
	out = json_dumps(b, 0);
	json_decref(b);
	return out;
}

/* The answer's text of a whole OpenAI chat response, or NULL. */
static char *
answer_of(const struct it_resp *r)
{
	json_t		*j = json_loads(r->r_body.b_data, 0, NULL);
	const char	*c;
	char		*out = NULL;

	c = json_string_value(json_object_get(json_object_get(json_array_get(
	    json_object_get(j, "choices"), 0), "message"), "content"));
	if (c != NULL)
		out = strdup(c);
	json_decref(j);
	return out;
}

/* One whole chat to t (a node, or the front); its status; the answer
 * in *text (NULL unless 200; caller frees) and the request id in id. */
static long
ask(struct it *t, const char *body, char **text, char *id, size_t idlen)
{
	struct it_resp	 r;
	long		 st;

	*text = NULL;
	id[0] = '\0';
	if (it_request(t, "POST", "/v1/chat/completions", body, &r) == -1) {
		it_resp_free(&r);
		return -1;
	}
	st = r.r_status;
	if (st == 200)
		*text = answer_of(&r);
	else
		*text = strdup(r.r_body.b_data);
	if (it_header(&r, "X-Request-Id", id, idlen) == NULL)
		id[0] = '\0';
	it_resp_free(&r);
	return st;
}

/* Which node's log names request id: 0 (A), 1 (B), or -1 after 2 s. */
static int
served_by(const char *id)
{
	uint64_t	 end = it_now() + 2000;
	char		 needle[96], *text;
	int		 i, hit = -1;

	snprintf(needle, sizeof(needle), "[rq %s]", id);
	while (hit == -1 && it_now() < end) {
		for (i = 0; i < 2 && hit == -1; i++) {
			text = it_file_text(N[i].it_log);
			if (strstr(text, needle) != NULL)
				hit = i;
			free(text);
		}
		if (hit == -1)
			it_sleep(20);
	}
	return hit;
}

/* Whether a stream came whole: 200, [DONE], no error, the paced text. */
static bool
stream_whole(const struct it_stream *s)
{
	struct sse_summary	 ss;
	bool			 ok;

	if (!s->s_finished || s->s_status != 200)
		return false;
	it_sse_parse(s->s_out.b_data, &ss);
	ok = ss.ss_done && !ss.ss_error && ss.ss_text != NULL &&
	    strcmp(ss.ss_text, front_paced_text()) == 0;
	free(ss.ss_text);
	return ok;
}

/* Whether HAProxy's log says needle. */
static bool
hlog_has(const char *needle)
{
	char	 path[300];

	snprintf(path, sizeof(path), "%s/haproxy.log", L.nl_dir);
	return front_log_has(path, needle);
}

/* Which node runs request id now (its /admin/workers): 0 (A), 1 (B),
 * or -1 when neither does within 2 s. */
static int
runs_on(const char *id)
{
	uint64_t	 end = it_now() + 2000;
	json_t		*j, *w;
	size_t		 k;
	int		 i, hit = -1;

	while (hit == -1 && it_now() < end) {
		for (i = 0; i < 2 && hit == -1; i++) {
			j = it_get_json(&N[i], "/admin/workers");
			json_array_foreach(json_object_get(j, "workers"), k, w)
				if (json_is_string(json_object_get(w,
				    "request_id")) && strcmp(id,
				    json_string_value(json_object_get(w,
				    "request_id"))) == 0)
					hit = i;
			json_decref(j);
		}
		if (hit == -1)
			it_sleep(20);
	}
	return hit;
}

/* ---- memory --------------------------------------------------------- */

/* Memories a node writes (QualityMemory after the answer) are in the
 * shared database, and the other node reads them (GetCurrent-
 * MemoryFromFile): the conversation may move between machines. */
START_TEST(memory_crosses_nodes)
{
	char	*body, *text, id[64];
	long	 st;

	body = chat_body("memwrite", "r", 7, NULL, false);
	st = ask(&N[0], body, &text, id, sizeof(id));
	ck_assert_msg(st == 200, "A: %ld %s", st, text);
	free(text);
	free(body);
	ck_assert_msg(it_db_wait(&N[0], "SELECT count(*) FROM memories WHERE "
	    "discussion = 'r'", 5, it_slow(15000)), "A wrote no memories");
	body = chat_body("memread", "r", 7, NULL, false);
	st = ask(&N[1], body, &text, id, sizeof(id));
	ck_assert_msg(st == 200, "B: %ld %s", st, text);
	ck_assert_int_eq(served_by(id), 1);
	ck_assert_str_eq(text, "[Summarise Msg 1 alpha beta gamma delta "
	    "epsilon zeta / Summarise Msg 2 alpha beta gamma delta epsilon "
	    "zeta / Summarise Msg 3 alpha beta gamma delta epsilon zeta / "
	    "Summarise Msg 4 alpha beta gamma delta epsilon zeta / Summarise "
	    "Msg 5 alpha beta gamma delta epsilon zeta]");
	free(text);
	free(body);
}
END_TEST

/* ---- cancellation ---------------------------------------------------- */

struct xcancel {
	int	 x_sent;
	long	 x_status[2];	/* of the DELETE for each stream */
	int	 x_on[2];	/* streams by node */
};

/* Once both streams have their head, DELETE each at the node that
 * does NOT run it: its peer must pass the DELETE on. */
static void
xcancel_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct xcancel	*x = arg;
	char		 id[64];
	size_t		 i;
	int		 g;

	if (x->x_sent > 0 || !front_streams_headed(s, n))
		return;
	for (i = 0; i < n; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		ck_assert_int_ge(g = runs_on(id), 0);
		x->x_on[g]++;
		x->x_status[i] = front_delete(&N[!g], id);
		x->x_sent++;
	}
}

#define FOREVER	"{\"model\":\"x\",\"stream\":true,\"messages\":[{\"role\":" \
		"\"user\",\"content\":\"#mock {\\\"forever\\\":true," \
		"\\\"first_ms\\\":0,\\\"delay_ms\\\":100}\"}]}"

/* A DELETE sent to node B cancels a stream running on node A, and one
 * sent to A cancels B's ("peers"). */
START_TEST(delete_crosses_nodes)
{
	struct it_stream	 s[2];
	struct buf		 hd[2];
	struct xcancel		 x;
	uint64_t		 t0;
	size_t			 i;

	memset(&x, 0, sizeof(x));
	front_streams_init(s, hd, 2, NULL, FOREVER);
	t0 = it_now();
	it_streams(&F, s, 2, 10000, xcancel_tick, &x);
	ck_assert_int_eq(x.x_sent, 2);
	ck_assert_msg(x.x_on[0] == 1 && x.x_on[1] == 1, "streams: %d on A, "
	    "%d on B", x.x_on[0], x.x_on[1]);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(x.x_status[i], 200);
		ck_assert_msg(s[i].s_finished && strstr(s[i].s_out.b_data,
		    "cancelled by DELETE") != NULL, "stream %zu: %s", i,
		    s[i].s_out.b_data);
	}
	fprintf(stderr, "cluster: DELETE through the other node: both "
	    "streams cancelled, %llu ms from their start\n",
	    (unsigned long long)(it_now() - t0));
	front_streams_free(s, hd, 2);
}
END_TEST

/* ---- a node killed ---------------------------------------------------- */

struct killrun {
	uint64_t	 k_t0;
	uint64_t	 k_kill_ms;	/* into the streams; 0 before */
	uint64_t	 k_next_ms;	/* the next probe's time */
	size_t		 k_killed;	/* processes of A killed */
	long long	 k_locks;	/* lock rows at the kill */
	json_t		*k_on_a;	/* request ids A ran at the kill */
	int		 k_lockdisc;	/* stream whose lock is probed, -1 */
	long		 k_lock_ms;	/* its lock free after the kill, -1 */
	int		 k_lock_tries;	/* probes of it until then */
	long		 k_down_ms;	/* A DOWN in HAProxy, -1 */
	int		 k_probes, k_bad, k_on_b;
};

/* The request ids A runs now, from its /admin/workers. */
static json_t *
ids_on_a(void)
{
	json_t		*j = it_get_json(&N[0], "/admin/workers"), *w, *ids;
	const char	*rq;
	size_t		 i;

	ids = json_object();
	json_array_foreach(json_object_get(j, "workers"), i, w) {
		rq = json_string_value(json_object_get(w, "request_id"));
		if (rq != NULL && *rq != '\0')
			json_object_set_new(ids, rq, json_true());
	}
	json_decref(j);
	return ids;
}

/* kill -9 of every process of node A at once (the gateway, its
 * workers): all that netlab finds with A's mark. */
static size_t
kill_node_a(void)
{
	pid_t	 pids[64];
	size_t	 n = netlab_pids(&L, NL_A, pids, 64), i;

	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	return n;
}

/* Whether B takes the workflow lock of stream k's discussion now: a
 * "locked" request for it is answered in full (a held lock would end
 * the workflow before the answer: empty). */
static bool
lock_free(int k)
{
	char	 disc[16], *body, *text, id[64];
	bool	 ok;
	long	 st;

	snprintf(disc, sizeof(disc), "k%d", k);
	body = chat_body("locked", disc, 1, QUICK_MOCK, false);
	st = ask(&N[1], body, &text, id, sizeof(id));
	ok = st == 200 && text != NULL && strcmp(text, front_paced_text()) == 0;
	free(text);
	free(body);
	return ok;
}

/* The index of a stream A runs (its id in on_a), or -1. */
static int
a_stream(struct it_stream *s, size_t n, json_t *on_a)
{
	char	 id[64];
	size_t	 i;

	for (i = 0; i < n; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		if (json_object_get(on_a, id) != NULL)
			return (int)i;
	}
	return -1;
}

/* At KILL_AT_MS: what A runs and the locks held, then kill -9 of A.
 * After: probe one of A's locks through B until it is free, and send a
 * whole chat through the front every 150 ms. */
static void
kill_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct killrun	*k = arg;
	uint64_t	 ms = it_now() - k->k_t0;
	char		*body, *text, id[64];

	if (k->k_kill_ms == 0) {
		if (ms < KILL_AT_MS)
			return;
		/* every stream holds its lock (a busy machine takes them
		 * late), or it is time */
		k->k_locks = it_db_int(&N[1], "SELECT count(*) FROM "
		    "workflow_locks");
		if (k->k_locks < NKILL && ms < KILL_AT_MS + 3000)
			return;
		k->k_on_a = ids_on_a();
		k->k_kill_ms = it_now() - k->k_t0;
		k->k_killed = kill_node_a();
		k->k_lockdisc = a_stream(s, n, k->k_on_a);
		return;
	}
	if (k->k_down_ms == -1 && hlog_has("gateways/a is DOWN"))
		k->k_down_ms = (long)(ms - k->k_kill_ms);
	if (k->k_lock_ms == -1 && k->k_lockdisc >= 0 && ++k->k_lock_tries &&
	    lock_free(k->k_lockdisc))
		k->k_lock_ms = (long)(it_now() - k->k_t0 - k->k_kill_ms);
	if (ms < k->k_next_ms || ms > k->k_kill_ms + 2500)
		return;
	k->k_next_ms = ms + 150;
	body = chat_body("x", NULL, 1, QUICK_MOCK, false);
	k->k_probes++;
	if (ask(&F, body, &text, id, sizeof(id)) != 200 || text == NULL ||
	    strcmp(text, front_paced_text()) != 0)
		k->k_bad++;
	else if (served_by(id) == 1)
		k->k_on_b++;
	free(text);
	free(body);
}

/* Stream i (on A) was cut: no [DONE], ended soon after the kill. */
static void
expect_cut(const struct killrun *k, const struct it_stream *s, int *events,
    long *end_ms)
{
	struct sse_summary	 ss;

	it_sse_parse(s->s_out.b_data, &ss);
	ck_assert_msg(!ss.ss_done, "a stream of A ended with [DONE]");
	ck_assert_msg(!s->s_finished || s->s_status != 200 || ss.ss_error,
	    "a stream of A ended as if whole: %s", s->s_out.b_data);
	*events = ss.ss_chunks;
	*end_ms = (long)s->s_end_ms - (long)k->k_kill_ms;
	free(ss.ss_text);
}

/* Every stream: A's cut cleanly and at once, B's whole. */
static void
kill_streams_expect(struct killrun *k, struct it_stream *s, size_t n)
{
	char	 id[64];
	size_t	 i;
	int	 on_a = 0, ev, ev_max = 0;
	long	 end, end_max = 0;

	for (i = 0; i < n; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		if (json_object_get(k->k_on_a, id) == NULL) {
			ck_assert_msg(stream_whole(&s[i]), "B's stream %zu: "
			    "%s", i, s[i].s_out.b_data);
			continue;
		}
		expect_cut(k, &s[i], &ev, &end);
		on_a++;
		ev_max = ev > ev_max ? ev : ev_max;
		end_max = end > end_max ? end : end_max;
	}
	fprintf(stderr, "cluster: kill -9 of node A (%zu processes) %llu ms "
	    "into %zu streams: %d of them on A, cut after at most %d events, "
	    "the last %ld ms after the kill; %zu on B came whole\n",
	    k->k_killed, (unsigned long long)k->k_kill_ms, n, on_a, ev_max,
	    end_max, n - (size_t)on_a);
	ck_assert_msg(on_a >= 8 && (size_t)on_a <= n - 8, "%d of %zu streams "
	    "on A", on_a, n);
	ck_assert_msg(end_max < 2000, "a stream of A ended %ld ms after the "
	    "kill", end_max);
}

/* After the streams, every lock A held is free: B takes each. */
static void
kill_locks_expect(struct killrun *k, struct it_stream *s, size_t n)
{
	char	 id[64];
	size_t	 i;

	for (i = 0; i < n; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		if (json_object_get(k->k_on_a, id) != NULL)
			ck_assert_msg(lock_free((int)i), "the lock of A's "
			    "stream %zu is still held", i);
	}
}

/* kill -9 of every process of node A during 32 streams through the
 * front (workflow "locked": each holds its discussion's lock): A's
 * streams end at once without [DONE], B's come whole, HAProxy sends
 * every new request to B, and A's locks are free for B at once. */
START_TEST(node_killed)
{
	struct it_stream	 s[NKILL];
	struct buf		 hd[NKILL];
	struct killrun		 k;
	char			*bodies[NKILL], disc[16];
	uint64_t		 end;
	size_t			 i;

	for (i = 0; i < NKILL; i++) {
		snprintf(disc, sizeof(disc), "k%zu", i);
		bodies[i] = chat_body("locked", disc, 1, SLOW_MOCK, true);
	}
	memset(&k, 0, sizeof(k));
	k.k_lockdisc = -1;
	k.k_lock_ms = k.k_down_ms = -1;
	front_streams_init(s, hd, NKILL, bodies, NULL);
	k.k_t0 = it_now();
	it_streams(&F, s, NKILL, 20000, kill_tick, &k);
	end = it_now() + DOWN_BOUND_MS;
	while (k.k_down_ms == -1 && it_now() < end) {
		if (hlog_has("gateways/a is DOWN"))
			k.k_down_ms = (long)(it_now() - k.k_t0 - k.k_kill_ms);
		it_sleep(10);
	}
	waitpid(N[0].it_gw, NULL, 0);
	N[0].it_gw = 0;
	kill_streams_expect(&k, s, NKILL);
	fprintf(stderr, "cluster: kill -9: %lld workflow locks held at the "
	    "kill; one of A's taken by B %ld ms after it (try %d, its answer "
	    "included); A DOWN in HAProxy after %ld ms; %d requests through "
	    "the front after it, %d failed, %d answered by B\n", k.k_locks,
	    k.k_lock_ms, k.k_lock_tries, k.k_down_ms,
	    k.k_probes, k.k_bad, k.k_on_b);
	ck_assert_int_eq(k.k_locks, NKILL);
	ck_assert_msg(k.k_lock_ms >= 0 && k.k_lock_ms <= LOCK_BOUND_MS,
	    "A's lock free after %ld ms", k.k_lock_ms);
	ck_assert_msg(k.k_down_ms >= 0 && k.k_down_ms <= DOWN_BOUND_MS,
	    "A DOWN after %ld ms", k.k_down_ms);
	ck_assert_int_ge(k.k_probes, 5);
	ck_assert_int_eq(k.k_bad, 0);
	ck_assert_int_eq(k.k_on_b, k.k_probes);
	kill_locks_expect(&k, s, NKILL);
	json_decref(k.k_on_a);
	front_streams_free(s, hd, NKILL);
	for (i = 0; i < NKILL; i++)
		free(bodies[i]);
}
END_TEST

/* ---- a node vanished from the network ----------------------------------- */

/* docs/scaling.md: the server ends a silent session after 5 s without
 * traffic and 5 keepalive probes 1 s apart ("within about 10 s"); the
 * test allows more for a busy machine. */
#define CUT_BOUND_MS	15000
#define NCUT		4	/* streams: some on each node */
/* deploy/haproxy.cfg: a check of a host that does not answer at all
 * fails after "timeout check 2s", not at once as a refused one; two
 * such (fall 2, fastinter 500ms) take about 3 s. */
#define CUT_DOWN_MS	6000

struct cutrun {
	uint64_t	 c_t0;
	uint64_t	 c_cut_ms;	/* into the streams; 0 before */
	uint64_t	 c_next_ms;
	json_t		*c_on_a;
	int		 c_a;		/* the stream on A, -1 */
	long		 c_lock_ms;	/* its lock free after the cut, -1 */
	int		 c_tries;
	long		 c_down_ms;	/* A DOWN in HAProxy, -1 */
};

/* Once every stream holds its lock, cut A's cable; then ask B for A's
 * lock every 250 ms until it has it. */
static void
cut_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct cutrun	*c = arg;
	uint64_t	 ms = it_now() - c->c_t0;

	if (c->c_cut_ms == 0) {
		/* every stream has its head (its id) and its lock */
		if (ms < 500 || !front_streams_headed(s, n) || it_db_int(&N[1],
		    "SELECT count(*) FROM workflow_locks") < (long long)n)
			return;
		c->c_on_a = ids_on_a();
		ck_assert_int_eq(netlab_cable(&L, NL_A, false), 0);
		c->c_cut_ms = it_now() - c->c_t0;
		c->c_a = a_stream(s, n, c->c_on_a);
		return;
	}
	if (c->c_down_ms == -1 && hlog_has("gateways/a is DOWN"))
		c->c_down_ms = (long)(ms - c->c_cut_ms);
	if (c->c_lock_ms != -1 || c->c_a < 0 || ms < c->c_next_ms)
		return;
	c->c_next_ms = ms + 250;
	c->c_tries++;
	if (lock_free(c->c_a))
		c->c_lock_ms = (long)(it_now() - c->c_t0 - c->c_cut_ms);
}

/* Node A's machine vanishes (its cable cut, its processes alive) while
 * it streams and holds a workflow lock: B's stream comes whole, HAProxy
 * takes A out, and the database ends A's session within the keepalive
 * bound, so B takes A's lock. What A's client sees is reported. */
START_TEST(node_unplugged)
{
	struct it_stream	 s[NCUT];
	struct buf		 hd[NCUT];
	struct cutrun		 c;
	char			*bodies[NCUT], disc[16], id[64];
	size_t			 i;

	if (!L.nl_ns) {
		fprintf(stderr, "*** check_cluster: case \"unplug\" NOT RUN: "
		    "on loopback there is no cable to cut\n");
		return;
	}
	for (i = 0; i < NCUT; i++) {
		snprintf(disc, sizeof(disc), "k%zu", i);
		bodies[i] = chat_body("locked", disc, 1, "hi", true);
	}
	memset(&c, 0, sizeof(c));
	c.c_a = -1;
	c.c_lock_ms = c.c_down_ms = -1;
	front_streams_init(s, hd, NCUT, bodies, NULL);
	c.c_t0 = it_now();
	it_streams(&F, s, NCUT, CUT_BOUND_MS + 2000, cut_tick, &c);
	ck_assert_msg(c.c_a >= 0, "no stream ran on A at the cut");
	for (i = 0; i < NCUT; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		if (json_object_get(c.c_on_a, id) == NULL)
			ck_assert_msg(stream_whole(&s[i]), "B's stream: %s",
			    s[i].s_out.b_data);
	}
	fprintf(stderr, "cluster: A's cable cut %llu ms into %d streams: "
	    "A DOWN in HAProxy after %ld ms; A's lock taken by B %ld ms "
	    "after the cut (try %d, 250 ms apart); A's stream: %s after "
	    "%llu ms, %zu bytes\n", (unsigned long long)c.c_cut_ms, NCUT,
	    c.c_down_ms, c.c_lock_ms, c.c_tries, s[c.c_a].s_finished ?
	    "ended" : "still open", (unsigned long long)(it_now() - c.c_t0),
	    s[c.c_a].s_out.b_len);
	ck_assert_msg(c.c_down_ms >= 0 && c.c_down_ms <= CUT_DOWN_MS,
	    "A DOWN after %ld ms", c.c_down_ms);
	ck_assert_msg(c.c_lock_ms >= 0 && c.c_lock_ms <= CUT_BOUND_MS,
	    "A's lock free after %ld ms", c.c_lock_ms);
	/* the cable back first: else A's sockets, orphaned by the kill,
	 * retransmit into the void and keep its namespace for minutes */
	ck_assert_int_eq(netlab_cable(&L, NL_A, true), 0);
	kill_node_a();
	waitpid(N[0].it_gw, NULL, 0);
	N[0].it_gw = 0;
	json_decref(c.c_on_a);
	front_streams_free(s, hd, NCUT);
	for (i = 0; i < NCUT; i++)
		free(bodies[i]);
}
END_TEST

/* ---- the database restarted -------------------------------------------- */

#define DB_DOWN_AT_MS	500	/* into the streams */
#define DB_UP_AT_MS	2300

struct dbrun {
	uint64_t	 d_t0;
	uint64_t	 d_down_ms, d_up_ms;	/* into the streams; 0 before */
	uint64_t	 d_next_ms;
	int		 d_locked, d_locked_bad;	/* "locked" during it,
						   and of them not 500 */
	long		 d_locked_max_ms;	/* the slowest answer */
	int		 d_plain, d_plain_bad;	/* the plain workflow */
	char		 d_error[512];		/* a 500's body */
	char		 d_health[2][512];	/* each node's /health */
};

/* The database host's server stops (as a crash) or starts again. */
static void
db_switch(bool up)
{
	int	 rc;

	netlab_enter(&L, NL_DB);
	rc = up ? pgtmp_resume(&PG) : pgtmp_pause(&PG);
	netlab_enter(&L, NL_HOST);
	ck_assert_msg(rc == 0, "PostgreSQL did not %s", up ? "start" :
	    "stop");
}

/* /health of node i, its body into out. */
static void
health_of(int i, char *out, size_t len)
{
	struct it_resp	 r;

	if (it_request(&N[i], "GET", "/health", NULL, &r) == 0)
		snprintf(out, len, "%ld %s", r.r_status, r.r_body.b_data);
	else
		snprintf(out, len, "no answer");
	it_resp_free(&r);
}

/* During the outage, one "locked" request to a node (by turns) and one
 * plain one through the front. */
static void
db_probe(struct dbrun *d)
{
	char		*body, *text, id[64], disc[16];
	uint64_t	 t0 = it_now();
	long		 st, ms;

	snprintf(disc, sizeof(disc), "p%d", d->d_locked);
	body = chat_body("locked", disc, 1, QUICK_MOCK, false);
	st = ask(&N[d->d_locked % 2], body, &text, id, sizeof(id));
	ms = (long)(it_now() - t0);
	d->d_locked++;
	d->d_locked_max_ms = ms > d->d_locked_max_ms ? ms : d->d_locked_max_ms;
	if (st != 500)
		d->d_locked_bad++;
	else if (d->d_error[0] == '\0')
		snprintf(d->d_error, sizeof(d->d_error), "%s", text);
	free(text);
	free(body);
	body = chat_body("x", NULL, 1, QUICK_MOCK, false);
	d->d_plain++;
	if (ask(&F, body, &text, id, sizeof(id)) != 200 || text == NULL ||
	    strcmp(text, front_paced_text()) != 0)
		d->d_plain_bad++;
	free(text);
	free(body);
}

/* Stop the database at DB_DOWN_AT_MS, probe every 200 ms, read /health
 * and start it again at DB_UP_AT_MS. */
static void
db_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct dbrun	*d = arg;
	uint64_t	 ms = it_now() - d->d_t0;
	int		 i;

	if (d->d_down_ms == 0) {
		if (ms >= DB_DOWN_AT_MS) {
			db_switch(false);
			d->d_down_ms = it_now() - d->d_t0;
		}
		return;
	}
	if (d->d_up_ms != 0 || ms < d->d_next_ms)
		return;
	if (ms >= DB_UP_AT_MS) {
		for (i = 0; i < 2; i++)
			health_of(i, d->d_health[i], sizeof(d->d_health[i]));
		db_switch(true);
		d->d_up_ms = it_now() - d->d_t0;
		return;
	}
	d->d_next_ms = ms + 200;
	db_probe(d);
}

/* Milliseconds after since (it_now()'s clock) when a "locked" request
 * to node i is answered in full again, trying for at most bound_ms;
 * -1 when it is not. */
static long
db_recovery(int i, uint64_t since, long bound_ms)
{
	uint64_t	 t0 = it_now();
	char		*body, *text, id[64];
	bool		 ok = false;
	long		 st;

	body = chat_body("locked", "after", 1, QUICK_MOCK, false);
	while (!ok && it_now() - t0 < (uint64_t)bound_ms) {
		st = ask(&N[i], body, &text, id, sizeof(id));
		ok = st == 200 && text != NULL &&
		    strcmp(text, front_paced_text()) == 0;
		free(text);
		if (!ok)
			it_sleep(50);
	}
	free(body);
	return ok ? (long)(it_now() - since) : -1;
}

/* Wait until node i's /health says "ok" again; false after bound_ms. */
static bool
health_ok(int i, int bound_ms)
{
	uint64_t	 end = it_now() + (uint64_t)bound_ms;
	char		 h[512];

	do {
		health_of(i, h, sizeof(h));
		if (strstr(h, "\"status\":\"ok\"") != NULL &&
		    strstr(h, "failing") == NULL)
			return true;
		it_sleep(100);
	} while (it_now() < end);
	fprintf(stderr, "cluster: node %c /health still: %s\n", "AB"[i], h);
	return false;
}

/* Memories written through node A in discussion disc, waited for
 * until committed (acknowledged): how many. */
static long long
acknowledged_memories(const char *disc)
{
	char		*body, *text, id[64], sql[128];
	long		 st;

	body = chat_body("memwrite", disc, 7, NULL, false);
	st = ask(&N[0], body, &text, id, sizeof(id));
	ck_assert_msg(st == 200, "A: %ld %s", st, text);
	free(text);
	free(body);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM memories WHERE "
	    "discussion = '%s'", disc);
	ck_assert_msg(it_db_wait(&N[0], sql, 5, it_slow(15000)), "A wrote no "
	    "memories");
	return it_db_int(&N[0], sql);
}

/* PostgreSQL stops (immediate, as a crash) during 8 plain streams and
 * comes back 1.8 s later: the streams and plain chats go on, requests
 * that need the store (a WorkflowLock before the answer) fail at once
 * with a 500 naming the database, /health says degraded, the gateways
 * stay up, the same requests work again without a restart, and the
 * memories committed before the crash are all there after it. */
START_TEST(db_restarted)
{
	struct it_stream	 s[8];
	struct buf		 hd[8];
	struct dbrun		 d;
	char			*body = chat_body("x", NULL, 1, "hi", true);
	long			 rec[2];
	long long		 kept;
	size_t			 i;

	kept = acknowledged_memories("kept");
	memset(&d, 0, sizeof(d));
	front_streams_init(s, hd, 8, NULL, body);
	d.d_t0 = it_now();
	it_streams(&F, s, 8, 20000, db_tick, &d);
	for (i = 0; i < 8; i++)
		ck_assert_msg(stream_whole(&s[i]), "stream %zu: %s", i,
		    s[i].s_out.b_data);
	for (i = 0; i < 2; i++) {
		ck_assert_msg(waitpid(N[i].it_gw, NULL, WNOHANG) == 0,
		    "node %c's gateway exited", "AB"[i]);
		rec[i] = db_recovery((int)i, d.d_t0 + d.d_up_ms, 20000);
	}
	fprintf(stderr, "cluster: PostgreSQL down %llu ms: %d requests "
	    "needing it, %d not failed with 500, the slowest answered in %ld "
	    "ms; %d plain chats, %d failed; 8 streams whole; the error: %s; "
	    "/health A: %s; B: %s; working again %ld ms (A) and %ld ms (B) "
	    "after the server took connections again (asked once the "
	    "streams ended)\n", (unsigned long long)(d.d_up_ms -
	    d.d_down_ms), d.d_locked, d.d_locked_bad, d.d_locked_max_ms,
	    d.d_plain, d.d_plain_bad, d.d_error, d.d_health[0], d.d_health[1],
	    rec[0], rec[1]);
	ck_assert_int_ge(d.d_locked, 4);
	ck_assert_int_eq(d.d_locked_bad, 0);
	ck_assert_msg(d.d_locked_max_ms < 2000, "a request needing the store "
	    "took %ld ms to fail", d.d_locked_max_ms);
	ck_assert_msg(strstr(d.d_error, "database") != NULL, "the error does "
	    "not name the store: %s", d.d_error);
	ck_assert_int_eq(d.d_plain_bad, 0);
	for (i = 0; i < 2; i++) {
		ck_assert_msg(strstr(d.d_health[i], "degraded") != NULL,
		    "node %c's /health during the outage: %s", "AB"[i],
		    d.d_health[i]);
		ck_assert_msg(rec[i] >= 0, "node %c did not recover",
		    "AB"[i]);
		ck_assert(health_ok((int)i, 10000));
	}
	ck_assert_int_eq(it_db_int(&N[1], "SELECT count(*) FROM memories "
	    "WHERE discussion = 'kept'"), kept);
	front_streams_free(s, hd, 8);
	free(body);
}
END_TEST

/* ---- a cluster-wide endpoint limit ------------------------------------ */

struct peak {
	long long	 p_max;
	int		 p_on[2];
};

static void
peak_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	struct peak	*p = arg;
	long long	 a = it_mock_stat(&F, "active");

	p->p_max = a > p->p_max ? a : p->p_max;
}

/* maxConcurrentRequests 1 on the Mock endpoint of both nodes (issue 21
 * item 3): four streams through the front, two on each node, reach
 * the backend one at a time. */
START_TEST(limit_serialises)
{
	struct it_stream	 s[4];
	struct buf		 hd[4];
	struct peak		 p = { 0, { 0, 0 } };
	char			*body = chat_body("x", NULL, 1, "hi", true);
	char			 id[64];
	uint64_t		 t0;
	size_t			 i;
	int			 g;

	front_streams_init(s, hd, 4, NULL, body);
	t0 = it_now();
	it_streams(&F, s, 4, 30000, peak_tick, &p);
	for (i = 0; i < 4; i++) {
		ck_assert_msg(stream_whole(&s[i]), "stream %zu: %s", i,
		    s[i].s_out.b_data);
		front_stream_id(&s[i], id, sizeof(id));
		ck_assert_int_ge(g = served_by(id), 0);
		p.p_on[g]++;
	}
	fprintf(stderr, "cluster: limit 1 on both nodes: at most %lld calls "
	    "at once at the backend (streams: %d on A, %d on B); the four "
	    "3.1 s streams took %llu ms\n", p.p_max, p.p_on[0], p.p_on[1],
	    (unsigned long long)(it_now() - t0));
	ck_assert_msg(p.p_on[0] > 0 && p.p_on[1] > 0, "streams: %d on A, %d "
	    "on B", p.p_on[0], p.p_on[1]);
	ck_assert_int_eq(p.p_max, 1);
	front_streams_free(s, hd, 4);
	free(body);
}
END_TEST

/* Once the stream on A has its head (it holds the endpoint's one
 * turn), kill -9 every process of A. */
static void
turn_kill_tick(struct it *t, struct it_stream *s, size_t n, void *arg)
{
	uint64_t	*kill_at = arg;

	if (*kill_at != 0 || !front_streams_headed(s, n))
		return;
	ck_assert_uint_gt(kill_node_a(), 0);
	*kill_at = it_now();
}

/* The endpoint's one turn, held by a stream on node A, is B's as soon
 * as A is killed: the database ends A's sessions, and their advisory
 * locks with them. */
START_TEST(limit_freed_by_kill)
{
	struct it_stream	 s;
	struct buf		 hd;
	uint64_t		 kill_at = 0;
	char			*body = chat_body("x", NULL, 1, QUICK_MOCK, false);
	char			*text, id[64];
	long			 st, ms;

	front_streams_init(&s, &hd, 1, NULL, FOREVER);
	it_streams(&N[0], &s, 1, 10000, turn_kill_tick, &kill_at);
	ck_assert_msg(kill_at != 0, "A's stream never started");
	waitpid(N[0].it_gw, NULL, 0);
	N[0].it_gw = 0;
	st = ask(&N[1], body, &text, id, sizeof(id));
	ms = (long)(it_now() - kill_at);
	fprintf(stderr, "cluster: limit 1, its turn held by a stream on A: "
	    "kill -9 of A; B's call answered %ld ms after the kill (status "
	    "%ld)\n", ms, st);
	ck_assert_msg(st == 200 && text != NULL && strcmp(text,
	    front_paced_text()) == 0, "B: %ld %s", st, text);
	ck_assert_msg(ms <= LOCK_BOUND_MS, "B waited %ld ms for the turn", ms);
	free(text);
	free(body);
	front_streams_free(&s, &hd, 1);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "memory", memory_crosses_nodes },
		{ "delete", delete_crosses_nodes },
		{ "kill", node_killed },
		{ "dbrestart", db_restarted },
		{ "unplug", node_unplugged },
	};
	Suite		*s;
	TCase		*tc;

	if (front_haproxy_bin() == NULL) {
		fprintf(stderr, "\n*** check_cluster: SKIPPED: haproxy is not "
		    "installed, so the cluster was NOT "
		    "tested.\n*** make check installs it (scripts/deps.sh "
		    "check).\n\n");
		printf("check_cluster: SKIPPED: haproxy is not installed\n");
		return 0;
	}
	s = it_suite_fixture("cluster", cases, sizeof(cases) /
	    sizeof(cases[0]), 90, setup, teardown);
	/* the same cluster with a limit of 1 on the endpoint */
	tc = tcase_create("limit");
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, setup_limit, teardown);
	tcase_add_test(tc, limit_serialises);
	tcase_add_test(tc, limit_freed_by_kill);
	suite_add_tcase(s, tc);
	return it_main(s);
}
