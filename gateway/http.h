/* http.h - HTTP/1.1 server on libevent bufferevents and llhttp, with limits. */
#ifndef SLUICE_HTTP_H
#define SLUICE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/uuid.h"

struct event_base;
struct http_server;
struct http_conn;

struct http_limits {
	size_t		 max_header_bytes;	/* request line + headers: 16 KiB */
	size_t		 max_headers;		/* header count: 100 */
	size_t		 max_url;		/* 8 KiB */
	size_t		 max_body;		/* 4 MiB */
	unsigned	 header_timeout_ms;	/* whole head must arrive: 10 s */
	unsigned	 body_timeout_ms;	/* whole body must arrive: 60 s */
	unsigned	 keepalive_timeout_ms;	/* idle between requests: 75 s */
	unsigned	 max_conns;		/* open connections: 1024 */
	size_t		 out_high_water;	/* output bytes before "full": 1 MiB */
	unsigned	 max_conns_per_ip;	/* open connections from one
						   client address: 512, 0 =
						   no such cap */
};

/* Fill l with the defaults quoted above. */
void	http_limits_default(struct http_limits *l);

enum http_method {
	HTTP_OTHER = 0, HTTP_GET, HTTP_HEAD, HTTP_POST, HTTP_PUT, HTTP_DELETE,
	HTTP_OPTIONS,
};

struct http_header {
	const char	*name;		/* NUL-terminated, as received */
	const char	*value;		/* NUL-terminated, OWS trimmed */
};

/* A complete request. Every pointer is owned by the connection and stays
 * valid until the reply to this request has been ended (http_reply,
 * http_stream_end) or the gone callback has run. */
struct http_request {
	enum http_method	 method;
	const char		*method_name;
	const char		*path;		/* target before '?', raw */
	const char		*query;		/* after '?', or "" */
	int			 version_minor;	/* 0 or 1 (HTTP/1.x) */
	bool			 keep_alive;	/* client asked to keep open */
	const struct http_header *headers;
	size_t			 nheaders;
	const char		*body;		/* NUL-terminated for convenience */
	size_t			 body_len;
	char			 id[UUID_BUFLEN];	/* X-Request-Id value */
	const char		*peer;		/* "127.0.0.1:40312" */
	const char		*local;		/* the address the client
						   reached: "127.0.0.1:5050",
						   "[::ffff:10.0.0.2]:5050"
						   on a dual-stack socket,
						   "unix", or "" */
};

/* Called once per complete request. The handler must eventually end the
 * reply (now or later, from any callback) unless the gone callback
 * fires first. No further request on this connection is parsed until
 * then (pipelined bytes wait in the input buffer). */
typedef void	(*http_handler)(struct http_conn *, const struct http_request *,
		    void *arg);

/* Builds the JSON body of errors the server answers by itself (400 bad
 * request, 404 from handlers, 408, 413, 414, 431, 503 over the connection
 * cap, 429 over the per-address cap). path may be NULL when the error
 * came before the URL was known. Returns a malloc'ed NUL-terminated
 * string the server frees. */
typedef char	*(*http_error_fmt)(const char *path, int status,
		    const char *message, void *arg);

/* The client of a pending request went away (EOF, reset, write error or
 * server shutdown). Runs at most once per request and never after the
 * reply ended. The http_conn pointer must not be used afterwards. */
typedef void	(*http_gone_cb)(void *owner);

/* Output dropped below half the high-water mark after http_out_full()
 * reported full. */
typedef void	(*http_drain_cb)(void *owner);

/* How one reply ended, for metrics and the access log. */
struct http_done {
	int		 hd_status;	/* sent, or 499 when the client left
					   before any head */
	size_t		 hd_bytes;	/* body bytes queued */
	uint64_t	 hd_total_us;	/* request complete to reply end */
	int64_t		 hd_ttfb_us;	/* to the first byte, -1 if none */
	const char	*hd_route;	/* http_set_route's tag or NULL */
	long		 hd_tag;	/* http_set_tag's value or 0 */
	bool		 hd_client_gone;
};

/* Called once per request when its reply ends or its client leaves;
 * also for errors the server answers by itself (route NULL). */
typedef void	(*http_done_cb)(const struct http_request *,
		    const struct http_done *, void *arg);

/* Create a server on base. Returns NULL on allocation failure. */
struct http_server	*http_server_new(struct event_base *base,
			    const struct http_limits *lim, http_handler h,
			    http_error_fmt ef, void *arg);

/* New limits for connections and requests from now on (reload). */
void	http_server_set_limits(struct http_server *, const struct http_limits *);

/* Install the done hook (NULL to remove). */
void	http_server_on_done(struct http_server *, http_done_cb, void *arg);

/* Bind and listen on "addr:port" (IPv4 "127.0.0.1:5050", IPv6
 * "[::1]:5050"); port 0 picks a free one. Returns 0 or -1 with err. */
int	http_server_listen(struct http_server *, const char *addr,
	    char *err, size_t errlen);

/* Serve an already listening socket (socket activation). 0 or -1. */
int	http_server_adopt(struct http_server *, int fd, char *err,
	    size_t errlen);

/* The address actually bound, e.g. "127.0.0.1:40123" ("" if none). */
const char	*http_server_addr(const struct http_server *);

/* Stop accepting new connections; idle keep-alive connections are closed
 * and busy ones close after their current reply. */
void	http_server_stop_accepting(struct http_server *);

/* Open connections / connections with a request being answered. */
unsigned	http_server_nconns(const struct http_server *);
unsigned	http_server_nbusy(const struct http_server *);

/* Close everything (gone callbacks run for pending requests) and free. */
void	http_server_free(struct http_server *);

/* Tag the current request with a fixed route name ("chat") for the done
 * hook. The string must outlive the reply (use literals). */
void	http_set_route(struct http_conn *, const char *route);

/* A number to report with the current request (the worker's pid). */
void	http_set_tag(struct http_conn *, long tag);

/* Header lines (CRLF-ended, e.g. "Vary: Origin\r\n") to add to every
 * reply head written for the current request, after the reply's own
 * extra headers: whole replies, errors through http_reply_error and
 * streams alike. Copied; NULL forgets them. They end with the reply;
 * errors the server answers before a handler runs never carry them. */
void	http_set_headers(struct http_conn *, const char *lines);

/* Attach the owner of the current request: gone and drain callbacks go
 * to it. Call from the handler (or before ending the reply). */
void	http_set_owner(struct http_conn *, void *owner, http_gone_cb gone,
	    http_drain_cb drain);

/* Whole reply with Content-Length. extra_headers is NULL or CRLF-ended
 * header lines ("Retry-After: 1\r\n"). X-Request-Id, Content-Type,
 * Content-Length, Date-less minimal headers and Connection are added.
 * Ends the reply. Returns 0, or -1 if the client is already gone. */
int	http_reply(struct http_conn *, int status, const char *content_type,
	    const char *extra_headers, const void *body, size_t len);

/* Error reply through the server's http_error_fmt. Ends the reply. */
int	http_reply_error(struct http_conn *, int status, const char *message,
	    const char *extra_headers);

/* Streamed reply: chunked transfer coding for HTTP/1.1, close-delimited
 * for HTTP/1.0. begin sends the head; write queues data (a zero length
 * write is a no-op); end finishes the body and the reply. Each returns 0,
 * or -1 if the client is gone. */
int	http_stream_begin(struct http_conn *, int status,
	    const char *content_type, const char *extra_headers);
int	http_stream_write(struct http_conn *, const void *data, size_t len);
int	http_stream_end(struct http_conn *);

/* True while queued output is above the high-water mark; the drain
 * callback fires when it falls below half of it. */
bool	http_out_full(const struct http_conn *);

/* The value of the first header called name (ASCII case-insensitive),
 * or NULL. Borrowed from the request. */
const char	*http_header(const struct http_request *, const char *name);

/* The request currently being answered on this connection (the same
 * object the handler received). */
const struct http_request	*http_conn_request(const struct http_conn *);

/* ---- internal: the request parser (http_parse.c), used by http.c ---- */

struct http_parser;

enum http_parse_phase {
	HTTP_PHASE_IDLE,	/* no byte of the next request yet */
	HTTP_PHASE_HEAD,	/* request line and headers */
	HTTP_PHASE_BODY,	/* head accepted, reading the body */
};

enum http_parse_result {
	HTTP_PARSE_MORE,	/* every byte used; feed more */
	HTTP_PARSE_EXPECT,	/* head accepted; client awaits 100 Continue */
	HTTP_PARSE_REQUEST,	/* request complete: http_parser_request() */
	HTTP_PARSE_ERROR,	/* see http_parser_error(); stop feeding */
};

/* A parser for one connection, enforcing lim (which must outlive it).
 * Never NULL (allocation failure is fatal). */
struct http_parser	*http_parser_new(const struct http_limits *lim);
void	http_parser_free(struct http_parser *);

/* Parse up to len bytes; *used is how many were consumed (all of them
 * for MORE). After REQUEST nothing is parsed until http_parser_next(). */
enum http_parse_result	http_parser_feed(struct http_parser *,
			    const char *data, size_t len, size_t *used);

/* Forget the answered request and get ready for the next one. */
void	http_parser_next(struct http_parser *);

/* The request being read or complete, owned by the parser until
 * http_parser_next(): path is NULL until the target is known, id is set
 * at the request's first byte, peer is left to the caller. */
struct http_request	*http_parser_request(struct http_parser *);

enum http_parse_phase	http_parser_phase(const struct http_parser *);

/* Status (400, 413, 414, 431, 501, 505) and message after ERROR. */
int	http_parser_error(const struct http_parser *, const char **msg);

struct sockaddr;
struct sockaddr_storage;

/* Parse "1.2.3.4:port" or "[v6]:port" (port 0 allowed) into ss and its
 * length. Returns 0 or -1. */
int	http_addr_parse(const char *addr, struct sockaddr_storage *ss,
	    size_t *sslen);

/* "1.2.3.4:port", "[v6]:port", "unix", or "" for anything else. */
void	http_addr_fmt(const struct sockaddr *sa, char *out, size_t len);

#endif
