/* research.h - the Offline Researcher client: search, envelope, text. */
#ifndef SLUICE_RESEARCH_H
#define SLUICE_RESEARCH_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/buf.h"
#include "../llm/transport.h"

/* The user's settings (WilmerAI reads them on every workflow run). */
struct research_settings {
	bool	 rs_enabled;	/* useOfflineResearcherApi (truthy) */
	char	*rs_host;	/* offlineResearcherApiHost, str()-ed */
	char	*rs_port;	/* offlineResearcherApiPort, str()-ed */
};

/* One search. Everything borrowed. */
struct research_call {
	const char	*rc_query;	/* Q, variables already filled in */
	const char	*rc_mode;	/* "quick" or "deep" */
	const json_t	*rc_max_iter;	/* sent raw; NULL: not sent */
	const json_t	*rc_timeout;	/* timeoutSeconds as written; NULL:
					   absent (rc_default_s is used) */
	double		 rc_default_s;	/* 240 quick, 600 deep */
};

enum research_end {
	RESEARCH_DONE,		/* *envelope set */
	RESEARCH_RAISED,	/* the call could not be made (a bad
				   timeoutSeconds): no request sent */
	RESEARCH_CANCELLED,	/* the request stopped (hooks said so) */
};

/* The settings from the user file's parsed root (NULL: all defaults:
 * off, 127.0.0.1, 8890). Free with research_settings_free. */
void	research_settings_load(const json_t *user, struct research_settings *);
void	research_settings_free(struct research_settings *);

/* The POST body as Python's json.dumps writes it: {"query": Q, "mode":
 * M} and "max_iterations" when rc_max_iter is set. Caller frees. */
char	*research_body(const struct research_call *);

/* The search: when enabled, POST {host:port}/search with hooks for
 * cancellation; every outcome (disabled, timeout, transport error,
 * non-200, non-JSON, a JSON answer as it came) becomes *envelope, a new
 * reference the caller decrefs. A JSON answer need not be an object.
 * Returns how it ended; *envelope is NULL unless RESEARCH_DONE. */
enum research_end research_search(const struct research_settings *,
	    const struct research_call *, const struct transport_hooks *,
	    json_t **envelope);

/* Append the node's output for envelope env (an object, or NULL when
 * the call raised) and query q, with the sources when sources is set
 * (A2.4 of the addendum). */
void	research_text(const json_t *env, const char *q, bool sources,
	    struct buf *out);


#endif
