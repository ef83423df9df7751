/* callcache.c - the response cache around one backend call: a hit replayed instead of the call, a miss recorded and kept when it ends well; DELETE /admin/cache. */
#include <stdio.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "callcache.h"

/* The database; NULL (logged) when it cannot be opened. */
static struct store *
cache_store(struct rq *rq)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = rq_store(rq, err);

	if (s == NULL)
		log_warnx("[rq %s] response cache: %s", rq->rq_id, err);
	return s;
}

/* Tell the gateway of one lookup: hit or miss, whether the call
 * answers the client, and the entries in the cache now (-1 unknown). */
static void
report(struct rq *rq, bool hit, bool answer, int64_t entries)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_CACHE, rq->rq_id);
	m.m_u.cache.hit = hit;
	m.m_u.cache.answer = answer;
	m.m_u.cache.entries = entries;
	rq_send(rq, &m);
}

int
callcache_begin(struct call_cache *cc, struct rq *rq,
    const struct node_call *nc, const char *dialect, const char *body,
    struct cache_entry *hit)
{
	struct store	*s;
	int64_t		 n;
	int		 r;

	memset(cc, 0, sizeof(*cc));
	memset(hit, 0, sizeof(*hit));
	/* encryptUsingApiKey: its answers (memories among them) would be
	 * kept in plain text, so such a request is never cached. */
	if (nc->nc_quiet || rq->rq_crypt != NULL ||
	    !cache_key(rq->rq_cache, dialect, nc->nc_ep->e_url, body,
	    nc->nc_at->a_stream_prop, cc->cr_key) ||
	    (s = cache_store(rq)) == NULL)
		return 0;
	r = cache_get(s, cc->cr_key, (int64_t)clock_wall_ms(),
	    rq->rq_cache->kc_ttl_ms, hit);
	if (r == -1)
		log_warnx("[rq %s] response cache: %s; calling the backend",
		    rq->rq_id, store_err(s));
	n = cache_count(s);
	report(rq, r == 1, nc->nc_deliver, n);
	log_debug("[rq %s] response cache %s for endpoint '%s' (%.12s)",
	    rq->rq_id, r == 1 ? "hit" : "miss", nc->nc_ep->e_name,
	    cc->cr_key);
	if (r == 1)
		return 1;
	cc->cr_chunks = json_array();
	return 0;
}

void
callcache_record(struct call_cache *cc, const char *p, size_t n)
{
	json_t	*s;

	if (cc->cr_chunks == NULL || cc->cr_spoilt)
		return;
	cc->cr_bytes += n;
	if (cc->cr_bytes > CACHE_MAX_TEXT ||
	    (s = json_stringn(p, n)) == NULL) {
		cc->cr_spoilt = true;
		return;
	}
	json_array_append_new(cc->cr_chunks, s);
}

void
callcache_natives(struct call_cache *cc, json_t *tool_calls)
{
	if (cc->cr_chunks != NULL && json_array_size(tool_calls) > 0)
		cc->cr_natives = json_deep_copy(tool_calls);
}

/* Why a finished call is not kept, or NULL. */
static const char *
unkept(const struct call_cache *cc, const struct node_out *o, bool stopped)
{
	if (cc->cr_spoilt)
		return "its answer is too long or not UTF-8";
	if (stopped)
		return "a filter ended its answer early";
	if (strcmp(o->no_finish, "length") == 0)
		return "its answer was cut at its token limit";
	return NULL;
}

void
callcache_end(struct call_cache *cc, struct rq *rq,
    const struct node_call *nc, const struct node_out *o, bool stopped)
{
	struct cache_entry	 e;
	struct store		*s;
	const char		*why;
	int64_t			 n;

	if (cc->cr_chunks == NULL)
		return;
	if ((why = unkept(cc, o, stopped)) != NULL) {
		log_debug("[rq %s] response cache: not kept: %s", rq->rq_id,
		    why);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ce_chunks = cc->cr_chunks;
	e.ce_tools = cc->cr_natives;
	snprintf(e.ce_finish, sizeof(e.ce_finish), "%s", o->no_finish);
	e.ce_prompt_tokens = o->no_prompt_tokens;
	e.ce_completion_tokens = o->no_completion_tokens;
	if ((s = cache_store(rq)) != NULL && cache_put(s, cc->cr_key,
	    nc->nc_ep->e_name, &e, (int64_t)clock_wall_ms(), rq->rq_cache,
	    &n) == -1)
		log_warnx("[rq %s] response cache: not kept: %s", rq->rq_id,
		    store_err(s));
}

void
callcache_free(struct call_cache *cc)
{
	json_decref(cc->cr_chunks);
	json_decref(cc->cr_natives);
	cc->cr_chunks = cc->cr_natives = NULL;
}

void
callcache_clear_request(struct rq *rq, struct wresult *res)
{
	struct store	*s;
	char		 err[STORE_ERRLEN], num[32];
	int64_t		 n;

	if ((s = rq_store(rq, err)) == NULL || (n = cache_clear(s)) == -1) {
		res->r_status = RQ_ERROR;
		res->r_http = 500;
		snprintf(res->r_code, sizeof(res->r_code), "cache_error");
		snprintf(res->r_message, sizeof(res->r_message), "the response "
		    "cache could not be cleared: %s", s == NULL ? err :
		    store_err(s));
		return;
	}
	log_info("[rq %s] response cache cleared: %lld entries", rq->rq_id,
	    (long long)n);
	snprintf(num, sizeof(num), "%lld", (long long)n);
	rq_emit(rq, str_from(num), STR_NULL);
}
