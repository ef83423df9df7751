/* ep_error.h - a backend call's failure as the client sees it: messages that name the endpoint, statuses from docs/api.md's table. */
#ifndef SLUICE_EP_ERROR_H
#define SLUICE_EP_ERROR_H

#include "../../common/conf.h"
#include "../rq.h"
#include "transport.h"

/* Fill res as a failed request (RQ_ERROR, http, code) whose message
 * starts "endpoint 'name' (url): " and goes on with fmt; the URL as
 * url_shown shows it (no credentials: the message reaches the
 * client). */
void	ep_fail(struct wresult *res, const struct conf_endpoint *ep,
	    int http, const char *code, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));

/* Judge a finished transfer: 0 when the backend answered 2xx, else -1
 * with res filled: RQ_CANCELLED; 502 (cannot connect, connection lost,
 * aborted: with aborted as the reason); 504 (timeout); or the client's
 * status for the backend's error status, with its message, r_upstream
 * and r_retry_after. */
int	ep_judge(const struct transport_result *lr,
	    const struct conf_endpoint *ep, const char *aborted,
	    struct wresult *res);

#endif
