/* flow.c - one request: its user, its messages made ready, the workflow it selects, the outcome. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/conf.h"
#include "../../common/liveness.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../core/msgs.h"
#include "../core/msgs_liveness.h"
#include "../core/msgs_norm.h"
#include "flow.h"
#include "routing.h"
#include "wf.h"

static void
fail(struct flow *f, uint32_t http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
fail(struct flow *f, uint32_t http, const char *code, const char *fmt, ...)
{
	va_list	 ap;

	f->f_res->r_status = RQ_ERROR;
	f->f_res->r_http = http;
	snprintf(f->f_res->r_code, sizeof(f->f_res->r_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(f->f_res->r_message, sizeof(f->f_res->r_message), fmt, ap);
	va_end(ap);
}

/* Spec 1.3, 1.4, 3.1: chat-route rewriting, the discussion id out of
 * every message, then the empty messages dropped. */
static char *
prepare_messages(struct flow *f)
{
	const struct conf_user	*u = f->f_user;
	int			 api = (int)f->f_rs->api;

	char			*name;
	json_t			*args;

	wmsgs_from_proto(&f->f_msgs, f->f_rs);
	/* livenessToolCall: Sluice's own calls out of the conversation
	 * before anything reads it (addendum A8.7). */
	if (liveness_conf(u->u_file.jf_root, &name, &args) == 1) {
		wmsgs_liveness_clean(&f->f_msgs, name, args);
		free(name);
		json_decref(args);
	}
	if (api == API_OPENAI_CHAT || api == API_OLLAMA_CHAT)
		wmsgs_chat_rewrite(&f->f_msgs, u->u_add_user_assistant,
		    u->u_add_missing_assistant);
	return wmsgs_discussion_id(&f->f_msgs);
}

/* Spec 1.4 item 4: a shared workflow named by the model field (the
 * gateway found it), else the user's custom workflow, else prompt
 * routing. */
static int
run_selected(struct flow *f)
{
	const struct conf_user	*u = f->f_user;
	char			*folder, *wf = str_dup(f->f_rs->workflow);
	struct rq_flowcall		 c;
	struct buf		 out = BUF_INIT;
	bool			 delivered;
	int			 rc;

	memset(&c, 0, sizeof(c));
	c.fc_deliver = c.fc_top = true;
	if (*wf != '\0') {
		folder = xasprintf("%s/%s", u->u_shared_folder, wf);
		c.fc_folder = folder;
		c.fc_name = "_DefaultWorkflow";
		rc = wf_run(f, &c, &out, &delivered);
		free(folder);
	} else if (u->u_custom_override) {
		c.fc_folder = u->u_workflow_folder;
		c.fc_name = u->u_custom_workflow;
		rc = wf_run(f, &c, &out, &delivered);
	} else
		rc = routing_run(f, &c, &out, &delivered);
	free(wf);
	buf_free(&out);
	return rc;
}

static void
flow_free(struct flow *f)
{
	wmsgs_free(&f->f_msgs);
	conf_user_free(f->f_user);
	free(f->f_tools);
	free(f->f_tool_choice);
	free(f->f_think);
}

/* The seam's rq_flow: nodes and memory steps run a workflow of the
 * request through it. Every node is handed the request's result, so
 * res is f->f_res. */
static int
subflow(void *engine, const struct rq_flowcall *c, struct buf *out,
    bool *delivered, struct wresult *res)
{
	struct flow	*f = engine;

	if (res != f->f_res)
		fatalx("a workflow run with another request's result");
	return wf_run(f, c, out, delivered);
}

void
flow_run(struct rq *rq, const struct proto_req_start *rs,
    const char *default_user, struct wresult *res)
{
	struct flow	 f;
	char		 err[CONF_ERRLEN], *discussion = NULL;
	char		*user = rs->user.n > 0 ? str_dup(rs->user) :
			    xstrdup(default_user);
	int		 rc;

	memset(&f, 0, sizeof(f));
	f.f_rq = rq;
	f.f_rs = rs;
	f.f_res = res;
	res->r_status = RQ_OK;
	rc = conf_user_load(rq->rq_confdir, user, &f.f_user, err);
	free(user);
	/* redactLogOutput, or encryption with the request's key (A10.1) */
	log_redact(rc == 0 && (conf_user_redacts(f.f_user) ||
	    rq->rq_crypt != NULL));
	if (rc == -1) {
		fail(&f, 500, "config_error", "%s", err);
		return;
	}
	discussion = prepare_messages(&f);
	wmsgs_drop_empty(&f.f_msgs);
	f.f_discussion = discussion != NULL ? discussion : "";
	f.f_tools = rs->tools.n > 0 ? str_dup(rs->tools) : NULL;
	f.f_tool_choice = rs->tool_choice.n > 0 ? str_dup(rs->tool_choice) :
	    NULL;
	f.f_think = rs->think.n > 0 ? str_dup(rs->think) : NULL;
	if (discussion != NULL) {
		log_debug("[rq %s] discussion id '%s'", rq->rq_id, discussion);
		snprintf(rq->rq_discussion, sizeof(rq->rq_discussion), "%s",
		    discussion);
	}
	rq->rq_flow = subflow;
	rq->rq_engine = &f;
	run_selected(&f);
	rq->rq_flow = NULL;
	rq->rq_engine = NULL;
	free(discussion);
	flow_free(&f);
}
