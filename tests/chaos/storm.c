/* storm.c - chaos: kill -9 of a random busy worker every second while many streams run. */
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "chaos.h"

#define MAX_KILLS	128
#define MAX_SAMPLES	256
#define KILL_EVERY_MS	1000
#define VICTIM_AGE_S	2.0	/* see below */
#define WORDS		24

/*
 * Victims are busy workers at least VICTIM_AGE_S old. A worker that dies
 * within healthy_after (1 s) of its HELLO doubles the pool's respawn
 * delay by design; the replacement-time figure is about a healthy
 * pool's 100 ms, not about that crash-loop brake (crashloop.c).
 */

struct kill {
	pid_t		 k_pid;
	int64_t		 k_wall;	/* Unix ms just before kill(2) */
	long		 k_ready_ms;	/* to its replacement's HELLO */
};

struct done {
	char		 d_id[40];
	long		 d_status;
	bool		 d_complete;
};

struct client {
	CURL		*c_h;
	struct buf	 c_out;
	char		 c_id[40];
};

struct storm {
	struct it	*st_t;
	char		*st_body;
	char		 st_text[WORDS * 4 + 1];
	uint64_t	 st_t0, st_until, st_last_kill, st_last_sample;
	unsigned	 st_seed;
	struct kill	 st_kills[MAX_KILLS];
	size_t		 st_nkills;
	struct done	*st_done;
	size_t		 st_ndone, st_cap;
	long		 st_rss[MAX_SAMPLES];
	size_t		 st_nrss;
	pid_t		 st_zprev[16];
	size_t		 st_nzprev;
	int		 st_stuck_zombies;
	int		 st_max_zombies;
};

static struct it	 T;

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct client	*c = arg;

	if (size * n > 14 && strncasecmp(p, "X-Request-Id: ", 14) == 0)
		snprintf(c->c_id, sizeof(c->c_id), "%.*s", (int)strcspn(p + 14,
		    "\r\n"), p + 14);
	return size * n;
}

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
	struct client	*c = arg;

	buf_add(&c->c_out, p, size * n);
	return size * n;
}

static void
client_start(struct storm *st, CURLM *m, struct client *c,
    struct curl_slist *hd)
{
	char	 url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/chat/completions",
	    st->st_t->it_port);
	buf_reset(&c->c_out);
	c->c_id[0] = '\0';
	if (c->c_h == NULL)
		c->c_h = curl_easy_init();
	curl_easy_setopt(c->c_h, CURLOPT_URL, url);
	curl_easy_setopt(c->c_h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(c->c_h, CURLOPT_POSTFIELDS, st->st_body);
	curl_easy_setopt(c->c_h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->c_h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->c_h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->c_h, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->c_h, CURLOPT_PRIVATE, c);
	curl_multi_add_handle(m, c->c_h);
}

/* Keep what a finished request says about itself. */
static void
record(struct storm *st, struct client *c, CURLcode rc)
{
	struct sse_summary	 ss;
	struct done		*d;

	if (st->st_ndone == st->st_cap) {
		st->st_cap = st->st_cap ? 2 * st->st_cap : 1024;
		st->st_done = realloc(st->st_done, st->st_cap * sizeof(*d));
		ck_assert_ptr_nonnull(st->st_done);
	}
	d = &st->st_done[st->st_ndone++];
	memset(d, 0, sizeof(*d));
	snprintf(d->d_id, sizeof(d->d_id), "%s", c->c_id);
	curl_easy_getinfo(c->c_h, CURLINFO_RESPONSE_CODE, &d->d_status);
	buf_adds(&c->c_out, "");
	it_sse_parse(c->c_out.b_data, &ss);
	d->d_complete = rc == CURLE_OK && d->d_status == 200 && ss.ss_done &&
	    !ss.ss_error && strcmp(ss.ss_text, st->st_text) == 0;
	free(ss.ss_text);
}

/* Kill one busy worker old enough to count as healthy. */
static void
kill_one(struct storm *st)
{
	struct chaos_worker	 w[2 * CHAOS_WORKERS];
	size_t			 n, i, k = 0, cand[2 * CHAOS_WORKERS];
	struct kill		*kl;

	n = chaos_workers(st->st_t, w, 2 * CHAOS_WORKERS);
	for (i = 0; i < n; i++)
		if (strcmp(w[i].cw_state, "busy") == 0 &&
		    w[i].cw_age_s >= VICTIM_AGE_S)
			cand[k++] = i;
	if (k == 0 || st->st_nkills == MAX_KILLS)
		return;
	i = cand[(size_t)rand_r(&st->st_seed) % k];
	kl = &st->st_kills[st->st_nkills++];
	kl->k_pid = w[i].cw_pid;
	kl->k_ready_ms = -1;
	kl->k_wall = (int64_t)clock_wall_ms();
	ck_assert_int_eq(kill(kl->k_pid, SIGKILL), 0);
	st->st_last_kill = it_now();
}

/* Once a second: the gateway's memory, and zombies that outlive a
 * second (a fresh one is only a death not yet reaped). */
static void
sample(struct storm *st)
{
	pid_t	 z[16];
	size_t	 n, i, j;

	st->st_last_sample = it_now();
	if (st->st_nrss < MAX_SAMPLES)
		st->st_rss[st->st_nrss++] = chaos_rss_kib(st->st_t->it_gw);
	n = chaos_children(st->st_t->it_gw, 'Z', z, 16);
	if ((int)n > st->st_max_zombies)
		st->st_max_zombies = (int)n;
	for (i = 0; i < n && i < 16; i++)
		for (j = 0; j < st->st_nzprev; j++)
			if (z[i] == st->st_zprev[j])
				st->st_stuck_zombies++;
	memcpy(st->st_zprev, z, sizeof(z));
	st->st_nzprev = n < 16 ? n : 16;
}

static void
tick(struct storm *st)
{
	uint64_t	 now = it_now();

	if (now < st->st_until && now - st->st_t0 >= KILL_EVERY_MS &&
	    now - st->st_last_kill >= KILL_EVERY_MS)
		kill_one(st);
	if (now - st->st_last_sample >= 1000)
		sample(st);
}

static void
finished(struct storm *st, CURLM *m, struct curl_slist *hd)
{
	CURLMsg		*msg;
	struct client	*c;
	int		 left;

	while ((msg = curl_multi_info_read(m, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &c);
		record(st, c, msg->data.result);
		curl_multi_remove_handle(m, c->c_h);
		if (it_now() < st->st_until)
			client_start(st, m, c, hd);
	}
}

/* nclients streams back to back until st_until, killing as they go. */
static void
run(struct storm *st, size_t nclients)
{
	CURLM			*m = curl_multi_init();
	struct curl_slist	*hd = NULL;
	struct client		*c = calloc(nclients, sizeof(*c));
	int			 running = 1;
	size_t			 i;

	hd = curl_slist_append(hd, "Content-Type: application/json");
	st->st_t0 = st->st_last_sample = it_now();
	for (i = 0; i < nclients; i++)
		client_start(st, m, &c[i], hd);
	while (running > 0 || it_now() < st->st_until) {
		curl_multi_perform(m, &running);
		finished(st, m, hd);
		if (it_now() > st->st_until + 30000)
			break;
		tick(st);
		curl_multi_poll(m, NULL, 0, 10, NULL);
	}
	for (i = 0; i < nclients; i++) {
		curl_multi_remove_handle(m, c[i].c_h);
		curl_easy_cleanup(c[i].c_h);
		buf_free(&c[i].c_out);
	}
	curl_multi_cleanup(m);
	curl_slist_free_all(hd);
	free(c);
}

/* Each kill's time to its replacement's HELLO. The pool is fixed at
 * CHAOS_WORKERS, so every HELLO after the first ones answers a death,
 * and kills a second apart take them in order (a replacement starts in
 * whichever slot is free first, not always its victim's). */
static void
replacement_times(struct storm *st, const char *log)
{
	const char	*p;
	int64_t		 ts;
	size_t		 k = 0;

	for (p = log; k < st->st_nkills &&
	    (p = strstr(p, " ready in ")) != NULL; p++) {
		if ((ts = chaos_line_ms(log, p)) < st->st_kills[k].k_wall)
			continue;
		st->st_kills[k].k_ready_ms = (long)(ts -
		    st->st_kills[k].k_wall);
		k++;
	}
}

static bool
was_killed(const struct storm *st, long pid)
{
	size_t	 k;

	for (k = 0; k < st->st_nkills; k++)
		if (st->st_kills[k].k_pid == pid)
			return true;
	return false;
}

/* Every failed request is a victim's: its access-log line names a
 * killed worker, or (no chunk came before the death) the log says its
 * worker died. Returns the failures; *unmapped counts the others. */
static size_t
check_failures(const struct storm *st, const char *log, size_t *unmapped)
{
	size_t		 i, failed = 0;
	char		 died[96];
	long		 pid;

	*unmapped = 0;
	for (i = 0; i < st->st_ndone; i++) {
		const struct done *d = &st->st_done[i];

		if (d->d_complete)
			continue;
		failed++;
		pid = d->d_id[0] != '\0' ? chaos_access_worker(log, d->d_id) :
		    -1;
		snprintf(died, sizeof(died), "[rq %s] the worker handling "
		    "the request died", d->d_id);
		if (was_killed(st, pid) || (d->d_id[0] != '\0' &&
		    strstr(log, died) != NULL))
			continue;
		(*unmapped)++;
		chaos_say("storm: request %s (status %ld, worker %ld) failed "
		    "but no kill explains it", d->d_id[0] ? d->d_id : "?",
		    d->d_status, pid);
	}
	return failed;
}

static void
check_replacements(struct storm *st, const char *log)
{
	long	 v[MAX_KILLS], limit = chaos_limit(300, 1000);
	size_t	 k, n = 0, missing = 0;

	replacement_times(st, log);
	for (k = 0; k < st->st_nkills; k++) {
		if (st->st_kills[k].k_ready_ms < 0)
			missing++;
		else
			v[n++] = st->st_kills[k].k_ready_ms;
	}
	ck_assert_msg(missing == 0, "%zu killed workers were never replaced",
	    missing);
	chaos_say("storm: replacement ready after kill -9: p50 %ld ms, p99 "
	    "%ld ms, max %ld ms (%zu kills; limit p99 <= %ld ms)",
	    chaos_pct(v, n, 50), chaos_pct(v, n, 99), chaos_pct(v, n, 100),
	    n, limit);
	ck_assert_msg(chaos_pct(v, n, 99) <= limit, "replacement p99 %ld ms "
	    "> %ld ms", chaos_pct(v, n, 99), limit);
}

/* Bounded growth: the last sample against the one a third of the way
 * in, once connections, buffers and the log's stdio are warm. */
static void
check_rss(const struct storm *st)
{
	long	 base, last, max = 0, limit = chaos_limit(2048, 8192);
	size_t	 i;

	ck_assert_uint_ge(st->st_nrss, 3);
	base = st->st_rss[st->st_nrss / 3];
	last = st->st_rss[st->st_nrss - 1];
	for (i = 0; i < st->st_nrss; i++)
		if (st->st_rss[i] > max)
			max = st->st_rss[i];
	chaos_say("storm: gateway RSS %ld KiB at start, %ld KiB after a third,"
	    " %ld KiB at the end, max %ld KiB (limit: +%ld KiB after the "
	    "third)", st->st_rss[0], base, last, max, limit);
	ck_assert_msg(last - base <= limit, "gateway RSS grew by %ld KiB",
	    last - base);
}

/* The gateway's fds at rest: the fewest over 300 ms (a connection the
 * test just closed may not be closed on the gateway's side yet). */
static int
fds_at_rest(pid_t gw)
{
	uint64_t	 t0 = it_now();
	int		 n, least = -1;

	while (it_now() - t0 < 300) {
		n = it_fd_count(gw);
		if (least < 0 || n < least)
			least = n;
		it_sleep(20);
	}
	return least;
}

/* The pool after the storm: full, idle, no zombie, fds as before. */
static void
check_pool(struct storm *st, int fds_before)
{
	pid_t		 pids[4 * CHAOS_WORKERS];
	int		 fds = -1;
	uint64_t	 t0 = it_now();
	size_t		 zombies;

	it_wait_idle(st->st_t, CHAOS_WORKERS);
	while (it_now() - t0 < 3000 &&
	    (fds = fds_at_rest(st->st_t->it_gw)) != fds_before)
		;
	zombies = chaos_children(st->st_t->it_gw, 'Z', NULL, 0);
	chaos_say("storm: gateway fds %d before, %d after; zombies at the end "
	    "%zu, most seen at once %d, outliving a second %d", fds_before,
	    fds, zombies, st->st_max_zombies, st->st_stuck_zombies);
	ck_assert_int_eq(fds, fds_before);
	ck_assert_uint_eq(zombies, 0);
	ck_assert_int_eq(st->st_stuck_zombies, 0);
	ck_assert_uint_eq(it_worker_pids(st->st_t, pids, 4 * CHAOS_WORKERS),
	    CHAOS_WORKERS);
}

static void
check_requests(struct storm *st)
{
	size_t	 len, failed, unmapped, i, complete = 0;
	char	*log = chaos_log(st->st_t, &len);

	for (i = 0; i < st->st_ndone; i++)
		complete += st->st_done[i].d_complete;
	failed = check_failures(st, log, &unmapped);
	chaos_say("storm: %zu requests, %zu byte-complete, %zu failed, %zu "
	    "kill -9s, %zu failures no kill explains", st->st_ndone, complete,
	    failed, st->st_nkills, unmapped);
	ck_assert_uint_eq(unmapped, 0);
	ck_assert_uint_le(failed, st->st_nkills);
	ck_assert_uint_eq(complete + failed, st->st_ndone);
	ck_assert_uint_ge(st->st_nkills, (st->st_until - st->st_t0) /
	    KILL_EVERY_MS - 3);
	check_replacements(st, log);
	free(log);
}

/* In the sanitizer build, freed memory waits in ASan's quarantine (256
 * MiB by default) before reuse, so RSS climbs whatever the code does: a
 * small quarantine lets the RSS figure mean something there too. NULL
 * in the ordinary build. */
static const char *
asan_env(char *env, size_t len)
{
	const char	*o = getenv("ASAN_OPTIONS");

	if (!CHAOS_ASAN)
		return NULL;
	snprintf(env, len, "ASAN_OPTIONS=%s%squarantine_size_mb=4", o ? o : "",
	    o && *o ? ":" : "");
	return env;
}

START_TEST(kill9_storm)
{
	struct storm	 st;
	size_t		 clients = chaos_full() ? 64 : 16, i;
	int		 secs = chaos_full() ? 60 : 10, fds;
	char		 mock[512], env[512];

	memset(&st, 0, sizeof(st));
	st.st_t = &T;
	st.st_seed = (unsigned)time(NULL);
	for (i = 0; i < WORDS; i++)
		snprintf(st.st_text + strlen(st.st_text), sizeof(st.st_text) -
		    strlen(st.st_text), "%sw%02zu", i ? " " : "", i);
	snprintf(mock, sizeof(mock), "{\"text\": \"%s\", \"delay_ms\": 5}",
	    st.st_text);
	st.st_body = chaos_body(true, mock);
	chaos_start(&T, "\"queue_max\": 256", asan_env(env, sizeof(env)));
	fds = fds_at_rest(T.it_gw);
	chaos_say("storm: %zu concurrent streams for %d s on %d workers, "
	    "seed %u", clients, secs, CHAOS_WORKERS, st.st_seed);
	st.st_until = it_now() + (uint64_t)secs * 1000;
	run(&st, clients);
	check_pool(&st, fds);
	check_requests(&st);
	check_rss(&st);
	free(st.st_done);
	free(st.st_body);
	it_stop_clean(&T);
}
END_TEST

void
chaos_add_storm(Suite *s)
{
	chaos_tcase(s, "storm", kill9_storm, chaos_full() ? 240 : 90);
}
