/* store_lock.h - named locks with an expiry, shared by every worker (WorkflowLock, memory generation). */
#ifndef SLUICE_STORE_LOCK_H
#define SLUICE_STORE_LOCK_H

#include "store.h"

/* Named locks with expiry (workflow_locks), each in BEGIN IMMEDIATE.
 * store_lock returns 1 when taken (free, expired, or already owner's:
 * the expiry is renewed), 0 when another owner holds it unexpired, -1
 * on error. store_unlock drops one lock if owner holds it;
 * store_unlock_owner drops every lock of owner. Both return the number
 * of locks dropped, or -1. */
int		 store_lock(struct store *, const char *name, const char *owner,
		    unsigned ttl_s);
int		 store_unlock(struct store *, const char *name,
		    const char *owner);
int		 store_unlock_owner(struct store *, const char *owner);

#endif
