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

/* The FTS5 MATCH query for keywords "a; b; c": each ';'-separated term
 * stripped, empty ones dropped, the first VECMEM_MAX_TERMS kept; in
 * each '-' becomes a space and '"' becomes '""', the term is stripped
 * again and put in double quotes; the terms joined by " OR ". Every
 * result is a valid FTS5 query of quoted strings only (no operator of
 * the user's). NULL when there is no term; else the caller frees. */
char	*vecmem_query(const char *keywords);

/* WilmerAI's FTS columns of one extracted fact (add_memory_to_vector_db):
 * title and summary as they are, lists joined by spaces with their
 * items' '"' removed, with topics the "topics" list appended to
 * key_phrases. Every member is set; free with vecmem_fts_free. */
struct vecmem_fts {
	char	*vf_title;
	char	*vf_summary;
	char	*vf_entities;
	char	*vf_key_phrases;
};
void	 vecmem_flatten(json_t *fact, bool topics, struct vecmem_fts *out);
void	 vecmem_fts_free(struct vecmem_fts *);

/* The memory text of an extracted fact: an object holding "title",
 * "summary", "entities" and "key_phrases" whose summary is a string or
 * a number. NULL when the fact cannot be stored; else the caller frees. */
char	*vecmem_fact_text(json_t *fact);

/* The JSON in an LLM's answer (WilmerAI's _parse_llm_json_output): the
 * body of the first ```json fence, or the first {...} or [...] (from
 * the first brace or bracket to the last matching closer), whichever
 * comes first; parsed. NULL when there is none or it does not parse;
 * else a new reference. */
json_t	*vecmem_parse(const char *answer);

/* UTC time ms (Unix epoch) as WilmerAI's date_added ("%Y-%m-%dT%H:%M:%S
 * .ffffff+00:00"). */
void	 vecmem_date(uint64_t ms, char out[VECMEM_DATELEN]);

/* The recency boost of a memory dated date (ISO 8601; no offset means
 * UTC) at now (Unix seconds): 1 + 1.5 * exp(-0.01 * days old), days
 * never negative; 1.0 when date does not parse. */
double	 vecmem_recency(const char *date, int64_t now);

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

void	 vecmem_rows_free(struct vecmem_rows *);	/* leaves it empty */

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

/* The last VECMEM_HISTORY logged hashes of key, newest first, into
 * out (NULL-terminated, free with vecmem_strv_free), their count in
 * *n, and the newest log row's id (0: none) in *last_id. 0 or -1. */
int	 vecmem_hashes(struct store *, const char *key, char ***out,
	    size_t *n, int64_t *last_id);
void	 vecmem_strv_free(char **);

/* How many times hash was logged for key in rows after id since.
 * -1 on error. */
long	 vecmem_logged_since(struct store *, const char *key,
	    const char *hash, int64_t since);

/* One chunk's facts (each must pass vecmem_fact_text) and the log of
 * its hash, in one BEGIN IMMEDIATE transaction, dated now_ms; unless
 * the hash was logged after log row since more than own times (own:
 * how often the caller itself logged it since then), i.e. another
 * worker stored the chunk meanwhile. Returns the facts stored, 0 when
 * the chunk was stored elsewhere (nothing written), -1 (store_err;
 * rolled back). */
long	 vecmem_store_chunk(struct store *, const char *key,
	    json_t *const *facts, size_t n, bool topics, const char *hash,
	    int64_t since, long own, uint64_t now_ms);

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

/* The facts of key with these ids, in the order of ids (missing ones
 * left out), appended to out. 0 or -1. */
int	 vecmem_by_ids(struct store *, const char *key, const int64_t *ids,
	    size_t n, struct vecmem_rows *out);

/* Entity expansion's second query: the entities (metadata "entities"
 * lists) of the first VECMEM_SEED_ROWS rows, stripped, without those
 * equal (lower-cased) to a term of keywords or to an earlier one, at
 * most VECMEM_MAX_TERMS, joined by "; ". NULL when there is none; else
 * the caller frees. */
char	*vecmem_harvest(const struct vecmem_rows *base, const char *keywords);

/* Blend the second search's rows into base: the rows not in base
 * ("novel") get min(max(1, limit / 3), novel, limit - 1) slots at the
 * end; base keeps the rest, novel rows fill what is left up to limit.
 * second is emptied. base unchanged when nothing is novel or limit <= 0. */
void	 vecmem_blend(struct vecmem_rows *base, struct vecmem_rows *second,
	    long limit);

/* The rows' memory texts joined by VECMEM_SEP, each after "[YYYY-MM-DD] "
 * (its date's first ten characters) with dates and a date. Caller frees. */
char	*vecmem_format(const struct vecmem_rows *, bool dates);

/* ---- QualityMemory's vector path (mem_vector.c) ------------------ */

/* WilmerAI's handle_discussion_id_flow, vector branch: the non-system
 * messages but the last lookbackStartTurn are eligible; those after the
 * newest of the last VECMEM_HISTORY logged chunk hashes are new; when
 * their estimate reaches vectorMemoryChunkEstimatedTokenSize (scaled by
 * the estimation level) or they are vectorMemoryMaxMessagesBetweenChunks
 * or more, each chunk of them goes to the LLM (or the
 * vectorMemoryWorkflowName workflow) and the facts it returns are stored
 * with the chunk's hash, one transaction per chunk. The caller has
 * checked the discussion and the message count and holds the
 * discussion's generation lock. Returns 0 (stored, nothing to do, or a
 * chunk that gave no facts), or -1 with res filled. */
int	 memory_vector_run(struct node_ctx *x, const struct memory_settings *ms,
	    const char *key, struct wresult *res);

#endif
