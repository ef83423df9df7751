/* stubs_engine.c - for check_engine: test node handlers in place of the real ones, and what they saw. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../../worker/core/node.h"
#include "../../worker/llm/ask.h"
#include "../../worker/nodes/nodes.h"
#include "fakerq.h"
#include "stubs_engine.h"

struct buf	 stub_trace = BUF_INIT;
int		 stub_standard_runs, stub_static_runs, stub_custom_runs;

void
stub_engine_reset(void)
{
	buf_free(&stub_trace);
	stub_standard_runs = stub_static_runs = stub_custom_runs = 0;
}

/* How many runs of workflow:N the trace holds before this one. */
static size_t
runs_before(const char *token)
{
	const char	*p = stub_trace.b_data;
	size_t		 n = 0, k = strlen(token);

	for (; p != NULL && (p = strstr(p, token)) != NULL; p += k)
		if ((p == stub_trace.b_data || p[-1] == ' ') &&
		    (p[k] < '0' || p[k] > '9'))
			n++;
	return n;
}

/* Note the run in the trace; returns how many came before it. */
static size_t
trace(struct node_ctx *x)
{
	char	 token[96];
	size_t	 before;

	snprintf(token, sizeof(token), "%s:%zu", x->nx_workflow,
	    x->nx_index + 1);
	before = runs_before(token);
	buf_printf(&stub_trace, "%s%s%s%s%s ", token,
	    x->nx_responder ? "R" : "", x->nx_deliver ? "D" : "",
	    x->nx_stream ? "S" : "", x->nx_top ? "T" : "");
	return before;
}

static void
show(struct node_ctx *x, struct buf *out, const char *what)
{
	const char	*s;
	size_t		 i;

	if (strcmp(what, "messages") == 0)
		for (i = 0; i < x->nx_msgs->n; i++)
			buf_printf(out, "%s|%s\n", x->nx_msgs->v[i].m_role,
			    x->nx_msgs->v[i].m_content);
	else if (strcmp(what, "discussion") == 0)
		buf_adds(out, x->nx_discussion_id);
	else if (strcmp(what, "system") == 0 || strcmp(what, "prompt") == 0) {
		s = node_raw(x, strcmp(what, "system") == 0 ? "systemPrompt" :
		    "prompt");
		buf_adds(out, s != NULL ? s : "(none)");
	} else if (strcmp(what, "flow") == 0)
		buf_adds(out, x->nx_rq->rq_flow != NULL ? "set" : "unset");
	else if (strcmp(what, "tools") == 0)
		buf_adds(out, x->nx_tools != NULL ? x->nx_tools : "(none)");
	else
		ck_abort_msg("show: '%s'?", what);
}

/* The node's output: "texts" entry for this run, or "text". */
static void
output(struct node_ctx *x, size_t before, struct buf *out)
{
	json_t		*texts = json_object_get(x->nx_node, "texts");
	const char	*show_what = node_raw(x, "show");
	char		*s;
	size_t		 n = json_array_size(texts);

	if (n > 0)
		s = vars_format(x->nx_vars, json_string_value(json_array_get(
		    texts, before < n ? before : n - 1)));
	else
		s = node_str(x, "text");
	buf_adds(out, s);
	free(s);
	if (show_what != NULL)
		show(x, out, show_what);
}

static int
tnode(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	size_t	 before = trace(x), half;
	long	 http = node_long(x, "fail", 0);

	if (node_bool(x, "cancel", false))
		((struct fakerq *)x->nx_rq->rq_loop)->fr_stopped = true;
	if (http != 0)
		return node_fail(x, res, (int)http, "told to fail");
	if (node_bool(x, "end", false))
		return NODE_END;
	output(x, before, out);
	if (node_bool(x, "stream", false) && x->nx_stream) {
		half = out->b_len / 2;
		rq_emit(x->nx_rq, (struct str){ out->b_data, half }, STR_NULL);
		rq_emit(x->nx_rq, (struct str){ out->b_data + half,
		    out->b_len - half }, STR_NULL);
		*streamed = true;
	}
	return 0;
}

static int
tstandard(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	stub_standard_runs++;
	return tnode(x, out, streamed, res);
}

static int
tstatic(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	stub_static_runs++;
	return tnode(x, out, streamed, res);
}

static int
tcustom(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct rq_flowcall	 c;
	struct wmsgs		 last = { NULL, 0 };
	char			**inputs = node_strv(x, "scoped_variables");
	bool			 delivered;
	int			 rc;

	stub_custom_runs++;
	(void)trace(x);
	memset(&c, 0, sizeof(c));
	c.fc_folder = x->nx_user->u_workflow_folder;
	c.fc_name = node_raw(x, "workflowName");
	c.fc_inputs = inputs;
	c.fc_deliver = x->nx_deliver;
	c.fc_top = x->nx_stream;
	c.fc_system_override = node_raw(x, "firstNodeSystemPromptOverride");
	c.fc_prompt_override = node_raw(x, "firstNodePromptOverride");
	c.fc_parent = x->nx_run;
	/* as ConversationChunkProcessor: its own conversation, no tools */
	if (node_bool(x, "lastMessageOnly", false) && x->nx_msgs->n > 0) {
		wmsgs_add_copy(&last, &x->nx_msgs->v[x->nx_msgs->n - 1]);
		c.fc_msgs = &last;
	}
	c.fc_no_tools = node_bool(x, "noTools", false);
	rc = rq_run_flow(x->nx_rq, &c, out, &delivered, res);
	*streamed = delivered;
	node_strv_free(inputs);
	wmsgs_free(&last);
	return rc;
}

const struct node_type node_standard = { "Standard", tstandard, false };
const struct node_type node_static = { "StaticResponse", tstatic, true };
const struct node_type node_custom = { "CustomWorkflow", tcustom, false };

/* worker/memory/memory.c (linked for the discussion's key) calls the
 * LLM; no engine test gets there. */
int
ask_run(struct node_ctx *x, const struct llm_ask *a, struct buf *out,
    struct wresult *res)
{
	ck_abort_msg("ask_run called");
	return -1;
}
