/* jinja.c - Jinja2 rendering in a python3 helper the worker starts once and keeps (addendum A7). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "child.h"
#include "jinja.h"
#include "jinja_script.h"

/*
 * One helper a worker (a worker runs one request at a time, so one
 * render at a time). Requests and answers are JSON objects on one line
 * each (JSON strings escape their newlines). While it waits the client
 * polls the helper's stdout, its stdin while the request is not all
 * written (a request may pass a pipe's size), and the request's wake
 * fd. An answer line may be JSON-escaped output: up to 6 bytes a byte
 * of output (\u0001), plus the envelope.
 */

#define JINJA_READ_CHUNK	65536

static struct child	 helper = { -1, -1, -1, -1, 0, false };
static struct buf	 pending = BUF_INIT;	/* read, not yet a line */

enum wait_end {
	WAIT_LINE,		/* *line set */
	WAIT_TIMEOUT,
	WAIT_EOF,
	WAIT_LONG,		/* a line past its cap */
	WAIT_CANCELLED
};

/* What one exchange writes and waits for. */
struct xchg {
	const char			*x_w;		/* to write */
	size_t				 x_wlen;
	size_t				 x_woff;
	size_t				 x_rmax;	/* longest line */
	uint64_t			 x_deadline;
	const struct transport_hooks	*x_hooks;	/* or NULL */
	uint64_t			 x_tick;
};

pid_t
jinja_helper_pid(void)
{
	return helper.ch_pid;
}

void
jinja_shutdown(void)
{
	child_kill(&helper);
	buf_free(&pending);
}

/* Write what the helper's stdin takes now. -1 when it is gone. */
static int
x_write(struct xchg *x)
{
	ssize_t	 n;

	n = write(helper.ch_in, x->x_w + x->x_woff, x->x_wlen - x->x_woff);
	if (n > 0)
		x->x_woff += (size_t)n;
	else if (n == -1 && errno != EAGAIN && errno != EINTR)
		return -1;
	return 0;
}

/* Read what the helper wrote. -1 at EOF. */
static int
x_read(void)
{
	char	 tmp[JINJA_READ_CHUNK];
	ssize_t	 n;

	n = read(helper.ch_out, tmp, sizeof(tmp));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	buf_add(&pending, tmp, (size_t)n);
	return 0;
}

/* The first whole line of pending, moved to *line (caller frees). */
static bool
x_line(char **line)
{
	char	*nl = pending.b_len > 0 ? memchr(pending.b_data, '\n',
		    pending.b_len) : NULL;
	size_t	 n;

	if (nl == NULL)
		return false;
	n = (size_t)(nl - pending.b_data);
	*line = malloc(n + 1);
	if (*line == NULL)
		fatal("jinja: malloc");
	memcpy(*line, pending.b_data, n);
	(*line)[n] = '\0';
	buf_drain(&pending, n + 1);
	return true;
}

/* Ask the hooks whether to stop: on the wake fd, and every tick. */
static bool
x_stopped(struct xchg *x, bool readable)
{
	const struct transport_hooks	*h = x->x_hooks;
	uint64_t			 now = clock_mono_ms();

	if (h == NULL || h->on_wake == NULL)
		return false;
	if (!readable && (h->tick_ms == 0 || now < x->x_tick))
		return false;
	x->x_tick = now + h->tick_ms;
	return h->on_wake(h->arg, readable) == 1;
}

/* One poll round. Returns -1 to go on, else how the exchange ended. */
static int
x_step(struct xchg *x)
{
	const struct transport_hooks	*h = x->x_hooks;
	struct pollfd	 p[3];
	uint64_t	 now = clock_mono_ms(), due = x->x_deadline;
	int		 r;

	if (now >= due)
		return WAIT_TIMEOUT;
	if (h != NULL && h->on_wake != NULL && h->tick_ms > 0 &&
	    x->x_tick < due)
		due = x->x_tick > now ? x->x_tick : now;
	p[0] = (struct pollfd){ helper.ch_out, POLLIN, 0 };
	p[1] = (struct pollfd){ x->x_woff < x->x_wlen ? helper.ch_in : -1,
	    POLLOUT, 0 };
	p[2] = (struct pollfd){ h != NULL && h->on_wake != NULL ?
	    h->wake_fd : -1, POLLIN, 0 };
	r = poll(p, 3, due - now > INT_MAX ? INT_MAX : (int)(due - now));
	if (r == -1 && errno != EINTR)
		fatal("jinja: poll");
	if (x_stopped(x, r > 0 && p[2].revents != 0))
		return WAIT_CANCELLED;
	if (r > 0 && p[1].revents != 0 && x_write(x) == -1)
		return WAIT_EOF;
	if (r > 0 && p[0].revents != 0 && x_read() == -1)
		return WAIT_EOF;
	return -1;
}

/* Write x's request (if any) and wait for one line of answer. */
static enum wait_end
x_run(struct xchg *x, char **line)
{
	int	 e;

	x->x_tick = clock_mono_ms() + (x->x_hooks != NULL ?
	    x->x_hooks->tick_ms : 0);
	for (;;) {
		if (x_line(line))
			return WAIT_LINE;
		if (pending.b_len > x->x_rmax)
			return WAIT_LONG;
		if ((e = x_step(x)) != -1)
			return (enum wait_end)e;
	}
}

/* The helper's end, as words. */
static void
describe_exit(struct buf *err)
{
	int	 st = helper.ch_status;

	if (helper.ch_lost)
		buf_adds(err, "the jinja2 helper (python3) exited");
	else if (WIFEXITED(st))
		buf_printf(err, "the jinja2 helper (python3) exited with "
		    "status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		buf_printf(err, "the jinja2 helper (python3) was killed by "
		    "signal %d", WTERMSIG(st));
	else
		buf_adds(err, "the jinja2 helper (python3) ended");
}

/* End the helper after a failed exchange; the next render starts
 * another. */
static void
helper_drop(void)
{
	child_kill(&helper);
	buf_reset(&pending);
}

/* The helper's first line: {"ready": version} or {"fatal": why}. */
static int
helper_hello(const char *line, struct buf *err)
{
	json_t		*j = json_loads(line, 0, NULL);
	const char	*fatal_ = json_string_value(json_object_get(j, "fatal"));
	int		 rc = 0;

	if (json_object_get(j, "ready") == NULL) {
		buf_adds(err, fatal_ != NULL ? fatal_ : "the jinja2 helper "
		    "did not start");
		rc = -1;
	}
	json_decref(j);
	return rc;
}

/* The helper running, started if need be. 0, or -1 with err. */
static int
helper_up(const struct jinja_limits *lim, const struct transport_hooks *h,
    struct buf *err, bool *cancelled)
{
	static char	 a_py[] = "python3", a_iso[] = "-I", a_c[] = "-c";
	char		 mem[32];
	char		*argv[] = { a_py, a_iso, a_c, jinja_script, mem,
			    NULL };
	struct child_spec cs = { "python3", argv, NULL, NULL, true, false };
	struct xchg	 x = { NULL, 0, 0, 4096, 0, h, 0 };
	char		*line = NULL;
	enum wait_end	 e;
	int		 rc;

	if (helper.ch_pid != -1 && !child_exited(&helper))
		return 0;
	helper_drop();
	snprintf(mem, sizeof(mem), "%zu", lim->jl_mem_max);
	if (child_spawn(&helper, &cs, err) == -1)
		return -1;
	x.x_deadline = clock_mono_ms() + JINJA_START_MS;
	if ((e = x_run(&x, &line)) != WAIT_LINE) {
		*cancelled = e == WAIT_CANCELLED;
		helper_drop();
		if (e == WAIT_EOF)
			describe_exit(err);
		else if (e == WAIT_TIMEOUT)
			buf_printf(err, "the jinja2 helper (python3) did not "
			    "start within %d ms", JINJA_START_MS);
		else if (e == WAIT_LONG)
			buf_adds(err, "the jinja2 helper said nonsense");
		return -1;
	}
	if ((rc = helper_hello(line, err)) == -1)
		helper_drop();
	free(line);
	return rc;
}

/* The request line. Caller frees. */
static char *
request(const char *tmpl, json_t *ctx, size_t cap)
{
	json_t	*req = json_object();
	char	*s;

	json_object_set_new(req, "t", json_stringn_nocheck(tmpl,
	    strlen(tmpl)));
	json_object_set(req, "c", ctx);
	json_object_set_new(req, "cap", json_integer((json_int_t)cap));
	s = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	return s;
}

/* Read an answer line into out or err. */
static enum jinja_end
answer(const char *line, struct buf *out, struct buf *err, long *lineno)
{
	json_t		*j = json_loads(line, JSON_ALLOW_NUL, NULL);
	json_t		*ok = json_object_get(j, "ok");
	const char	*e = json_string_value(json_object_get(j, "error"));
	json_t		*ln = json_object_get(j, "line");

	if (json_is_string(ok)) {
		buf_add(out, json_string_value(ok), json_string_length(ok));
		json_decref(j);
		return JINJA_OK;
	}
	buf_adds(err, e != NULL ? e : "the jinja2 helper's answer could "
	    "not be read");
	if (json_is_integer(ln))
		*lineno = (long)json_integer_value(ln);
	json_decref(j);
	return JINJA_ERROR;
}

/* A failed wait, as the render's end. */
static enum jinja_end
wait_failed(enum wait_end e, const struct jinja_limits *lim, struct buf *err)
{
	helper_drop();
	switch (e) {
	case WAIT_CANCELLED:
		return JINJA_CANCELLED;
	case WAIT_TIMEOUT:
		buf_printf(err, "the render took longer than the limit of "
		    "%u ms (the jinja2 helper was stopped)", lim->jl_timeout_ms);
		break;
	case WAIT_LONG:
		buf_printf(err, "the output is longer than the limit of %zu "
		    "bytes", lim->jl_out_max);
		break;
	default:
		describe_exit(err);
		buf_adds(err, " while rendering");
		break;
	}
	return JINJA_ERROR;
}

static void
limits_of(const struct jinja_limits *in, struct jinja_limits *l)
{
	l->jl_timeout_ms = in != NULL && in->jl_timeout_ms > 0 ?
	    in->jl_timeout_ms : JINJA_TIMEOUT_MS;
	l->jl_out_max = in != NULL && in->jl_out_max > 0 ? in->jl_out_max :
	    JINJA_OUT_MAX;
	l->jl_mem_max = in != NULL && in->jl_mem_max > 0 ? in->jl_mem_max :
	    JINJA_MEM_MAX;
}

enum jinja_end
jinja_render(const char *tmpl, json_t *ctx, const struct jinja_limits *in,
    const struct transport_hooks *hooks, struct buf *out, struct buf *err,
    long *lineno)
{
	struct jinja_limits	 lim;
	struct xchg		 x;
	char			*req, *line = NULL;
	enum wait_end		 e;
	enum jinja_end		 r;
	bool			 cancelled = false;

	*lineno = 0;
	limits_of(in, &lim);
	if (helper_up(&lim, hooks, err, &cancelled) == -1)
		return cancelled ? JINJA_CANCELLED : JINJA_ERROR;
	req = request(tmpl, ctx, lim.jl_out_max);
	memset(&x, 0, sizeof(x));
	x.x_w = req;
	x.x_wlen = strlen(req) + 1;
	req[x.x_wlen - 1] = '\n';	/* in place of the NUL */
	x.x_rmax = lim.jl_out_max * 6 + 4096;
	x.x_deadline = clock_mono_ms() + lim.jl_timeout_ms;
	x.x_hooks = hooks;
	e = x_run(&x, &line);
	free(req);
	if (e != WAIT_LINE)
		return wait_failed(e, &lim, err);
	r = answer(line, out, err, lineno);
	free(line);
	return r;
}
