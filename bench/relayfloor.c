/* relayfloor.c - the CPU floor of Sluice's relay shape: paced events through one process per stream and one relay process, with no HTTP, JSON or libcurl. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/clock.h"

/*
 * Usage: relayfloor STREAMS EVENTS GAP_MS SECONDS
 *
 * What one streamed event costs Sluice's processes at the least, on
 * this machine: the parent plays the backend and the client; each
 * stream has a "worker" child that waits in poll() on its TCP
 * connection from the backend, reads an event and writes it to its
 * socketpair (a Sluice worker does that plus libcurl, SSE and JSON);
 * one "relay" child waits in epoll_wait() on every socketpair and
 * writes what it reads to the stream's TCP connection to the client
 * (the gateway does that plus framing and HTTP). Streams run one after
 * another on each slot, EVENTS events GAP_MS apart, as the paced bench
 * does. Prints the workers' and the relay's CPU per event (getrusage of
 * the children once they are gone).
 */

#define EVENT_LEN	120	/* about one SSE event of a token */

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

/* A connected pair of loopback TCP sockets: *a and *b. */
static void
tcp_pair(int lfd, const struct sockaddr_in *sa, int *a, int *b)
{
	int	 one = 1;

	if ((*a = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(*a, (const struct sockaddr *)sa, sizeof(*sa)) == -1 ||
	    (*b = accept(lfd, NULL, NULL)) == -1)
		die("loopback pair");
	setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* In a new child: close every descriptor from 3 on but keep[0..nk),
 * so that a stream's end (its backend socket closed) reaches it. */
static void
close_others(const int *keep, int nk)
{
	long	 max = sysconf(_SC_OPEN_MAX);
	int	 fd, k;

	for (fd = 3; fd < max && fd < 65536; fd++) {
		for (k = 0; k < nk && keep[k] != fd; k++)
			;
		if (k == nk)
			close(fd);
	}
}

/* The worker: backend socket in, socketpair out, until EOF. */
static void
worker(int in, int out)
{
	struct pollfd	 pfd = { in, POLLIN, 0 };
	char		 b[4096];
	ssize_t		 n;
	int		 keep[2] = { in, out };

	close_others(keep, 2);

	for (;;) {
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			_exit(1);
		if ((n = recv(in, b, sizeof(b), 0)) <= 0)
			_exit(0);
		if (write(out, b, (size_t)n) != n)
			_exit(1);
	}
}

/* The relay: every socketpair in, its client socket out. */
static void
relay(int *from, int *to, int n)
{
	struct epoll_event	 ev, evs[256];
	char			 b[65536];
	int			 ep, i, k, left = n, *keep;
	ssize_t			 r;

	keep = calloc((size_t)n * 2, sizeof(int));
	for (i = 0; i < n; i++) {
		keep[2 * i] = from[i];
		keep[2 * i + 1] = to[i];
	}
	close_others(keep, 2 * n);
	free(keep);
	ep = epoll_create1(0);
	for (i = 0; i < n; i++) {
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t)i;
		epoll_ctl(ep, EPOLL_CTL_ADD, from[i], &ev);
	}
	while (left > 0) {
		k = epoll_wait(ep, evs, 256, -1);
		for (i = 0; i < k; i++) {
			r = read(from[evs[i].data.u32], b, sizeof(b));
			if (r <= 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL,
				    from[evs[i].data.u32], NULL);
				left--;
			} else if (write(to[evs[i].data.u32], b, (size_t)r) != r)
				_exit(1);
		}
	}
	_exit(0);
}

static void
usage(void)
{
	fprintf(stderr, "usage: relayfloor STREAMS EVENTS GAP_MS SECONDS\n");
	exit(2);
}

static double
cpu_us(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec * 1e6 +
	    (double)ru->ru_utime.tv_usec +
	    (double)ru->ru_stime.tv_sec * 1e6 + (double)ru->ru_stime.tv_usec;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in	 sa = { .sin_family = AF_INET };
	socklen_t		 slen = sizeof(sa);
	int			 n, events, gap, secs, lfd, i, sp[2];
	int			*back, *wk_in, *rl_from, *rl_to, *client;
	uint64_t		*due, *cnt, end, t, sent = 0;
	char			 ev[EVENT_LEN], sink[65536];
	struct rusage		 ru, rr;
	struct pollfd		*pfd;
	pid_t			 rpid;
	double			 all, rl;

	if (argc != 5)
		usage();
	n = atoi(argv[1]);
	events = atoi(argv[2]);
	gap = atoi(argv[3]);
	secs = atoi(argv[4]);
	if (n < 1 || n > 4096 || events < 1 || gap < 1 || secs < 1)
		usage();
	signal(SIGPIPE, SIG_IGN);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(lfd, 4096) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &slen) == -1)
		die("listen");
	back = calloc((size_t)n, sizeof(int));
	wk_in = calloc((size_t)n, sizeof(int));
	rl_from = calloc((size_t)n, sizeof(int));
	rl_to = calloc((size_t)n, sizeof(int));
	client = calloc((size_t)n, sizeof(int));
	due = calloc((size_t)n, sizeof(uint64_t));
	cnt = calloc((size_t)n, sizeof(uint64_t));
	pfd = calloc((size_t)n, sizeof(*pfd));
	for (i = 0; i < n; i++) {
		tcp_pair(lfd, &sa, &back[i], &wk_in[i]);
		tcp_pair(lfd, &sa, &rl_to[i], &client[i]);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
			die("socketpair");
		rl_from[i] = sp[0];
		if (fork() == 0)
			worker(wk_in[i], sp[1]);
		close(sp[1]);
		close(wk_in[i]);
	}
	if ((rpid = fork()) == 0)
		relay(rl_from, rl_to, n);
	for (i = 0; i < n; i++) {
		close(rl_from[i]);
		close(rl_to[i]);
	}
	memset(ev, 'x', sizeof(ev));
	t = clock_mono_ms();
	for (i = 0; i < n; i++) {
		due[i] = t + (uint64_t)(i * gap / n);	/* staggered */
		pfd[i] = (struct pollfd){ client[i], POLLIN, 0 };
	}
	end = t + (uint64_t)secs * 1000;
	while ((t = clock_mono_ms()) < end) {
		for (i = 0; i < n; i++)
			if (due[i] <= t) {
				if (write(back[i], ev, sizeof(ev)) !=
				    (ssize_t)sizeof(ev))
					die("backend write");
				sent++;
				/* a new stream after EVENTS events: a pause
				 * as long as the first event's 50 ms */
				due[i] += ++cnt[i] % (uint64_t)events == 0 ?
				    50 : (uint64_t)gap;
			}
		if (poll(pfd, (nfds_t)n, 1) > 0)
			for (i = 0; i < n; i++)
				if (pfd[i].revents & POLLIN)
					(void)read(client[i], sink,
					    sizeof(sink));
	}
	for (i = 0; i < n; i++)
		close(back[i]);
	if (wait4(rpid, NULL, 0, &rr) != rpid)
		die("wait4");
	while (wait(NULL) > 0)
		;
	getrusage(RUSAGE_CHILDREN, &ru);
	all = cpu_us(&ru);
	rl = cpu_us(&rr);
	if (sent == 0)
		sent = 1;
	printf("{\"streams\":%d,\"events\":%llu,\"workers_us_per_event\":"
	    "%.1f,\"relay_us_per_event\":%.1f}\n", n,
	    (unsigned long long)sent, (all - rl) / (double)sent,
	    rl / (double)sent);
	return 0;
}
