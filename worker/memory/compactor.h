/* compactor.h - ContextCompactor (addendum A5): the Old and Oldest summaries of a discussion's conversation, kept in the store, updated by up to three LLM calls. */
#ifndef SLUICE_COMPACTOR_H
#define SLUICE_COMPACTOR_H

#include <jansson.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "../core/node.h"

#define COMPACT_CALLS	3	/* the Old window, the neutral summary, the
				   rolling Oldest summary */

/* The user's contextCompactorSettingsFile (Workflows/<workflow
 * folder>/<name>.json), each key with WilmerAI's default. */
struct compact_conf {
	struct jfile	 cc_file;
	const char	*cc_endpoint;		/* endpointName; NULL none */
	const char	*cc_preset;		/* preset; "" none */
	long		 cc_max_tokens;	/* maxResponseSizeInTokens 750 */
	long		 cc_recent;		/* recentContextTokens 20000,
						   times the level */
	long		 cc_old;		/* oldContextTokens 20000, the
						   same */
	long		 cc_lookback;		/* lookbackStartTurn 5 */
	const char	*cc_system[COMPACT_CALLS];
	const char	*cc_prompt[COMPACT_CALLS];
};

/* Load the settings: 1 loaded; 0 when there are none to use (no name
 * set, no such file, not JSON: logged, the node answers ""); -1 with
 * res filled (500) for an unsafe name, a file that is not an object or
 * a value of the wrong type. compact_conf_free is safe after any. */
int	compact_conf_load(struct node_ctx *, struct compact_conf *,
	    struct wresult *res);
void	compact_conf_free(struct compact_conf *);

/* The node: compact the discussion's conversation when its windows
 * moved (A5.2), then its summaries, tagged, into out (A5.4; "" with no
 * settings, no discussion or no summary yet). Returns 0, or -1 with
 * res filled (a failed or cancelled LLM call, a store error, bad
 * settings). */
int	compactor_run(struct node_ctx *, struct buf *out, struct wresult *res);

#endif
