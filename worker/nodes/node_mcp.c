/* node_mcp.c - the MCPToolCall node: one tool of an MCP server, called with the node's arguments. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "../core/node.h"
#include "../tools/mcp.h"
#include "../tools/xfield.h"

/*
 * WilmerAI's MCPToolCallHandler (addendum A4.2): the fields are checked
 * in its order and a bad one fails the node whatever onError says; a
 * failure of the call itself (MCPToolCallError) fails the node, or with
 * onError "return" is the node's output. The output is streamed as
 * static content when the node is the responder.
 */

static const char *const on_error[] = { "raise", "return", NULL };

/* str() of a required field, variables filled in; NULL when falsy. */
static char *
required(struct node_ctx *x, const char *key)
{
	json_t	*v = json_object_get(x->nx_node, key);

	return pyfmt_truthy(v) ? vars_format_value(x->nx_vars, v) : NULL;
}

/* v with every string at any depth filled in; new reference. */
static json_t *
resolved(struct node_ctx *x, json_t *v)
{
	json_t		*r, *e;
	const char	*k;
	char		*s;
	size_t		 i;

	if (json_is_string(v)) {
		s = vars_format(x->nx_vars, json_string_value(v));
		r = json_string(s);
		free(s);
		return r != NULL ? r : json_incref(v);
	}
	if (json_is_array(v)) {
		r = json_array();
		json_array_foreach(v, i, e)
			json_array_append_new(r, resolved(x, e));
		return r;
	}
	if (json_is_object(v)) {
		r = json_object();
		json_object_foreach(v, k, e)
			json_object_set_new(r, k, resolved(x, e));
		return r;
	}
	return json_incref(v);
}

/* The arguments object (null or absent: {}), or NULL when not one. */
static json_t *
arguments(struct node_ctx *x)
{
	json_t	*v = json_object_get(x->nx_node, "arguments");

	if (v == NULL || json_is_null(v))
		return json_object();
	return json_is_object(v) ? resolved(x, v) : NULL;
}

static int
call(struct node_ctx *x, struct mcp_call *c, const char *oe,
    struct buf *out, struct wresult *res)
{
	struct rq		*rq = x->nx_rq;
	struct transport_hooks	 hooks = { rq->rq_wake_fd, 250, rq_wake, rq };
	struct buf		 r = BUF_INIT;
	enum mcp_outcome	 o;
	int			 rc = 0;

	if (node_render_failed(x))
		return -1;	/* the engine says why */
	rq_phase(rq, "MCP tool %s.%s", c->mc_server, c->mc_tool);
	o = rq_stopped(rq) ? MCP_CANCELLED : mcp_call_tool(c, &hooks, &r);
	if (o == MCP_CANCELLED) {
		res->r_status = RQ_CANCELLED;
		rc = -1;
	} else if (o == MCP_ERROR && strcmp(oe, "raise") == 0)
		rc = node_fail(x, res, 500, "%s", r.b_len > 0 ? r.b_data : "");
	else
		buf_add(out, r.b_data, r.b_len);
	buf_free(&r);
	return rc;
}

static int
mcp_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct mcp_call	 c = { .mc_confdir = x->nx_confdir };
	struct buf	 err = BUF_INIT;
	const char	*oe = NULL;
	char		*server = NULL, *tool = NULL;
	json_t		*args = NULL;
	int		 rc = -1;

	if ((server = required(x, "server")) == NULL)
		buf_adds(&err, "MCPToolCall node requires a 'server' field.");
	else if ((tool = required(x, "tool")) == NULL)
		buf_adds(&err, "MCPToolCall node requires a 'tool' field.");
	else if (xf_timeout("MCPToolCall", json_object_get(x->nx_node,
	    "timeout"), 30, &c.mc_timeout, &err) == 0 &&
	    xf_choice("MCPToolCall", "onError", json_object_get(x->nx_node,
	    "onError"), on_error, &oe, &err) == 0 &&
	    (args = arguments(x)) == NULL)
		buf_adds(&err, "MCPToolCall 'arguments' must be a JSON "
		    "object.");
	if (args != NULL) {
		c.mc_server = server;
		c.mc_tool = tool;
		c.mc_args = args;
		rc = call(x, &c, oe, out, res);
	} else
		rc = node_fail(x, res, 500, "%s", err.b_data);
	json_decref(args);
	buf_free(&err);
	free(server);
	free(tool);
	return rc;
}

const struct node_type node_mcp = { "MCPToolCall", mcp_run, true };
