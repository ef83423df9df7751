/* browser.h - what a web page may do here: Host and Origin checks, CORS preflights and headers, ahead of the routes. */
#ifndef SLUICE_BROWSER_H
#define SLUICE_BROWSER_H

#include <stdbool.h>

#include "http.h"

struct gw;

/* Judge r before it is routed, with g's allowed_hosts and
 * allowed_origins. Returns true when r goes on to its route; when it
 * came with an admitted Origin, every reply to it then carries the
 * CORS headers (http_set_headers). Returns false when r was answered
 * here: refused (400 or 421 for its Host, 403 for its Origin, as JSON
 * in the route's shape) or a CORS preflight (204). */
bool	browser_gate(struct gw *g, struct http_conn *c,
	    const struct http_request *r);

#endif
