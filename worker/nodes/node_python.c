/* node_python.c - PythonModule: Invoke(*args, **kwargs) from a Python file, run in a python3 child. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "../core/node.h"

/*
 * Risk, accepted as in WilmerAI: module_path may name any Python file
 * the worker's user can read, and that file runs with the worker's
 * rights (files, network, the user's environment). The workflow's
 * author is trusted like the code they point at; confining the path
 * the way GetCustomFile is confined would not help, since the module
 * can open what it likes anyway. What Sluice adds: the module runs in a
 * separate python3 process (-I: no PYTHON* variables, no user site,
 * nothing from the current directory on sys.path), started without a
 * shell, holding no descriptor of the worker but stdio, in its own
 * process group so that it and whatever it starts can be killed on
 * timeout, oversized output or cancellation.
 */

extern char	**environ;

#define PY_OUT_MAX	(1u << 20)	/* stdout beyond this: killed */
#define PY_ERR_MAX	4096		/* stderr kept for messages */
#define PY_TICK_MS	250		/* gateway checked this often */
#define PY_TIMEOUT_S	60.0

/* Loads module_path (argv[1]) as WilmerAI's dynamic_module_loader
 * does, calls Invoke with the JSON args/kwargs read from stdin, writes
 * str(result) to stdout and exits 0; on an exception it writes
 * "Type: message" there instead and exits 2. While the module runs, fd
 * 1 is its stderr, so its prints cannot mix into the result. */
static char py_runner[] =
    "import importlib.util, json, os, sys, traceback\n"
    "def _sluice_run():\n"
    "    out = os.fdopen(os.dup(1), 'wb')\n"
    "    os.dup2(2, 1)\n"
    "    path = sys.argv[1]\n"
    "    try:\n"
    "        data = json.loads(sys.stdin.buffer.read().decode('utf-8'))\n"
    "        sys.path.insert(0, os.path.dirname(path))\n"
    "        spec = importlib.util.spec_from_file_location("
    "'dynamic_module', path)\n"
    "        if spec is None or spec.loader is None:\n"
    "            raise ImportError('cannot load a module from ' + path)\n"
    "        mod = importlib.util.module_from_spec(spec)\n"
    "        spec.loader.exec_module(mod)\n"
    "        fn = getattr(mod, 'Invoke', None)\n"
    "        if fn is None:\n"
    "            raise AttributeError(\"The module does not have a "
    "function named 'Invoke'\")\n"
    "        if not callable(fn):\n"
    "            raise TypeError(\"'Invoke' is not callable\")\n"
    "        text, code = str(fn(*data['args'], **data['kwargs'])), 0\n"
    "    except BaseException as e:\n"
    "        traceback.print_exc()\n"
    "        text = ''.join(traceback.format_exception_only(type(e), e))"
    ".strip()\n"
    "        code = 2\n"
    "    for f in (sys.stdout, sys.stderr):\n"
    "        try:\n"
    "            f.flush()\n"
    "        except Exception:\n"
    "            pass\n"
    "    out.write(text.encode('utf-8', 'replace'))\n"
    "    out.flush()\n"
    "    os._exit(code)\n"
    "_sluice_run()\n";

enum py_end { PY_DONE, PY_TIMEOUT, PY_CAP, PY_CANCELLED, PY_FAILED };

struct pyrun {
	pid_t		 p_pid;
	int		 p_in, p_out, p_err;	/* ours; -1 once closed */
	const char	*p_data;		/* for the child's stdin */
	size_t		 p_len, p_off;
	struct buf	 p_stdout, p_stderr;
	int		 p_status;		/* from waitpid */
	bool		 p_reaped;
	bool		 p_lost;		/* reaped by someone else */
};

/* The first python3 in an absolute PATH directory. Caller frees. */
static char *
py_find(void)
{
	const char	*path = getenv("PATH");
	char		*copy, *dir, *save = NULL, *cand = NULL;
	struct stat	 st;

	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if (*dir != '/')
			continue;
		cand = xasprintf("%s/python3", dir);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(cand, X_OK) == 0)
			break;
		free(cand);
		cand = NULL;
	}
	free(copy);
	return cand;
}

static bool
py_isfile(const char *p)
{
	struct stat	 st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* module_path as WilmerAI finds it: "~/" is $HOME; a relative path is
 * tried from the current directory, then from the config directory
 * (WilmerAI: its project root). Returns the realpath, or NULL. */
static char *
py_module(struct node_ctx *x, const char *path)
{
	const char	*home = getenv("HOME");
	char		*p, *c, *real = NULL;

	if (path[0] == '~' && path[1] == '/' && home != NULL)
		p = xasprintf("%s%s", home, path + 1);
	else
		p = xstrdup(path);
	if (p[0] != '/' && !py_isfile(p) && x->nx_confdir != NULL) {
		c = xasprintf("%s/%s", x->nx_confdir, p);
		if (py_isfile(c)) {
			free(p);
			p = c;
		} else
			free(c);
	}
	if (py_isfile(p))
		real = realpath(p, NULL);
	free(p);
	return real;
}

/* A list item or keyword value as WilmerAI passes it: str(value) (a
 * dict as {'k': 'v'}) with variables applied, so Invoke always gets
 * strings. */
static json_t *
py_value(struct node_ctx *x, json_t *e)
{
	json_t	*v;
	char	*str = pyfmt_strdup(e), *s;

	s = vars_format(x->nx_vars, str);
	if ((v = json_string(s)) == NULL)
		v = json_string("");
	free(s);
	free(str);
	return v;
}

/* {"args": [...], "kwargs": {...}} for the runner, or NULL. */
static char *
py_payload(struct node_ctx *x)
{
	json_t		*args = json_array(), *kw = json_object();
	json_t		*root, *e, *src;
	const char	*k;
	char		*s;
	size_t		 i;

	src = json_object_get(x->nx_node, "args");
	json_array_foreach(src, i, e)
		json_array_append_new(args, py_value(x, e));
	src = json_object_get(x->nx_node, "kwargs");
	json_object_foreach(src, k, e)
		json_object_set_new(kw, k, py_value(x, e));
	root = json_object();
	json_object_set_new(root, "args", args);
	json_object_set_new(root, "kwargs", kw);
	s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

static void
py_close(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

/* Actions and attributes for the child: stdio on our pipes (stdin a
 * socket, so that writing to a child that went away is EPIPE, never
 * SIGPIPE), nothing else open, default signals, own process group. */
static int
py_spawn_fds(struct pyrun *pr, char *python, char *module, const int in[2],
    const int out[2], const int err[2])
{
	static char			 a_isolated[] = "-I", a_cmd[] = "-c";
	char				*argv[] = { python, a_isolated, a_cmd,
					    py_runner, module, NULL };
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 at;
	sigset_t			 none, dfl;
	int				 rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[1], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	sigaddset(&dfl, SIGCHLD);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&pr->p_pid, python, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc;
}

/* Start the child; 0, or -1 with errno. */
static int
py_spawn(struct pyrun *pr, char *python, char *module)
{
	int	 in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	int	 rc = 0, i;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) == -1 ||
	    pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1)
		rc = errno;
	else
		rc = py_spawn_fds(pr, python, module, in, out, err);
	py_close(&in[1]);
	py_close(&out[1]);
	py_close(&err[1]);
	pr->p_in = in[0];
	pr->p_out = out[0];
	pr->p_err = err[0];
	if (rc != 0) {
		py_close(&pr->p_in);
		py_close(&pr->p_out);
		py_close(&pr->p_err);
		errno = rc;
		return -1;
	}
	for (i = 0; i < 3; i++)
		(void)fcntl(i == 0 ? pr->p_in : i == 1 ? pr->p_out : pr->p_err,
		    F_SETFL, O_NONBLOCK);
	return 0;
}

/* Kill the child's process group and reap the child. The child is not
 * reaped before the kill, so its pid (the group id) cannot have been
 * reused by then. */
static void
py_reap(struct pyrun *pr)
{
	if (pr->p_reaped)
		return;
	(void)kill(-pr->p_pid, SIGKILL);
	while (waitpid(pr->p_pid, &pr->p_status, 0) == -1) {
		if (errno != EINTR) {
			pr->p_lost = true;
			break;
		}
	}
	pr->p_reaped = true;
}

/* Has the child exited? Then reap it (and whatever it left behind). */
static bool
py_exited(struct pyrun *pr)
{
	siginfo_t	 si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pr->p_pid, &si, WEXITED | WNOHANG |
	    WNOWAIT) == -1) {
		if (errno != ECHILD)
			return false;
		pr->p_reaped = pr->p_lost = true;
		return true;
	}
	if (si.si_pid == 0)
		return false;
	py_reap(pr);
	return true;
}

/* Give the child more of its stdin; close it when all is sent or the
 * child stopped reading. */
static void
py_feed(struct pyrun *pr)
{
	ssize_t	 n;

	while (pr->p_in != -1 && pr->p_off < pr->p_len) {
		n = send(pr->p_in, pr->p_data + pr->p_off, pr->p_len - pr->p_off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == -1)
			break;
		pr->p_off += (size_t)n;
	}
	py_close(&pr->p_in);
}

/* Read what is waiting on *fd into b, keeping the first keep bytes
 * (enough to see stdout pass its cap). At EOF *fd is closed. Reads at
 * most 1 MiB per call so a chatty child cannot hold the loop. */
static int
py_drain(int *fd, struct buf *b, size_t keep)
{
	char	 chunk[16384];
	ssize_t	 n;
	int	 i;

	for (i = 0; i < 64; i++) {
		n = read(*fd, chunk, sizeof(chunk));
		if (n > 0 && b->b_len < keep)
			buf_add(b, chunk, (size_t)n < keep - b->b_len ?
			    (size_t)n : keep - b->b_len);
		if (n > 0 && b->b_len > PY_OUT_MAX)
			return 0;
		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		py_close(fd);
		return n == 0 ? 0 : -1;
	}
	return 0;
}

/* One poll round: the gateway channel, then the child's three pipes. */
static int
py_poll(struct pyrun *pr, int wfd, struct pollfd pfd[4], int ms)
{
	pfd[0] = (struct pollfd){ wfd, POLLIN, 0 };
	pfd[1] = (struct pollfd){ pr->p_in, POLLOUT, 0 };
	pfd[2] = (struct pollfd){ pr->p_out, POLLIN, 0 };
	pfd[3] = (struct pollfd){ pr->p_err, POLLIN, 0 };
	if (poll(pfd, 4, ms) == -1)
		return errno == EINTR ? 0 : -1;
	if (pfd[1].revents != 0)
		py_feed(pr);
	if (pfd[2].revents != 0 &&
	    py_drain(&pr->p_out, &pr->p_stdout, PY_OUT_MAX + 1) == -1)
		return -1;
	if (pfd[3].revents != 0 &&
	    py_drain(&pr->p_err, &pr->p_stderr, PY_ERR_MAX) == -1)
		return -1;
	return 0;
}

/* Run the child to its end, or until it must be stopped: past the
 * deadline, too much output, or the request cancelled. The gateway is
 * kept informed (rq_wake) at least every PY_TICK_MS. */
static enum py_end
py_wait(struct node_ctx *x, struct pyrun *pr, uint64_t deadline)
{
	struct pollfd	 pfd[4];
	uint64_t	 now;
	int		 wfd = x->nx_rq != NULL ? x->nx_rq->rq_wake_fd : -1, ms;
	bool		 readable;

	for (;;) {
		if (pr->p_out == -1 && pr->p_err == -1 && py_exited(pr))
			return PY_DONE;
		if ((now = clock_mono_ms()) >= deadline)
			return PY_TIMEOUT;
		/* Pipes closed but not exited yet: look again soon. */
		ms = pr->p_out == -1 && pr->p_err == -1 ? 10 : PY_TICK_MS;
		if (deadline - now < (uint64_t)ms)
			ms = (int)(deadline - now);
		if (py_poll(pr, wfd, pfd, ms) == -1)
			return PY_FAILED;
		if (pr->p_stdout.b_len > PY_OUT_MAX)
			return PY_CAP;
		readable = wfd >= 0 &&
		    (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
		if (x->nx_rq != NULL && rq_wake(x->nx_rq, readable) == 1)
			return PY_CANCELLED;
	}
}

/* The kept stderr without trailing whitespace, for a message. */
static const char *
py_stderr(struct pyrun *pr)
{
	struct buf	*b = &pr->p_stderr;

	while (b->b_len > 0 && (b->b_data[b->b_len - 1] == '\n' ||
	    b->b_data[b->b_len - 1] == ' ' || b->b_data[b->b_len - 1] == '\r'))
		b->b_data[--b->b_len] = '\0';
	return b->b_len > 0 ? b->b_data : "";
}

/* Turn how the child ended into the node's output or error. */
static int
py_judge(struct node_ctx *x, struct pyrun *pr, enum py_end end,
    const char *module, double timeout, struct buf *out, struct wresult *res)
{
	const char	*so = pr->p_stdout.b_data != NULL ?
			    pr->p_stdout.b_data : "", *err;
	int		 st = pr->p_status;

	if (end == PY_CANCELLED) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	if (end == PY_TIMEOUT)
		return node_fail(x, res, 504, "Python module '%s' did not "
		    "finish within %g s and was killed", module, timeout);
	if (end == PY_CAP)
		return node_fail(x, res, 500, "Python module '%s' wrote more "
		    "than 1 MiB and was killed", module);
	if (end == PY_FAILED || pr->p_lost)
		return node_fail(x, res, 500, "lost track of python3 running "
		    "'%s'", module);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		buf_add(out, pr->p_stdout.b_data, pr->p_stdout.b_len);
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 2 && *so != '\0')
		return node_fail(x, res, 500, "Python module '%s' raised %s",
		    module, so);
	err = py_stderr(pr);
	if (WIFEXITED(st))
		return node_fail(x, res, 500, "python3 exited with status %d "
		    "running '%s'%s%s", WEXITSTATUS(st), module,
		    *err != '\0' ? "; stderr: " : "", err);
	return node_fail(x, res, 500, "python3 was killed by signal %d "
	    "running '%s'%s%s", WTERMSIG(st), module,
	    *err != '\0' ? "; stderr: " : "", err);
}

static int
py_execute(struct node_ctx *x, char *python, char *module,
    const char *payload, struct buf *out, struct wresult *res)
{
	struct pyrun	 pr;
	double		 t = node_double(x, "timeout", PY_TIMEOUT_S);
	enum py_end	 end;
	int		 rc;

	if (!(t > 0) || t > 86400)
		t = PY_TIMEOUT_S;
	memset(&pr, 0, sizeof(pr));
	pr.p_data = payload;
	pr.p_len = strlen(payload);
	if (py_spawn(&pr, python, module) == -1)
		return node_fail(x, res, 500, "cannot start %s: %s", python,
		    strerror(errno));
	if (x->nx_rq != NULL)
		rq_phase(x->nx_rq, "node %zu/%zu: running Python module %s",
		    x->nx_index + 1, x->nx_count, strrchr(module, '/') + 1);
	end = py_wait(x, &pr, clock_mono_ms() + (uint64_t)(t * 1000));
	py_reap(&pr);
	py_close(&pr.p_in);
	py_close(&pr.p_out);
	py_close(&pr.p_err);
	rc = py_judge(x, &pr, end, module, t, out, res);
	buf_free(&pr.p_stdout);
	buf_free(&pr.p_stderr);
	return rc;
}

static int
python_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*path = node_str(x, "module_path");
	char	*module = NULL, *python = NULL, *payload = NULL;
	int	 rc;

	if (*path == '\0')
		rc = node_fail(x, res, 400, "module_path is empty");
	else if ((module = py_module(x, path)) == NULL)
		rc = node_fail(x, res, 500, "No file found at %s", path);
	else if ((python = py_find()) == NULL)
		rc = node_fail(x, res, 500, "python3 was not found on PATH");
	else if ((payload = py_payload(x)) == NULL)
		rc = node_fail(x, res, 500, "args/kwargs cannot be sent as "
		    "JSON");
	else
		rc = py_execute(x, python, module, payload, out, res);
	free(payload);
	free(python);
	free(module);
	free(path);
	return rc;
}

const struct node_type node_python = { "PythonModule", python_run, false };
