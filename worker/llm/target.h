/* target.h - the configuration one backend call uses: endpoint, api type, preset, prompt templates. */
#ifndef SLUICE_TARGET_H
#define SLUICE_TARGET_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/conf.h"
#include "../core/node.h"
#include "../core/prompt.h"

/* All owned. */
struct llm_target {
	char			*tg_name;	/* endpoint name */
	struct conf_endpoint	*tg_ep;
	struct conf_apitype	*tg_at;
	json_t			*tg_preset;	/* resolved, or NULL */
	struct prompt_template	*tg_pt;		/* the endpoint's template */
	struct prompt_template	*tg_chat_pt;	/* the user's chat template */
	bool			 tg_completion;	/* one prompt string */
};

/* Load endpoint ep (the user's endpoint folder), its api type, preset
 * (none when "") and prompt templates. Returns 0, or -1 with res filled
 * (500 naming the node and the file). */
int	target_load(struct node_ctx *, const char *ep, const char *preset,
	    struct llm_target *, struct wresult *res);
void	target_free(struct llm_target *);	/* zeroes it */

#endif
