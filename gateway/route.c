/* route.c - the HTTP surface: routes, authentication, health and model listing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../common/clock.h"
#include "../common/conf.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "greq.h"
#include "gw.h"
#include "resp.h"
#include "route.h"
#include "sup.h"

typedef void	(*route_fn)(struct gw *, struct http_conn *,
		    const struct http_request *);

struct route {
	enum http_method	 r_method;
	const char		*r_path;
	route_fn		 r_fn;
	bool			 r_public;	/* no API key needed */
};

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
	return st->st_degraded || st->st_broken ? "degraded" : "ok";
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
	    "\"served\":%llu,\"crashes\":%llu,\"hung\":%llu}",
	    status, SLUICE_VERSION, (unsigned long long)
	    ((clock_mono_ms() - g->g_started_ms) / 1000), st.st_live,
	    st.st_count[W_IDLE], st.st_count[W_BUSY] +
	    st.st_count[W_CANCELLING], st.st_count[W_SPAWNING],
	    g->g_conf.c_sup.max_workers, st.st_queued,
	    (unsigned long long)st.st_served,
	    (unsigned long long)st.st_crashes, (unsigned long long)st.st_hung);
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

	buf_adds(&b, "{\"workers\":[");
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

static void
model_entry(struct buf *b, const char *id, long long created, bool first)
{
	if (!first)
		buf_addc(b, ',');
	buf_adds(b, "{\"id\":\"");
	json_escape(b, id, strlen(id));
	buf_printf(b, "\",\"object\":\"model\",\"created\":%lld,"
	    "\"owned_by\":\"sluice\"}", created);
}

/* WilmerAI's listing: "<user>:<folder>" for each shared workflow when
 * the user allows them, else "<user>". */
static void
models(struct gw *g, struct http_conn *c, const struct http_request *r)
{
	struct buf	 b = BUF_INIT;
	char		**names = NULL, *id;
	long long	 now = (long long)time(NULL);
	size_t		 i;

	buf_adds(&b, "{\"object\":\"list\",\"data\":[");
	if (g->g_allow_shared)
		names = conf_shared_workflows(g->g_conf.c_config_dir,
		    g->g_shared_folder);
	for (i = 0; names != NULL && names[i] != NULL; i++) {
		id = xasprintf("%s:%s", g->g_conf.c_user, names[i]);
		model_entry(&b, id, now, i == 0);
		free(id);
	}
	if (i == 0)
		model_entry(&b, g->g_conf.c_user, now, true);
	buf_adds(&b, "]}");
	conf_names_free(names);
	http_reply(c, 200, "application/json", NULL, b.b_data, b.b_len);
	buf_free(&b);
}

static const struct route routes[] = {
	{ HTTP_POST,	"/v1/chat/completions",	chat,	false },
	{ HTTP_POST,	"/chat/completions",	chat,	false },
	{ HTTP_GET,	"/v1/models",		models,	false },
	{ HTTP_GET,	"/models",		models,	false },
	{ HTTP_GET,	"/health",		health,	true },
	{ HTTP_GET,	"/admin/workers",	workers, false },
};
#define NROUTES	(sizeof(routes) / sizeof(routes[0]))

static const char *
header(const struct http_request *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

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

static bool
authorised(const struct gw *g, const struct http_request *r)
{
	const char	*h = header(r, "Authorization");
	size_t		 i;

	if (g->g_conf.c_api_keys[0] == NULL)
		return true;
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	for (h += 7; *h == ' '; h++)
		;
	for (i = 0; g->g_conf.c_api_keys[i] != NULL; i++)
		if (key_equal(h, g->g_conf.c_api_keys[i]))
			return true;
	return false;
}

static void
no_route(struct http_conn *c, const struct http_request *r)
{
	char		 msg[256];
	const char	*allow = NULL;
	size_t		 i;

	for (i = 0; i < NROUTES; i++)
		if (strcmp(routes[i].r_path, r->path) == 0)
			allow = routes[i].r_method == HTTP_GET ? "Allow: GET\r\n" :
			    "Allow: POST\r\n";
	if (allow != NULL) {
		snprintf(msg, sizeof(msg), "Method %s is not allowed on %.128s",
		    r->method_name, r->path);
		http_reply_error(c, 405, msg, allow);
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
	for (i = 0; i < NROUTES; i++) {
		if (routes[i].r_method != m ||
		    strcmp(routes[i].r_path, r->path) != 0)
			continue;
		if (!routes[i].r_public && !authorised(g, r)) {
			http_reply_error(c, 401, "Missing or invalid API key: "
			    "send 'Authorization: Bearer <key>'",
			    "WWW-Authenticate: Bearer\r\n");
			return;
		}
		routes[i].r_fn(g, c, r);
		return;
	}
	no_route(c, r);
}
