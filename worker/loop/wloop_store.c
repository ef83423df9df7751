/* wloop_store.c - the worker's handle on the shared database: opened on first use, heartbeating while it waits. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../store/store.h"
#include "../store/store_lock.h"
#include "../store/store_seal.h"
#include "keycache.h"
#include "wloop.h"
#include "wloop_store.h"

/* Called every STORE_WAIT_MS while another worker holds the database's
 * write lock. rq_stopped() heartbeats (the gateway kills a silent
 * worker) and reads a CANCEL: a stopped request stops waiting, except
 * while its run's locks are dropped, which is worth finishing. */
static int
on_wait(void *arg)
{
	struct wctx	*wc = arg;
	bool		 stop = rq_stopped(&wc->wc_rq);

	return stop && !wc->wc_store_ending ? 1 : 0;
}

/* Counted as a store failure; the reason in full goes to the log, not
 * to the public /health (it names the database). */
static void
open_failed(struct wctx *wc, const char *err)
{
	wc->wc_open_fails++;
	snprintf(wc->wc_open_err, sizeof(wc->wc_open_err), "%s", err);
}

struct store *
wloop_store(struct rq *rq, char *err)
{
	struct wctx		*wc = rq->rq_loop;
	struct store_opts	 o = { .so_sync_full = wc->wc_db_sync_full,
				    .so_on_wait = on_wait, .so_arg = wc };
	if (wc->wc_store == NULL) {
		if (wc->wc_store_at == NULL) {
			snprintf(err, STORE_ERRLEN, "no database: "
			    "sluice-worker was started without --state-dir");
			return NULL;
		}
		wc->wc_store = store_open(wc->wc_store_at, &o, err);
		if (wc->wc_store == NULL) {
			open_failed(wc, err);
			return NULL;
		}
		log_debug("[rq %s] database open", wc->wc_rqid);
	}
	store_seal_key(wc->wc_store, rq->rq_crypt);
	wc->wc_store_used = true;
	return wc->wc_store;
}

int
wloop_store_key(struct wctx *wc, const struct proto_req_start *rs,
    struct wresult *res)
{
	char	*key, *user;

	wc->wc_rq.rq_crypt = NULL;
	if (rs->api_key.n == 0)
		return 0;
	key = str_dup(rs->api_key);
	user = rs->user.n > 0 ? str_dup(rs->user) :
	    xstrdup(wc->wc_user != NULL ? wc->wc_user : "");
	wc->wc_rq.rq_crypt = keycache_get(wc->wc_keys, key, user);
	explicit_bzero(key, strlen(key));
	explicit_bzero((void *)(uintptr_t)rs->api_key.p, rs->api_key.n);
	free(key);
	free(user);
	if (wc->wc_rq.rq_crypt != NULL)
		return 0;
	res->r_status = RQ_ERROR;
	res->r_http = 500;
	snprintf(res->r_message, sizeof(res->r_message), "cannot derive the "
	    "encryption key (encryptUsingApiKey): libcrypto failed");
	return -1;
}

void
wloop_store_end(struct wctx *wc)
{
	int	 n;

	wc->wc_rq.rq_crypt = NULL;
	if (wc->wc_store != NULL)
		store_seal_key(wc->wc_store, NULL);
	if (!wc->wc_store_used || wc->wc_store == NULL)
		return;
	wc->wc_store_used = false;
	wc->wc_store_ending = true;
	if ((n = store_unlock_owner(wc->wc_store, wc->wc_rqid)) == -1)
		log_warnx("[rq %s] cannot drop the run's workflow locks (they "
		    "expire by themselves): %s", wc->wc_rqid,
		    store_err(wc->wc_store));
	else if (n > 0)
		log_debug("[rq %s] %d workflow lock(s) dropped", wc->wc_rqid,
		    n);
	wc->wc_store_ending = false;
}

void
wloop_store_close(struct wctx *wc)
{
	store_close(wc->wc_store);
	wc->wc_store = NULL;
}

void
wloop_store_begin(struct wctx *wc)
{
	memset(&wc->wc_tally0, 0, sizeof(wc->wc_tally0));
	if (wc->wc_store != NULL)
		store_tally(wc->wc_store, &wc->wc_tally0);
	wc->wc_open_fails = 0;
}

/* The request's failures, logged with its discussion id. */
static void
log_fails(const struct wctx *wc, uint64_t n, const char *last)
{
	const char	*d = wc->wc_rq.rq_discussion;

	log_warnx("[rq %s] %s%s%s%llu database error%s in this request, the "
	    "last: %s", wc->wc_rqid, *d ? "discussion '" : "", d,
	    *d ? "': " : "", (unsigned long long)n, n == 1 ? "" : "s", last);
}

void
wloop_store_report(struct wctx *wc)
{
	struct store_tally	 t = { 0 };
	struct proto_msg	 m;
	struct proto_store	*p = &m.m_u.store;
	uint64_t		 fails, writes;
	bool			 open_last;

	if (wc->wc_store != NULL)
		store_tally(wc->wc_store, &t);
	fails = t.st_fails - wc->wc_tally0.st_fails + wc->wc_open_fails;
	writes = t.st_writes - wc->wc_tally0.st_writes;
	if (fails == 0 && writes == 0)
		return;
	/* An open that failed is the request's last word on the store:
	 * nothing was written after it. */
	open_last = wc->wc_open_fails > 0;
	proto_msg_init(&m, PROTO_STORE, wc->wc_rqid);
	p->errors = fails;
	p->failing = open_last || (fails > 0 && t.st_failing);
	if (fails > 0) {
		p->why = str_from(open_last ? "cannot open the database "
		    "(the workers' log says why)" : t.st_why);
		log_fails(wc, fails, open_last ? wc->wc_open_err :
		    store_err(wc->wc_store));
	}
	if (wc->wc_rq.rq_discussion[0] != '\0')
		p->discussion = str_from(wc->wc_rq.rq_discussion);
	rq_send(&wc->wc_rq, &m);
}
