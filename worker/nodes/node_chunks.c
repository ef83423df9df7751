/* node_chunks.c - ConversationChunkProcessor: a child workflow run once per complete chunk of messages new since its cursor. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/log.h"
#include "../../common/paths.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../core/vars.h"
#include "../core/vars_json.h"
#include "../memory/mem_text.h"
#include "../memory/memory.h"
#include "../tools/chunkcur.h"

/*
 * Addendum A6.1. The cursor file is WilmerAI's (one message hash per
 * processed chunk); Sluice keeps only its newest CHUNKCUR_KEEP hashes
 * (docs/migrating-from-wilmer.md). Chunks run one after the other, each
 * child seeing copies of its chunk's messages as its conversation, and
 * the cursor is rewritten after each, so that a failure or a cancel
 * half-way resumes where it stopped.
 */

#define CCP		"ConversationChunkProcessor"
#define RETURN_EMPTY	"No additional information added"
#define RETURN_MAX	(64u << 20)

struct ccp {
	char		*c_id;		/* stripped */
	const char	*c_workflow;
	char		*c_workflow_own;
	long		 c_chunk;
	long		 c_lookback;
	char		*c_cursor;	/* the cursor file */
};

static void
ccp_clear(struct ccp *c)
{
	free(c->c_id);
	free(c->c_workflow_own);
	free(c->c_cursor);
	memset(c, 0, sizeof(*c));
}

/* Python's str(v).strip(). Caller frees. */
static char *
py_strip(json_t *v)
{
	char	*s = vars_py_str(v), *r = memory_strip(s);

	free(s);
	return r;
}

static bool
id_safe(const char *id)
{
	const char	*p;

	for (p = id; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
		    *p == '-'))
			return false;
	return *id != '\0';
}

/* A JSON integer (not a boolean) of at least min, else -1. */
static long
int_field(struct node_ctx *x, const char *key, long def, long min)
{
	json_t	*v = json_object_get(x->nx_node, key);

	if (v == NULL)
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < min)
		return -1;
	return (long)json_integer_value(v);
}

/* cursorDirectory resolved and the cursor's path; -1 with res filled. */
static int
cursor_path(struct node_ctx *x, struct ccp *c, struct wresult *res)
{
	json_t	*v = json_object_get(x->nx_node, "cursorDirectory");
	char	*raw, *dir, *exp;

	if (!pyfmt_truthy(v))
		return node_fail(x, res, 500, CCP " '%s' must specify a "
		    "'cursorDirectory'.", c->c_id);
	raw = vars_py_str(v);
	dir = vars_format(x->nx_vars, raw);
	free(raw);
	raw = memory_strip(dir);
	free(dir);
	if (*raw == '\0') {
		free(raw);
		return node_fail(x, res, 500, CCP " '%s': 'cursorDirectory' "
		    "resolved to empty.", c->c_id);
	}
	exp = paths_expanduser(raw);
	c->c_cursor = chunkcur_path(exp, c->c_id, x->nx_discussion_id);
	free(raw);
	free(exp);
	if (c->c_cursor == NULL)
		return node_fail(x, res, 500, CCP " '%s': the discussion id "
		    "cannot name a cursor file", c->c_id);
	return 0;
}

/* The checks after the id, in WilmerAI's order; -1 with res filled. */
static int
ccp_fields(struct node_ctx *x, struct ccp *c, struct wresult *res)
{
	json_t	*wf = json_object_get(x->nx_node, "workflowName");

	if (!id_safe(c->c_id))
		return node_fail(x, res, 500, CCP " 'id' must contain only "
		    "letters, digits, '.', '-', or '_'; got '%s'.", c->c_id);
	if (!pyfmt_truthy(wf))
		return node_fail(x, res, 500, CCP " '%s' must specify a "
		    "'workflowName'.", c->c_id);
	if (json_is_string(wf))
		c->c_workflow = json_string_value(wf);
	else
		c->c_workflow = c->c_workflow_own = vars_py_str(wf);
	if ((c->c_chunk = int_field(x, "chunkSize", 10, 1)) == -1)
		return node_fail(x, res, 500, CCP " '%s': 'chunkSize' must be "
		    "an integer >= 1.", c->c_id);
	if ((c->c_lookback = int_field(x, "lookbackMessages", 4, 0)) == -1)
		return node_fail(x, res, 500, CCP " '%s': 'lookbackMessages' "
		    "must be an integer >= 0.", c->c_id);
	return cursor_path(x, c, res);
}

/* The text of returnFile (expanded to exp) into out, or
 * RETURN_EMPTY for an empty file; -1 with res filled. */
static int
read_return(struct node_ctx *x, const char *exp, const char *path,
    struct buf *out, struct wresult *res)
{
	FILE	*fp;
	size_t	 got, before = out->b_len;
	char	 chunk[8192];
	int	 rc = 0;

	if ((fp = fopen(exp, "re")) == NULL)
		return node_fail(x, res, 500, "cannot read returnFile '%s': %s",
		    path, strerror(errno));
	while ((got = fread(chunk, 1, sizeof(chunk), fp)) > 0 &&
	    out->b_len - before < RETURN_MAX)
		buf_add(out, chunk, got);
	if (ferror(fp))
		rc = node_fail(x, res, 500, "cannot read returnFile '%s': %s",
		    path, strerror(errno));
	fclose(fp);
	if (rc == 0 && out->b_len == before)
		buf_adds(out, RETURN_EMPTY);
	return rc;
}

/* Step 8: returnFile's text ("" while it does not exist), or the
 * count. */
static int
ccp_return(struct node_ctx *x, const struct ccp *c, size_t n,
    struct buf *out, struct wresult *res)
{
	json_t		*v = json_object_get(x->nx_node, "returnFile");
	char		*raw, *path, *exp;
	struct stat	 st;
	int		 rc = 0;

	if (!pyfmt_truthy(v)) {
		buf_printf(out, CCP " '%s' processed %zu chunk(s).", c->c_id, n);
		return 0;
	}
	raw = vars_py_str(v);
	path = vars_format(x->nx_vars, raw);
	exp = paths_expanduser(path);
	if (stat(exp, &st) == 0)
		rc = read_return(x, exp, path, out, res);
	free(raw);
	free(path);
	free(exp);
	return rc;
}

/* Step 5: where the new messages start. */
static size_t
new_start(const struct wmsgs *m, size_t end, const struct chunkcur *cur)
{
	char	 h[MEMORY_HASHLEN];
	size_t	 i;

	if (cur->cc_n == 0)
		return 0;
	for (i = end + 1 < m->n ? end + 1 : m->n; i-- > 0;) {
		memory_hash(&m->v[i], h);
		if (chunkcur_has(cur, h))
			return i + 1 < end ? i + 1 : end;
	}
	return 0;
}

/* One chunk, m->v[first..first+n), through the child workflow. */
static int
run_chunk(struct node_ctx *x, const struct ccp *c, char **inputs,
    size_t first, struct wresult *res)
{
	const struct wmsgs	*m = x->nx_msgs;
	struct wmsgs		 copy = { NULL, 0 };
	struct rq_flowcall	 fc;
	struct buf		 text = BUF_INIT, out = BUF_INIT;
	bool			 delivered;
	size_t			 i;
	int			 rc;

	buf_adds(&text, "");
	for (i = first; i < first + (size_t)c->c_chunk; i++) {
		if (i > first)
			buf_addc(&text, '\n');
		buf_adds(&text, m->v[i].m_content);
		wmsgs_add_copy(&copy, &m->v[i]);
	}
	free(inputs[0]);
	inputs[0] = buf_take(&text);
	memset(&fc, 0, sizeof(fc));
	fc.fc_folder = x->nx_user->u_workflow_folder;
	fc.fc_name = c->c_workflow;
	fc.fc_inputs = inputs;
	fc.fc_parent = x->nx_run;
	fc.fc_msgs = &copy;
	fc.fc_no_tools = true;
	rc = rq_run_flow(x->nx_rq, &fc, &out, &delivered, res);
	buf_free(&out);
	wmsgs_free(&copy);
	return rc;
}

/* Steps 6-7: every complete chunk of m[start..end), in order, the
 * cursor rewritten (and the lock renewed) after each. The count run
 * into *done. */
static int
run_chunks(struct node_ctx *x, const struct ccp *c, struct chunkcur *cur,
    size_t start, size_t end, const char *lock, size_t *done,
    struct wresult *res)
{
	size_t	 k, n = (end - start) / (size_t)c->c_chunk, last;
	char	**inputs = node_scoped_inputs(x, 1), h[MEMORY_HASHLEN];
	int	 rc = 0;

	for (k = 0; k < n && rc == 0; k++) {
		if (rq_stopped(x->nx_rq)) {
			res->r_status = RQ_CANCELLED;
			rc = -1;
			break;
		}
		rq_phase(x->nx_rq, "%s node %zu/%zu: chunk %zu/%zu", x->nx_workflow,
		    x->nx_index + 1, x->nx_count, k + 1, n);
		if ((rc = run_chunk(x, c, inputs, start + k * (size_t)c->c_chunk,
		    res)) != 0)
			break;
		(*done)++;
		last = start + (k + 1) * (size_t)c->c_chunk - 1;
		memory_hash(&x->nx_msgs->v[last], h);
		chunkcur_push(cur, h);
		if (chunkcur_write(c->c_cursor, cur) == -1)
			log_warn("[rq %s] " CCP " '%s': cannot write the cursor "
			    "%s", x->nx_rq->rq_id, c->c_id, c->c_cursor);
		memory_lock_renew(x, lock);
	}
	node_strv_free(inputs);
	return rc;
}

/* Read the cursor, run what is new, write it: under a lock of the
 * shared store named after the cursor file, so that two requests of
 * one discussion (on any workers) never run the same chunks. */
static int
ccp_process(struct node_ctx *x, const struct ccp *c, size_t *done,
    struct wresult *res)
{
	const struct wmsgs	*m = x->nx_msgs;
	struct chunkcur		 cur;
	size_t			 end, start;
	char			*lock;
	int			 rc;

	if (m->n <= (size_t)c->c_lookback)
		return 0;
	end = m->n - (size_t)c->c_lookback;
	lock = xasprintf("chunk-cursor:%s", c->c_cursor);
	if (memory_lock(x, lock, "chunk processing", 0, res) != 1) {
		free(lock);
		return -1;
	}
	chunkcur_read(x->nx_rq->rq_id, c->c_cursor, &cur);
	start = new_start(m, end, &cur);
	rc = run_chunks(x, c, &cur, start, end, lock, done, res);
	chunkcur_clear(&cur);
	memory_unlock(x, lock);
	free(lock);
	return rc;
}

static int
ccp_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct ccp	 c;
	size_t		 done = 0;
	int		 rc;

	(void)streamed;
	memset(&c, 0, sizeof(c));
	if (!pyfmt_truthy(json_object_get(x->nx_node, "id")) ||
	    *(c.c_id = py_strip(json_object_get(x->nx_node, "id"))) == '\0') {
		free(c.c_id);
		return node_fail(x, res, 500, "A " CCP " node must have a "
		    "unique 'id'.");
	}
	if (*x->nx_discussion_id == '\0') {
		log_info("[rq %s] " CCP " '%s': no discussionId on this "
		    "request; skipping chunk processing", x->nx_rq->rq_id,
		    c.c_id);
		rc = ccp_return(x, &c, 0, out, res);
	} else if ((rc = ccp_fields(x, &c, res)) == 0 &&
	    (rc = ccp_process(x, &c, &done, res)) == 0)
		rc = ccp_return(x, &c, done, out, res);
	ccp_clear(&c);
	return rc;
}

const struct node_type node_conv_chunks = { CCP, ccp_run, false };
