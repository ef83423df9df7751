/* export_int.h - what the files of the WilmerAI export share: the discussion being written, its folder and its files' key. */
#ifndef SLUICE_EXPORT_INT_H
#define SLUICE_EXPORT_INT_H

#include "import_int.h"

/* One discussion being written. */
struct exp_disc {
	const char		*e_key;		/* Sluice's: "id" or "<16 hex>/id" */
	const char		*e_id;		/* WilmerAI's discussion id */
	const char		*e_dir;		/* the folder written (its
						   temporary name) */
	const struct fernet_key	*e_file_key;	/* the files are encrypted
						   with it, or NULL */
};

/* export_files.c: d's JSON files and state document from its rows
 * (sealed text opened with the store's key) into d->e_dir. A part whose
 * rows the store's key cannot open is left out and noted in
 * r->ir_skips. 0, or -1 with r->ir_err and r->ir_fail set. */
int	exp_files(struct store *, const struct exp_disc *d, struct imp_res *r);

/* export_vec.c: d's vector memories, their keyword index rows and
 * embeddings, and its hash log, as d->e_dir/vector_memory.db in
 * WilmerAI's schema (nothing when d has none of them). 0, or -1 with
 * r->ir_err and r->ir_fail set. */
int	exp_vec(struct store *, const struct exp_disc *d, struct imp_res *r);

/* export_files.c: write n bytes of p as d->e_dir/name, Fernet-encrypted
 * with d->e_file_key when set, and fsync it. 0, or -1 with r->ir_err
 * and r->ir_fail (EX_CANTCREAT) set. */
int	exp_write(const struct exp_disc *d, const char *name, const char *p,
	    size_t n, struct imp_res *r);

#endif
