/* mock_research.c - a scriptable Offline Researcher: POST /search. */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include "../common/log.h"
#include "../common/xmem.h"

/*
 * Single-threaded, libevent's evhttp. Every request other than the
 * controls is answered as scripted (by default 200 with an "answered"
 * envelope) and recorded. Controls:
 *   POST /_script  {"status": N, "body": "text", "delay_ms": N,
 *                   "hang": bool}: how every later request is answered
 *                   (absent members: 200, the default body, 0, false);
 *                   "hang" never answers.
 *   GET  /_last    the last request: {"method", "path", "headers":
 *                   {name: value}, "body"}, or {} before any.
 *   GET  /_stats   {"requests": N, "pending": N, "gone": N}: "gone"
 *                   counts clients that left before their answer.
 * SIGTERM or SIGINT: answers nothing more, frees everything, exits 0.
 */

#define DEFAULT_BODY	"{\"status\": \"answered\", \"answer\": \"mock " \
			"answer\", \"no_information_found\": false, " \
			"\"sources\": []}"

/* A request whose answer waits (delay or hang). */
struct pend {
	TAILQ_ENTRY(pend)		 p_entry;
	struct evhttp_request		*p_req;
	struct evhttp_connection	*p_evcon;
	struct event			*p_timer;	/* NULL: hangs */
	struct event			*p_watch;	/* sees it go */
};

TAILQ_HEAD(pend_list, pend);

static struct {
	struct event_base	*base;
	struct evhttp		*http;
	struct event		*sigterm, *sigint;
	struct pend_list	 pending;
	json_t			*last;
	long			 requests, npending, gone;
	int			 status, delay_ms;
	char			*body;
	bool			 hang;
	const char		*listen;
} mr;

static void	on_close(struct evhttp_connection *, void *);

static const char *
method_name(enum evhttp_cmd_type c)
{
	switch (c) {
	case EVHTTP_REQ_GET:	return "GET";
	case EVHTTP_REQ_POST:	return "POST";
	case EVHTTP_REQ_PUT:	return "PUT";
	case EVHTTP_REQ_HEAD:	return "HEAD";
	case EVHTTP_REQ_DELETE:	return "DELETE";
	default:		return "OTHER";
	}
}

/* The request body as a new NUL-terminated string. */
static char *
body_of(struct evhttp_request *req)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	size_t		 n = evbuffer_get_length(in);
	char		*s = xmalloc(n + 1);

	evbuffer_copyout(in, s, n);
	s[n] = '\0';
	return s;
}

static void
reply(struct evhttp_request *req, int code, const char *body)
{
	struct evbuffer	*b = evbuffer_new();

	if (b == NULL)
		fatalx("evbuffer_new");
	evbuffer_add(b, body, strlen(body));
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, code, "Mock", b);
	evbuffer_free(b);
}

static void
reply_json(struct evhttp_request *req, json_t *v)
{
	char	*s = json_dumps(v, JSON_COMPACT);

	reply(req, 200, s);
	free(s);
	json_decref(v);
}

static void
record(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;
	json_t			*hdrs = json_object();
	char			*body = body_of(req);

	TAILQ_FOREACH(kv, h, next)
		json_object_set_new(hdrs, kv->key, json_string(kv->value));
	json_decref(mr.last);
	mr.last = json_pack("{s:s, s:s, s:o, s:s}", "method",
	    method_name(evhttp_request_get_command(req)), "path",
	    evhttp_request_get_uri(req), "headers", hdrs, "body", body);
	if (mr.last == NULL)
		mr.last = json_object();	/* a body that is not UTF-8 */
	free(body);
	mr.requests++;
}

static void
script(struct evhttp_request *req)
{
	char		*s = body_of(req);
	json_t		*o = json_loads(s, 0, NULL);
	const char	*body;

	free(s);
	if (!json_is_object(o)) {
		json_decref(o);
		reply(req, 400, "{\"error\": \"want a JSON object\"}");
		return;
	}
	mr.status = (int)json_integer_value(json_object_get(o, "status"));
	if (mr.status == 0)
		mr.status = 200;
	body = json_string_value(json_object_get(o, "body"));
	free(mr.body);
	mr.body = xstrdup(body != NULL ? body : DEFAULT_BODY);
	mr.delay_ms = (int)json_integer_value(json_object_get(o,
	    "delay_ms"));
	mr.hang = json_is_true(json_object_get(o, "hang"));
	json_decref(o);
	reply(req, 200, "{}");
}

/* Forget p; the caller has dealt with its request and connection. */
static void
pend_free(struct pend *p)
{
	TAILQ_REMOVE(&mr.pending, p, p_entry);
	mr.npending--;
	if (p->p_timer != NULL)
		event_free(p->p_timer);
	event_free(p->p_watch);
	free(p);
}

/* The delay is over: the scripted answer. */
static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct pend	*p = arg;

	evhttp_connection_set_closecb(p->p_evcon, NULL, NULL);
	reply(p->p_req, mr.status, mr.body);
	pend_free(p);
}

/* evhttp does not read the socket while the answer waits: peek, to see
 * the client leave. */
static void
on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct pend			*p = arg;
	struct evhttp_connection	*evcon = p->p_evcon;
	char				 c;
	ssize_t				 n;

	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0 || (n == -1 && (errno == EAGAIN || errno == EINTR)))
		return;
	mr.gone++;
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	pend_free(p);
	evhttp_connection_free(evcon);	/* and the request with it */
}

static void
on_close(struct evhttp_connection *evcon, void *arg)
{
	mr.gone++;
	pend_free(arg);
}

static void
hold(struct evhttp_request *req)
{
	struct pend		*p = xcalloc(1, sizeof(*p));
	struct timeval		 tv = { mr.delay_ms / 1000,
				    (mr.delay_ms % 1000) * 1000 };
	evutil_socket_t		 fd;

	p->p_req = req;
	p->p_evcon = evhttp_request_get_connection(req);
	fd = bufferevent_getfd(evhttp_connection_get_bufferevent(
	    p->p_evcon));
	p->p_watch = event_new(mr.base, fd, EV_READ | EV_PERSIST, on_watch,
	    p);
	if (p->p_watch == NULL || event_add(p->p_watch, NULL) == -1)
		fatalx("event_new");
	if (!mr.hang && ((p->p_timer = evtimer_new(mr.base, on_timer,
	    p)) == NULL || evtimer_add(p->p_timer, &tv) == -1))
		fatalx("evtimer_new");
	TAILQ_INSERT_TAIL(&mr.pending, p, p_entry);
	mr.npending++;
	evhttp_connection_set_closecb(p->p_evcon, on_close, p);
}

static void
on_request(struct evhttp_request *req, void *arg)
{
	const char	*uri = evhttp_request_get_uri(req);

	if (strcmp(uri, "/_script") == 0)
		script(req);
	else if (strcmp(uri, "/_last") == 0)
		reply_json(req, mr.last != NULL ? json_incref(mr.last) :
		    json_object());
	else if (strcmp(uri, "/_stats") == 0)
		reply_json(req, json_pack("{s:I, s:I, s:I}", "requests",
		    (json_int_t)mr.requests, "pending",
		    (json_int_t)mr.npending, "gone", (json_int_t)mr.gone));
	else {
		record(req);
		if (mr.hang || mr.delay_ms > 0)
			hold(req);
		else
			reply(req, mr.status, mr.body);
	}
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(mr.base);
}

static void
listen_on(const char *spec)
{
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 a;
	socklen_t			 len = sizeof(a);
	char				*host = xstrdup(spec), *port;

	if ((port = strrchr(host, ':')) == NULL)
		fatalx_code(EX_USAGE, "--listen %s: want HOST:PORT", spec);
	*port++ = '\0';
	bs = evhttp_bind_socket_with_handle(mr.http, host,
	    (ev_uint16_t)atoi(port));
	if (bs == NULL)
		fatalx("listen on %s failed", spec);
	if (getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&a, &len) == -1)
		fatal("getsockname");
	printf("mock-research listening on %s:%d\n", host,
	    ntohs(a.sin_port));
	fflush(stdout);
	free(host);
}

static void
setup(void)
{
	TAILQ_INIT(&mr.pending);
	mr.status = 200;
	mr.body = xstrdup(DEFAULT_BODY);
	if ((mr.base = event_base_new()) == NULL ||
	    (mr.http = evhttp_new(mr.base)) == NULL)
		fatalx("libevent setup failed");
	evhttp_set_gencb(mr.http, on_request, NULL);
	evhttp_set_allowed_methods(mr.http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE);
	mr.sigterm = evsignal_new(mr.base, SIGTERM, on_signal, NULL);
	mr.sigint = evsignal_new(mr.base, SIGINT, on_signal, NULL);
	if (mr.sigterm == NULL || mr.sigint == NULL ||
	    event_add(mr.sigterm, NULL) == -1 ||
	    event_add(mr.sigint, NULL) == -1)
		fatalx("libevent signals setup failed");
}

static void
teardown(void)
{
	struct pend	*p;

	while ((p = TAILQ_FIRST(&mr.pending)) != NULL) {
		evhttp_connection_set_closecb(p->p_evcon, NULL, NULL);
		pend_free(p);
	}
	evhttp_free(mr.http);
	json_decref(mr.last);
	free(mr.body);
	event_free(mr.sigterm);
	event_free(mr.sigint);
	event_base_free(mr.base);
	libevent_global_shutdown();
}

static void
parse_args(int argc, char *argv[])
{
	static const struct option	 opts[] = {
		{ "listen",	required_argument,	NULL, 'l' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ NULL,		0,			NULL, 0 }
	};
	int				 ch;

	mr.listen = "127.0.0.1:0";
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'l')
			mr.listen = optarg;
		else if (ch != 'q') {
			fprintf(stderr, "usage: mock-research "
			    "[--listen HOST:PORT] [--quiet]\n");
			exit(EX_USAGE);
		}
	}
}

int
main(int argc, char *argv[])
{
	parse_args(argc, argv);
	log_procinit("mock-research");
	log_init(LOG_LVL_WARN);
	signal(SIGPIPE, SIG_IGN);
	setup();
	listen_on(mr.listen);
	event_base_dispatch(mr.base);
	teardown();
	return 0;
}
