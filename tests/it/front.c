/* front.c - integration tests: HAProxy on deploy/haproxy.cfg in front of two gateways, and the paced streams sent through it. */
#include <check.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "front.h"

const char *
front_paced_text(void)
{
	static const char *const w[] = { "one", "two", "three" };
	static char	 text[FRONT_EVENTS * 6 + 1];
	size_t		 i;

	if (text[0] != '\0')
		return text;
	for (i = 0; i < FRONT_EVENTS; i++) {
		if (i > 0)
			strcat(text, " ");
		strcat(text, w[i % 3]);
	}
	return text;
}

const char *
front_haproxy_bin(void)
{
	static const char *const where[] = { "/usr/sbin/haproxy",
	    "/usr/local/sbin/haproxy", "/usr/bin/haproxy" };
	size_t	 i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

/* Wait until GET /health through the front answers 200. */
static void
front_wait(struct it *f, const char *log)
{
	struct it_resp	 r;
	uint64_t	 end = it_now() + 5000;
	long		 st = 0;

	while (st != 200 && it_now() < end) {
		if (it_request(f, "GET", "/health", NULL, &r) == 0)
			st = r.r_status;
		it_resp_free(&r);
		if (st != 200)
			it_sleep(20);
	}
	ck_assert_msg(st == 200, "HAProxy did not come up; see %s", log);
}

/* Not root: HAProxy cannot become user haproxy, so it stays us. */
static void
run_as_self(void)
{
	struct passwd	*pw;
	struct group	*gr;

	if (geteuid() == 0)
		return;
	if ((pw = getpwuid(geteuid())) != NULL)
		setenv("SLUICE_HAPROXY_USER", pw->pw_name, 1);
	if ((gr = getgrgid(getegid())) != NULL)
		setenv("SLUICE_HAPROXY_GROUP", gr->gr_name, 1);
}

pid_t
front_start(struct it *f, const char *a, const char *b, const char *log,
    const char *env)
{
	const char	*src = getenv("SLUICE_SRC"), *bin = front_haproxy_bin();
	char		 cfg[400], front[32];
	pid_t		 pid;
	int		 fd;

	ck_assert_ptr_nonnull(bin);
	snprintf(cfg, sizeof(cfg), "%s/deploy/haproxy.cfg", src ? src : ".");
	f->it_port = it_dead_port();
	snprintf(front, sizeof(front), "127.0.0.1:%d", f->it_port);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) ==
		    -1)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		if (env != NULL)
			putenv(strdup(env));
		setenv("SLUICE_FRONT", front, 1);
		setenv("SLUICE_A", a, 1);
		setenv("SLUICE_B", b, 1);
		run_as_self();
		execl(bin, "haproxy", "-db", "-f", cfg, (char *)NULL);
		_exit(127);
	}
	front_wait(f, log);
	return pid;
}

bool
front_log_has(const char *log, const char *needle)
{
	char	*text = it_file_text(log);
	bool	 hit = strstr(text, needle) != NULL;

	free(text);
	return hit;
}

void
front_streams_init(struct it_stream *s, struct buf *hd, size_t n,
    char *const *bodies, const char *body)
{
	size_t	 i;

	memset(s, 0, n * sizeof(*s));
	for (i = 0; i < n; i++) {
		s[i].s_body = bodies != NULL ? bodies[i] : body;
		buf_init(&s[i].s_out);
		buf_init(&hd[i]);
		s[i].s_headers = &hd[i];
	}
}

void
front_streams_free(struct it_stream *s, struct buf *hd, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		buf_free(&s[i].s_out);
		buf_free(&hd[i]);
	}
}

void
front_stream_id(const struct it_stream *s, char *id, size_t idlen)
{
	if (s->s_headers == NULL ||
	    it_header_in(s->s_headers, "X-Request-Id", id, idlen) == NULL)
		id[0] = '\0';
}

bool
front_streams_headed(const struct it_stream *s, size_t n)
{
	char	 id[64];
	size_t	 i;

	for (i = 0; i < n; i++) {
		front_stream_id(&s[i], id, sizeof(id));
		if (id[0] == '\0' || s[i].s_out.b_len == 0)
			return false;
	}
	return true;
}

long
front_delete(struct it *t, const char *id)
{
	struct it_resp	 r;
	char		 body[128];
	long		 st;

	snprintf(body, sizeof(body), "{\"request_id\":\"%s\"}", id);
	ck_assert_int_eq(it_request(t, "DELETE", "/api/chat", body, &r), 0);
	st = r.r_status;
	it_resp_free(&r);
	return st;
}
