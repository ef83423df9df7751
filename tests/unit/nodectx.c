/* nodectx.c - unit suites of nodes and memory steps: the world a node runs in (a fake request with a scratch store, variables, a user, the conversation, a fake engine for nested workflows) and the node_ctx it is handed. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/xmem.h"
#include "nodectx.h"

static char **
strv_copy(char *const *v, size_t *n)
{
	char	**c;
	size_t	  i;

	*n = 0;
	if (v == NULL)
		return NULL;
	while (v[*n] != NULL)
		(*n)++;
	c = xcalloc(*n + 1, sizeof(*c));
	for (i = 0; i < *n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

/* The seam's rq_flow: record the call, answer what the test queued. */
static int
fake_flow(void *engine, const struct rq_flowcall *c, struct buf *out,
    bool *delivered, struct wresult *res)
{
	struct nodectx		*nc = engine;
	struct nc_flow		*f;
	const struct nc_reply	*r;

	nc->nc_flows = xreallocarray(nc->nc_flows, nc->nc_nflows + 1,
	    sizeof(*nc->nc_flows));
	f = &nc->nc_flows[nc->nc_nflows++];
	memset(f, 0, sizeof(*f));
	f->nf_folder = xstrdup(c->fc_folder != NULL ? c->fc_folder : "");
	f->nf_name = xstrdup(c->fc_name != NULL ? c->fc_name : "");
	f->nf_inputs = strv_copy(c->fc_inputs, &f->nf_ninputs);
	f->nf_deliver = c->fc_deliver;
	f->nf_top = c->fc_top;
	f->nf_system = c->fc_system_override != NULL ?
	    xstrdup(c->fc_system_override) : NULL;
	f->nf_prompt = c->fc_prompt_override != NULL ?
	    xstrdup(c->fc_prompt_override) : NULL;
	f->nf_routing = c->fc_routing != NULL;
	f->nf_parent = c->fc_parent;
	f->nf_own_msgs = c->fc_msgs != NULL;
	for (size_t i = 0; c->fc_msgs != NULL && i < c->fc_msgs->n; i++)
		wmsgs_add_copy(&f->nf_msgs, &c->fc_msgs->v[i]);
	f->nf_no_tools = c->fc_no_tools;
	ck_assert_msg(nc->nc_taken < nc->nc_nreplies, "unexpected run of "
	    "workflow '%s'", f->nf_name);
	r = &nc->nc_replies[nc->nc_taken++];
	if (r->nr_rc == NC_FLOW_CANCEL) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	if (r->nr_rc == -1) {
		res->r_status = RQ_ERROR;
		res->r_http = 500;
		snprintf(res->r_message, sizeof(res->r_message), "workflow "
		    "'%s': %s", f->nf_name, r->nr_text);
		return -1;
	}
	buf_adds(out, r->nr_text);
	if (c->fc_deliver) {
		rq_emit(&nc->nc_rq.fr_rq, (struct str){ r->nr_text,
		    strlen(r->nr_text) }, (struct str){ NULL, 0 });
		*delivered = true;
	}
	return r->nr_rc;
}

void
nodectx_open(struct nodectx *nc, const char *what)
{
	memset(nc, 0, sizeof(*nc));
	scratchdb_open(&nc->nc_db, what);
	fakerq_init(&nc->nc_rq, NC_RQID, -1);
	nc->nc_rq.fr_store = nc->nc_db.sd_store;
	nc->nc_rq.fr_rq.rq_confdir = nc->nc_db.sd_dir;
	nc->nc_rq.fr_rq.rq_flow = fake_flow;
	nc->nc_rq.fr_rq.rq_engine = nc;
	nc->nc_vars = vars_new();
	vars_set(nc->nc_vars, "name", "Ann");
	nc->nc_early = vars_new();
	nc->nc_user_json = json_object();
	nc->nc_user.u_file.jf_root = nc->nc_user_json;
	nc->nc_user.u_workflow_folder = NC_FOLDER;
	nc->nc_discussion = "";
}

static void
flows_free(struct nodectx *nc)
{
	size_t	 i, k;

	for (i = 0; i < nc->nc_nflows; i++) {
		free(nc->nc_flows[i].nf_folder);
		free(nc->nc_flows[i].nf_name);
		for (k = 0; k < nc->nc_flows[i].nf_ninputs; k++)
			free(nc->nc_flows[i].nf_inputs[k]);
		free(nc->nc_flows[i].nf_inputs);
		free(nc->nc_flows[i].nf_system);
		free(nc->nc_flows[i].nf_prompt);
		wmsgs_free(&nc->nc_flows[i].nf_msgs);
	}
	free(nc->nc_flows);
	for (i = 0; i < nc->nc_nreplies; i++)
		free(nc->nc_replies[i].nr_text);
	free(nc->nc_replies);
}

void
nodectx_close(struct nodectx *nc)
{
	flows_free(nc);
	wmsgs_free(&nc->nc_msgs);
	json_decref(nc->nc_user_json);
	vars_free(nc->nc_vars);
	vars_free(nc->nc_early);
	fakerq_free(&nc->nc_rq);
	scratchdb_close(&nc->nc_db);
	memset(nc, 0, sizeof(*nc));
}

void
nodectx_say(struct nodectx *nc, const char *role, const char *content)
{
	wmsgs_add(&nc->nc_msgs, role, content);
}

void
nodectx_write(struct nodectx *nc, const char *path, const char *text)
{
	char	*full = xasprintf("%s/%s", nc->nc_db.sd_dir, path), *p;
	FILE	*fp;

	for (p = full + strlen(nc->nc_db.sd_dir) + 1; (p = strchr(p, '/')) !=
	    NULL; p++) {
		*p = '\0';
		ck_assert_msg(mkdir(full, 0700) == 0 || errno == EEXIST,
		    "mkdir %s: %s", full, strerror(errno));
		*p = '/';
	}
	ck_assert_msg((fp = fopen(full, "w")) != NULL, "%s: %s", full,
	    strerror(errno));
	ck_assert_int_eq(fputs(text, fp) >= 0, 1);
	ck_assert_int_eq(fclose(fp), 0);
	free(full);
}

void
nodectx_settings(struct nodectx *nc, json_t *settings)
{
	char	*text = json_dumps(settings, JSON_INDENT(4));

	ck_assert_ptr_nonnull(text);
	nodectx_write(nc, "Workflows/" NC_FOLDER "/mem.json", text);
	json_object_set_new(nc->nc_user_json,
	    "discussionIdMemoryFileWorkflowSettings", json_string("mem"));
	free(text);
	json_decref(settings);
}

struct node_ctx *
nodectx_ctx(struct nodectx *nc, json_t *node)
{
	struct node_ctx	*x = &nc->nc_x;

	memset(x, 0, sizeof(*x));
	x->nx_rq = &nc->nc_rq.fr_rq;
	x->nx_node = node;
	x->nx_workflow = NC_WORKFLOW;
	x->nx_index = 2;
	x->nx_count = 5;
	x->nx_responder = nc->nc_responder;
	x->nx_deliver = nc->nc_responder;
	x->nx_stream = nc->nc_responder && nc->nc_stream;
	x->nx_confdir = nc->nc_db.sd_dir;
	x->nx_user = &nc->nc_user;
	x->nx_vars = nc->nc_vars;
	x->nx_early = nc->nc_early;
	x->nx_msgs = &nc->nc_msgs;
	x->nx_conv = &nc->nc_msgs;
	x->nx_discussion_id = nc->nc_discussion;
	x->nx_key_scope = nc->nc_scope;
	x->nx_run = (struct wf_run *)(void *)&nc->nc_parent;
	x->nx_top = true;
	return x;
}

int
nodectx_run(struct nodectx *nc, const struct node_type *t, json_t *node,
    struct buf *out, bool *streamed, struct wresult *res)
{
	int	 rc;

	ck_assert_ptr_nonnull(t);
	*streamed = false;
	memset(res, 0, sizeof(*res));
	rc = t->nt_run(nodectx_ctx(nc, node), out, streamed, res);
	json_decref(node);
	return rc;
}

void
nodectx_flow_reply(struct nodectx *nc, const char *text, int rc)
{
	nc->nc_replies = xreallocarray(nc->nc_replies, nc->nc_nreplies + 1,
	    sizeof(*nc->nc_replies));
	nc->nc_replies[nc->nc_nreplies].nr_text = xstrdup(text);
	nc->nc_replies[nc->nc_nreplies++].nr_rc = rc;
}

const struct nc_flow *
nodectx_flow(const struct nodectx *nc, size_t i)
{
	ck_assert_msg(i < nc->nc_nflows, "workflow run %zu asked for; there "
	    "were %zu", i, nc->nc_nflows);
	return &nc->nc_flows[i];
}

void
nodectx_ck_fail(const struct wresult *res, int http, const char *type,
    const char *needle)
{
	char	*head = xasprintf("workflow '" NC_WORKFLOW "' node 3 (%s): ",
		    type);

	ck_assert_int_eq(res->r_status, RQ_ERROR);
	ck_assert_int_eq(res->r_http, http);
	ck_assert_msg(strncmp(res->r_message, head, strlen(head)) == 0,
	    "message '%s' does not start with '%s'", res->r_message, head);
	ck_assert_msg(strstr(res->r_message, needle) != NULL,
	    "message '%s' lacks '%s'", res->r_message, needle);
	free(head);
}

json_t *
nodectx_json(const char *fmt, ...)
{
	json_error_t	 e;
	json_t		*v;
	va_list		 ap;

	va_start(ap, fmt);
	v = json_vpack_ex(&e, 0, fmt, ap);
	va_end(ap);
	ck_assert_msg(v != NULL, "json_pack: %s", e.text);
	return v;
}
