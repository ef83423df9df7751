/* gate.h - the global request limit (--concurrency): beyond N, requests wait in order. */
#ifndef SLUICE_GATE_H
#define SLUICE_GATE_H

#include <stdbool.h>
#include <stdint.h>

struct event_base;
struct gate;
struct gate_waiter;

/* A waiting request learns its fate: admitted, or not (timed out). */
typedef void	(*gate_fn)(void *owner, bool admitted);

/* limit 0 admits everything. NULL only on allocation failure. */
struct gate	*gate_new(struct event_base *, unsigned limit,
		    uint64_t timeout_ms);
void		 gate_free(struct gate *);	/* waiters get no callback */

/* New settings (reload); waiters keep their place. */
void		 gate_set(struct gate *, unsigned limit, uint64_t timeout_ms);

/* Returns true when admitted at once. Otherwise the request waits and
 * *w identifies it until fn runs (once) or gate_cancel. */
bool		 gate_enter(struct gate *, void *owner, gate_fn fn,
		    struct gate_waiter **w);

/* The owner of a waiting request is gone: forget it, no callback. */
void		 gate_cancel(struct gate *, struct gate_waiter *);

/* An admitted request is over: the next waiter (if any) is admitted. */
void		 gate_leave(struct gate *);

/* Admitted requests now, and waiters. */
unsigned	 gate_active(const struct gate *);
unsigned	 gate_waiting(const struct gate *);

#endif
