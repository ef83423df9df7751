/* childrun.c - a child's whole run: its stdin fed, stdout and stderr gathered under caps, a deadline, cancellation. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "childrun.h"

#define CR_TICK_MS	250	/* the hooks' tick when they give none */

/* Give the child more of its stdin; close it when all is sent or the
 * child stopped reading. */
static void
cr_feed(struct child *c, struct child_io *io, size_t *off)
{
	ssize_t	 n;

	while (c->ch_in != -1 && io->ci_in != NULL && *off < io->ci_inlen) {
		n = send(c->ch_in, io->ci_in + *off, io->ci_inlen - *off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1)
			break;
		*off += (size_t)n;
	}
	child_close_in(c);
}

/* Read what waits on *fd into b, which keeps at most keep bytes;
 * *over is set when more than that came. At EOF *fd is closed. At most
 * 1 MiB a call, so a chatty child cannot hold the loop. Returns 0, or
 * -1 on a read error. */
static int
cr_drain(int *fd, struct buf *b, size_t keep, bool *over)
{
	char	 chunk[16384];
	ssize_t	 n;
	size_t	 room;
	int	 i;

	for (i = 0; i < 64; i++) {
		n = read(*fd, chunk, sizeof(chunk));
		if (n > 0) {
			room = keep - b->b_len;
			buf_add(b, chunk, (size_t)n < room ? (size_t)n : room);
			if ((size_t)n > room)
				*over = true;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		close(*fd);
		*fd = -1;
		return n == 0 ? 0 : -1;
	}
	return 0;
}

/* One poll round over the wake descriptor and the child's pipes. */
static int
cr_poll(struct child *c, struct child_io *io, size_t *off, bool *over,
    struct pollfd pfd[4], int ms)
{
	bool	 junk = false;

	pfd[1] = (struct pollfd){ c->ch_in, POLLOUT, 0 };
	pfd[2] = (struct pollfd){ c->ch_out, POLLIN, 0 };
	pfd[3] = (struct pollfd){ c->ch_err, POLLIN, 0 };
	if (poll(pfd, 4, ms) == -1)
		return errno == EINTR ? 0 : -1;
	if (pfd[1].revents != 0)
		cr_feed(c, io, off);
	if (pfd[2].revents != 0 && cr_drain(&c->ch_out, &io->ci_out,
	    io->ci_outcap, over) == -1)
		return -1;
	if (pfd[3].revents != 0 && cr_drain(&c->ch_err, &io->ci_err,
	    io->ci_errkeep, &junk) == -1)
		return -1;
	return 0;
}

enum child_end
child_run(struct child *c, struct child_io *io, uint64_t deadline,
    const struct transport_hooks *hooks)
{
	struct pollfd	 pfd[4];
	uint64_t	 now;
	size_t		 off = 0;
	unsigned	 tick = hooks != NULL && hooks->tick_ms > 0 ?
			    hooks->tick_ms : CR_TICK_MS;
	int		 ms, wfd = hooks != NULL ? hooks->wake_fd : -1;
	bool		 over = false, readable;

	if (io->ci_in == NULL || io->ci_inlen == 0)
		child_close_in(c);
	for (;;) {
		if (c->ch_out == -1 && c->ch_err == -1 && child_exited(c))
			return CHILD_DONE;
		if ((now = clock_mono_ms()) >= deadline)
			return CHILD_TIMEOUT;
		/* Pipes closed but not exited yet: look again soon. */
		ms = c->ch_out == -1 && c->ch_err == -1 ? 10 : (int)tick;
		if (deadline - now < (uint64_t)ms)
			ms = (int)(deadline - now);
		pfd[0] = (struct pollfd){ wfd, POLLIN, 0 };
		if (cr_poll(c, io, &off, &over, pfd, ms) == -1)
			return CHILD_FAILED;
		if (over)
			return CHILD_CAP;
		readable = wfd >= 0 &&
		    (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
		if (hooks != NULL && hooks->on_wake != NULL &&
		    hooks->on_wake(hooks->arg, readable) == 1)
			return CHILD_CANCELLED;
	}
}
