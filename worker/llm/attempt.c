/* attempt.c - one attempt at an LLM call: through one endpoint, with its cleaner, tools and usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/liveness.h"
#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../../common/tokens.h"
#include "../../common/utf8.h"
#include "../clean/clean_conf.h"
#include "../core/groupchat.h"
#include "../core/msgs_edit.h"
#include "attempt.h"
#include "backend.h"
#include "build.h"
#include "forced.h"
#include "structured.h"
#include "toolforce.h"

/* The responder's figures become the request's usage: the backend's
 * own when it reported them, estimated otherwise. */
static void
set_usage(struct node_ctx *x, const struct node_out *o, long prompt_est,
    struct wresult *res)
{
	if (!x->nx_responder)
		return;
	snprintf(res->r_finish, sizeof(res->r_finish), "%s",
	    o->no_finish[0] ? o->no_finish : "stop");
	res->r_usage_estimated = o->no_prompt_tokens < 0 ||
	    o->no_completion_tokens < 0;
	res->r_prompt_tokens = o->no_prompt_tokens >= 0 ?
	    o->no_prompt_tokens : prompt_est;
	res->r_completion_tokens = o->no_completion_tokens >= 0 ?
	    o->no_completion_tokens : tokens_estimate(o->no_text.b_data ?
	    o->no_text.b_data : "", o->no_text.b_len, TOKENS_MARGIN);
}

static long
estimate(const struct wmsgs *l, const char *prompt)
{
	long	 n = 0;
	size_t	 i;

	if (prompt != NULL)
		return tokens_estimate(prompt, strlen(prompt), TOKENS_MARGIN);
	for (i = 0; i < l->n; i++)
		n += tokens_estimate(l->v[i].m_content,
		    strlen(l->v[i].m_content), TOKENS_MARGIN);
	return n;
}

/* lowercaseToolCallFunctionNames (addendum A8.3): the function name of
 * call c, when a string, lower-cased as Python's str.lower(). */
static void
lower_name(json_t *c)
{
	json_t		*f = json_object_get(c, "function");
	json_t		*n = json_object_get(f, "name");
	struct buf	 b = BUF_INIT;

	if (!json_is_string(n))
		return;
	buf_adds(&b, "");
	utf8_lower(&b, json_string_value(n), json_string_length(n));
	json_object_set_new(f, "name", json_stringn(b.b_data, b.b_len));
	buf_free(&b);
}

/* Is the answer only whitespace (Python's str.strip())? */
static bool
blank(const struct buf *t)
{
	const char	*p = t->b_data != NULL ? t->b_data : "";
	size_t		 n = t->b_len;

	pystr_trim(&p, &n);
	return n == 0;
}

/* livenessToolCall (addendum A8.7): a streamed answer on a chat route
 * that has no tool call gets the user's liveness call, when the node
 * asks (injectLivenessToolCall) or the answer is empty. */
static void
add_liveness(struct node_ctx *x, const struct llm_ask *a,
    const struct buf *text, json_t *calls)
{
	char	*name;
	json_t	*args;
	int	 r;

	if (!x->nx_stream || !x->nx_chat_api || json_array_size(calls) > 0 ||
	    (!pyfmt_truthy(json_object_get(a->la_opts,
	    "injectLivenessToolCall")) && !blank(text)))
		return;
	r = liveness_conf(x->nx_user != NULL ? x->nx_user->u_file.jf_root :
	    NULL, &name, &args);
	if (r == -1)
		log_warnx("user %s: livenessToolCall needs an object with a "
		    "non-empty \"toolName\"; no liveness call is sent",
		    x->nx_user->u_name);
	if (r != 1)
		return;
	json_array_append_new(calls, liveness_call(name, args));
	free(name);
	json_decref(args);
}

/* The responder's tool calls (allowTools) go to the client as one
 * chunk, each with its index; names lower-cased when the node asks;
 * the liveness call after them when the answer has none. */
static void
emit_tools(struct node_ctx *x, const struct llm_ask *a, const struct buf *text,
    json_t *calls)
{
	json_t	*c;
	size_t	 i;
	char	*s;
	bool	 lower;

	if (calls == NULL)
		return;
	lower = pyfmt_truthy(json_object_get(a->la_opts,
	    "lowercaseToolCallFunctionNames"));
	json_array_foreach(calls, i, c) {
		if (json_object_get(c, "index") == NULL)
			json_object_set_new(c, "index", json_integer((json_int_t)i));
		if (lower)
			lower_name(c);
	}
	add_liveness(x, a, text, calls);
	if (json_array_size(calls) == 0)
		return;
	s = json_dumps(calls, JSON_COMPACT);
	rq_emit_tools(x->nx_rq, str_from(s));
	free(s);
}

/* The cleaner for this node's output through target t (spec 8):
 * endpoint, node, user and workflow settings. NULL with res filled on a
 * configuration error. */
static struct cleaner *
make_cleaner(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, struct clean_setup *cs, struct wresult *res)
{
	struct clean_src	 src;
	char			 err[CONF_ERRLEN];
	struct cleaner		*c;

	memset(&src, 0, sizeof(src));
	src.sr_ep = t->tg_ep;
	src.sr_wf_file = x->nx_wf != NULL ? &x->nx_wf->w_file : NULL;
	src.sr_node = a->la_opts;
	src.sr_wf_vars = x->nx_wf != NULL ? x->nx_wf->w_vars : NULL;
	src.sr_user = x->nx_user;
	if (clean_conf_build(cs, &src, err) == -1) {
		node_fail(x, res, 500, "%s", err);
		return NULL;
	}
	/* The filter chain shapes the client's answer; a footer or a
	 * length limit has no business in an agentNOutput. */
	if (!x->nx_deliver)
		cs->su_conf.cc_filters = NULL;
	if ((c = clean_new(&cs->su_conf)) == NULL)
		node_fail(x, res, 500, "out of memory for the cleaner");
	return c;
}

/* The call's settings from the node and the target. */
static void
fill_call(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, struct node_call *nc,
    const struct wmsgs *sent, const char *prompt)
{
	bool		 tools = field_bool(a->la_opts, "allowTools", false);

	memset(nc, 0, sizeof(*nc));
	nc->nc_user = x->nx_user;
	nc->nc_ep = t->tg_ep;
	nc->nc_at = t->tg_at;
	nc->nc_preset = t->tg_preset;
	nc->nc_msgs = sent;
	nc->nc_prompt = prompt;
	nc->nc_max_tokens = a->la_max_tokens;
	nc->nc_stream = x->nx_stream;
	nc->nc_tools = tools ? x->nx_tools : NULL;
	nc->nc_tool_choice = tools ? x->nx_tool_choice : NULL;
	/* The client's think is about its answer: the other calls of
	 * the workflow (categorising, summaries) keep their presets. */
	nc->nc_think = x->nx_deliver ? x->nx_think : NULL;
	nc->nc_tool_calls = x->nx_deliver ? json_array() : NULL;
	nc->nc_deliver = x->nx_deliver;
}

/* The node's structuredOutputFile schema into nc (addendum A8.5),
 * re-read for every call: 0 (none, or a completion backend, which
 * cannot take one: a warning), or -1 with res filled. The caller
 * decrefs nc->nc_schema. */
static int
load_schema(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, struct node_call *nc, struct wresult *res)
{
	const char	*name = field_raw(a->la_opts, "structuredOutputFile");
	char		 err[CONF_ERRLEN];

	if (name == NULL)
		return 0;
	if (nc->nc_quiet)
		return node_fail(x, res, 500, "Node declares structuredOutputFile "
		    "while a tool-enforcement round is active (forced/required "
		    "tool_choice with allowTools). These constraints conflict; "
		    "remove one.");
	if (t->tg_completion) {
		log_warnx("workflow '%s' node %zu: structuredOutputFile is for "
		    "chat backends; %s takes a prompt, so it is not sent",
		    x->nx_workflow, x->nx_index + 1, t->tg_name);
		return 0;
	}
	if (x->nx_user == NULL || structured_file(x->nx_confdir, x->nx_user,
	    name, &nc->nc_schema, err) == -1)
		return node_fail(x, res, 500, "%s", x->nx_user == NULL ?
		    "structuredOutputFile needs a user" : err);
	return 0;
}

/* Does this call enforce the client's tool_choice (addendum A8.6)? Only
 * for a node that forwards tools, to a chat backend whose api type has
 * structured output. 1 with tf filled, else 0. */
static int
force_begin(struct node_ctx *x, const struct llm_ask *a,
    const struct llm_target *t, struct toolforce *tf)
{
	memset(tf, 0, sizeof(*tf));
	if (!field_bool(a->la_opts, "allowTools", false) || t->tg_completion ||
	    x->nx_tools == NULL || x->nx_tool_choice == NULL)
		return 0;
	if (toolforce_begin(tf, x->nx_tools, x->nx_tool_choice) == 0)
		return 0;
	if (structured_supported(t->tg_at))
		return 1;
	toolforce_free(tf);
	return 0;
}

/* An enforcement round sends the schema instead of the tools, and
 * keeps the answer until it is read back. */
static void
force_call(const struct toolforce *tf, struct node_call *nc)
{
	nc->nc_tools = NULL;
	nc->nc_tool_choice = NULL;
	nc->nc_quiet = true;
	nc->nc_gchat = NULL;
	nc->nc_schema = json_incref(tf->tf_schema);
}

/* ImageProcessor: the call carries exactly one image, on the last user
 * message (chat) or on a message of its own that only KoboldCpp's
 * completion adapter reads. */
static void
only_image(struct node_ctx *x, const struct llm_target *t, struct wmsgs *sent,
    struct node_call *nc)
{
	size_t	 i;

	wmsgs_limit_images(sent, -1);
	if (t->tg_completion || sent->n == 0)
		wmsgs_add(sent, "user", "");
	for (i = sent->n; i > 1 && strcmp(sent->v[i - 1].m_role, "user") != 0;
	    i--)
		;
	wmsg_add_image(&sent->v[i - 1], x->nx_image);
	nc->nc_msgs = sent;
}

int
attempt_run(struct node_ctx *x, const struct llm_ask *a, struct llm_target *t,
    struct buf *out, bool *tokens, struct wresult *res)
{
	struct wmsgs		 sent;
	char			*prompt = NULL;
	struct node_call	 nc;
	struct node_out		 o;
	struct clean_setup	 cs;
	struct gchat		 g;
	char			*speaker = NULL;
	struct toolforce	 tf;
	int			 rc = -1, force;

	memset(&cs, 0, sizeof(cs));
	build_conv_vars(x, a, t);
	force = force_begin(x, a, t, &tf);
	if (build_request(x, a, t, tf.tf_desc, &sent, &prompt, res) == -1) {
		toolforce_free(&tf);
		return -1;
	}
	fill_call(x, a, t, &nc, &sent, prompt);
	if (x->nx_responder && field_bool(a->la_opts,
	    "useGroupChatTimestampLogic", false))
		speaker = gchat_prompt(x->nx_msgs);
	gchat_init(&g, speaker);
	nc.nc_gchat = speaker != NULL ? &g : NULL;
	if (force)
		force_call(&tf, &nc);
	node_out_init(&o);
	if (load_schema(x, a, t, &nc, res) == 0 &&
	    (nc.nc_clean = make_cleaner(x, a, t, &cs, res)) != NULL) {
		if (x->nx_image != NULL)
			only_image(x, t, &sent, &nc);
		rq_phase(x->nx_rq, "%s node %zu/%zu: waiting for %s",
		    x->nx_workflow, x->nx_index + 1, x->nx_count, t->tg_name);
		rc = force ? forced_call(x, &tf, &nc, &cs.su_conf, &o, res) :
		    backend_call(x->nx_rq, &nc, &o, res);
		*tokens = x->nx_stream && o.no_text.b_len > 0;
	}
	if (rc == 0) {
		buf_add(out, o.no_text.b_data, o.no_text.b_len);
		set_usage(x, &o, estimate(&sent, prompt), res);
		emit_tools(x, a, &o.no_text, nc.nc_tool_calls);
	}
	json_decref(nc.nc_tool_calls);
	json_decref(nc.nc_schema);
	toolforce_free(&tf);
	clean_free(nc.nc_clean);
	clean_conf_free(&cs);
	gchat_free(&g);
	free(speaker);
	node_out_free(&o);
	wmsgs_free(&sent);
	free(prompt);
	return rc;
}
