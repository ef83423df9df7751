/* watchdog.h - tests: run a cleanup once the calling process and all its forks are gone, even killed (header only: pgtmp.c and tests/it/netlab.c share it without a link line of its own). */
#ifndef SLUICE_TEST_WATCHDOG_H
#define SLUICE_TEST_WATCHDOG_H

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * What a test starts must not outlive it, even when it is killed (a
 * Check timeout, a crash) before its own cleanup. A watchdog process,
 * reparented at once, waits for the end of a pipe whose write side only
 * the caller and its forks hold (close-on-exec: not the programs they
 * exec), then runs clean(arg) -- on its own copy of arg, as it was at
 * this call -- and exits. A clean that finds nothing left to do must
 * be harmless: the watchdog also runs after a normal end.
 */
static inline void
test_watchdog(void (*clean)(void *), void *arg)
{
	int	 p[2];
	char	 c;
	pid_t	 pid;

	if (pipe2(p, O_CLOEXEC) == -1 || (pid = fork()) == -1)
		return;
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);		/* init adopts the watchdog */
		close(p[1]);
		setsid();
		while (read(p[0], &c, 1) == -1 && errno == EINTR)
			;
		clean(arg);
		_exit(0);
	}
	close(p[0]);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}

#endif
