/* confcheck.h - --check-config: load what a user can reach and report problems. */
#ifndef SLUICE_CONFCHECK_H
#define SLUICE_CONFCHECK_H

struct gw_conf;

/* Load the user's workflows (its custom workflow and every shared one)
 * and, for each node naming an endpoint, that endpoint, its api type and
 * its preset. Each problem goes to report as "path:line:col: message"
 * (NULL: printed to stderr, with "configuration OK" at the end when
 * there is none). Returns 0 when all is well, EX_CONFIG otherwise. */
int	confcheck_run(const struct gw_conf *, void (*report)(const char *));

#endif
