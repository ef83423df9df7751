/* crashloop.c - chaos: every new worker crashes at start; the gateway stays up, says degraded, backs off and paces starts. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "chaos.h"

#define MAX_EXITS	256

static struct it	 T;

struct exits {
	int64_t		 e_at[MAX_EXITS];	/* Unix ms of each exit line */
	size_t		 e_pos[MAX_EXITS];	/* where it is in the log */
	long		 e_delay[MAX_EXITS];	/* its "respawn in N ms" */
	int		 e_sig[MAX_EXITS];
	size_t		 e_n;
	int64_t		 e_start[MAX_EXITS];	/* each spawn */
	size_t		 e_spos[MAX_EXITS];
	size_t		 e_nstart;
};

/* The exit lines after byte from: when, on which signal, and the
 * respawn delay each announced. */
static void
exits_read(const char *log, size_t from, struct exits *ex)
{
	const char	*p = log + from, *d;

	memset(ex, 0, sizeof(*ex));
	while ((p = strstr(p, " exited on signal ")) != NULL &&
	    ex->e_n < MAX_EXITS) {
		ex->e_at[ex->e_n] = chaos_line_ms(log, p);
		ex->e_pos[ex->e_n] = (size_t)(p - log);
		ex->e_sig[ex->e_n] = atoi(p + 18);
		d = strstr(p, "respawn in ");
		ex->e_delay[ex->e_n] = d != NULL && d < strchr(p, '\n') ?
		    atol(d + 11) : -1;
		ex->e_n++;
		p++;
	}
	/* At log level debug, the gateway logs each spawn. */
	for (p = log + from; (p = strstr(p, " spawned\n")) != NULL &&
	    ex->e_nstart < MAX_EXITS; p++) {
		ex->e_spos[ex->e_nstart] = (size_t)(p - log);
		ex->e_start[ex->e_nstart++] = chaos_line_ms(log, p);
	}
}

/* Spawn k replaces death k (the pool is fixed, so they pair off in
 * order): it must come after that death was announced with its respawn
 * delay, and no sooner than the delay of any death logged before it.
 * "Before" is by place in the log, not by stamp: a fast machine logs a
 * spawn and a later death in the same millisecond. Returns the spawns
 * that came early; *worst is by how many ms at most. */
static size_t
spawns_early(const struct exits *ex, long *worst)
{
	size_t	 k, j, early = 0;
	int64_t	 hold, sp;

	*worst = 0;
	for (k = 0; k < ex->e_nstart; k++) {
		sp = ex->e_start[k];
		hold = k < ex->e_n ? ex->e_at[k] : 0;
		for (j = 0; j < ex->e_n && ex->e_pos[j] < ex->e_spos[k]; j++)
			if (ex->e_at[j] + ex->e_delay[j] > hold)
				hold = ex->e_at[j] + ex->e_delay[j];
		/* Lines are stamped in whole ms, a little after the clock
		 * reading they report. */
		if (sp + 5 < hold) {
			early++;
			if (hold - sp > *worst)
				*worst = (long)(hold - sp);
		}
	}
	return early;
}

/* Watch /health for ms: every answer 200, and when it first says
 * degraded (ms after t0, -1 never). */
static long
watch_health(uint64_t t0, int ms, int *bad)
{
	char	 status[32];
	long	 degraded = -1, code;

	*bad = 0;
	while (it_now() - t0 < (uint64_t)ms) {
		status[0] = '\0';
		code = chaos_health(&T, "status", status, sizeof(status));
		if (code != 200)
			(*bad)++;
		if (degraded < 0 && strcmp(status, "degraded") == 0)
			degraded = (long)(it_now() - t0);
		it_sleep(50);
	}
	return degraded;
}

/* The respawn delays announced by crashes of workers that never became
 * healthy double from one to the next, up to 30 s. */
static void
check_backoff(const struct exits *ex)
{
	size_t	 i;
	long	 prev = -1;

	for (i = 0; i < ex->e_n; i++) {
		if (ex->e_sig[i] != SIGABRT)
			continue;
		if (prev > 0)
			ck_assert_msg(ex->e_delay[i] == (prev * 2 > 30000 ?
			    30000 : prev * 2), "respawn delay %ld after %ld",
			    ex->e_delay[i], prev);
		prev = ex->e_delay[i];
	}
	ck_assert_int_gt(prev, 0);
}

/* Respawns (crashed starts) in each second of the window. */
static void
report(const struct exits *ex, int64_t w0, int secs, char *out, size_t len)
{
	int	 per[64], s;
	size_t	 i, o = 0;

	memset(per, 0, sizeof(per));
	for (i = 0; i < ex->e_n; i++)
		if (ex->e_sig[i] == SIGABRT && (s = (int)((ex->e_at[i] - w0) /
		    1000)) >= 0 && s < 64 && s < secs)
			per[s]++;
	out[0] = '\0';
	for (s = 0; s < secs && s < 64 && o < len; s++)
		o += (size_t)snprintf(out + o, len - o, "%s%d", s ? "," : "",
		    per[s]);
}

START_TEST(crash_loop)
{
	struct exits	 ex;
	pid_t		 pids[4 * CHAOS_WORKERS];
	char		 env[400], crash[300], *log, per[256];
	int		 secs = chaos_full() ? 40 : 2, bad;
	size_t		 n, i, len, from, crashes = 0;
	long		 degraded, last = 0, worst;
	size_t		 early;
	int64_t		 w0;
	uint64_t	 t0;

	chaos_prepare(&T, "\"log_level\": \"debug\"");
	snprintf(crash, sizeof(crash), "%s/crash", T.it_dir);
	snprintf(env, sizeof(env), "SLUICE_FAULT=crash_start=%s", crash);
	chaos_launch(&T, env);
	it_sleep(1100);		/* a healthy pool, then every start crashes */
	chaos_put(crash, "crash\n");
	from = it_log_size(&T);
	n = it_worker_pids(&T, pids, 4 * CHAOS_WORKERS);
	w0 = (int64_t)clock_wall_ms();
	t0 = it_now();
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	degraded = watch_health(t0, secs * 1000, &bad);
	log = chaos_log(&T, &len);
	exits_read(log, from, &ex);
	free(log);
	for (i = 0; i < ex.e_n; i++)
		if (ex.e_sig[i] == SIGABRT) {
			crashes++;
			last = ex.e_delay[i];
		}
	report(&ex, w0, secs, per, sizeof(per));
	early = spawns_early(&ex, &worst);
	chaos_say("crashloop: %zu workers killed, then %zu crashed starts in "
	    "%d s (per second: %s); last respawn delay %ld ms; %zu spawns "
	    "before the announced delay (by up to %ld ms); /health degraded "
	    "after %ld ms, %d answers not 200", n, crashes, secs, per, last,
	    early, worst, degraded, bad);
	ck_assert_int_eq(bad, 0);
	ck_assert_int_ge(degraded, 0);
	ck_assert_int_le(degraded, chaos_limit(2000, 4000));
	check_backoff(&ex);
	ck_assert_msg(early == 0, "%zu workers started before their respawn "
	    "delay", early);
	/* The schedule: one batch 100 ms after the kills (each kill a
	 * first failure), whose crashes double the delay to 25.6 s; from
	 * the fifth failure in a row on, workers start one at a time, so
	 * only one starts then, and its crash holds the next for 30 s. */
	ck_assert_uint_le(crashes, (size_t)CHAOS_WORKERS + (secs > 26 ? 1 : 0));
	unlink(crash);
	it_stop_clean(&T);
}
END_TEST

void
chaos_add_crashloop(Suite *s)
{
	chaos_tcase(s, "crashloop", crash_loop, chaos_full() ? 120 : 60);
}
