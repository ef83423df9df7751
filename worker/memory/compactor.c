/* compactor.c - ContextCompactor (addendum A5.2-A5.4): decide from the windows and the stored state, run the three LLM calls under the discussion's lock, answer the stored summaries. */
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "compact_win.h"
#include "compactor.h"
#include "memory.h"
#include "memstore.h"

/* One compaction's world. */
struct compaction {
	struct node_ctx		*c_x;
	struct compact_conf	*c_conf;
	struct store		*c_store;
	const char		*c_key;
	char			*c_lock;	/* "compactor:" + key */
	struct wmsgs		 c_w;		/* the working messages */
	struct compact_bounds	 c_b;
	struct mem_blocks	 c_old;		/* the stored state */
	struct mem_blocks	 c_oldest;
	json_t			*c_opts;	/* the calls' settings */
};


/* LLM call i with prompt (the placeholders filled); the answer into
 * *out, or fallback when it is empty or blank. No variable is
 * substituted in either prompt. 0, or -1 with res filled. */
static int
ask(struct compaction *c, int i, const char *prompt, const char *fallback,
    char **out, struct wresult *res)
{
	struct compact_conf	*cc = c->c_conf;
	struct buf		 b = BUF_INIT;
	char			*sys, *pr;
	int			 rc;

	if (cc->cc_endpoint == NULL || *cc->cc_endpoint == '\0')
		return node_fail(c->c_x, res, 500, "%s names no endpointName",
		    cc->cc_file.jf_path);
	if (*prompt == '\0') {
		log_warnx("[rq %s] ContextCompactor: call %d has an empty "
		    "prompt; not sent", c->c_x->nx_rq->rq_id, i + 1);
		*out = xstrdup(fallback);
		return 0;
	}
	memory_lock_renew(c->c_x, c->c_lock);
	sys = memory_literal(cc->cc_system[i]);
	pr = memory_literal(prompt);
	rc = memory_llm_opts(c->c_x, cc->cc_endpoint, cc->cc_preset, sys, pr,
	    cc->cc_max_tokens, c->c_opts, &b, res);
	free(sys);
	free(pr);
	if (rc == 0 && (b.b_data == NULL || pystr_blank(b.b_data))) {
		log_warnx("[rq %s] ContextCompactor: call %d answered nothing; "
		    "kept the text it was given", c->c_x->nx_rq->rq_id, i + 1);
		*out = xstrdup(fallback);
	} else if (rc == 0)
		*out = buf_take(&b);
	buf_free(&b);
	return rc;
}

/* Call 1: the Old window, with Recent as what it is about. */
static int
old_section(struct compaction *c, char **summary, struct wresult *res)
{
	const struct compact_bounds *b = &c->c_b;
	char	*old = compact_text(&c->c_w, b->cb_old, b->cb_recent);
	char	*recent = compact_text(&c->c_w, b->cb_recent, c->c_w.n);
	char	*p1 = memory_replace(c->c_conf->cc_prompt[0],
		    "[MESSAGES_TO_SUMMARIZE]", old);
	char	*p2 = memory_replace(p1, "[RECENT_MESSAGES]", recent);
	int	 rc = ask(c, 0, p2, old, summary, res);

	free(p2);
	free(p1);
	free(recent);
	free(old);
	return rc;
}

/* Calls 2 and 3: W[from..cb_old) summarised, folded into the rolling
 * Oldest summary (or kept as it was when the answer is empty). */
static int
fold_oldest(struct compaction *c, size_t from, char **updated,
    struct wresult *res)
{
	const char	*have = c->c_oldest.n > 0 ?
			    c->c_oldest.v[0].mb_text : "";
	char		*shifted = compact_text(&c->c_w, from,
			    c->c_b.cb_old);
	char		*p = memory_replace(c->c_conf->cc_prompt[1],
			    "[MESSAGES_TO_SUMMARIZE]", shifted), *p3, *q;
	char		*neutral = NULL;
	int		 rc = ask(c, 1, p, shifted, &neutral, res);

	free(p);
	if (rc == 0) {
		q = memory_replace(c->c_conf->cc_prompt[2],
		    "[EXISTING_SUMMARY]", have);
		p3 = memory_replace(q, "[NEW_CONTENT]", neutral);
		rc = ask(c, 2, p3, have, updated, res);
		free(p3);
		free(q);
	}
	free(neutral);
	free(shifted);
	return rc;
}

static void
block_put(struct mem_blocks *b, char *text, char *hash)
{
	b->v = xreallocarray(b->v, b->n + 1, sizeof(*b->v));
	b->v[b->n].mb_id = (int64_t)b->n;
	b->v[b->n].mb_text = text;
	b->v[b->n++].mb_hash = hash;
}

/* Step 7: the calls, then both sections written together. */
static int
compact(struct compaction *c, struct wresult *res)
{
	struct mem_blocks	 old = { NULL, 0 }, oldest = { NULL, 0 };
	char			 h[SHA256_HEXLEN], *sum = NULL, *upd = NULL;
	size_t			 prev;
	int			 rc = old_section(c, &sum, res);

	if (rc == 0 && c->c_b.cb_old > 0 &&
	    (prev = compact_prev_start(&c->c_w, &c->c_old)) < c->c_b.cb_old)
		rc = fold_oldest(c, prev, &upd, res);
	if (rc == -1) {
		free(sum);
		return -1;
	}
	compact_hash(&c->c_w.v[c->c_b.cb_recent - 1], h);
	block_put(&old, sum, xstrdup(h));
	block_put(&old, xstrdup(COMPACT_BOUNDARY),
	    compact_boundary(&c->c_w, c->c_b.cb_old));
	if (upd != NULL) {
		compact_hash(&c->c_w.v[0], h);
		block_put(&oldest, upd, xstrdup(h));
	}
	if (memstore_sections_put(c->c_store, c->c_key, &old,
	    upd != NULL ? &oldest : NULL) == -1)
		rc = node_fail(c->c_x, res, 500, "%s", store_err(c->c_store));
	mem_blocks_free(&old);
	mem_blocks_free(&oldest);
	return rc;
}

/* Both stored sections into c. 0, or -1 with res filled. */
static int
load_state(struct compaction *c, struct wresult *res)
{
	mem_blocks_free(&c->c_old);
	mem_blocks_free(&c->c_oldest);
	if (memstore_section(c->c_store, c->c_key, "old", &c->c_old) == -1 ||
	    memstore_section(c->c_store, c->c_key, "oldest",
	    &c->c_oldest) == -1)
		return node_fail(c->c_x, res, 500, "%s",
		    store_err(c->c_store));
	return 0;
}

/* A5.4: the stored summaries, tagged; "" when both are empty. */
static void
output(const struct compaction *c, struct buf *out)
{
	const char	*old = "", *oldest = "";
	size_t		 i;

	for (i = 0; i < c->c_old.n; i++)
		if (strcmp(c->c_old.v[i].mb_text, COMPACT_BOUNDARY) != 0) {
			old = c->c_old.v[i].mb_text;
			break;
		}
	if (c->c_oldest.n > 0)
		oldest = c->c_oldest.v[0].mb_text;
	buf_adds(out, "");
	if (*old != '\0') {
		buf_adds(out, "<context_compactor_old>");
		buf_adds(out, old);
		buf_adds(out, "</context_compactor_old>");
	}
	if (*oldest != '\0') {
		buf_adds(out, *old != '\0' ? "\n<context_compactor_oldest>" :
		    "<context_compactor_oldest>");
		buf_adds(out, oldest);
		buf_adds(out, "</context_compactor_oldest>");
	}
}

/* Steps 6-7 under the discussion's compactor lock, taken without
 * waiting (busy: another request compacts; the stored summaries
 * answer). The state is read again under it and the decision made
 * again: a request that compacted meanwhile leaves nothing to do. */
static int
locked_compact(struct compaction *c, struct wresult *res)
{
	struct node_ctx	*x = c->c_x;
	int		 r = memory_lock_try(x, c->c_lock, res);

	if (r == 0)
		log_info("[rq %s] ContextCompactor: discussion '%s' is being "
		    "compacted by another request; its stored summaries "
		    "answer", x->nx_rq->rq_id, c->c_key);
	if (r != 1)
		return r;
	r = load_state(c, res);
	if (r == 0 && compact_decide(&c->c_w, &c->c_b, &c->c_old) !=
	    COMPACT_NONE)
		r = compact(c, res);
	memory_unlock(x, c->c_lock);
	return r;
}

/* Steps 2-8 for a discussion. */
static int
run_discussion(struct compaction *c, struct buf *out, struct wresult *res)
{
	const struct wmsgs	*m = c->c_x->nx_msgs;
	long			 lb = c->c_conf->cc_lookback;
	enum compact_need	 need = COMPACT_NONE;

	if ((c->c_store = memory_store(c->c_x, res)) == NULL)
		return -1;
	c->c_w.v = m->v;
	c->c_w.n = m->n;
	if (lb > 0 && m->n > (size_t)lb)
		c->c_w.n -= (size_t)lb;
	if (load_state(c, res) == -1)
		return -1;
	if (c->c_w.n >= 2) {
		compact_bounds(&c->c_w, c->c_conf->cc_recent,
		    c->c_conf->cc_old, &c->c_b);
		need = compact_decide(&c->c_w, &c->c_b, &c->c_old);
		log_debug("[rq %s] ContextCompactor: %zu messages, Old "
		    "%zu-%zu, need %d", c->c_x->nx_rq->rq_id, c->c_w.n,
		    c->c_b.cb_old, c->c_b.cb_recent, (int)need);
	}
	if (need != COMPACT_NONE && (locked_compact(c, res) == -1 ||
	    load_state(c, res) == -1))
		return -1;
	output(c, out);
	return 0;
}

int
compactor_run(struct node_ctx *x, struct buf *out, struct wresult *res)
{
	struct compact_conf	 cc;
	struct compaction	 c;
	char			*key;
	int			 r = compact_conf_load(x, &cc, res);

	if (r != 1) {
		compact_conf_free(&cc);
		return r;
	}
	if ((key = memory_key(x)) == NULL) {
		log_warnx("[rq %s] ContextCompactor: the request names no "
		    "discussion id; the node answers \"\"", x->nx_rq->rq_id);
		compact_conf_free(&cc);
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.c_x = x;
	c.c_conf = &cc;
	c.c_key = key;
	c.c_lock = xasprintf("compactor:%s", key);
	/* A completions endpoint: the prompt in a user turn, then the
	 * assistant's turn when the endpoint's addGenerationPrompt says so
	 * (a chat endpoint sends system and user messages either way). */
	c.c_opts = json_pack("{s:b}", "addUserTurnTemplate", 1);
	r = run_discussion(&c, out, res);
	json_decref(c.c_opts);
	mem_blocks_free(&c.c_old);
	mem_blocks_free(&c.c_oldest);
	free(c.c_lock);
	free(key);
	compact_conf_free(&cc);
	return r;
}
