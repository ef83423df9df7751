/* slot.c - a backend call's turn on its endpoint, asked of the gateway that holds every worker's slots. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "../common/log.h"
#include "slot.h"

unsigned
slot_limit(const struct wctx *wc, long ep_max_concurrent)
{
	return ep_max_concurrent > 0 ? (unsigned)ep_max_concurrent :
	    wc->wc_ep_limit;
}

static void
send_slot(struct wctx *wc, uint32_t type, const char *ep, unsigned limit)
{
	struct proto_msg	 m;

	proto_msg_init(&m, type, wc->wc_rqid);
	m.m_u.slot.endpoint = str_from(ep);
	m.m_u.slot.limit = limit;
	m.m_u.slot.timeout_ms = wc->wc_ep_wait_ms;
	wloop_send(wc, &m);
}

/* Sleep on the channel until the gateway answers or the request stops;
 * wloop_on_wake heartbeats every second and reads CANCEL. */
static int
wait_answer(struct wctx *wc)
{
	struct pollfd	 pfd;
	int		 n;

	for (;;) {
		pfd = (struct pollfd){ wc->wc_fd, POLLIN, 0 };
		n = poll(&pfd, 1, 1000);
		if (n == -1 && errno != EINTR)
			fatal("poll");
		if (wloop_on_wake(wc, n == 1) == 1)
			return -1;
		if (wc->wc_slot_answer != 0)
			return 0;
	}
}

enum slot_result
slot_acquire(struct wctx *wc, const char *ep, unsigned limit)
{
	enum slot_result	 r;
	char			 phase[sizeof(wc->wc_phase)];

	if (limit == 0)
		return SLOT_OK;
	if (wloop_stopped(wc))
		return SLOT_STOPPED;
	snprintf(wc->wc_slot_ep, sizeof(wc->wc_slot_ep), "%s", ep);
	wc->wc_slot_answer = 0;
	memcpy(phase, wc->wc_phase, sizeof(phase));
	/* The phase first: whoever sees the wait sees why. */
	wloop_phase(wc, "waiting for a slot on endpoint %s (limit %u)",
	    wc->wc_slot_ep, limit);
	send_slot(wc, PROTO_SLOT_ACQUIRE, wc->wc_slot_ep, limit);
	/* Answered before we even slept when a slot was free. */
	if (wait_answer(wc) == -1) {
		send_slot(wc, PROTO_SLOT_RELEASE, wc->wc_slot_ep, limit);
		r = SLOT_STOPPED;
	} else if (wc->wc_slot_answer > 0) {
		r = SLOT_OK;
	} else {
		log_info("[rq %s] no slot on endpoint '%s' within %llu ms",
		    wc->wc_rqid, ep, (unsigned long long)wc->wc_ep_wait_ms);
		r = SLOT_TIMEOUT;
	}
	wc->wc_slot_ep[0] = '\0';
	wloop_phase(wc, "%s", phase);	/* and the gateway sees it now */
	return r;
}

void
slot_release(struct wctx *wc, const char *ep, unsigned limit)
{
	if (limit > 0)
		send_slot(wc, PROTO_SLOT_RELEASE, ep, limit);
}
