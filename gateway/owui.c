/* owui.c - interceptOpenWebUIToolRequests: Open WebUI's tool-choosing request, answered at once (addendum A8.8). */
#include <string.h>

#include "../proto/proto.h"
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
owui_tool_request(int api, const json_t *root)
{
	const json_t	*m, *c, *role;
	size_t		 i;

	if (api != API_OPENAI_CHAT && api != API_OLLAMA_CHAT)
		return false;
	json_array_foreach(json_object_get(root, "messages"), i, m) {
		role = json_object_get(m, "role");
		c = json_object_get(m, "content");
		if (json_is_string(role) &&
		    strcmp(json_string_value(role), "system") == 0 &&
		    json_is_string(c) &&
		    strstr(json_string_value(c), OWUI_SENTENCE) != NULL)
			return true;
	}
	return false;
}
