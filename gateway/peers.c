/* peers.c - cancellation across gateways: a DELETE for a request that does not run here is asked of every peer in "peers". */
#include <sys/queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>

#include "../common/buf.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "gw.h"
#include "http.h"
#include "peers.h"
#include "peerurl.h"

struct fwd;

/* One peer asked. */
struct call {
	struct fwd			*c_fwd;
	struct evhttp_connection	*c_ec;
	char				*c_peer;	/* http://HOST:PORT */
	bool				 c_done;
};

/* One DELETE being asked of the peers. */
struct fwd {
	LIST_ENTRY(fwd)		 f_entry;
	struct gw		*f_gw;
	struct http_conn	*f_conn;	/* NULL: answered, or gone */
	peers_answer_fn		 f_answer;
	char			*f_id;
	struct call		 f_calls[GW_MAX_PEERS];
	size_t			 f_ncalls;
	size_t			 f_pending;	/* calls not done */
	bool			 f_starting;	/* peers_cancel's loop runs */
	struct event		*f_reap;	/* frees it, outside evhttp */
};

LIST_HEAD(fwd_list, fwd);

struct peers {
	struct fwd_list		 p_fwds;
};

static void
fwd_free(struct fwd *f)
{
	size_t	 i;

	for (i = 0; i < f->f_ncalls; i++) {
		if (f->f_calls[i].c_ec != NULL)
			evhttp_connection_free(f->f_calls[i].c_ec);
		free(f->f_calls[i].c_peer);
	}
	if (f->f_reap != NULL)
		event_free(f->f_reap);
	LIST_REMOVE(f, f_entry);
	free(f->f_id);
	free(f);
}

/* Every peer has answered (or not in time): a client still waiting
 * learns that none runs the request. */
static void
reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fwd	*f = arg;

	if (f->f_conn != NULL) {
		log_info("[cancel %s] no peer runs it", f->f_id);
		f->f_answer(f->f_conn, f->f_id, false);
	}
	fwd_free(f);
}

static void
on_gone(void *owner)
{
	struct fwd	*f = owner;

	f->f_conn = NULL;
}

static void
call_done(struct evhttp_request *er, void *arg)
{
	struct call	*c = arg;
	struct fwd	*f = c->c_fwd;
	int		 code = er != NULL ?
			    evhttp_request_get_response_code(er) : 0;

	if (c->c_done)
		return;
	c->c_done = true;
	f->f_pending--;
	if (code == 200 && f->f_conn != NULL) {
		log_info("[cancel %s] cancelled by peer %s", f->f_id,
		    c->c_peer);
		f->f_answer(f->f_conn, f->f_id, true);
		f->f_conn = NULL;
	} else if (code == 0)
		log_warnx("[cancel %s] peer %s: no answer", f->f_id,
		    c->c_peer);
	else if (code != 200 && code != 404)
		log_warnx("[cancel %s] peer %s: status %d", f->f_id,
		    c->c_peer, code);
	if (f->f_pending == 0 && !f->f_starting)
		event_active(f->f_reap, EV_TIMEOUT, 0);
}

/* The forwarded DELETE's headers and body. */
static void
fill_request(struct fwd *f, struct evhttp_request *er, const char *host,
    int port, const struct http_request *r, const struct buf *body)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(er);
	const char		*auth = http_header(r, "Authorization");
	char			 v[300];

	snprintf(v, sizeof(v), "%s:%d", host, port);
	evhttp_add_header(h, "Host", v);
	/* libevent counts no body for a DELETE by itself, but sends it */
	snprintf(v, sizeof(v), "%zu", body->b_len);
	evhttp_add_header(h, "Content-Length", v);
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, PEERS_HEADER, peers_node_name(f->f_gw));
	if (auth != NULL)
		evhttp_add_header(h, "Authorization", auth);
	evbuffer_add(evhttp_request_get_output_buffer(er), body->b_data,
	    body->b_len);
}

/* Send the DELETE to one peer; false when it could not even start. */
static bool
call_start(struct fwd *f, struct call *c, const struct http_request *r,
    const struct buf *body)
{
	struct evhttp_request	*er;
	char			 host[256];
	int			 port;

	if (peerurl_split(c->c_peer, host, sizeof(host), &port) == -1)
		return false;
	c->c_ec = evhttp_connection_base_new(f->f_gw->g_base, NULL, host,
	    (unsigned short)port);
	if (c->c_ec == NULL)
		return false;
	evhttp_connection_set_timeout(c->c_ec, PEERS_TIMEOUT_S);
	evhttp_connection_set_retries(c->c_ec, 0);
	if ((er = evhttp_request_new(call_done, c)) == NULL)
		return false;
	fill_request(f, er, host, port, r, body);
	return evhttp_make_request(c->c_ec, er, EVHTTP_REQ_DELETE,
	    r->path) == 0;	/* on failure libevent freed er */
}

static struct peers *
peers_of(struct gw *g)
{
	if (g->g_peers == NULL) {
		g->g_peers = xcalloc(1, sizeof(*g->g_peers));
		LIST_INIT(&g->g_peers->p_fwds);
	}
	return g->g_peers;
}

static struct fwd *
fwd_new(struct gw *g, struct http_conn *c, peers_answer_fn answer,
    const char *id)
{
	struct fwd	*f = xcalloc(1, sizeof(*f));

	f->f_gw = g;
	f->f_conn = c;
	f->f_answer = answer;
	f->f_id = xstrdup(id);
	f->f_reap = event_new(g->g_base, -1, 0, reap_cb, f);
	if (f->f_reap == NULL)
		fatalx("event_new failed");
	LIST_INSERT_HEAD(&peers_of(g)->p_fwds, f, f_entry);
	return f;
}

int
peers_cancel(struct gw *g, struct http_conn *c, const struct http_request *r,
    const char *id, peers_answer_fn answer)
{
	struct fwd	*f;
	struct call	*call;
	struct buf	 body = BUF_INIT;
	size_t		 i;

	if (g->g_conf.c_peers[0] == NULL ||
	    http_header(r, PEERS_HEADER) != NULL)
		return -1;
	f = fwd_new(g, c, answer, id);
	http_set_owner(c, f, on_gone, NULL);
	buf_adds(&body, "{\"request_id\":\"");
	json_escape(&body, id, strlen(id));
	buf_adds(&body, "\"}");
	/* libevent may call call_done before evhttp_make_request returns
	 * (a connection refused at once): counted first, reaped after. */
	f->f_starting = true;
	for (i = 0; i < GW_MAX_PEERS && g->g_conf.c_peers[i] != NULL; i++) {
		call = &f->f_calls[f->f_ncalls++];
		call->c_fwd = f;
		call->c_peer = xstrdup(g->g_conf.c_peers[i]);
		f->f_pending++;
		if (!call_start(f, call, r, &body) && !call->c_done) {
			call->c_done = true;
			f->f_pending--;
			log_warnx("[cancel %s] peer %s: cannot ask it", id,
			    call->c_peer);
		}
	}
	f->f_starting = false;
	buf_free(&body);
	log_info("[cancel %s] not running here: asking %zu peer%s", id,
	    f->f_ncalls, f->f_ncalls == 1 ? "" : "s");
	if (f->f_pending == 0)
		event_active(f->f_reap, EV_TIMEOUT, 0);
	return 0;
}

void
peers_free(struct gw *g)
{
	struct fwd	*f;

	if (g->g_peers == NULL)
		return;
	while ((f = LIST_FIRST(&g->g_peers->p_fwds)) != NULL)
		fwd_free(f);
	free(g->g_peers);
	g->g_peers = NULL;
}

const char *
peers_node_name(const struct gw *g)
{
	static char	 host[256];

	if (g->g_conf.c_node_name != NULL)
		return g->g_conf.c_node_name;
	if (host[0] == '\0' && gethostname(host, sizeof(host) - 1) == -1)
		snprintf(host, sizeof(host), "sluice");
	return host;
}
