/* slots.h - per-endpoint concurrency slots the gateway grants to workers, first come first served. */
#ifndef SLUICE_SLOTS_H
#define SLUICE_SLOTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct slots;

/* Tell worker (wslot, pid) about its request for ep: granted, or not
 * (timed out). Called from inside the functions below. */
typedef void	(*slots_grant_fn)(void *arg, unsigned wslot, pid_t pid,
		    const char *ep, bool granted);

struct slots	*slots_new(slots_grant_fn, void *arg);
void		 slots_free(struct slots *);	/* NULL-safe */

/* A worker asks for one of limit concurrent calls to ep: granted at once
 * when one is free and nobody waits, else queued until a holder lets go
 * or until now + timeout_ms (then refused). The latest limit given for
 * an endpoint is the one in force. */
void	slots_acquire(struct slots *, unsigned wslot, pid_t pid,
	    const char *ep, unsigned limit, uint64_t now, uint64_t timeout_ms);

/* The worker is done with ep, or stops waiting for it. */
void	slots_release(struct slots *, unsigned wslot, pid_t pid,
	    const char *ep);

/* Everything the worker holds or waits for goes: its request ended or
 * it died. Returns how many held slots it still had. */
unsigned slots_drop_worker(struct slots *, unsigned wslot, pid_t pid);

/* Refuse waiters whose time is up; returns the next deadline, 0 if none. */
uint64_t slots_tick(struct slots *, uint64_t now);

/* For metrics: fn(arg, endpoint, in use, waiting) for every endpoint. */
void	slots_foreach(const struct slots *, void (*fn)(void *, const char *,
	    unsigned, unsigned), void *arg);

#endif
