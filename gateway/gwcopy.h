/* gwcopy.h - sluice-gateway --copy-store FROM TO: the arguments checked here, the copy done by sluice-worker (the gateway links no database library). */
#ifndef SLUICE_GWCOPY_H
#define SLUICE_GWCOPY_H

struct gw_conf;

/* Refuse a FROM or TO (c_copy_from, c_copy_to) that carries a password
 * (it would show in /proc/PID/cmdline: libpq reads PGPASSWORD or the
 * password file instead) or names a scheme other than postgresql:// or
 * postgres:// (EX_USAGE, said on stderr); else run sluice-worker
 * --copy-store FROM --copy-to TO (gwimport_run) and return its exit
 * status (worker/import/copystore.h). Needs no configuration folder. */
int	gwcopy_run(const struct gw_conf *c);

#endif
