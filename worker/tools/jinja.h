/* jinja.h - Jinja2 rendering in a python3 helper the worker starts once and keeps (addendum A7). */
#ifndef SLUICE_JINJA_H
#define SLUICE_JINJA_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "../../common/buf.h"
#include "../llm/transport.h"

/*
 * The real Jinja2 renders, so the output is Jinja2's to the byte: the
 * helper is `python3 -I -c <worker/tools/jinja_helper.py>` (the script
 * is built into the worker), started by the first render of a worker
 * and kept for its lifetime, in its own process group. One JSON line
 * each way per render. A render that runs past its time limit, or that
 * the request's cancellation interrupts, costs the helper (SIGKILL to
 * its group); the next render starts another.
 */

#define JINJA_TIMEOUT_MS	2000		/* one render */
#define JINJA_OUT_MAX		(16u << 20)	/* bytes of output */
#define JINJA_MEM_MAX		(1024ul << 20)	/* the helper's RLIMIT_AS */
#define JINJA_START_MS		10000		/* python3 and import jinja2 */

/* Zeroed members take the defaults above. */
struct jinja_limits {
	unsigned	 jl_timeout_ms;
	size_t		 jl_out_max;
	size_t		 jl_mem_max;
};

enum jinja_end {
	JINJA_OK,		/* out holds the text */
	JINJA_ERROR,		/* err holds the cause, *line its line */
	JINJA_CANCELLED		/* the hooks' on_wake said 1 */
};

/* Render tmpl with the variables of ctx (a JSON object; borrowed) as
 * jinja2.Environment().from_string(tmpl).render(**ctx) does. lim and
 * hooks may be NULL (defaults; no cancellation). On JINJA_OK the text
 * is appended to out; on JINJA_ERROR one line is appended to err (the
 * exception's type and message, or what stopped the render: the time
 * limit, the output limit, the helper gone, no jinja2 module) and *line
 * is the template's line it names, or 0 when none. */
enum jinja_end	jinja_render(const char *tmpl, json_t *ctx,
		    const struct jinja_limits *lim,
		    const struct transport_hooks *hooks, struct buf *out,
		    struct buf *err, long *line);

/* The helper's pid, or -1 when none is running. For tests. */
pid_t		jinja_helper_pid(void);

/* Stop the helper (SIGKILL to its group, reaped). Idempotent. */
void		jinja_shutdown(void);

#endif
