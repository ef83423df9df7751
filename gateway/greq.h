/* greq.h - one client request in flight: from HTTP to the pool and back. */
#ifndef SLUICE_GREQ_H
#define SLUICE_GREQ_H

#include "../proto/proto.h"
#include "http.h"
#include "sup.h"

struct gw;
struct gw_conf;

/* Serve a generation request of the given API kind on conn: parse the
 * body, submit it to the pool and answer when the worker is done. Every
 * error is answered here; nothing is left to the caller. */
void	greq_start(struct gw *, struct http_conn *,
	    const struct http_request *, int api);

/* DELETE /admin/cache: an internal request (api API_CACHE_CLEAR, no
 * messages) through the pool like any other, without body parsing,
 * model selection or the --concurrency gate. Answers 200
 * {"cleared": N} or a JSON error (the worker's status and message, or
 * the pool's). */
void	greq_cache_clear(struct gw *, struct http_conn *,
	    const struct http_request *);

/* POST /v1/embeddings, /api/embed or /api/embeddings (shape: enum
 * embed_shape, api_embed.h): the body's texts go to a worker, which
 * embeds them with the model field's user's embeddingEndpointName,
 * through the same user selection, --concurrency gate and pool as a
 * chat. Answers 200 in the route's shape, or a JSON error in it. */
void	greq_embed(struct gw *, struct http_conn *,
	    const struct http_request *, int shape);

/* Cancel the request in flight with this id (DELETE /api/chat): its
 * worker gets CANCEL and its client a 409 error saying why. Returns 0,
 * or -1 when no such request is in flight. */
int	greq_cancel_id(struct gw *, const char *id, const char *why);

/* Requests being answered now. */
unsigned greq_in_flight(struct gw *);

/* The request gate's limit under c: --concurrency at the request
 * level, else 0 (none). */
unsigned greq_gate_limit(const struct gw_conf *c);

/* Set up the reaper that frees finished requests outside callbacks, and
 * the --concurrency gate. */
int	greq_init(struct gw *);

/* Free every request (at exit, after the server is gone). */
void	greq_shutdown(struct gw *);

/* Supervisor callbacks (see struct sup_ops). */
void	greq_sup_chunk(void *arg, struct sup_req *, const struct proto_msg *);
void	greq_sup_done(void *arg, struct sup_req *, const struct proto_msg *);
void	greq_sup_fail(void *arg, struct sup_req *, int status, const char *why);
void	greq_sup_cache(void *arg, struct sup_req *, const struct proto_msg *);

#endif
