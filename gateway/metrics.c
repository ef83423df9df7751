/* metrics.c - a small Prometheus registry and the gateway's metric set. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "metrics.h"

enum mtype { MT_COUNTER, MT_GAUGE, MT_HISTOGRAM };

static const char *const mtype_names[] = { "counter", "gauge", "histogram" };

/* One label set. A histogram keeps per-bucket (not cumulative) counts;
 * its +Inf bucket is s_count and s_value its sum. */
struct mseries {
	char		**s_values;	/* f_nlabels copies, or NULL */
	uint32_t	 s_hash;
	double		 s_value;
	uint64_t	 s_count;
	uint64_t	 s_buckets[];	/* f_nbounds */
};

struct mfam {
	char		 *f_name;
	char		 *f_help;
	enum mtype	  f_type;
	char		**f_labels;
	size_t		  f_nlabels;
	double		 *f_bounds;
	size_t		  f_nbounds;
	struct mseries	**f_series;	/* first-seen order */
	size_t		  f_nseries;
	size_t		  f_seriescap;
	uint32_t	 *f_slots;	/* linear probing: index + 1 */
	size_t		  f_nslots;	/* a power of two, or 0 */
	struct mseries	 *f_overflow;	/* past METRICS_MAX_SERIES */
	bool		  f_warned;
	metrics_fn	  f_fn;
	void		 *f_arg;
};

struct metrics {
	struct mfam	**m_fams;	/* by id */
	size_t		  m_nfams;
	size_t		  m_cap;
};

/* ---- names and families ------------------------------------------- */

static bool
name_ok(const char *s, bool colon)
{
	size_t	 i;
	char	 c;

	if (s == NULL || s[0] == '\0')
		return false;
	for (i = 0; (c = s[i]) != '\0'; i++) {
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    c == '_' || (colon && c == ':'))
			continue;
		if (i > 0 && c >= '0' && c <= '9')
			continue;
		return false;
	}
	return true;
}

static bool
label_name_ok(const struct mfam *f, const char *s)
{
	if (!name_ok(s, false) || strncmp(s, "__", 2) == 0 ||
	    strcmp(s, "overflow") == 0)
		return false;
	return f->f_type != MT_HISTOGRAM || strcmp(s, "le") != 0;
}

static void
fam_set_labels(struct mfam *f, const char *const *names)
{
	size_t	 n = 0, i, j;

	while (names != NULL && names[n] != NULL)
		n++;
	if (n > METRICS_MAX_LABELS)
		fatalx("metrics: %s: %zu labels, at most %d", f->f_name, n,
		    METRICS_MAX_LABELS);
	f->f_labels = xcalloc(n > 0 ? n : 1, sizeof(*f->f_labels));
	for (i = 0; i < n; i++) {
		if (!label_name_ok(f, names[i]))
			fatalx("metrics: %s: bad label name \"%s\"",
			    f->f_name, names[i]);
		for (j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				fatalx("metrics: %s: label \"%s\" twice",
				    f->f_name, names[i]);
		f->f_labels[i] = xstrdup(names[i]);
	}
	f->f_nlabels = n;
}

static struct mfam *
fam_add(struct metrics *m, const char *name, const char *help,
    enum mtype type, const char *const *label_names)
{
	struct mfam	*f;
	size_t		 i;

	if (!name_ok(name, true))
		fatalx("metrics: bad metric name \"%s\"",
		    name != NULL ? name : "(null)");
	for (i = 0; i < m->m_nfams; i++)
		if (strcmp(m->m_fams[i]->f_name, name) == 0)
			fatalx("metrics: %s declared twice", name);
	if (m->m_nfams == m->m_cap) {
		m->m_cap = m->m_cap > 0 ? m->m_cap * 2 : 16;
		m->m_fams = xreallocarray(m->m_fams, m->m_cap,
		    sizeof(*m->m_fams));
	}
	f = xcalloc(1, sizeof(*f));
	f->f_name = xstrdup(name);
	f->f_help = xstrdup(help != NULL ? help : "");
	f->f_type = type;
	fam_set_labels(f, label_names);
	m->m_fams[m->m_nfams++] = f;
	return f;
}

static struct mfam *
fam_get(const struct metrics *m, int id, const char *op)
{
	if (id < 0 || (size_t)id >= m->m_nfams)
		fatalx("metrics: %s: no family %d", op, id);
	return m->m_fams[id];
}

/* ---- series lookup ------------------------------------------------- */

static const char *
lv(const char *const *values, size_t i)
{
	return values[i] != NULL ? values[i] : "";
}

/* FNV-1a over the values, each followed by a 0xff separator. */
static uint32_t
values_hash(const char *const *values, size_t n)
{
	const unsigned char	*p;
	uint32_t		 h = 2166136261u;
	size_t			 i;

	for (i = 0; i < n; i++) {
		for (p = (const unsigned char *)lv(values, i); *p != '\0'; p++)
			h = (h ^ *p) * 16777619u;
		h = (h ^ 0xffu) * 16777619u;
	}
	return h;
}

static bool
values_eq(const struct mseries *s, const char *const *values, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(s->s_values[i], lv(values, i)) != 0)
			return false;
	return true;
}

static struct mseries *
series_new(const struct mfam *f, const char *const *values, uint32_t h)
{
	struct mseries	*s;
	size_t		 i;

	s = xcalloc(1, sizeof(*s) + f->f_nbounds * sizeof(s->s_buckets[0]));
	s->s_hash = h;
	if (values != NULL && f->f_nlabels > 0) {
		s->s_values = xcalloc(f->f_nlabels, sizeof(*s->s_values));
		for (i = 0; i < f->f_nlabels; i++)
			s->s_values[i] = xstrdup(lv(values, i));
	}
	return s;
}

static void
series_free(const struct mfam *f, struct mseries *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; s->s_values != NULL && i < f->f_nlabels; i++)
		free(s->s_values[i]);
	free(s->s_values);
	free(s);
}

static void
fam_rehash(struct mfam *f, size_t nslots)
{
	size_t	 i, j, mask = nslots - 1;

	free(f->f_slots);
	f->f_slots = xcalloc(nslots, sizeof(*f->f_slots));
	f->f_nslots = nslots;
	for (i = 0; i < f->f_nseries; i++) {
		for (j = f->f_series[i]->s_hash & mask; f->f_slots[j] != 0;
		    j = (j + 1) & mask)
			;
		f->f_slots[j] = (uint32_t)(i + 1);
	}
}

static struct mseries *
fam_overflow(struct mfam *f)
{
	if (f->f_overflow == NULL) {
		f->f_overflow = series_new(f, NULL, 0);
		if (!f->f_warned)
			log_warnx("metrics: %s has %d label sets; more go to "
			    "{overflow=\"true\"}", f->f_name,
			    METRICS_MAX_SERIES);
		f->f_warned = true;
	}
	return f->f_overflow;
}

/* The series for these label values, created on first sight. The table
 * stays at most half full, so probes are short. */
static struct mseries *
fam_series(struct mfam *f, const char *const *values)
{
	struct mseries	*s;
	uint32_t	 h;
	size_t		 i, mask;

	if (values == NULL && f->f_nlabels > 0)
		fatalx("metrics: %s: label values missing", f->f_name);
	if (f->f_nslots == 0)
		fam_rehash(f, 8);
	h = values_hash(values, f->f_nlabels);
	mask = f->f_nslots - 1;
	for (i = h & mask; f->f_slots[i] != 0; i = (i + 1) & mask) {
		s = f->f_series[f->f_slots[i] - 1];
		if (s->s_hash == h && values_eq(s, values, f->f_nlabels))
			return s;
	}
	if (f->f_nseries >= METRICS_MAX_SERIES)
		return fam_overflow(f);
	if (f->f_nseries == f->f_seriescap) {
		f->f_seriescap = f->f_seriescap > 0 ? f->f_seriescap * 2 : 4;
		f->f_series = xreallocarray(f->f_series, f->f_seriescap,
		    sizeof(*f->f_series));
	}
	s = series_new(f, values, h);
	f->f_series[f->f_nseries++] = s;
	f->f_slots[i] = (uint32_t)f->f_nseries;
	if (f->f_nseries * 2 > f->f_nslots)
		fam_rehash(f, f->f_nslots * 2);
	return s;
}

/* Forget every series (the table keeps its size). */
static void
fam_clear(struct mfam *f)
{
	size_t	 i;

	for (i = 0; i < f->f_nseries; i++)
		series_free(f, f->f_series[i]);
	f->f_nseries = 0;
	series_free(f, f->f_overflow);
	f->f_overflow = NULL;
	if (f->f_slots != NULL)
		memset(f->f_slots, 0, f->f_nslots * sizeof(*f->f_slots));
}

static void
fam_free(struct mfam *f)
{
	size_t	 i;

	fam_clear(f);
	for (i = 0; i < f->f_nlabels; i++)
		free(f->f_labels[i]);
	free(f->f_labels);
	free(f->f_series);
	free(f->f_slots);
	free(f->f_bounds);
	free(f->f_name);
	free(f->f_help);
	free(f);
}

/* ---- public registry ----------------------------------------------- */

struct metrics *
metrics_new(void)
{
	return xcalloc(1, sizeof(struct metrics));
}

void
metrics_free(struct metrics *m)
{
	size_t	 i;

	if (m == NULL)
		return;
	for (i = 0; i < m->m_nfams; i++)
		fam_free(m->m_fams[i]);
	free(m->m_fams);
	free(m);
}

/* A family without labels shows its zero from the start. */
static int
fam_ready(struct metrics *m, struct mfam *f)
{
	if (f->f_nlabels == 0 && f->f_fn == NULL)
		(void)fam_series(f, NULL);
	return (int)m->m_nfams - 1;
}

int
metrics_counter(struct metrics *m, const char *name, const char *help,
    const char *const *label_names)
{
	return fam_ready(m, fam_add(m, name, help, MT_COUNTER, label_names));
}

int
metrics_gauge(struct metrics *m, const char *name, const char *help,
    const char *const *label_names)
{
	return fam_ready(m, fam_add(m, name, help, MT_GAUGE, label_names));
}

int
metrics_histogram(struct metrics *m, const char *name, const char *help,
    const char *const *label_names, const double *bounds, size_t nbounds)
{
	struct mfam	*f;
	size_t		 i;

	f = fam_add(m, name, help, MT_HISTOGRAM, label_names);
	for (i = 0; i < nbounds; i++)
		if (!isfinite(bounds[i]) ||
		    (i > 0 && bounds[i] <= bounds[i - 1]))
			fatalx("metrics: %s: bounds must be finite and "
			    "increasing", name);
	f->f_bounds = xcalloc(nbounds > 0 ? nbounds : 1, sizeof(double));
	if (nbounds > 0)
		memcpy(f->f_bounds, bounds, nbounds * sizeof(double));
	f->f_nbounds = nbounds;
	return fam_ready(m, f);
}

int
metrics_gauge_fn(struct metrics *m, const char *name, const char *help,
    const char *const *label_names, metrics_fn fn, void *arg)
{
	struct mfam	*f;

	if (fn == NULL)
		fatalx("metrics: %s: no callback", name);
	f = fam_add(m, name, help, MT_GAUGE, label_names);
	f->f_fn = fn;
	f->f_arg = arg;
	return fam_ready(m, f);
}

void
metrics_inc(struct metrics *m, int fam, const char *const *label_values,
    double v)
{
	struct mfam	*f = fam_get(m, fam, "inc");

	if (f->f_type == MT_HISTOGRAM)
		fatalx("metrics: %s: inc on a histogram", f->f_name);
	if (f->f_type == MT_COUNTER && !(v >= 0))
		return;		/* counters only go up; NaN too */
	fam_series(f, label_values)->s_value += v;
}

void
metrics_set(struct metrics *m, int fam, const char *const *label_values,
    double v)
{
	struct mfam	*f = fam_get(m, fam, "set");

	if (f->f_type != MT_GAUGE)
		fatalx("metrics: %s: set on a %s", f->f_name,
		    mtype_names[f->f_type]);
	fam_series(f, label_values)->s_value = v;
}

/* Index of the first bound >= x, or n. */
static size_t
bucket_of(const double *b, size_t n, double x)
{
	size_t	 lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (x <= b[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void
metrics_observe(struct metrics *m, int fam,
    const char *const *label_values, double x)
{
	struct mfam	*f = fam_get(m, fam, "observe");
	struct mseries	*s;
	size_t		 i;

	if (f->f_type != MT_HISTOGRAM)
		fatalx("metrics: %s: observe on a %s", f->f_name,
		    mtype_names[f->f_type]);
	if (isnan(x))
		return;
	s = fam_series(f, label_values);
	i = bucket_of(f->f_bounds, f->f_nbounds, x);
	if (i < f->f_nbounds)
		s->s_buckets[i]++;
	s->s_count++;
	s->s_value += x;
}

/* ---- rendering ----------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p, or 0 (NUL ends a sequence). */
static size_t
utf8_len(const unsigned char *p)
{
	uint32_t	 cp;
	size_t		 n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	if (n == 4 && (cp < 0x10000 || cp > 0x10ffff))
		return 0;
	return n;
}

/* Escape '\\' and newline (and '"' in a label value); a byte that is not
 * valid UTF-8 becomes U+FFFD, which scrapers require. */
static void
put_escaped(struct buf *out, const char *s, bool label)
{
	const unsigned char	*p = (const unsigned char *)s, *run = p;
	size_t			 n;

	while (*p != '\0') {
		n = utf8_len(p);
		if (n > 1 || (n == 1 && *p != '\\' && *p != '\n' &&
		    (!label || *p != '"'))) {
			p += n;
			continue;
		}
		buf_add(out, run, (size_t)(p - run));
		if (n == 0)
			buf_adds(out, "\xef\xbf\xbd");
		else if (*p == '\n')
			buf_adds(out, "\\n");
		else {
			buf_addc(out, '\\');
			buf_addc(out, (char)*p);
		}
		run = ++p;
	}
	buf_add(out, run, (size_t)(p - run));
}

/* Integers up to 2^53 without exponent; other values in the shortest
 * %g form that reads back to the same double (C locale). */
static const char *
fmt_num(char *dst, size_t len, double v)
{
	int	 prec;

	if (isnan(v))
		return "NaN";
	if (isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	if (v == 0)
		return "0";		/* and -0 */
	if (fabs(v) <= 0x1p53 && v == trunc(v)) {
		snprintf(dst, len, "%.0f", v);
		return dst;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(dst, len, "%.*g", prec, v);
		if (strtod(dst, NULL) == v)
			break;
	}
	return dst;
}

static void
put_labels(struct buf *out, const struct mfam *f, const struct mseries *s,
    const char *le)
{
	size_t	 i;
	bool	 any = false;

	if (s == f->f_overflow) {
		buf_adds(out, "{overflow=\"true\"");
		any = true;
	}
	for (i = 0; s->s_values != NULL && i < f->f_nlabels; i++) {
		buf_addc(out, any ? ',' : '{');
		buf_adds(out, f->f_labels[i]);
		buf_adds(out, "=\"");
		put_escaped(out, s->s_values[i], true);
		buf_addc(out, '"');
		any = true;
	}
	if (le != NULL) {
		buf_addc(out, any ? ',' : '{');
		buf_printf(out, "le=\"%s\"", le);
		any = true;
	}
	if (any)
		buf_addc(out, '}');
}

static void
put_sample(struct buf *out, const struct mfam *f, const char *suffix,
    const struct mseries *s, const char *le, double v)
{
	char	 num[40];

	buf_adds(out, f->f_name);
	buf_adds(out, suffix);
	put_labels(out, f, s, le);
	buf_addc(out, ' ');
	buf_adds(out, fmt_num(num, sizeof(num), v));
	buf_addc(out, '\n');
}

static void
series_render(struct buf *out, const struct mfam *f,
    const struct mseries *s)
{
	char		 le[40];
	uint64_t	 cum = 0;
	size_t		 i;

	if (f->f_type != MT_HISTOGRAM) {
		put_sample(out, f, "", s, NULL, s->s_value);
		return;
	}
	for (i = 0; i < f->f_nbounds; i++) {
		cum += s->s_buckets[i];
		put_sample(out, f, "_bucket", s,
		    fmt_num(le, sizeof(le), f->f_bounds[i]), (double)cum);
	}
	put_sample(out, f, "_bucket", s, "+Inf", (double)s->s_count);
	put_sample(out, f, "_sum", s, NULL, s->s_value);
	put_sample(out, f, "_count", s, NULL, (double)s->s_count);
}

static void
fam_render(struct buf *out, const struct mfam *f)
{
	size_t	 i;

	if (f->f_help[0] != '\0') {
		buf_printf(out, "# HELP %s ", f->f_name);
		put_escaped(out, f->f_help, false);
		buf_addc(out, '\n');
	}
	buf_printf(out, "# TYPE %s %s\n", f->f_name, mtype_names[f->f_type]);
	for (i = 0; i < f->f_nseries; i++)
		series_render(out, f, f->f_series[i]);
	if (f->f_overflow != NULL)
		series_render(out, f, f->f_overflow);
}

void
metrics_render(struct metrics *m, struct buf *out)
{
	size_t	 i;

	/* Empty them all first, so that one callback may set several. */
	for (i = 0; i < m->m_nfams; i++)
		if (m->m_fams[i]->f_fn != NULL)
			fam_clear(m->m_fams[i]);
	for (i = 0; i < m->m_nfams; i++)
		if (m->m_fams[i]->f_fn != NULL)
			m->m_fams[i]->f_fn(m, (int)i, m->m_fams[i]->f_arg);
	buf_reserve(out, 4096);
	for (i = 0; i < m->m_nfams; i++)
		fam_render(out, m->m_fams[i]);
}

/* ---- the gateway's metric set -------------------------------------- */

struct gw_metrics {
	struct metrics		*gm_reg;
	gw_metrics_sample_fn	 gm_sample;
	void			*gm_arg;
	int			 gm_requests;
	int			 gm_duration;
	int			 gm_ttfb;
	int			 gm_in_flight;
	int			 gm_queue;
	int			 gm_workers;
	int			 gm_restarts;
	int			 gm_cancels;
	int			 gm_backend_errors;
	int			 gm_stream_bytes;
	int			 gm_gate_active;
	int			 gm_gate_waiting;
	int			 gm_slots_used;
	int			 gm_slots_waiting;
	int			 gm_cache_hits;
	int			 gm_cache_misses;
	int			 gm_cache_entries;
	int			 gm_store_errors;
	int			 gm_store_failing;
};

/* 5 ms to 10 min: cached answers up to long non-streamed generations. */
static const double gw_latency_bounds[] = { 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600 };
#define GW_NBOUNDS (sizeof(gw_latency_bounds) / sizeof(gw_latency_bounds[0]))

static const char *const gw_causes[GW_RESTART_NCAUSES] = { "crash",
    "hang", "recycle", "cancel_kill", "idle", "config" };
static const char *const gw_sources[GW_CANCEL_NSOURCES] = { "disconnect",
    "delete", "deadline", "idempotency" };

static const char *const gw_l_route[] = { "route", NULL };
static const char *const gw_l_route_status[] = { "route", "status", NULL };
static const char *const gw_l_state[] = { "state", NULL };
static const char *const gw_l_cause[] = { "cause", NULL };
static const char *const gw_l_source[] = { "source", NULL };
static const char *const gw_l_endpoint[] = { "endpoint", NULL };

static void
gw_sample_cb(struct metrics *m, int fam, void *arg)
{
	struct gw_metrics	*gm = arg;

	if (gm->gm_sample != NULL)
		gm->gm_sample(gm, gm->gm_arg);
}

static void
gw_declare_http(struct gw_metrics *gm)
{
	struct metrics	*m = gm->gm_reg;

	gm->gm_requests = metrics_counter(m, "sluice_http_requests_total",
	    "HTTP requests answered, by route and status code.",
	    gw_l_route_status);
	gm->gm_duration = metrics_histogram(m,
	    "sluice_http_request_duration_seconds",
	    "Time from a request's arrival to the end of its answer.",
	    gw_l_route, gw_latency_bounds, GW_NBOUNDS);
	gm->gm_ttfb = metrics_histogram(m, "sluice_time_to_first_byte_seconds",
	    "Time from a request's arrival to the first byte of its answer.",
	    gw_l_route, gw_latency_bounds, GW_NBOUNDS);
	gm->gm_in_flight = metrics_gauge(m, "sluice_requests_in_flight",
	    "Requests received and not yet answered.", NULL);
	gm->gm_queue = metrics_gauge(m, "sluice_queue_length",
	    "Requests waiting for a free worker.", NULL);
}

static void
gw_declare_pool(struct gw_metrics *gm)
{
	struct metrics	*m = gm->gm_reg;
	size_t		 i;

	gm->gm_workers = metrics_gauge_fn(m, "sluice_workers",
	    "Worker slots by supervisor state.", gw_l_state, gw_sample_cb, gm);
	gm->gm_restarts = metrics_counter(m, "sluice_worker_restarts_total",
	    "Worker processes replaced, by cause.", gw_l_cause);
	gm->gm_cancels = metrics_counter(m, "sluice_cancellations_total",
	    "Requests cancelled, by source.", gw_l_source);
	gm->gm_backend_errors = metrics_counter(m,
	    "sluice_backend_errors_total",
	    "Failed calls to LLM backends, by endpoint.", gw_l_endpoint);
	gm->gm_stream_bytes = metrics_counter(m, "sluice_stream_bytes_total",
	    "Bytes of streamed answers sent to clients.", NULL);
	gm->gm_gate_active = metrics_gauge(m, "sluice_concurrency_active",
	    "Requests holding a turn under --concurrency.", NULL);
	gm->gm_gate_waiting = metrics_gauge(m, "sluice_concurrency_waiting",
	    "Requests waiting for a turn under --concurrency.", NULL);
	gm->gm_slots_used = metrics_gauge(m, "sluice_endpoint_slots_in_use",
	    "Backend calls holding one of an endpoint's concurrency slots.",
	    gw_l_endpoint);
	gm->gm_slots_waiting = metrics_gauge(m, "sluice_endpoint_slots_waiting",
	    "Backend calls waiting for a slot on an endpoint.", gw_l_endpoint);
	for (i = 0; i < GW_RESTART_NCAUSES; i++)
		metrics_inc(m, gm->gm_restarts, &gw_causes[i], 0);
	for (i = 0; i < GW_CANCEL_NSOURCES; i++)
		metrics_inc(m, gm->gm_cancels, &gw_sources[i], 0);
}

static void
gw_declare_cache(struct gw_metrics *gm)
{
	struct metrics	*m = gm->gm_reg;

	gm->gm_cache_hits = metrics_counter(m, "sluice_cache_hits_total",
	    "Response-cache lookups answered from the cache.", NULL);
	gm->gm_cache_misses = metrics_counter(m, "sluice_cache_misses_total",
	    "Response-cache lookups not found in the cache.", NULL);
	gm->gm_cache_entries = metrics_gauge(m, "sluice_cache_entries",
	    "Entries in the response cache, as last reported by a worker.",
	    NULL);
	gm->gm_store_errors = metrics_counter(m, "sluice_store_errors_total",
	    "Failed calls to the shared database (state store).", NULL);
	gm->gm_store_failing = metrics_gauge(m, "sluice_store_failing",
	    "1 while the shared database's last reported call failed.",
	    NULL);
}

struct gw_metrics *
gw_metrics_new(gw_metrics_sample_fn sample, void *arg)
{
	struct gw_metrics	*gm;

	gm = xcalloc(1, sizeof(*gm));
	gm->gm_reg = metrics_new();
	gm->gm_sample = sample;
	gm->gm_arg = arg;
	gw_declare_http(gm);
	gw_declare_pool(gm);
	gw_declare_cache(gm);
	return gm;
}

void
gw_metrics_free(struct gw_metrics *gm)
{
	if (gm == NULL)
		return;
	metrics_free(gm->gm_reg);
	free(gm);
}

void
gw_metrics_render(struct gw_metrics *gm, struct buf *out)
{
	metrics_render(gm->gm_reg, out);
}

void
gw_metrics_request(struct gw_metrics *gm, const char *route, int status,
    double seconds, double ttfb_seconds)
{
	char		 st[16];
	const char	*rs[2];

	snprintf(st, sizeof(st), "%d", status);
	rs[0] = route;
	rs[1] = st;
	metrics_inc(gm->gm_reg, gm->gm_requests, rs, 1);
	metrics_observe(gm->gm_reg, gm->gm_duration, &route,
	    seconds >= 0 ? seconds : 0);
	if (ttfb_seconds >= 0)
		metrics_observe(gm->gm_reg, gm->gm_ttfb, &route, ttfb_seconds);
}

void
gw_metrics_restart(struct gw_metrics *gm, enum gw_restart_cause c)
{
	if ((unsigned)c >= GW_RESTART_NCAUSES)
		fatalx("gw_metrics_restart: cause %d", (int)c);
	metrics_inc(gm->gm_reg, gm->gm_restarts, &gw_causes[c], 1);
}

void
gw_metrics_cancel(struct gw_metrics *gm, enum gw_cancel_source s)
{
	if ((unsigned)s >= GW_CANCEL_NSOURCES)
		fatalx("gw_metrics_cancel: source %d", (int)s);
	metrics_inc(gm->gm_reg, gm->gm_cancels, &gw_sources[s], 1);
}

void
gw_metrics_backend_error(struct gw_metrics *gm, const char *endpoint)
{
	metrics_inc(gm->gm_reg, gm->gm_backend_errors, &endpoint, 1);
}

void
gw_metrics_stream_bytes(struct gw_metrics *gm, size_t n)
{
	metrics_inc(gm->gm_reg, gm->gm_stream_bytes, NULL, (double)n);
}

void
gw_metrics_in_flight(struct gw_metrics *gm, unsigned n)
{
	metrics_set(gm->gm_reg, gm->gm_in_flight, NULL, n);
}

void
gw_metrics_queue(struct gw_metrics *gm, unsigned n)
{
	metrics_set(gm->gm_reg, gm->gm_queue, NULL, n);
}

void
gw_metrics_workers(struct gw_metrics *gm, const char *state, unsigned n)
{
	metrics_set(gm->gm_reg, gm->gm_workers, &state, n);
}

void
gw_metrics_gate(struct gw_metrics *gm, unsigned active, unsigned waiting)
{
	metrics_set(gm->gm_reg, gm->gm_gate_active, NULL, active);
	metrics_set(gm->gm_reg, gm->gm_gate_waiting, NULL, waiting);
}

void
gw_metrics_slots(struct gw_metrics *gm, const char *endpoint, unsigned used,
    unsigned waiting)
{
	metrics_set(gm->gm_reg, gm->gm_slots_used, &endpoint, used);
	metrics_set(gm->gm_reg, gm->gm_slots_waiting, &endpoint, waiting);
}

void
gw_metrics_cache_lookup(struct gw_metrics *gm, bool hit, int64_t entries)
{
	metrics_inc(gm->gm_reg, hit ? gm->gm_cache_hits : gm->gm_cache_misses,
	    NULL, 1);
	if (entries >= 0)
		metrics_set(gm->gm_reg, gm->gm_cache_entries, NULL,
		    (double)entries);
}

void
gw_metrics_store(struct gw_metrics *gm, uint64_t errors, bool failing)
{
	if (errors > 0)
		metrics_inc(gm->gm_reg, gm->gm_store_errors, NULL, errors);
	metrics_set(gm->gm_reg, gm->gm_store_failing, NULL, failing ? 1 : 0);
}

void
gw_metrics_cache_entries(struct gw_metrics *gm, uint64_t n)
{
	metrics_set(gm->gm_reg, gm->gm_cache_entries, NULL, (double)n);
}
