/* mock_web.c - a scripted web server for the WebFetch tests: any status, headers and body, redirects, big and slow bodies, and a log of what it was sent. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/queue.h>
#include <sys/socket.h>

/*
 * Routes (query parameters %-decoded):
 *   /r?status=N&reason=R&ctype=T&body=B&loc=L&hdr=Name:Value...
 *	answers status N (200) with reason R ("OK"), Content-Type T (none
 *	when absent), Location L, each hdr as a header (repeats kept),
 *	body B ("")
 *   /chain/N	302 to the relative "N-1" (a path in the same folder), and
 *		200 "end of chain" at 0
 *   /big?n=N	200 text/plain, N bytes of 'a', sent in 16 KiB chunks
 *   /slow?n=N&ms=M	200 text/plain, N chunks "tick\n" one every M ms
 *   /echo	200 application/json: the request as /_last shows it
 *   /_log	{"count": N, "requests": [...]}: every request but the
 *		control ones, oldest first: {"method", "uri", "host",
 *		"headers": {name: value}, "body"}
 *   /_last	the last of those (null before any)
 *   /_stats	{"gone": N}: connections of /slow the client closed early
 *   /_reset	forgets the log
 * It listens on 127.0.0.1 and on 127.0.0.2, the same port: two hosts.
 */

#define MW_CHUNK	16384

static struct event_base	*base;
static json_t			*reqlog;
static long			 gone;
TAILQ_HEAD(pending_list, pending);
static struct pending_list	 pendings;

/* A slow or big body being sent. */
struct pending {
	TAILQ_ENTRY(pending)	 p_entry;
	struct evhttp_request	*p_req;
	struct event		*p_ev;
	long			 p_left;
	long			 p_ms;
	bool			 p_slow;
	bool			 p_done;		/* ended, or the client
						   left */
	bool			 p_ended;	/* by us */
};

static const char *
method_name(enum evhttp_cmd_type t)
{
	switch (t) {
	case EVHTTP_REQ_GET: return "GET";
	case EVHTTP_REQ_POST: return "POST";
	case EVHTTP_REQ_HEAD: return "HEAD";
	case EVHTTP_REQ_PUT: return "PUT";
	case EVHTTP_REQ_DELETE: return "DELETE";
	case EVHTTP_REQ_OPTIONS: return "OPTIONS";
	case EVHTTP_REQ_TRACE: return "TRACE";
	case EVHTTP_REQ_CONNECT: return "CONNECT";
	case EVHTTP_REQ_PATCH: return "PATCH";
	default: return "?";
	}
}

static json_t *
describe(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct evkeyval		*kv;
	json_t			*hs = json_object(), *v;
	size_t			 n = evbuffer_get_length(in);
	char			*body = malloc(n + 1);

	evbuffer_copyout(in, body, n);
	body[n] = '\0';
	TAILQ_FOREACH(kv, h, next)
		json_object_set_new(hs, kv->key, json_string(kv->value));
	v = json_pack("{s:s, s:s, s:s, s:o, s:s%}", "method",
	    method_name(evhttp_request_get_command(req)), "uri",
	    evhttp_request_get_uri(req), "host",
	    evhttp_find_header(h, "Host") ? evhttp_find_header(h, "Host") : "",
	    "headers", hs, "body", body, n);
	free(body);
	return v;
}

static void
send_json(struct evhttp_request *req, json_t *v)
{
	char		*s = json_dumps(v, JSON_ENCODE_ANY);
	struct evbuffer	*b = evbuffer_new();

	evbuffer_add(b, s, strlen(s));
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
	free(s);
	json_decref(v);
}

static void
on_route_r(struct evhttp_request *req, struct evkeyvalq *q)
{
	struct evkeyvalq	*out = evhttp_request_get_output_headers(req);
	struct evkeyval		*kv;
	struct evbuffer		*b = evbuffer_new();
	const char		*v, *colon;
	char			 name[128];
	int			 status = 200;

	if ((v = evhttp_find_header(q, "status")) != NULL)
		status = atoi(v);
	if ((v = evhttp_find_header(q, "ctype")) != NULL)
		evhttp_add_header(out, "Content-Type", v);
	if ((v = evhttp_find_header(q, "loc")) != NULL)
		evhttp_add_header(out, "Location", v);
	TAILQ_FOREACH(kv, q, next) {
		if (strcmp(kv->key, "hdr") != 0 ||
		    (colon = strchr(kv->value, ':')) == NULL)
			continue;
		snprintf(name, sizeof(name), "%.*s",
		    (int)(colon - kv->value), kv->value);
		evhttp_add_header(out, name, colon + 1);
	}
	if ((v = evhttp_find_header(q, "body")) != NULL)
		evbuffer_add(b, v, strlen(v));
	evhttp_send_reply(req, status, evhttp_find_header(q, "reason") ?
	    evhttp_find_header(q, "reason") : "OK", b);
	evbuffer_free(b);
}

static void
on_chain(struct evhttp_request *req, const char *path)
{
	long		 n = atol(path + strlen("/chain/"));
	char		 loc[32];
	struct evbuffer	*b = evbuffer_new();

	if (n <= 0) {
		evbuffer_add_printf(b, "end of chain");
		evhttp_send_reply(req, 200, "OK", b);
	} else {
		snprintf(loc, sizeof(loc), "%ld", n - 1);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Location", loc);
		evbuffer_add_printf(b, "to %s", loc);
		evhttp_send_reply(req, 302, "Found", b);
	}
	evbuffer_free(b);
}

/* Forget p. A request whose client left was handed back to us by
 * evhttp (detached from its connection): ending it frees it. */
static void
pending_free(struct pending *p)
{
	if (p->p_done && !p->p_ended)
		evhttp_send_reply_end(p->p_req);
	TAILQ_REMOVE(&pendings, p, p_entry);
	event_free(p->p_ev);
	free(p);
}

static void
on_close(struct evhttp_connection *c, void *arg)
{
	struct pending	*p = arg;

	if (!p->p_done)
		gone++;
	p->p_done = true;
}

/* The next piece of a big or slow body. */
static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct pending	*p = arg;
	struct evbuffer	*b;
	struct timeval	 tv;
	long		 n;

	if (p->p_done) {	/* the client went away */
		pending_free(p);
		return;
	}
	if (p->p_left <= 0) {
		p->p_done = p->p_ended = true;
		evhttp_connection_set_closecb(evhttp_request_get_connection(
		    p->p_req), NULL, NULL);
		evhttp_send_reply_end(p->p_req);
		pending_free(p);
		return;
	}
	b = evbuffer_new();
	if (p->p_slow) {
		evbuffer_add_printf(b, "tick\n");
		p->p_left--;
	} else {
		n = p->p_left < MW_CHUNK ? p->p_left : MW_CHUNK;
		while (n-- > 0)
			evbuffer_add(b, "a", 1);
		p->p_left -= evbuffer_get_length(b);
	}
	evhttp_send_reply_chunk(p->p_req, b);
	evbuffer_free(b);
	tv.tv_sec = p->p_ms / 1000;
	tv.tv_usec = (p->p_ms % 1000) * 1000;
	event_add(p->p_ev, &tv);
}

static void
on_stream(struct evhttp_request *req, struct evkeyvalq *q, bool slow)
{
	struct pending	*p = calloc(1, sizeof(*p));
	const char	*v;

	p->p_req = req;
	p->p_slow = slow;
	p->p_left = (v = evhttp_find_header(q, "n")) ? atol(v) : 10;
	p->p_ms = slow && (v = evhttp_find_header(q, "ms")) ? atol(v) : 0;
	p->p_ev = evtimer_new(base, on_tick, p);
	TAILQ_INSERT_TAIL(&pendings, p, p_entry);
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    on_close, p);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain");
	evhttp_send_reply_start(req, 200, "OK");
	on_tick(-1, 0, p);
}

/* The control routes; 0 when path is none of them. */
static int
on_control(struct evhttp_request *req, const char *path)
{
	if (strcmp(path, "/_log") == 0)
		send_json(req, json_pack("{s:i, s:O}", "count",
		    (json_int_t)json_array_size(reqlog), "requests", reqlog));
	else if (strcmp(path, "/_last") == 0)
		send_json(req, json_incref(json_array_size(reqlog) ?
		    json_array_get(reqlog, json_array_size(reqlog) - 1) :
		    json_null()));
	else if (strcmp(path, "/_stats") == 0)
		send_json(req, json_pack("{s:i}", "gone", (json_int_t)gone));
	else if (strcmp(path, "/_reset") == 0) {
		json_array_clear(reqlog);
		gone = 0;
		send_json(req, json_object());
	} else
		return 0;
	return 1;
}

static void
on_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri	*u = evhttp_request_get_evhttp_uri(req);
	const char		*path = evhttp_uri_get_path(u);
	const char		*query = evhttp_uri_get_query(u);
	struct evkeyvalq	 q;

	if (path == NULL)
		path = "/";
	if (on_control(req, path))
		return;
	json_array_append_new(reqlog, describe(req));
	TAILQ_INIT(&q);
	evhttp_parse_query_str(query ? query : "", &q);
	if (strcmp(path, "/r") == 0)
		on_route_r(req, &q);
	else if (strncmp(path, "/chain/", 7) == 0)
		on_chain(req, path);
	else if (strcmp(path, "/big") == 0)
		on_stream(req, &q, false);
	else if (strcmp(path, "/slow") == 0)
		on_stream(req, &q, true);
	else if (strcmp(path, "/echo") == 0)
		send_json(req, json_incref(json_array_get(reqlog,
		    json_array_size(reqlog) - 1)));
	else {
		struct evbuffer	*b = evbuffer_new();

		evbuffer_add_printf(b, "no route %s", path);
		evhttp_send_reply(req, 404, "Not Found", b);
		evbuffer_free(b);
	}
	evhttp_clear_headers(&q);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopexit(base, NULL);
}

/* Listen on 127.0.0.1 and on 127.0.0.2, the same port: a second host
 * for cross-host redirects that needs no /etc/hosts ("localhost" is not
 * in a bare debootstrap root). The port the kernel picks on the first
 * may be taken on the second (other tests' client sockets bound to
 * 127.0.0.x), so pick again a few times. The port into *sa; -1 when no
 * pair could be had. */
static int
bind_both(struct evhttp *h, struct sockaddr_in *sa)
{
	struct evhttp_bound_socket	*bs;
	ev_socklen_t			 len;
	int				 i;

	for (i = 0; i < 50; i++) {
		len = sizeof(*sa);
		if ((bs = evhttp_bind_socket_with_handle(h, "127.0.0.1", 0)) ==
		    NULL || getsockname(evhttp_bound_socket_get_fd(bs),
		    (struct sockaddr *)sa, &len) != 0)
			return -1;
		if (evhttp_bind_socket(h, "127.0.0.2", ntohs(sa->sin_port)) == 0)
			return 0;
		evhttp_del_accept_socket(h, bs);
	}
	return -1;
}

int
main(int argc, char *argv[])
{
	struct evhttp			*http;
	struct event			*ev;
	struct sockaddr_in		 sa;

	if (argc != 1) {
		fprintf(stderr, "usage: mock-web\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	reqlog = json_array();
	TAILQ_INIT(&pendings);
	base = event_base_new();
	http = evhttp_new(base);
	evhttp_set_default_content_type(http, NULL);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(http, on_request, NULL);
	if (bind_both(http, &sa) == -1)
		return 1;
	/* the handler first: a test may stop us as soon as we print */
	ev = evsignal_new(base, SIGTERM, on_signal, NULL);
	event_add(ev, NULL);
	printf("mock-web listening on 127.0.0.1:%d\n", ntohs(sa.sin_port));
	fflush(stdout);
	event_base_dispatch(base);
	/* bodies still going: those whose client left are ours to free,
	 * the others go with their connections */
	while (!TAILQ_EMPTY(&pendings)) {
		struct pending	*p = TAILQ_FIRST(&pendings);

		if (!p->p_done)
			evhttp_connection_set_closecb(
			    evhttp_request_get_connection(p->p_req), NULL, NULL);
		pending_free(p);
	}
	event_free(ev);
	evhttp_free(http);
	event_base_free(base);
	json_decref(reqlog);
	return 0;
}
