/* vecmem.h - WilmerAI's vector memory in the shared database: facts indexed by FTS5, the chunk hash log, keyword search; and QualityMemory's vector write path. */
#ifndef SLUICE_VECMEM_H
#define SLUICE_VECMEM_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../store/store.h"

struct node_ctx;
struct memory_settings;
struct wresult;

#define VECMEM_MAX_TERMS	60	/* WilmerAI's MAX_KEYWORDS_FOR_SEARCH */
#define VECMEM_HISTORY		10	/* logged hashes read back to resume */
#define VECMEM_SEED_ROWS	10	/* rows whose entities seed expansion */
#define VECMEM_NWEIGHTS		5	/* one BM25 weight per FTS column */
#define VECMEM_DATELEN		64	/* "2025-09-20T16:30:05.123000+00:00" */
#define VECMEM_SEP		"\n\n---\n\n"

/* ---- text (vecmem_text.c): no database ---------------------------- */

/* ---- the store (vecmem.c) ---------------------------------------- */

/* One stored fact. */
struct vecmem_row {
	int64_t	 vr_id;
	char	*vr_text;	/* memory_text (the summary) */
	char	*vr_date;	/* date_added */
	char	*vr_meta;	/* metadata_json, NULL when none */
};

struct vecmem_rows {
	struct vecmem_row	*v;
	size_t			 n;
};

/* Store one fact of discussion key (the discussion row is made when
 * missing): memory_text from vecmem_fact_text, metadata_json the fact
 * as JSON, the FTS row from vecmem_flatten, date_added date. Meant for
 * the caller's transaction. Returns the new id, 0 when the fact cannot
 * be stored (see vecmem_fact_text), -1 with store_err set. */
int64_t	 vecmem_add(struct store *, const char *key, json_t *fact,
	    bool topics, const char *date);

/* Log that the chunk ending with the message of this hash is stored,
 * at now (Unix seconds). Returns the log row's id, or -1. */
int64_t	 vecmem_log_hash(struct store *, const char *key, const char *hash,
	    int64_t now);

/* How many times hash was logged for key in rows after id since.
 * -1 on error. */
long	 vecmem_logged_since(struct store *, const char *key,
	    const char *hash, int64_t since);

/* One chunk's facts (each must pass vecmem_fact_text) and the log of
 * its hash, in one BEGIN IMMEDIATE transaction, dated now_ms; unless
 * the hash was logged after log row since more than own times (own:
 * how often the caller itself logged it since then), i.e. another
 * worker stored the chunk meanwhile. The new facts' ids go to ids[0..n)
 * unless ids is NULL. Returns the facts stored, 0 when the chunk was
 * stored elsewhere (nothing written), -1 (store_err; rolled back). */
long	 vecmem_store_chunk(struct store *, const char *key,
	    json_t *const *facts, size_t n, bool topics, const char *hash,
	    int64_t since, long own, uint64_t now_ms, int64_t *ids);

/* A keyword search. */
struct vecmem_search {
	const char	*vs_keywords;	/* "a; b; c" */
	long		 vs_limit;	/* < 0: no limit */
	const double	*vs_weights;	/* VECMEM_NWEIGHTS, or NULL: equal */
	bool		 vs_recency;	/* rank * vecmem_recency() */
	int64_t		 vs_now;	/* Unix seconds, for the recency */
	bool		 vs_expand;	/* entity expansion */
};

/* The facts of key matching the keywords by BM25 (best first; ties by
 * id), appended to out. With vs_expand, the entities of the top
 * VECMEM_SEED_ROWS rows not among the keywords make a second search,
 * and the facts only it found take the reserved last slots (see
 * vecmem_blend). No term: nothing found. 0 or -1 (store_err). */
int	 vecmem_search(struct store *, const char *key,
	    const struct vecmem_search *, struct vecmem_rows *out);

/* Entity expansion (vs_expand) of rows found for q: the entities of
 * their top VECMEM_SEED_ROWS not among the keywords make a second
 * search whose own finds take the reserved last slots (vecmem_blend).
 * Nothing happens without vs_expand or rows. 0 or -1 (store_err). */
int	 vecmem_expand(struct store *, const char *key,
	    const struct vecmem_search *, struct vecmem_rows *rows);

/* The facts of key with these ids, in the order of ids (missing ones
 * left out), appended to out. 0 or -1. */
int	 vecmem_by_ids(struct store *, const char *key, const int64_t *ids,
	    size_t n, struct vecmem_rows *out);

/* ---- QualityMemory's vector path (mem_vector.c) ------------------ */

/* The last VECMEM_HISTORY logged hashes of key, newest first, into
 * out (NULL-terminated, free with vecmem_strv_free), their count in
 * *n, and the newest log row's id (0: none) in *last_id. 0 or -1. */
int	 vecmem_hashes(struct store *, const char *key, char ***out,
	    size_t *n, int64_t *last_id);

#endif
