/* node_research.c - the OfflineResearcherApi nodes: quick and deep. */
#include <stdlib.h>

#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../tools/research.h"

/*
 * WilmerAI's _handle_offline_researcher_node (addendum A2). Every
 * outcome of the service becomes the node's text (worker/tools/
 * research.c), except two: the request stopping (cancelled, or past its
 * deadline) ends the node with RQ_CANCELLED at once, and a 200 answer
 * that is JSON but not an object fails the node with a message where
 * WilmerAI raises an AttributeError (HTTP 500 either way).
 */

#define RESEARCH_NOPROMPT	"No 'promptToSearch' specified for " \
				"OfflineResearcherApi node."

/* Q: str() of promptToSearch, variables filled in; NULL when the node
 * has none (absent or null). Caller frees. */
static char *
query(struct node_ctx *x)
{
	json_t	*v = json_object_get(x->nx_node, "promptToSearch");

	return v == NULL || json_is_null(v) ? NULL :
	    vars_format_value(x->nx_vars, v);
}

/* The envelope (or NULL: the call raised) as the node's output. */
static int
answer(struct node_ctx *x, json_t *env, const char *q, struct buf *out,
    struct wresult *res)
{
	if (env != NULL && !json_is_object(env))
		return node_fail(x, res, 500, "the offline researcher "
		    "answered 200 with JSON that is not an object");
	research_text(env, q, pyfmt_truthy(json_object_get(x->nx_node,
	    "includeSources")), out);
	return 0;
}

static int
research_run(struct node_ctx *x, const char *mode, double def_s,
    struct buf *out, struct wresult *res)
{
	struct rq		*rq = x->nx_rq;
	struct transport_hooks	 hooks = { rq->rq_wake_fd, 250, rq_wake, rq };
	struct research_settings st;
	struct research_call	 c;
	json_t			*env = NULL;
	char			*q;
	int			 r = -1;
	bool			 stopped;

	if ((q = query(x)) == NULL)
		return node_fail(x, res, 500, "%s", RESEARCH_NOPROMPT);
	research_settings_load(x->nx_user != NULL ?
	    x->nx_user->u_file.jf_root : NULL, &st);
	c = (struct research_call){ q, mode,
	    json_object_get(x->nx_node, "maxIterations"),
	    json_object_get(x->nx_node, "timeoutSeconds"), def_s };
	if (json_is_null(c.rc_max_iter))
		c.rc_max_iter = NULL;
	rq_phase(rq, "offline researcher (%s)", mode);
	stopped = rq_stopped(rq) ||
	    research_search(&st, &c, &hooks, &env) == RESEARCH_CANCELLED;
	if (stopped)
		res->r_status = RQ_CANCELLED;
	else
		r = answer(x, env, q, out, res);
	json_decref(env);
	research_settings_free(&st);
	free(q);
	return r;
}

static int
quick_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return research_run(x, "quick", 240, out, res);
}

static int
deep_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return research_run(x, "deep", 600, out, res);
}

const struct node_type node_research_quick = {
	"OfflineResearcherApiQuickSearch", quick_run, false };
const struct node_type node_research_deep = {
	"OfflineResearcherApiDeepResearch", deep_run, false };
