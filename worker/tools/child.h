/* child.h - a tool program run in its own process group: spawned without a shell, talked to over pipes, killed with all it started. */
#ifndef SLUICE_CHILD_H
#define SLUICE_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

#include "../../common/buf.h"

/*
 * One copy of the rules PythonModule, CurlCommand and MCPToolCall's
 * stdio transport share: no shell, no descriptor of the worker but the
 * three it is given, default signal dispositions, an empty signal
 * mask, its own process group; stdin a socket (writing to a child that
 * left is EPIPE, never SIGPIPE); the child reaped only after its group
 * was killed, so the group id cannot have been reused.
 */

struct child_spec {
	const char	 *cs_file;	/* the program; searched on the
					   worker's PATH (absolute
					   directories only) when it has
					   no '/' */
	char *const	 *cs_argv;	/* argv[0] included, NULL-ended */
	char *const	 *cs_envp;	/* NULL: the worker's environment */
	const char	 *cs_cwd;	/* NULL: the worker's */
	bool		  cs_stdin;	/* a pipe (ch_in); else /dev/null */
	bool		  cs_stderr;	/* a pipe (ch_err); else the
					   worker's stderr */
};

/* A running child. Descriptors are non-blocking, -1 when closed or not
 * asked for. */
struct child {
	pid_t	 ch_pid;	/* -1: none (not started, or reaped) */
	int	 ch_in;		/* its stdin (write end) */
	int	 ch_out;	/* its stdout (read end) */
	int	 ch_err;	/* its stderr (read end) */
	int	 ch_status;	/* waitpid status once reaped */
	bool	 ch_lost;	/* reaped by someone else (ECHILD):
				   ch_status unknown */
};

/* Start one. Returns 0, or -1 with errno set (ENOENT: no such program,
 * also when the PATH search found none) and a message appended to err
 * (unless NULL);
 * c is then { -1, ... }. */
int	child_spawn(struct child *c, const struct child_spec *, struct buf *err);

/* Close the child's stdin (idempotent). */
void	child_close_in(struct child *c);

/* Has the child exited? When it has, its group is killed and it is
 * reaped (ch_status set, ch_pid -1). Never blocks. */
bool	child_exited(struct child *c);

/* End it now: SIGKILL to its group, reap. NULL-safe; no-op when
 * already reaped. Closes every descriptor. */
void	child_kill(struct child *c);

/* End it gently, as MCP's stdio transport does: close stdin, wait up to
 * grace_ms for it to exit, then SIGTERM its group and wait grace_ms
 * more, then SIGKILL the group. Its stdout and stderr are read and
 * thrown away meanwhile, so a full pipe cannot keep it from exiting.
 * Always reaps and closes every descriptor. Returns true when it
 * exited by itself, before any signal. */
bool	child_stop(struct child *c, unsigned grace_ms);

#endif
