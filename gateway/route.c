/* route.c - the HTTP surface: routes, authentication, health, and the model routes (bodies in models.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/clock.h"
#include "../common/json.h"
#include "../common/log.h"
#include "api_embed.h"
#include "browser.h"
#include "greq.h"
#include "gw.h"
#include "models.h"
#include "peers.h"
#include "storehealth.h"
#include "resp.h"
#include "route.h"
#include "stats.h"
#include "sup.h"

typedef void	(*route_fn)(struct gw *, struct http_conn *,
		    const struct http_request *);

struct route {
	enum http_method	 r_method;
	const char		*r_path;
	route_fn		 r_fn;
	int			 r_access;	/* ACCESS_* */
	const char		*r_name;	/* metrics label */
};

enum { ACCESS_KEY = 0, ACCESS_PUBLIC, ACCESS_ADMIN };

static bool
is_ollama_path(const char *path)
{
	return path != NULL && strncmp(path, "/api/", 5) == 0;
}

char *
route_error_body(const char *path, int status, const char *message, void *arg)
{
	struct buf	 b = BUF_INIT;

	resp_error(&b, is_ollama_path(path), status, message);
	return buf_take(&b);
}

static void
chat(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	greq_start(g, c, r, API_OPENAI_CHAT);
}

static void
completion(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	greq_start(g, c, r, API_OPENAI_COMPLETION);
}

static void
ollama_chat(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	greq_start(g, c, r, API_OLLAMA_CHAT);
}

static void
ollama_generate(struct gw *g, struct http_conn *c,
    const struct http_request *r)
{
	greq_start(g, c, r, API_OLLAMA_GENERATE);
}

/* The embeddings routes pass the texts through to the user's
 * embeddingEndpointName. */
static void
embeddings(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	greq_embed(g, c, r, EMBED_OPENAI);
}

static void
ollama_embed(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	greq_embed(g, c, r, EMBED_OLLAMA);
}

static void
ollama_embeddings(struct gw *g, struct http_conn *c,
    const struct http_request *r)
{
	greq_embed(g, c, r, EMBED_OLLAMA_LEGACY);
}

static void
reply_json(struct http_conn *c, int status, const struct buf *b)
{
	http_reply(c, status, "application/json", NULL, b->b_data, b->b_len);
}

/* The answer to a DELETE by request id, from here or from a peer. */
static void
cancel_answer(struct http_conn *c, const char *id, bool cancelled)
{
	struct buf	 b = BUF_INIT;

	if (cancelled)
		buf_adds(&b, "{\"status\":\"cancelled\",\"request_id\":\"");
	else
		buf_adds(&b, "{\"error\":\"no request in flight with id ");
	json_escape(&b, id, strlen(id));
	buf_adds(&b, "\"}");
	reply_json(c, cancelled ? 200 : 404, &b);
	buf_free(&b);
}

/* DELETE /api/chat or /api/generate {"request_id": ...}: WilmerAI's
 * cancellation; any request's id works (OpenAI clients see it in
 * X-Request-Id). A request that does not run here is asked of the
 * peers (peers.h). */
static void
cancel(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	json_t		*j = json_loadb(r->body, r->body_len, 0, NULL);
	const char	*id = json_string_value(json_object_get(j, "request_id"));
	char		 why[96];

	if (id == NULL || *id == '\0')
		http_reply_error(c, 400, "The 'request_id' field is required.",
		    NULL);
	else {
		snprintf(why, sizeof(why), "cancelled by DELETE %s", r->path);
		if (greq_cancel_id(g, id, why) == 0)
			cancel_answer(c, id, true);
		else if (peers_cancel(g, c, r, id, cancel_answer) == -1)
			cancel_answer(c, id, false);
	}
	json_decref(j);
}

static void
version(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	static const char body[] = "{\"version\":\"0.9\"}";

	http_reply(c, 200, "application/json", NULL, body, sizeof(body) - 1);
}

static const char *
health_status(const struct gw *g, const struct sup_stats *st, int *code)
{
	*code = 503;
	if (g->g_stopping || st->st_pool != POOL_RUNNING)
		return "stopping";
	if (st->st_broken && st->st_live == 0)
		return "unavailable";
	if (!g->g_ready)
		return "starting";
	*code = 200;
	/* Serving, but not well: workers keep crashing, some cannot start,
	 * or requests wait with every worker busy and the pool at its
	 * maximum. */
	if (st->st_degraded || st->st_broken)
		return "degraded";
	if (st->st_queued > 0 && st->st_count[W_IDLE] == 0 &&
	    st->st_live >= sup_get_conf(g->g_sup)->max_workers)
		return "degraded";
	if (g->g_store.gs_failing)
		return "degraded";	/* answers, but memories are not kept */
	return "ok";
}

static void
health(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct sup_stats st;
	struct buf	 b = BUF_INIT;
	const char	*status;
	int		 code;

	sup_stats(g->g_sup, &st);
	status = health_status(g, &st, &code);
	buf_printf(&b, "{\"status\":\"%s\",\"version\":\"%s\","
	    "\"uptime_s\":%llu,\"workers\":{\"live\":%u,\"idle\":%u,"
	    "\"busy\":%u,\"spawning\":%u,\"max\":%u},\"queue\":%u,"
	    "\"served\":%llu,\"crashes\":%llu,\"hung\":%llu,",
	    status, SLUICE_VERSION, (unsigned long long)
	    ((clock_mono_ms() - g->g_started_ms) / 1000), st.st_live,
	    st.st_count[W_IDLE], st.st_count[W_BUSY] + st.st_count[W_AFTER] +
	    st.st_count[W_CANCELLING], st.st_count[W_SPAWNING],
	    g->g_conf.c_sup.max_workers, st.st_queued,
	    (unsigned long long)st.st_served,
	    (unsigned long long)st.st_crashes, (unsigned long long)st.st_hung);
	storehealth_json(&g->g_store, clock_mono_ms(), &b);
	buf_adds(&b, "}");
	http_reply(c, code, "application/json", NULL, b.b_data, b.b_len);
	buf_free(&b);
}

/* Operators' view of the pool (behind the API key when one is set). */
static void
workers(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct sup_winfo	 wi[256];
	struct buf		 b = BUF_INIT;
	size_t			 n = sup_workers(g->g_sup, wi, 256), i;

	buf_adds(&b, "{\"node\":\"");
	json_escape(&b, peers_node_name(g), strlen(peers_node_name(g)));
	buf_adds(&b, "\",\"workers\":[");
	for (i = 0; i < n; i++) {
		buf_printf(&b, "%s{\"slot\":%u,\"pid\":%d,\"state\":\"%s\","
		    "\"served\":%u,\"age_s\":%.1f,\"request_id\":\"%s\","
		    "\"phase\":\"", i ? "," : "", wi[i].wi_slot,
		    (int)wi[i].wi_pid, sup_state_name(wi[i].wi_state),
		    wi[i].wi_served, wi[i].wi_age_ms / 1000.0, wi[i].wi_rqid);
		json_escape(&b, wi[i].wi_phase, strlen(wi[i].wi_phase));
		buf_adds(&b, "\"}");
	}
	buf_adds(&b, "]}");
	http_reply(c, 200, "application/json", NULL, b.b_data, b.b_len);
	buf_free(&b);
}

/* DELETE /admin/cache: a worker empties the shared response cache. */
static void
cache_clear(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	greq_cache_clear(g, c, r);
}

static void
models(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct buf	 b = BUF_INIT;

	models_openai(g, &b);
	reply_json(c, 200, &b);
	buf_free(&b);
}

static void
tags(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct buf	 b = BUF_INIT;

	models_tags(g, &b);
	reply_json(c, 200, &b);
	buf_free(&b);
}

/* GET /api/ps: Open WebUI and other Ollama clients ask what runs. */
static void
ps(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct buf	 b = BUF_INIT;

	models_ps(g, &b);
	reply_json(c, 200, &b);
	buf_free(&b);
}

/* POST /api/show {"model": ...}: one model's details. */
static void
show(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct buf	 b = BUF_INIT;
	char		 err[API_ERRLEN];
	int		 status;

	status = models_show(g, r->body, r->body_len, &b, err);
	if (status == 200)
		reply_json(c, 200, &b);
	else
		http_reply_error(c, status, err, NULL);
	buf_free(&b);
}

static void
metrics(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct buf	 b = BUF_INIT;

	stats_render(g, &b);
	http_reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", NULL,
	    b.b_data, b.b_len);
	buf_free(&b);
}

static const struct route routes[] = {
	{ HTTP_POST,	"/v1/chat/completions",	chat, ACCESS_KEY, "chat" },
	{ HTTP_POST,	"/chat/completions",	chat, ACCESS_KEY, "chat" },
	{ HTTP_POST,	"/v1/completions",	completion, ACCESS_KEY, "completion" },
	{ HTTP_POST,	"/completions",		completion, ACCESS_KEY, "completion" },
	{ HTTP_POST,	"/api/chat",		ollama_chat, ACCESS_KEY,
	    "ollama_chat" },
	{ HTTP_POST,	"/api/generate",	ollama_generate, ACCESS_KEY,
	    "ollama_generate" },
	{ HTTP_POST,	"/v1/embeddings",	embeddings, ACCESS_KEY,
	    "embeddings" },
	{ HTTP_POST,	"/api/embed",		ollama_embed, ACCESS_KEY,
	    "ollama_embed" },
	{ HTTP_POST,	"/api/embeddings",	ollama_embeddings, ACCESS_KEY,
	    "ollama_embeddings" },
	{ HTTP_DELETE,	"/api/chat",		cancel, ACCESS_KEY, "cancel" },
	{ HTTP_DELETE,	"/api/generate",	cancel, ACCESS_KEY, "cancel" },
	{ HTTP_GET,	"/v1/models",		models, ACCESS_KEY, "models" },
	{ HTTP_GET,	"/models",		models, ACCESS_KEY, "models" },
	{ HTTP_GET,	"/api/tags",		tags, ACCESS_KEY, "tags" },
	{ HTTP_GET,	"/api/ps",		ps, ACCESS_KEY, "ps" },
	{ HTTP_POST,	"/api/show",		show, ACCESS_KEY, "show" },
	{ HTTP_GET,	"/api/version",		version, ACCESS_KEY, "version" },
	{ HTTP_GET,	"/health",		health, ACCESS_PUBLIC, "health" },
	{ HTTP_GET,	"/metrics",		metrics, ACCESS_ADMIN, "metrics" },
	{ HTTP_GET,	"/admin/workers",	workers, ACCESS_ADMIN, "admin" },
	{ HTTP_DELETE,	"/admin/cache",		cache_clear, ACCESS_ADMIN,
	    "admin_cache" },
};
#define NROUTES	(sizeof(routes) / sizeof(routes[0]))

/* Constant-time comparison so response times do not leak keys. */
static bool
key_equal(const char *a, const char *b)
{
	size_t		 na = strlen(a), nb = strlen(b), i;
	unsigned char	 d = na != nb;

	for (i = 0; i < na; i++)
		d |= (unsigned char)(a[i] ^ b[i % (nb ? nb : 1)]);
	return d == 0;
}

/* Admin routes take only admin keys once there are any; otherwise the
 * ordinary keys (if any) open every route. */
static bool
authorised(const struct gw *g, const struct http_request *r, int access)
{
	const char	*h = http_header(r, "Authorization");
	char *const	*keys = g->g_conf.c_api_keys;
	size_t		 i;

	if (access == ACCESS_PUBLIC)
		return true;
	if (access == ACCESS_ADMIN && g->g_conf.c_admin_keys[0] != NULL)
		keys = g->g_conf.c_admin_keys;
	if (keys[0] == NULL)
		return true;
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	for (h += 7; *h == ' '; h++)
		;
	for (i = 0; keys[i] != NULL; i++)
		if (key_equal(h, keys[i]))
			return true;
	return false;
}

static void
no_route(struct http_conn *c, const struct http_request *r)
{
	static const char *const names[] = { [HTTP_GET] = "GET",
	    [HTTP_POST] = "POST", [HTTP_DELETE] = "DELETE" };
	char		 msg[256];
	struct buf	 allow = BUF_INIT;
	size_t		 i;

	for (i = 0; i < NROUTES; i++)
		if (strcmp(routes[i].r_path, r->path) == 0)
			buf_printf(&allow, "%s%s", allow.b_len ? ", " :
			    "Allow: ", names[routes[i].r_method]);
	if (allow.b_len > 0) {
		buf_adds(&allow, "\r\n");
		snprintf(msg, sizeof(msg), "Method %s is not allowed on %.128s",
		    r->method_name, r->path);
		http_reply_error(c, 405, msg, allow.b_data);
		buf_free(&allow);
		return;
	}
	snprintf(msg, sizeof(msg), "No route for %s %.128s", r->method_name,
	    r->path);
	http_reply_error(c, 404, msg, NULL);
}

void
route_request(struct http_conn *c, const struct http_request *r, void *arg)
{
	struct gw	*g = arg;
	size_t		 i;
	enum http_method m = r->method == HTTP_HEAD ? HTTP_GET : r->method;

	g->g_cnt.gc_requests++;
	if (!browser_gate(g, c, r))
		return;
	for (i = 0; i < NROUTES; i++) {
		if (routes[i].r_method != m ||
		    strcmp(routes[i].r_path, r->path) != 0)
			continue;
		http_set_route(c, routes[i].r_name);
		if (!authorised(g, r, routes[i].r_access)) {
			http_reply_error(c, 401, "Missing or invalid API key: "
			    "send 'Authorization: Bearer <key>'",
			    "WWW-Authenticate: Bearer\r\n");
			return;
		}
		routes[i].r_fn(g, c, r);
		return;
	}
	http_set_route(c, "unmatched");
	no_route(c, r);
}
