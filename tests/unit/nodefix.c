/* nodefix.c - unit tests of worker/llm: one node of workflow "wf" in a scratch config folder, with fakerq as its request. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../worker/core/vars.h"
#include "nodefix.h"

static void
user_load(struct nodefix *f)
{
	char	 err[CONF_ERRLEN];

	conf_user_free(f->nf_user);
	f->nf_user = NULL;
	ck_assert_msg(conf_user_load(f->nf_it.it_dir, "it", &f->nf_user,
	    err) == 0, "%s", err);
	f->nf_x.nx_user = f->nf_user;
}

void
nodefix_init(struct nodefix *f, bool mock)
{
	struct node_ctx	*x = &f->nf_x;

	memset(f, 0, sizeof(*f));
	if (mock) {
		it_mock_start(&f->nf_it);
		snprintf(f->nf_url, sizeof(f->nf_url), "http://127.0.0.1:%d",
		    f->nf_it.it_mock_port);
	} else
		snprintf(f->nf_url, sizeof(f->nf_url), "http://127.0.0.1:9");
	it_config(&f->nf_it, NULL, f->nf_url);
	it_turns_template(&f->nf_it);
	fakerq_init(&f->nf_rq, "t", -1);
	f->nf_vars = vars_new();
	vars_set(f->nf_vars, "name", "Ann");
	f->nf_node = json_pack("{s:s}", "type", "Standard");
	x->nx_rq = &f->nf_rq.fr_rq;
	x->nx_node = f->nf_node;
	x->nx_workflow = "wf";
	x->nx_index = 2;
	x->nx_count = 5;
	x->nx_confdir = f->nf_it.it_dir;
	x->nx_vars = x->nx_early = f->nf_vars;
	x->nx_msgs = &f->nf_msgs;
	x->nx_responder = x->nx_deliver = x->nx_stream = x->nx_top = true;
	x->nx_discussion_id = "";
	user_load(f);
}

void
nodefix_free(struct nodefix *f)
{
	conf_user_free(f->nf_user);
	json_decref(f->nf_node);
	wmsgs_free(&f->nf_msgs);
	vars_free(f->nf_vars);
	fakerq_free(&f->nf_rq);
	it_stop(&f->nf_it, 2000);
	memset(f, 0, sizeof(*f));
}

void
nodefix_user(struct nodefix *f, const char *key, json_t *value)
{
	it_user_set(&f->nf_it, key, value);
	user_load(f);
}

void
nodefix_backend(struct nodefix *f, const char *name, const char *type,
    const char *at_extra, const char *ep_extra)
{
	it_backend(&f->nf_it, NULL, name, type, f->nf_url, at_extra, ep_extra);
}

void
nodefix_set(struct nodefix *f, const char *fmt, ...)
{
	json_error_t	 e;
	json_t		*o;
	va_list		 ap;

	va_start(ap, fmt);
	o = json_vpack_ex(&e, 0, fmt, ap);
	va_end(ap);
	ck_assert_msg(o != NULL, "json_pack: %s", e.text);
	json_object_update(f->nf_node, o);
	json_decref(o);
}

void
nodefix_conv(struct nodefix *f, const char *role, ...)
{
	va_list	 ap;

	va_start(ap, role);
	for (; role != NULL; role = va_arg(ap, const char *))
		wmsgs_add(&f->nf_msgs, role, va_arg(ap, const char *));
	va_end(ap);
}

void
nodefix_ck_fail(const struct wresult *res, int http, const char *needle)
{
	const char	*head = "workflow 'wf' node 3 (Standard): ";

	ck_assert_int_eq(res->r_status, RQ_ERROR);
	ck_assert_int_eq(res->r_http, http);
	ck_assert_msg(strncmp(res->r_message, head, strlen(head)) == 0,
	    "message '%s' does not start with '%s'", res->r_message, head);
	ck_assert_msg(strstr(res->r_message, needle) != NULL,
	    "message '%s' lacks '%s'", res->r_message, needle);
}
