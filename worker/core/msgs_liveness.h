/* msgs_liveness.h - livenessToolCall on the way in: the liveness machinery taken out of the client's conversation, and runs of identical tool calls collapsed (addendum A8.7). */
#ifndef SLUICE_MSGS_LIVENESS_H
#define SLUICE_MSGS_LIVENESS_H

#include <jansson.h>

#include "msgs.h"

/* For a user with livenessToolCall (tool name, arguments): take the
 * liveness calls Sluice added out of l, with the results that answer
 * them, except a trailing exchange that is one (kept as it came, so
 * the workflow sees the client answer it); then replace each run of
 * three or more identical single-call turns with identical results by
 * its first, whose result says how often the call was made. */
void	wmsgs_liveness_clean(struct wmsgs *l, const char *name,
	    const json_t *args);

#endif
