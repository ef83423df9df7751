/* mcp_http.c - MCP's streamable HTTP transport: each message a POST, answers as JSON or as an SSE stream, a DELETE at the end. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../llm/sse.h"
#include "mcp_xport.h"

/*
 * As the SDK's streamablehttp_client: POST {url} with the message,
 * Accept: application/json, text/event-stream, the file's headers,
 * and once the server named them mcp-session-id and
 * mcp-protocol-version. 202 carries nothing; a JSON body is one
 * message (or a batch); an SSE body carries "message" events, and is
 * left as soon as the request it answers is answered. The SDK may also
 * open a GET stream for messages the server sends on its own; Sluice
 * does not: a request whose POST ends unanswered fails the call. At the
 * end a DELETE ends the server's session. Every transfer is bounded by
 * what is left of the node's timeout and watched by the hooks.
 */

#define MCP_BODY_MAX	(16 * 1024 * 1024)

struct hx {
	struct mcp_run		*h_run;
	const struct mcp_server	*h_srv;
	struct transport_hdr	 h_keep[3];	/* Content-Type,
						   mcp-session-id */
	char			 h_session[256];
	struct sse		*h_sse;
	struct buf		 h_body;
	int			 h_id;		/* the POST's request id,
						   -1: a notification or
						   an answer */
	int			 h_mode;	/* 0: not known, 1: JSON,
						   2: SSE */
};

/* The POST's request is answered (or the session ended). */
static bool
answered(const struct hx *h)
{
	return h->h_id < 0 || mcp_rpc_waiting(h->h_run->mr_rpc) != h->h_id;
}

static int
on_event(void *arg, const char *ev, size_t evn, const char *data, size_t n)
{
	struct hx	*h = arg;

	if (evn == 0 || strcmp(ev, "message") == 0)
		mcp_rpc_feed(h->h_run->mr_rpc, data, n);
	return h->h_id >= 0 && answered(h) ? -1 : 0;
}

static int
on_data(void *arg, const char *p, size_t n)
{
	struct hx	*h = arg;

	if (h->h_mode == 0)
		h->h_mode = strncasecmp(h->h_keep[0].th_value,
		    "text/event-stream", 17) == 0 ? 2 : 1;
	if (h->h_mode == 2)
		return sse_feed(h->h_sse, p, n);
	if (h->h_body.b_len + n > MCP_BODY_MAX)
		return -1;
	buf_add(&h->h_body, p, n);
	return 0;
}

/* The request headers: Accept, the file's, the session's. NULL-ended;
 * caller frees each and the vector. */
static char **
headers(const struct hx *h)
{
	const char	*v = mcp_rpc_version(h->h_run->mr_rpc);
	char		**hd;
	size_t		 n = 0, i;

	while (h->h_srv->ms_headers != NULL && h->h_srv->ms_headers[n] != NULL)
		n++;
	hd = xcalloc(n + 4, sizeof(char *));
	hd[0] = xstrdup("Accept: application/json, text/event-stream");
	for (i = 0; i < n; i++)
		hd[i + 1] = xstrdup(h->h_srv->ms_headers[i]);
	n++;
	if (h->h_session[0] != '\0')
		hd[n++] = xasprintf("mcp-session-id: %s", h->h_session);
	if (*v != '\0')
		hd[n++] = xasprintf("mcp-protocol-version: %s", v);
	return hd;
}

static void
headers_free(char **hd)
{
	size_t	 i;

	for (i = 0; hd[i] != NULL; i++)
		free(hd[i]);
	free(hd);
}

/* One transfer to the server's url, bounded by what is left. */
static enum transport_outcome
xfer(struct hx *h, const char *method, const char *body,
    struct transport_result *res)
{
	struct mcp_run		*r = h->h_run;
	uint64_t		 now = clock_mono_ms();
	char			**hd = headers(h);
	struct transport_call	 c = { .url = h->h_srv->ms_url,
	    .headers = (const char *const *)hd, .body = body,
	    .body_len = body != NULL ? strlen(body) : 0,
	    .connect_timeout_ms = r->mr_timeout_ms, .on_data = on_data,
	    .arg = h, .method = method, .keep = h->h_keep };

	if (now >= r->mr_deadline) {
		headers_free(hd);
		return XFER_TIMEOUT;
	}
	c.total_timeout_ms = (long)(r->mr_deadline - now);
	transport_perform(&c, r->mr_hooks, res);
	headers_free(hd);
	return res->outcome;
}

/* Does msg (ours, so valid JSON) ask for an answer? */
static bool
is_request(const char *msg)
{
	json_t	*m = json_loads(msg, 0, NULL);
	bool	 r;

	r = json_object_get(m, "method") != NULL &&
	    json_object_get(m, "id") != NULL;
	json_decref(m);
	return r;
}

/* Send one message and take in the answer. MCPE_ENDED to go on. */
static enum mcp_end
post(struct hx *h, const char *msg)
{
	struct mcp_rpc		*rpc = h->h_run->mr_rpc;
	struct transport_result	 res = { .err_body = BUF_INIT };
	enum transport_outcome	 o;
	char			 why[400];

	h->h_id = is_request(msg) ? mcp_rpc_waiting(rpc) : -1;
	h->h_mode = 0;
	buf_reset(&h->h_body);
	h->h_sse = sse_new(MCP_BODY_MAX, on_event, h);
	o = xfer(h, NULL, msg, &res);
	if (o == XFER_ABORTED && h->h_mode == 2 && answered(h))
		o = XFER_OK;
	if (o == XFER_OK && (res.status < 200 || res.status > 299)) {
		snprintf(why, sizeof(why), "HTTP %ld from POST %s", res.status,
		    h->h_srv->ms_url);
		mcp_rpc_fail(rpc, why);
	} else if (o == XFER_OK && h->h_mode == 1)
		mcp_rpc_feed(rpc, h->h_body.b_data, h->h_body.b_len);
	else if (o == XFER_ABORTED)
		mcp_rpc_fail(rpc, "the server's answer is longer than 16 MiB");
	else if (o != XFER_OK && o != XFER_TIMEOUT && o != XFER_CANCELLED)
		mcp_rpc_fail(rpc, res.error);
	if (o == XFER_OK && h->h_keep[1].th_value[0] != '\0')
		memcpy(h->h_session, h->h_keep[1].th_value,
		    sizeof(h->h_session));
	if (o == XFER_OK && h->h_id >= 0 && !answered(h))
		mcp_rpc_fail(rpc, "the server ended its answer to a request "
		    "without answering it");
	sse_free(h->h_sse);
	h->h_sse = NULL;
	buf_free(&res.err_body);
	return o == XFER_TIMEOUT ? MCPE_TIMEOUT : o == XFER_CANCELLED ?
	    MCPE_CANCELLED : MCPE_ENDED;
}

/* The DELETE that ends the server's session (405 is fine). */
static void
close_session(struct hx *h)
{
	struct transport_result	 res = { .err_body = BUF_INIT };

	h->h_mode = 1;		/* whatever it answers is not read */
	buf_reset(&h->h_body);
	if (h->h_session[0] != '\0')
		xfer(h, "DELETE", NULL, &res);
	buf_free(&res.err_body);
}

enum mcp_end
mcp_http_run(const struct mcp_server *srv, struct mcp_run *run)
{
	struct hx	 h = { .h_run = run, .h_srv = srv,
			    .h_keep = { { "Content-Type", "" },
			    { "mcp-session-id", "" }, { NULL, "" } } };
	enum mcp_end	 e = MCPE_ENDED;
	char		*m;

	buf_init(&h.h_body);
	while (e == MCPE_ENDED && mcp_rpc_state(run->mr_rpc) == MCPS_RUNNING &&
	    (m = mcp_rpc_next(run->mr_rpc)) != NULL) {
		e = post(&h, m);
		free(m);
	}
	if (e == MCPE_ENDED)
		close_session(&h);
	buf_free(&h.h_body);
	return e;
}
