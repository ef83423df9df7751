/* node_memwrite.c - the nodes that write memories and then read them through the user's helper workflows: QualityMemory, RecentMemory, FullChatSummary, ConversationMemory. */
#include <stdlib.h>

#include "../core/node.h"
#include "../memory/mem_read.h"
#include "../memory/memgen.h"

/* The helper workflow a user setting names (recentMemoryToolWorkflow,
 * chatSummaryToolWorkflow, conversationMemoryToolWorkflow), run as a
 * non-responder; its result is the node's output. WilmerAI tries to
 * load "<folder>/.json" when the setting is empty and fails there:
 * Sluice says which setting is missing. */
static int
user_tool(struct node_ctx *x, const char *setting, struct buf *out,
    struct wresult *res)
{
	const char	*name = json_string_value(json_object_get(
			    x->nx_user->u_file.jf_root, setting));

	if (name == NULL || *name == '\0')
		return node_fail(x, res, 500, "this node runs the workflow the "
		    "user file's '%s' names, and it names none", setting);
	return memory_workflow(x, name, NULL, out, res);
}

static bool
user_has(struct node_ctx *x, const char *setting)
{
	const char	*name = json_string_value(json_object_get(
			    x->nx_user->u_file.jf_root, setting));

	return name != NULL && *name != '\0';
}

/* Memories from the new messages (the vector store when the settings
 * say so); no output. Without a discussion id, the user's
 * recentMemoryToolWorkflow if there is one. */
static int
quality_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*key = memory_key(x);

	if (key != NULL) {
		free(key);
		return memory_generate(x, false, res);
	}
	if (user_has(x, "recentMemoryToolWorkflow"))
		return user_tool(x, "recentMemoryToolWorkflow", out, res);
	buf_adds(out, "No discussionId on this request; memories were not "
	    "generated.");
	return 0;
}

/* File-style memories first (with a discussion id), then the user's
 * recentMemoryToolWorkflow reads them. */
static int
recent_memory_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	if (memory_generate(x, true, res) == -1)
		return -1;
	return user_tool(x, "recentMemoryToolWorkflow", out, res);
}

static int
conversation_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*key = memory_key(x);

	if (key == NULL) {
		buf_adds(out, "There are not yet any memories");
		return 0;
	}
	free(key);
	return user_tool(x, "conversationMemoryToolWorkflow", out, res);
}

/* The summary as it is (isManualConfig, or when at most one memory is
 * new since it); else memories first and the user's
 * chatSummaryToolWorkflow makes the summary anew. */
static int
summary_now(struct node_ctx *x, const char *key, bool manual, struct buf *out,
    struct wresult *res)
{
	struct store		*s = memory_store(x, res);
	struct mem_blocks	 mem = { NULL, 0 };
	char			*text = NULL, *hash = NULL;
	long			 k = 0;
	int			 r;

	if (s == NULL)
		return -1;
	if ((r = memstore_summary(s, key, &text, &hash)) == -1 ||
	    (!manual && memstore_read(s, key, &mem, NULL) == -1))
		return node_fail(x, res, 500, "%s", store_err(s));
	if (!manual)
		k = memread_new_since(&mem, hash);
	if (manual)
		buf_adds(out, r == 1 ? text : "No summary found");
	else if (k > 1 || k < 0)
		r = user_tool(x, "chatSummaryToolWorkflow", out, res);
	else if (r == 1)
		buf_adds(out, text);
	mem_blocks_free(&mem);
	free(text);
	free(hash);
	return r == -1 ? -1 : 0;
}

static int
full_summary_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*key = memory_key(x);
	bool	 manual = node_bool(x, "isManualConfig", false);
	int	 rc = 0;

	if (key == NULL)
		return 0;
	if (!manual)
		rc = memory_generate(x, true, res);
	if (rc == 0)
		rc = summary_now(x, key, manual, out, res);
	free(key);
	return rc;
}

const struct node_type node_quality_memory = { "QualityMemory", quality_run,
    false };
const struct node_type node_recent_memory = { "RecentMemory",
    recent_memory_run, false };
const struct node_type node_conversation_memory = { "ConversationMemory",
    conversation_run, false };
const struct node_type node_full_summary = { "FullChatSummary",
    full_summary_run, false };
