/* store_turn.h - turns on a shared resource counted across every gateway of a PostgreSQL store: one of N session-level advisory locks. */
#ifndef SLUICE_STORE_TURN_H
#define SLUICE_STORE_TURN_H

#include "store.h"

/*
 * A turn is one of limit advisory locks on the PostgreSQL server, in
 * the two-number key space (a number from name, the turn's index), held
 * by the store's session: the server gives it back when the session
 * ends, so a worker, gateway or machine that dies gives its turns back
 * (within the keepalive bound on a dead machine: docs/scaling.md). On
 * SQLite there is nothing to count across machines: every call says
 * taken (the gateway's own slots are the limit).
 *
 * store_turn_try takes a free turn of name's limit without waiting: 1
 * with its index in *index, 0 when all limit are held elsewhere, -1 on
 * an error (store_err). A session holds at most one turn of a name (a
 * second try of the same session would take the same lock again).
 * store_turn_give gives turn index back: 0, or -1.
 */
int	store_turn_try(struct store *, const char *name, unsigned limit,
	    unsigned *index);
int	store_turn_give(struct store *, const char *name, unsigned index);

#endif
