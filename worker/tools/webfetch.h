/* webfetch.h - WebFetch's HTTP client: one request and its redirects by WilmerAI's rules, the address guard on every hop, cancellable (addendum A3.3.1, A3.3.2). */
#ifndef SLUICE_WEBFETCH_H
#define SLUICE_WEBFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "../../common/buf.h"
#include "../llm/transport.h"
#include "netguard.h"

/* One header: sent (the node's), or received (names as the server
 * wrote them first, repeats joined with ", "). */
struct webfetch_hdr {
	char	*wh_name;
	char	*wh_value;
};

/* What to fetch. Everything is borrowed for the call. */
struct webfetch_req {
	const char			*wq_url;
	const char			*wq_method;	/* upper case */
	const struct webfetch_hdr	*wq_hdrs;
	size_t				 wq_nhdrs;
	const char			*wq_body;	/* NULL: none */
	long				 wq_timeout_ms;	/* connect, and
							   each read */
	const char			*wq_proxy;	/* NULL: none */
	bool				 wq_verify;
	const char			*wq_cabundle;	/* NULL: default */
	bool				 wq_redirects;	/* follow 3xx */
	long long			 wq_cap;	/* <= 0: none */
	const struct netguard		*wq_guard;	/* NULL: off */
	/* Test seams; NULL means netguard_check / netguard_connect. */
	int	(*wq_check)(const struct netguard *, const char *url,
		    struct buf *why);
	int	(*wq_connect)(const struct netguard *, const char *host,
		    const struct sockaddr *, struct buf *why);
};

/* A response. Owned; free with webfetch_resp_free. */
struct webfetch_resp {
	long			 wr_status;
	char			*wr_reason;	/* the status line's, UTF-8 */
	struct webfetch_hdr	*wr_hdrs;
	size_t			 wr_nhdrs;
	struct buf		 wr_body;	/* bytes, content-decoded */
	char			*wr_url;	/* the URL that answered */
};

enum webfetch_result {
	WEBFETCH_OK,		/* a response below 400 */
	WEBFETCH_HTTP,		/* an error that has a response: a status
				   of 400 or more, or too many redirects
				   without the guard */
	WEBFETCH_FAILED,	/* an error without one (network, guard,
				   cap, redirects under the guard) */
	WEBFETCH_CANCELLED,	/* the hooks stopped it */
};

/* Run the request. resp must be zeroed by the caller and is filled for
 * WEBFETCH_OK and WEBFETCH_HTTP; err gets the error's text (WilmerAI's
 * where it has a fixed one) for WEBFETCH_HTTP and WEBFETCH_FAILED.
 * hooks may be NULL. Blocks (the resolver, the transfer) but answers
 * the hooks while the transfer runs. */
enum webfetch_result	webfetch_run(const struct webfetch_req *,
	    const struct transport_hooks *, struct webfetch_resp *,
	    struct buf *err);
void	webfetch_resp_free(struct webfetch_resp *);	/* NULL-safe */

/* A response header's value (name matched without case), or NULL.
 * Borrowed. */
const char	*webfetch_header(const struct webfetch_resp *, const char *name);

#endif
