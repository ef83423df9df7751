/* pool.h - the supervisor wired to the real world: fork+exec, signals, timers, channels. */
#ifndef SLUICE_POOL_H
#define SLUICE_POOL_H

struct gw;

/* Create g->g_sup with real ops, the supervisor timer and the SIGCHLD
 * handler, and locate the worker binary (next to the gateway unless
 * --worker-bin). Returns 0 or -1 (logged). */
int	pool_init(struct gw *g);

/* Spawn the first workers. */
void	pool_start(struct gw *g);

/* Free the supervisor, channels and events (workers must be gone). */
void	pool_free(struct gw *g);

#endif
