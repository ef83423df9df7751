/* stubs_nodes.c - for check_nodes: the worker loop's calls node handlers make, recorded; stand-ins for the handlers not linked. */
#include <stdarg.h>
#include <stdio.h>

#include "../worker/node.h"
#include "../worker/wloop.h"

/* Read and set by check_nodes.c (declared there). */
int	stub_wake_calls;	/* wloop_on_wake calls so far */
int	stub_wake_readable;	/* ...saying the channel was readable */
int	stub_cancel_at;		/* wloop_on_wake says "stop" from this call on
				   (0: never) */
int	stub_cancel_on_readable; /* ...or when the channel is readable */
int	stub_phase_calls;
char	stub_phase[256];	/* the last wloop_phase text */

int
wloop_on_wake(void *arg, bool readable)
{
	stub_wake_calls++;
	if (readable)
		stub_wake_readable++;
	return (stub_cancel_at > 0 && stub_wake_calls >= stub_cancel_at) ||
	    (stub_cancel_on_readable && readable);
}

void
wloop_phase(struct wctx *wc, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(stub_phase, sizeof(stub_phase), fmt, ap);
	va_end(ap);
	stub_phase_calls++;
}

/* A stand-in for every handler of common/nodetypes.def, so that the
 * registry links whichever node files check_nodes_OBJS holds: a
 * handler linked in (a strong definition) replaces its weak stand-in,
 * the others fail when run. */
static int
not_here(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return node_fail(x, res, 500, "not in this test");
}

#define NODETYPE(name, id, runs)	NODETYPE_##runs(name, id)
#define NODETYPE_IMPLEMENTED(name, id)					\
	__attribute__((weak)) const struct node_type node_##id =	\
	    { name, not_here, false };
#define NODETYPE_NOT_IMPLEMENTED(name, id)
#include "../common/nodetypes.def"
#undef NODETYPE_NOT_IMPLEMENTED
#undef NODETYPE_IMPLEMENTED
#undef NODETYPE
