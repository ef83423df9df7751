/* mcp_stdio.c - MCP over a child's stdin and stdout: one JSON message a line, the child spawned per call and stopped after it. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/clock.h"
#include "../../common/log.h"
#include "child.h"
#include "mcp_xport.h"

/*
 * The child gets the server's argv, environment and cwd; its stderr is
 * the worker's. One poll waits on its stdout, its stdin while there is
 * something to write, and the wake fd. A line of its output may be up
 * to MCP_LINE_MAX bytes: past that the call fails (a server flooding
 * stdout without a newline cannot fill the worker's memory). At the
 * end child_stop closes its stdin and waits MCP_GRACE_MS, then
 * SIGTERMs its group and waits as long again, then SIGKILLs the group,
 * as the SDK does; after a timeout or a cancel the waits are
 * MCP_GRACE_LATE_MS, since the worker is needed back.
 */

#define MCP_LINE_MAX		(16 * 1024 * 1024)
#define MCP_GRACE_MS		2000
#define MCP_GRACE_LATE_MS	250
#define MCP_READ_CHUNK		65536

struct sio {
	struct child	 s_child;
	struct buf	 s_in;		/* read, not yet a whole line */
	struct buf	 s_out;		/* to write */
	struct mcp_run	*s_run;
};

/* Feed each whole line read so far; 0, or -1 when the session ended
 * or a line is too long. */
static int
lines(struct sio *s)
{
	struct mcp_rpc	*rpc = s->s_run->mr_rpc;
	char		*nl;
	size_t		 n;

	while ((nl = memchr(s->s_in.b_data, '\n', s->s_in.b_len)) != NULL) {
		n = (size_t)(nl - s->s_in.b_data);
		if (mcp_rpc_feed(rpc, s->s_in.b_data, n) != MCPS_RUNNING)
			return -1;
		buf_drain(&s->s_in, n + 1);
	}
	if (s->s_in.b_len > MCP_LINE_MAX) {
		mcp_rpc_fail(rpc, "a line of the server's output is longer "
		    "than 16 MiB");
		return -1;
	}
	return 0;
}

/* Read what the child wrote. -1 when the session ended. */
static int
rd(struct sio *s)
{
	char	 tmp[MCP_READ_CHUNK];
	ssize_t	 n;

	n = read(s->s_child.ch_out, tmp, sizeof(tmp));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		if (s->s_in.b_len > 0)
			mcp_rpc_feed(s->s_run->mr_rpc, s->s_in.b_data,
			    s->s_in.b_len);
		mcp_rpc_closed(s->s_run->mr_rpc);
		return -1;
	}
	buf_add(&s->s_in, tmp, (size_t)n);
	return lines(s);
}

/* Write what is queued; a child that closed its stdin gets nothing
 * more (its stdout's end tells the session). */
static void
wr(struct sio *s)
{
	ssize_t	 n;

	n = write(s->s_child.ch_in, s->s_out.b_data, s->s_out.b_len);
	if (n > 0)
		buf_drain(&s->s_out, (size_t)n);
	else if (n == -1 && errno != EAGAIN && errno != EINTR) {
		buf_reset(&s->s_out);
		child_close_in(&s->s_child);
	}
}

static void
queue_out(struct sio *s)
{
	char	*m;

	while ((m = mcp_rpc_next(s->s_run->mr_rpc)) != NULL) {
		buf_adds(&s->s_out, m);
		buf_addc(&s->s_out, '\n');
		free(m);
	}
}

/* One wait. Returns MCPE_ENDED to go on (or when the session ended). */
static enum mcp_end
step(struct sio *s, uint64_t *tick)
{
	const struct transport_hooks	*h = s->s_run->mr_hooks;
	struct pollfd	 p[3];
	uint64_t	 now = clock_mono_ms();
	uint64_t	 due = s->s_run->mr_deadline;
	int		 r;

	if (now >= due)
		return MCPE_TIMEOUT;
	if (h->on_wake != NULL && h->tick_ms > 0 && *tick < due)
		due = *tick;
	p[0] = (struct pollfd){ s->s_child.ch_out, POLLIN, 0 };
	p[1] = (struct pollfd){ s->s_out.b_len > 0 ? s->s_child.ch_in : -1,
	    POLLOUT, 0 };
	p[2] = (struct pollfd){ h->on_wake != NULL ? h->wake_fd : -1,
	    POLLIN, 0 };
	r = poll(p, 3, due <= now ? 0 : due - now > INT_MAX ? INT_MAX :
	    (int)(due - now));
	if (r == -1 && errno != EINTR)
		fatal("mcp: poll");
	now = clock_mono_ms();
	if (h->on_wake != NULL && ((r > 0 && p[2].revents != 0) ||
	    (h->tick_ms > 0 && now >= *tick))) {
		*tick = now + h->tick_ms;
		if (h->on_wake(h->arg, r > 0 && p[2].revents != 0) == 1)
			return MCPE_CANCELLED;
	}
	if (r > 0 && p[1].revents != 0)
		wr(s);
	if (r > 0 && p[0].revents != 0)
		rd(s);
	return MCPE_ENDED;
}

static enum mcp_end
talk(struct sio *s)
{
	const struct transport_hooks	*h = s->s_run->mr_hooks;
	uint64_t	 tick = clock_mono_ms() + h->tick_ms;
	enum mcp_end	 e = MCPE_ENDED;

	while (e == MCPE_ENDED && mcp_rpc_state(s->s_run->mr_rpc) ==
	    MCPS_RUNNING) {
		queue_out(s);
		e = step(s, &tick);
	}
	return e;
}

enum mcp_end
mcp_stdio_run(const struct mcp_server *srv, struct mcp_run *run)
{
	struct child_spec	 cs = { srv->ms_argv[0], srv->ms_argv,
				    srv->ms_envp, srv->ms_cwd, true, false };
	struct sio		 s = { .s_run = run };
	struct buf		 err = BUF_INIT;
	enum mcp_end		 e;

	if (child_spawn(&s.s_child, &cs, &err) == -1) {
		mcp_rpc_fail(run->mr_rpc, err.b_len > 0 ? err.b_data :
		    "could not start the server");
		buf_free(&err);
		return MCPE_ENDED;
	}
	buf_free(&err);
	e = talk(&s);
	child_stop(&s.s_child, e == MCPE_ENDED ? MCP_GRACE_MS :
	    MCP_GRACE_LATE_MS);
	buf_free(&s.s_in);
	buf_free(&s.s_out);
	return e;
}
