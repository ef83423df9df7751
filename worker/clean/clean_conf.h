/* clean_conf.h - the cleaner's settings for one LLM call, from endpoint, node, user and workflow. */
#ifndef SLUICE_CLEAN_CONF_H
#define SLUICE_CLEAN_CONF_H

#include <jansson.h>

#include "../../common/conf.h"
#include "../../common/json.h"
#include "clean.h"
#include "filter.h"

/*
 * Where the settings come from (spec 8.1 and Sluice additions):
 * - endpoint: removeThinking, startThinkTag, endThinkTag,
 *   openingTagGracePeriod, expectOnlyClosingThinkTag,
 *   trimBeginningAndEndLineBreaks,
 *   removeCustomTextFromResponseStartEndpointWide +
 *   responseStartTextToRemoveEndpointWide, and Sluice's
 *   "reasoningTags" (bool, false), "gptOssChannels" (bool, false),
 *   "reasoningOutput" ("drop" | "field" | "inline", "drop"),
 *   "parseToolCallMarkers" (bool, true), "removeSpecialTokens" (true:
 *   clean_default_tokens, false: none, or a string / list of tokens;
 *   default true);
 * - node: removeCustomTextFromResponseStart + responseStartTextToRemove
 *   (string or list), addDiscussionIdTimestampsForLLM;
 * - user: chatCompleteAddUserAssistant && chatCompletionAddMissingAssistantGenerator
 *   strip "Assistant:";
 * - filters: "responseFilters" (filter.h) of the workflow (its top-level
 *   keys) or else of the user file.
 */

/* Inputs; every one may be NULL. */
struct clean_src {
	const struct conf_endpoint	*sr_ep;
	const struct jfile		*sr_wf_file;	/* file of node and vars */
	json_t				*sr_node;	/* the node object */
	json_t				*sr_wf_vars;	/* workflow-level keys */
	const struct conf_user		*sr_user;
};

/* A clean_conf and the storage it points into. Strings stay borrowed
 * from the sources' JSON, which must outlive it (and the cleaner). */
struct clean_setup {
	struct clean_conf	 su_conf;	/* give &su_conf to clean_new */
	const char		**su_wf_prefixes;	/* owned array */
	const char		**su_tokens;		/* owned array or NULL */
	struct filter_chain	*su_filters;		/* owned or NULL */
};

/* Fill *cs (any previous content is ignored). Returns 0, or -1 with err
 * "path:line:col: message" (and nothing to free). */
int	clean_conf_build(struct clean_setup *cs, const struct clean_src *src,
	    char err[CONF_ERRLEN]);

/* Release what clean_conf_build allocated; safe twice and on a zeroed
 * struct. */
void	clean_conf_free(struct clean_setup *cs);

#endif
