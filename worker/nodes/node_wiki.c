/* node_wiki.c - the four OfflineWikiApi nodes: a search of the user's offline Wikipedia API, its text the output. */
#include <stdlib.h>

#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../tools/wiki.h"
#include "nodes.h"

/*
 * Spec addendum A1. The settings are read from the user file on every
 * run. FullArticle and BestFullArticle send fixed values whatever the
 * node says (WilmerAI's QUIRK, kept). A percentile written as a JSON
 * integer goes out as one ("1"); any other value as Python's str() of
 * the float the node gives (a string is substituted and read as a
 * number; one that is not a number gives the default 0.5).
 */

/* P: Python's str() of promptToSearch, then variables; NULL when the
 * node has none. Caller frees. */
static char *
wiki_prompt(struct node_ctx *x)
{
	json_t	*v = json_object_get(x->nx_node, "promptToSearch");

	return v != NULL ? vars_format_value(x->nx_vars, v) : NULL;
}

/* The node's percentile as Python's str() renders it (default 0.5). */
static char *
wiki_percentile(struct node_ctx *x)
{
	json_t		*v = json_object_get(x->nx_node, "percentile");
	struct buf	 b = BUF_INIT;

	if (json_is_integer(v))
		buf_printf(&b, "%lld", (long long)json_integer_value(v));
	else
		pyfmt_float(&b, node_double(x, "percentile", 0.5));
	return buf_take(&b);
}

/* The search of kind k with the node's values (or WilmerAI's fixed
 * ones), the output into out. */
static int
wiki_run(struct node_ctx *x, enum wiki_kind k, struct buf *out,
    struct wresult *res)
{
	struct transport_hooks	 hooks = { x->nx_rq->rq_wake_fd, 250, rq_wake,
				    x->nx_rq };
	struct wiki_conf	 c;
	struct wiki_query	 q = { k, NULL, NULL, k == WIKI_FULL ? 1 : 10,
				    3 };
	char			*pct = NULL, *prompt;
	int			 r;

	if ((q.q_prompt = prompt = wiki_prompt(x)) == NULL)
		return node_fail(x, res, 500, "No 'promptToSearch' specified "
		    "for OfflineWikiApi node.");
	if (k == WIKI_TOPN || k == WIKI_PARTIAL) {
		q.q_percentile = pct = wiki_percentile(x);
		q.q_num_results = node_long(x, "num_results",
		    k == WIKI_TOPN ? 10 : 1);
		q.q_top_n = node_long(x, "top_n_articles", 3);
	} else
		q.q_percentile = "0.5";
	wiki_conf_load(&c, x->nx_user != NULL ?
	    x->nx_user->u_file.jf_root : NULL);
	rq_phase(x->nx_rq, "offline wiki search");
	r = wiki_search(&c, &q, &hooks, out);
	wiki_conf_free(&c);
	free(pct);
	free(prompt);
	if (r == 1 || rq_stopped(x->nx_rq)) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	return 0;
}

static int
wiki_full_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return wiki_run(x, WIKI_FULL, out, res);
}

static int
wiki_best_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return wiki_run(x, WIKI_BEST, out, res);
}

static int
wiki_topn_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return wiki_run(x, WIKI_TOPN, out, res);
}

static int
wiki_partial_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return wiki_run(x, WIKI_PARTIAL, out, res);
}

const struct node_type node_wiki_full = {
	"OfflineWikiApiFullArticle", wiki_full_run, false };
const struct node_type node_wiki_best = {
	"OfflineWikiApiBestFullArticle", wiki_best_run, false };
const struct node_type node_wiki_topn = {
	"OfflineWikiApiTopNFullArticles", wiki_topn_run, false };
const struct node_type node_wiki_partial = {
	"OfflineWikiApiPartialArticle", wiki_partial_run, false };
