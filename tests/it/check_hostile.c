/* check_hostile.c - integration: oversized requests, slowloris, connection caps; normal traffic timed alongside. */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

/*
 * Issue 9's numbers: a request crossing a limit is answered (a JSON
 * error) within ISSUE_REFUSE_MS of the byte that crosses it; a
 * connection that drips its head (or body) is answered within
 * ISSUE_REFUSE_MS of its deadline; legitimate requests made meanwhile
 * keep a p99 under ISSUE_P99_MS. Under attack the deadlines are
 * HEAD_DEADLINE_MS and BODY_DEADLINE_MS (the default 10 s and 60 s
 * would only make the suite slower; what is judged is the distance to
 * the configured deadline), and the body limit is ATTACK_MAX_BODY
 * (the prober's chunked body must cross it well within the body
 * deadline, also in the sanitizer build on a busy machine; the quiet
 * test crosses the default 4 MiB).
 *
 * What is asserted has room for the machine: the suite itself runs a
 * thousand connections, a prober and a client beside the gateway, its
 * two workers and the mock on two shared cores. Measured with nothing
 * else busy, the optimized build stays within the issue's numbers
 * (p99 12-25 ms, every answer within 20 ms of its byte or deadline);
 * with two more busy processes beside other work (load ~6) it reached
 * p99 80 ms and answers after 190 ms, so LOAD is 2. The sanitizer
 * build runs several times slower (its gateway takes ~100 ms, not
 * ~20 ms, to answer a thousand connections whose deadlines fall
 * together), so there the limits are SLOWDOWN times more, and its RSS
 * (dominated by ASan's quarantine and shadow memory) is reported, not
 * judged. The figures are printed on "hostile:" lines.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SLOWDOWN	4
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLOWDOWN	4
#endif
#endif
#ifndef SLOWDOWN
#define SLOWDOWN	1
#endif
#define ISSUE_REFUSE_MS	100
#define ISSUE_P99_MS	50
#define LOAD		2
#define REFUSE_MS	(ISSUE_REFUSE_MS * LOAD * SLOWDOWN)
#define LEGIT_P99_MS	(ISSUE_P99_MS * LOAD * SLOWDOWN)
#define HEAD_DEADLINE_MS 1000
#define BODY_DEADLINE_MS 1000
#define ATTACK_MAX_BODY	(256 * 1024)
#define SLOW_CONNS	1000	/* slowloris connections */
#define SLOW_BODIES	10	/* of them, dripping a body instead */
#define SLOW_PER_ADDR	100	/* slowloris connections per address */
#define LEGIT_MAX	4096
#define LEGIT_MIN	60	/* normal requests timed at least */
#define NPROBES		5
#define KIB		1024
#define MIB		(1024 * 1024)

static struct it	 T;

static uint64_t
now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Room for a thousand sockets here and in the gateway (a child). */
static void
raise_fd_limit(void)
{
	struct rlimit	 rl;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	ck_assert_msg(rl.rlim_cur >= 3 * SLOW_CONNS, "RLIMIT_NOFILE %llu is "
	    "too low for %d connections", (unsigned long long)rl.rlim_cur,
	    SLOW_CONNS);
}

static void
start(const char *settings)
{
	memset(&T, 0, sizeof(T));
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	it_gateway_start(&T, NULL);
}

/* The gateway's resident memory in KiB. */
static long
gateway_rss_kib(void)
{
	char	 path[64], line[256];
	long	 kib = -1;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)T.it_gw);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* ---- raw connections ----------------------------------------------- */

/* A TCP connection to the gateway from the loopback address src (any
 * of 127.0.0.0/8), so that tests can play several clients. -1 on
 * failure: this runs in helper processes too, which cannot assert. */
static int
dial(const char *src)
{
	struct sockaddr_in	 sa;
	int			 fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	if (inet_pton(AF_INET, src, &sa.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		close(fd);
		return -1;
	}
	sa.sin_port = htons((uint16_t)T.it_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The Host line curl would send to the gateway. */
static const char *
host_line(void)
{
	static char	 line[64];

	snprintf(line, sizeof(line), "Host: 127.0.0.1:%d\r\n", T.it_port);
	return line;
}

static int
send_all(int fd, const char *p, size_t n)
{
	ssize_t	 k;

	while (n > 0) {
		if ((k = send(fd, p, n, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Read until the peer closes (true) or timeout_ms passes (false). A
 * reset after some bytes counts as the end. */
static bool
read_to_eof(int fd, struct buf *out, int timeout_ms)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;
	char		 tmp[8192];
	ssize_t		 k;

	buf_adds(out, "");
	for (;;) {
		if (it_now() >= end ||
		    poll(&pfd, 1, (int)(end - it_now())) <= 0)
			return false;
		if ((k = read(fd, tmp, sizeof(tmp))) > 0) {
			buf_add(out, tmp, (size_t)k);
			buf_adds(out, "");
			continue;
		}
		if (k == -1 && errno == EINTR)
			continue;
		return k == 0 || out->b_len > 0;
	}
}

/* Nothing arrives on fd within ms. */
static bool
quiet_for(int fd, int ms)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };

	return poll(&pfd, 1, ms) == 0;
}

/* Bytes of ours that the gateway has not read yet: the receive queue
 * of its end of the connection, asked of the kernel by sock_diag for
 * that one socket (reading /proc/net/tcp would cost ~25 ms with the
 * thousand slowloris connections open). -1 when it cannot be told. */
static long
gateway_unread(int fd)
{
	struct sockaddr_in	 me;
	socklen_t		 len = sizeof(me);
	struct {
		struct nlmsghdr		 nh;
		struct inet_diag_req_v2	 rq;
	}			 q;
	union {
		struct nlmsghdr		 nh;
		char			 b[1024];
	}			 a;
	struct inet_diag_msg	*m = NLMSG_DATA(&a.nh);
	int			 nl;
	ssize_t			 n = -1;

	if (getsockname(fd, (struct sockaddr *)&me, &len) == -1 ||
	    (nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_SOCK_DIAG)) == -1)
		return -1;
	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.rq.sdiag_family = AF_INET;
	q.rq.sdiag_protocol = IPPROTO_TCP;
	q.rq.idiag_states = ~0u;
	q.rq.id.idiag_sport = htons((uint16_t)T.it_port);
	q.rq.id.idiag_dport = me.sin_port;
	q.rq.id.idiag_src[0] = htonl(INADDR_LOOPBACK);
	q.rq.id.idiag_dst[0] = me.sin_addr.s_addr;
	q.rq.id.idiag_cookie[0] = q.rq.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (send(nl, &q, sizeof(q), 0) == (ssize_t)sizeof(q))
		n = recv(nl, &a, sizeof(a), 0);
	close(nl);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(*m)) ||
	    a.nh.nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return -1;
	return (long)m->idiag_rqueue;
}

/* Wait (up to 10 s) until the gateway has read all we sent on fd, so
 * that what comes next is timed from when it could act on it. Without
 * sock_diag, a fixed 200 ms stands in. */
static bool
gateway_caught_up(int fd)
{
	uint64_t	 end = it_now() + 10000;
	long		 n;

	while ((n = gateway_unread(fd)) != 0) {
		if (n == -1) {
			it_sleep(200);
			return true;
		}
		if (it_now() >= end)
			return false;
		it_sleep(1);
	}
	return true;
}

/* NULL when resp is an answer with status whose JSON body holds an
 * error object with that code and a message; else what is wrong. */
static const char *
json_error_wrong(const char *resp, int status)
{
	const char	*body = strstr(resp, "\r\n\r\n"), *why = NULL;
	json_t		*j, *e;
	int		 st = 0;

	if (sscanf(resp, "HTTP/1.1 %d ", &st) != 1 || st != status)
		return "wrong status";
	if (body == NULL ||
	    strstr(resp, "\r\nContent-Type: application/json\r\n") == NULL)
		return "not a JSON answer";
	if ((j = json_loads(body + 4, 0, NULL)) == NULL)
		return "invalid JSON body";
	e = json_object_get(j, "error");
	if (json_integer_value(json_object_get(e, "code")) != status ||
	    !json_is_string(json_object_get(e, "message")))
		why = "no error object with the status as its code";
	json_decref(j);
	return why;
}

/* ---- oversized requests -------------------------------------------- */

struct probe {
	const char	*p_name;
	int		 p_status;
	struct buf	 p_prefix;	/* exactly at the limit: no answer */
	struct buf	 p_cross;	/* its first byte crosses the limit */
};

static void
fill(struct buf *b, char c, size_t n)
{
	buf_reserve(b, n);
	memset(b->b_data + b->b_len, c, n);
	b->b_len += n;
	buf_adds(b, "");
}

/* 100 KiB header line; the head may hold 16 KiB (max_header_bytes). */
static void
probe_header_line(struct probe *p)
{
	size_t	 start;

	p->p_name = "100 KiB header line";
	p->p_status = 431;
	buf_printf(&p->p_prefix, "GET /health HTTP/1.1\r\n%sX-Big: ",
	    host_line());
	start = p->p_prefix.b_len;
	fill(&p->p_prefix, 'a', 16 * KIB - start);
	fill(&p->p_cross, 'a', 100 * KIB - (16 * KIB - start));
	buf_adds(&p->p_cross, "\r\n\r\n");
}

/* 10,000 headers; 100 are allowed (max_headers). */
static void
probe_headers(struct probe *p)
{
	int	 i;

	p->p_name = "10,000 headers";
	p->p_status = 431;
	buf_printf(&p->p_prefix, "GET /health HTTP/1.1\r\n%s", host_line());
	for (i = 2; i <= 100; i++)
		buf_printf(&p->p_prefix, "X-H%d: v\r\n", i);
	for (; i <= 10000; i++)
		buf_printf(&p->p_cross, "X-H%d: v\r\n", i);
	buf_adds(&p->p_cross, "\r\n");
}

/* The five attacks, each sending only what it takes to cross its
 * limit (the 1 GiB bodies stop one byte past max_body, the gateway's
 * max_body_bytes). */
static void
probes_build(struct probe p[NPROBES], size_t max_body)
{
	memset(p, 0, NPROBES * sizeof(*p));
	p[0].p_name = "1 GiB Content-Length";
	p[0].p_status = 413;
	buf_printf(&p[0].p_prefix, "POST /v1/chat/completions HTTP/1.1\r\n"
	    "%sContent-Type: application/json\r\n"
	    "Content-Length: 1073741824\r\n\r", host_line());
	buf_adds(&p[0].p_cross, "\n");
	p[1].p_name = "1 GiB chunked";
	p[1].p_status = 413;
	buf_printf(&p[1].p_prefix, "POST /v1/chat/completions HTTP/1.1\r\n"
	    "%sContent-Type: application/json\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n40000000\r\n", host_line());
	fill(&p[1].p_prefix, 'a', max_body);
	buf_adds(&p[1].p_cross, "a");
	probe_header_line(&p[2]);
	probe_headers(&p[3]);
	p[4].p_name = "64 KiB URL";
	p[4].p_status = 414;
	buf_adds(&p[4].p_prefix, "GET /");
	fill(&p[4].p_prefix, 'a', 8 * KIB - 1);
	fill(&p[4].p_cross, 'a', 64 * KIB - 8 * KIB);
	buf_printf(&p[4].p_cross, " HTTP/1.1\r\n%s\r\n", host_line());
}

static void
probes_free(struct probe p[NPROBES])
{
	int	 i;

	for (i = 0; i < NPROBES; i++) {
		buf_free(&p[i].p_prefix);
		buf_free(&p[i].p_cross);
	}
}

/* Run p on a new connection from src: the prefix, once the gateway has
 * read it, must get no answer within quiet_ms; the crossing bytes a
 * JSON error with p_status. Returns NULL with *us, from sending the
 * crossing byte to the end of the answer, or what went wrong. */
static const char *
probe_run(const struct probe *p, const char *src, int quiet_ms, uint64_t *us)
{
	struct buf	 r = BUF_INIT;
	const char	*why = NULL;
	uint64_t	 t0;
	int		 fd;

	if ((fd = dial(src)) == -1)
		return "cannot connect";
	if (send_all(fd, p->p_prefix.b_data, p->p_prefix.b_len) == -1 ||
	    !gateway_caught_up(fd))
		why = "the part within the limit was not taken";
	else if (!quiet_for(fd, quiet_ms))
		why = "answered before the limit was crossed";
	else {
		t0 = now_us();
		/* the gateway may answer and stop reading mid-way */
		(void)send_all(fd, p->p_cross.b_data, p->p_cross.b_len);
		if (!read_to_eof(fd, &r, 5000))
			why = "no answer within 5 s";
		else {
			*us = now_us() - t0;
			why = json_error_wrong(r.b_data, p->p_status);
		}
	}
	close(fd);
	buf_free(&r);
	return why;
}

/* ---- helper processes ------------------------------------------------ */

/* What the helpers share with the test (MAP_SHARED). */
struct shared {
	volatile int	 sh_stop;
	/* legitimate traffic */
	unsigned	 sh_legit_n;
	unsigned	 sh_legit_fail;
	uint32_t	 sh_legit_us[LEGIT_MAX];
	/* oversized requests, in a loop */
	unsigned	 sh_rounds;
	uint64_t	 sh_probe_max_us[NPROBES];
	char		 sh_why[200];
};

static struct shared *
shared_new(void)
{
	struct shared	*sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	return sh;
}

static pid_t
helper(void (*fn)(struct shared *, void *), struct shared *sh, void *arg)
{
	pid_t	 pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fn(sh, arg);
		_exit(0);
	}
	return pid;
}

static void
helper_wait(pid_t pid)
{
	int	 st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "helper process failed (status %d)", st);
}

/* One legitimate request from src: true on a 200 whose body holds
 * want. */
static bool
legit_one(const char *src, const char *req, const char *want)
{
	struct buf	 r = BUF_INIT;
	bool		 ok = false;
	int		 fd;

	if ((fd = dial(src)) == -1)
		return false;
	if (send_all(fd, req, strlen(req)) == 0 &&
	    read_to_eof(fd, &r, 5000))
		ok = strncmp(r.b_data, "HTTP/1.1 200 ", 13) == 0 &&
		    strstr(r.b_data, want) != NULL;
	close(fd);
	buf_free(&r);
	return ok;
}

/* A normal chat completion request (HTTP/1.0: the answer ends at
 * close). */
static void
chat_request(char *out, size_t len)
{
	static const char body[] = "{\"model\":\"x\",\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"hello\"}]}";

	snprintf(out, len, "POST /v1/chat/completions HTTP/1.0\r\n"
	    "%sContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n%s", host_line(), strlen(body), body);
}

/* A steady stream of normal requests, every ~2 ms, alternating a chat
 * completion (gateway, worker and mock) and /health (gateway only),
 * each timed from connect to the end of the answer. */
static void
legit_loop(struct shared *sh, void *arg)
{
	char		 chat[512];
	uint64_t	 t0;
	unsigned	 n;
	bool		 ok;

	chat_request(chat, sizeof(chat));
	while (!sh->sh_stop && (n = sh->sh_legit_n) < LEGIT_MAX) {
		t0 = now_us();
		if (n % 2 == 0)
			ok = legit_one("127.0.0.1", chat, "quick brown fox");
		else
			ok = legit_one("127.0.0.1",
			    "GET /health HTTP/1.0\r\n\r\n", "\"status\"");
		sh->sh_legit_us[n] = (uint32_t)(now_us() - t0);
		if (!ok)
			sh->sh_legit_fail++;
		sh->sh_legit_n = n + 1;
		it_sleep(2);
	}
}

/* The oversized requests over and over, from 127.0.0.2 to .9, until
 * told to stop or one goes wrong (sh_why). */
static void
probe_loop(struct shared *sh, void *arg)
{
	const struct probe	*p = arg;
	const char		*why;
	char			 src[32];
	uint64_t		 us;
	unsigned		 k = 0;
	int			 i;

	while (!sh->sh_stop) {
		for (i = 0; i < NPROBES; i++, k++) {
			snprintf(src, sizeof(src), "127.0.0.%u", 2 + k % 8);
			if ((why = probe_run(&p[i], src, 50, &us)) != NULL) {
				snprintf(sh->sh_why, sizeof(sh->sh_why),
				    "%s: %s", p[i].p_name, why);
				return;
			}
			if (us > sh->sh_probe_max_us[i])
				sh->sh_probe_max_us[i] = us;
		}
		sh->sh_rounds++;
	}
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	 x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* A percentile (nearest rank) of the legitimate requests, in ms;
 * sorts them. */
static double
legit_pct_ms(struct shared *sh, unsigned pct)
{
	size_t	 n = sh->sh_legit_n, k = (n * pct + 99) / 100;

	qsort(sh->sh_legit_us, n, sizeof(sh->sh_legit_us[0]), cmp_u32);
	return n == 0 ? 0 : sh->sh_legit_us[k > 0 ? k - 1 : 0] / 1000.0;
}

/* The slowest answer to an oversized request, in ms. */
static double
probe_max_ms(const struct shared *sh)
{
	uint64_t	 us = 0;
	int		 i;

	for (i = 0; i < NPROBES; i++)
		if (sh->sh_probe_max_us[i] > us)
			us = sh->sh_probe_max_us[i];
	return us / 1000.0;
}

/* ---- slowloris ------------------------------------------------------- */

struct slow {
	int		 s_fd;
	bool		 s_body;	/* drips a body, not its head */
	uint64_t	 s_t0;		/* connected (us) */
	uint64_t	 s_t1;		/* answer complete, or 0 */
	struct buf	 s_resp;
};

/* Open n connections, SLOW_PER_ADDR from each of 127.1.x.y, each with
 * the start of a request whose rest will only drip. */
static void
slow_open(struct slow *v, size_t n)
{
	char		 head[128], body[256], src[32];
	size_t		 i;

	snprintf(head, sizeof(head), "GET /health HTTP/1.1\r\n%sX-Drip: ",
	    host_line());
	snprintf(body, sizeof(body), "POST /v1/chat/completions HTTP/1.1\r\n"
	    "%sContent-Type: application/json\r\n"
	    "Content-Length: 100000\r\n\r\n{", host_line());
	for (i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "127.1.%zu.%zu",
		    i / SLOW_PER_ADDR / 250, 1 + i / SLOW_PER_ADDR % 250);
		memset(&v[i], 0, sizeof(v[i]));
		v[i].s_body = i % (n / SLOW_BODIES) == 0;
		/* The clock starts before connect(): the gateway may accept
		 * and start its deadline before connect() returns here. */
		v[i].s_t0 = now_us();
		v[i].s_fd = dial(src);
		ck_assert_msg(v[i].s_fd != -1, "connection %zu: %s", i,
		    strerror(errno));
		ck_assert_int_eq(send_all(v[i].s_fd, v[i].s_body ? body :
		    head, strlen(v[i].s_body ? body : head)), 0);
		fcntl(v[i].s_fd, F_SETFL, O_NONBLOCK);
	}
}

/* One byte more on every connection still waiting. */
static void
slow_drip(struct slow *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (v[i].s_t1 == 0)
			(void)send(v[i].s_fd, "a", 1, MSG_NOSIGNAL);
}

/* Read what arrived; a connection is answered at its EOF. Returns how
 * many are still waiting. */
static size_t
slow_read(struct slow *v, size_t n, struct pollfd *pfd, int ms)
{
	size_t	 i, k = 0, waiting = 0;
	char	 tmp[4096];
	ssize_t	 got;

	for (i = 0; i < n; i++)
		if (v[i].s_t1 == 0)
			pfd[k++] = (struct pollfd){ v[i].s_fd, POLLIN, 0 };
	if (k == 0 || poll(pfd, k, ms) <= 0)
		return k;
	for (i = 0, k = 0; i < n; i++) {
		if (v[i].s_t1 != 0)
			continue;
		if (pfd[k++].revents == 0) {
			waiting++;
			continue;
		}
		while ((got = read(v[i].s_fd, tmp, sizeof(tmp))) > 0)
			buf_add(&v[i].s_resp, tmp, (size_t)got);
		if (got == 0 || (got == -1 && errno != EAGAIN)) {
			v[i].s_t1 = now_us();
			buf_adds(&v[i].s_resp, "");
		} else
			waiting++;
	}
	return waiting;
}

/* Drip every 100 ms until every connection is answered or 2 s past the
 * later deadline; *rss_peak gets the gateway's largest RSS meanwhile. */
static void
slow_run(struct slow *v, size_t n, long *rss_peak)
{
	struct pollfd	*pfd = calloc(n, sizeof(*pfd));
	uint64_t	 end = it_now() + BODY_DEADLINE_MS + 2000, next = 0;
	long		 rss;

	ck_assert_ptr_nonnull(pfd);
	while (it_now() < end) {
		if (it_now() >= next) {
			slow_drip(v, n);
			if ((rss = gateway_rss_kib()) > *rss_peak)
				*rss_peak = rss;
			next = it_now() + 100;
		}
		if (slow_read(v, n, pfd, 5) == 0)
			break;
	}
	free(pfd);
}

/* Every connection got its 408 as JSON within REFUSE_MS after its
 * deadline, never before it (the client's clock starts before the
 * gateway accepts; 5 ms of slack for timer rounding). Reports the
 * spread in *lo and *hi (ms after the deadline). */
static void
slow_judge(struct slow *v, size_t n, double *lo, double *hi)
{
	const char	*why;
	double		 ms;
	size_t		 i;
	int		 dl;

	*lo = 1e9;
	*hi = 0;
	for (i = 0; i < n; i++) {
		dl = v[i].s_body ? BODY_DEADLINE_MS : HEAD_DEADLINE_MS;
		ck_assert_msg(v[i].s_t1 != 0, "slow connection %zu (%s) was "
		    "never answered", i, v[i].s_body ? "body" : "head");
		ms = (v[i].s_t1 - v[i].s_t0) / 1000.0;
		why = json_error_wrong(v[i].s_resp.b_data, 408);
		ck_assert_msg(why == NULL, "slow connection %zu: %s: %.200s",
		    i, why, v[i].s_resp.b_data);
		ck_assert_ptr_nonnull(strstr(v[i].s_resp.b_data, v[i].s_body ?
		    "request body timeout" : "request header timeout"));
		ck_assert_msg(ms >= dl - 5 && ms <= dl + REFUSE_MS,
		    "slow connection %zu answered after %.1f ms (deadline "
		    "%d ms)", i, ms, dl);
		*lo = ms - dl < *lo ? ms - dl : *lo;
		*hi = ms - dl > *hi ? ms - dl : *hi;
		close(v[i].s_fd);
		buf_free(&v[i].s_resp);
	}
}

/* ---- the tests ------------------------------------------------------- */

#define ATTACK_SETTINGS	"\"header_timeout_s\": 1, \"body_timeout_s\": 1, " \
			"\"max_body_bytes\": 262144"

/* Each limit on a quiet gateway: a request exactly at the limit gets no
 * answer yet, one byte more gets the limit's JSON error at once. */
START_TEST(oversized_requests_refused_at_once)
{
	struct probe	 p[NPROBES];
	const char	*why;
	uint64_t	 us;
	int		 i;

	start(NULL);
	probes_build(p, 4 * MIB);
	for (i = 0; i < NPROBES; i++) {
		why = probe_run(&p[i], "127.0.0.2", 100, &us);
		ck_assert_msg(why == NULL, "%s: %s", p[i].p_name, why);
		fprintf(stderr, "hostile: %s: %d after %.2f ms\n",
		    p[i].p_name, p[i].p_status, us / 1000.0);
		ck_assert_msg(us <= REFUSE_MS * 1000, "%s: answered %.1f ms "
		    "after crossing the limit", p[i].p_name, us / 1000.0);
	}
	probes_free(p);
	it_stop_clean(&T);
}
END_TEST

/* What the attack test measured. */
struct attack {
	struct shared	*a_sh;
	struct probe	 a_p[NPROBES];
	long		 a_rss0, a_rss_peak, a_rss_end;	/* KiB */
	double		 a_lo, a_hi;	/* slowloris answered after (ms) */
};

/* Slowloris here, the oversized requests and the normal traffic in
 * helpers, until slowloris is over and the oversized requests made
 * three rounds. */
static void
attack_run(struct attack *a, struct slow *v)
{
	struct shared	*sh = a->a_sh;
	char		 chat[512];
	pid_t		 legit, prober;
	uint64_t	 end;
	int		 i;

	chat_request(chat, sizeof(chat));
	for (i = 0; i < 4; i++)		/* the workers' first requests */
		ck_assert(legit_one("127.0.0.1", chat, "quick brown fox"));
	a->a_rss0 = gateway_rss_kib();
	legit = helper(legit_loop, sh, NULL);
	prober = helper(probe_loop, sh, a->a_p);
	slow_open(v, SLOW_CONNS);
	slow_run(v, SLOW_CONNS, &a->a_rss_peak);
	end = it_now() + 20000;
	/* enough of both for the figures (longer on a slow machine) */
	while ((sh->sh_rounds < 3 || sh->sh_legit_n < LEGIT_MIN) &&
	    sh->sh_why[0] == '\0' && it_now() < end)
		it_sleep(10);
	sh->sh_stop = 1;
	helper_wait(legit);
	helper_wait(prober);
	slow_judge(v, SLOW_CONNS, &a->a_lo, &a->a_hi);
	it_sleep(200);
	a->a_rss_end = gateway_rss_kib();
}

static void
attack_judge(struct attack *a)
{
	struct shared	*sh = a->a_sh;
	double		 p50, p99;
	int		 i;

	ck_assert_msg(sh->sh_why[0] == '\0', "%s", sh->sh_why);
	for (i = 0; i < NPROBES; i++)
		ck_assert_msg(sh->sh_probe_max_us[i] <= REFUSE_MS * 1000,
		    "%s: answered %.1f ms after crossing the limit",
		    a->a_p[i].p_name, sh->sh_probe_max_us[i] / 1000.0);
	ck_assert_uint_eq(sh->sh_legit_fail, 0);
	ck_assert_uint_ge(sh->sh_legit_n, LEGIT_MIN);
	p50 = legit_pct_ms(sh, 50);
	p99 = legit_pct_ms(sh, 99);
	fprintf(stderr, "hostile: slowloris %d answered %+.1f..%+.1f ms "
	    "from their deadlines; "
	    "%u rounds of oversized requests, slowest %.2f ms; %u normal "
	    "requests, p50 %.1f p99 %.1f max %.1f ms (issue: %d and %d ms, "
	    "asserted: %d and %d ms); gateway RSS %ld -> peak %ld -> %ld "
	    "KiB\n", SLOW_CONNS, a->a_lo, a->a_hi, sh->sh_rounds,
	    probe_max_ms(sh), sh->sh_legit_n, p50, p99,
	    sh->sh_legit_us[sh->sh_legit_n - 1] / 1000.0, ISSUE_REFUSE_MS,
	    ISSUE_P99_MS, REFUSE_MS, LEGIT_P99_MS, a->a_rss0, a->a_rss_peak,
	    a->a_rss_end);
	ck_assert_msg(p99 < LEGIT_P99_MS, "normal requests: p99 %.1f ms", p99);
	if (SLOWDOWN > 1)
		return;
	/* measured: +3 MiB at the peak (3 KiB a slow connection), +4 MiB
	 * after (malloc keeps freed pages; the level stays with more
	 * rounds) */
	ck_assert_msg(a->a_rss_peak - a->a_rss0 < SLOW_CONNS * 16L, "RSS "
	    "grew by %ld KiB with %d slow connections",
	    a->a_rss_peak - a->a_rss0, SLOW_CONNS);
	ck_assert_msg(a->a_rss_end - a->a_rss0 < 16 * 1024, "RSS %ld KiB "
	    "after the attacks, %ld before", a->a_rss_end, a->a_rss0);
}

/* Slowloris (a thousand connections dripping their heads, some their
 * bodies) and the oversized requests in a loop, all at once, while a
 * client keeps making normal requests: every attack gets its JSON error
 * in time, the normal requests all succeed fast, and the gateway's
 * memory stays bounded. */
START_TEST(legitimate_traffic_served_under_attack)
{
	static struct slow	 v[SLOW_CONNS];
	struct attack		 a;

	memset(&a, 0, sizeof(a));
	a.a_sh = shared_new();
	start(ATTACK_SETTINGS);
	it_wait_idle(&T, 2);
	probes_build(a.a_p, ATTACK_MAX_BODY);
	attack_run(&a, v);
	attack_judge(&a);
	probes_free(a.a_p);
	it_stop_clean(&T);
}
END_TEST

/* n idle keep-alive connections from src, each known to the gateway
 * (it answered a request on each). */
static void
hold(int *fds, int n, const char *src)
{
	struct buf	 r = BUF_INIT;
	char		 req[128];
	int		 i;

	snprintf(req, sizeof(req), "GET /health HTTP/1.1\r\n%s\r\n",
	    host_line());
	for (i = 0; i < n; i++) {
		fds[i] = dial(src);
		ck_assert_int_ne(fds[i], -1);
		ck_assert_int_eq(send_all(fds[i], req, strlen(req)), 0);
		buf_reset(&r);
		ck_assert(it_read_until(fds[i], &r, "\"status\"", 5000));
		ck_assert_int_eq(strncmp(r.b_data, "HTTP/1.1 200 ", 13), 0);
	}
	buf_free(&r);
}

/* A new connection from src is refused at once with status, as JSON
 * with Retry-After. */
static void
expect_refused(const char *src, int status)
{
	struct buf	 r = BUF_INIT;
	const char	*why;
	uint64_t	 t0 = now_us(), us;
	int		 fd = dial(src);

	ck_assert_int_ne(fd, -1);
	ck_assert(read_to_eof(fd, &r, 5000));
	us = now_us() - t0;
	why = json_error_wrong(r.b_data, status);
	ck_assert_msg(why == NULL, "%s: %.300s", why, r.b_data);
	ck_assert_ptr_nonnull(strstr(r.b_data, "\r\nRetry-After: 1\r\n"));
	ck_assert_msg(us <= REFUSE_MS * 1000, "refused after %.1f ms",
	    us / 1000.0);
	fprintf(stderr, "hostile: connection from %s over its cap: %d after "
	    "%.2f ms\n", src, status, us / 1000.0);
	close(fd);
	buf_free(&r);
}

/* A request on a new connection from src is served. */
static void
expect_served(const char *src)
{
	ck_assert_msg(legit_one(src, "GET /health HTTP/1.0\r\n\r\n",
	    "\"status\""), "a request from %s was not served", src);
}

static void
release(int *fds, int n)
{
	int	 i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* max_connections: a connection past the cap gets 503 at once, from
 * any address (the per-address cap is off here); closing one makes
 * room again. */
START_TEST(connection_cap_refuses_with_503)
{
	int	 fds[20];

	start("\"max_connections\": 20, \"max_connections_per_ip\": 0");
	hold(fds, 20, "127.0.0.2");
	expect_refused("127.0.0.3", 503);
	expect_refused("127.0.0.1", 503);
	close(fds[0]);
	it_sleep(100);
	expect_served("127.0.0.3");
	release(fds + 1, 19);
	it_stop_clean(&T);
}
END_TEST

/* max_connections_per_ip: one address past its cap gets 429 at once;
 * other addresses keep theirs; closing one makes room again. */
START_TEST(per_address_cap_refuses_with_429)
{
	int	 a[5], b[5];

	start("\"max_connections_per_ip\": 5");
	hold(a, 5, "127.0.0.2");
	expect_refused("127.0.0.2", 429);
	hold(b, 5, "127.0.0.3");
	expect_refused("127.0.0.3", 429);
	expect_served("127.0.0.1");
	close(a[0]);
	it_sleep(100);
	expect_served("127.0.0.2");
	release(a + 1, 4);
	release(b, 5);
	it_stop_clean(&T);
}
END_TEST

/* The default per-address cap is 512: of 520 bare connections from one
 * address, the last 8 are refused and the others wait for a request. */
START_TEST(per_address_cap_default_is_512)
{
	enum { N = 520, CAP = 512 };
	static int	 fds[N];
	struct buf	 r = BUF_INIT;
	int		 i;

	start(NULL);
	for (i = 0; i < N; i++) {
		fds[i] = dial("127.0.0.4");
		ck_assert_msg(fds[i] != -1, "connection %d: %s", i,
		    strerror(errno));
	}
	for (i = CAP; i < N; i++) {
		buf_reset(&r);
		ck_assert(read_to_eof(fds[i], &r, 5000));
		ck_assert_ptr_null(json_error_wrong(r.b_data, 429));
	}
	for (i = 0; i < CAP; i++)
		ck_assert_msg(quiet_for(fds[i], 0), "connection %d was "
		    "answered", i);
	expect_served("127.0.0.5");
	release(fds, N);
	buf_free(&r);
	it_stop_clean(&T);
}
END_TEST

static Suite *
hostile_suite(void)
{
	Suite	*s = suite_create("hostile");
	TCase	*tc;

	tc = tcase_create("limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, oversized_requests_refused_at_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("under_attack");
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, legitimate_traffic_served_under_attack);
	suite_add_tcase(s, tc);
	tc = tcase_create("caps");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, connection_cap_refuses_with_503);
	tcase_add_test(tc, per_address_cap_refuses_with_429);
	tcase_add_test(tc, per_address_cap_default_is_512);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(hostile_suite());
}
