/* wiki.h - the client of the OfflineWikipediaTextApi: settings, the request, and WilmerAI's answer strings. */
#ifndef SLUICE_WIKI_H
#define SLUICE_WIKI_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/buf.h"
#include "../llm/transport.h"

/* The four searches (one per node type). */
enum wiki_kind { WIKI_FULL, WIKI_BEST, WIKI_TOPN, WIKI_PARTIAL };

/* The user's settings and the call's limits. */
struct wiki_conf {
	bool	 wc_use;		/* useOfflineWikiApi (truthy) */
	char	*wc_base;		/* "http://{host}:{port}" */
	long	 wc_connect_ms;		/* 5000 */
	long	 wc_read_ms;		/* 60000: no byte for this long */
};

/* One search: what is sent. Strings are borrowed. */
struct wiki_query {
	enum wiki_kind	 q_kind;
	const char	*q_prompt;	/* P, already resolved */
	const char	*q_percentile;	/* Python str() of the number */
	long		 q_num_results;
	long		 q_top_n;	/* WIKI_TOPN: num_top_articles */
};

/* Read useOfflineWikiApi, offlineWikiApiHost and offlineWikiApiPort
 * from a user file's root object (NULL: all defaults). Free with
 * wiki_conf_free. */
void	wiki_conf_load(struct wiki_conf *, const json_t *user_root);
void	wiki_conf_free(struct wiki_conf *);	/* NULL-safe, idempotent */

/* The request's URL: base, path and the form-urlencoded query in
 * WilmerAI's order. Caller frees. */
char	*wiki_url(const struct wiki_conf *, const struct wiki_query *);

/* Run the search and append the node's output (A1.4's strings) to out:
 * the "disabled" text without a request when wc_use is false, the
 * apology on any failure. hooks may be NULL. Returns 0, or 1 when the
 * hooks cancelled the call (out untouched). */
int	wiki_search(const struct wiki_conf *, const struct wiki_query *,
	    const struct transport_hooks *hooks, struct buf *out);

/* The answer to a search, given the HTTP status and body: appends the
 * output to out. Returns 0, or -1 when WilmerAI's client would raise
 * (out untouched: the caller says sorry). */
int	wiki_answer(const struct wiki_query *, long status, const char *body,
	    size_t len, struct buf *out);

#endif
