# jinja_helper.py - renders Jinja2 templates for a Sluice worker: one JSON request a line on stdin, one JSON answer a line on stdout.
#
# Built into the worker (worker/tools/jinja.c runs it as `python3 -I -c
# <this file>`), so there is no install path to get wrong. A request is
# {"t": template, "c": {variables}, "cap": bytes}; the answer is
# {"ok": text}, or {"error": cause, "line": N or null}. The first line
# written is {"ready": jinja2 version}, or {"fatal": why} when the
# jinja2 module cannot be imported. Templates compile in a default
# jinja2.sandbox.SandboxedEnvironment(): WilmerAI's apply_variables uses
# a fresh jinja2.Environment() a call, and the sandbox renders the same
# text for every template of tests/jinja/corpus.txt, while a template
# cannot reach Python's internals (__class__, __globals__, ...) nor
# make a range of more than 100000 items (docs/migrating-from-wilmer.md).
# The environment holds no state a render changes, so the compiled
# templates are kept by source: compiling is most of a render's cost.
# Time is limited by the worker, which kills this process's group.

import json
import resource
import sys


def say(obj):
    out = sys.stdout.buffer
    out.write(json.dumps(obj, ensure_ascii=False).encode("utf-8",
        "surrogatepass"))
    out.write(b"\n")
    out.flush()


def template_line(exc):
    # Jinja rewrites a render error's traceback so that the template's
    # frames carry its line numbers under the file name "<template>".
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


CACHE_MAX = 256
cache = {}


def compiled(jinja2, source):
    tmpl = cache.get(source)
    if tmpl is None:
        tmpl = jinja2.sandbox.SandboxedEnvironment().from_string(source)
        if len(cache) >= CACHE_MAX:
            cache.clear()
        cache[source] = tmpl
    return tmpl


def render(jinja2, req):
    cap = int(req.get("cap", 16 << 20))
    try:
        tmpl = compiled(jinja2, req["t"])
        parts = []
        size = 0
        for chunk in tmpl.generate(**req["c"]):
            size += len(chunk.encode("utf-8", "surrogatepass"))
            if size > cap:
                return {"error": "the output is longer than the limit "
                        "of %d bytes" % cap, "line": None}
            parts.append(chunk)
        return {"ok": "".join(parts)}
    except jinja2.TemplateSyntaxError as e:
        return {"error": "TemplateSyntaxError: %s" % e.message,
                "line": e.lineno}
    except MemoryError:
        return {"error": "MemoryError: the template used more memory "
                "than the limit", "line": None}
    except RecursionError as e:
        return {"error": "RecursionError: %s" % e, "line": None}
    except Exception as e:
        return {"error": "%s: %s" % (type(e).__name__, e),
                "line": template_line(e)}


def die_with_parent():
    # A worker killed mid-render must not leave this process spinning:
    # Linux's PR_SET_PDEATHSIG (1) with SIGKILL (9), through libc.
    try:
        import ctypes
        import os
        parent = os.getppid()
        ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)
        if os.getppid() != parent:
            sys.exit(0)
    except (OSError, AttributeError):
        pass


def main():
    die_with_parent()
    if len(sys.argv) > 1 and int(sys.argv[1]) > 0:
        lim = int(sys.argv[1])
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    try:
        import jinja2
        import jinja2.sandbox
    except ImportError as e:
        say({"fatal": "python3 cannot import jinja2 (%s); install the "
             "python3-jinja2 package" % e})
        return
    say({"ready": jinja2.__version__})
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line.decode("utf-8", "surrogateescape"))
        except ValueError as e:
            say({"error": "bad request: %s" % e, "line": None})
            continue
        try:
            ans = render(jinja2, req)
        except MemoryError:
            ans = {"error": "MemoryError: the template used more memory "
                   "than the limit", "line": None}
        say(ans)


main()
