/* slot.h - a backend call's turn on its endpoint, asked of the gateway that holds every worker's slots. */
#ifndef SLUICE_SLOT_H
#define SLUICE_SLOT_H

#include <stdint.h>

#include "wloop.h"

enum slot_result {
	SLOT_OK,		/* granted, or no limit applies */
	SLOT_TIMEOUT,		/* waited timeout_ms without a turn */
	SLOT_STOPPED,		/* the request was cancelled or expired */
};

/* The limit on calls at once to an endpoint: its maxConcurrentRequests,
 * else the gateway's --concurrency-level endpoint limit; 0 = none. */
unsigned slot_limit(const struct wctx *, long ep_max_concurrent);

/* Wait for a turn on endpoint ep (at most limit calls at once across all
 * workers), sending heartbeats meanwhile and watching for CANCEL. With
 * limit 0 returns SLOT_OK at once. A wait that ends other than granted
 * leaves nothing held. */
enum slot_result slot_acquire(struct wctx *, const char *ep, unsigned limit);

/* Give back the turn slot_acquire granted for ep (limit as given to it;
 * nothing is sent when it was 0). */
void	slot_release(struct wctx *, const char *ep, unsigned limit);

#endif
