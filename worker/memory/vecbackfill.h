/* vecbackfill.h - sluice-gateway --backfill-embeddings: every vector memory without an embedding by an endpoint's model, embedded offline in batches (WilmerAI's Scripts/backfill_embeddings.py, A9.6). */
#ifndef SLUICE_VECBACKFILL_H
#define SLUICE_VECBACKFILL_H

#include <stdbool.h>

#define VECBACKFILL_BATCH	32	/* texts a request, WilmerAI's default */
#define VECBACKFILL_TRIES	3	/* failed batches in a row that stop it */

struct backfill_opts {
	const char	*bo_confdir;	/* the configuration folder */
	const char	*bo_user;	/* whose Endpoints folder names it */
	const char	*bo_endpoint;	/* an openAIEmbeddings or
					   ollamaEmbeddings endpoint */
	const char	*bo_store;	/* the database: a SQLite file or a
					   PostgreSQL URL (store_open) */
	bool		 bo_sync_full;	/* --db-sync full */
	long		 bo_batch;	/* texts a request, at least 1 */
};

/*
 * Embed, discussion by discussion, every vector memory that has no
 * embedding by the endpoint's model, bo_batch texts a request, and keep
 * each batch's vectors as it comes (one transaction a batch, so a stop
 * keeps what was done). A batch that fails is tried again;
 * VECBACKFILL_TRIES failures in a row stop the run. SIGINT and SIGTERM
 * stop it between requests and during one. The report goes to standard
 * output, errors to standard error. Returns the exit status: 0 when no
 * memory is left without an embedding by that model; EX_CONFIG when the
 * user or the endpoint cannot be loaded or is not an embeddings
 * endpoint; EX_NOINPUT when the database is missing; EX_IOERR when the
 * database fails; EX_UNAVAILABLE when the backend failed
 * VECBACKFILL_TRIES times in a row or the run was stopped.
 */
int	vecbackfill_run(const struct backfill_opts *o);

#endif
