/* vecmem_text.h - vector memory without the database: the FTS5 query, FTS columns of a fact, JSON out of an LLM answer, dates, recency, entity expansion, output. */
#ifndef SLUICE_VECMEM_TEXT_H
#define SLUICE_VECMEM_TEXT_H

#include "vecmem.h"

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

void	 vecmem_rows_free(struct vecmem_rows *);	/* leaves it empty */

/* Free a NULL-terminated list of strings (vecmem_hashes'). */
void	 vecmem_strv_free(char **);

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

#endif
