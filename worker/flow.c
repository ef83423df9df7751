/* flow.c - run a request's workflow: select it, then its nodes in order. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/conf.h"
#include "../common/jsonw.h"
#include "../common/log.h"
#include "../common/modelsel.h"
#include "../common/names.h"
#include "../common/tokens.h"
#include "../common/xmem.h"
#include "backend.h"
#include "flow.h"
#include "msgs.h"
#include "vars.h"

/* What one run carries from node to node. */
struct run {
	struct wctx			*r_wc;
	const struct proto_req_start	*r_rs;
	struct conf_user		*r_user;
	struct conf_workflow		*r_wf;
	struct wmsgs			 r_msgs;	/* the conversation */
	struct vars			*r_vars;
	size_t				 r_responder;	/* node index */
	struct wresult			*r_res;
	long				 r_prompt_est;
};

static void
fail(struct run *r, uint32_t http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
fail(struct run *r, uint32_t http, const char *code, const char *fmt, ...)
{
	va_list	 ap;

	r->r_res->r_status = RQ_ERROR;
	r->r_res->r_http = http;
	snprintf(r->r_res->r_code, sizeof(r->r_res->r_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(r->r_res->r_message, sizeof(r->r_res->r_message), fmt, ap);
	va_end(ap);
}

/* Which workflow: a shared one named by the model field, else the
 * user's custom workflow. */
static int
select_workflow(struct run *r)
{
	char	 wf[NAME_MAX_LEN + 1], err[CONF_ERRLEN], *folder;
	char	*model = str_dup(r->r_rs->model);
	int	 rc;

	if (modelsel_workflow(r->r_wc->wc_confdir, r->r_user->u_shared_folder,
	    model, wf, sizeof(wf))) {
		folder = xasprintf("%s/%s", r->r_user->u_shared_folder, wf);
		rc = conf_workflow_load(r->r_wc->wc_confdir, folder,
		    "_DefaultWorkflow", &r->r_wf, err);
		free(folder);
	} else if (r->r_user->u_custom_override) {
		rc = conf_workflow_load(r->r_wc->wc_confdir,
		    r->r_user->u_workflow_folder, r->r_user->u_custom_workflow,
		    &r->r_wf, err);
	} else {
		free(model);
		fail(r, 501, "routing_unsupported", "user '%s' uses prompt "
		    "routing, which this version of Sluice does not run yet; "
		    "set \"customWorkflowOverride\": true and \"customWorkflow\" "
		    "in the user file, or name a shared workflow in the model "
		    "field", r->r_user->u_name);
		return -1;
	}
	free(model);
	if (rc == -1)
		fail(r, 500, "config_error", "%s", err);
	return rc;
}

static bool
node_flag(json_t *node, const char *key)
{
	return json_is_true(json_object_get(node, key));
}

/* The first node marked as responder, else the last one. */
static size_t
find_responder(json_t *nodes)
{
	size_t	 i, n = json_array_size(nodes);

	for (i = 0; i < n; i++) {
		json_t	*node = json_array_get(nodes, i);

		if (node_flag(node, "is_responder") ||
		    node_flag(node, "returnToUser"))
			return i;
	}
	return n > 0 ? n - 1 : 0;
}

/* Workflow top-level keys become variables the way Python's str()
 * shows them: strings as they are, numbers as repr(), True/False/None;
 * lists and objects as JSON (Python would show its own repr). */
static void
workflow_vars(struct run *r)
{
	const char	*key;
	json_t		*v;
	char		*s;

	json_object_foreach(r->r_wf->w_vars, key, v) {
		if (json_is_string(v))
			vars_set(r->r_vars, key, json_string_value(v));
		else if (json_is_boolean(v) || json_is_null(v))
			vars_set(r->r_vars, key, json_is_true(v) ? "True" :
			    json_is_false(v) ? "False" : "None");
		else {
			s = jsonw_dumps(v, JSONW_COMPACT);
			vars_set(r->r_vars, key, s);
			free(s);
		}
	}
}

/* A string field after variable substitution ("" when absent). */
static char *
node_text(struct run *r, json_t *node, const char *key)
{
	const char	*s = json_string_value(json_object_get(node, key));

	return vars_format(r->r_vars, s ? s : "");
}

/* Numeric node fields may be numbers or strings with variables;
 * anything unparsable gives the default (WilmerAI's rule). */
static long
node_number(struct run *r, json_t *node, const char *key, long def)
{
	json_t	*v = json_object_get(node, key);
	char	*s, *end;
	long	 n = def;

	if (json_is_integer(v))
		return (long)json_integer_value(v);
	if (json_is_real(v))
		return (long)json_real_value(v);
	if (!json_is_string(v))
		return def;
	s = vars_format(r->r_vars, json_string_value(v));
	n = strtol(s, &end, 10);
	if (end == s || *end != '\0')
		n = def;
	free(s);
	return n;
}

/* [system?] + ([user: prompt] or the last N messages after the leading
 * system messages); at least one user message (spec section 4). */
static void
assemble(struct run *r, json_t *node, struct wmsgs *out)
{
	char		*sys = node_text(r, node, "systemPrompt");
	char		*prompt = node_text(r, node, "prompt");
	long		 n = node_number(r, node,
			    "lastMessagesToSendInsteadOfPrompt", 5);
	const struct wmsgs *c = &r->r_msgs;
	size_t		 first = 0, i;
	bool		 has_user = false;

	memset(out, 0, sizeof(*out));
	if (sys[0] != '\0')
		wmsgs_add(out, "system", sys);
	while (first < c->n && strcmp(c->v[first].m_role, "system") == 0)
		first++;
	if (prompt[0] != '\0')
		wmsgs_add(out, "user", prompt);
	else
		for (i = (c->n - first > (size_t)(n < 1 ? 1 : n)) ?
		    c->n - (size_t)(n < 1 ? 1 : n) : first; i < c->n; i++)
			wmsgs_add_copy(out, &c->v[i]);
	for (i = 0; i < out->n; i++)
		has_user |= strcmp(out->v[i].m_role, "user") == 0;
	for (i = c->n; !has_user && i > first; i--)
		if (strcmp(c->v[i - 1].m_role, "user") == 0) {
			wmsgs_add_copy(out, &c->v[i - 1]);
			has_user = true;
		}
	free(sys);
	free(prompt);
}

/* The endpoint, api type and preset a node names. */
struct node_conf {
	struct conf_endpoint	*nf_ep;
	struct conf_apitype	*nf_at;
	json_t			*nf_preset;
};

static void
node_conf_free(struct node_conf *nf)
{
	conf_endpoint_free(nf->nf_ep);
	conf_apitype_free(nf->nf_at);
	json_decref(nf->nf_preset);
}

static int
load_node_conf(struct run *r, json_t *node, size_t idx, struct node_conf *nf)
{
	char	*ep = node_text(r, node, "endpointName");
	char	*preset = node_text(r, node, "preset");
	char	 err[CONF_ERRLEN];
	int	 rc = -1;

	memset(nf, 0, sizeof(*nf));
	if (ep[0] == '\0')
		fail(r, 500, "config_error", "workflow '%s' node %zu has no "
		    "endpointName", r->r_wf->w_name, idx + 1);
	else if (conf_endpoint_load(r->r_wc->wc_confdir,
	    r->r_user->u_endpoint_subdir, ep, &nf->nf_ep, err) == -1 ||
	    conf_apitype_load(r->r_wc->wc_confdir, nf->nf_ep->e_apitype_name,
	    &nf->nf_at, err) == -1 ||
	    (preset[0] != '\0' && conf_preset_resolve_ep(r->r_wc->wc_confdir,
	    r->r_user, nf->nf_ep, nf->nf_at, preset, &nf->nf_preset,
	    err) == -1))
		fail(r, 500, "config_error", "%s", err);
	else
		rc = 0;
	free(ep);
	free(preset);
	return rc;
}

static long
estimate_msgs(const struct wmsgs *l)
{
	long	 n = 0;
	size_t	 i;

	for (i = 0; i < l->n; i++)
		n += tokens_estimate(l->v[i].m_content,
		    strlen(l->v[i].m_content), TOKENS_MARGIN);
	return n;
}

/* The responder's figures become the request's usage: the backend's
 * own when it reported them, estimated otherwise. */
static void
set_usage(struct run *r, const struct node_out *o, long prompt_est)
{
	struct wresult	*res = r->r_res;

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

static int
standard_node(struct run *r, json_t *node, size_t idx)
{
	struct node_conf	 nf;
	struct node_out		 out;
	struct wmsgs		 sent;
	struct node_call	 nc;
	bool			 responder = idx == r->r_responder;
	char			 name[32];
	int			 rc;

	if (load_node_conf(r, node, idx, &nf) == -1)
		return -1;
	assemble(r, node, &sent);
	nc = (struct node_call){ .nc_user = r->r_user, .nc_ep = nf.nf_ep,
	    .nc_at = nf.nf_at, .nc_preset = nf.nf_preset, .nc_msgs = &sent,
	    .nc_max_tokens = node_number(r, node, "maxResponseSizeInTokens",
	    400), .nc_stream = responder && r->r_rs->stream };
	node_out_init(&out);
	wloop_phase(r->r_wc, "node %zu/%zu: waiting for %s", idx + 1,
	    json_array_size(r->r_wf->w_nodes), nf.nf_ep->e_name);
	rc = backend_call(r->r_wc, &nc, &out, r->r_res);
	if (rc == 0) {
		snprintf(name, sizeof(name), "agent%zuOutput", idx + 1);
		vars_set(r->r_vars, name, out.no_text.b_data ?
		    out.no_text.b_data : "");
		if (responder && !r->r_rs->stream)
			wloop_emit(r->r_wc, (struct str){ out.no_text.b_data,
			    out.no_text.b_len }, STR_NULL);
		if (responder)
			set_usage(r, &out, estimate_msgs(&sent));
	}
	node_out_free(&out);
	wmsgs_free(&sent);
	node_conf_free(&nf);
	return rc;
}

static int
run_nodes(struct run *r)
{
	json_t		*node;
	const char	*type;
	size_t		 i;

	json_array_foreach(r->r_wf->w_nodes, i, node) {
		if (wloop_stopped(r->r_wc)) {
			r->r_res->r_status = RQ_CANCELLED;
			return -1;
		}
		type = json_string_value(json_object_get(node, "type"));
		if (type != NULL && strcmp(type, "Standard") != 0) {
			fail(r, 501, "node_unsupported", "workflow '%s' node "
			    "%zu has type '%s', which this version of Sluice "
			    "does not run yet", r->r_wf->w_name, i + 1, type);
			return -1;
		}
		if (standard_node(r, node, i) == -1)
			return -1;
	}
	return 0;
}

void
flow_run(struct wctx *wc, const struct proto_req_start *rs,
    struct wresult *res)
{
	struct run	 r;
	char		 err[CONF_ERRLEN];

	memset(&r, 0, sizeof(r));
	r.r_wc = wc;
	r.r_rs = rs;
	r.r_res = res;
	res->r_status = RQ_OK;
	if (conf_user_load(wc->wc_confdir, wc->wc_user, &r.r_user, err) == -1) {
		fail(&r, 500, "config_error", "%s", err);
		return;
	}
	wmsgs_from_proto(&r.r_msgs, rs);
	wmsgs_drop_empty(&r.r_msgs);
	if (select_workflow(&r) == 0) {
		if (json_array_size(r.r_wf->w_nodes) == 0)
			fail(&r, 500, "config_error", "workflow '%s' has no "
			    "nodes", r.r_wf->w_name);
		else {
			r.r_vars = vars_new();
			vars_clock(r.r_vars, time(NULL));
			workflow_vars(&r);
			vars_conversation(r.r_vars, &r.r_msgs);
			r.r_responder = find_responder(r.r_wf->w_nodes);
			run_nodes(&r);
		}
	}
	vars_free(r.r_vars);
	conf_workflow_free(r.r_wf);
	wmsgs_free(&r.r_msgs);
	conf_user_free(r.r_user);
}
