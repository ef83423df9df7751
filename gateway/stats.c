/* stats.c - the gateway's metrics and access log, fed by HTTP and pool events. */
#include <stdio.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "gate.h"
#include "greq.h"
#include "gw.h"
#include "metrics.h"
#include "slots.h"
#include "stats.h"

static void
slot_sample(void *arg, const char *ep, unsigned used, unsigned waiting)
{
	gw_metrics_slots(arg, ep, used, waiting);
}

/* Gauges read at scrape time: the pool, the requests in flight, the
 * concurrency gate and slots. */
static void
sample(struct gw_metrics *gm, void *arg)
{
	struct gw	*g = arg;
	struct sup_stats st;
	unsigned	 s;

	sup_stats(g->g_sup, &st);
	for (s = W_SPAWNING; s <= W_DEAD; s++)
		gw_metrics_workers(gm, sup_state_name((enum w_state)s),
		    st.st_count[s]);
	gw_metrics_queue(gm, st.st_queued);
	gw_metrics_in_flight(gm, greq_in_flight(g));
	if (g->g_gate != NULL)
		gw_metrics_gate(gm, gate_active(g->g_gate),
		    gate_waiting(g->g_gate));
	if (g->g_slots != NULL)
		slots_foreach(g->g_slots, slot_sample, gm);
}

int
stats_init(struct gw *g)
{
	g->g_metrics = gw_metrics_new(sample, g);
	return g->g_metrics != NULL ? 0 : -1;
}

void
stats_free(struct gw *g)
{
	gw_metrics_free(g->g_metrics);
	g->g_metrics = NULL;
}

void
stats_http_done(const struct http_request *r, const struct http_done *d,
    void *arg)
{
	struct gw	*g = arg;
	const char	*route = d->hd_route != NULL ? d->hd_route : "none";

	gw_metrics_request(g->g_metrics, route, d->hd_status,
	    d->hd_total_us / 1e6, d->hd_ttfb_us < 0 ? -1 :
	    d->hd_ttfb_us / 1e6);
	if (!g->g_conf.c_access_log)
		return;
	log_info("%s \"%s %.200s\" %d %zu %.1fms ttfb=%.1fms route=%s "
	    "worker=%ld%s [rq %s]", r->peer ? r->peer : "-", r->method_name,
	    r->path, d->hd_status, d->hd_bytes, d->hd_total_us / 1000.0,
	    d->hd_ttfb_us < 0 ? 0.0 : d->hd_ttfb_us / 1000.0, route,
	    d->hd_tag, d->hd_client_gone ? " client-gone" : "", r->id);
}

void
stats_worker_exit(struct gw *g, enum sup_exit cause)
{
	static const int map[] = {
		[SUP_EXIT_CRASH] = GW_RESTART_CRASH,
		[SUP_EXIT_HANG] = GW_RESTART_HANG,
		[SUP_EXIT_RECYCLE] = GW_RESTART_RECYCLE,
		[SUP_EXIT_CANCEL_KILL] = GW_RESTART_CANCEL_KILL,
		[SUP_EXIT_IDLE] = GW_RESTART_IDLE,
		[SUP_EXIT_CONFIG] = GW_RESTART_CONFIG,
	};

	if (cause != SUP_EXIT_NONE && cause != SUP_EXIT_SHUTDOWN &&
	    g->g_metrics != NULL)
		gw_metrics_restart(g->g_metrics, (enum gw_restart_cause)
		    map[cause]);
}

void
stats_render(struct gw *g, struct buf *out)
{
	gw_metrics_render(g->g_metrics, out);
}
