/* slot.h - a backend call's turn on its endpoint, asked of the gateway that holds every worker's slots. */
#ifndef SLUICE_SLOT_H
#define SLUICE_SLOT_H

#include "../../proto/proto.h"
#include "../rq.h"

/* The SLOT_ACQUIRE in flight, if any: the loop reads the gateway's
 * frames and notes the answer here (slot_granted). */
struct slot_wait {
	char	 sw_ep[128];	/* the endpoint waited for, "" none */
	int	 sw_answer;	/* 0 waiting, 1 granted, -1 refused */
};

/* A SLOT_GRANT frame arrived for request rqid: noted when it answers
 * the wait in flight; an answer to a wait given up is dropped. */
void	slot_granted(struct slot_wait *, const char *rqid,
	    const struct proto_msg *m);

/* Wait for a turn on endpoint ep (at most limit calls at once across
 * all workers), heartbeating and watching for CANCEL through rq's ops
 * meanwhile; phase is what the request was doing, said again once the
 * wait is over. A wait that ends other than granted leaves nothing
 * held. The seam's ro_slot_take, for limit > 0. */
enum rq_slot	slot_take(struct rq *, struct slot_wait *, const char *phase,
		    const char *ep, unsigned limit);

/* Give back the turn slot_take granted for ep (limit as given to it). */
void	slot_give(struct rq *, const char *ep, unsigned limit);

#endif
