/* stubs_ask.c - unit suites above the LLM call: ask_run (worker/llm/ask.h; ask_node.c, linked for real, calls it) answering what the test queued, recording every call. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../../worker/core/vars.h"
#include "../../worker/llm/ask.h"
#include "stubs_ask.h"

enum reply_kind { REPLY_TEXT, REPLY_FAIL, REPLY_CANCEL };

struct reply {
	enum reply_kind	 r_kind;
	int		 r_http;
	char		*r_text;	/* the answer, or the error's message */
};

static struct reply		*replies;
static size_t			 nreplies, taken;
static struct fakeask_call	*calls;
static size_t			 ncalls;
static void			(*hook_fn)(size_t, void *);
static void			*hook_arg;

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

void
fakeask_reset(void)
{
	size_t	 i;

	for (i = 0; i < nreplies; i++)
		free(replies[i].r_text);
	for (i = 0; i < ncalls; i++) {
		free(calls[i].ac_endpoint);
		free(calls[i].ac_preset);
		free(calls[i].ac_system);
		free(calls[i].ac_prompt);
		free(calls[i].ac_system_raw);
		free(calls[i].ac_prompt_raw);
		free(calls[i].ac_image);
		free(calls[i].ac_type);
	}
	free(replies);
	free(calls);
	replies = NULL;
	calls = NULL;
	nreplies = taken = ncalls = 0;
	hook_fn = NULL;
	hook_arg = NULL;
}

static void
queue(enum reply_kind kind, int http, const char *text)
{
	replies = xreallocarray(replies, nreplies + 1, sizeof(*replies));
	replies[nreplies].r_kind = kind;
	replies[nreplies].r_http = http;
	replies[nreplies++].r_text = xstrdup(text);
}

void
fakeask_answer(const char *text)
{
	queue(REPLY_TEXT, 0, text);
}

void
fakeask_fail(int http, const char *msg)
{
	queue(REPLY_FAIL, http, msg);
}

void
fakeask_cancel(void)
{
	queue(REPLY_CANCEL, 0, "");
}

void
fakeask_hook(void (*fn)(size_t, void *), void *arg)
{
	hook_fn = fn;
	hook_arg = arg;
}

size_t
fakeask_ncalls(void)
{
	return ncalls;
}

const struct fakeask_call *
fakeask_call(size_t i)
{
	ck_assert_msg(i < ncalls, "LLM call %zu asked for; there were %zu", i,
	    ncalls);
	return &calls[i];
}

size_t
fakeask_left(void)
{
	return nreplies - taken;
}

/* Record a call as build_request would shape it: the system prompt
 * always through the variables, the prompt only when it is written. */
static void
record(const struct node_ctx *x, const struct llm_ask *a)
{
	struct fakeask_call	*c;

	calls = xreallocarray(calls, ncalls + 1, sizeof(*calls));
	c = &calls[ncalls++];
	memset(c, 0, sizeof(*c));
	c->ac_endpoint = xstrdup(a->la_endpoint);
	c->ac_preset = xstrdup(a->la_preset != NULL ? a->la_preset : "");
	c->ac_system = vars_format(x->nx_vars, a->la_system != NULL ?
	    a->la_system : "");
	if (a->la_prompt != NULL && *a->la_prompt != '\0')
		c->ac_prompt = vars_format(x->nx_vars, a->la_prompt);
	c->ac_system_raw = dup_or_null(a->la_system);
	c->ac_prompt_raw = dup_or_null(a->la_prompt);
	c->ac_max_tokens = a->la_max_tokens;
	c->ac_image = dup_or_null(x->nx_image);
	c->ac_type = dup_or_null(json_string_value(json_object_get(x->nx_node,
	    "type")));
	c->ac_responder = x->nx_responder;
	c->ac_deliver = x->nx_deliver;
	c->ac_stream = x->nx_stream;
}

int
ask_run(struct node_ctx *x, const struct llm_ask *a, struct buf *out,
    struct wresult *res)
{
	const struct reply	*r;
	size_t			 i = ncalls;

	if (a->la_endpoint == NULL || *a->la_endpoint == '\0')
		return node_fail(x, res, 500, "no endpointName");
	record(x, a);
	if (hook_fn != NULL)
		hook_fn(i, hook_arg);
	ck_assert_msg(taken < nreplies, "unexpected LLM call %zu (endpoint "
	    "'%s', prompt '%s')", i, a->la_endpoint, a->la_prompt != NULL ?
	    a->la_prompt : "");
	r = &replies[taken++];
	switch (r->r_kind) {
	case REPLY_FAIL:
		return node_fail(x, res, r->r_http, "%s", r->r_text);
	case REPLY_CANCEL:
		res->r_status = RQ_CANCELLED;
		return -1;
	case REPLY_TEXT:
		break;
	}
	buf_adds(out, r->r_text);
	if (x->nx_stream)
		rq_emit(x->nx_rq, (struct str){ r->r_text, strlen(r->r_text) },
		    (struct str){ NULL, 0 });
	return 0;
}
