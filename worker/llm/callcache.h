/* callcache.h - the response cache around one backend call: a hit replayed instead of the call, a miss recorded and kept when it ends well; DELETE /admin/cache. */
#ifndef SLUICE_CALLCACHE_H
#define SLUICE_CALLCACHE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../rq.h"
#include "../store/cache.h"
#include "backend.h"

/* One call's dealings with the cache. */
struct call_cache {
	char	 cr_key[CACHE_KEYLEN];
	json_t	*cr_chunks;	/* the raw text being recorded, or NULL:
				   not recording (no cache, not eligible,
				   or a hit) */
	json_t	*cr_natives;	/* the backend's own tool calls */
	size_t	 cr_bytes;
	bool	 cr_spoilt;	/* too long, or not UTF-8: not kept */
};

/* Before the call, with the body the adapter will send. When the
 * worker caches and the call may be cached (cache_key; never a
 * nc_quiet enforcement round, whose miss is redrawn), look it up:
 * on a hit returns 1 with *hit filled (the caller replays it and
 * clears it; no backend call); else returns 0, recording from now on.
 * The gateway hears of each lookup (a CACHE frame: metrics, and the
 * X-Sluice-Cache header when the call answers the client). A database
 * error is logged and counts as a miss: the cache never fails a call. */
int	callcache_begin(struct call_cache *, struct rq *,
	    const struct node_call *, const char *dialect, const char *body,
	    struct cache_entry *hit);

/* A raw text piece of the backend's answer (output_token). */
void	callcache_record(struct call_cache *, const char *p, size_t n);

/* The backend's own tool calls, once its answer is complete and
 * before the cleaner's are added. */
void	callcache_natives(struct call_cache *, json_t *tool_calls);

/* After a call that succeeded: keep it, unless its answer was cut
 * (finish "length"), stopped early by a filter (stopped), too long or
 * not UTF-8. Errors are logged. */
void	callcache_end(struct call_cache *, struct rq *,
	    const struct node_call *, const struct node_out *, bool stopped);

void	callcache_free(struct call_cache *);

/* The API_CACHE_CLEAR request (DELETE /admin/cache): every entry
 * removed; the answer is one chunk holding how many. res as a
 * request's. */
void	callcache_clear_request(struct rq *, struct wresult *res);

#endif
