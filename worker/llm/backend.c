/* backend.c - one LLM call of a node: adapter choice, transport, errors that name the endpoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "backend.h"
#include "callcache.h"
#include "ep_error.h"
#include "gen_input.h"
#include "lines.h"
#include "output.h"
#include "sse.h"
#include "transport.h"
#include "url.h"

#define MAX_LINE	(1024 * 1024)		/* one SSE line or event */
#define MAX_BODY	(64 * 1024 * 1024)	/* a whole response */

static const struct adapter *const adapters[] = {
	&adapter_openai_chat,
	&adapter_openai_completion,
	&adapter_ollama_chat,
	&adapter_ollama_generate,
	&adapter_kobold,
	&adapter_claude,
};

const struct adapter *
adapter_for(enum conf_apitype_kind t)
{
	size_t	 i;

	for (i = 0; i < sizeof(adapters) / sizeof(adapters[0]); i++)
		if (adapters[i]->ad_type == t)
			return adapters[i];
	return NULL;
}

/* Transport state: an SSE parser, a line splitter (NDJSON) or a body
 * accumulator (non-streaming). */
struct xfer {
	struct call_state	 x_cs;
	const struct adapter	*x_ad;
	struct sse		*x_sse;
	struct lines		 x_lines;
	bool			 x_ndjson;
	struct buf		 x_body;
	bool			 x_bad;		/* adapter rejected data */
};

static int
stream_event(struct xfer *x, const char *ev, const char *data, size_t n)
{
	if (x->x_cs.cs_done)
		return 0;		/* trailing events after the end */
	if (x->x_ad->ad_event(&x->x_cs, ev, data, n) == -1) {
		x->x_bad = true;
		return -1;
	}
	return 0;
}

static int
sse_event(void *arg, const char *ev, size_t evlen, const char *data,
    size_t n)
{
	return stream_event(arg, ev, data, n);
}

static int
ndjson_line(void *arg, const char *line, size_t n)
{
	return stream_event(arg, NULL, line, n);
}

static int
on_data(void *arg, const char *p, size_t n)
{
	struct xfer	*x = arg;

	if (x->x_cs.cs_stop)
		return -1;	/* a filter ended the output: hang up */
	if (x->x_sse != NULL)
		return sse_feed(x->x_sse, p, n);
	if (x->x_ndjson)
		return lines_feed(&x->x_lines, p, n);
	if (x->x_body.b_len + n > MAX_BODY) {
		snprintf(x->x_cs.cs_error, sizeof(x->x_cs.cs_error),
		    "the response is larger than %d MiB", MAX_BODY >> 20);
		x->x_bad = true;
		return -1;
	}
	buf_add(&x->x_body, p, n);
	return 0;
}

/* Every backend error names the endpoint and its URL. */
#define fail(res, nc, ...)	ep_fail((res), (nc)->nc_ep, __VA_ARGS__)

/* Turn the transport outcome into the request result. */
static int
judge(struct xfer *x, const struct transport_result *lr, const struct node_call *nc,
    struct wresult *res)
{
	if (lr->outcome == XFER_ABORTED && x->x_cs.cs_stop)
		return 0;	/* we hung up on purpose */
	return ep_judge(lr, nc->nc_ep, x->x_cs.cs_error, res);
}

static int
finish_body(struct xfer *x, const struct node_call *nc, struct wresult *res)
{
	if (x->x_sse != NULL || x->x_ndjson) {
		if (x->x_sse != NULL)
			sse_finish(x->x_sse);
		else if (lines_finish(&x->x_lines) == -1 || x->x_bad) {
			fail(res, nc, 502, "backend_bad_response", "%s",
			    x->x_cs.cs_error[0] ? x->x_cs.cs_error :
			    "a line of the stream is too long");
			return -1;
		}
		if (!x->x_cs.cs_done && !x->x_cs.cs_stop &&
		    x->x_cs.cs_out->no_finish[0] == '\0' &&
		    !x->x_ad->ad_ends_on_close) {
			fail(res, nc, 502, "backend_truncated", "%s",
			    "the stream ended before it was complete");
			return -1;
		}
		return 0;
	}
	if (x->x_ad->ad_whole(&x->x_cs, x->x_body.b_data ? x->x_body.b_data :
	    "", x->x_body.b_len) == -1) {
		fail(res, nc, 502, "backend_bad_response", "%s",
		    x->x_cs.cs_error);
		return -1;
	}
	return 0;
}

static char *
url_for(const struct node_call *nc, const struct adapter *ad)
{
	const char	*base = nc->nc_ep->e_url;
	size_t		 n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	return xasprintf("%.*s%s", (int)n, base, ad->ad_path(nc->nc_stream));
}

#define MAX_HDRS	8

/* Content-Type plus the adapter's authentication lines (the default is
 * a Bearer token when the endpoint has an apiKey). The lines live in
 * auth; hdrs points into it. */
static void
headers(const struct node_call *nc, const struct adapter *ad,
    struct buf *auth, const char *hdrs[MAX_HDRS])
{
	char	*p, *nl;
	size_t	 k = 0;

	hdrs[k++] = "Content-Type: application/json";
	if (ad->ad_auth != NULL)
		ad->ad_auth(nc, auth);
	else if (nc->nc_ep->e_api_key[0] != '\0')
		buf_printf(auth, "Authorization: Bearer %s\n",
		    nc->nc_ep->e_api_key);
	for (p = auth->b_data; p != NULL && *p != '\0' && k + 1 < MAX_HDRS;
	    p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		*nl = '\0';
		hdrs[k++] = p;
	}
	hdrs[k] = NULL;
}

/* The chunk frames of the events read since the loop last waited go to
 * the gateway together, in one write, before it waits again: libcurl
 * hands a read's events over one HTTP chunk at a time. */
static void
flush_before_wait(void *arg)
{
	rq_flush(arg);
}

static int
transfer(struct rq *rq, struct xfer *x, const struct node_call *nc,
    const char *body, struct wresult *res)
{
	char			*url = url_for(nc, x->x_ad), shown[512];
	const char		*hdrs[MAX_HDRS];
	struct buf		 auth = BUF_INIT;
	struct transport_call		 call;
	struct transport_hooks	 hooks = { rq->rq_wake_fd, 250, rq_wake, rq };
	struct transport_result	 lr;
	int			 r;

	headers(nc, x->x_ad, &auth, hdrs);
	memset(&call, 0, sizeof(call));
	call = (struct transport_call){ url, hdrs, body, strlen(body),
	    nc->nc_user->u_connect_timeout_s * 1000, 0, on_data, x, 0, NULL,
	    NULL, NULL };
	memset(&lr, 0, sizeof(lr));
	url_shown(url, shown, sizeof(shown));
	log_debug("[rq %s] POST %s (%zu bytes)", rq->rq_id, shown,
	    strlen(body));
	log_debug("[rq %s] request: %s", rq->rq_id, log_text(body));
	transport_set_idle(flush_before_wait, rq);
	transport_perform(&call, &hooks, &lr);
	transport_set_idle(NULL, NULL);
	r = judge(x, &lr, nc, res);
	if (r == 0)
		r = finish_body(x, nc, res);
	if (r == 0 && x->x_cs.cs_cache != NULL)
		callcache_natives(x->x_cs.cs_cache, nc->nc_tool_calls);
	if (r == 0)
		output_finish(&x->x_cs);
	buf_free(&lr.err_body);
	if (auth.b_data != NULL)
		explicit_bzero(auth.b_data, auth.b_cap);	/* keys */
	buf_free(&auth);
	free(url);
	return r;
}

/* A turn on the endpoint when it (or --concurrency-level endpoint) has a
 * limit. Returns 0, or -1 with res filled. */
static int
take_slot(struct rq *rq, const struct node_call *nc, unsigned lim,
    struct wresult *res)
{
	switch (rq_slot_take(rq, nc->nc_ep->e_name, lim)) {
	case RQ_SLOT_OK:
		return 0;
	case RQ_SLOT_TIMEOUT:
		fail(res, nc, 503, "endpoint_busy", "busy: no turn among its "
		    "%u concurrent requests within %.1f s", lim,
		    (double)rq->rq_ep_wait_ms / 1000);
		return -1;
	default:
		res->r_status = RQ_CANCELLED;
		return -1;
	}
}

/* The call on the network: a slot, the transfer, the parsers. */
static int
call_backend(struct rq *rq, struct xfer *x, const struct node_call *nc,
    const char *body, struct wresult *res)
{
	unsigned	 lim = rq_slot_limit(rq, nc->nc_ep->e_max_concurrent);
	int		 r;

	if ((r = take_slot(rq, nc, lim, res)) != 0)
		return r;
	if (nc->nc_stream && x->x_ad->ad_framing == AD_NDJSON) {
		x->x_ndjson = true;
		lines_init(&x->x_lines, MAX_LINE, ndjson_line, x);
	} else if (nc->nc_stream)
		x->x_sse = sse_new(MAX_LINE, sse_event, x);
	r = transfer(rq, x, nc, body, res);
	rq_slot_give(rq, nc->nc_ep->e_name, lim);
	return r;
}

int
backend_call(struct rq *rq, const struct node_call *nc, struct node_out *out,
    struct wresult *res)
{
	struct xfer		 x;
	struct call_cache	 cc;
	struct cache_entry	 hit;
	char			*body, msg[512];
	int			 r;

	memset(&x, 0, sizeof(x));
	if (conf_apitype_embeds(nc->nc_at->a_type)) {
		conf_embed_not_for_generation(nc->nc_ep->e_name,
		    nc->nc_at->a_type_name, msg, sizeof(msg));
		fail(res, nc, 500, "embeddings_endpoint", "%s", msg);
		return -1;
	}
	if ((x.x_ad = adapter_for(nc->nc_at->a_type)) == NULL) {
		fail(res, nc, 501, "unsupported_api_type", "api type '%s' is "
		    "not supported by this version of Sluice",
		    nc->nc_at->a_type_name);
		return -1;
	}
	x.x_cs = (struct call_state){ rq, nc, out, false, false, "", false,
	    { BUF_INIT, BUF_INIT, BUF_INIT, false }, NULL, NULL };
	body = x.x_ad->ad_body(nc);
	if ((r = callcache_begin(&cc, rq, nc, x.x_ad->ad_name, body, &hit)) ==
	    1) {
		output_replay(&x.x_cs, &hit);
		cache_entry_clear(&hit);
		r = 0;
	} else {
		x.x_cs.cs_cache = &cc;
		if ((r = call_backend(rq, &x, nc, body, res)) == 0)
			callcache_end(&cc, rq, nc, out, x.x_cs.cs_stop);
	}
	callcache_free(&cc);
	json_decref(x.x_cs.cs_markers);
	clean_out_free(&x.x_cs.cs_co);
	sse_free(x.x_sse);
	lines_free(&x.x_lines);
	buf_free(&x.x_body);
	free(body);
	return r;
}
