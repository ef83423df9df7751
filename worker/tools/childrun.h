/* childrun.h - a child's whole run: its stdin fed, stdout and stderr gathered under caps, a deadline, cancellation. */
#ifndef SLUICE_CHILDRUN_H
#define SLUICE_CHILDRUN_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/buf.h"
#include "../llm/transport.h"
#include "child.h"

enum child_end {
	CHILD_DONE,		/* exited, both pipes at EOF; reaped */
	CHILD_TIMEOUT,		/* the deadline passed */
	CHILD_CAP,		/* stdout passed ci_outcap */
	CHILD_CANCELLED,	/* the hooks' on_wake said 1 */
	CHILD_FAILED		/* poll or read failed */
};

/* What goes in and comes out. The caller sets the first four members
 * and zeroes the buffers (BUF_INIT), and frees the buffers after. */
struct child_io {
	const char	*ci_in;		/* written to stdin, which is then
					   closed; NULL: closed at once */
	size_t		 ci_inlen;
	size_t		 ci_outcap;	/* stdout beyond this many bytes:
					   CHILD_CAP; SIZE_MAX: none */
	size_t		 ci_errkeep;	/* stderr past this is dropped */
	struct buf	 ci_out;	/* stdout (at most ci_outcap) */
	struct buf	 ci_err;	/* stderr (at most ci_errkeep) */
};

/* Run c (child_spawn'ed) until it ends or must be stopped: deadline
 * (clock_mono_ms), stdout past its cap, or the hooks (NULL: none)
 * asking to stop; on_wake is called once every poll round, at least
 * every tick_ms. Returns how it ended. On CHILD_DONE c is reaped
 * (ch_status, ch_lost); on anything else the caller ends it
 * (child_kill). Descriptors stay the caller's to close (child_kill). */
enum child_end	child_run(struct child *c, struct child_io *io,
		    uint64_t deadline, const struct transport_hooks *hooks);

#endif
