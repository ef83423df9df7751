/* wloop.h - the worker's request loop: frames from the gateway, chunks back, cancel, heartbeats. */
#ifndef SLUICE_WLOOP_H
#define SLUICE_WLOOP_H
#include <stdbool.h>
#include <stdint.h>

#include "../../common/buf.h"
#include "../../proto/proto.h"
#include "../rq.h"
#include "../store/cache.h"
#include "../store/store.h"
#include "slot.h"
#include "turn.h"

struct store;
struct keycache;

/* The test-only fault hooks (fault.h), handed in by main so that the
 * loop never calls up into the program around it. NULL members are
 * no-ops. */
struct wloop_faults {
	void		(*wf_on_request)(void);	/* a request arrived */
	int		  wf_version_skew;	/* added to HELLO's version */
	uint64_t	  wf_after_ms;		/* work this long after an
						   answer (0: none) */
};

/* Worker process state; one request at a time. */
struct wctx {
	int		 wc_fd;			/* channel, fd 3 */
	unsigned	 wc_slot;
	const char	*wc_confdir;
	const char	*wc_user;
	unsigned	 wc_max_requests;	/* 0 = unlimited */
	unsigned	 wc_served;
	bool		 wc_shutdown;		/* finish, then exit 0 */
	/* the current request */
	char		 wc_rqid[PROTO_MAX_RQID + 1];
	bool		 wc_busy;
	bool		 wc_cancelled;	/* by the gateway, or expired */
	bool		 wc_expired;	/* the request's deadline passed */
	bool		 wc_answered;	/* REQ_DONE sent early (ro_answer) */
	bool		 wc_dropping;	/* content after the answer was seen */
	uint64_t	 wc_seq;
	uint64_t	 wc_deadline;		/* monotonic ms, 0 none */
	uint64_t	 wc_last_sent;
	struct buf	 wc_out;	/* frames not yet written (ro_flush) */
	char		 wc_phase[96];
	void		*wc_priv;		/* the frame reader */
	struct slot_wait wc_slot_wait;		/* a SLOT_ACQUIRE in flight */
	struct turns	 wc_turns;		/* endpoint turns across
						   gateways (PostgreSQL) */
	struct wloop_faults wc_faults;
	struct rq	 wc_rq;			/* the seam, for the layers below */
	/* the shared database (wloop_store.c) */
	const char	*wc_store_at;		/* the database: a SQLite
						   path or a PostgreSQL URL
						   (a secret), or NULL */
	bool		 wc_db_sync_full;	/* --db-sync full */
	struct store	*wc_store;		/* opened on first use */
	bool		 wc_store_used;		/* ...by the current request */
	bool		 wc_store_ending;	/* dropping the run's locks */
	struct store_tally wc_tally0;		/* the store's at the start of
						   the request */
	uint64_t	 wc_open_fails;		/* store_open failures during
						   the request */
	char		 wc_open_err[STORE_ERRLEN];	/* the last one's
						   reason */
	struct cache_conf wc_cache;		/* the response cache
						   (--cache-*; off when absent) */
	struct keycache	*wc_keys;		/* encryptUsingApiKey's keys */
};

/* Set up; fd is the channel. Returns 0, or -1 if fd is not a socket. */
int	wloop_init(struct wctx *, int fd);

/* Release what wloop_init took (not the descriptor). */
void	wloop_free(struct wctx *);

/* Send HELLO, then serve requests until SHUTDOWN, EOF or max_requests
 * (then RETIRE). Returns the process exit status. */
int	wloop_run(struct wctx *);

/* ---- the shared database (worker/wloop_store.c) ---- */

#endif
