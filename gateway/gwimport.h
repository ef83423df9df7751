/* gwimport.h - sluice-gateway --import-wilmer: the worker does the import (the gateway never touches SQLite); we wait for it. */
#ifndef SLUICE_GWIMPORT_H
#define SLUICE_GWIMPORT_H

struct gw_conf;

/* Run sluice-worker --import-wilmer c_import_dir with the database of
 * c_state_dir (which must exist) and c_db_sync_full, through
 * posix_spawn (no shell), sharing our standard output and error, and
 * wait for it. Starts no listener, pool or systemd notification.
 * Returns the worker's exit status (128 + N when signal N killed it),
 * or EX_UNAVAILABLE (logged) when it cannot be started. */
int	gwimport_run(const struct gw_conf *c);

#endif
