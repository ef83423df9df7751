/* wloop.h - the worker's request loop: frames from the gateway, chunks back, cancel, heartbeats. */
#ifndef SLUICE_WLOOP_H
#define SLUICE_WLOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../proto/proto.h"
#include "cache.h"

struct store;

#define WLOOP_MSGLEN	1024

/* The outcome of one request, sent as REQ_DONE. */
struct wresult {
	uint32_t	 r_status;		/* enum proto_status */
	uint32_t	 r_http;		/* for RQ_ERROR: 4xx/5xx */
	char		 r_code[32];		/* "backend_error", ... */
	char		 r_message[WLOOP_MSGLEN];
	char		 r_endpoint[128];	/* the failing endpoint, or "" */
	long		 r_upstream;		/* the backend's HTTP status when
						   it answered with an error */
	char		 r_retry_after[64];	/* its Retry-After, or "" */
	char		 r_finish[32];		/* "stop", "length", ... */
	int64_t		 r_prompt_tokens;	/* -1 unknown */
	int64_t		 r_completion_tokens;
	bool		 r_usage_estimated;
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
	bool		 wc_answered;	/* REQ_DONE sent early (wloop_answer) */
	bool		 wc_dropping;	/* content after the answer was seen */
	uint64_t	 wc_seq;
	uint64_t	 wc_deadline;		/* monotonic ms, 0 none */
	uint64_t	 wc_last_sent;
	char		 wc_phase[96];
	void		*wc_priv;		/* the frame reader */
	/* per-endpoint slots (see slot.h) */
	unsigned	 wc_ep_limit;		/* REQ_START's, 0 = none */
	uint64_t	 wc_ep_wait_ms;
	char		 wc_slot_ep[128];	/* the endpoint waited for */
	int		 wc_slot_answer;	/* 0 waiting, 1 granted, -1 no */
	/* the shared database (wloop_store.c) */
	const char	*wc_state_dir;		/* --state-dir, or NULL */
	bool		 wc_db_sync_full;	/* --db-sync full */
	struct store	*wc_store;		/* opened on first use */
	bool		 wc_store_used;		/* ...by the current request */
	bool		 wc_store_ending;	/* dropping the run's locks */
	struct cache_conf wc_cache;		/* the response cache
						   (--cache-*; off when absent) */
};

/* Tell the gateway about one response-cache lookup of the current
 * request: hit or miss, whether the call answers the client, and the
 * entries in the cache now (-1 unknown). */
void	wloop_cache(struct wctx *, bool hit, bool answer, int64_t entries);

/* Set up; fd is the channel. Returns 0, or -1 if fd is not a socket. */
int	wloop_init(struct wctx *, int fd);

/* Release what wloop_init took (not the descriptor). */
void	wloop_free(struct wctx *);

/* Send HELLO, then serve requests until SHUTDOWN, EOF or max_requests
 * (then RETIRE). Returns the process exit status. */
int	wloop_run(struct wctx *);

/* For the engine, during a request: send a REQ_CHUNK with these deltas
 * (empty ones are skipped). After wloop_answer the client's answer is
 * complete and the deltas are dropped. fatal()s if the gateway is gone. */
void	wloop_emit(struct wctx *, struct str content, struct str reasoning);

/* Send tool calls: a JSON array of OpenAI-shape calls, each with its
 * "index" (the gateway merges deltas with the same index). */
void	wloop_emit_tools(struct wctx *, struct str tool_calls);

/* The client's answer is complete (res holds its outcome, RQ_OK): send
 * REQ_DONE now with background set; the request keeps running (nodes
 * after the responder) until flow_run returns, and the loop then sends
 * POST_DONE instead of REQ_DONE. Called at most once per request. A
 * result that is not RQ_OK, or a request already stopped, is not
 * answered early: it goes out as REQ_DONE when flow_run returns. */
void	wloop_answer(struct wctx *, const struct wresult *res);

/* True once wloop_answer ran for the current request. */
bool	wloop_answered(const struct wctx *);

/* Describe what the request is doing now; a heartbeat goes out at once
 * with it. */
void	wloop_phase(struct wctx *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Keep the gateway informed and look for CANCEL: reads frames that are
 * waiting (readable true) and sends a heartbeat when one is due.
 * Returns 1 when the request must stop (cancelled or past its deadline).
 * Shaped to be struct llm_hooks.on_wake; arg is the wctx. */
int	wloop_on_wake(void *arg, bool readable);

/* Send one frame to the gateway; fatal()s if it is gone. */
void	wloop_send(struct wctx *, const struct proto_msg *);

/* True once the current request was cancelled or timed out. After the
 * answer only its deadline stops it: a CANCEL that crossed the answer
 * is ignored. */
bool	wloop_stopped(struct wctx *);

/* ---- the shared database (worker/wloop_store.c) ---- */

/* The store at <state-dir>/sluice.db, opened on the first call; its
 * lock waits heartbeat and give up when the request is stopped. Owned
 * by wc. NULL with err (STORE_ERRLEN) when it cannot be opened. */
struct store	*wloop_store(struct wctx *, char *err);

/* The request's workflow ended: drop the locks its run took, if it used
 * the store at all (errors are logged). */
void	wloop_store_end(struct wctx *);

/* Close the store at exit. */
void	wloop_store_close(struct wctx *);

#endif
