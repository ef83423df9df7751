/* mcp_sse.c - MCP's legacy HTTP+SSE transport: a GET event stream names where to POST, and carries the server's messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../llm/sse.h"
#include "../llm/url.h"
#include "mcp_xport.h"

/*
 * As the SDK's sse_client: GET {url} (Accept: text/event-stream, the
 * file's headers) and wait for an "endpoint" event whose data is a URL
 * (relative ones resolved against url; another scheme, host or port
 * fails the call); then each message is a POST of its JSON there, and
 * the server's messages come as "message" events on the GET stream,
 * which runs beside the POSTs (transport_bg). Everything is bounded by
 * what is left of the node's timeout and watched by the hooks.
 */

#define MCP_EVENT_MAX	(16 * 1024 * 1024)

struct sx {
	struct mcp_run		*x_run;
	const struct mcp_server	*x_srv;
	struct sse		*x_sse;
	char			 x_endpoint[2048];
};

static int
on_event(void *arg, const char *ev, size_t evn, const char *data, size_t n)
{
	struct sx	*x = arg;
	struct buf	 why = BUF_INIT;

	if (strcmp(ev, "endpoint") == 0 && x->x_endpoint[0] == '\0') {
		if (url_resolve_same_origin(x->x_srv->ms_url, data,
		    x->x_endpoint, sizeof(x->x_endpoint)) == -1) {
			x->x_endpoint[0] = '\0';
			buf_printf(&why, "Endpoint origin does not match "
			    "connection origin: %s", data);
			mcp_rpc_fail(x->x_run->mr_rpc, why.b_data);
			buf_free(&why);
			return -1;
		}
	} else if (evn == 0 || strcmp(ev, "message") == 0)
		mcp_rpc_feed(x->x_run->mr_rpc, data, n);
	return 0;
}

static int
on_data(void *arg, const char *p, size_t n)
{
	struct sx	*x = arg;

	return sse_feed(x->x_sse, p, n);
}

static bool
have_endpoint(void *arg)
{
	struct sx	*x = arg;

	return x->x_endpoint[0] != '\0' ||
	    mcp_rpc_state(x->x_run->mr_rpc) != MCPS_RUNNING;
}

static bool
progress(void *arg)
{
	struct sx	*x = arg;

	return mcp_rpc_state(x->x_run->mr_rpc) != MCPS_RUNNING ||
	    mcp_rpc_queued(x->x_run->mr_rpc);
}

/* The file's headers and one of ours, NULL-ended; free with free()
 * of the vector (the strings are borrowed but first). */
static char **
headers(const struct sx *x, const char *first)
{
	char	**hd;
	size_t	 n = 0;

	while (x->x_srv->ms_headers != NULL && x->x_srv->ms_headers[n] != NULL)
		n++;
	hd = xcalloc(n + 2, sizeof(char *));
	hd[0] = xstrdup(first);
	memcpy(hd + 1, x->x_srv->ms_headers, n * sizeof(char *));
	return hd;
}

static void
headers_free(char **hd)
{
	free(hd[0]);
	free(hd);
}

static enum mcp_end
ended(enum transport_outcome o)
{
	return o == XFER_TIMEOUT ? MCPE_TIMEOUT : o == XFER_CANCELLED ?
	    MCPE_CANCELLED : MCPE_ENDED;
}

/* POST msg to the endpoint. */
static enum mcp_end
post(struct sx *x, const char *msg)
{
	struct mcp_run		*r = x->x_run;
	struct transport_result	 res = { .err_body = BUF_INIT };
	uint64_t		 now = clock_mono_ms();
	char			**hd = headers(x,
				    "Content-Type: application/json");
	struct transport_call	 c = { .url = x->x_endpoint,
	    .headers = (const char *const *)hd, .body = msg,
	    .body_len = strlen(msg), .connect_timeout_ms = r->mr_timeout_ms };
	char			 why[2200];

	if (now >= r->mr_deadline)
		res.outcome = XFER_TIMEOUT;
	else {
		c.total_timeout_ms = (long)(r->mr_deadline - now);
		transport_perform(&c, r->mr_hooks, &res);
	}
	headers_free(hd);
	buf_free(&res.err_body);
	if (res.outcome == XFER_OK && (res.status < 200 || res.status > 299)) {
		snprintf(why, sizeof(why), "HTTP %ld from POST %s", res.status,
		    x->x_endpoint);
		mcp_rpc_fail(r->mr_rpc, why);
	} else if (res.outcome != XFER_OK && ended(res.outcome) ==
	    MCPE_ENDED)
		mcp_rpc_fail(r->mr_rpc, res.error);
	return ended(res.outcome);
}

/* The GET stream ended by itself: why, into the session. */
static void
get_ended(struct sx *x, const struct transport_result *res)
{
	char	 why[2200];

	if (res->outcome == XFER_OK && (res->status < 200 ||
	    res->status > 299)) {
		snprintf(why, sizeof(why), "HTTP %ld from GET %s", res->status,
		    x->x_srv->ms_url);
		mcp_rpc_fail(x->x_run->mr_rpc, why);
	} else if (res->outcome != XFER_OK && res->outcome != XFER_ABORTED)
		mcp_rpc_fail(x->x_run->mr_rpc, res->error);
	else
		mcp_rpc_closed(x->x_run->mr_rpc);
}

/* Post what is queued, wait for more, until the session ends. */
static enum mcp_end
talk(struct sx *x, struct transport_bg *bg, struct transport_result *gres)
{
	struct mcp_run	*r = x->x_run;
	enum mcp_end	 e = MCPE_ENDED;
	char		*m;
	int		 w;

	w = transport_bg_wait(bg, r->mr_hooks, r->mr_deadline, have_endpoint,
	    x);
	while (w == 1 && mcp_rpc_state(r->mr_rpc) == MCPS_RUNNING) {
		while (e == MCPE_ENDED &&
		    (m = mcp_rpc_next(r->mr_rpc)) != NULL) {
			e = post(x, m);
			free(m);
		}
		if (e != MCPE_ENDED || mcp_rpc_state(r->mr_rpc) != MCPS_RUNNING)
			return e;
		w = transport_bg_wait(bg, r->mr_hooks, r->mr_deadline,
		    progress, x);
	}
	if (w == 0)
		get_ended(x, gres);
	return w == -1 ? ended(gres->outcome) : MCPE_ENDED;
}

enum mcp_end
mcp_sse_run(const struct mcp_server *srv, struct mcp_run *run)
{
	struct sx		 x = { .x_run = run, .x_srv = srv };
	struct transport_result	 gres = { .err_body = BUF_INIT };
	char			**hd = headers(&x, "Accept: text/event-stream");
	struct transport_call	 get = { .url = srv->ms_url,
	    .headers = (const char *const *)hd,
	    .connect_timeout_ms = run->mr_timeout_ms, .on_data = on_data,
	    .arg = &x };
	struct transport_bg	*bg;
	enum mcp_end		 e;

	x.x_sse = sse_new(MCP_EVENT_MAX, on_event, &x);
	if ((bg = transport_bg_start(&get, &gres)) == NULL) {
		mcp_rpc_fail(run->mr_rpc, "out of memory");
		e = MCPE_ENDED;
	} else
		e = talk(&x, bg, &gres);
	transport_bg_stop(bg);
	sse_free(x.x_sse);
	headers_free(hd);
	buf_free(&gres.err_body);
	return e;
}
