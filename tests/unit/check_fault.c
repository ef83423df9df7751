/* check_fault.c - the worker's test-only fault injection (SLUICE_FAULT): what each entry does, the hooks a no-op without it. */
#include <check.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../../worker/fault.h"
#include "../testmain.h"
#include "fakegw.h"
#include "scratchdir.h"

#define QUIET_MS	300	/* long enough to tell a hang from work */

static struct scratchdir	 t_dir;
static struct fakegw		 t_gw;

static void
setup(void)
{
	scratchdir_make(&t_dir, "fault");
	unsetenv("SLUICE_FAULT");
}

static void
teardown(void)
{
	scratchdir_remove(&t_dir);
}

/* SLUICE_FAULT=value (printf-formatted), read as the worker does. */
static void
faults(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
faults(const char *fmt, ...)
{
	char	*v;
	va_list	 ap;

	va_start(ap, fmt);
	ck_assert_int_ne(vasprintf(&v, fmt, ap), -1);
	va_end(ap);
	setenv("SLUICE_FAULT", v, 1);
	free(v);
	fault_init(-1);
}

/* The worker's side in a child: the faults read, then its start or
 * its first request. */
static int
child_start(int fd, void *arg)
{
	fault_init(fd);
	fault_at_start();
	return 0;
}

static int
child_request(int fd, void *arg)
{
	fault_init(fd);
	fault_on_request();
	return 0;
}

/* The child runs on and is silent for QUIET_MS: it hangs. */
static void
ck_hangs(struct fakegw *g)
{
	const unsigned char	*p;
	size_t			 n;
	int			 st;

	ck_assert_int_eq(fakegw_frame(g, &p, &n, QUIET_MS), FG_TIMEOUT);
	ck_assert_int_eq(waitpid(g->fg_pid, &st, WNOHANG), 0);
}

/* The child returned from the hook (exit 0). */
static void
ck_returns(struct fakegw *g)
{
	int	 st = fakegw_wait(g, 5000);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
}

/* ---- without SLUICE_FAULT ---- */

START_TEST(unset_hooks_do_nothing)
{
	fault_init(-1);
	fault_at_start();
	fault_on_request();
	ck_assert_int_eq(fault_version_skew(), 0);
	ck_assert_uint_eq(fault_after_ms(), 0);
	setenv("SLUICE_FAULT", "", 1);
	fault_init(-1);
	fault_at_start();
	fault_on_request();
	ck_assert_int_eq(fault_version_skew(), 0);
	ck_assert_uint_eq(fault_after_ms(), 0);
}
END_TEST

/* ---- the values ---- */

START_TEST(after_ms_value)
{
	faults("after_ms=250");
	ck_assert_uint_eq(fault_after_ms(), 250);
	faults("ignore_term,after_ms=1500,bad_version");
	ck_assert_uint_eq(fault_after_ms(), 1500);
	faults("after_ms");
	ck_assert_uint_eq(fault_after_ms(), 0);
	faults("xafter_ms=9");
	ck_assert_uint_eq(fault_after_ms(), 0);
	faults("after_ms=x");
	ck_assert_uint_eq(fault_after_ms(), 0);
}
END_TEST

START_TEST(version_skew_value)
{
	faults("bad_version");
	ck_assert_int_eq(fault_version_skew(), 1);
	faults("hang,bad_version,after_ms=3");
	ck_assert_int_eq(fault_version_skew(), 1);
	faults("bad_versions");
	ck_assert_int_eq(fault_version_skew(), 0);
	faults("not_bad_version");
	ck_assert_int_eq(fault_version_skew(), 0);
	faults("bad_version=1");
	ck_assert_int_eq(fault_version_skew(), 0);
}
END_TEST

/* An entry is a whole name between commas: crash_start=... is not
 * crash, hangover is not hang. */
START_TEST(names_are_whole_entries)
{
	faults("crash_start=%s/none,hangover,exit_configs,no_hellos",
	    t_dir.sc_path);
	fakegw_start(&t_gw, child_request, NULL);
	ck_returns(&t_gw);
	fakegw_free(&t_gw);
	fakegw_start(&t_gw, child_start, NULL);
	ck_returns(&t_gw);
	fakegw_free(&t_gw);
}
END_TEST

/* ---- at start ---- */

START_TEST(exit_config_exits)
{
	faults("exit_config");
	fault_at_start();
}
END_TEST

START_TEST(crash_start_while_the_file_exists)
{
	scratchdir_put(&t_dir, "crash", "x");
	faults("after_ms=5,crash_start=%s/crash", t_dir.sc_path);
	fault_at_start();
}
END_TEST

START_TEST(crash_start_without_the_file)
{
	faults("crash_start=%s/crash", t_dir.sc_path);
	fault_at_start();
	fault_on_request();
}
END_TEST

START_TEST(ignore_term_ignores_sigterm)
{
	struct sigaction	 sa;

	faults("ignore_term");
	fault_at_start();
	ck_assert_int_eq(sigaction(SIGTERM, NULL, &sa), 0);
	ck_assert(sa.sa_handler == SIG_IGN);
	raise(SIGTERM);
}
END_TEST

START_TEST(no_hello_waits_forever)
{
	faults("no_hello");
	fakegw_start(&t_gw, child_start, NULL);
	ck_hangs(&t_gw);
	fakegw_free(&t_gw);
}
END_TEST

/* ---- when a request arrives ---- */

START_TEST(crash_on_request)
{
	faults("crash");
	fault_at_start();
	fault_on_request();
}
END_TEST

START_TEST(hang_on_request)
{
	faults("hang");
	fakegw_start(&t_gw, child_request, NULL);
	ck_hangs(&t_gw);
	fakegw_free(&t_gw);
}
END_TEST

/* A whole frame of three bytes that is no MessagePack. */
START_TEST(bad_frame_on_request)
{
	const unsigned char	*p;
	size_t			 n;
	struct proto_msg	 m;
	char			 err[PROTO_ERRLEN];

	faults("bad_frame");
	fakegw_start(&t_gw, child_request, NULL);
	ck_assert_int_eq(fakegw_frame(&t_gw, &p, &n, 5000), FG_FRAME);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(proto_decode(p, n, &m, err), -1);
	proto_msg_free(&m);
	ck_returns(&t_gw);
	fakegw_free(&t_gw);
}
END_TEST

/* ---- rogue=DIR ---- */

/* A rogue worker with trigger file "name" of text spec. */
static void
rogue(const char *spec)
{
	scratchdir_put(&t_dir, "rogue/t1", "%s\n", spec);
	faults("rogue=%s/rogue", t_dir.sc_path);
	fakegw_start(&t_gw, child_request, NULL);
}

/* The rogue's next frame fails to decode (with the worker's version
 * mismatch noted in *version). */
static void
ck_undecodable(uint32_t *version)
{
	const unsigned char	*p;
	size_t			 n;
	struct proto_msg	 m;
	char			 err[PROTO_ERRLEN];

	ck_assert_int_eq(fakegw_frame(&t_gw, &p, &n, 5000), FG_FRAME);
	ck_assert_int_eq(proto_decode(p, n, &m, err), -1);
	if (version != NULL)
		*version = m.m_version;
	proto_msg_free(&m);
}

/* The trigger file is gone: claimed, read and removed. */
static void
ck_claimed(void)
{
	char		*dir = scratchdir_path(&t_dir, "rogue");
	char		*cmd = xasprintf("test -z \"$(ls -A %s)\"", dir);

	ck_assert_msg(system(cmd) == 0, "%s is not empty", dir);
	free(cmd);
	free(dir);
}

/* foreign: well-formed REQ_CHUNKs naming another request, COUNT of
 * them, then silence until killed. */
START_TEST(rogue_foreign_frames)
{
	struct proto_msg	 m;
	unsigned		 i;

	rogue("foreign 3 rq-other");
	for (i = 0; i < 3; i++) {
		fakegw_next(&t_gw, &m, 5000);
		ck_assert_uint_eq(m.m_type, PROTO_REQ_CHUNK);
		ck_assert(str_eq(m.m_rqid, "rq-other"));
		ck_assert_uint_eq(m.m_u.req_chunk.seq, i);
		ck_assert(str_eq(m.m_u.req_chunk.content, "rogue"));
		proto_msg_free(&m);
	}
	ck_hangs(&t_gw);
	ck_claimed();
	fakegw_free(&t_gw);
}
END_TEST

START_TEST(rogue_huge_length)
{
	const unsigned char	*p;
	size_t			 n;

	rogue("huge 1");
	ck_assert_int_eq(fakegw_frame(&t_gw, &p, &n, 5000), FG_OVERSIZE);
	fakegw_free(&t_gw);
}
END_TEST

/* short: a length of 1000 and 8 bytes, then nothing more, whatever
 * COUNT says. */
START_TEST(rogue_short_frame)
{
	const unsigned char	*p;
	size_t			 n;

	rogue("short 50");
	ck_hangs(&t_gw);
	ck_assert_uint_eq(t_gw.fg_rd.fr_len, FRAME_HDRLEN + 8);
	ck_assert_int_eq(fakegw_frame(&t_gw, &p, &n, 0), FG_TIMEOUT);
	fakegw_free(&t_gw);
}
END_TEST

/* Each kind of malformed payload, COUNT times. */
START_TEST(rogue_undecodable_payloads)
{
	static const char *const kinds[] = { "truncated", "garbage", "deep",
	    "types" };
	char		 spec[32];
	size_t		 i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(spec, sizeof(spec), "%s 2", kinds[i]);
		rogue(spec);
		ck_undecodable(NULL);
		ck_undecodable(NULL);
		ck_hangs(&t_gw);
		fakegw_free(&t_gw);
	}
}
END_TEST

START_TEST(rogue_other_version)
{
	uint32_t	 v = 0;

	rogue("version 1");
	ck_undecodable(&v);
	ck_assert_uint_eq(v, 99);
	fakegw_free(&t_gw);
}
END_TEST

/* mixed: every kind in turn, the silent one (short) replaced. */
START_TEST(rogue_mixed)
{
	const unsigned char	*p;
	size_t			 n;
	struct proto_msg	 m;
	uint32_t		 v = 0;

	rogue("mixed 8 rq-x");
	ck_assert_int_eq(fakegw_frame(&t_gw, &p, &n, 5000), FG_OVERSIZE);
	/* The reader refuses to go on; step over the huge frame's header
	 * and its 8 bytes (one write, so they came in one read). */
	ck_assert_uint_ge(t_gw.fg_rd.fr_len, FRAME_HDRLEN + 8);
	t_gw.fg_rd.fr_off += FRAME_HDRLEN + 8;
	ck_undecodable(NULL);		/* short, as garbage */
	ck_undecodable(NULL);		/* truncated */
	ck_undecodable(NULL);		/* garbage */
	ck_undecodable(NULL);		/* deep */
	ck_undecodable(NULL);		/* types */
	ck_undecodable(&v);		/* version */
	ck_assert_uint_eq(v, 99);
	fakegw_next(&t_gw, &m, 5000);	/* foreign */
	ck_assert(str_eq(m.m_rqid, "rq-x"));
	proto_msg_free(&m);
	ck_hangs(&t_gw);
	fakegw_free(&t_gw);
}
END_TEST

/* A trigger naming no kind is removed and the worker carries on. */
START_TEST(rogue_unknown_kind)
{
	rogue("bogus 5");
	ck_returns(&t_gw);
	ck_claimed();
	fakegw_free(&t_gw);
}
END_TEST

/* Dotfiles are not triggers (they are the claimed files' names); with
 * none left, the worker is not a rogue. */
START_TEST(rogue_without_a_trigger)
{
	char		*left;
	struct stat	 st;

	scratchdir_put(&t_dir, "rogue/.hidden", "foreign 1\n");
	faults("rogue=%s/rogue", t_dir.sc_path);
	fakegw_start(&t_gw, child_request, NULL);
	ck_returns(&t_gw);
	left = scratchdir_path(&t_dir, "rogue/.hidden");
	ck_assert_int_eq(stat(left, &st), 0);
	free(left);
	fakegw_free(&t_gw);
}
END_TEST

/* Two workers, one trigger: one rogue. */
START_TEST(rogue_one_trigger_one_rogue)
{
	struct fakegw		 other;
	const unsigned char	*p;
	size_t			 n;
	enum fakegw_got		 a, b;

	rogue("garbage 1");
	fakegw_start(&other, child_request, NULL);
	a = fakegw_frame(&t_gw, &p, &n, QUIET_MS);
	b = fakegw_frame(&other, &p, &n, QUIET_MS);
	ck_assert_msg((a == FG_FRAME) != (b == FG_FRAME), "%d %d", a, b);
	fakegw_free(&other);
	fakegw_free(&t_gw);
}
END_TEST

/* A case whose tests each get a scratch folder of their own; with
 * dying, one the case's tests share, made and removed by the runner:
 * a test that ends in exit() or a signal never reaches a teardown of
 * its own, which would leave its folder behind. */
static TCase *
tcase(Suite *s, const char *name, bool dying)
{
	TCase	*tc = tcase_create(name);

	if (dying)
		tcase_add_unchecked_fixture(tc, setup, teardown);
	else
		tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *
fault_suite(void)
{
	Suite	*s = suite_create("fault");
	TCase	*tc;

	tc = tcase(s, "unset", false);
	tcase_add_test(tc, unset_hooks_do_nothing);
	tc = tcase(s, "values", false);
	tcase_add_test(tc, after_ms_value);
	tcase_add_test(tc, version_skew_value);
	tcase_add_test(tc, names_are_whole_entries);
	tc = tcase(s, "dying", true);
	tcase_add_exit_test(tc, exit_config_exits, EX_CONFIG);
	tcase_add_test_raise_signal(tc, crash_start_while_the_file_exists,
	    SIGABRT);
	tcase_add_test_raise_signal(tc, crash_on_request, SIGABRT);
	tc = tcase(s, "at_start", false);
	tcase_add_test(tc, crash_start_without_the_file);
	tcase_add_test(tc, ignore_term_ignores_sigterm);
	tcase_add_test(tc, no_hello_waits_forever);
	tc = tcase(s, "on_request", false);
	tcase_add_test(tc, hang_on_request);
	tcase_add_test(tc, bad_frame_on_request);
	tc = tcase(s, "rogue", false);
	tcase_add_test(tc, rogue_foreign_frames);
	tcase_add_test(tc, rogue_huge_length);
	tcase_add_test(tc, rogue_short_frame);
	tcase_add_test(tc, rogue_undecodable_payloads);
	tcase_add_test(tc, rogue_other_version);
	tcase_add_test(tc, rogue_mixed);
	tcase_add_test(tc, rogue_unknown_kind);
	tcase_add_test(tc, rogue_without_a_trigger);
	tcase_add_test(tc, rogue_one_trigger_one_rogue);
	return s;
}

int
main(void)
{
	return check_main(fault_suite());
}
