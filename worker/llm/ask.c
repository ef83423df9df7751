/* ask.c - one LLM call of a workflow, whoever asks it (a Standard node, a memory step): retries, failover along backup endpoints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "ask.h"
#include "attempt.h"
#include "backend.h"
#include "failover.h"
#include "url.h"

#define MAX_HOPS	16	/* endpoints tried for one call */
#define ATTEMPTS	3	/* per endpoint without a backup */

static bool
seen(char **names, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* May the call move from t to its backup? Fills res when the chain is
 * broken (a cycle, a remote backup without consent). */
static int
next_hop(struct node_ctx *x, const struct llm_target *t, char **names,
    size_t n, struct wresult *res)
{
	const char	*b = t->tg_ep->e_backup_endpoint;

	if (seen(names, n, b)) {
		char	 why[sizeof(res->r_message)];

		/* node_fail writes res->r_message: copy the cause first. */
		snprintf(why, sizeof(why), "%s", res->r_message);
		log_warnx("[rq %s] failover cycle: endpoint '%s' again after "
		    "'%s'", x->nx_rq->rq_id, b, t->tg_name);
		return node_fail(x, res, 500, "failover cycle detected: "
		    "endpoint '%s' is already in the chain (after '%s': %s)", b,
		    t->tg_name, why);
	}
	if (n >= MAX_HOPS)
		return node_fail(x, res, 500, "failover chain longer than %d "
		    "endpoints", MAX_HOPS);
	log_warnx("[rq %s] endpoint '%s' failed (%s); failing over to '%s'",
	    x->nx_rq->rq_id, t->tg_name, log_text(res->r_message), b);
	return 0;
}

/* Public addresses need allowRemoteBackup on the backup itself. */
static int
remote_ok(struct node_ctx *x, const struct llm_target *t, struct wresult *res)
{
	char	 url[256];

	if (json_is_true(json_object_get(t->tg_ep->e_file.jf_root,
	    "allowRemoteBackup")))
		return 0;
	url_shown(t->tg_ep->e_url, url, sizeof(url));
	switch (failover_where(t->tg_ep->e_url)) {
	case FO_REMOTE:
		return node_fail(x, res, 502, "backup endpoint '%s' (%s) is on "
		    "a public address; set \"allowRemoteBackup\": true in it to "
		    "allow failing over there", t->tg_name, url);
	case FO_UNKNOWN:
		log_warnx("[rq %s] backup endpoint '%s': cannot tell where %s "
		    "is; allowed", x->nx_rq->rq_id, t->tg_name, url);
		return 0;
	default:
		return 0;
	}
}

/* WilmerAI retries a server's 500/502/503/504 and a refused connection
 * (urllib3) unless the endpoint has a backup. Sluice makes at most
 * ATTEMPTS calls, 1 s then 2 s apart. */
static bool
retryable(const struct llm_target *t, const struct wresult *res, bool tokens)
{
	long	 st = res->r_upstream;

	if (res->r_status != RQ_ERROR || tokens || t->tg_ep == NULL ||
	    t->tg_ep->e_backup_endpoint != NULL)
		return false;
	if (strcmp(res->r_code, "backend_unavailable") == 0)
		return true;
	return strcmp(res->r_code, "backend_http_error") == 0 &&
	    (st == 500 || st == 502 || st == 503 || st == 504);
}

/* Sleep ms, heartbeating; false when the request stopped meanwhile. */
static bool
pause_for(struct node_ctx *x, unsigned ms, struct wresult *res)
{
	uint64_t	 end = clock_mono_ms() + ms;

	while (clock_mono_ms() < end) {
		if (rq_stopped(x->nx_rq)) {
			res->r_status = RQ_CANCELLED;
			return false;
		}
		usleep(50 * 1000);
	}
	return true;
}

/* One endpoint, with WilmerAI's retries when it has no backup. */
static int
call_retrying(struct node_ctx *x, const struct llm_ask *a,
    struct llm_target *t, struct buf *out, bool *tokens, struct wresult *res)
{
	int	 n, rc = -1;

	for (n = 1; n <= ATTEMPTS; n++) {
		res->r_upstream = 0;
		res->r_retry_after[0] = '\0';
		rc = attempt_run(x, a, t, out, tokens, res);
		if (rc == 0 || n == ATTEMPTS || !retryable(t, res, *tokens))
			break;
		log_warnx("[rq %s] endpoint '%s' failed (%s); attempt %d of %d "
		    "in %d s", x->nx_rq->rq_id, t->tg_name,
		    log_text(res->r_message),
		    n + 1, ATTEMPTS, n);
		if (!pause_for(x, 1000u * (unsigned)n, res))
			break;
		res->r_status = RQ_OK;
	}
	return rc;
}

/* Spec 11: on failure the call moves to backupEndpointName with
 * backupPresetName (or the same preset), along a chain without cycles;
 * a stream only before its first token; never after a cancel. */
int
ask_run(struct node_ctx *x, const struct llm_ask *a, struct buf *out,
    struct wresult *res)
{
	struct llm_target	 t;
	char			*names[MAX_HOPS + 1];
	char			*pre = xstrdup(a->la_preset != NULL ?
				    a->la_preset : "");
	size_t			 n = 0, i;
	bool			 tokens = false;
	int			 rc;

	if (a->la_endpoint == NULL || *a->la_endpoint == '\0') {
		free(pre);
		return node_fail(x, res, 500, "no endpointName");
	}
	names[n++] = xstrdup(a->la_endpoint);
	for (;;) {
		rc = target_load(x, names[n - 1], pre, &t, res);
		if (rc == 0 && n > 1)
			rc = remote_ok(x, &t, res);
		if (rc == 0)
			rc = call_retrying(x, a, &t, out, &tokens, res);
		if (rc == 0 || res->r_status == RQ_CANCELLED || tokens ||
		    t.tg_ep == NULL || t.tg_ep->e_backup_endpoint == NULL ||
		    next_hop(x, &t, names, n, res) == -1)
			break;
		names[n++] = xstrdup(t.tg_ep->e_backup_endpoint);
		if (t.tg_ep->e_backup_preset != NULL) {
			free(pre);
			pre = xstrdup(t.tg_ep->e_backup_preset);
		}
		res->r_status = RQ_OK;
		target_free(&t);
	}
	if (rc == 0)
		log_debug("[rq %s] endpoint '%s' answered: %s", x->nx_rq->rq_id,
		    names[n - 1], log_text(out->b_data != NULL ?
		    out->b_data : ""));
	target_free(&t);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(pre);
	return rc == 0 ? 0 : -1;
}
