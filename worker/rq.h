/* rq.h - the request seam: what a running request offers the code below the loop. */
#ifndef SLUICE_RQ_H
#define SLUICE_RQ_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/buf.h"
#include "../proto/proto.h"

/*
 * The worker is a stack of layers (docs/HACKING.md): the loop on top,
 * then the engine, the nodes, memory, the LLM call, and the core,
 * cleaner and store at the bottom. Code below the loop never calls the
 * loop: it is handed a struct rq and reaches the request through its
 * ops, as the gateway's supervisor reaches the world through sup_ops.
 * The loop fills rq_ops; the engine, which runs the request's
 * workflows, fills rq_flow when it starts the request, so that nodes
 * and memory steps can run a workflow without calling up into it.
 */

struct store;
struct cache_conf;
struct fernet_key;
struct rq;
struct wf_run;
struct wmsgs;

#define RQ_MSGLEN	1024

/* The outcome of one request, sent as REQ_DONE. */
struct wresult {
	uint32_t	 r_status;		/* enum proto_status */
	uint32_t	 r_http;		/* for RQ_ERROR: 4xx/5xx */
	char		 r_code[32];		/* "backend_error", ... */
	char		 r_message[RQ_MSGLEN];
	char		 r_endpoint[128];	/* the failing endpoint, or "" */
	long		 r_upstream;		/* the backend's HTTP status when
						   it answered with an error */
	char		 r_retry_after[64];	/* its Retry-After, or "" */
	char		 r_finish[32];		/* "stop", "length", ... */
	int64_t		 r_prompt_tokens;	/* -1 unknown */
	int64_t		 r_completion_tokens;
	bool		 r_usage_estimated;
};

/* A turn on an endpoint that limits its concurrent calls. */
enum rq_slot {
	RQ_SLOT_OK,		/* granted, or no limit applies */
	RQ_SLOT_TIMEOUT,	/* waited the request's ep_wait_ms in vain */
	RQ_SLOT_STOPPED,	/* the request was cancelled or expired */
};

/* What the loop does for the request. Every op takes the rq it was
 * reached through. */
struct rq_ops {
	/* A REQ_CHUNK with these deltas (empty ones are skipped). After
	 * the answer (answer) the client's answer is complete and deltas
	 * are dropped. */
	void		(*ro_emit)(struct rq *, struct str content,
			    struct str reasoning);
	/* Tool calls: a JSON array of OpenAI-shape calls, each with its
	 * "index" (the gateway merges deltas with the same index). */
	void		(*ro_emit_tools)(struct rq *, struct str tool_calls);
	/* What the request is doing now; a heartbeat carries it at once. */
	void		(*ro_phase)(struct rq *, const char *phase);
	/* True once the request was cancelled or passed its deadline
	 * (reads what the gateway sent, heartbeats when one is due). */
	bool		(*ro_stopped)(struct rq *);
	/* While blocked on something else: rq_wake_fd turned readable
	 * (readable) or a tick passed. Returns 1 when the request must
	 * stop, else 0. */
	int		(*ro_wake)(struct rq *, bool readable);
	/* One frame to the gateway. */
	void		(*ro_send)(struct rq *, const struct proto_msg *);
	/* REQ_CHUNK frames gather and leave together in one write: with
	 * the next frame of another kind, whenever the loop looks at the
	 * gateway (ro_stopped, ro_wake), or at this call, which code about
	 * to wait makes (the transport, before each poll) so that nothing
	 * read before the wait is kept through it. Optional (NULL: each
	 * frame goes at once). */
	void		(*ro_flush)(struct rq *);
	/* A turn on endpoint ep, at most limit calls at once across the
	 * workers (0: no limit, granted at once); heartbeats while it
	 * waits. Anything but RQ_SLOT_OK leaves nothing held. */
	enum rq_slot	(*ro_slot_take)(struct rq *, const char *ep,
			    unsigned limit);
	void		(*ro_slot_give)(struct rq *, const char *ep,
			    unsigned limit);
	/* The shared database, opened on first use and owned by the loop;
	 * NULL with err (STORE_ERRLEN) when it cannot be opened. */
	struct store	*(*ro_store)(struct rq *, char *err);
	/* The client's answer is complete (res: RQ_OK): REQ_DONE goes now
	 * and the rest of the work follows (POST_DONE). See answered. */
	void		(*ro_answer)(struct rq *, const struct wresult *res);
	bool		(*ro_answered)(struct rq *);
};

/* How to run one workflow (the engine's wf_run). */
struct rq_flowcall {
	const char	*fc_folder;	/* Workflows/<folder> */
	const char	*fc_name;	/* the file name without .json */
	char *const	*fc_inputs;	/* agent1Input.. (NULL-terminated) or NULL */
	bool		 fc_deliver;	/* its responder answers the client */
	bool		 fc_top;	/* WilmerAI's non_responder None: the
					   top-level run or a streaming child */
	const char	*fc_system_override;	/* first node with a systemPrompt
						   or prompt key (NULL: none) */
	const char	*fc_prompt_override;
	json_t		*fc_routing;	/* categories (routing) or NULL */
	struct wf_run	*fc_parent;	/* NULL for the top-level run */
	struct wmsgs	*fc_msgs;	/* its conversation, the caller's
					   until the run returns; NULL: the
					   parent run's (the request's) */
	bool		 fc_no_tools;	/* it and its children see none of
					   the request's tools */
};

/* The engine's part: run a workflow of this request. out gets its
 * result, *delivered whether its responder answered the client. res is
 * the request's result, the one the caller was handed. Returns 0,
 * NODE_END (it ended early, successfully), or -1 with res filled. */
typedef int	(*rq_flow_fn)(void *engine, const struct rq_flowcall *,
		    struct buf *out, bool *delivered, struct wresult *res);

/* One running request, as the layers below the loop see it. */
struct rq {
	const struct rq_ops	*rq_ops;
	void			*rq_loop;	/* the loop's own state */
	const char		*rq_id;		/* for every log line */
	int			 rq_wake_fd;	/* readable: the gateway wrote */
	unsigned		 rq_ep_limit;	/* endpoint slots when an
						   endpoint sets none; 0 none */
	uint64_t		 rq_ep_wait_ms;	/* longest wait for a slot */
	const struct cache_conf	*rq_cache;	/* the response cache */
	const char		*rq_confdir;
	rq_flow_fn		 rq_flow;	/* the engine's, or NULL */
	void			*rq_engine;
	const struct fernet_key	*rq_crypt;	/* encryptUsingApiKey: the key
						   the discussion's rows are
						   sealed with (the store
						   has it too), or NULL */
	char			 rq_discussion[128];	/* the engine's
						   discussion id, for the
						   loop's log lines ("" none;
						   a longer id is cut) */
};

/* ---- the ops, spelt as calls ---- */

static inline void
rq_emit(struct rq *rq, struct str content, struct str reasoning)
{
	rq->rq_ops->ro_emit(rq, content, reasoning);
}

static inline void
rq_emit_tools(struct rq *rq, struct str tool_calls)
{
	rq->rq_ops->ro_emit_tools(rq, tool_calls);
}

static inline void
rq_flush(struct rq *rq)
{
	if (rq->rq_ops->ro_flush != NULL)
		rq->rq_ops->ro_flush(rq);
}

static inline void rq_phase(struct rq *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static inline void
rq_phase(struct rq *rq, const char *fmt, ...)
{
	char	 s[96];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	rq->rq_ops->ro_phase(rq, s);
}

static inline bool
rq_stopped(struct rq *rq)
{
	return rq->rq_ops->ro_stopped(rq);
}

/* Shaped to be struct transport_hooks' on_wake (llm/transport.h); arg is the
 * rq. */
static inline int
rq_wake(void *arg, bool readable)
{
	struct rq	*rq = arg;

	return rq->rq_ops->ro_wake(rq, readable);
}

static inline void
rq_send(struct rq *rq, const struct proto_msg *m)
{
	rq->rq_ops->ro_send(rq, m);
}

/* The limit on calls at once to an endpoint: its maxConcurrentRequests,
 * else the gateway's --concurrency-level endpoint limit; 0 = none. */
static inline unsigned
rq_slot_limit(const struct rq *rq, long ep_max_concurrent)
{
	return ep_max_concurrent > 0 ? (unsigned)ep_max_concurrent :
	    rq->rq_ep_limit;
}

static inline enum rq_slot
rq_slot_take(struct rq *rq, const char *ep, unsigned limit)
{
	return limit == 0 ? RQ_SLOT_OK :
	    rq->rq_ops->ro_slot_take(rq, ep, limit);
}

static inline void
rq_slot_give(struct rq *rq, const char *ep, unsigned limit)
{
	if (limit > 0)
		rq->rq_ops->ro_slot_give(rq, ep, limit);
}

static inline struct store *
rq_store(struct rq *rq, char *err)
{
	return rq->rq_ops->ro_store(rq, err);
}

static inline void
rq_answer(struct rq *rq, const struct wresult *res)
{
	rq->rq_ops->ro_answer(rq, res);
}

static inline bool
rq_answered(struct rq *rq)
{
	return rq->rq_ops->ro_answered(rq);
}

/* Run a workflow through the engine (see rq_flow_fn); -1 with res
 * filled when no engine runs this request. */
static inline int
rq_run_flow(struct rq *rq, const struct rq_flowcall *c, struct buf *out,
    bool *delivered, struct wresult *res)
{
	*delivered = false;
	if (rq->rq_flow == NULL) {
		res->r_status = RQ_ERROR;
		res->r_http = 500;
		snprintf(res->r_message, sizeof(res->r_message),
		    "no workflow engine runs this request");
		return -1;
	}
	return rq->rq_flow(rq->rq_engine, c, out, delivered, res);
}

#endif
