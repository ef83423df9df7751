/* notify.h - talking to systemd: readiness, status, reload, stop, watchdog. */
#ifndef SLUICE_NOTIFY_H
#define SLUICE_NOTIFY_H

struct gw;

/* Start the status timer and, when systemd asked for one
 * (WATCHDOG_USEC), the watchdog timer. 0 or -1. */
int	notify_init(struct gw *);
void	notify_free(struct gw *);

void	notify_ready(struct gw *);	/* READY=1 and a STATUS= line */
void	notify_reloading(struct gw *);	/* RELOADING=1, MONOTONIC_USEC= */
void	notify_stopping(struct gw *);	/* STOPPING=1 */

#endif
