/* ep_error.c - a backend call's failure as the client sees it: messages that name the endpoint, statuses from docs/api.md's table. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "adapter.h"
#include "ep_error.h"
#include "url.h"

void
ep_fail(struct wresult *res, const struct conf_endpoint *ep, int http,
    const char *code, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n;
	char	 url[256];

	res->r_status = RQ_ERROR;
	res->r_http = (uint32_t)http;
	res->r_retry_after[0] = '\0';
	snprintf(res->r_code, sizeof(res->r_code), "%s", code);
	snprintf(res->r_endpoint, sizeof(res->r_endpoint), "%s", ep->e_name);
	url_shown(ep->e_url, url, sizeof(url));
	snprintf(res->r_message, sizeof(res->r_message),
	    "endpoint '%s' (%s): ", ep->e_name, url);
	n = strlen(res->r_message);
	va_start(ap, fmt);
	vsnprintf(res->r_message + n, sizeof(res->r_message) - n, fmt, ap);
	va_end(ap);
}

/* What a backend's error body says: its message (gen_input.h), else a
 * short, single-line excerpt of it. */
static void
error_detail(const struct buf *b, char *out, size_t len)
{
	size_t	 i, k = 0;

	if (adapter_error_message(b->b_data, b->b_len, out, len))
		return;
	for (i = 0; i < b->b_len && k + 1 < len && k < 200; i++)
		out[k++] = (b->b_data[i] == '\n' || b->b_data[i] == '\r') ? ' ' :
		    b->b_data[i];
	out[k] = '\0';
}

/* The client's status for a backend's error status, one table in
 * docs/api.md: slow down (429) and come back later (503) are passed on,
 * a request the backend refuses for its content (too long for the
 * context, ...) is the client's (400); anything else, 401, 403 and 404
 * included, is a broken backend or a misconfigured gateway (502). */
static int
client_status(long upstream)
{
	switch (upstream) {
	case 429:
	case 503:
		return (int)upstream;
	case 400:
	case 413:
		return 400;
	default:
		return 502;
	}
}

/* The backend answered with an error status: the client's status, the
 * backend's message and Retry-After; r_upstream for the retry rule. */
static int
http_error(const struct transport_result *lr, const struct conf_endpoint *ep,
    struct wresult *res)
{
	char	 detail[256];

	error_detail(&lr->err_body, detail, sizeof(detail));
	ep_fail(res, ep, client_status(lr->status), "backend_http_error",
	    "answered HTTP %ld%s%s", lr->status, detail[0] ? ": " : "",
	    detail);
	res->r_upstream = lr->status;
	snprintf(res->r_retry_after, sizeof(res->r_retry_after), "%s",
	    lr->retry_after);
	return -1;
}

int
ep_judge(const struct transport_result *lr, const struct conf_endpoint *ep,
    const char *aborted, struct wresult *res)
{
	switch (lr->outcome) {
	case XFER_CANCELLED:
		res->r_status = RQ_CANCELLED;
		return -1;
	case XFER_CONNECT:
		ep_fail(res, ep, 502, "backend_unavailable", "%s", lr->error);
		return -1;
	case XFER_TIMEOUT:
		ep_fail(res, ep, 504, "backend_timeout", "%s", lr->error);
		return -1;
	case XFER_NETWORK:
		ep_fail(res, ep, 502, "backend_error", "connection lost: %s",
		    lr->error);
		return -1;
	case XFER_ABORTED:
		ep_fail(res, ep, 502, "backend_bad_response", "%s",
		    aborted != NULL && aborted[0] ? aborted :
		    "invalid response");
		return -1;
	case XFER_OK:
		break;
	}
	if (lr->status < 200 || lr->status > 299)
		return http_error(lr, ep, res);
	return 0;
}
