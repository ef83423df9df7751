/* greq.c - one client request in flight: from HTTP to the pool and back. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "../common/clock.h"
#include "../common/fernet.h"
#include "../common/log.h"
#include "../common/modelsel.h"
#include "../common/names.h"
#include "../common/pystr.h"
#include "../common/xmem.h"
#include "api.h"
#include "api_embed.h"
#include "gate.h"
#include "greq.h"
#include "gw.h"
#include "metrics.h"
#include "owui.h"
#include "resp.h"
#include "resp_embed.h"
#include "users.h"

struct greq {
	TAILQ_ENTRY(greq)	 q_entry;
	struct gw		*q_gw;
	struct http_conn	*q_conn;	/* NULL: client gone or answered */
	struct sup_req		 q_sr;
	struct api_req		 q_api;
	struct resp_ctx		 q_rc;
	char			 q_id[UUID_BUFLEN];
	char			 q_cmpl_id[64];
	char			*q_model;	/* echoed model */
	bool			 q_submitted;	/* the pool knows it */
	bool			 q_admitted;	/* holds a --concurrency turn */
	struct gate_waiter	*q_gate_w;	/* waiting for that turn */
	bool			 q_head_sent;
	bool			 q_done;	/* finished, waiting for reaper */
	struct buf		 q_text;	/* the answer so far */
	struct buf		 q_reasoning;
	json_t			*q_tools;	/* tool calls so far (array) */
	char			*q_idem;	/* idempotency scope:key, or NULL */
	struct buf		 q_out;		/* scratch for formatting */
	struct event		*q_hb;		/* stream heartbeat */
	uint64_t		 q_last_write;
	uint64_t		 q_started;
	uint64_t		 q_started_ns;	/* Ollama's durations */
	bool			 q_cache_on;	/* cache enabled at arrival */
	bool			 q_redact;	/* its user encrypts with the
						   key it sent (A10.1): log
						   no content of it */
	pid_t			 q_cache_pid;	/* worker the tally is of */
	unsigned		 q_cache_answers;	/* CACHE frames with answer */
	bool			 q_cache_missed;	/* one of them missed */
	bool			 q_embed;	/* an embeddings route */
	enum embed_shape	 q_shape;	/* which one */
	bool			 q_b64;		/* OpenAI's base64 vectors */
};

#define SR_TO_GREQ(sr)	((struct greq *)((char *)(sr) - \
	offsetof(struct greq, q_sr)))

static void
reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw	*g = arg;
	struct greq	*q;

	while ((q = TAILQ_FIRST(&g->g_dead)) != NULL) {
		TAILQ_REMOVE(&g->g_dead, q, q_entry);
		if (q->q_hb != NULL)
			event_free(q->q_hb);
		api_req_clear(&q->q_api);
		json_decref(q->q_tools);
		xfree_secret(q->q_idem);
		buf_free(&q->q_text);
		buf_free(&q->q_reasoning);
		buf_free(&q->q_out);
		free(q->q_model);
		free(q);
	}
}

unsigned
greq_in_flight(struct gw *g)
{
	struct greq	*q;
	unsigned	 n = 0;

	TAILQ_FOREACH(q, &g->g_live, q_entry)
		n++;
	return n;
}

int
greq_init(struct gw *g)
{
	TAILQ_INIT(&g->g_live);
	TAILQ_INIT(&g->g_dead);
	g->g_reaper = event_new(g->g_base, -1, 0, reaper_cb, g);
	g->g_gate = gate_new(g->g_base, greq_gate_limit(&g->g_conf),
	    g->g_conf.c_concurrency_timeout_ms);
	return g->g_reaper != NULL ? 0 : -1;
}

unsigned
greq_gate_limit(const struct gw_conf *c)
{
	return c->c_concurrency_level == GW_CL_REQUEST ? c->c_concurrency : 0;
}

void
greq_shutdown(struct gw *g)
{
	struct greq	*q;

	while ((q = TAILQ_FIRST(&g->g_live)) != NULL) {
		TAILQ_REMOVE(&g->g_live, q, q_entry);
		TAILQ_INSERT_TAIL(&g->g_dead, q, q_entry);
	}
	reaper_cb(-1, 0, g);
	if (g->g_reaper != NULL)
		event_free(g->g_reaper);
	g->g_reaper = NULL;
	gate_free(g->g_gate);
	g->g_gate = NULL;
}

/* Never free inside a callback chain: the reaper does it next pass. */
static void
finish(struct greq *q)
{
	struct gw	*g = q->q_gw;

	if (q->q_done)
		return;
	q->q_done = true;
	q->q_conn = NULL;
	if (q->q_hb != NULL)
		event_del(q->q_hb);
	gate_cancel(g->g_gate, q->q_gate_w);
	q->q_gate_w = NULL;
	if (q->q_admitted) {
		q->q_admitted = false;
		gate_leave(g->g_gate);
	}
	TAILQ_REMOVE(&g->g_live, q, q_entry);
	TAILQ_INSERT_TAIL(&g->g_dead, q, q_entry);
	event_active(g->g_reaper, EV_TIMEOUT, 0);
}

static bool
is_ollama(int api)
{
	return api == API_OLLAMA_CHAT || api == API_OLLAMA_GENERATE ||
	    api == API_OLLAMA_EMBED;
}

/* A Retry-After value as a backend may send it: delta-seconds or an
 * HTTP date, nothing that could break the header. */
static bool
retry_after_ok(struct str v)
{
	size_t	 i;

	if (v.n == 0 || v.n > 63)
		return false;
	for (i = 0; i < v.n; i++)
		if (!isalnum((unsigned char)v.p[i]) && strchr(" ,:", v.p[i]) ==
		    NULL)
			return false;
	return true;
}

/* The Retry-After line of an error answer (docs/api.md): 429 and 503
 * pass on the backend's value; a 503 without one (a backend's, the
 * pool's, --concurrency's) says 1 s. NULL for none; the line lives in
 * line. */
static const char *
retry_after_line(int status, struct str given, char *line, size_t len)
{
	if (status != 429 && status != 503)
		return NULL;
	if (retry_after_ok(given))
		snprintf(line, len, "Retry-After: %.*s\r\n", (int)given.n,
		    given.p);
	else if (status == 503)
		snprintf(line, len, "Retry-After: 1\r\n");
	else
		return NULL;
	return line;
}

/* The error answer: a JSON error before the head, the stream's error
 * event and its end after it. retry_after is the backend's value, or
 * STR_NULL. */
static void
send_error_after(struct greq *q, int status, const char *message,
    struct str retry_after)
{
	struct buf	 b = BUF_INIT;
	char		 line[96];

	if (q->q_conn == NULL)
		return;
	if (!q->q_head_sent) {
		resp_error(&b, is_ollama(q->q_rc.rc_api), status, message);
		http_reply(q->q_conn, status, "application/json",
		    retry_after_line(status, retry_after, line, sizeof(line)),
		    b.b_data, b.b_len);
	} else {
		resp_stream_error(&b, &q->q_rc, status, message);
		http_stream_write(q->q_conn, b.b_data, b.b_len);
		http_stream_end(q->q_conn);
	}
	buf_free(&b);
}

static void
send_error(struct greq *q, int status, const char *message)
{
	send_error_after(q, status, message, STR_NULL);
}

/* The tally of answer lookups is about one worker's run: a request
 * retried on another worker starts over. */
static void
cache_sync(struct greq *q)
{
	if (q->q_cache_pid == q->q_sr.sr_pid)
		return;
	q->q_cache_pid = q->q_sr.sr_pid;
	q->q_cache_answers = 0;
	q->q_cache_missed = false;
}

/* X-Sluice-Cache for a 200 answer, from what is known now: "hit" when
 * every answer lookup so far hit (and there was one), "miss" when one
 * missed or when the answer is there without any (no LLM call answered
 * from a lookup), "unknown" for a stream head sent early (keep-alive)
 * before the answering call looked the cache up. NULL when the cache
 * was off. */
static const char *
cache_header(struct greq *q, bool early)
{
	if (!q->q_cache_on)
		return NULL;
	cache_sync(q);
	if (q->q_cache_answers > 0)
		return q->q_cache_missed ? "X-Sluice-Cache: miss\r\n" :
		    "X-Sluice-Cache: hit\r\n";
	return early ? "X-Sluice-Cache: unknown\r\n" :
	    "X-Sluice-Cache: miss\r\n";
}

static void
stream_write(struct greq *q)
{
	if (q->q_conn == NULL || q->q_out.b_len == 0)
		return;
	gw_metrics_stream_bytes(q->q_gw->g_metrics, q->q_out.b_len);
	http_stream_write(q->q_conn, q->q_out.b_data, q->q_out.b_len);
	buf_reset(&q->q_out);
	q->q_last_write = clock_mono_ms();
}

/* Commit to 200 and the stream's first event; early when only to keep
 * the connection alive, before any answer. */
static void
stream_head(struct greq *q, bool early)
{
	const char	*ch;
	char		 hdr[128];

	if (q->q_head_sent || q->q_conn == NULL)
		return;
	q->q_head_sent = true;
	ch = cache_header(q, early);
	snprintf(hdr, sizeof(hdr), "Cache-Control: no-cache\r\n"
	    "X-Accel-Buffering: no\r\n%s", ch != NULL ? ch : "");
	http_stream_begin(q->q_conn, 200, resp_stream_type(q->q_rc.rc_api),
	    hdr);
	resp_stream_open(&q->q_out, &q->q_rc);
	stream_write(q);
}

static void
heartbeat_cb(evutil_socket_t fd, short what, void *arg)
{
	struct greq	*q = arg;
	uint64_t	 iv = q->q_gw->g_conf.c_stream_heartbeat_ms;

	if (q->q_done || q->q_conn == NULL)
		return;
	if (!q->q_head_sent) {
		stream_head(q, true);
		return;
	}
	if (clock_mono_ms() - q->q_last_write + 10 >= iv) {
		resp_stream_heartbeat(&q->q_out, &q->q_rc);
		stream_write(q);
	}
}

static void
on_gone(void *owner)
{
	struct greq	*q = owner;

	q->q_conn = NULL;
	if (q->q_done)
		return;
	log_info("[rq %s] client went away after %llu ms; cancelling", q->q_id,
	    (unsigned long long)(clock_mono_ms() - q->q_started));
	q->q_gw->g_cnt.gc_client_gone++;
	if (q->q_submitted)
		gw_metrics_cancel(q->q_gw->g_metrics, GW_CANCEL_DISCONNECT);
	if (q->q_submitted)
		sup_cancel(q->q_gw->g_sup, &q->q_sr);
	finish(q);
}

static void
on_drain(void *owner)
{
	struct greq	*q = owner;

	if (!q->q_done && q->q_submitted)
		sup_pause(q->q_gw->g_sup, &q->q_sr, false);
}

void
greq_sup_chunk(void *arg, struct sup_req *sr, const struct proto_msg *m)
{
	struct greq	*q = SR_TO_GREQ(sr);
	const struct proto_req_chunk *c = &m->m_u.req_chunk;

	if (q->q_done || q->q_conn == NULL)
		return;
	http_set_tag(q->q_conn, (long)sr->sr_pid);
	if (q->q_rc.rc_first_ns == 0 && (c->content.n > 0 || c->tool_calls.n > 0))
		q->q_rc.rc_first_ns = clock_mono_ns();
	resp_tool_calls_merge(q->q_tools, &c->tool_calls);
	if (!q->q_api.ar_stream) {
		buf_add(&q->q_text, c->content.p, c->content.n);
		buf_add(&q->q_reasoning, c->reasoning.p, c->reasoning.n);
		return;
	}
	stream_head(q, false);
	resp_stream_chunk(&q->q_out, &q->q_rc, c);
	if (q->q_out.b_len > 0)
		sr->sr_forwarded = true;
	stream_write(q);
	if (q->q_conn != NULL && http_out_full(q->q_conn))
		sup_pause(q->q_gw->g_sup, sr, true);
}

/* The count a cache clear answered with: decimal digits only. */
static int
cleared_count(const struct buf *t, unsigned long long *n)
{
	size_t	 i;

	*n = 0;
	if (t->b_len == 0 || t->b_len > 19)
		return -1;
	for (i = 0; i < t->b_len; i++) {
		if (t->b_data[i] < '0' || t->b_data[i] > '9')
			return -1;
		*n = *n * 10 + (unsigned long long)(t->b_data[i] - '0');
	}
	return 0;
}

/* DELETE /admin/cache: the worker emptied the cache. */
static void
answer_clear(struct greq *q)
{
	struct buf		 b = BUF_INIT;
	unsigned long long	 n;

	if (cleared_count(&q->q_text, &n) == -1) {
		log_warnx("[rq %s] the worker answered the cache clear with "
		    "%zu bytes that are not a count", q->q_id, q->q_text.b_len);
		send_error(q, 502, "the worker's answer to the cache clear "
		    "was not a number");
		return;
	}
	log_info("[rq %s] response cache cleared: %llu entries removed",
	    q->q_id, n);
	gw_metrics_cache_entries(q->q_gw->g_metrics, 0);
	buf_printf(&b, "{\"cleared\":%llu}", n);
	http_reply(q->q_conn, 200, "application/json", NULL, b.b_data,
	    b.b_len);
	buf_free(&b);
}

/* An embeddings route: the worker's vectors in the route's shape. */
static void
answer_embed(struct greq *q)
{
	struct resp_embed_ctx	 rc = { q->q_shape, q->q_api.ar_model,
				    q->q_b64, clock_mono_ns() - q->q_started_ns };
	char			 err[RESP_EMBED_ERRLEN];

	buf_reset(&q->q_out);
	if (resp_embed(&q->q_out, &rc, q->q_text.b_data, q->q_text.b_len,
	    err) == -1) {
		log_warnx("[rq %s] %s", q->q_id, err);
		send_error(q, 502, err);
		return;
	}
	http_reply(q->q_conn, 200, "application/json", NULL, q->q_out.b_data,
	    q->q_out.b_len);
}

static void
answer_ok(struct greq *q, const struct proto_req_done *d)
{
	struct resp_answer	 a = { &q->q_text, &q->q_reasoning, q->q_tools,
				    d };

	if (q->q_api.ar_api == API_CACHE_CLEAR) {
		answer_clear(q);
		return;
	}
	if (q->q_embed) {
		answer_embed(q);
		return;
	}
	if (q->q_api.ar_stream) {
		stream_head(q, false);
		resp_stream_close(&q->q_out, &q->q_rc, &a);
		stream_write(q);
		if (q->q_conn != NULL)
			http_stream_end(q->q_conn);
		return;
	}
	resp_whole(&q->q_out, &q->q_rc, &a);
	http_reply(q->q_conn, 200, "application/json", cache_header(q, false),
	    q->q_out.b_data, q->q_out.b_len);
}

void
greq_sup_done(void *arg, struct sup_req *sr, const struct proto_msg *m)
{
	struct greq			*q = SR_TO_GREQ(sr);
	const struct proto_req_done	*d = &m->m_u.req_done;
	char				 msg[1024];

	q->q_submitted = false;
	if (q->q_done)
		return;
	if (q->q_conn != NULL)
		http_set_tag(q->q_conn, (long)sr->sr_pid);
	if (d->endpoint.n > 0) {
		char	 ep[128];

		snprintf(ep, sizeof(ep), "%.*s", (int)d->endpoint.n,
		    d->endpoint.p);
		gw_metrics_backend_error(q->q_gw->g_metrics, ep);
	}
	/* The worker's own clock ran out; a backend's timeout (also 504)
	 * is a backend error, not a cancellation. */
	if (d->status == RQ_ERROR && str_eq(d->code, PROTO_CODE_DEADLINE))
		gw_metrics_cancel(q->q_gw->g_metrics, GW_CANCEL_DEADLINE);
	if (d->status == RQ_OK) {
		q->q_gw->g_cnt.gc_ok++;
		if (q->q_conn != NULL)
			answer_ok(q, d);
	} else {
		q->q_gw->g_cnt.gc_errors++;
		snprintf(msg, sizeof(msg), "%.*s", (int)d->message.n,
		    d->message.p ? d->message.p : "the request was cancelled");
		log_warnx("[rq %s] failed: %s", q->q_id,
		    log_text_if(q->q_redact || users_redacting(q->q_gw,
		    q->q_model), msg));
		send_error_after(q, d->http_status >= 400 &&
		    d->http_status < 600 ? (int)d->http_status : 502, msg,
		    d->retry_after);
	}
	finish(q);
}

void
greq_sup_cache(void *arg, struct sup_req *sr, const struct proto_msg *m)
{
	struct gw		*g = arg;
	const struct proto_cache *c = &m->m_u.cache;
	struct greq		*q;

	gw_metrics_cache_lookup(g->g_metrics, c->hit, c->entries);
	if (sr == NULL || !c->answer)
		return;
	q = SR_TO_GREQ(sr);
	if (q->q_done || q->q_head_sent)
		return;		/* the header is out: nothing to change */
	cache_sync(q);
	q->q_cache_answers++;
	if (!c->hit)
		q->q_cache_missed = true;
}

void
greq_sup_fail(void *arg, struct sup_req *sr, int status, const char *why)
{
	struct greq	*q = SR_TO_GREQ(sr);

	q->q_submitted = false;
	if (q->q_done)
		return;
	q->q_gw->g_cnt.gc_errors++;
	if (status == 504)
		gw_metrics_cancel(q->q_gw->g_metrics, GW_CANCEL_DEADLINE);
	log_warnx("[rq %s] %s", q->q_id, why);
	send_error(q, status, why);
	finish(q);
}

/* Stop q's work and end its answer with an error: DELETE by id, or a
 * newer request with the same idempotency key. */
static void
cancel_greq(struct greq *q, int status, const char *why)
{
	if (q->q_submitted)
		sup_cancel(q->q_gw->g_sup, &q->q_sr);
	q->q_submitted = false;
	send_error(q, status, why);
	finish(q);
}

int
greq_cancel_id(struct gw *g, const char *id, const char *why)
{
	struct greq	*q;

	TAILQ_FOREACH(q, &g->g_live, q_entry)
		if (!q->q_done && strcmp(q->q_id, id) == 0) {
			log_info("[rq %s] cancelled: %s", q->q_id, why);
			gw_metrics_cancel(g->g_metrics, GW_CANCEL_DELETE);
			cancel_greq(q, 409, why);
			return 0;
		}
	return -1;
}

/* The request's API key (A10.1): an Authorization header that starts
 * with exactly "Bearer ", the rest Python-stripped; NULL when there is
 * none or it is empty. Caller frees with key_free. */
static char *
bearer_key(const struct http_request *hr)
{
	const char	*auth = http_header(hr, "Authorization"), *p;
	size_t		 n;

	if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0)
		return NULL;
	p = auth + 7;
	n = strlen(p);
	pystr_trim(&p, &n);
	return n > 0 ? xstrndup(p, n) : NULL;
}

/* Wipe and free a key from bearer_key (NULL: nothing). */
static void
key_free(char *key)
{
	if (key != NULL)
		explicit_bzero(key, strlen(key));
	free(key);
}

/* sha256 of the request's Bearer key, its first 16 hex digits, in out
 * (WilmerAI's per-key scope); "" without a key. */
static void
key_scope(const struct http_request *hr, char out[FERNET_DIRLEN])
{
	char	*key = bearer_key(hr);

	out[0] = '\0';
	if (key != NULL)
		fernet_dir(key, out);
	key_free(key);
}

/* "<key scope or anon>:<key>", WilmerAI's registry key, so a key only
 * displaces requests made with the same API key. */
static char *
idem_scope(const struct http_request *hr, const char *key)
{
	char	 ks[FERNET_DIRLEN];

	key_scope(hr, ks);
	return xasprintf("%s:%s", ks[0] != '\0' ? ks : "anon", key);
}

/* A new request whose key is still in flight cancels the older one. */
static int
idempotency(struct greq *q, const struct http_request *hr, int *status,
    char err[API_ERRLEN])
{
	const char	*key = http_header(hr, "X-Idempotency-Key");
	struct greq	*o;

	if (key == NULL || (q->q_rc.rc_api != API_OPENAI_CHAT &&
	    q->q_rc.rc_api != API_OPENAI_COMPLETION))
		return 0;
	if (strlen(key) == 0 || strlen(key) > 128)
		return api_fail(status, err, 400, "X-Idempotency-Key must be "
		    "1 to 128 characters.");
	q->q_idem = idem_scope(hr, key);
	TAILQ_FOREACH(o, &q->q_gw->g_live, q_entry)
		if (o != q && !o->q_done && o->q_idem != NULL &&
		    strcmp(o->q_idem, q->q_idem) == 0) {
			log_info("[rq %s] superseded by [rq %s] (same "
			    "X-Idempotency-Key)", o->q_id, q->q_id);
			gw_metrics_cancel(q->q_gw->g_metrics,
			    GW_CANCEL_IDEMPOTENCY);
			cancel_greq(o, 409, "superseded by a newer request "
			    "with the same X-Idempotency-Key");
			break;
		}
	return 0;
}

static struct greq *
greq_new(struct gw *g, struct http_conn *conn, const struct http_request *hr)
{
	struct greq	*q = xcalloc(1, sizeof(*q));

	q->q_gw = g;
	q->q_conn = conn;
	q->q_tools = json_array();
	q->q_started_ns = clock_mono_ns();
	q->q_started = q->q_last_write = q->q_started_ns / 1000000;
	q->q_cache_on = g->g_conf.c_cache.cc_enabled;
	snprintf(q->q_id, sizeof(q->q_id), "%s", hr->id);
	TAILQ_INSERT_TAIL(&g->g_live, q, q_entry);
	http_set_owner(conn, q, on_gone, on_drain);
	return q;
}

/* Response context: ids, the echoed model ("<user>" or
 * "<user>:<workflow>"), the creation time. */
static void
setup_ctx(struct greq *q, const char *user, const char *wf)
{
	snprintf(q->q_cmpl_id, sizeof(q->q_cmpl_id), "%s-%s",
	    q->q_api.ar_api == API_OPENAI_CHAT ? "chatcmpl" : "cmpl", q->q_id);
	q->q_model = modelsel_echo(user, wf[0] != '\0' ? wf : NULL);
	q->q_rc = (struct resp_ctx){ q->q_api.ar_api, q->q_cmpl_id,
	    q->q_model, (int64_t)time(NULL), q->q_api.ar_include_usage,
	    q->q_id, q->q_started_ns, 0, api_thinking_off(&q->q_api) };
}

static void
start_heartbeat(struct greq *q)
{
	uint64_t	 iv = q->q_gw->g_conf.c_stream_heartbeat_ms;
	struct timeval	 tv = { (time_t)(iv / 1000),
			    (suseconds_t)(iv % 1000) * 1000 };

	if (iv == 0)
		return;
	q->q_hb = event_new(q->q_gw->g_base, -1, EV_PERSIST, heartbeat_cb, q);
	if (q->q_hb != NULL)
		event_add(q->q_hb, &tv);
}

/* Hand the parsed request to the pool. */
static void
submit(struct greq *q)
{
	struct gw	*g = q->q_gw;
	const char	*why;
	int		 status;

	snprintf(q->q_sr.sr_id, sizeof(q->q_sr.sr_id), "%s", q->q_id);
	q->q_sr.sr_start = q->q_api.ar_start.b_data;
	q->q_sr.sr_start_len = q->q_api.ar_start.b_len;
	q->q_sr.sr_deadline = g->g_conf.c_request_timeout_ms ? q->q_started +
	    g->g_conf.c_request_timeout_ms : 0;
	if (sup_submit(g->g_sup, &q->q_sr, &status, &why) == -1) {
		g->g_cnt.gc_rejected++;
		log_warnx("[rq %s] refused: %s", q->q_id, why);
		send_error(q, status, why);
		finish(q);
		return;
	}
	q->q_submitted = true;
	if (q->q_api.ar_stream && !q->q_done)
		start_heartbeat(q);
}

/* Our turn under --concurrency came, or the wait timed out (WilmerAI's
 * 503 wording). */
static void
gate_cb(void *owner, bool admitted)
{
	struct greq	*q = owner;

	q->q_gate_w = NULL;
	if (admitted) {
		q->q_admitted = true;
		submit(q);
		return;
	}
	q->q_gw->g_cnt.gc_rejected++;
	log_warnx("[rq %s] waited %llu ms for a turn under --concurrency; "
	    "503", q->q_id, (unsigned long long)(clock_mono_ms() -
	    q->q_started));
	send_error(q, 503, "Server busy, concurrency limit reached");
	finish(q);
}

/* Open WebUI's tool-choosing request, for a user who wants it
 * answered at once: the answer into owui, the model the Ollama answer
 * names being the request's own (else the echo). */
static void
owui_answer(int api, json_t *root, const struct gw_user *u,
    const char *wf, struct buf *owui)
{
	const char	*m = api_model(root);
	char		*echo = modelsel_echo(u->gu_name, wf[0] != '\0' ? wf :
			    NULL);

	resp_owui_tools(owui, api, api == API_OLLAMA_CHAT && m != NULL &&
	    *m != '\0' ? m : echo, (int64_t)time(NULL));
	free(echo);
}

/* The user and shared workflow the body's model field names (WilmerAI
 * 1.5). Returns 0, or -1 with status 400 and err. */
static int
select_user(struct gw *g, json_t *root, const struct gw_user **u,
    char wf[NAME_MAX_LEN + 1], int *status, char err[API_ERRLEN])
{
	char	*names;

	if (modelsel_traversal(api_model(root)))
		return api_fail(status, err, 400, "Invalid model name: a model "
		    "names a user or workflow, and '.' and '..' are not names.");
	if (users_select(g, api_model(root), u, wf) == 0)
		return 0;
	names = users_list(g);
	snprintf(err, API_ERRLEN, "Multi-user mode is active. The model "
	    "field must specify a configured user (or user:workflow). "
	    "Available users: %s", names);
	free(names);
	*status = 400;
	return -1;
}

/* Parse the body and choose the user and shared workflow its model
 * field names. Returns 0, 1 with the whole answer in owui
 * (interceptOpenWebUIToolRequests), or -1 with status and err. */
static int
parse(struct greq *q, const struct http_request *hr, int api,
    struct api_limits *lim, int *status, char err[API_ERRLEN],
    struct buf *owui)
{
	struct gw		*g = q->q_gw;
	const struct gw_user	*u;
	char			 wf[NAME_MAX_LEN + 1], ks[FERNET_DIRLEN];
	char			*key;
	struct api_body		*ab;
	json_t			*root;
	int			 r;

	if (api_body_load(hr->body, hr->body_len, &ab, status, err) == -1)
		return -1;
	root = api_body_root(ab);
	if (select_user(g, root, &u, wf, status, err) == -1)
		r = -1;
	else if (u->gu_owui && owui_tool_request(api, ab)) {
		owui_answer(api, root, u, wf, owui);
		r = 1;
	} else {
		key = bearer_key(hr);
		ks[0] = '\0';
		if (key != NULL)
			fernet_dir(key, ks);
		lim->user = u->gu_name;
		lim->workflow = wf[0] != '\0' ? wf : NULL;
		lim->key_scope = ks[0] != '\0' ? ks : NULL;
		lim->api_key = u->gu_encrypt ? key : NULL;	/* A10.1 */
		q->q_redact = lim->api_key != NULL;
		r = api_build(api, ab, q->q_id, lim, &q->q_api, status, err);
		lim->api_key = NULL;
		key_free(key);
		if (r == 0)
			setup_ctx(q, u->gu_name, wf);
	}
	api_body_free(ab);
	return r;
}

/* Submit now, or when the --concurrency gate gives a turn. */
static void
admit(struct greq *q)
{
	struct gw	*g = q->q_gw;

	if (gate_enter(g->g_gate, q, gate_cb, &q->q_gate_w)) {
		q->q_admitted = true;
		submit(q);
	} else
		log_info("[rq %s] waits for a turn (%u running, %u waiting)",
		    q->q_id, gate_active(g->g_gate), gate_waiting(g->g_gate));
}

void
greq_start(struct gw *g, struct http_conn *conn, const struct http_request *hr,
    int api)
{
	struct greq		*q = greq_new(g, conn, hr);
	char			 err[API_ERRLEN];
	int			 status, r;
	struct buf		 owui = BUF_INIT;
	const struct gw_conf	*c = &g->g_conf;
	struct api_limits	 lim = { c->c_request_timeout_ms,
				    c->c_concurrency_level == GW_CL_ENDPOINT ?
				    c->c_concurrency : 0,
				    c->c_concurrency_timeout_ms, NULL, NULL, NULL,
				    NULL };

	g->g_cnt.gc_completions++;
	q->q_rc.rc_api = api;
	if ((r = parse(q, hr, api, &lim, &status, err, &owui)) == 1) {
		http_reply(conn, 200, "application/json", NULL, owui.b_data,
		    owui.b_len);
		buf_free(&owui);
		finish(q);
		return;
	}
	if (r == -1 || idempotency(q, hr, &status, err) == -1) {
		g->g_cnt.gc_rejected++;
		send_error(q, status, err);
		finish(q);
		return;
	}
	admit(q);
}

void
greq_cache_clear(struct gw *g, struct http_conn *conn,
    const struct http_request *hr)
{
	struct greq		*q = greq_new(g, conn, hr);
	struct api_msgs		 none;
	struct api_limits	 lim = { g->g_conf.c_request_timeout_ms, 0, 0,
				    NULL, NULL, NULL, NULL };
	char			 err[API_ERRLEN];
	int			 status;

	memset(&none, 0, sizeof(none));
	q->q_cache_on = false;		/* not an answer: no X-Sluice-Cache */
	q->q_api.ar_api = API_CACHE_CLEAR;
	q->q_api.ar_model = xstrdup("");
	q->q_rc = (struct resp_ctx){ API_CACHE_CLEAR, q->q_cmpl_id, "",
	    (int64_t)time(NULL), false, q->q_id, q->q_started_ns, 0, false };
	if (api_encode(&q->q_api, &none, q->q_id, &lim, NULL, NULL, NULL,
	    &status, err) == -1) {
		send_error(q, status, err);
		finish(q);
		return;
	}
	log_debug("[rq %s] clearing the response cache", q->q_id);
	submit(q);
}

/* Parse an embeddings body: its user (the model field, as for a chat;
 * a workflow part is ignored) and texts. Returns 0, or -1 with status
 * and err. */
static int
embed_parse(struct greq *q, const struct http_request *hr, int *status,
    char err[API_ERRLEN])
{
	struct gw		*g = q->q_gw;
	const struct gw_user	*u;
	char			 wf[NAME_MAX_LEN + 1];
	struct api_limits	 lim = { g->g_conf.c_request_timeout_ms, 0, 0,
				    NULL, NULL, NULL, NULL };
	json_t			*root;
	int			 r;

	if (api_load(hr->body, hr->body_len, &root, status, err) == -1)
		return -1;
	r = select_user(g, root, &u, wf, status, err);
	if (r == 0) {
		lim.user = u->gu_name;
		r = api_embed_build(q->q_shape, root, q->q_id, &lim, &q->q_api,
		    &q->q_b64, status, err);
	}
	json_decref(root);
	return r;
}

void
greq_embed(struct gw *g, struct http_conn *conn,
    const struct http_request *hr, int shape)
{
	struct greq	*q = greq_new(g, conn, hr);
	char		 err[API_ERRLEN];
	int		 status;

	q->q_cache_on = false;		/* never cached: no X-Sluice-Cache */
	q->q_embed = true;
	q->q_shape = (enum embed_shape)shape;
	q->q_rc = (struct resp_ctx){ api_embed_api(q->q_shape), q->q_cmpl_id,
	    "", (int64_t)time(NULL), false, q->q_id, q->q_started_ns, 0, false };
	if (embed_parse(q, hr, &status, err) == -1) {
		g->g_cnt.gc_rejected++;
		send_error(q, status, err);
		finish(q);
		return;
	}
	log_debug("[rq %s] embeddings for %s", q->q_id, hr->path);
	admit(q);
}
