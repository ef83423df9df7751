/* stats.h - the gateway's metrics and access log, fed by HTTP and pool events. */
#ifndef SLUICE_STATS_H
#define SLUICE_STATS_H

#include "http.h"
#include "sup.h"

struct gw;
struct buf;

/* Create g->g_metrics; 0 or -1. */
int	stats_init(struct gw *);
void	stats_free(struct gw *);

/* The HTTP server's done hook (arg is the gw): metrics, access log. */
void	stats_http_done(const struct http_request *, const struct http_done *,
	    void *arg);

/* A worker's slot was emptied (the supervisor's exited op). */
void	stats_worker_exit(struct gw *, enum sup_exit);

/* The Prometheus text for GET /metrics. */
void	stats_render(struct gw *, struct buf *out);

#endif
