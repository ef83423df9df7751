/* copystore.h - sluice-worker --copy-store: one store's rows into another (SQLite file or PostgreSQL), checked, with a report. */
#ifndef SLUICE_COPYSTORE_H
#define SLUICE_COPYSTORE_H

/*
 * Copy the store at from into the store at to (each a SQLite file, a
 * state folder meaning its sluice.db, or a postgresql:// or postgres://
 * URL without a password: libpq reads PGPASSWORD or the password file
 * itself), then check that every row copied is there. The source is
 * read in one snapshot; the target is written in one transaction, so a
 * copy that fails or is interrupted leaves it as it was, and a second
 * run finds everything there already and copies nothing (see
 * store_copy.h for what is copied). The report goes to standard output,
 * errors to standard error, stores named without their password.
 * Returns the exit status: 0 copied and checked; EX_USAGE for arguments
 * that name no store, carry a password or name the same store twice;
 * EX_NOINPUT when the source is missing or cannot be opened;
 * EX_CANTCREAT when the target cannot be opened or created; EX_DATAERR
 * when the target holds other values under a key of the source's
 * (nothing is copied then) or the check after the copy failed;
 * EX_IOERR when a read or a write failed (nothing is copied).
 */
int	copystore_run(const char *from, const char *to);

#endif
