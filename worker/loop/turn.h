/* turn.h - a backend call's turn across gateways: with the PostgreSQL store, one of the endpoint's limit turns on the database server, after the gateway's own slot. */
#ifndef SLUICE_TURN_H
#define SLUICE_TURN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../rq.h"

#define TURN_MAX	4	/* endpoints one request holds at once */

/* The turns the worker's database session holds for its request. */
struct turns {
	bool		 tu_pg;		/* the store is PostgreSQL: turns
					   count (set once, at start) */
	struct {
		char	 t_ep[128];
		unsigned t_index;
	}		 tu_held[TURN_MAX];
	size_t		 tu_n;
};

/*
 * After the gateway granted its slot for ep: on a PostgreSQL store,
 * wait until one of the endpoint's limit turns on the server is free
 * and take it, polling every TURN_POLL_MS, heartbeating and watching
 * for CANCEL through rq's ops, until deadline (monotonic ms). Without
 * a PostgreSQL store there is nothing to wait for (RQ_SLOT_OK). When
 * the database cannot be reached the call goes on under the gateway's
 * slot alone (logged): a limit is worth less than the answer.
 * RQ_SLOT_STOPPED or RQ_SLOT_TIMEOUT leave nothing held.
 */
enum rq_slot	turn_take(struct rq *, struct turns *, const char *ep,
		    unsigned limit, uint64_t deadline);

/* Give back the turn held for ep, if any. */
void		turn_give(struct rq *, struct turns *, const char *ep);

/* Give back every turn still held: the request is over. */
void		turn_give_all(struct rq *, struct turns *);

#endif
