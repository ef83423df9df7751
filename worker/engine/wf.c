/* wf.c - one workflow run: its variables, its nodes in order, its responder; nested runs for sub-workflow nodes. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/log.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../core/vars.h"
#include "../core/vars_conv.h"
#include "../core/vars_json.h"
#include "../nodes/nodes.h"
#include "../tools/jinja_vars.h"
#include "registry.h"
#include "wf.h"
#include "wf_ts.h"

struct wf_run {
	struct flow		*wr_flow;
	const struct rq_flowcall	*wr_call;
	struct conf_workflow	*wr_wf;
	struct vars		*wr_vars;	/* everything a node sees */
	struct vars		*wr_early;	/* workflow keys, agent inputs */
	struct wmsgs		*wr_msgs;	/* its conversation */
	bool			 wr_no_tools;	/* the request's tools hidden */
	size_t			 wr_responder;
	size_t			 wr_cur;
	size_t			 wr_n;
	unsigned		 wr_depth;
	bool			 wr_override;	/* first-node overrides pending */
};

static void
fail(struct wf_run *r, uint32_t http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
fail(struct wf_run *r, uint32_t http, const char *code, const char *fmt, ...)
{
	struct wresult	*res = r->wr_flow->f_res;
	va_list		 ap;

	res->r_status = RQ_ERROR;
	res->r_http = http;
	snprintf(res->r_code, sizeof(res->r_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(res->r_message, sizeof(res->r_message), fmt, ap);
	va_end(ap);
}

static bool
flag(json_t *node, const char *key)
{
	return json_is_true(json_object_get(node, key));
}

/* The first node marked as responder, else the last one. WilmerAI
 * ignores "isResponder" (which its own shipped configs use); we honour
 * it (docs/migrating-from-wilmer.md). */
static size_t
find_responder(json_t *nodes)
{
	size_t	 i, n = json_array_size(nodes);
	json_t	*node;

	json_array_foreach(nodes, i, node)
		if (flag(node, "is_responder") || flag(node, "returnToUser") ||
		    flag(node, "isResponder"))
			return i;
	return n > 0 ? n - 1 : 0;
}

/* Spec 5: the run's families, in WilmerAI's precedence order. */
static void
run_vars(struct wf_run *r)
{
	const struct rq_flowcall	*c = r->wr_call;
	char			 name[32], *summary;
	size_t			 i;

	r->wr_vars = vars_new();
	r->wr_early = vars_new();
	vars_user_wide(r->wr_vars, r->wr_flow->f_user);
	vars_clock(r->wr_vars, time(NULL));
	vars_workflow(r->wr_vars, r->wr_wf->w_vars);
	vars_workflow(r->wr_early, r->wr_wf->w_vars);
	summary = wf_ts_summary(r->wr_flow);
	vars_discussion(r->wr_vars, r->wr_flow->f_discussion, summary);
	free(summary);
	for (i = 0; c->fc_inputs != NULL && c->fc_inputs[i] != NULL; i++) {
		snprintf(name, sizeof(name), "agent%zuInput", i + 1);
		vars_set(r->wr_vars, name, c->fc_inputs[i]);
		vars_set(r->wr_early, name, c->fc_inputs[i]);
	}
	if (c->fc_routing != NULL)
		vars_categories(r->wr_vars, c->fc_routing);
}

/* The parent's firstNode*Override replace the prompts of the first node
 * that has either key. Returns a new reference. */
static json_t *
node_for_run(struct wf_run *r, json_t *node)
{
	json_t	*copy;

	if (!r->wr_override || (json_object_get(node, "systemPrompt") == NULL &&
	    json_object_get(node, "prompt") == NULL))
		return json_incref(node);
	r->wr_override = false;
	copy = json_deep_copy(node);
	if (r->wr_call->fc_system_override != NULL)
		json_object_set_new(copy, "systemPrompt",
		    json_string(r->wr_call->fc_system_override));
	if (r->wr_call->fc_prompt_override != NULL)
		json_object_set_new(copy, "prompt",
		    json_string(r->wr_call->fc_prompt_override));
	return copy;
}

/* The handler for a node: its type's (node_unsupported answers 501 for
 * the types Sluice does not run), or Standard's for a type WilmerAI
 * does not know either. */
static const struct node_type *
node_handler(struct wf_run *r, json_t *node)
{
	const char		*type = json_string_value(json_object_get(node,
				    "type"));
	const struct node_type	*nt;

	if (type == NULL)
		type = "Standard";
	if ((nt = node_type_find(type)) != NULL)
		return nt;
	log_warnx("[rq %s] workflow '%s' node %zu: unknown type '%s', run "
	    "as Standard (as WilmerAI does)", r->wr_flow->f_rq->rq_id,
	    r->wr_wf->w_name, r->wr_cur + 1, type);
	return node_type_find("Standard");
}

/* The responder's text reaches the client unless its node streamed it
 * already. */
static void
deliver(struct wf_run *r, const struct node_type *nt, const struct buf *out,
    bool streamed)
{
	struct flow	*f = r->wr_flow;
	struct wresult	*res = f->f_res;

	if (!streamed && out->b_len > 0) {
		if (f->f_rs->stream && nt->nt_word_stream)
			node_emit_words(f->f_rq, out->b_data, out->b_len);
		else
			rq_emit(f->f_rq, (struct str){ out->b_data,
			    out->b_len }, STR_NULL);
	}
	if (res->r_finish[0] == '\0')
		snprintf(res->r_finish, sizeof(res->r_finish), "stop");
	if (res->r_completion_tokens < 0) {
		res->r_completion_tokens = tokens_estimate(out->b_data ?
		    out->b_data : "", out->b_len, TOKENS_MARGIN);
		res->r_usage_estimated = true;
	}
	if (res->r_prompt_tokens < 0)
		res->r_prompt_tokens = 0;
	wf_answered(r);
}

void
wf_answered(struct wf_run *r)
{
	struct flow	*f = r->wr_flow;
	bool		 more = false;

	if (f->f_answered)
		return;
	f->f_answered = true;
	for (; r != NULL && !more; r = r->wr_call->fc_parent)
		more = r->wr_cur + 1 < r->wr_n;
	if (more)
		rq_answer(f->f_rq, f->f_res);
}

static void
node_ctx_init(struct wf_run *r, struct node_ctx *x, json_t *node, size_t i)
{
	struct flow	*f = r->wr_flow;
	bool		 responder = i == r->wr_responder;

	memset(x, 0, sizeof(*x));
	x->nx_run = r;
	x->nx_rq = f->f_rq;
	x->nx_node = node;
	x->nx_workflow = r->wr_wf->w_name;
	x->nx_wf = r->wr_wf;
	x->nx_index = i;
	x->nx_count = r->wr_n;
	x->nx_responder = responder;
	x->nx_deliver = responder && r->wr_call->fc_deliver;
	x->nx_stream = responder && r->wr_call->fc_deliver && f->f_rs->stream;
	x->nx_chat_api = f->f_rs->api == API_OPENAI_CHAT ||
	    f->f_rs->api == API_OLLAMA_CHAT;
	x->nx_confdir = f->f_rq->rq_confdir;
	x->nx_user = f->f_user;
	x->nx_vars = r->wr_vars;
	x->nx_early = r->wr_early;
	x->nx_msgs = r->wr_msgs;
	x->nx_conv = r->wr_msgs;
	x->nx_discussion_id = f->f_discussion;
	x->nx_key_scope = f->f_rs->key_scope;
	x->nx_tools = r->wr_no_tools ? NULL : f->f_tools;
	x->nx_tool_choice = r->wr_no_tools ? NULL : f->f_tool_choice;
	x->nx_think = f->f_think;
	x->nx_top = r->wr_call->fc_top;
}

/* After a node rendered with Jinja2 (its renderer is cleared here): a
 * failed render fails the node whatever its handler made of the empty
 * text it got (addendum A7: the node raises), a stopped one cancels it.
 * Returns the node's outcome. */
static int
render_outcome(struct wf_run *r, struct node_ctx *x, int rc)
{
	struct wresult	*res = r->wr_flow->f_res;

	if (vars_render_stopped(r->wr_vars)) {
		res->r_status = RQ_CANCELLED;
		rc = -1;
	} else if (vars_render_error(r->wr_vars) != NULL &&
	    (rc != -1 || res->r_status != RQ_CANCELLED))
		rc = node_fail(x, res, 500, "jinja2 %s",
		    vars_render_error(r->wr_vars));
	vars_set_renderer(r->wr_vars, NULL, NULL);
	return rc;
}

/* One node: its handler, then its output as agentNOutput; the
 * responder's output is also the run's result. */
static int
run_node(struct wf_run *r, json_t *cfg, size_t i, struct buf *result,
    bool *delivered)
{
	json_t			*node = node_for_run(r, cfg);
	const struct node_type	*nt = node_handler(r, node);
	struct node_ctx		 x;
	struct buf		 out = BUF_INIT;
	struct wmsgs		 stamped = { NULL, 0 };
	struct jinja_node	 jn;
	bool			 streamed = false, placed = false;
	char			 name[32];
	int			 rc = -1;

	if (nt != NULL) {
		node_ctx_init(r, &x, node, i);
		if (wf_ts_before(r->wr_flow, &x, &stamped, &placed) == -1)
			nt = NULL;	/* cancelled */
	}
	if (nt != NULL && jinja_wanted(node)) {
		jn = (struct jinja_node){ node, { x.nx_rq->rq_wake_fd, 250,
		    rq_wake, x.nx_rq }, NULL };
		vars_set_renderer(r->wr_vars, &jinja_vars_ops, &jn);
	}
	if (nt != NULL) {
		/* As a node without an endpoint sees them. A Standard node
		 * sets them itself, through its endpoint, before it formats
		 * anything (its endpointName and preset see only the early
		 * variables): setting them here too would build every
		 * whole-conversation variable twice. */
		if (nt != &node_standard)
			vars_conversation_node(r->wr_vars, x.nx_msgs,
			    &(struct vars_conv){ .vc_node = node,
			    .vc_user = x.nx_user });
		rc = nt->nt_run(&x, &out, &streamed, r->wr_flow->f_res);
		if (vars_rendering(r->wr_vars))
			rc = render_outcome(r, &x, rc);
	}
	if (rc == NODE_END)
		log_info("[rq %s] workflow '%s' ends early at node %zu",
		    r->wr_flow->f_rq->rq_id, r->wr_wf->w_name, i + 1);
	if (rc == 0) {
		buf_addc(&out, '\0');
		out.b_len--;
		snprintf(name, sizeof(name), "agent%zuOutput", i + 1);
		vars_set(r->wr_vars, name, out.b_data);
		if (x.nx_out_json != NULL)
			vars_set_jinja(r->wr_vars, name, x.nx_out_json);
		if (i == r->wr_responder) {
			buf_reset(result);
			buf_add(result, out.b_data, out.b_len);
			if (r->wr_call->fc_deliver)
				deliver(r, nt, &out, streamed);
			*delivered = r->wr_call->fc_deliver;
		}
		if (placed && wf_ts_after(r->wr_flow, &x, out.b_data) == -1)
			rc = -1;	/* cancelled */
	}
	if (nt != NULL)
		json_decref(x.nx_out_json);
	wmsgs_free(&stamped);
	buf_free(&out);
	json_decref(node);
	return rc;
}

static int
run_nodes(struct wf_run *r, struct buf *out, bool *delivered)
{
	json_t	*node;
	size_t	 i;
	int	 rc;

	json_array_foreach(r->wr_wf->w_nodes, i, node) {
		r->wr_cur = i;
		if (rq_stopped(r->wr_flow->f_rq)) {
			r->wr_flow->f_res->r_status = RQ_CANCELLED;
			return -1;
		}
		if ((rc = run_node(r, node, i, out, delivered)) != 0)
			return rc;	/* -1, or NODE_END for the callers too */
	}
	return 0;
}

static unsigned
depth_of(const struct rq_flowcall *c)
{
	unsigned	 d = 0;

	for (; c->fc_parent != NULL; c = c->fc_parent->wr_call)
		d++;
	return d;
}

int
wf_run(struct flow *f, const struct rq_flowcall *c, struct buf *out,
    bool *delivered)
{
	struct wf_run	 r;
	char		 err[CONF_ERRLEN];
	int		 rc = -1;

	memset(&r, 0, sizeof(r));
	r.wr_flow = f;
	r.wr_call = c;
	r.wr_depth = depth_of(c);
	r.wr_msgs = c->fc_msgs != NULL ? c->fc_msgs : c->fc_parent != NULL ?
	    c->fc_parent->wr_msgs : &f->f_msgs;
	r.wr_no_tools = c->fc_no_tools ||
	    (c->fc_parent != NULL && c->fc_parent->wr_no_tools);
	r.wr_override = c->fc_system_override != NULL ||
	    c->fc_prompt_override != NULL;
	*delivered = false;
	buf_reset(out);
	if (r.wr_depth >= WF_MAX_DEPTH) {
		fail(&r, 500, "config_error", "workflow '%s' is nested more "
		    "than %d deep (a workflow that calls itself?)", c->fc_name,
		    WF_MAX_DEPTH);
		return -1;
	}
	if (conf_workflow_load(f->f_rq->rq_confdir, c->fc_folder, c->fc_name,
	    &r.wr_wf, err) == -1) {
		fail(&r, 500, "config_error", "%s", err);
		return -1;
	}
	r.wr_n = json_array_size(r.wr_wf->w_nodes);
	if (r.wr_n == 0)
		fail(&r, 500, "config_error", "workflow '%s' has no nodes",
		    r.wr_wf->w_name);
	else if (wf_ts_resolve(f, r.wr_wf->w_nodes) == 0) {
		run_vars(&r);
		r.wr_responder = find_responder(r.wr_wf->w_nodes);
		log_debug("[rq %s] workflow '%s': %zu nodes, responder %zu",
		    f->f_rq->rq_id, r.wr_wf->w_name, r.wr_n, r.wr_responder + 1);
		rc = run_nodes(&r, out, delivered);
	}
	vars_free(r.wr_vars);
	vars_free(r.wr_early);
	conf_workflow_free(r.wr_wf);
	return rc;
}
