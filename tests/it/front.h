/* front.h - integration tests: HAProxy on deploy/haproxy.cfg in front of two gateways, and the paced streams sent through it. */
#ifndef SLUICE_IT_FRONT_H
#define SLUICE_IT_FRONT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../../common/buf.h"
#include "harness.h"

/* The words the paced mock sends with --text "one two three" and
 * FRONT_EVENTS events: "one two three one ...". Static storage. */
#define FRONT_EVENTS	30
const char	*front_paced_text(void);

/* HAProxy's binary, or NULL when it is not installed. */
const char	*front_haproxy_bin(void);

/* Start HAProxy in the foreground on $SLUICE_SRC/deploy/haproxy.cfg,
 * listening on 127.0.0.1:f->it_port (a free port it picks) in front of
 * gateways a and b ("ADDR:PORT"), its output in the file log, with env
 * ("NAME=value" or NULL) in its environment; it dies with the caller's
 * process. Waits until GET /health through it answers 200 (the test
 * fails after 5 s). Returns its pid. */
pid_t		 front_start(struct it *f, const char *a, const char *b,
		    const char *log, const char *env);

/* Whether HAProxy's log (the file log) says needle. */
bool		 front_log_has(const char *log, const char *needle);

/* n streams of body, or of bodies[i] when bodies is not NULL, each
 * with a header buffer hd[i]; front_streams_free frees the buffers. */
void		 front_streams_init(struct it_stream *, struct buf *hd,
		    size_t n, char *const *bodies, const char *body);
void		 front_streams_free(struct it_stream *, struct buf *hd,
		    size_t n);

/* The request id of a stream, from its headers ("" before they came). */
void		 front_stream_id(const struct it_stream *, char *id,
		    size_t idlen);

/* Whether every stream has its head (a request id) and some bytes. */
bool		 front_streams_headed(const struct it_stream *, size_t n);

/* DELETE /api/chat naming request id, sent to t (a gateway or the
 * front); its status (the test fails when no answer comes). */
long		 front_delete(struct it *t, const char *id);

#endif
