/* turn.c - a backend call's turn across gateways: with the PostgreSQL store, one of the endpoint's limit turns on the database server, after the gateway's own slot. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../store/store.h"
#include "../store/store_turn.h"
#include "turn.h"

#define TURN_POLL_MS	50	/* between tries while every turn is held */

/* Sleep up to ms on the channel; 1 when the request stopped. */
static int
nap(struct rq *rq, int ms)
{
	struct pollfd	 pfd = { rq->rq_wake_fd, POLLIN, 0 };
	int		 n = poll(&pfd, 1, ms);

	if (n == -1 && errno != EINTR)
		fatal("poll");
	return rq_wake(rq, n == 1) == 1;
}

/* The store when it counts turns (PostgreSQL), else NULL. */
static struct store *
turn_store(struct rq *rq)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = rq_store(rq, err);

	if (s == NULL) {
		log_warnx("[rq %s] the database cannot be reached, so this "
		    "call is not counted against the endpoint's limit "
		    "across gateways: %s", rq->rq_id, err);
		return NULL;
	}
	return store_is_pg(s) ? s : NULL;
}

/* Keep turn index of ep to give back; 0, or -1 when TURN_MAX are held
 * already (the caller gives it back at once). */
static int
note(struct turns *tu, const char *ep, unsigned index)
{
	if (tu->tu_n == TURN_MAX)
		return -1;
	snprintf(tu->tu_held[tu->tu_n].t_ep, sizeof(tu->tu_held[0].t_ep),
	    "%s", ep);
	tu->tu_held[tu->tu_n++].t_index = index;
	return 0;
}

enum rq_slot
turn_take(struct rq *rq, struct turns *tu, const char *ep, unsigned limit,
    uint64_t deadline)
{
	struct store	*s;
	unsigned	 index;
	int		 r, said = 0;

	if (!tu->tu_pg || (s = turn_store(rq)) == NULL)
		return RQ_SLOT_OK;
	while ((r = store_turn_try(s, ep, limit, &index)) == 0) {
		if (!said++)
			rq_phase(rq, "waiting for a turn on endpoint %s across "
			    "gateways (limit %u)", ep, limit);
		if (nap(rq, TURN_POLL_MS))
			return RQ_SLOT_STOPPED;
		if (clock_mono_ms() >= deadline) {
			log_info("[rq %s] no turn on endpoint '%s' across "
			    "gateways in time", rq->rq_id, ep);
			return RQ_SLOT_TIMEOUT;
		}
	}
	if (r == -1) {
		log_warnx("[rq %s] endpoint '%s' is not counted across "
		    "gateways for this call: %s", rq->rq_id, ep, store_err(s));
		return RQ_SLOT_OK;
	}
	log_debug("[rq %s] turn %u of %u on endpoint '%s'", rq->rq_id, index,
	    limit, ep);
	if (note(tu, ep, index) == -1) {
		log_warnx("[rq %s] more than %d endpoints held at once: "
		    "endpoint '%s' is not counted across gateways for this "
		    "call", rq->rq_id, TURN_MAX, ep);
		(void)store_turn_give(s, ep, index);
	}
	return RQ_SLOT_OK;
}

/* Give back held turn i. */
static void
give(struct rq *rq, struct turns *tu, size_t i)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = rq_store(rq, err);

	if (s != NULL && store_turn_give(s, tu->tu_held[i].t_ep,
	    tu->tu_held[i].t_index) == -1)
		log_warnx("[rq %s] %s", rq->rq_id, store_err(s));
	memmove(&tu->tu_held[i], &tu->tu_held[i + 1],
	    (tu->tu_n - i - 1) * sizeof(tu->tu_held[0]));
	tu->tu_n--;
}

void
turn_give(struct rq *rq, struct turns *tu, const char *ep)
{
	size_t	 i;

	for (i = tu->tu_n; i > 0; i--)
		if (strcmp(tu->tu_held[i - 1].t_ep, ep) == 0) {
			give(rq, tu, i - 1);
			return;
		}
}

void
turn_give_all(struct rq *rq, struct turns *tu)
{
	while (tu->tu_n > 0)
		give(rq, tu, tu->tu_n - 1);
}
