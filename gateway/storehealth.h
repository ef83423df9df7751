/* storehealth.h - the shared database's health as the workers report it: /health, /metrics and the log. */
#ifndef SLUICE_STOREHEALTH_H
#define SLUICE_STOREHEALTH_H

#include <stdbool.h>
#include <stdint.h>

struct buf;
struct gw;
struct proto_msg;

/* What the gateway knows of the store. Failing from a report whose
 * last call failed until one whose last call was a successful write. */
struct gw_store {
	bool		 gs_failing;
	char		 gs_why[128];	/* the last failure, engine's words */
	uint64_t	 gs_since_ms;	/* monotonic: failing since */
	uint64_t	 gs_errors;	/* failed calls since the start */
};

/* The supervisor's store_frame op (arg is the gw): count the request's
 * errors, and log a change between working and failing. */
void	storehealth_frame(void *arg, const struct proto_msg *);

/* Append the /health member "store":{...} (no leading comma). */
void	storehealth_json(const struct gw_store *, uint64_t now_ms,
	    struct buf *out);

#endif
