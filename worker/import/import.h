/* import.h - sluice-worker --import-wilmer: WilmerAI discussion folders into the shared database. */
#ifndef SLUICE_IMPORT_H
#define SLUICE_IMPORT_H

#include <stdbool.h>

struct import_opts {
	const char	*io_dir;	/* a DiscussionIds folder or one
					   discussion's folder */
	const char	*io_store;	/* the database: a SQLite file or a
					   PostgreSQL URL (store_open) */
	bool		 io_sync_full;	/* --db-sync full */
	/* Encrypted discussions (encryptUsingApiKey): files holding an
	 * API key each (--import-key-file; $WILMER_API_KEY is read too),
	 * and the user names the keys were derived for, as configured. */
	const char *const *io_key_files;
	size_t		 io_nkey_files;
	const char *const *io_users;
	size_t		 io_nusers;
	/* Those of io_users whose file sets encryptUsingApiKey: what is
	 * imported for them under a key given is stored encrypted with
	 * that key, as their requests would write it (A10). */
	const char *const *io_sealers;
	size_t		 io_nsealers;
};

/*
 * Import every WilmerAI discussion found under io_dir into the database,
 * one transaction per discussion, idempotently: what Sluice already holds
 * is never replaced (see docs/import-wilmer.md for the rules). The report
 * goes to standard output, one line per discussion and a total line;
 * errors go to standard error. Returns the process exit status: 0 when
 * everything readable was imported; EX_DATAERR when a discussion could
 * not be read (malformed JSON, a broken vector_memory.db: that discussion
 * is left out, the others are imported); EX_CONFIG when a key file cannot
 * be read; EX_IOERR when the database
 * refused a write; EX_NOINPUT when io_dir is missing or holds no
 * discussion; EX_CANTCREAT when the database cannot be opened.
 */
int	import_run(const struct import_opts *);

#endif
