/* owui.c - interceptOpenWebUIToolRequests: Open WebUI's tool-choosing request, answered at once (addendum A8.8). */
#include <string.h>

#include "../proto/proto.h"
#include "api.h"
#include "owui.h"

/*
 * Open WebUI asks the model which of its tools to call before every
 * chat turn, with a system prompt holding this sentence. A user who
 * sets the flag gets that question answered at once with "no tool"
 * (resp_owui_tools), so no workflow runs for it: WilmerAI's behaviour.
 */

#define OWUI_SENTENCE	"Your task is to choose and return the correct " \
			"tool(s) from the list of available tools based on " \
			"the query"

bool
owui_tool_request(int api, const struct api_body *ab)
{
	struct api_mview	 mv;
	const struct api_mfield	*role, *c;
	size_t			 i, n = api_body_nmsgs(ab);
	bool			 yes = false;

	if (api != API_OPENAI_CHAT && api != API_OLLAMA_CHAT)
		return false;
	for (i = 0; i < n && !yes; i++) {
		api_body_msg(ab, i, &mv);
		role = &mv.mv_f[AMF_ROLE];
		c = &mv.mv_f[AMF_CONTENT];
		yes = role->mf_type == JSON_STRING &&
		    str_eq(role->mf_str, "system") &&
		    c->mf_type == JSON_STRING &&
		    memmem(c->mf_str.p, c->mf_str.n, OWUI_SENTENCE,
		    strlen(OWUI_SENTENCE)) != NULL;
		api_mview_clear(&mv);
	}
	return yes;
}
