/* wf_ts.c - the engine's side of the message timestamps: history resolved before the first node, stamped messages, the answer's placeholder. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "../memory/memory.h"
#include "../memory/timestamps.h"
#include "wf_ts.h"

#define TS_FLAG		"addDiscussionIdTimestampsForLLM"

static bool
flag(json_t *node, const char *key)
{
	return json_is_true(json_object_get(node, key));
}

static bool
any_flag(json_t *nodes)
{
	json_t	*node;
	size_t	 i;

	json_array_foreach(nodes, i, node)
		if (flag(node, TS_FLAG))
			return true;
	return false;
}

/* A database error: said once, and no more timestamps this request. */
static void
off(struct flow *f, const char *why)
{
	log_warnx("[rq %s] message timestamps are off for this request "
	    "(it goes on without them): %s", f->f_rq->rq_id, why);
	f->f_ts_state = -1;
}

/* After a failed store call: cancelled while waiting (-1, the result
 * says so), or an error (0, timestamps off). */
static int
failed(struct flow *f, struct store *s)
{
	if (store_gave_up(s) || rq_stopped(f->f_rq)) {
		f->f_res->r_status = RQ_CANCELLED;
		return -1;
	}
	off(f, store_err(s));
	return 0;
}

static struct store *
ts_store(struct flow *f)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = rq_store(f->f_rq, err);

	if (s == NULL)
		off(f, err);
	return s;
}

/* The discussion's key, as every memory feature has it. */
static char *
ts_key(struct flow *f)
{
	return memory_key_of(f->f_discussion, f->f_rs->key_scope);
}

int
wf_ts_resolve(struct flow *f, json_t *nodes)
{
	struct store	*s;
	char		*key;
	int		 rc = 0;

	if (f->f_ts_state != 0 || *f->f_discussion == '\0' ||
	    !any_flag(nodes) || (s = ts_store(f)) == NULL)
		return 0;
	key = ts_key(f);
	if (ts_resolve(s, key, &f->f_msgs, time(NULL)) == -1)
		rc = failed(f, s);
	else {
		f->f_ts_state = 1;
		log_debug("[rq %s] timestamps of discussion '%s' resolved",
		    f->f_rq->rq_id, key);
	}
	free(key);
	return rc;
}

char *
wf_ts_summary(struct flow *f)
{
	struct store	*s;
	char		*key, *out = NULL;

	if (*f->f_discussion == '\0' || f->f_ts_state == -1 ||
	    (s = ts_store(f)) == NULL)
		return xstrdup("");
	key = ts_key(f);
	/* A cancel seen here stops the run at its next node. */
	if (ts_summary(s, key, time(NULL), &out) == -1)
		(void)failed(f, s);
	free(key);
	return out != NULL ? out : xstrdup("");
}

/* The answer's placeholder: 1 saved, 0 not this node, -1 cancelled. */
static int
placeholder(struct flow *f, struct node_ctx *x)
{
	struct store	*s;
	char		*key;
	int		 rc = 1;

	if (!x->nx_responder || f->f_ts_placed || f->f_ts_state != 1 ||
	    !flag(x->nx_node, TS_FLAG) || (s = ts_store(f)) == NULL)
		return 0;
	f->f_ts_placed = true;
	key = ts_key(f);
	if (ts_placeholder(s, key, time(NULL)) == -1)
		rc = failed(f, s);
	free(key);
	return rc;
}

int
wf_ts_before(struct flow *f, struct node_ctx *x, struct wmsgs *stamped,
    bool *placed)
{
	struct store	*s;
	char		*key;
	size_t		 i;
	int		 rc;

	memset(stamped, 0, sizeof(*stamped));
	if ((rc = placeholder(f, x)) == -1)
		return -1;
	*placed = rc == 1;
	if (!x->nx_top || f->f_ts_state != 1 || !flag(x->nx_node, TS_FLAG) ||
	    (s = ts_store(f)) == NULL)
		return 0;
	for (i = 0; i < f->f_msgs.n; i++)
		wmsgs_add_copy(stamped, &f->f_msgs.v[i]);
	key = ts_key(f);
	rc = ts_decorate(s, key, stamped, flag(x->nx_node,
	    "useRelativeTimestamps"), time(NULL));
	free(key);
	if (rc == -1) {
		wmsgs_free(stamped);
		return failed(f, s);
	}
	x->nx_msgs = stamped;
	return 0;
}

int
wf_ts_after(struct flow *f, struct node_ctx *x, const char *answer)
{
	struct store	*s;
	char		*key;
	int		 rc = 0;

	if (f->f_ts_state != 1 || !flag(x->nx_node,
	    "useGroupChatTimestampLogic") || (s = ts_store(f)) == NULL)
		return 0;
	key = ts_key(f);
	if (ts_commit(s, key, answer, time(NULL)) == -1)
		rc = failed(f, s);
	free(key);
	return rc;
}
