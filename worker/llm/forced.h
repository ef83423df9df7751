/* forced.h - an enforcement round (addendum A8.6): the call, one redraw on a miss, the answer read back as the tool call the client demanded. */
#ifndef SLUICE_FORCED_H
#define SLUICE_FORCED_H

#include "../clean/clean.h"
#include "../core/node.h"
#include "adapter.h"
#include "toolforce.h"

/* Make the call nc (its native tools dropped, tf's schema attached,
 * nc_quiet set) for x. When the answer is the call tf demands, it
 * becomes that call: nc_tool_calls (when not NULL) holds it, o's text
 * is empty, its finish "tool_calls". A miss is redrawn once with the
 * same request (a fresh cleaner from cc); after a second miss the text
 * stays as it came, and goes to the client now when nc streams. An
 * answer that already carries tool calls (the backend called natively)
 * is kept as it is, streamed or not (WilmerAI drops a stream's and
 * reads only its text). Returns 0, or -1 with res filled as
 * backend_call fills it. */
int	forced_call(struct node_ctx *x, const struct toolforce *tf,
	    struct node_call *nc, const struct clean_conf *cc,
	    struct node_out *o, struct wresult *res);

#endif
