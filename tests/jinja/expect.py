# expect.py - renders tests/jinja/corpus.txt with python3's jinja2 directly, as WilmerAI does, one JSON answer a line (tests/unit/check_jinja.c).
#
# Usage: python3 tests/jinja/expect.py DIR. For each case of DIR/corpus.txt,
# in order: {"name": N, "ok": text} or {"name": N, "error": ExceptionType}.
# The variables are built the way WilmerAI's apply_variables builds them
# from DIR/contexts.json: workflow keys as they are, agent inputs and
# outputs and message contents with their braces as sentinels (restored
# in the output), messages as a list of dicts.

import json
import sys

import jinja2

L, R = "__WILMER_L_CURLY__", "__WILMER_R_CURLY__"


def esc(s):
    return s.replace("{", L).replace("}", R)


def cases(path):
    out, cur = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("=== "):
                cur = [line[4:].split(), []]
                out.append(cur)
            elif cur is not None:
                cur[1].append(line)
    return [(h[0], h[1], "".join(b)[:-1] if b else "") for h, b in out]


def variables(ctx):
    v = dict(ctx["workflow"])
    v.update({k: esc(s) for k, s in ctx["agents"].items()})
    msgs = []
    for m in ctx["messages"]:
        d = dict(m)
        d["content"] = esc(m["content"])
        msgs.append(d)
    v["messages"] = msgs
    return v


def main():
    d = sys.argv[1]
    ctxs = json.load(open(d + "/contexts.json", encoding="utf-8"))
    for name, ctx, tmpl in cases(d + "/corpus.txt"):
        try:
            t = jinja2.Environment().from_string(tmpl)
            text = t.render(**variables(ctxs[ctx]))
            ans = {"name": name, "ok": text.replace(L, "{").replace(R, "}")}
        except Exception as e:
            ans = {"name": name, "error": type(e).__name__}
        print(json.dumps(ans))


main()
