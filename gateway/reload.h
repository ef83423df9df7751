/* reload.h - SIGHUP: read the configuration again, check it, apply it without dropping a request. */
#ifndef SLUICE_RELOAD_H
#define SLUICE_RELOAD_H

struct gw;

/* Load and check the configuration as at start (same command line). On
 * any problem, log each one and keep the running configuration; else
 * apply what can change at run time and roll the workers (old ones
 * leave after their current request). Returns 0 if applied, -1 not. */
int	reload_run(struct gw *);

#endif
