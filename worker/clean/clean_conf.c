/* clean_conf.c - the cleaner's settings for one LLM call, from endpoint, node, user and workflow. */
#include <stdlib.h>
#include <string.h>

#include "clean_conf.h"

/* Stands in for a missing workflow file in error messages. */
static char	nofile_path[] = "(workflow)";
static char	nofile_text[] = "";

static int
ep_reasoning(const struct jfile *jf, json_t *root, struct clean_conf *cc,
    char err[CONF_ERRLEN])
{
	static const char *const modes[] = { "drop", "field", "inline" };
	const char	*mode;
	size_t		 i;

	if (jget_bool(jf, root, "reasoningTags", false,
	    &cc->cc_reasoning_tags, err) == -1 ||
	    jget_bool(jf, root, "gptOssChannels", false,
	    &cc->cc_gptoss_channels, err) == -1 ||
	    jget_bool(jf, root, "parseToolCallMarkers", true,
	    &cc->cc_tool_markers, err) == -1 ||
	    jget_str(jf, root, "reasoningOutput", "drop", &mode, err) == -1)
		return -1;
	for (i = 0; i < 3; i++) {
		if (strcmp(mode, modes[i]) == 0) {
			cc->cc_reasoning = (enum clean_reasoning)i;
			return 0;
		}
	}
	return jfile_err_member(jf, root, "reasoningOutput", err,
	    "'reasoningOutput' must be \"drop\", \"field\" or \"inline\", "
	    "not \"%s\"", mode);
}

static int
ep_tokens(const struct jfile *jf, json_t *root, struct clean_setup *cs,
    char err[CONF_ERRLEN])
{
	const char	*key = "removeSpecialTokens";
	json_t		*v = json_object_get(root, key);

	if (v == NULL || json_is_null(v) || json_is_true(v)) {
		cs->su_conf.cc_special_tokens = clean_default_tokens;
		return 0;
	}
	if (json_is_false(v)) {
		cs->su_conf.cc_special_tokens = NULL;
		return 0;
	}
	if (!json_is_string(v) && !json_is_array(v))
		return jfile_err_member(jf, root, key, err, "'%s' must be "
		    "true, false or a list of tokens, not %s", key,
		    json_type_desc(v));
	if (jget_strlist(jf, root, key, &cs->su_tokens, err) == -1)
		return -1;
	cs->su_conf.cc_special_tokens = cs->su_tokens;
	return 0;
}

static int
from_endpoint(struct clean_setup *cs, const struct conf_endpoint *ep,
    char err[CONF_ERRLEN])
{
	struct clean_conf	*cc = &cs->su_conf;
	json_t			*root = ep->e_file.jf_root;

	cc->cc_remove_thinking = ep->e_remove_thinking;
	cc->cc_start_tag = ep->e_start_think_tag;
	cc->cc_end_tag = ep->e_end_think_tag;
	cc->cc_grace = ep->e_think_grace;
	cc->cc_only_closing = ep->e_only_closing_think;
	cc->cc_trim = ep->e_trim_linebreaks;
	cc->cc_endpoint_prefixes = ep->e_remove_start_text ?
	    ep->e_start_text : NULL;
	if (!json_is_object(root))
		return 0;
	if (ep_reasoning(&ep->e_file, root, cc, err) == -1 ||
	    ep_tokens(&ep->e_file, root, cs, err) == -1)
		return -1;
	return 0;
}

static int
from_node(struct clean_setup *cs, const struct jfile *jf, json_t *node,
    char err[CONF_ERRLEN])
{
	struct clean_conf	*cc = &cs->su_conf;
	bool			 on;

	if (!json_is_object(node))
		return 0;
	if (jget_bool(jf, node, "removeCustomTextFromResponseStart", false,
	    &on, err) == -1 ||
	    jget_bool(jf, node, "addDiscussionIdTimestampsForLLM", false,
	    &cc->cc_timestamp_prefix, err) == -1)
		return -1;
	if (!on)
		return 0;
	if (jget_strlist(jf, node, "responseStartTextToRemove",
	    &cs->su_wf_prefixes, err) == -1)
		return -1;
	cc->cc_workflow_prefixes = cs->su_wf_prefixes;
	return 0;
}

/* The workflow's "responseFilters" when it has the key, else the
 * user's. */
static int
filters(struct clean_setup *cs, const struct clean_src *src,
    const struct jfile *wf, char err[CONF_ERRLEN])
{
	const char	*key = "responseFilters";
	int		 rc = 0;

	if (json_is_object(src->sr_wf_vars) &&
	    json_object_get(src->sr_wf_vars, key) != NULL)
		rc = filter_chain_load(wf, src->sr_wf_vars, key,
		    &cs->su_filters, err);
	else if (src->sr_user != NULL &&
	    json_is_object(src->sr_user->u_file.jf_root))
		rc = filter_chain_load(&src->sr_user->u_file,
		    src->sr_user->u_file.jf_root, key, &cs->su_filters, err);
	cs->su_conf.cc_filters = cs->su_filters;
	return rc;
}

int
clean_conf_build(struct clean_setup *cs, const struct clean_src *src,
    char err[CONF_ERRLEN])
{
	struct jfile		 nofile = { nofile_path, nofile_text, 0, NULL };
	const struct jfile	*wf = src->sr_wf_file != NULL ?
				    src->sr_wf_file : &nofile;
	struct clean_conf	*cc = &cs->su_conf;

	memset(cs, 0, sizeof(*cs));
	cc->cc_grace = 100;
	cc->cc_tool_markers = true;
	cc->cc_special_tokens = clean_default_tokens;
	cc->cc_start_tag = cc->cc_end_tag = "";
	if ((src->sr_ep != NULL && from_endpoint(cs, src->sr_ep, err) == -1) ||
	    from_node(cs, wf, src->sr_node, err) == -1 ||
	    filters(cs, src, wf, err) == -1) {
		clean_conf_free(cs);
		return -1;
	}
	cc->cc_assistant_prefix = src->sr_user != NULL &&
	    src->sr_user->u_add_user_assistant &&
	    src->sr_user->u_add_missing_assistant;
	return 0;
}

void
clean_conf_free(struct clean_setup *cs)
{
	free(cs->su_wf_prefixes);
	free(cs->su_tokens);
	filter_chain_free(cs->su_filters);
	memset(cs, 0, sizeof(*cs));
}
