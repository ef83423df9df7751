/* metrics.h - a small Prometheus registry and the gateway's metric set. */
#ifndef SLUICE_METRICS_H
#define SLUICE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

/*
 * Part 1: the generic registry.
 *
 * Families (counter, gauge, histogram) are declared once at start and
 * get an id; updates name a family id and its label values. Rendering
 * follows the text exposition format 0.0.4: families in declaration
 * order, series in the order their label values were first seen.
 *
 * Label names are NULL-terminated arrays (NULL for no labels). Label
 * values are arrays of exactly as many strings as the family has label
 * names (NULL for a family without labels); a NULL entry counts as "".
 * Values are copied the first time a label set is seen and should be
 * short and come from a small fixed set: never a raw URL path or a
 * client string. Lookups hash the values into a per-family open
 * addressing table (no scan over the family's series). Rendering
 * escapes '\\', '"' and newline and turns bytes that are not UTF-8 into
 * U+FFFD.
 *
 * Cap: a family holds at most METRICS_MAX_SERIES label sets. Updates for
 * a label set first seen beyond the cap go to one extra series rendered
 * as name{overflow="true"} (counters and histograms keep their totals;
 * for a gauge it holds the last such value), and the registry logs one
 * warning per family. Label sets seen before keep their own series, and
 * a family's memory stays bounded. "overflow" is not a valid label name.
 *
 * Programmer errors (bad names, unknown id, an update that does not fit
 * the family's type, non-increasing bounds) are fatalx. Single-threaded.
 */
#define METRICS_MAX_SERIES	1000
#define METRICS_MAX_LABELS	8

struct metrics;

/* Called by metrics_render for a family declared with metrics_gauge_fn,
 * after all such families were emptied: set its current values with
 * metrics_set (any gauge may be set here). Must not declare or render. */
typedef void	(*metrics_fn)(struct metrics *, int fam, void *arg);

/* An empty registry; free with metrics_free (NULL is a no-op). */
struct metrics	*metrics_new(void);
void		 metrics_free(struct metrics *);

/* Declare a family and return its id (>= 0). name must match
 * [a-zA-Z_:][a-zA-Z0-9_:]* and be new; label names match
 * [a-zA-Z_][a-zA-Z0-9_]*, without a "__" prefix, at most
 * METRICS_MAX_LABELS. help may be NULL or "" (no # HELP line). Strings
 * are copied. A family without labels starts with its one series at 0;
 * one with labels shows only # HELP and # TYPE until it is updated. */
int		 metrics_counter(struct metrics *, const char *name,
		    const char *help, const char *const *label_names);
int		 metrics_gauge(struct metrics *, const char *name,
		    const char *help, const char *const *label_names);
/* bounds: nbounds finite, strictly increasing upper bounds (copied);
 * the +Inf bucket is implicit. "le" is not a valid label name here. */
int		 metrics_histogram(struct metrics *, const char *name,
		    const char *help, const char *const *label_names,
		    const double *bounds, size_t nbounds);
/* A gauge whose series are rebuilt at every render: fn(m, id, arg) runs
 * just before the text is produced, and only the label sets it sets are
 * rendered. arg is borrowed. */
int		 metrics_gauge_fn(struct metrics *, const char *name,
		    const char *help, const char *const *label_names,
		    metrics_fn fn, void *arg);

/* Add v to a counter (v must be >= 0; negative or NaN is ignored) or to
 * a gauge (any v). v = 0 creates the series, e.g. to show a zero. */
void		 metrics_inc(struct metrics *, int fam,
		    const char *const *label_values, double v);
/* Set a gauge. */
void		 metrics_set(struct metrics *, int fam,
		    const char *const *label_values, double v);
/* Record x in a histogram: every bucket with le >= x, _sum and _count.
 * NaN is ignored. */
void		 metrics_observe(struct metrics *, int fam,
		    const char *const *label_values, double x);

/* Run the gauge callbacks, then append the whole exposition to out
 * (Content-Type: text/plain; version=0.0.4). */
void		 metrics_render(struct metrics *, struct buf *out);

/*
 * Part 2: the gateway's own metric set, on top of the registry, so that
 * callers use typed helpers instead of family ids.
 */
enum gw_restart_cause {
	GW_RESTART_CRASH,
	GW_RESTART_HANG,
	GW_RESTART_RECYCLE,
	GW_RESTART_CANCEL_KILL,
	GW_RESTART_IDLE,
	GW_RESTART_CONFIG,
	GW_RESTART_NCAUSES
};

enum gw_cancel_source {
	GW_CANCEL_DISCONNECT,
	GW_CANCEL_DELETE,
	GW_CANCEL_DEADLINE,
	GW_CANCEL_IDEMPOTENCY,
	GW_CANCEL_NSOURCES
};

struct gw_metrics;

/* Called at every scrape, before any text: report the current state
 * with gw_metrics_workers, gw_metrics_queue and gw_metrics_in_flight. */
typedef void	(*gw_metrics_sample_fn)(struct gw_metrics *, void *arg);

/* Declare every sluice_* family; restart causes and cancellation sources
 * start at zero. sample (may be NULL) and arg are borrowed. Free with
 * gw_metrics_free (NULL is a no-op). */
struct gw_metrics	*gw_metrics_new(gw_metrics_sample_fn sample,
			    void *arg);
void			 gw_metrics_free(struct gw_metrics *);
/* Append the exposition to out (runs sample first). */
void			 gw_metrics_render(struct gw_metrics *,
			    struct buf *out);

/* A finished HTTP request. route is a fixed route name (e.g.
 * "chat_completions"), never the raw path. seconds is the whole
 * duration (< 0 or NaN counts as 0); ttfb_seconds the time to the first
 * response byte, or < 0 when no byte was sent (not observed). */
void	gw_metrics_request(struct gw_metrics *, const char *route,
	    int status, double seconds, double ttfb_seconds);
/* One more restart or cancellation; a value outside the enum is fatalx. */
void	gw_metrics_restart(struct gw_metrics *, enum gw_restart_cause);
void	gw_metrics_cancel(struct gw_metrics *, enum gw_cancel_source);
/* A backend call failed; endpoint is a configured endpoint name. */
void	gw_metrics_backend_error(struct gw_metrics *, const char *endpoint);
/* n more bytes of streamed answers were sent to clients. */
void	gw_metrics_stream_bytes(struct gw_metrics *, size_t n);
/* Gauges: requests in flight, requests queued for a worker, and worker
 * slots in a state (a sup_state_name() string). Workers by state are
 * only kept when set from the sample callback; the other two hold the
 * last value set. */
void	gw_metrics_in_flight(struct gw_metrics *, unsigned n);
void	gw_metrics_queue(struct gw_metrics *, unsigned n);
void	gw_metrics_workers(struct gw_metrics *, const char *state,
	    unsigned n);
/* The --concurrency gate, and one endpoint's slots (held, waiting). */
void	gw_metrics_gate(struct gw_metrics *, unsigned active,
	    unsigned waiting);
void	gw_metrics_slots(struct gw_metrics *, const char *endpoint,
	    unsigned used, unsigned waiting);
/* One response-cache lookup reported by a worker: a hit or a miss, and
 * the entries in the cache then (< 0: unknown, the gauge keeps its last
 * value). */
void	gw_metrics_cache_lookup(struct gw_metrics *, bool hit,
	    int64_t entries);
/* The cache holds n entries now (after DELETE /admin/cache). */
void	gw_metrics_cache_entries(struct gw_metrics *, uint64_t n);
/* A worker's store report: errors more failed calls to the shared
 * database; failing, whether the store's last word was a failure. */
void	gw_metrics_store(struct gw_metrics *, uint64_t errors, bool failing);

#endif
