/* fakegw.c - unit tests: the gateway's end of a worker channel, the worker's end driven by a forked child. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/clock.h"
#include "fakegw.h"

void
fakegw_start(struct fakegw *g, int (*fn)(int, void *), void *arg)
{
	pid_t	 parent = getpid();
	int	 sv[2];

	memset(g, 0, sizeof(*g));
	frame_rd_init(&g->fg_rd, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
	ck_assert_int_ge(g->fg_pid = fork(), 0);
	if (g->fg_pid == 0) {
		/* A test that fails leaves no child behind (one that
		 * hangs on purpose would stay forever). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
		    getppid() != parent)
			_exit(127);
		close(sv[0]);
		signal(SIGPIPE, SIG_IGN);
		_exit(fn(sv[1], arg));
	}
	close(sv[1]);
	g->fg_fd = sv[0];
}

void
fakegw_send(struct fakegw *g, const struct proto_msg *m)
{
	struct buf	 b = BUF_INIT;

	ck_assert_int_eq(proto_encode(&b, m), 0);
	ck_assert_msg(frame_write_all(g->fg_fd, b.b_data, b.b_len) == 0,
	    "write %s: %s", proto_type_name(m->m_type), strerror(errno));
	buf_free(&b);
}

void
fakegw_send_simple(struct fakegw *g, uint32_t type, const char *rqid)
{
	struct proto_msg	 m;

	proto_msg_init(&m, type, rqid);
	fakegw_send(g, &m);
}

enum fakegw_got
fakegw_frame(struct fakegw *g, const unsigned char **p, size_t *n,
    int timeout_ms)
{
	uint64_t	 end = clock_mono_ms() + (uint64_t)timeout_ms, now;
	struct pollfd	 pfd;
	ssize_t		 r;
	int		 k;

	for (;;) {
		if ((k = frame_rd_next(&g->fg_rd, p, n)) == 1)
			return FG_FRAME;
		if (k == -1)
			return FG_OVERSIZE;
		if ((now = clock_mono_ms()) >= end)
			return FG_TIMEOUT;
		pfd = (struct pollfd){ g->fg_fd, POLLIN, 0 };
		if (poll(&pfd, 1, (int)(end - now)) <= 0)
			continue;
		r = frame_rd_fill(&g->fg_rd, g->fg_fd);
		if (r == 0)
			return FG_EOF;
		ck_assert_msg(r > 0 || errno == EINTR || errno == EAGAIN,
		    "read from the worker: %s", strerror(errno));
	}
}

void
fakegw_next(struct fakegw *g, struct proto_msg *m, int timeout_ms)
{
	const unsigned char	*p;
	size_t			 n;
	char			 err[PROTO_ERRLEN];
	enum fakegw_got		 got = fakegw_frame(g, &p, &n, timeout_ms);

	ck_assert_msg(got == FG_FRAME, "no frame from the worker (%s)",
	    got == FG_EOF ? "EOF" : got == FG_TIMEOUT ? "timeout" :
	    "oversize");
	ck_assert_msg(proto_decode(p, n, m, err) == 0, "bad frame: %s", err);
}

void
fakegw_next_busy(struct fakegw *g, struct proto_msg *m, int timeout_ms)
{
	for (;;) {
		fakegw_next(g, m, timeout_ms);
		if (m->m_type != PROTO_HEARTBEAT)
			return;
		proto_msg_free(m);
	}
}

void
fakegw_close(struct fakegw *g)
{
	if (g->fg_fd >= 0)
		close(g->fg_fd);
	g->fg_fd = -1;
}

int
fakegw_wait(struct fakegw *g, int timeout_ms)
{
	uint64_t	 end = clock_mono_ms() + (uint64_t)timeout_ms;
	pid_t		 r;

	if (g->fg_pid <= 0)
		return g->fg_status;
	while ((r = waitpid(g->fg_pid, &g->fg_status, WNOHANG)) == 0 &&
	    clock_mono_ms() < end)
		(void)poll(NULL, 0, 10);
	if (r == 0) {
		kill(g->fg_pid, SIGKILL);
		(void)waitpid(g->fg_pid, &g->fg_status, 0);
		g->fg_pid = -1;
		ck_abort_msg("the child did not end within %d ms", timeout_ms);
	}
	ck_assert_int_eq(r, g->fg_pid);
	g->fg_pid = -1;
	return g->fg_status;
}

void
fakegw_free(struct fakegw *g)
{
	if (g->fg_pid > 0) {
		kill(g->fg_pid, SIGKILL);
		(void)waitpid(g->fg_pid, &g->fg_status, 0);
		g->fg_pid = -1;
	}
	fakegw_close(g);
	frame_rd_free(&g->fg_rd);
}
