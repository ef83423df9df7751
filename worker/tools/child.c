/* child.c - a tool program run in its own process group: spawned without a shell, talked to over pipes, killed with all it started. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "child.h"

extern char	**environ;

#define CHILD_PATH_DEF	"/usr/local/bin:/usr/bin:/bin"

static void
child_fdclose(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

static bool
child_runnable(const char *p)
{
	struct stat	 st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(p, X_OK) == 0;
}

/* The program to exec: file itself when it names a path, else the
 * first runnable file of that name in an absolute directory of the
 * worker's PATH (a relative entry would depend on the worker's current
 * directory). NULL with errno ENOENT when there is none. Caller
 * frees. */
static char *
child_find(const char *file)
{
	const char	*path = getenv("PATH");
	char		*copy, *dir, *save = NULL, *cand = NULL;

	if (strchr(file, '/') != NULL)
		return xstrdup(file);
	if (*file == '\0') {
		errno = ENOENT;
		return NULL;
	}
	if (path == NULL || *path == '\0')
		path = CHILD_PATH_DEF;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if (*dir != '/')
			continue;
		cand = xasprintf("%s/%s", dir, file);
		if (child_runnable(cand))
			break;
		free(cand);
		cand = NULL;
	}
	free(copy);
	if (cand == NULL)
		errno = ENOENT;
	return cand;
}

/* posix_spawn with the rules: stdio on in/out/err (err -1: the
 * worker's stderr stays), nothing else open, the signals a worker
 * handles or ignores back to their defaults, an empty mask, its own
 * process group. Returns posix_spawn's error number. */
static int
child_exec(struct child *c, const char *prog, const struct child_spec *cs,
    int in, int out, int err)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 at;
	sigset_t			 none, dfl;
	int				 rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	if (err != -1)
		posix_spawn_file_actions_adddup2(&fa, err, 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (cs->cs_cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, cs->cs_cwd);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&dfl);
	sigdelset(&dfl, SIGKILL);
	sigdelset(&dfl, SIGSTOP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&c->ch_pid, prog, &fa, &at, cs->cs_argv,
	    cs->cs_envp != NULL ? cs->cs_envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc;
}

/* The child's ends (in[1], out[1], err[1]) and ours (in[0], ...);
 * stdin a socket when asked for (EPIPE, never SIGPIPE), else
 * /dev/null. Returns 0 or an error number. */
static int
child_pipes(const struct child_spec *cs, int in[2], int out[2], int err[2])
{
	if (cs->cs_stdin) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		    in) == -1)
			return errno;
	} else if ((in[1] = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		return errno;
	if (pipe2(out, O_CLOEXEC) == -1)
		return errno;
	if (cs->cs_stderr && pipe2(err, O_CLOEXEC) == -1)
		return errno;
	return 0;
}

int
child_spawn(struct child *c, const struct child_spec *cs, struct buf *err)
{
	int	 in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 };
	int	 rc;
	char	*prog;

	*c = (struct child){ -1, -1, -1, -1, 0, false };
	if ((prog = child_find(cs->cs_file)) == NULL) {
		if (err != NULL)
			buf_printf(err, "%s was not found on PATH",
			    cs->cs_file);
		return -1;
	}
	if ((rc = child_pipes(cs, in, out, er)) == 0)
		rc = child_exec(c, prog, cs, in[1], out[1], er[1]);
	child_fdclose(&in[1]);
	child_fdclose(&out[1]);
	child_fdclose(&er[1]);
	c->ch_in = in[0];
	c->ch_out = out[0];
	c->ch_err = er[0];
	if (rc != 0) {
		child_fdclose(&c->ch_in);
		child_fdclose(&c->ch_out);
		child_fdclose(&c->ch_err);
		c->ch_pid = -1;
		if (err != NULL)
			buf_printf(err, "cannot start %s: %s", prog,
			    strerror(rc));
		free(prog);
		errno = rc;
		return -1;
	}
	free(prog);
	if (c->ch_in != -1)
		(void)fcntl(c->ch_in, F_SETFL, O_NONBLOCK);
	(void)fcntl(c->ch_out, F_SETFL, O_NONBLOCK);
	if (c->ch_err != -1)
		(void)fcntl(c->ch_err, F_SETFL, O_NONBLOCK);
	return 0;
}

void
child_close_in(struct child *c)
{
	child_fdclose(&c->ch_in);
}

/* SIGKILL the group, then reap the child. The child is reaped only
 * after the kill, so its pid (the group id) cannot have been reused by
 * then. */
static void
child_reap(struct child *c)
{
	if (c->ch_pid == -1)
		return;
	(void)kill(-c->ch_pid, SIGKILL);
	while (waitpid(c->ch_pid, &c->ch_status, 0) == -1) {
		if (errno != EINTR) {
			c->ch_lost = true;
			break;
		}
	}
	c->ch_pid = -1;
}

bool
child_exited(struct child *c)
{
	siginfo_t	 si;

	if (c->ch_pid == -1)
		return true;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)c->ch_pid, &si, WEXITED | WNOHANG |
	    WNOWAIT) == -1) {
		if (errno != ECHILD)
			return false;
		c->ch_lost = true;
		c->ch_pid = -1;
		return true;
	}
	if (si.si_pid == 0)
		return false;
	child_reap(c);
	return true;
}

static void
child_closeall(struct child *c)
{
	child_fdclose(&c->ch_in);
	child_fdclose(&c->ch_out);
	child_fdclose(&c->ch_err);
}

void
child_kill(struct child *c)
{
	if (c == NULL)
		return;
	child_reap(c);
	child_closeall(c);
}

/* Read and drop what waits on *fd; closed at EOF or error. */
static void
child_discard(int *fd)
{
	char	 chunk[4096];
	ssize_t	 n;
	int	 i;

	for (i = 0; *fd != -1 && i < 64; i++) {
		n = read(*fd, chunk, sizeof(chunk));
		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		child_fdclose(fd);
	}
}

/* Wait up to ms for the child to exit, emptying its pipes. */
static bool
child_wait(struct child *c, unsigned ms)
{
	uint64_t	 end = clock_mono_ms() + ms, now;
	struct pollfd	 pfd[2];

	while (!child_exited(c)) {
		if ((now = clock_mono_ms()) >= end)
			return false;
		pfd[0] = (struct pollfd){ c->ch_out, POLLIN, 0 };
		pfd[1] = (struct pollfd){ c->ch_err, POLLIN, 0 };
		/* Exit is not a descriptor event: look again soon. */
		if (poll(pfd, 2, end - now < 10 ? (int)(end - now) : 10) > 0) {
			if (pfd[0].revents != 0)
				child_discard(&c->ch_out);
			if (pfd[1].revents != 0)
				child_discard(&c->ch_err);
		}
	}
	return true;
}

bool
child_stop(struct child *c, unsigned grace_ms)
{
	bool	 gentle = false;

	if (c == NULL)
		return false;
	child_close_in(c);
	if (c->ch_pid != -1) {
		if ((gentle = child_wait(c, grace_ms)) == false) {
			(void)kill(-c->ch_pid, SIGTERM);
			(void)child_wait(c, grace_ms);
		}
	}
	child_kill(c);
	return gentle;
}
