/* slot.c - a backend call's turn on its endpoint, asked of the gateway that holds every worker's slots. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "../../common/log.h"
#include "slot.h"

void
slot_granted(struct slot_wait *sw, const char *rqid, const struct proto_msg *m)
{
	/* An answer for a wait we gave up crossed our SLOT_RELEASE; the
	 * gateway takes that release for the grant too. */
	if (str_eq(m->m_rqid, rqid) && sw->sw_ep[0] != '\0' &&
	    str_eq(m->m_u.slot.endpoint, sw->sw_ep) && sw->sw_answer == 0)
		sw->sw_answer = m->m_u.slot.granted ? 1 : -1;
}

static void
send_slot(struct rq *rq, uint32_t type, const char *ep, unsigned limit)
{
	struct proto_msg	 m;

	proto_msg_init(&m, type, rq->rq_id);
	m.m_u.slot.endpoint = str_from(ep);
	m.m_u.slot.limit = limit;
	m.m_u.slot.timeout_ms = rq->rq_ep_wait_ms;
	rq_send(rq, &m);
}

/* Sleep on the channel until the gateway answers or the request stops;
 * the wake op heartbeats every second and reads CANCEL. */
static int
wait_answer(struct rq *rq, const struct slot_wait *sw)
{
	struct pollfd	 pfd;
	int		 n;

	for (;;) {
		pfd = (struct pollfd){ rq->rq_wake_fd, POLLIN, 0 };
		n = poll(&pfd, 1, 1000);
		if (n == -1 && errno != EINTR)
			fatal("poll");
		if (rq_wake(rq, n == 1) == 1)
			return -1;
		if (sw->sw_answer != 0)
			return 0;
	}
}

enum rq_slot
slot_take(struct rq *rq, struct slot_wait *sw, const char *phase,
    const char *ep, unsigned limit)
{
	enum rq_slot	 r;
	char		 was[96];

	if (rq_stopped(rq))
		return RQ_SLOT_STOPPED;
	snprintf(was, sizeof(was), "%s", phase);
	snprintf(sw->sw_ep, sizeof(sw->sw_ep), "%s", ep);
	sw->sw_answer = 0;
	/* The phase first: whoever sees the wait sees why. */
	rq_phase(rq, "waiting for a slot on endpoint %s (limit %u)",
	    sw->sw_ep, limit);
	send_slot(rq, PROTO_SLOT_ACQUIRE, sw->sw_ep, limit);
	/* Answered before we even slept when a slot was free. */
	if (wait_answer(rq, sw) == -1) {
		send_slot(rq, PROTO_SLOT_RELEASE, sw->sw_ep, limit);
		r = RQ_SLOT_STOPPED;
	} else if (sw->sw_answer > 0) {
		r = RQ_SLOT_OK;
	} else {
		log_info("[rq %s] no slot on endpoint '%s' within %llu ms",
		    rq->rq_id, ep, (unsigned long long)rq->rq_ep_wait_ms);
		r = RQ_SLOT_TIMEOUT;
	}
	sw->sw_ep[0] = '\0';
	rq_phase(rq, "%s", was);	/* and the gateway sees it now */
	return r;
}

void
slot_give(struct rq *rq, const char *ep, unsigned limit)
{
	send_slot(rq, PROTO_SLOT_RELEASE, ep, limit);
}
