/* gwimport.h - sluice-gateway --import-wilmer, --export-wilmer and --backfill-embeddings: the worker does the work (the gateway never touches SQLite); we wait for it. */
#ifndef SLUICE_GWIMPORT_H
#define SLUICE_GWIMPORT_H

struct gw_conf;

/* Run sluice-worker --import-wilmer c_import_dir (or --export-wilmer
 * c_export_dir, or --copy-store c_copy_from --copy-to c_copy_to
 * (gwcopy.c), or --backfill-embeddings c_backfill_ep with the
 * configuration folder and the first user) with the database of c_state_dir (which must exist for
 * the import; the export reports a missing one) and c_db_sync_full, with
 * the key files and user names, through
 * posix_spawn (no shell), sharing our standard output and error, and
 * wait for it. Starts no listener, pool or systemd notification.
 * Returns the worker's exit status (128 + N when signal N killed it),
 * or EX_UNAVAILABLE (logged) when it cannot be started. */
int	gwimport_run(const struct gw_conf *c);

#endif
