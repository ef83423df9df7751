/* epslots.h - the per-endpoint slot table wired to the supervisor and a deadline timer. */
#ifndef SLUICE_EPSLOTS_H
#define SLUICE_EPSLOTS_H

#include <sys/types.h>

struct gw;
struct proto_msg;

/* Create g->g_slots and its timer. Returns 0 or -1 (logged). */
int	epslots_init(struct gw *g);
void	epslots_free(struct gw *g);	/* NULL-safe members */

/* sup_ops.slot_frame: a worker's SLOT_ACQUIRE or SLOT_RELEASE. */
void	epslots_frame(void *g, unsigned wslot, pid_t pid,
	    const struct proto_msg *m);

/* sup_ops.freed: the worker's request is over or the worker is gone;
 * its slots go to the next waiters. */
void	epslots_freed(void *g, unsigned wslot, pid_t pid);

#endif
