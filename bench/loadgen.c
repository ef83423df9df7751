/* loadgen.c - closed-loop HTTP POST load generator on libcurl multi; prints one JSON line. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../common/xmem.h"

#define MAX_CONCURRENCY	4096
#define MAX_HEADERS	16
#define POLL_MS		100
#define DONE_MARK	"data: [DONE]"
#define ERROR_MARK	"data: {\"error\""

enum err_kind { E_NONE, E_TRANSPORT, E_STATUS, E_INCOMPLETE, E_EVENT,
    E_NKINDS };

struct opts {
	const char	*o_url;
	const char	*o_body_file;
	unsigned	 o_concurrency;
	double		 o_duration_s;
	double		 o_warmup_s;
	long		 o_timeout_ms;
	bool		 o_stream;
	bool		 o_events;	/* report SSE events per stream */
	bool		 o_self_cpu;	/* report loadgen's own CPU */
	bool		 o_epoll;	/* socket API on epoll */
	const char	*o_headers[MAX_HEADERS];	/* extra request headers */
	size_t		 o_nheaders;
	const char	*o_unique;	/* replaced per request, or NULL */
};

/* Every measured sample, in microseconds; sorted at the end. */
struct samples {
	uint64_t	*s_v;
	size_t		 s_n;
	size_t		 s_cap;
};

/* One virtual client: one easy handle reused for every request. */
struct client {
	CURL		*c_h;
	uint64_t	 c_t0;		/* request start, us */
	uint64_t	 c_first;	/* first body byte, us; 0 = none yet */
	struct buf	 c_body;
	char		*c_req;		/* --unique: this client's request
					   body, g_body with a new number */
};

struct lg {
	struct opts		 g_o;
	CURLM			*g_m;
	struct curl_slist	*g_hdrs;
	char			*g_body;
	size_t			 g_body_len;
	struct client		*g_cl;
	unsigned		 g_active;	/* requests in flight */
	int			 g_ep;		/* --epoll: the epoll fd */
	uint64_t		 g_due;		/* --epoll: libcurl's timeout
						   (us), 0 = none */
	uint64_t		 g_t_measure;	/* window start, us */
	uint64_t		 g_t_stop;	/* no new request from here */
	uint64_t		 g_t_last;	/* last measured completion */
	struct samples		 g_lat;
	struct samples		 g_ttfb;
	uint64_t		 g_bytes;	/* body bytes of measured oks */
	uint64_t		 g_events;	/* SSE events of measured oks */
	long			 g_connects;	/* new connections, measured */
	unsigned long		 g_err[E_NKINDS];
	unsigned long		 g_warm_ok;
	unsigned long		 g_warm_err;
	char			 g_first_err[128];
	size_t			 g_mark_at;	/* --unique: offset in g_body */
	unsigned long		 g_seq;		/* --unique: requests so far */
};

static uint64_t
now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: loadgen --url URL --body-file FILE "
	    "--concurrency N --duration S\n"
	    "               [--warmup S] [--timeout S] [--stream]"
	    " [--header 'Name: value']...\n"
	    "               [--count-events] [--self-cpu] [--epoll]"
	    " [--unique MARK]\n"
	    "POSTs FILE (application/json) to URL from N clients in a closed "
	    "loop for S\nseconds after the warm-up and prints one JSON line. "
	    "--stream: the body asks\nfor SSE; report time to first byte and "
	    "require \"data: [DONE]\" at the end.\n"
	    "--header adds a request header (up to 16). --count-events adds "
	    "avg_events\n(SSE \"data:\" lines per stream); --self-cpu adds "
	    "cpu_ms (loadgen's own CPU).\n--epoll: libcurl's socket API on "
	    "epoll, O(1) per wake-up instead of O(N).\n--unique: the "
	    "first MARK in FILE becomes the request's number, zero-padded\n"
	    "to MARK's length (0, 1, 2, ... over all clients), so that no two "
	    "requests\nare the same.\n");
	exit(EX_USAGE);
}

static double
parse_secs(const char *v)
{
	char	*end;
	double	 d;

	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || d < 0 || d > 86400)
		usage();
	return d;
}

static void
parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "body-file", required_argument, NULL, 'b' },
		{ "concurrency", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "stream", no_argument, NULL, 's' },
		{ "header", required_argument, NULL, 'H' },
		{ "count-events", no_argument, NULL, 'e' },
		{ "self-cpu", no_argument, NULL, 'C' },
		{ "epoll", no_argument, NULL, 'E' },
		{ "unique", required_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 }
	};
	int				 ch;
	long				 n;

	memset(o, 0, sizeof(*o));
	o->o_concurrency = 1;
	o->o_duration_s = 5;
	o->o_timeout_ms = 30000;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'u': o->o_url = optarg; break;
		case 'b': o->o_body_file = optarg; break;
		case 'c':
			n = strtol(optarg, NULL, 10);
			if (n < 1 || n > MAX_CONCURRENCY)
				usage();
			o->o_concurrency = (unsigned)n;
			break;
		case 'd': o->o_duration_s = parse_secs(optarg); break;
		case 'w': o->o_warmup_s = parse_secs(optarg); break;
		case 't':
			o->o_timeout_ms = (long)(parse_secs(optarg) * 1000);
			break;
		case 's': o->o_stream = true; break;
		case 'e': o->o_events = true; break;
		case 'C': o->o_self_cpu = true; break;
		case 'E': o->o_epoll = true; break;
		case 'U':
			if (*optarg == '\0' || strlen(optarg) > 20)
				usage();
			o->o_unique = optarg;
			break;
		case 'H':
			if (o->o_nheaders == MAX_HEADERS)
				usage();
			o->o_headers[o->o_nheaders++] = optarg;
			break;
		default: usage();
		}
	}
	if (optind != argc || o->o_url == NULL || o->o_body_file == NULL ||
	    o->o_duration_s <= 0)
		usage();
}

static void
read_body(struct lg *g)
{
	struct buf	 b = BUF_INIT;
	char		 tmp[8192];
	size_t		 n;
	FILE		*f;
	char		*p;

	if ((f = fopen(g->g_o.o_body_file, "r")) == NULL)
		fatal("%s", g->g_o.o_body_file);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		buf_add(&b, tmp, n);
	if (ferror(f))
		fatal("%s", g->g_o.o_body_file);
	fclose(f);
	g->g_body_len = b.b_len;
	g->g_body = b.b_len > 0 ? buf_take(&b) : xstrdup("");
	if (g->g_o.o_unique == NULL)
		return;
	p = memmem(g->g_body, g->g_body_len, g->g_o.o_unique,
	    strlen(g->g_o.o_unique));
	if (p == NULL)
		fatalx("--unique %s: not in %s", g->g_o.o_unique,
		    g->g_o.o_body_file);
	g->g_mark_at = (size_t)(p - g->g_body);
}

/* --unique: the client's body with the next request number in place of
 * the mark (same length, so the size libcurl has stays right). */
static void
number_body(struct lg *g, struct client *c)
{
	size_t	 w = strlen(g->g_o.o_unique);
	char	 num[24];

	snprintf(num, sizeof(num), "%0*lu", (int)w, g->g_seq++);
	memcpy(c->c_req + g->g_mark_at, num + strlen(num) - w, w);
}

static void
samples_add(struct samples *s, uint64_t v)
{
	if (s->s_n == s->s_cap) {
		s->s_cap = s->s_cap ? s->s_cap * 2 : 4096;
		s->s_v = xreallocarray(s->s_v, s->s_cap, sizeof(*s->s_v));
	}
	s->s_v[s->s_n++] = v;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
samples_sort(struct samples *s)
{
	if (s->s_n > 1)
		qsort(s->s_v, s->s_n, sizeof(*s->s_v), cmp_u64);
}

/* Nearest-rank percentile of sorted samples, in milliseconds. */
static double
pct_ms(const struct samples *s, double p)
{
	size_t	 rank;

	if (s->s_n == 0)
		return 0;
	rank = (size_t)ceil(p / 100.0 * (double)s->s_n);
	if (rank < 1)
		rank = 1;
	if (rank > s->s_n)
		rank = s->s_n;
	return (double)s->s_v[rank - 1] / 1000.0;
}

static size_t
on_write(char *p, size_t size, size_t n, void *arg)
{
	struct client	*c = arg;

	if (c->c_first == 0 && size * n > 0)
		c->c_first = now_us();
	buf_add(&c->c_body, p, size * n);
	return size * n;
}

static void
client_setup(struct lg *g, struct client *c)
{
	buf_init(&c->c_body);
	if ((c->c_h = curl_easy_init()) == NULL)
		fatalx("curl_easy_init failed");
	curl_easy_setopt(c->c_h, CURLOPT_URL, g->g_o.o_url);
	curl_easy_setopt(c->c_h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(c->c_h, CURLOPT_HTTPHEADER, g->g_hdrs);
	if (g->g_o.o_unique != NULL) {
		c->c_req = xmalloc(g->g_body_len + 1);
		memcpy(c->c_req, g->g_body, g->g_body_len + 1);
	}
	curl_easy_setopt(c->c_h, CURLOPT_POSTFIELDS, c->c_req != NULL ?
	    c->c_req : g->g_body);
	curl_easy_setopt(c->c_h, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)g->g_body_len);
	curl_easy_setopt(c->c_h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c->c_h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->c_h, CURLOPT_PRIVATE, c);
	curl_easy_setopt(c->c_h, CURLOPT_TIMEOUT_MS, g->g_o.o_timeout_ms);
	curl_easy_setopt(c->c_h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->c_h, CURLOPT_TCP_NODELAY, 1L);
}

static void
client_start(struct lg *g, struct client *c)
{
	buf_reset(&c->c_body);
	if (c->c_req != NULL)
		number_body(g, c);
	c->c_first = 0;
	c->c_t0 = now_us();
	if (curl_multi_add_handle(g->g_m, c->c_h) != CURLM_OK)
		fatalx("curl_multi_add_handle failed");
	g->g_active++;
}

/* Does the body end with the SSE terminator (blank lines aside)? */
static bool
ends_done(const struct buf *b)
{
	size_t	 n = b->b_len, k = sizeof(DONE_MARK) - 1;

	while (n > 0 && (b->b_data[n - 1] == '\n' || b->b_data[n - 1] == '\r'))
		n--;
	return n >= k && memcmp(b->b_data + n - k, DONE_MARK, k) == 0;
}

static enum err_kind
classify(struct lg *g, struct client *c, CURLcode rc, char *why, size_t len)
{
	long	 status = 0;

	if (rc != CURLE_OK) {
		snprintf(why, len, "curl: %s", curl_easy_strerror(rc));
		return E_TRANSPORT;
	}
	curl_easy_getinfo(c->c_h, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		snprintf(why, len, "HTTP %ld: %.60s", status,
		    c->c_body.b_data ? c->c_body.b_data : "");
		return E_STATUS;
	}
	if (!g->g_o.o_stream)
		return E_NONE;
	if (c->c_body.b_data != NULL &&
	    strstr(c->c_body.b_data, ERROR_MARK) != NULL) {
		snprintf(why, len, "error event in stream");
		return E_EVENT;
	}
	if (!ends_done(&c->c_body)) {
		snprintf(why, len, "stream without data: [DONE]");
		return E_INCOMPLETE;
	}
	return E_NONE;
}

/* SSE events in a body: lines that start with "data:". */
static uint64_t
sse_events(const struct buf *b)
{
	const char	*p = b->b_data, *end = b->b_data + b->b_len;
	uint64_t	 n = 0;

	while (p != NULL && p < end) {
		if ((size_t)(end - p) >= 5 && memcmp(p, "data:", 5) == 0)
			n++;
		if ((p = memchr(p, '\n', (size_t)(end - p))) != NULL)
			p++;
	}
	return n;
}

static void
record(struct lg *g, struct client *c, enum err_kind k, const char *why,
    uint64_t t_end)
{
	long	 conns = 0;

	if (c->c_t0 < g->g_t_measure) {
		if (k == E_NONE)
			g->g_warm_ok++;
		else
			g->g_warm_err++;
		return;
	}
	if (k != E_NONE) {
		g->g_err[k]++;
		if (g->g_first_err[0] == '\0')
			snprintf(g->g_first_err, sizeof(g->g_first_err), "%s",
			    why);
		return;
	}
	samples_add(&g->g_lat, t_end - c->c_t0);
	if (g->g_o.o_stream)
		samples_add(&g->g_ttfb, c->c_first - c->c_t0);
	curl_easy_getinfo(c->c_h, CURLINFO_NUM_CONNECTS, &conns);
	g->g_connects += conns;
	g->g_bytes += c->c_body.b_len;
	if (g->g_o.o_events)
		g->g_events += sse_events(&c->c_body);
	if (t_end > g->g_t_last)
		g->g_t_last = t_end;
}

/* Collect finished transfers; restart each client until the stop time. */
static void
drain_done(struct lg *g)
{
	struct client	*c;
	CURLMsg		*msg;
	char		 why[128];
	int		 left;
	uint64_t	 t_end;
	enum err_kind	 k;

	while ((msg = curl_multi_info_read(g->g_m, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		t_end = now_us();
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &c);
		why[0] = '\0';
		k = classify(g, c, msg->data.result, why, sizeof(why));
		record(g, c, k, why, t_end);
		curl_multi_remove_handle(g->g_m, c->c_h);
		g->g_active--;
		if (t_end < g->g_t_stop)
			client_start(g, c);
	}
}

/* --epoll: libcurl's socket callback; mirrors what it wants to wait
 * for on s into the epoll set. */
static int
on_socket(CURL *h, curl_socket_t s, int what, void *arg, void *sockp)
{
	struct lg		*g = arg;
	struct epoll_event	 ev;

	if (what == CURL_POLL_REMOVE) {
		(void)epoll_ctl(g->g_ep, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	ev.data.fd = s;
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev.events |= EPOLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev.events |= EPOLLOUT;
	if (epoll_ctl(g->g_ep, EPOLL_CTL_MOD, s, &ev) == -1 &&
	    (errno != ENOENT || epoll_ctl(g->g_ep, EPOLL_CTL_ADD, s, &ev) == -1))
		fatal("epoll_ctl");
	return 0;
}

/* --epoll: libcurl's timer callback (-1: none, 0: at once). */
static int
on_timer(CURLM *m, long ms, void *arg)
{
	struct lg	*g = arg;

	g->g_due = ms < 0 ? 0 : now_us() + (uint64_t)ms * 1000;
	return 0;
}

static void
socket_action(struct lg *g, curl_socket_t s, int flags)
{
	int	 running;

	if (curl_multi_socket_action(g->g_m, s, flags, &running) != CURLM_OK)
		fatalx("curl_multi_socket_action failed");
}

/* --epoll: one wait for readiness or libcurl's timeout, then the
 * transfers that can move. */
static void
step_epoll(struct lg *g)
{
	struct epoll_event	 evs[256];
	uint64_t		 now = now_us();
	int			 n, i, ms = POLL_MS, fl;

	if (g->g_due != 0)
		ms = g->g_due <= now ? 0 : (int)((g->g_due - now + 999) / 1000);
	if (ms > POLL_MS)
		ms = POLL_MS;
	if ((n = epoll_wait(g->g_ep, evs, 256, ms)) == -1 && errno != EINTR)
		fatal("epoll_wait");
	for (i = 0; i < n; i++) {
		fl = 0;
		if (evs[i].events & (EPOLLIN | EPOLLHUP))
			fl |= CURL_CSELECT_IN;
		if (evs[i].events & EPOLLOUT)
			fl |= CURL_CSELECT_OUT;
		if (evs[i].events & EPOLLERR)
			fl |= CURL_CSELECT_ERR;
		socket_action(g, evs[i].data.fd, fl);
	}
	if (g->g_due != 0 && g->g_due <= now_us()) {
		g->g_due = 0;
		socket_action(g, CURL_SOCKET_TIMEOUT, 0);
	}
}

static void
run_epoll(struct lg *g)
{
	while (g->g_active > 0) {
		step_epoll(g);
		drain_done(g);
	}
}

static void
run(struct lg *g)
{
	uint64_t	 t0 = now_us();
	unsigned	 i;
	int		 running;

	g->g_t_measure = t0 + (uint64_t)(g->g_o.o_warmup_s * 1e6);
	g->g_t_stop = g->g_t_measure + (uint64_t)(g->g_o.o_duration_s * 1e6);
	for (i = 0; i < g->g_o.o_concurrency; i++)
		client_start(g, &g->g_cl[i]);
	if (g->g_o.o_epoll) {
		run_epoll(g);
		return;
	}
	while (g->g_active > 0) {
		if (curl_multi_perform(g->g_m, &running) != CURLM_OK)
			fatalx("curl_multi_perform failed");
		drain_done(g);
		if (g->g_active == 0)
			break;
		if (curl_multi_poll(g->g_m, NULL, 0, POLL_MS, NULL) != CURLM_OK)
			fatalx("curl_multi_poll failed");
	}
}

static void
json_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

/* The keys asked for by --count-events and --self-cpu. */
static void
report_extra(struct lg *g)
{
	struct rusage	 ru;
	double		 n = (double)g->g_lat.s_n;

	if (g->g_o.o_events)
		printf(",\"avg_events\":%.2f", n > 0 ?
		    (double)g->g_events / n : 0.0);
	if (g->g_o.o_self_cpu && getrusage(RUSAGE_SELF, &ru) == 0)
		printf(",\"cpu_ms\":%.0f", (double)(ru.ru_utime.tv_sec +
		    ru.ru_stime.tv_sec) * 1e3 + (double)(ru.ru_utime.tv_usec +
		    ru.ru_stime.tv_usec) / 1e3);
}

static void
report(struct lg *g)
{
	unsigned long	 errs = 0;
	double		 secs, n = (double)g->g_lat.s_n;
	int		 k;

	for (k = E_TRANSPORT; k < E_NKINDS; k++)
		errs += g->g_err[k];
	secs = g->g_t_last > g->g_t_measure ?
	    (double)(g->g_t_last - g->g_t_measure) / 1e6 : g->g_o.o_duration_s;
	samples_sort(&g->g_lat);
	samples_sort(&g->g_ttfb);
	printf("{\"concurrency\":%u,\"stream\":%s,\"seconds\":%.3f,"
	    "\"count\":%zu,\"errors\":%lu,\"rps\":%.1f,\"p50_ms\":%.3f,"
	    "\"p99_ms\":%.3f,\"max_ms\":%.3f,", g->g_o.o_concurrency,
	    g->g_o.o_stream ? "true" : "false", secs, g->g_lat.s_n, errs,
	    n / secs, pct_ms(&g->g_lat, 50), pct_ms(&g->g_lat, 99),
	    pct_ms(&g->g_lat, 100));
	if (g->g_o.o_stream)
		printf("\"ttfb_p50_ms\":%.3f,\"ttfb_p99_ms\":%.3f,",
		    pct_ms(&g->g_ttfb, 50), pct_ms(&g->g_ttfb, 99));
	printf("\"err_transport\":%lu,\"err_status\":%lu,"
	    "\"err_incomplete\":%lu,\"err_event\":%lu,\"warmup_count\":%lu,"
	    "\"warmup_errors\":%lu,\"new_connections\":%ld,"
	    "\"avg_body_bytes\":%.0f,\"first_error\":", g->g_err[E_TRANSPORT],
	    g->g_err[E_STATUS], g->g_err[E_INCOMPLETE], g->g_err[E_EVENT],
	    g->g_warm_ok, g->g_warm_err, g->g_connects,
	    n > 0 ? (double)g->g_bytes / n : 0.0);
	json_str(g->g_first_err);
	report_extra(g);
	printf("}\n");
	fflush(stdout);
}

static void
setup(struct lg *g)
{
	unsigned	 i;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatalx("curl_global_init failed");
	read_body(g);
	g->g_hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	g->g_hdrs = curl_slist_append(g->g_hdrs, "Expect:");
	for (i = 0; i < g->g_o.o_nheaders && g->g_hdrs != NULL; i++)
		g->g_hdrs = curl_slist_append(g->g_hdrs, g->g_o.o_headers[i]);
	if (g->g_hdrs == NULL || (g->g_m = curl_multi_init()) == NULL)
		fatalx("libcurl initialisation failed");
	curl_multi_setopt(g->g_m, CURLMOPT_MAXCONNECTS,
	    (long)g->g_o.o_concurrency * 2);
	g->g_ep = -1;
	if (g->g_o.o_epoll) {
		if ((g->g_ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
			fatal("epoll_create1");
		curl_multi_setopt(g->g_m, CURLMOPT_SOCKETFUNCTION, on_socket);
		curl_multi_setopt(g->g_m, CURLMOPT_SOCKETDATA, g);
		curl_multi_setopt(g->g_m, CURLMOPT_TIMERFUNCTION, on_timer);
		curl_multi_setopt(g->g_m, CURLMOPT_TIMERDATA, g);
	}
	g->g_cl = xcalloc(g->g_o.o_concurrency, sizeof(*g->g_cl));
	for (i = 0; i < g->g_o.o_concurrency; i++)
		client_setup(g, &g->g_cl[i]);
}

static void
teardown(struct lg *g)
{
	unsigned	 i;

	for (i = 0; i < g->g_o.o_concurrency; i++) {
		curl_easy_cleanup(g->g_cl[i].c_h);
		buf_free(&g->g_cl[i].c_body);
		free(g->g_cl[i].c_req);
	}
	curl_multi_cleanup(g->g_m);
	if (g->g_ep != -1)
		close(g->g_ep);
	curl_slist_free_all(g->g_hdrs);
	curl_global_cleanup();
	free(g->g_cl);
	free(g->g_body);
	free(g->g_lat.s_v);
	free(g->g_ttfb.s_v);
}

int
main(int argc, char **argv)
{
	struct lg	 g;

	log_init(LOG_LVL_WARN);
	log_procinit("loadgen");
	memset(&g, 0, sizeof(g));
	parse_args(&g.g_o, argc, argv);
	setup(&g);
	run(&g);
	report(&g);
	teardown(&g);
	return 0;
}
