/* node_sub.c - CustomWorkflow and ConditionalCustomWorkflow: a child workflow run in the parent's request. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/xmem.h"
#include "../core/node.h"
#include "../core/vars.h"
#include "../core/vars_json.h"

#define NO_NAME	"No_Workflow_Name_Supplied"

/* firstNode<key>Override, else <key>Override, from src; NULL when
 * absent, null or "". Caller frees. */
static char *
override(struct node_ctx *x, json_t *src, const char *first, const char *plain)
{
	json_t	*v = json_object_get(src, first);
	char	*s, *r;

	if (v == NULL)
		v = json_object_get(src, plain);
	if (v == NULL || json_is_null(v) ||
	    (json_is_string(v) && json_string_length(v) == 0))
		return NULL;
	s = vars_py_str(v);
	r = vars_format(x->nx_vars, s);
	free(s);
	return r;
}

/* Spec 3.4: a streaming responder's child answers the client itself;
 * any other child runs as a non-responder and returns its text. */
static int
run_child(struct node_ctx *x, const char *name, json_t *overrides,
    struct buf *out, bool *streamed, struct wresult *res)
{
	const char	*folder = node_raw(x, "workflowUserFolderOverride");
	char		**inputs = node_scoped_inputs(x, 0);
	char		*sys = override(x, overrides,
			    "firstNodeSystemPromptOverride",
			    "systemPromptOverride");
	char		*prompt = override(x, overrides,
			    "firstNodePromptOverride", "promptOverride");
	struct rq_flowcall	 c;
	int		 rc;

	memset(&c, 0, sizeof(c));
	c.fc_folder = folder != NULL && *folder != '\0' ? folder :
	    x->nx_user->u_workflow_folder;
	c.fc_name = name;
	c.fc_inputs = inputs;
	c.fc_deliver = c.fc_top = x->nx_stream;
	c.fc_system_override = sys;
	c.fc_prompt_override = prompt;
	c.fc_parent = x->nx_run;
	rq_phase(x->nx_rq, "%s node %zu/%zu: workflow %s", x->nx_workflow,
	    x->nx_index + 1, x->nx_count, name);
	rc = node_render_failed(x) ? -1 :	/* the engine says why */
	    rq_run_flow(x->nx_rq, &c, out, streamed, res);
	node_strv_free(inputs);
	free(sys);
	free(prompt);
	return rc;
}

static int
custom_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	const char	*name = node_raw(x, "workflowName");

	return run_child(x, name != NULL ? name : NO_NAME, x->nx_node, out,
	    streamed, res);
}

/* The member of obj whose lower-cased key is key, or NULL. */
static json_t *
get_nocase(json_t *obj, const char *key)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(obj, k, v)
		if (strcasecmp(k, key) == 0)
			return v;
	return NULL;
}

/* The conditional key resolved, stripped and lower-cased. */
static char *
cond_key(struct node_ctx *x)
{
	char	*s = node_str(x, "conditionalKey"), *p = s, *e;

	while (isspace((unsigned char)*p))
		p++;
	e = p + strlen(p);
	while (e > p && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	memmove(s, p, (size_t)(e - p) + 1);
	for (p = s; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	return s;
}

/* No workflow matched: UseDefaultContentInsteadOfWorkflow is the
 * output (word-streamed when this node answers a stream). */
static int
default_content(struct node_ctx *x, json_t *content, struct buf *out,
    bool *streamed)
{
	char	*s = vars_py_str(content), *r = vars_format(x->nx_vars, s);

	buf_adds(out, r);
	if (x->nx_stream) {
		node_emit_words(x->nx_rq, out->b_data, out->b_len);
		*streamed = true;
	}
	free(s);
	free(r);
	return 0;
}

static int
conditional_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char		*key = cond_key(x);
	json_t		*map = json_object_get(x->nx_node, "conditionalWorkflows");
	json_t		*wf = get_nocase(map, key), *dflt, *over;
	const char	*name;
	int		 rc;

	if (json_is_string(wf) && json_string_length(wf) == 0)
		wf = NULL;		/* "" is no workflow, as in Python */
	dflt = json_object_get(x->nx_node, "UseDefaultContentInsteadOfWorkflow");
	if (!json_is_string(wf) && dflt != NULL && !json_is_null(dflt)) {
		free(key);
		return default_content(x, dflt, out, streamed);
	}
	if (!json_is_string(wf))
		wf = get_nocase(map, "default");
	name = json_is_string(wf) ? json_string_value(wf) : NO_NAME;
	over = get_nocase(json_object_get(x->nx_node, "routeOverrides"), key);
	rc = run_child(x, name, json_is_object(over) ? over : NULL, out,
	    streamed, res);
	free(key);
	return rc;
}

const struct node_type node_custom = { "CustomWorkflow", custom_run, false };
const struct node_type node_conditional = { "ConditionalCustomWorkflow",
    conditional_run, false };
