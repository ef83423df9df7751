/* chaos.h - the chaos suite's shared helpers: modes, processes, the gateway log, the pool, figures. */
#ifndef SLUICE_CHAOS_H
#define SLUICE_CHAOS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../it/harness.h"

#define CHAOS_WORKERS	8	/* every scenario runs this pool */

#if defined(__SANITIZE_ADDRESS__)
#define CHAOS_ASAN	1
#else
#define CHAOS_ASAN	0
#endif

/* True under make chaos (CHAOS_FULL=1 in the environment): the long
 * versions of the scenarios. make check runs the short ones. */
bool	chaos_full(void);

/* normal in an ordinary build, asan in a sanitizer build (where every
 * process runs several times slower). */
long	chaos_limit(long normal, long asan);

/* Adds a test case of one test, name, with a timeout in seconds. */
void	chaos_tcase(Suite *, const char *name, const TTest *test,
	    int timeout_s);

/* Start the mock and a gateway of CHAOS_WORKERS workers. settings are
 * more sluice.json members (without braces, NULL for none), env as for
 * it_gateway_start. Waits until every worker is idle. */
void	chaos_start(struct it *, const char *settings, const char *env);

/* chaos_start in two steps, for a test that needs the config folder
 * (t->it_dir) before the gateway starts. */
void	chaos_prepare(struct it *, const char *settings);
void	chaos_launch(struct it *, const char *env);

/* A chat body whose user message scripts the mock with mock_json;
 * caller frees. */
char	*chaos_body(bool stream, const char *mock_json);

/* State letter of a process from /proc ('R', 'S', 'T', 'Z', ...), or 0
 * once it is gone. */
char	chaos_proc_state(pid_t);

/* Resident memory of a process in KiB, -1 when unknown. */
long	chaos_rss_kib(pid_t);

/* Children of parent in state (a letter as in chaos_proc_state, or 0
 * for any state): their count, and up to max of their pids in out (out
 * may be NULL). */
size_t	chaos_children(pid_t parent, char state, pid_t *out, size_t max);

/* One worker as /admin/workers shows it. */
struct chaos_worker {
	unsigned	 cw_slot;
	pid_t		 cw_pid;
	char		 cw_state[16];
	double		 cw_age_s;
	char		 cw_rqid[64];
};

/* The pool now (at most max workers); 0 when the gateway does not
 * answer. */
size_t	chaos_workers(struct it *, struct chaos_worker *, size_t max);

/* A /health member: "status" into out, or a number of "workers" (live,
 * idle, busy, ...) or of the top level (crashes, hung) as the return
 * value; -1 when the gateway does not answer. */
long	chaos_health(struct it *, const char *key, char *status, size_t len);

/* The mock's counters: LLM calls still open and calls whose client
 * (a worker) left. */
void	chaos_mock_stats(struct it *, long *active, long *gone);

/* The whole gateway log, NUL-terminated (caller frees); *len its size. */
char	*chaos_log(struct it *, size_t *len);

/* Unix time in ms of the timestamp that starts the log line holding p,
 * -1 when the line has none. */
int64_t	chaos_line_ms(const char *log, const char *p);

/* The worker pid of request rqid's access-log line: its pid, 0 when the
 * line says worker=0, -1 when there is no such line. */
long	chaos_access_worker(const char *log, const char *rqid);

/* The first line after byte from of log that holds every one of the
 * needles (NULL-terminated list); NULL when none. */
const char *chaos_find_line(const char *log, size_t from,
	    const char *const *needles);

/* The value at percentile pct (0..100) of n values; sorts v. */
long	chaos_pct(long *v, size_t n, double pct);

/* Print one figure line "chaos: ..." on stdout and flush it. */
void	chaos_say(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

/* Write a file atomically (a temporary name, then rename). */
void	chaos_put(const char *path, const char *text);

/* The scenarios, each adding its test cases to s. */
void	chaos_add_storm(Suite *);
void	chaos_add_hang(Suite *);
void	chaos_add_rogue(Suite *);
void	chaos_add_crashloop(Suite *);
void	chaos_add_deadline(Suite *);
void	chaos_add_gwkill(Suite *);

#endif
