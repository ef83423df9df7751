/* storehealth.c - the shared database's health as the workers report it: /health, /metrics and the log. */
#include <stdio.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/clock.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../proto/proto.h"
#include "gw.h"
#include "metrics.h"
#include "storehealth.h"

/* The worker has logged each failure in full, with its discussion;
 * the gateway says only when the store starts and stops failing. */
static void
log_change(const struct gw_store *gs, const struct proto_msg *m)
{
	if (gs->gs_failing)
		log_warnx("[rq %.*s] the shared database is failing: %s "
		    "(/health says degraded until a write succeeds)",
		    (int)m->m_rqid.n, m->m_rqid.p, gs->gs_why);
	else
		log_info("[rq %.*s] the shared database works again: a "
		    "write succeeded", (int)m->m_rqid.n, m->m_rqid.p);
}

void
storehealth_frame(void *arg, const struct proto_msg *m)
{
	struct gw			*g = arg;
	struct gw_store			*gs = &g->g_store;
	const struct proto_store	*p = &m->m_u.store;
	bool				 was = gs->gs_failing;

	gs->gs_errors += p->errors;
	if (p->failing) {
		snprintf(gs->gs_why, sizeof(gs->gs_why), "%.*s",
		    (int)p->why.n, p->why.p != NULL ? p->why.p : "");
		if (!was)
			gs->gs_since_ms = clock_mono_ms();
	}
	gs->gs_failing = p->failing;
	gw_metrics_store(g->g_metrics, p->errors, p->failing);
	if (was != gs->gs_failing)
		log_change(gs, m);
}

void
storehealth_json(const struct gw_store *gs, uint64_t now_ms, struct buf *out)
{
	buf_printf(out, "\"store\":{\"status\":\"%s\",\"errors\":%llu",
	    gs->gs_failing ? "failing" : "ok",
	    (unsigned long long)gs->gs_errors);
	if (gs->gs_failing) {
		buf_adds(out, ",\"reason\":\"");
		json_escape(out, gs->gs_why, strlen(gs->gs_why));
		buf_printf(out, "\",\"failing_for_s\":%llu",
		    (unsigned long long)((now_ms - gs->gs_since_ms) / 1000));
	}
	buf_adds(out, "}");
}
