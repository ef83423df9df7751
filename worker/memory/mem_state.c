/* mem_state.c - WilmerAI's state document: what is true now, merged from each round's new facts by the user's workflow. */
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "mem_state.h"
#include "memgen.h"

#define SHRINK_FLOOR	500	/* a smaller document may shrink freely */

/* The facts as WilmerAI lists them: "- fact" lines. Caller frees. */
static char *
fact_lines(char *const *facts, size_t n)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < n; i++)
		buf_printf(&b, "%s- %s", i > 0 ? "\n" : "", facts[i]);
	return buf_take(&b);
}

/* Why the new document must not replace the old one, or NULL. */
static const char *
refused(const struct memory_settings *ms, const char *old, const char *new)
{
	double	 ratio = memory_setting_double(ms,
		    "stateDocumentMinRetentionRatio", 0.5);

	if (*new == '\0')
		return "it came back empty";
	if (ratio > 0 && strlen(old) > SHRINK_FLOOR &&
	    (double)strlen(new) < ratio * (double)strlen(old))
		return "it would shrink the document below "
		    "stateDocumentMinRetentionRatio";
	return NULL;
}

/* Run the merge and store its answer; 0, or -1 with res filled. */
static int
merge(struct node_ctx *x, const struct memory_settings *ms, const char *key,
    const char *wf, char *facts, struct wresult *res)
{
	struct store	*s = memory_store(x, res);
	struct buf	 out = BUF_INIT;
	char		*doc = NULL, *new = NULL, *in[3] = { facts, NULL, NULL };
	const char	*why;
	int		 rc = -1;

	if (s == NULL)
		return -1;
	if (memstore_state(s, key, &doc) == -1)
		return node_fail(x, res, 500, "%s", store_err(s));
	in[1] = doc != NULL ? doc : xstrdup("");
	if (memory_workflow(x, wf, in, &out, res) == 0) {
		new = memory_strip(out.b_data != NULL ? out.b_data : "");
		if ((why = refused(ms, in[1], new)) != NULL) {
			log_warnx("[rq %s] discussion '%s': the state document "
			    "was kept: the answer of '%s' was refused: %s",
			    x->nx_rq->rq_id, key, wf, why);
			rc = 0;
		} else if (memstore_state_put(s, key, new) == -1)
			rc = node_fail(x, res, 500, "%s", store_err(s));
		else
			rc = 0;
	}
	free(new);
	free(in[1]);
	buf_free(&out);
	return rc;
}

int
memory_state_update(struct node_ctx *x, const struct memory_settings *ms,
    const char *key, char *const *facts, size_t n, struct wresult *res)
{
	const char	*wf = memory_setting_str(ms, "stateDocumentWorkflowName",
			    NULL);
	struct wresult	 saved = *res;
	char		*lines;
	int		 rc;

	if (!memory_setting_bool(ms, "useStateDocument", false) || n == 0)
		return 0;
	if (wf == NULL) {
		log_warnx("[rq %s] useStateDocument is on but no "
		    "stateDocumentWorkflowName is set; no state document",
		    x->nx_rq->rq_id);
		return 0;
	}
	lines = fact_lines(facts, n);
	rc = merge(x, ms, key, wf, lines, res);
	free(lines);
	if (rc == -1 && res->r_status == RQ_CANCELLED)
		return -1;
	if (rc == -1) {
		log_warnx("[rq %s] discussion '%s': the state document was not "
		    "updated: %s", x->nx_rq->rq_id, key,
		    log_text(res->r_message));
		*res = saved;
	}
	return 0;
}
