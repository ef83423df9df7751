/* rogue.c - chaos: rogue workers flood their channels with malformed frames while other streams run. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chaos.h"

#define NSTREAMS	2	/* honest streams running all along */
#define NFRAMES		10000	/* per rogue */
#define NKINDS		(sizeof(kinds) / sizeof(kinds[0]))

/*
 * Each rogue is a worker that takes a request and finds a trigger file
 * (worker/fault.c, SLUICE_FAULT=rogue=DIR). The kinds of a round hit at
 * once, on different workers; round 2 waits for the replacements of
 * round 1 (and names an honest stream's request id).
 */
static const struct kind {
	const char	*k_name;
	int		 k_round;
	const char	*k_kill;	/* the gateway's reason to kill */
} kinds[] = {
	{ "huge",	1, ": protocol violation" },
	{ "truncated",	1, ": protocol violation" },
	{ "garbage",	1, ": protocol violation" },
	{ "deep",	1, ": protocol violation" },
	{ "types",	1, ": protocol violation" },
	{ "version",	1, ": protocol violation" },
	{ "foreign",	2, ": protocol violation" },
	{ "mixed",	2, ": protocol violation" },
	{ "short",	2, ": hung" },
};

static struct it	 T;
static char		 words[512];

struct honest {
	int		 h_fd;
	char		 h_id[64];
	struct buf	 h_out;
};

static void
honest_start(struct honest *h)
{
	char		*body, mock[700];
	const char	*p;
	size_t		 i;

	for (i = 0, words[0] = '\0'; i < 40; i++)
		snprintf(words + strlen(words), sizeof(words) - strlen(words),
		    "%sh%02zu", i ? " " : "", i);
	snprintf(mock, sizeof(mock), "{\"text\": \"%s\", \"delay_ms\": %d}",
	    words, chaos_full() ? 300 : 150);
	body = chaos_body(true, mock);
	for (i = 0; i < NSTREAMS; i++) {
		h[i].h_fd = it_connect(&T);
		it_send_post(h[i].h_fd, "/v1/chat/completions", body, NULL);
		ck_assert(it_read_until(h[i].h_fd, &h[i].h_out,
		    "\"content\":\"h00\"", 5000));
		p = strstr(h[i].h_out.b_data, "X-Request-Id: ");
		ck_assert_ptr_nonnull(p);
		snprintf(h[i].h_id, sizeof(h[i].h_id), "%.*s",
		    (int)strcspn(p + 14, "\r\n"), p + 14);
	}
	free(body);
}

/* Every honest stream ends whole: all its words, [DONE], no error. */
static void
honest_check(struct honest *h)
{
	struct sse_summary	 ss;
	size_t			 i;

	for (i = 0; i < NSTREAMS; i++) {
		it_read_until(h[i].h_fd, &h[i].h_out, "data: [DONE]", 30000);
		close(h[i].h_fd);
		it_sse_parse(strstr(h[i].h_out.b_data, "\r\n\r\n") + 4, &ss);
		ck_assert_msg(ss.ss_done && !ss.ss_error &&
		    strcmp(ss.ss_text, words) == 0, "honest stream %zu (%s) "
		    "hurt: '%s'", i, h[i].h_id, ss.ss_text);
		free(ss.ss_text);
		buf_free(&h[i].h_out);
	}
}

/* One round: a trigger file per kind, then as many requests at once;
 * every one of them gets an error. */
static void
round_run(int round, const char *victim_id)
{
	struct it_stream	 s[NKINDS];
	char			 path[400], spec[128], *body;
	size_t			 i, n = 0;

	body = chaos_body(false, "{\"text\": \"rogue bait\"}");
	for (i = 0; i < NKINDS; i++) {
		if (kinds[i].k_round != round)
			continue;
		snprintf(path, sizeof(path), "%s/rogue/%s", T.it_dir,
		    kinds[i].k_name);
		snprintf(spec, sizeof(spec), "%s %d %s\n", kinds[i].k_name,
		    NFRAMES, victim_id);
		chaos_put(path, spec);
		memset(&s[n], 0, sizeof(s[n]));
		s[n++].s_body = body;
	}
	it_streams(&T, s, n, 15000, NULL, NULL);
	for (i = 0; i < n; i++) {
		ck_assert_msg(s[i].s_status == 502, "rogue request %zu of "
		    "round %d: %ld %s", i, round, s[i].s_status,
		    s[i].s_out.b_data);
		buf_free(&s[i].s_out);
	}
	free(body);
}

/* The rogue of kind k: its pid from its own log line, and the ms from
 * that line to the gateway's decision to kill it. */
static void
kind_check(const char *log, const struct kind *k)
{
	char		 what[64], spid[32], scolon[32];
	const char	*rogue[] = { "fault: rogue: ", what, NULL };
	const char	*kill_line[] = { "killing worker ", scolon, k->k_kill,
			    NULL };
	const char	*viol[] = { "protocol violation: ", spid, NULL };
	const char	*lr, *lk, *lv, *why = "(hung: no whole frame)\n";
	int		 pid;

	snprintf(what, sizeof(what), " %s frames", k->k_name);
	lr = chaos_find_line(log, 0, rogue);
	ck_assert_msg(lr != NULL, "no %s rogue", k->k_name);
	ck_assert_int_eq(sscanf(strchr(lr, '[') + 1, "%d", &pid), 1);
	snprintf(spid, sizeof(spid), "pid %d ", pid);
	snprintf(scolon, sizeof(scolon), "pid %d:", pid);
	lk = chaos_find_line(log, (size_t)(lr - log), kill_line);
	ck_assert_msg(lk != NULL, "the %s rogue (pid %d) was not killed for "
	    "'%s'", k->k_name, pid, k->k_kill);
	if ((lv = chaos_find_line(log, (size_t)(lr - log), viol)) != NULL)
		why = strstr(lv, "protocol violation: ") + 20;
	chaos_say("rogue: %-9s pid %d killed %lld ms after its first frame: "
	    "%.*s", k->k_name, pid, (long long)(chaos_line_ms(log, lk) -
	    chaos_line_ms(log, lr)), (int)strcspn(why, "\n"), why);
	ck_assert_int_eq(chaos_proc_state((pid_t)pid), 0);
}

/* The pool is whole again: every slot respawned, nobody disabled. */
static void
pool_check(long rss_before)
{
	char	*log, status[32] = "";
	size_t	 len, i;
	long	 code;

	it_wait_idle(&T, CHAOS_WORKERS);
	log = chaos_log(&T, &len);
	for (i = 0; i < NKINDS; i++)
		kind_check(log, &kinds[i]);
	ck_assert_msg(strstr(log, "not respawning") == NULL, "a rogue "
	    "disabled respawning");
	free(log);
	code = chaos_health(&T, "status", status, sizeof(status));
	chaos_say("rogue: %zu rogues x %d frames; /health %ld %s, %ld "
	    "crashes counted, %ld live workers; gateway RSS %ld KiB before, "
	    "%ld KiB after", NKINDS, NFRAMES, code, status,
	    chaos_health(&T, "crashes", NULL, 0), chaos_health(&T, "live",
	    NULL, 0), rss_before, chaos_rss_kib(T.it_gw));
	ck_assert_int_eq(code, 200);
	ck_assert_int_eq(chaos_health(&T, "crashes", NULL, 0), (long)NKINDS);
	ck_assert_int_eq(chaos_health(&T, "live", NULL, 0), CHAOS_WORKERS);
}

START_TEST(rogue_workers)
{
	struct honest	 h[NSTREAMS];
	char		 env[400], dir[300];
	long		 rss;

	memset(h, 0, sizeof(h));
	chaos_prepare(&T, "\"hang_timeout_s\": 2");
	snprintf(dir, sizeof(dir), "%s/rogue", T.it_dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(env, sizeof(env), "SLUICE_FAULT=rogue=%s", dir);
	chaos_launch(&T, env);
	rss = chaos_rss_kib(T.it_gw);
	honest_start(h);
	it_sleep(1100);		/* the workers count as healthy: each death */
				/* costs the 100 ms respawn delay, no more */
	round_run(1, h[0].h_id);
	it_wait_idle(&T, CHAOS_WORKERS - NSTREAMS);
	round_run(2, h[0].h_id);
	honest_check(h);
	pool_check(rss);
	it_stop_clean(&T);
}
END_TEST

void
chaos_add_rogue(Suite *s)
{
	chaos_tcase(s, "rogue", rogue_workers, 90);
}
