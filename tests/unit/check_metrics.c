/* check_metrics.c - the Prometheus registry and the gateway's metric set. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "../../common/buf.h"
#include "../../gateway/metrics.h"
#include "../testmain.h"

#define LN(...)	((const char *const[]){ __VA_ARGS__, NULL })
#define LV(...)	((const char *const[]){ __VA_ARGS__ })

/* A sample line: name, optional {l="v",...}, one space, a number. */
static bool
sample_ok(const char *p, const char *end)
{
	char	*num_end;

	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	    *p == '_' || *p == ':'))
		return false;
	while (p < end && *p != '{' && *p != ' ')
		p++;
	if (p < end && *p == '{') {
		for (p++; p < end && *p != '}'; p++) {
			while (p < end && *p != '=')
				p++;
			if (p + 1 >= end || p[1] != '"')
				return false;
			for (p += 2; p < end && *p != '"'; p++)
				if (*p == '\\' && ++p < end &&
				    strchr("\\\"n", *p) == NULL)
					return false;
			if (p + 1 < end && p[1] == ',')
				p++;
		}
		p++;
	}
	if (p >= end || *p++ != ' ')
		return false;
	if ((size_t)(end - p) == 3 && strncmp(p, "NaN", 3) == 0)
		return true;
	if ((size_t)(end - p) == 4 && (strncmp(p, "+Inf", 4) == 0 ||
	    strncmp(p, "-Inf", 4) == 0))
		return true;
	(void)strtod(p, &num_end);
	return num_end == end && end > p;
}

/* Render m and check that every line is a comment or a valid sample. */
static char *
render(struct metrics *m)
{
	struct buf	 b = BUF_INIT;
	const char	*p, *nl;

	buf_adds(&b, "");
	metrics_render(m, &b);
	for (p = b.b_data; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		ck_assert_msg(nl != NULL, "unterminated line: %s", p);
		if (strncmp(p, "# HELP ", 7) == 0 ||
		    strncmp(p, "# TYPE ", 7) == 0)
			continue;
		ck_assert_msg(sample_ok(p, nl), "bad line: %.*s",
		    (int)(nl - p), p);
	}
	return buf_take(&b);
}

static size_t
count(const char *hay, const char *needle)
{
	size_t	 n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

START_TEST(counter_text)
{
	struct metrics	*m = metrics_new();
	char		*t;
	int		 a, b;

	a = metrics_counter(m, "t_plain_total", "A plain counter.", NULL);
	b = metrics_counter(m, "t_req_total", "Requests.",
	    LN("route", "status"));
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
	t = render(m);
	ck_assert_str_eq(t, "# HELP t_plain_total A plain counter.\n"
	    "# TYPE t_plain_total counter\n"
	    "t_plain_total 0\n"
	    "# HELP t_req_total Requests.\n"
	    "# TYPE t_req_total counter\n");
	free(t);
	metrics_inc(m, b, LV("chat", "200"), 1);
	metrics_inc(m, b, LV("models", "404"), 2);
	metrics_inc(m, b, LV("chat", "200"), 1.5);
	metrics_inc(m, b, LV("chat", "200"), -5);	/* ignored */
	metrics_inc(m, b, LV("chat", "200"), NAN);	/* ignored */
	metrics_inc(m, b, LV("chat", NULL), 1);		/* NULL is "" */
	metrics_inc(m, a, NULL, 3);
	t = render(m);
	ck_assert_str_eq(t, "# HELP t_plain_total A plain counter.\n"
	    "# TYPE t_plain_total counter\n"
	    "t_plain_total 3\n"
	    "# HELP t_req_total Requests.\n"
	    "# TYPE t_req_total counter\n"
	    "t_req_total{route=\"chat\",status=\"200\"} 2.5\n"
	    "t_req_total{route=\"models\",status=\"404\"} 2\n"
	    "t_req_total{route=\"chat\",status=\"\"} 1\n");
	free(t);
	metrics_free(m);
}
END_TEST

START_TEST(gauge_text_and_numbers)
{
	static const struct { const char *k; double v; } c[] = {
		{ "int", 1234567890123.0 }, { "neg", -2.5 }, { "tiny", 1e-05 },
		{ "sum", 0.1 + 0.2 }, { "third", 1.0 / 3 }, { "big", 1e20 },
		{ "p53", 9007199254740992.0 }, { "nan", NAN },
		{ "inf", INFINITY }, { "ninf", -INFINITY }, { "nzero", -0.0 },
	};
	struct metrics	*m = metrics_new();
	char		*t;
	size_t		 i;
	int		 g, h;

	g = metrics_gauge(m, "t_g", NULL, NULL);
	h = metrics_gauge(m, "t_v", "Values.", LN("k"));
	metrics_set(m, g, NULL, 5);
	metrics_inc(m, g, NULL, -7);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		metrics_set(m, h, &c[i].k, c[i].v);
	t = render(m);
	ck_assert_str_eq(t, "# TYPE t_g gauge\n"
	    "t_g -2\n"
	    "# HELP t_v Values.\n"
	    "# TYPE t_v gauge\n"
	    "t_v{k=\"int\"} 1234567890123\n"
	    "t_v{k=\"neg\"} -2.5\n"
	    "t_v{k=\"tiny\"} 1e-05\n"
	    "t_v{k=\"sum\"} 0.30000000000000004\n"
	    "t_v{k=\"third\"} 0.3333333333333333\n"
	    "t_v{k=\"big\"} 1e+20\n"
	    "t_v{k=\"p53\"} 9007199254740992\n"
	    "t_v{k=\"nan\"} NaN\n"
	    "t_v{k=\"inf\"} +Inf\n"
	    "t_v{k=\"ninf\"} -Inf\n"
	    "t_v{k=\"nzero\"} 0\n");
	free(t);
	metrics_free(m);
}
END_TEST

START_TEST(histogram_text)
{
	static const double	 bounds[] = { 0.005, 0.5, 1 };
	static const double	 xs[] = { 0.00390625, 0.25, 0.5, 1, 2, 8 };
	struct metrics		*m = metrics_new();
	char			*t;
	size_t			 i;
	int			 h;

	(void)metrics_histogram(m, "t_h0", "Empty.", NULL, bounds + 2, 1);
	h = metrics_histogram(m, "t_lat_seconds", "Latency.", LN("route"),
	    bounds, 3);
	for (i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		metrics_observe(m, h, LV("a"), xs[i]);
	metrics_observe(m, h, LV("a"), NAN);		/* ignored */
	metrics_observe(m, h, LV("b"), 0.005);	/* le is inclusive */
	t = render(m);
	ck_assert_str_eq(t, "# HELP t_h0 Empty.\n"
	    "# TYPE t_h0 histogram\n"
	    "t_h0_bucket{le=\"1\"} 0\n"
	    "t_h0_bucket{le=\"+Inf\"} 0\n"
	    "t_h0_sum 0\n"
	    "t_h0_count 0\n"
	    "# HELP t_lat_seconds Latency.\n"
	    "# TYPE t_lat_seconds histogram\n"
	    "t_lat_seconds_bucket{route=\"a\",le=\"0.005\"} 1\n"
	    "t_lat_seconds_bucket{route=\"a\",le=\"0.5\"} 3\n"
	    "t_lat_seconds_bucket{route=\"a\",le=\"1\"} 4\n"
	    "t_lat_seconds_bucket{route=\"a\",le=\"+Inf\"} 6\n"
	    "t_lat_seconds_sum{route=\"a\"} 11.75390625\n"
	    "t_lat_seconds_count{route=\"a\"} 6\n"
	    "t_lat_seconds_bucket{route=\"b\",le=\"0.005\"} 1\n"
	    "t_lat_seconds_bucket{route=\"b\",le=\"0.5\"} 1\n"
	    "t_lat_seconds_bucket{route=\"b\",le=\"1\"} 1\n"
	    "t_lat_seconds_bucket{route=\"b\",le=\"+Inf\"} 1\n"
	    "t_lat_seconds_sum{route=\"b\"} 0.005\n"
	    "t_lat_seconds_count{route=\"b\"} 1\n");
	free(t);
	metrics_free(m);
}
END_TEST

START_TEST(escaping)
{
	struct metrics	*m = metrics_new();
	char		*t;
	int		 c;

	c = metrics_counter(m, "t_esc_total",
	    "Back\\slash, \"quotes\"\nand a newline.", LN("v"));
	metrics_inc(m, c, LV("a\\b\"c\nd"), 1);
	metrics_inc(m, c, LV("caf\xc3\xa9"), 1);	/* valid UTF-8 */
	metrics_inc(m, c, LV("x\xffy"), 1);
	metrics_inc(m, c, LV("\xc0\xaf/\xed\xa0\x80/\xe2\x82"), 1);
	t = render(m);
	ck_assert_str_eq(t, "# HELP t_esc_total Back\\\\slash, \"quotes\"\\n"
	    "and a newline.\n"
	    "# TYPE t_esc_total counter\n"
	    "t_esc_total{v=\"a\\\\b\\\"c\\nd\"} 1\n"
	    "t_esc_total{v=\"caf\xc3\xa9\"} 1\n"
	    "t_esc_total{v=\"x\xef\xbf\xbdy\"} 1\n"
	    "t_esc_total{v=\"\xef\xbf\xbd\xef\xbf\xbd/"
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd/"
	    "\xef\xbf\xbd\xef\xbf\xbd\"} 1\n");
	free(t);
	metrics_free(m);
}
END_TEST

START_TEST(order_is_declaration_then_first_seen)
{
	struct metrics	*m = metrics_new();
	char		*t, v[8];
	int		 z, a;

	z = metrics_counter(m, "z_total", NULL, LN("k"));
	a = metrics_gauge(m, "a", NULL, LN("k"));
	metrics_inc(m, a, LV("late"), 1);
	snprintf(v, sizeof(v), "b");
	metrics_inc(m, z, LV(v), 1);
	snprintf(v, sizeof(v), "a");	/* the first value was copied */
	metrics_inc(m, z, LV(v), 1);
	metrics_inc(m, z, LV("c"), 1);
	metrics_inc(m, z, LV("a"), 1);
	metrics_inc(m, z, LV("b"), 1);
	metrics_set(m, a, LV("early"), 2);
	t = render(m);
	ck_assert_str_eq(t, "# TYPE z_total counter\n"
	    "z_total{k=\"b\"} 2\n"
	    "z_total{k=\"a\"} 2\n"
	    "z_total{k=\"c\"} 1\n"
	    "# TYPE a gauge\n"
	    "a{k=\"late\"} 1\n"
	    "a{k=\"early\"} 2\n");
	free(t);
	metrics_free(m);
}
END_TEST

/* Enough series to grow the table several times; each is found again. */
START_TEST(many_series_found_again)
{
	struct metrics	*m = metrics_new();
	char		*t, v[16], line[64];
	int		 c, i, round;

	c = metrics_counter(m, "t_many_total", NULL, LN("a", "b"));
	for (round = 0; round < 2; round++)
		for (i = 0; i < 900; i++) {
			snprintf(v, sizeof(v), "%d", i);
			metrics_inc(m, c, LV(v, i % 2 ? "odd" : "even"), i);
		}
	t = render(m);
	ck_assert_uint_eq(count(t, "t_many_total{"), 900);
	for (i = 0; i < 900; i += 97) {
		snprintf(line, sizeof(line), "t_many_total{a=\"%d\",b=\"%s\"} "
		    "%d\n", i, i % 2 ? "odd" : "even", 2 * i);
		ck_assert_msg(strstr(t, line) != NULL, "missing %s", line);
	}
	ck_assert_ptr_null(strstr(t, "overflow"));
	free(t);
	metrics_free(m);
}
END_TEST

START_TEST(cap_folds_into_overflow)
{
	static const double	 b[] = { 1 };
	struct metrics		*m = metrics_new();
	char			*t, v[16];
	int			 c, h, i;

	c = metrics_counter(m, "t_cap_total", NULL, LN("id"));
	h = metrics_histogram(m, "t_hcap", NULL, LN("id"), b, 1);
	for (i = 0; i < METRICS_MAX_SERIES + 50; i++) {
		snprintf(v, sizeof(v), "%d", i);
		metrics_inc(m, c, LV(v), 1);
		metrics_observe(m, h, LV(v), i % 2 ? 0.5 : 2);
	}
	metrics_inc(m, c, LV("5"), 1);	/* known: still counted */
	metrics_inc(m, c, LV("new"), 1);	/* one more into overflow */
	t = render(m);
	ck_assert_uint_eq(count(t, "t_cap_total{id="), METRICS_MAX_SERIES);
	ck_assert_ptr_nonnull(strstr(t, "t_cap_total{id=\"5\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(t, "t_cap_total{id=\"999\"} 1\n"));
	ck_assert_ptr_null(strstr(t, "id=\"1000\""));
	ck_assert_ptr_nonnull(strstr(t,
	    "t_cap_total{overflow=\"true\"} 51\n# TYPE t_hcap histogram\n"));
	ck_assert_uint_eq(count(t, "t_hcap_count{id="), METRICS_MAX_SERIES);
	ck_assert_ptr_nonnull(strstr(t,
	    "t_hcap_bucket{overflow=\"true\",le=\"1\"} 25\n"
	    "t_hcap_bucket{overflow=\"true\",le=\"+Inf\"} 50\n"
	    "t_hcap_sum{overflow=\"true\"} 62.5\n"
	    "t_hcap_count{overflow=\"true\"} 50\n"));
	free(t);
	metrics_free(m);
}
END_TEST

struct pool_view {
	int	 pv_calls;
	int	 pv_busy;
	int	 pv_other;	/* a plain gauge set from the callback */
	int	 pv_queue;
};

static void
pool_cb(struct metrics *m, int fam, void *arg)
{
	struct pool_view	*pv = arg;

	pv->pv_calls++;
	metrics_set(m, fam, LV("idle"), 2);
	if (pv->pv_busy > 0)
		metrics_set(m, fam, LV("busy"), pv->pv_busy);
	metrics_set(m, pv->pv_other, NULL, pv->pv_calls * 10);
}

static void
queue_cb(struct metrics *m, int fam, void *arg)
{
	metrics_set(m, fam, NULL, *(int *)arg);
}

START_TEST(gauge_fn_at_scrape_time)
{
	struct metrics		*m = metrics_new();
	struct pool_view	 pv = { 0, 3, -1, 7 };
	char			*t;

	(void)metrics_gauge_fn(m, "t_workers", "By state.", LN("state"),
	    pool_cb, &pv);
	(void)metrics_gauge_fn(m, "t_queue", NULL, NULL, queue_cb,
	    &pv.pv_queue);
	pv.pv_other = metrics_gauge(m, "t_other", NULL, NULL);
	ck_assert_int_eq(pv.pv_calls, 0);
	t = render(m);
	ck_assert_int_eq(pv.pv_calls, 1);
	ck_assert_str_eq(t, "# HELP t_workers By state.\n"
	    "# TYPE t_workers gauge\n"
	    "t_workers{state=\"idle\"} 2\n"
	    "t_workers{state=\"busy\"} 3\n"
	    "# TYPE t_queue gauge\n"
	    "t_queue 7\n"
	    "# TYPE t_other gauge\n"
	    "t_other 10\n");
	free(t);
	pv.pv_busy = 0;		/* a state that went away disappears */
	pv.pv_queue = 0;
	t = render(m);
	ck_assert_int_eq(pv.pv_calls, 2);
	ck_assert_str_eq(t, "# HELP t_workers By state.\n"
	    "# TYPE t_workers gauge\n"
	    "t_workers{state=\"idle\"} 2\n"
	    "# TYPE t_queue gauge\n"
	    "t_queue 0\n"
	    "# TYPE t_other gauge\n"
	    "t_other 20\n");
	free(t);
	metrics_free(m);
}
END_TEST

/* A million updates on a few series that were seen after 995 others (the
 * worst place for a scan): hashed lookups keep this far under a second
 * even with sanitizers; the timeout only catches a blow-up. */
START_TEST(million_updates)
{
	static const char *const routes[] = { "chat", "completions",
	    "generate", "tags", "models" };
	static const double	 b[] = { 0.01, 0.1, 1, 10 };
	struct metrics		*m = metrics_new();
	char			*t, line[96];
	int			 c, h, i;

	c = metrics_counter(m, "t_hot_total", NULL, LN("route", "status"));
	h = metrics_histogram(m, "t_hot_seconds", NULL, LN("route"), b, 4);
	for (i = 0; i < METRICS_MAX_SERIES - 5; i++) {
		snprintf(line, sizeof(line), "cold%d", i);
		metrics_inc(m, c, LV(line, "200"), 1);
	}
	for (i = 0; i < 1000000; i++) {
		metrics_inc(m, c, LV(routes[i % 5], "200"), 1);
		if (i % 10 == 0)
			metrics_observe(m, h, &routes[i / 10 % 5], 0.05);
	}
	t = render(m);
	for (i = 0; i < 5; i++) {
		snprintf(line, sizeof(line), "t_hot_total{route=\"%s\","
		    "status=\"200\"} 200000\n", routes[i]);
		ck_assert_msg(strstr(t, line) != NULL, "missing %s", line);
		snprintf(line, sizeof(line), "t_hot_seconds_bucket{route="
		    "\"%s\",le=\"0.1\"} 20000\n", routes[i]);
		ck_assert_msg(strstr(t, line) != NULL, "missing %s", line);
	}
	ck_assert_ptr_null(strstr(t, "overflow"));
	free(t);
	metrics_free(m);
}
END_TEST

struct gw_view {
	unsigned	 gv_busy;
	unsigned	 gv_calls;
};

static void
gw_sample(struct gw_metrics *gm, void *arg)
{
	struct gw_view	*gv = arg;

	gv->gv_calls++;
	gw_metrics_workers(gm, "idle", 2);
	if (gv->gv_busy > 0)
		gw_metrics_workers(gm, "busy", gv->gv_busy);
	gw_metrics_queue(gm, 3);
	gw_metrics_in_flight(gm, 1 + gv->gv_busy);
}

static char *
gw_render(struct gw_metrics *gm)
{
	struct buf	 b = BUF_INIT;

	buf_adds(&b, "");
	gw_metrics_render(gm, &b);
	return buf_take(&b);
}

static void
gw_exercise(struct gw_metrics *gm)
{
	gw_metrics_request(gm, "chat_completions", 200, 1.5, 0.2);
	gw_metrics_request(gm, "chat_completions", 499, 0.003, -1);
	gw_metrics_request(gm, "models", 200, -1, 0.001);
	gw_metrics_restart(gm, GW_RESTART_CRASH);
	gw_metrics_cancel(gm, GW_CANCEL_DISCONNECT);
	gw_metrics_cancel(gm, GW_CANCEL_DISCONNECT);
	gw_metrics_backend_error(gm, "local");
	gw_metrics_stream_bytes(gm, 100);
	gw_metrics_stream_bytes(gm, 28);
}

START_TEST(gw_family_order)
{
	struct gw_view		 gv = { 1, 0 };
	struct gw_metrics	*gm = gw_metrics_new(gw_sample, &gv);
	struct buf		 types = BUF_INIT;
	char			*t;
	const char		*p;

	gw_exercise(gm);
	t = gw_render(gm);
	ck_assert_uint_eq(gv.gv_calls, 1);
	buf_adds(&types, "");
	for (p = t; (p = strstr(p, "# TYPE ")) != NULL; p++)
		buf_add(&types, p + 7, strcspn(p + 7, "\n") + 1);
	ck_assert_str_eq(types.b_data,
	    "sluice_http_requests_total counter\n"
	    "sluice_http_request_duration_seconds histogram\n"
	    "sluice_time_to_first_byte_seconds histogram\n"
	    "sluice_requests_in_flight gauge\n"
	    "sluice_queue_length gauge\n"
	    "sluice_workers gauge\n"
	    "sluice_worker_restarts_total counter\n"
	    "sluice_cancellations_total counter\n"
	    "sluice_backend_errors_total counter\n"
	    "sluice_stream_bytes_total counter\n"
	    "sluice_concurrency_active gauge\n"
	    "sluice_concurrency_waiting gauge\n"
	    "sluice_endpoint_slots_in_use gauge\n"
	    "sluice_endpoint_slots_waiting gauge\n"
	    "sluice_cache_hits_total counter\n"
	    "sluice_cache_misses_total counter\n"
	    "sluice_cache_entries gauge\n"
	    "sluice_store_errors_total counter\n"
	    "sluice_store_failing gauge\n");
	ck_assert_uint_eq(count(t, "# HELP sluice_"), 19);
	buf_free(&types);
	free(t);
	gw_metrics_free(gm);
}
END_TEST

START_TEST(gw_values)
{
	static const char *const want[] = {
	    "sluice_http_requests_total{route=\"chat_completions\","
	    "status=\"200\"} 1\n",
	    "sluice_http_requests_total{route=\"chat_completions\","
	    "status=\"499\"} 1\n",
	    "sluice_http_request_duration_seconds_bucket{route="
	    "\"chat_completions\",le=\"0.005\"} 1\n",
	    "sluice_http_request_duration_seconds_bucket{route="
	    "\"chat_completions\",le=\"1\"} 1\n",
	    "sluice_http_request_duration_seconds_bucket{route="
	    "\"chat_completions\",le=\"2.5\"} 2\n",
	    "sluice_http_request_duration_seconds_sum{route="
	    "\"chat_completions\"} 1.503\n",
	    "sluice_http_request_duration_seconds_sum{route=\"models\"} 0\n",
	    "sluice_time_to_first_byte_seconds_count{route="
	    "\"chat_completions\"} 1\n",
	    "sluice_requests_in_flight 2\n", "sluice_queue_length 3\n",
	    "sluice_workers{state=\"idle\"} 2\n",
	    "sluice_workers{state=\"busy\"} 1\n",
	    "sluice_worker_restarts_total{cause=\"crash\"} 1\n",
	    "sluice_worker_restarts_total{cause=\"cancel_kill\"} 0\n",
	    "sluice_worker_restarts_total{cause=\"config\"} 0\n",
	    "sluice_cancellations_total{source=\"disconnect\"} 2\n",
	    "sluice_cancellations_total{source=\"idempotency\"} 0\n",
	    "sluice_backend_errors_total{endpoint=\"local\"} 1\n",
	    "sluice_stream_bytes_total 128\n",
	};
	struct gw_view		 gv = { 1, 0 };
	struct gw_metrics	*gm = gw_metrics_new(gw_sample, &gv);
	char			*t;
	size_t			 i;

	gw_exercise(gm);
	t = gw_render(gm);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(t, want[i]) != NULL, "missing %s",
		    want[i]);
	ck_assert_ptr_null(strstr(t, "status=\"499\",le"));
	ck_assert_ptr_null(strstr(t, "first_byte_seconds_count{route="
	    "\"chat_completions\"} 2"));
	free(t);
	gv.gv_busy = 0;
	t = gw_render(gm);
	ck_assert_ptr_null(strstr(t, "state=\"busy\""));
	ck_assert_ptr_nonnull(strstr(t, "sluice_requests_in_flight 1\n"));
	free(t);
	gw_metrics_free(gm);
}
END_TEST

/* Every lookup counts as a hit or a miss; the gauge keeps the last
 * known size (a report of -1 leaves it), and a clear sets it. */
START_TEST(gw_cache_values)
{
	struct gw_metrics	*gm = gw_metrics_new(NULL, NULL);
	char			*t;

	t = gw_render(gm);
	ck_assert_ptr_nonnull(strstr(t, "# HELP sluice_cache_hits_total "
	    "Response-cache lookups answered from the cache.\n"
	    "# TYPE sluice_cache_hits_total counter\n"
	    "sluice_cache_hits_total 0\n"
	    "# HELP sluice_cache_misses_total "));
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_misses_total 0\n"));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE sluice_cache_entries gauge\n"
	    "sluice_cache_entries 0\n"));
	free(t);
	gw_metrics_cache_lookup(gm, false, 1);
	gw_metrics_cache_lookup(gm, true, 7);
	gw_metrics_cache_lookup(gm, true, -1);
	gw_metrics_cache_lookup(gm, false, -1);
	gw_metrics_cache_lookup(gm, true, -1);
	t = gw_render(gm);
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_hits_total 3\n"));
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_misses_total 2\n"));
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_entries 7\n"));
	free(t);
	gw_metrics_cache_lookup(gm, false, 0);
	t = gw_render(gm);
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_entries 0\n"));
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_misses_total 3\n"));
	free(t);
	gw_metrics_cache_lookup(gm, true, 1234567890123);
	t = gw_render(gm);
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_entries 1234567890123\n"));
	free(t);
	gw_metrics_cache_entries(gm, 0);
	t = gw_render(gm);
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_entries 0\n"));
	ck_assert_ptr_nonnull(strstr(t, "sluice_cache_hits_total 4\n"));
	free(t);
	gw_metrics_free(gm);
}
END_TEST

/* The full text of one latency histogram: 5 ms to 10 min, cumulative. */
#define B(le, n) "sluice_time_to_first_byte_seconds_bucket{route=\"chat\"," \
	    "le=\"" le "\"} " #n "\n"
static const char ttfb_text[] =
    "# TYPE sluice_time_to_first_byte_seconds histogram\n"
    B("0.005", 0) B("0.01", 0) B("0.025", 0) B("0.05", 0) B("0.1", 0)
    B("0.25", 1) B("0.5", 1) B("1", 1) B("2.5", 1) B("5", 1) B("10", 1)
    B("30", 1) B("60", 1) B("120", 1) B("300", 1) B("600", 1) B("+Inf", 1)
    "sluice_time_to_first_byte_seconds_sum{route=\"chat\"} 0.2\n"
    "sluice_time_to_first_byte_seconds_count{route=\"chat\"} 1\n";
#undef B

START_TEST(gw_latency_buckets)
{
	struct gw_metrics	*gm = gw_metrics_new(NULL, NULL);
	char			*t;
	const char		*from, *to;

	gw_metrics_request(gm, "chat", 200, 700, 0.2);
	t = gw_render(gm);
	from = strstr(t, "# HELP sluice_time_to_first_byte_seconds ");
	to = strstr(t, "# HELP sluice_requests_in_flight ");
	ck_assert(from != NULL && to != NULL && from < to);
	from = strstr(from, "# TYPE");
	t[to - t] = '\0';
	ck_assert_str_eq(from, ttfb_text);
	free(t);
	t = gw_render(gm);
	ck_assert_ptr_nonnull(strstr(t, "sluice_http_request_duration_seconds"
	    "_bucket{route=\"chat\",le=\"600\"} 0\n"
	    "sluice_http_request_duration_seconds_bucket{route=\"chat\","
	    "le=\"+Inf\"} 1\n"));
	ck_assert_ptr_null(strstr(t, "sluice_workers{"));
	free(t);
	gw_metrics_free(gm);
}
END_TEST

/* Programmer errors stop the process with a message (EX_SOFTWARE). */
START_TEST(bad_declarations_are_fatal)
{
	static const double	 up[] = { 1, 2 }, down[] = { 2, 1 };
	static const double	 inf[] = { 1, INFINITY };
	static const char *const nine[] = { "a", "b", "c", "d", "e", "f",
	    "g", "h", "i", NULL };
	struct metrics		*m = metrics_new();

	(void)metrics_counter(m, "ok_total", NULL, NULL);
	if (_i == 0)
		(void)metrics_counter(m, "1abc", NULL, NULL);
	else if (_i == 1)
		(void)metrics_gauge(m, "a-b", NULL, NULL);
	else if (_i == 2)
		(void)metrics_counter(m, "", NULL, NULL);
	else if (_i == 3)
		(void)metrics_counter(m, "x", NULL, LN("__x"));
	else if (_i == 4)
		(void)metrics_histogram(m, "x", NULL, LN("le"), up, 2);
	else if (_i == 5)
		(void)metrics_counter(m, "x", NULL, LN("overflow"));
	else if (_i == 6)
		(void)metrics_counter(m, "ok_total", NULL, NULL);
	else if (_i == 7)
		(void)metrics_counter(m, "x", NULL, LN("a", "a"));
	else if (_i == 8)
		(void)metrics_histogram(m, "x", NULL, NULL, down, 2);
	else if (_i == 9)
		(void)metrics_histogram(m, "x", NULL, NULL, inf, 2);
	else if (_i == 10)
		(void)metrics_counter(m, "x", NULL, nine);
	else if (_i == 11)
		(void)metrics_gauge_fn(m, "x", NULL, NULL, NULL, NULL);
	else if (_i == 12)
		(void)metrics_gauge(m, "x", NULL, LN("a b"));
	metrics_free(m);
}
END_TEST

START_TEST(bad_updates_are_fatal)
{
	static const double	 b[] = { 1 };
	struct metrics		*m = metrics_new();
	struct gw_metrics	*gm = gw_metrics_new(NULL, NULL);
	int			 c, g, h;

	c = metrics_counter(m, "c_total", NULL, LN("k"));
	g = metrics_gauge(m, "g", NULL, NULL);
	h = metrics_histogram(m, "h", NULL, NULL, b, 1);
	if (_i == 0)
		metrics_set(m, c, LV("v"), 1);
	else if (_i == 1)
		metrics_observe(m, g, NULL, 1);
	else if (_i == 2)
		metrics_inc(m, h, NULL, 1);
	else if (_i == 3)
		metrics_inc(m, 99, NULL, 1);
	else if (_i == 4)
		metrics_inc(m, -1, NULL, 1);
	else if (_i == 5)
		metrics_inc(m, c, NULL, 1);	/* values missing */
	else if (_i == 6)
		gw_metrics_restart(gm, GW_RESTART_NCAUSES);
	else if (_i == 7)
		gw_metrics_cancel(gm, (enum gw_cancel_source)-1);
	gw_metrics_free(gm);
	metrics_free(m);
}
END_TEST

START_TEST(label_names_that_are_fine)
{
	static const double	 b[] = { 1 };
	struct metrics		*m = metrics_new();
	char			*t;
	int			 c, h;

	c = metrics_counter(m, "ns:sub_total", NULL, LN("_a", "le", "B9"));
	h = metrics_histogram(m, "h", NULL, LN("x_"), b, 1);
	metrics_inc(m, c, LV("1", "2", "3"), 1);
	metrics_observe(m, h, LV(""), 1);
	t = render(m);
	ck_assert_ptr_nonnull(strstr(t,
	    "ns:sub_total{_a=\"1\",le=\"2\",B9=\"3\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "h_bucket{x_=\"\",le=\"1\"} 1\n"));
	free(t);
	metrics_free(m);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite	*s = suite_create("metrics");
	TCase	*tc;

#define ONE(name, fn) do {						\
	tc = tcase_create(name);					\
	tcase_add_test(tc, fn);						\
	suite_add_tcase(s, tc);						\
} while (0)
	ONE("counter", counter_text);
	ONE("gauge", gauge_text_and_numbers);
	ONE("histogram", histogram_text);
	ONE("escaping", escaping);
	ONE("order", order_is_declaration_then_first_seen);
	ONE("lookup", many_series_found_again);
	ONE("cap", cap_folds_into_overflow);
	ONE("gauge_fn", gauge_fn_at_scrape_time);
	ONE("names", label_names_that_are_fine);
	ONE("gw_families", gw_family_order);
	ONE("gw_values", gw_values);
	ONE("gw_cache", gw_cache_values);
	ONE("gw_buckets", gw_latency_buckets);
#undef ONE
	tc = tcase_create("speed");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, million_updates);
	suite_add_tcase(s, tc);
	tc = tcase_create("fatal");
	tcase_add_loop_exit_test(tc, bad_declarations_are_fatal,
	    EX_SOFTWARE, 0, 13);
	tcase_add_loop_exit_test(tc, bad_updates_are_fatal, EX_SOFTWARE, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(metrics_suite());
}
