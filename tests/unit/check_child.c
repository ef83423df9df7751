/* check_child.c - child processes: spawned by PATH without a shell, env and cwd given, pipes, nothing leaked, the whole group killed. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../worker/tools/child.h"
#include "../../worker/tools/childrun.h"
#include "../testmain.h"

static char	 t_dir[] = "/tmp/check_child.XXXXXX";

static void
dir_setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(t_dir));
}

static void
dir_teardown(void)
{
	char	*cmd;

	if (asprintf(&cmd, "rm -rf '%s'", t_dir) != -1) {
		(void)system(cmd);
		free(cmd);
	}
}

/* An executable shell script at dir/name printing text. */
static void
script(const char *dir, const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fprintf(f, "#!/bin/sh\necho %s \"$@\"\n", text);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

/* Run argv (argv[0] looked up on PATH) to its end with in on stdin;
 * returns how it ended, output in io (caller frees its buffers). */
static enum child_end
run(struct child *c, char *const *argv, char *const *envp, const char *cwd,
    const char *in, struct child_io *io)
{
	struct child_spec	 cs = { argv[0], argv, envp, cwd, true, true };
	struct buf		 err = BUF_INIT;
	enum child_end		 end;

	*io = (struct child_io){ in, in != NULL ? strlen(in) : 0, SIZE_MAX,
	    SIZE_MAX, BUF_INIT, BUF_INIT };
	ck_assert_msg(child_spawn(c, &cs, &err) == 0, "spawn %s: %s",
	    argv[0], err.b_data);
	buf_free(&err);
	end = child_run(c, io, clock_mono_ms() + 10000, NULL);
	child_kill(c);
	return end;
}

static void
ck_output(struct child_io *io, const char *want)
{
	ck_assert_msg(io->ci_out.b_len == strlen(want) &&
	    memcmp(io->ci_out.b_data, want, io->ci_out.b_len) == 0,
	    "stdout '%.*s', want '%s'", (int)io->ci_out.b_len,
	    io->ci_out.b_data != NULL ? io->ci_out.b_data : "", want);
}

static void
io_free(struct child_io *io)
{
	buf_free(&io->ci_out);
	buf_free(&io->ci_err);
}

/* A process that is gone, or a zombie (killed, waiting for its
 * reaper), within a second. */
static bool
dead(pid_t pid)
{
	char	 path[64], line[512], *p;
	FILE	*f;
	int	 i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (i = 0; i < 100; i++) {
		if ((f = fopen(path, "r")) == NULL)
			return true;
		p = fgets(line, sizeof(line), f);
		fclose(f);
		if (p != NULL && (p = strrchr(line, ')')) != NULL &&
		    p[1] == ' ' && p[2] == 'Z')
			return true;
		usleep(10000);
	}
	return false;
}

START_TEST(spawn_by_path)
{
	char		 rel[] = "sluice-child-probe", *argv[] = { rel,
			    (char *)"a b", NULL };
	char		 path[PATH_MAX + 32], sub[PATH_MAX];
	struct child	 c;
	struct child_io	 io;

	/* A relative PATH entry is skipped, even when it has the program. */
	snprintf(sub, sizeof(sub), "%s/rel", t_dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(chdir(t_dir), 0);
	script(sub, rel, "relative");
	script(t_dir, rel, "absolute");
	snprintf(path, sizeof(path), "rel:%s:/usr/bin:/bin", t_dir);
	setenv("PATH", path, 1);
	ck_assert_int_eq(run(&c, argv, NULL, NULL, NULL, &io), CHILD_DONE);
	ck_output(&io, "absolute a b\n");
	ck_assert(WIFEXITED(c.ch_status) && WEXITSTATUS(c.ch_status) == 0);
	ck_assert(!c.ch_lost);
	ck_assert_int_eq(c.ch_pid, -1);
	io_free(&io);
}
END_TEST

START_TEST(spawn_enoent)
{
	char			*argv[] = { (char *)"sluice-no-such-program",
				    NULL };
	struct child_spec	 cs = { argv[0], argv, NULL, NULL, true, true };
	struct child		 c;
	struct buf		 err = BUF_INIT;

	errno = 0;
	ck_assert_int_eq(child_spawn(&c, &cs, &err), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(err.b_data,
	    "sluice-no-such-program was not found on PATH");
	ck_assert(c.ch_pid == -1 && c.ch_in == -1 && c.ch_out == -1 &&
	    c.ch_err == -1);
	buf_reset(&err);
	cs.cs_file = "/nonexistent/sluice-prog";
	errno = 0;
	ck_assert_int_eq(child_spawn(&c, &cs, &err), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(err.b_data, "cannot start /nonexistent/sluice-prog: "
	    "No such file or directory");
	ck_assert(c.ch_pid == -1 && c.ch_out == -1);
	/* A working directory that is not there: nothing started. */
	buf_reset(&err);
	cs.cs_file = "/bin/true";
	cs.cs_cwd = "/nonexistent-dir";
	ck_assert_int_eq(child_spawn(&c, &cs, &err), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert(c.ch_pid == -1 && c.ch_out == -1);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	buf_free(&err);
}
END_TEST

START_TEST(env_and_cwd)
{
	char		*argv[] = { (char *)"env", NULL };
	char		*pwd[] = { (char *)"pwd", NULL };
	char		*envp[] = { (char *)"A=1", (char *)"B=two words", NULL };
	char		 real[PATH_MAX], want[PATH_MAX + 2];
	struct child	 c;
	struct child_io	 io;

	ck_assert_int_eq(run(&c, argv, envp, NULL, NULL, &io), CHILD_DONE);
	ck_output(&io, "A=1\nB=two words\n");
	io_free(&io);
	ck_assert_ptr_nonnull(realpath(t_dir, real));
	snprintf(want, sizeof(want), "%s\n", real);
	ck_assert_int_eq(run(&c, pwd, NULL, t_dir, NULL, &io), CHILD_DONE);
	ck_output(&io, want);
	io_free(&io);
	/* NULL envp: the worker's own. */
	setenv("SLUICE_CHILD_TEST", "inherited", 1);
	{
		char	*sh[] = { (char *)"sh", (char *)"-c",
			    (char *)"printf %s \"$SLUICE_CHILD_TEST\"", NULL };

		ck_assert_int_eq(run(&c, sh, NULL, NULL, NULL, &io),
		    CHILD_DONE);
		ck_output(&io, "inherited");
		io_free(&io);
	}
}
END_TEST

START_TEST(pipes)
{
	char		*cat[] = { (char *)"cat", NULL };
	char		*sh[] = { (char *)"sh", (char *)"-c",
			    (char *)"echo out; echo err >&2; exit 3", NULL };
	char		*big;
	struct child	 c;
	struct child_io	 io;

	ck_assert_int_eq(run(&c, cat, NULL, NULL, "hello\nworld", &io),
	    CHILD_DONE);
	ck_output(&io, "hello\nworld");
	io_free(&io);
	/* More than any pipe holds, both ways at once. */
	big = malloc(1 << 20);
	memset(big, 'x', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	ck_assert_int_eq(run(&c, cat, NULL, NULL, big, &io), CHILD_DONE);
	ck_output(&io, big);
	io_free(&io);
	free(big);
	ck_assert_int_eq(run(&c, sh, NULL, NULL, NULL, &io), CHILD_DONE);
	ck_output(&io, "out\n");
	ck_assert_str_eq(io.ci_err.b_data, "err\n");
	ck_assert(WIFEXITED(c.ch_status) && WEXITSTATUS(c.ch_status) == 3);
	io_free(&io);
}
END_TEST

/* A child that never reads its stdin: writing to it is EPIPE, and the
 * worker gets no SIGPIPE. */
START_TEST(pipes_no_sigpipe)
{
	char		*argv[] = { (char *)"true", NULL };
	char		*big = malloc(1 << 20);
	struct child	 c;
	struct child_io	 io;

	memset(big, 'y', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	ck_assert_int_eq(run(&c, argv, NULL, NULL, big, &io), CHILD_DONE);
	ck_assert(WIFEXITED(c.ch_status) && WEXITSTATUS(c.ch_status) == 0);
	io_free(&io);
	free(big);
}
END_TEST

/* Caps: stdout past its cap ends the run with exactly the cap kept;
 * stderr is cut silently. */
START_TEST(caps)
{
	char			*argv[] = { (char *)"sh", (char *)"-c",
				    (char *)"echo 123456789 >&2; "
				    "head -c 100000 /dev/zero", NULL };
	struct child_spec	 cs = { "sh", argv, NULL, NULL, false, true };
	struct child		 c;
	struct child_io		 io = { NULL, 0, 1000, 4, BUF_INIT, BUF_INIT };
	struct buf		 err = BUF_INIT;

	ck_assert_int_eq(child_spawn(&c, &cs, &err), 0);
	ck_assert_int_eq(c.ch_in, -1);
	ck_assert_int_eq(child_run(&c, &io, clock_mono_ms() + 10000, NULL),
	    CHILD_CAP);
	child_kill(&c);
	ck_assert_uint_eq(io.ci_out.b_len, 1000);
	ck_assert_int_eq(c.ch_out, -1);
	io.ci_outcap = SIZE_MAX;
	buf_reset(&io.ci_out);
	buf_reset(&io.ci_err);
	ck_assert_int_eq(child_spawn(&c, &cs, &err), 0);
	ck_assert_int_eq(child_run(&c, &io, clock_mono_ms() + 10000, NULL),
	    CHILD_DONE);
	ck_assert_uint_eq(io.ci_out.b_len, 100000);
	ck_assert_uint_eq(io.ci_err.b_len, 4);
	ck_assert(memcmp(io.ci_err.b_data, "1234", 4) == 0);
	io_free(&io);
	buf_free(&err);
}
END_TEST

START_TEST(timeout_and_cancel)
{
	char			*argv[] = { (char *)"sleep", (char *)"30", NULL };
	struct child_spec	 cs = { "sleep", argv, NULL, NULL, false, false };
	struct child		 c;
	struct child_io		 io = { NULL, 0, SIZE_MAX, 0, BUF_INIT,
				    BUF_INIT };
	struct transport_hooks	 h = { -1, 50, NULL, NULL };
	uint64_t		 t0 = clock_mono_ms();
	pid_t			 pid;

	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	pid = c.ch_pid;
	ck_assert_int_eq(child_run(&c, &io, t0 + 200, &h), CHILD_TIMEOUT);
	ck_assert_uint_ge(clock_mono_ms() - t0, 200);
	child_kill(&c);
	ck_assert(WIFSIGNALED(c.ch_status) &&
	    WTERMSIG(c.ch_status) == SIGKILL);
	ck_assert_uint_lt(clock_mono_ms() - t0, 2000);
	ck_assert_int_eq(kill(pid, 0), -1);
	io_free(&io);
}
END_TEST

static int
wake_cancel(void *arg, bool readable)
{
	int	*n = arg;

	return ++*n == 3 ? 1 : 0;
}

START_TEST(cancel)
{
	char			*argv[] = { (char *)"sleep", (char *)"30", NULL };
	struct child_spec	 cs = { "sleep", argv, NULL, NULL, false, false };
	struct child		 c;
	struct child_io		 io = { NULL, 0, SIZE_MAX, 0, BUF_INIT,
				    BUF_INIT };
	int			 n = 0;
	struct transport_hooks	 h = { -1, 20, wake_cancel, &n };
	uint64_t		 t0 = clock_mono_ms();

	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	ck_assert_int_eq(child_run(&c, &io, t0 + 10000, &h), CHILD_CANCELLED);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_lt(clock_mono_ms() - t0, 1000);
	child_kill(&c);
	ck_assert_int_eq(c.ch_pid, -1);
	io_free(&io);
}
END_TEST

/* Read "PID\n" a child printed, within 5 s. */
static pid_t
read_pid(struct child *c)
{
	char		 line[32];
	size_t		 n = 0;
	ssize_t		 r;
	uint64_t	 end = clock_mono_ms() + 5000;

	while (n < sizeof(line) - 1 && clock_mono_ms() < end) {
		r = read(c->ch_out, line + n, 1);
		if (r == 1 && line[n] == '\n')
			break;
		if (r == 1)
			n++;
		else
			usleep(5000);
	}
	line[n] = '\0';
	return (pid_t)atoi(line);
}

/* It ignores its stdin's end and SIGTERM, and so does the grandchild
 * it started: SIGKILL to the group takes both, none is left over. */
START_TEST(stop_escalates)
{
	char			*argv[] = { (char *)"sh", (char *)"-c",
				    (char *)"trap '' TERM; sleep 300 & "
				    "echo $!; exec sleep 300", NULL };
	struct child_spec	 cs = { "sh", argv, NULL, NULL, true, true };
	struct child		 c;
	uint64_t		 t0;
	pid_t			 pid, kid;
	int			 st;

	/* Orphans come to this test, which can then see they died. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	pid = c.ch_pid;
	ck_assert_int_eq(getpgid(pid), pid);
	ck_assert_int_gt(kid = read_pid(&c), 0);
	ck_assert_int_eq(getpgid(kid), pid);
	t0 = clock_mono_ms();
	ck_assert(!child_stop(&c, 200));
	ck_assert_uint_ge(clock_mono_ms() - t0, 400);
	ck_assert(WIFSIGNALED(c.ch_status) &&
	    WTERMSIG(c.ch_status) == SIGKILL);
	ck_assert(c.ch_pid == -1 && c.ch_in == -1 && c.ch_out == -1 &&
	    c.ch_err == -1);
	/* The child itself is reaped: no zombie of it. */
	ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	ck_assert_msg(dead(kid), "the grandchild %d survived", (int)kid);
	ck_assert_int_eq(waitpid(kid, &st, 0), kid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ck_assert_int_eq(kill(-pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
}
END_TEST

/* The gentle ends: on stdin's close (true), on SIGTERM (false). */
START_TEST(stop_gentle)
{
	char			*cat[] = { (char *)"cat", NULL };
	char			*slp[] = { (char *)"sleep", (char *)"300",
				    NULL };
	struct child_spec	 cs = { "cat", cat, NULL, NULL, true, true };
	struct child		 c;
	uint64_t		 t0 = clock_mono_ms();

	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	ck_assert(child_stop(&c, 5000));
	ck_assert(WIFEXITED(c.ch_status) && WEXITSTATUS(c.ch_status) == 0);
	ck_assert_uint_lt(clock_mono_ms() - t0, 2000);
	cs = (struct child_spec){ "sleep", slp, NULL, NULL, true, true };
	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	ck_assert(!child_stop(&c, 100));
	ck_assert(WIFSIGNALED(c.ch_status) &&
	    WTERMSIG(c.ch_status) == SIGTERM);
	child_stop(&c, 100);	/* again: nothing left to do */
	child_kill(NULL);
}
END_TEST

/* When the child exits, what it left running in its group goes too. */
START_TEST(exit_kills_group)
{
	char			*argv[] = { (char *)"sh", (char *)"-c",
				    (char *)"sleep 300 >/dev/null 2>&1 & "
				    "echo $!", NULL };
	struct child_spec	 cs = { "sh", argv, NULL, NULL, false, false };
	struct child		 c;
	pid_t			 kid;
	int			 i;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	ck_assert_int_gt(kid = read_pid(&c), 0);
	for (i = 0; i < 500 && !child_exited(&c); i++)
		usleep(10000);
	ck_assert_int_eq(c.ch_pid, -1);
	ck_assert(WIFEXITED(c.ch_status) && WEXITSTATUS(c.ch_status) == 0);
	ck_assert_msg(dead(kid), "the grandchild %d survived", (int)kid);
	child_kill(&c);
}
END_TEST

/* Only stdio reaches the child: ls lists 0-2 and its own directory. */
START_TEST(no_fd_leak)
{
	char		*argv[] = { (char *)"ls", (char *)"/proc/self/fd",
			    NULL };
	struct child	 c;
	struct child_io	 io;
	int		 fd;

	ck_assert_int_ge(fd = open("/dev/null", O_RDONLY), 0);
	ck_assert_int_eq(dup2(fd, 57), 57);
	ck_assert_int_eq(run(&c, argv, NULL, NULL, NULL, &io), CHILD_DONE);
	ck_output(&io, "0\n1\n2\n3\n");
	io_free(&io);
	close(fd);
	close(57);
}
END_TEST

/* Signals the worker ignores or blocks are the child's defaults. */
START_TEST(signals_default)
{
	char			*argv[] = { (char *)"sleep", (char *)"30", NULL };
	struct child_spec	 cs = { "sleep", argv, NULL, NULL, false, false };
	struct child		 c;
	sigset_t		 set;
	int			 st;

	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	ck_assert_int_eq(kill(c.ch_pid, SIGHUP), 0);
	ck_assert_int_eq(waitpid(c.ch_pid, &st, 0), c.ch_pid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGHUP);
	ck_assert_int_eq(child_spawn(&c, &cs, NULL), 0);
	ck_assert_int_eq(kill(c.ch_pid, SIGTERM), 0);
	ck_assert_int_eq(waitpid(c.ch_pid, &st, 0), c.ch_pid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	/* Reaped behind child.c's back: it says so. */
	ck_assert(child_exited(&c));
	ck_assert(c.ch_lost);
	child_kill(&c);
}
END_TEST

static Suite *
child_suite(void)
{
	Suite	*s = suite_create("child");
	TCase	*tc;

	tc = test_case(s, "spawn", NULL, 20);
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, spawn_by_path);
	tcase_add_test(tc, spawn_enoent);
	tcase_add_test(tc, env_and_cwd);
	tcase_add_test(tc, no_fd_leak);
	tcase_add_test(tc, signals_default);
	tc = test_case(s, "pipes", pipes, 20);
	tcase_add_test(tc, pipes_no_sigpipe);
	tcase_add_test(tc, caps);
	tc = test_case(s, "end", timeout_and_cancel, 20);
	tcase_add_test(tc, cancel);
	tcase_add_test(tc, stop_escalates);
	tcase_add_test(tc, stop_gentle);
	tcase_add_test(tc, exit_kills_group);
	return s;
}

int
main(void)
{
	return check_main(child_suite());
}
