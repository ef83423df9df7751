/* node_curl.c - CurlCommand: the system curl run with the node's arguments, no shell (addendum A3.4). */
#include <stdlib.h>

#include "../core/node.h"
#include "../tools/curlcmd.h"
#include "../tools/curlrun.h"

/*
 * Like WilmerAI, curl gets the worker's environment and working
 * directory (the gateway's, less systemd's variables: Sluice passes its
 * settings as arguments and reads API keys from files, so nothing
 * secret of its own is there; what the operator exported, proxies
 * included, reaches curl as it reached WilmerAI's). Unlike WilmerAI,
 * its stdin is /dev/null rather than the server's, and it runs in its
 * own process group, killed whole on timeout, cap or cancellation.
 */

static int
curl_exec(struct node_ctx *x, const struct curlcmd *cc, struct buf *out,
    struct wresult *res)
{
	struct rq		*rq = x->nx_rq;
	struct transport_hooks	 hooks = { rq->rq_wake_fd, 250, rq_wake, rq };
	struct buf		 err = BUF_INIT;
	int			 rc = 0;

	if (rq_stopped(rq)) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	rq_phase(rq, "node %zu/%zu: running curl", x->nx_index + 1,
	    x->nx_count);
	switch (curlcmd_run(cc, &hooks, out, &err)) {
	case CURL_OUTPUT:
		break;
	case CURL_RAISE:
		rc = node_fail(x, res, 500, "%s", err.b_data);
		break;
	case CURL_CANCELLED:
		res->r_status = RQ_CANCELLED;
		rc = -1;
		break;
	}
	buf_free(&err);
	return rc;
}

static int
curl_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct curlcmd	 cc;
	struct buf	 err = BUF_INIT;
	int		 rc;

	if (curlcmd_build(&cc, x->nx_node, x->nx_vars, &err) == -1)
		rc = node_fail(x, res, 500, "%s", err.b_data);
	else if (node_render_failed(x))
		rc = -1;	/* the engine says why */
	else
		rc = curl_exec(x, &cc, out, res);
	curlcmd_clear(&cc);
	buf_free(&err);
	return rc;
}

const struct node_type node_curl = { "CurlCommand", curl_run, true };
