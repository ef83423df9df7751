/* node_python.c - PythonModule: Invoke(*args, **kwargs) from a Python file, run in a python3 child. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../../common/clock.h"
#include "../../common/paths.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../tools/child.h"
#include "../tools/childrun.h"

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

#define PY_OUT_MAX	(1u << 20)	/* stdout beyond this: killed */
#define PY_ERR_MAX	4096		/* stderr kept for messages */
#define PY_TICK_MS	250		/* gateway checked this often */
#define PY_TIMEOUT_S	60.0

/* Loads module_path (argv[1]) as WilmerAI's dynamic_module_loader
 * does, calls Invoke with the JSON args/kwargs read from stdin, writes
 * str(result) to stdout and exits 0 (a dict or list that JSON can hold:
 * then a NUL and the JSON, and exits 3, so that a Jinja2 template of a
 * later node sees the object, as WilmerAI keeps it); on an exception it writes
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
    "        r = fn(*data['args'], **data['kwargs'])\n"
    "        text, code = str(r), 0\n"
    "        if isinstance(r, (dict, list)):\n"
    "            try:\n"
    "                text, code = text + '\\0' + json.dumps(r), 3\n"
    "            except (TypeError, ValueError):\n"
    "                pass\n"
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
	char		*p = paths_expanduser(path), *c, *real = NULL;

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
	char	*s = vars_format_value(x->nx_vars, e);

	if ((v = json_string(s)) == NULL)
		v = json_string("");
	free(s);
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

/* The kept stderr without trailing whitespace, for a message. */
static const char *
py_stderr(struct child_io *io)
{
	struct buf	*b = &io->ci_err;

	while (b->b_len > 0 && (b->b_data[b->b_len - 1] == '\n' ||
	    b->b_data[b->b_len - 1] == ' ' || b->b_data[b->b_len - 1] == '\r'))
		b->b_data[--b->b_len] = '\0';
	return b->b_len > 0 ? b->b_data : "";
}

/* A dict or list result: str() before the NUL is the output, the JSON
 * after it what a Jinja2 template sees as agentNOutput. */
static int
py_object(struct node_ctx *x, const struct child_io *io, struct buf *out)
{
	const char	*p = io->ci_out.b_data != NULL ? io->ci_out.b_data : "";
	const char	*nul = memchr(p, '\0', io->ci_out.b_len);
	size_t		 n = nul != NULL ? (size_t)(nul - p) : io->ci_out.b_len;

	buf_add(out, p, n);
	if (nul != NULL)
		x->nx_out_json = json_loadb(nul + 1, io->ci_out.b_len - n - 1,
		    0, NULL);
	return 0;
}

/* Turn how the child ended into the node's output or error. */
static int
py_judge(struct node_ctx *x, const struct child *c, struct child_io *io,
    enum child_end end, const char *module, double timeout, struct buf *out,
    struct wresult *res)
{
	const char	*so = io->ci_out.b_data != NULL ?
			    io->ci_out.b_data : "", *err;
	int		 st = c->ch_status;

	if (end == CHILD_CANCELLED) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	if (end == CHILD_TIMEOUT)
		return node_fail(x, res, 504, "Python module '%s' did not "
		    "finish within %g s and was killed", module, timeout);
	if (end == CHILD_CAP)
		return node_fail(x, res, 500, "Python module '%s' wrote more "
		    "than 1 MiB and was killed", module);
	if (end == CHILD_FAILED || c->ch_lost)
		return node_fail(x, res, 500, "lost track of python3 running "
		    "'%s'", module);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		buf_add(out, io->ci_out.b_data, io->ci_out.b_len);
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		return py_object(x, io, out);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 2 && *so != '\0')
		return node_fail(x, res, 500, "Python module '%s' raised %s",
		    module, so);
	err = py_stderr(io);
	if (WIFEXITED(st))
		return node_fail(x, res, 500, "python3 exited with status %d "
		    "running '%s'%s%s", WEXITSTATUS(st), module,
		    *err != '\0' ? "; stderr: " : "", err);
	return node_fail(x, res, 500, "python3 was killed by signal %d "
	    "running '%s'%s%s", WTERMSIG(st), module,
	    *err != '\0' ? "; stderr: " : "", err);
}

/* Start python3 -I -c <runner> <module>; 0, or -1 after node_fail. */
static int
py_start(struct node_ctx *x, struct child *c, char *module,
    struct wresult *res)
{
	static char		 a_py[] = "python3", a_iso[] = "-I",
				 a_cmd[] = "-c";
	char			*argv[] = { a_py, a_iso, a_cmd, py_runner,
				    module, NULL };
	struct child_spec	 cs = { "python3", argv, NULL, NULL, true,
				    true };
	struct buf		 err = BUF_INIT;
	int			 rc = 0;

	if (child_spawn(c, &cs, &err) == -1)
		rc = node_fail(x, res, 500, "%s", err.b_data);
	buf_free(&err);
	return rc;
}

static int
py_execute(struct node_ctx *x, char *module, const char *payload,
    struct buf *out, struct wresult *res)
{
	struct child		 c;
	struct child_io		 io = { payload, strlen(payload), PY_OUT_MAX,
				    PY_ERR_MAX, BUF_INIT, BUF_INIT };
	struct transport_hooks	 hooks;
	double			 t = node_double(x, "timeout", PY_TIMEOUT_S);
	enum child_end		 end;
	int			 rc;

	if (node_render_failed(x))
		return -1;	/* the engine says why */
	if (!(t > 0) || t > 86400)
		t = PY_TIMEOUT_S;
	if (py_start(x, &c, module, res) == -1)
		return -1;
	if (x->nx_rq != NULL) {
		rq_phase(x->nx_rq, "node %zu/%zu: running Python module %s",
		    x->nx_index + 1, x->nx_count, strrchr(module, '/') + 1);
		hooks = (struct transport_hooks){ x->nx_rq->rq_wake_fd,
		    PY_TICK_MS, rq_wake, x->nx_rq };
	}
	end = child_run(&c, &io, clock_mono_ms() + (uint64_t)(t * 1000),
	    x->nx_rq != NULL ? &hooks : NULL);
	child_kill(&c);
	rc = py_judge(x, &c, &io, end, module, t, out, res);
	buf_free(&io.ci_out);
	buf_free(&io.ci_err);
	return rc;
}

static int
python_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char	*path = node_str(x, "module_path");
	char	*module = NULL, *payload = NULL;
	int	 rc;

	if (*path == '\0')
		rc = node_fail(x, res, 400, "module_path is empty");
	else if ((module = py_module(x, path)) == NULL)
		rc = node_fail(x, res, 500, "No file found at %s", path);
	else if ((payload = py_payload(x)) == NULL)
		rc = node_fail(x, res, 500, "args/kwargs cannot be sent as "
		    "JSON");
	else
		rc = py_execute(x, module, payload, out, res);
	free(payload);
	free(module);
	free(path);
	return rc;
}

const struct node_type node_python = { "PythonModule", python_run, false };
