/* export.h - sluice-worker --export-wilmer: the shared database's discussions written out as WilmerAI's DiscussionIds folder. */
#ifndef SLUICE_EXPORT_H
#define SLUICE_EXPORT_H

struct import_opts;

/*
 * Write every discussion of the database under o->io_dir (created if
 * missing) in WilmerAI's layout: <id>/ or <16 hex>/<id>/ holding
 * memories.json, chat_summary.json, timestamps.json,
 * condensation_tracker.json, vision_responses.json,
 * context_compactor_old.json, context_compactor_oldest.json,
 * state_document.md(.bak) and vector_memory.db, as WilmerAI writes them
 * (docs/import-wilmer.md, "Going back"). The key options of o are the
 * import's: rows sealed with encryptUsingApiKey are opened with them, and
 * the files of a user that sets encryptUsingApiKey are written encrypted
 * with that user's key, as WilmerAI would write them. A discussion's
 * folder is written under a temporary name and renamed into place, so it
 * appears whole or not at all; one that exists already is left alone.
 * The report goes to standard output, errors to standard error. Returns
 * the exit status: 0 when every discussion was written (or left alone
 * because its folder exists); EX_NOINPUT when the database is missing;
 * EX_CANTCREAT when io_dir or a file in it cannot be written; EX_IOERR
 * when the database cannot be read; EX_CONFIG when a key file cannot be
 * read.
 */
int	export_run(const struct import_opts *o);

#endif
