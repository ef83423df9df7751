/* wloop_store.h - the worker's handle on the shared database: opened on first use, heartbeating while it waits. */
#ifndef SLUICE_WLOOP_STORE_H
#define SLUICE_WLOOP_STORE_H

#include "wloop.h"

/* The store at <state-dir>/sluice.db, opened on the first call; its
 * lock waits heartbeat and give up when the request is stopped. Owned
 * by wc. NULL with err (STORE_ERRLEN) when it cannot be opened. The
 * seam's ro_store. */
struct store	*wloop_store(struct rq *, char *err);

/* The key the request's discussion rows are sealed with (A10): with an
 * API key in REQ_START (the gateway sends it only when the user sets
 * encryptUsingApiKey), the one derived for it and the request's user
 * (rs's, else --user), from wc's cache; the bytes of the API key are
 * wiped. Sets rq_crypt (NULL without a key) and the store's key.
 * Returns 0, or -1 with res filled (500: libcrypto failed). */
int	wloop_store_key(struct wctx *, const struct proto_req_start *rs,
	    struct wresult *res);

/* The request's workflow ended: drop the locks its run took, if it used
 * the store at all (errors are logged). */
void	wloop_store_end(struct wctx *);

/* A request begins: what the store has seen so far is its baseline. */
void	wloop_store_begin(struct wctx *);

/* A request's work is over (after wloop_store_end): when it wrote to
 * the store or a store call failed, log the failures with the
 * discussion id and send STORE, so the gateway's /health and /metrics
 * see them. */
void	wloop_store_report(struct wctx *);

/* Close the store at exit. */
void	wloop_store_close(struct wctx *);

#endif
