/* node_standard.c - Standard: one LLM call through the node's endpoint, failing over along backupEndpointName. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/log.h"
#include "../common/tokens.h"
#include "../common/xmem.h"
#include "backend.h"
#include "clean_conf.h"
#include "failover.h"
#include "node_llm.h"
#include "url.h"
#include "vars.h"
#include "wf.h"

#define MAX_HOPS	16	/* endpoints tried for one call */
#define ATTEMPTS	3	/* per endpoint without a backup */

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

/* The responder's tool calls (allowTools) go to the client as one
 * chunk, each with its index. */
static void
emit_tools(struct node_ctx *x, json_t *calls)
{
	json_t	*c;
	size_t	 i;
	char	*s;

	if (calls == NULL || json_array_size(calls) == 0)
		return;
	json_array_foreach(calls, i, c)
		if (json_object_get(c, "index") == NULL)
			json_object_set_new(c, "index", json_integer((json_int_t)i));
	s = json_dumps(calls, JSON_COMPACT);
	wloop_emit_tools(x->nx_wc, str_from(s));
	free(s);
}

/* The cleaner for this node's output through target t (spec 8):
 * endpoint, node, user and workflow settings. NULL with res filled on a
 * configuration error. */
static struct cleaner *
make_cleaner(struct node_ctx *x, const struct llm_target *t,
    struct clean_setup *cs, struct wresult *res)
{
	struct clean_src	 src;
	char			 err[CONF_ERRLEN];
	struct cleaner		*c;

	memset(&src, 0, sizeof(src));
	src.cs_ep = t->t_ep;
	src.cs_wf_file = x->nx_wf != NULL ? &x->nx_wf->w_file : NULL;
	src.cs_node = x->nx_node;
	src.cs_wf_vars = x->nx_wf != NULL ? x->nx_wf->w_vars : NULL;
	src.cs_user = x->nx_user;
	if (clean_conf_build(cs, &src, err) == -1) {
		node_fail(x, res, 500, "%s", err);
		return NULL;
	}
	/* The filter chain shapes the client's answer; a footer or a
	 * length limit has no business in an agentNOutput. */
	if (!x->nx_deliver)
		cs->cs_conf.cc_filters = NULL;
	if ((c = clean_new(&cs->cs_conf)) == NULL)
		node_fail(x, res, 500, "out of memory for the cleaner");
	return c;
}

/* The call's settings from the node and the target. */
static void
fill_call(struct node_ctx *x, const struct llm_target *t, struct node_call *nc,
    const struct wmsgs *sent, const char *prompt)
{
	struct flow	*f = x->nx_flow;
	bool		 tools = node_bool(x, "allowTools", false);

	memset(nc, 0, sizeof(*nc));
	nc->nc_user = x->nx_user;
	nc->nc_ep = t->t_ep;
	nc->nc_at = t->t_at;
	nc->nc_preset = t->t_preset;
	nc->nc_msgs = sent;
	nc->nc_prompt = prompt;
	nc->nc_max_tokens = node_long(x, "maxResponseSizeInTokens", 400);
	nc->nc_stream = x->nx_stream;
	nc->nc_tools = tools ? f->f_tools : NULL;
	nc->nc_tool_choice = tools ? f->f_tool_choice : NULL;
	/* The client's think is about its answer: the other calls of
	 * the workflow (categorising, summaries) keep their presets. */
	nc->nc_think = x->nx_deliver ? f->f_think : NULL;
	nc->nc_tool_calls = x->nx_deliver ? json_array() : NULL;
	nc->nc_deliver = x->nx_deliver;
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
	if (t->t_completion || sent->n == 0)
		wmsgs_add(sent, "user", "");
	for (i = sent->n; i > 1 && strcmp(sent->v[i - 1].m_role, "user") != 0;
	    i--)
		;
	wmsg_add_image(&sent->v[i - 1], x->nx_image);
	nc->nc_msgs = sent;
}

/* One call through target t. *tokens says whether any text reached the
 * client (then no failover may follow). */
static int
call_target(struct node_ctx *x, struct llm_target *t, struct buf *out,
    bool *tokens, struct wresult *res)
{
	struct wmsgs		 sent;
	char			*prompt = NULL;
	struct node_call	 nc;
	struct node_out		 o;
	struct clean_setup	 cs;
	struct gchat		 g;
	char			*speaker = NULL;
	int			 rc = -1;

	memset(&cs, 0, sizeof(cs));
	llm_conv_vars(x, t);
	if (llm_build(x, t, &sent, &prompt, res) == -1)
		return -1;
	fill_call(x, t, &nc, &sent, prompt);
	if (x->nx_image != NULL)
		only_image(x, t, &sent, &nc);
	if (x->nx_responder && node_bool(x, "useGroupChatTimestampLogic",
	    false))
		speaker = gchat_prompt(x->nx_msgs);
	gchat_init(&g, speaker);
	nc.nc_gchat = speaker != NULL ? &g : NULL;
	node_out_init(&o);
	if ((nc.nc_clean = make_cleaner(x, t, &cs, res)) != NULL) {
		wloop_phase(x->nx_wc, "%s node %zu/%zu: waiting for %s",
		    x->nx_workflow, x->nx_index + 1, x->nx_count, t->t_name);
		rc = backend_call(x->nx_wc, &nc, &o, res);
		*tokens = x->nx_stream && o.no_text.b_len > 0;
	}
	if (rc == 0) {
		buf_add(out, o.no_text.b_data, o.no_text.b_len);
		set_usage(x, &o, estimate(&sent, prompt), res);
		emit_tools(x, nc.nc_tool_calls);
	}
	json_decref(nc.nc_tool_calls);
	clean_free(nc.nc_clean);
	clean_conf_free(&cs);
	gchat_free(&g);
	free(speaker);
	node_out_free(&o);
	wmsgs_free(&sent);
	free(prompt);
	return rc;
}

static bool
seen(char **names, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* May the call move from t to its backup? Fills res when the chain is
 * broken (a cycle, a remote backup without consent). */
static int
next_hop(struct node_ctx *x, const struct llm_target *t, char **names,
    size_t n, struct wresult *res)
{
	const char	*b = t->t_ep->e_backup_endpoint;

	if (seen(names, n, b)) {
		char	 why[sizeof(res->r_message)];

		/* node_fail writes res->r_message: copy the cause first. */
		snprintf(why, sizeof(why), "%s", res->r_message);
		log_warnx("[rq %s] failover cycle: endpoint '%s' again after "
		    "'%s'", x->nx_wc->wc_rqid, b, t->t_name);
		return node_fail(x, res, 500, "failover cycle detected: "
		    "endpoint '%s' is already in the chain (after '%s': %s)", b,
		    t->t_name, why);
	}
	if (n >= MAX_HOPS)
		return node_fail(x, res, 500, "failover chain longer than %d "
		    "endpoints", MAX_HOPS);
	log_warnx("[rq %s] endpoint '%s' failed (%s); failing over to '%s'",
	    x->nx_wc->wc_rqid, t->t_name, res->r_message, b);
	return 0;
}

/* Public addresses need allowRemoteBackup on the backup itself. */
static int
remote_ok(struct node_ctx *x, const struct llm_target *t, struct wresult *res)
{
	char	 url[256];

	if (json_is_true(json_object_get(t->t_ep->e_file.jf_root,
	    "allowRemoteBackup")))
		return 0;
	url_shown(t->t_ep->e_url, url, sizeof(url));
	switch (failover_where(t->t_ep->e_url)) {
	case FO_REMOTE:
		return node_fail(x, res, 502, "backup endpoint '%s' (%s) is on "
		    "a public address; set \"allowRemoteBackup\": true in it to "
		    "allow failing over there", t->t_name, url);
	case FO_UNKNOWN:
		log_warnx("[rq %s] backup endpoint '%s': cannot tell where %s "
		    "is; allowed", x->nx_wc->wc_rqid, t->t_name, url);
		return 0;
	default:
		return 0;
	}
}

/* WilmerAI retries a server's 500/502/503/504 and a refused connection
 * (urllib3) unless the endpoint has a backup. Sluice makes at most
 * ATTEMPTS calls, 1 s then 2 s apart. */
static bool
retryable(const struct llm_target *t, const struct wresult *res, bool tokens)
{
	long	 st = res->r_upstream;

	if (res->r_status != RQ_ERROR || tokens || t->t_ep == NULL ||
	    t->t_ep->e_backup_endpoint != NULL)
		return false;
	if (strcmp(res->r_code, "backend_unavailable") == 0)
		return true;
	return strcmp(res->r_code, "backend_http_error") == 0 &&
	    (st == 500 || st == 502 || st == 503 || st == 504);
}

/* Sleep ms, heartbeating; false when the request stopped meanwhile. */
static bool
pause_for(struct node_ctx *x, unsigned ms, struct wresult *res)
{
	uint64_t	 end = clock_mono_ms() + ms;

	while (clock_mono_ms() < end) {
		if (wloop_stopped(x->nx_wc)) {
			res->r_status = RQ_CANCELLED;
			return false;
		}
		usleep(50 * 1000);
	}
	return true;
}

/* One endpoint, with WilmerAI's retries when it has no backup. */
static int
call_retrying(struct node_ctx *x, struct llm_target *t, struct buf *out,
    bool *tokens, struct wresult *res)
{
	int	 n, rc = -1;

	for (n = 1; n <= ATTEMPTS; n++) {
		res->r_upstream = 0;
		res->r_retry_after[0] = '\0';
		rc = call_target(x, t, out, tokens, res);
		if (rc == 0 || n == ATTEMPTS || !retryable(t, res, *tokens))
			break;
		log_warnx("[rq %s] endpoint '%s' failed (%s); attempt %d of %d "
		    "in %d s", x->nx_wc->wc_rqid, t->t_name, res->r_message,
		    n + 1, ATTEMPTS, n);
		if (!pause_for(x, 1000u * (unsigned)n, res))
			break;
		res->r_status = RQ_OK;
	}
	return rc;
}

/* Spec 11: on failure the call moves to backupEndpointName with
 * backupPresetName (or the same preset), along a chain without cycles;
 * a stream only before its first token; never after a cancel. */
static int
call_chain(struct node_ctx *x, const char *ep, const char *preset,
    struct buf *out, struct wresult *res)
{
	struct llm_target	 t;
	char			*names[MAX_HOPS + 1];
	char			*pre = xstrdup(preset);
	size_t			 n = 0, i;
	bool			 tokens = false;
	int			 rc;

	names[n++] = xstrdup(ep);
	for (;;) {
		rc = llm_target_load(x, names[n - 1], pre, &t, res);
		if (rc == 0 && n > 1)
			rc = remote_ok(x, &t, res);
		if (rc == 0)
			rc = call_retrying(x, &t, out, &tokens, res);
		if (rc == 0 || res->r_status == RQ_CANCELLED || tokens ||
		    t.t_ep == NULL || t.t_ep->e_backup_endpoint == NULL ||
		    next_hop(x, &t, names, n, res) == -1)
			break;
		names[n++] = xstrdup(t.t_ep->e_backup_endpoint);
		if (t.t_ep->e_backup_preset != NULL) {
			free(pre);
			pre = xstrdup(t.t_ep->e_backup_preset);
		}
		res->r_status = RQ_OK;
		llm_target_free(&t);
	}
	llm_target_free(&t);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(pre);
	return rc == 0 ? 0 : -1;
}

int
llm_node_run(struct node_ctx *x, struct buf *out, struct wresult *res)
{
	const char	*rep = node_raw(x, "endpointName");
	const char	*rpre = node_raw(x, "preset");
	char		*ep, *preset;
	int		 rc;

	if (node_raw(x, "jinja2") != NULL || node_bool(x, "jinja2", false))
		return node_fail(x, res, 501, "jinja2 prompt templates are not "
		    "supported by Sluice; use {variables}");
	/* endpointName and preset see only the early variables. */
	ep = vars_format(x->nx_early, rep != NULL ? rep : "");
	preset = vars_format(x->nx_early, rpre != NULL ? rpre : "");
	if (*ep == '\0')
		rc = node_fail(x, res, 500, "no endpointName");
	else
		rc = call_chain(x, ep, preset, out, res);
	free(ep);
	free(preset);
	return rc;
}

static int
standard_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	int	 rc = llm_node_run(x, out, res);

	*streamed = x->nx_stream;
	return rc;
}

const struct node_type node_standard = { "Standard", standard_run, false };
