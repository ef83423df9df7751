#!/usr/bin/env python3
"""layers.py - the worker's link graph from nm: cycles between folders, the largest knot of files.

Usage: scripts/layers.py [--max-scc N] [--verbose] [--tests DIR
                         [--skip SUITE]... [--exempt FILE]...] OBJDIR [FOLDER]

Run from the source tree's top. Reads every object under OBJDIR/FOLDER
(default: worker) whose source FOLDER/<name>.c still exists, links each
undefined symbol to the object that defines it, and draws an edge from
the user's file to the definer's. It prints:

  - the folders and the edges between them, and every cycle among
    folders (a strongly connected group of two or more folders);
  - the size of the largest strongly connected group of files, and its
    members when it is larger than N (--max-scc, default 3).

With --tests, it also prints every file of the tree that no unit
suite (the programs in DIR) links: a file counts as linked when every
symbol its object defines, its static functions included, is in one
suite's symbol table, so a stub of the same name does not count. A
suite named with --skip does not count (one that links everything to
check a table, say); a file named with --exempt (its name without .c,
relative to FOLDER) need not be linked.

The exit status is 1 when there is a cycle between folders, a group of
files larger than N, or a file no suite links, else 0; 2 on a usage
error. Symbols defined in no object of the tree (libc, libcurl,
common/, proto/) are not edges.
"""
import os
import subprocess
import sys


def objects(root, src):
    """The objects under root whose source is still under src (objects
    of files since moved or removed are left out)."""
    for d, _, files in os.walk(root):
        for f in sorted(files):
            o = os.path.join(d, f)
            if f.endswith(".o") and os.path.exists(
                    os.path.join(src, os.path.relpath(o, root)[:-2] + ".c")):
                yield o


def nm(path):
    """(defined, undefined) global symbol sets of one object."""
    out = subprocess.run(["nm", "-g", path], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in "Uw":
            defined.add(parts[2])
    return defined, undefined


def graph(objs, base):
    """File -> set of files it uses, names relative to base, no .o."""
    name = {o: os.path.relpath(o, base)[:-2] for o in objs}
    syms, owner = {}, {}
    for o in objs:
        syms[o] = nm(o)
        for s in syms[o][0]:
            owner[s] = name[o]
    edges = {name[o]: set() for o in objs}
    for o in objs:
        for s in syms[o][1]:
            if s in owner and owner[s] != name[o]:
                edges[name[o]].add(owner[s])
    return edges


def sccs(edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def symbols(path):
    """Every function and object symbol a file defines, local ones too."""
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtDdBbRr" and \
                not parts[2].startswith("."):
            syms.add(parts[2])
    return syms


def unlinked(objs, base, tests, skip, exempt):
    """The files (names relative to base) no suite in tests links."""
    linked = []
    for t in sorted(os.listdir(tests)):
        p = os.path.join(tests, t)
        if t in skip or not os.path.isfile(p) or not os.access(p, os.X_OK):
            continue
        linked.append(symbols(p))
    out = []
    for o in objs:
        name = os.path.relpath(o, base)[:-2]
        mine = symbols(o)
        if name in exempt or not mine:
            continue
        if not any(mine <= s for s in linked):
            out.append(name)
    return out


def folder(f):
    d = os.path.dirname(f)
    return d if d else "."


def main(argv):
    max_scc, verbose, args = 3, False, []
    tests, skip, exempt = None, set(), set()
    it = iter(argv)
    for a in it:
        if a == "--max-scc":
            max_scc = int(next(it, "3"))
        elif a == "--verbose":
            verbose = True
        elif a == "--tests":
            tests = next(it, None)
        elif a == "--skip":
            skip.add(next(it, ""))
        elif a == "--exempt":
            exempt.add(next(it, ""))
        else:
            args.append(a)
    if not 1 <= len(args) <= 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tree = args[1] if len(args) > 1 else "worker"
    base = os.path.join(args[0], tree)
    objs = sorted(objects(base, tree))
    if not objs:
        print(f"layers: no objects under {base} (build first)",
              file=sys.stderr)
        return 2
    edges = graph(objs, base)
    fedges = {}
    for a, bs in edges.items():
        fedges.setdefault(folder(a), set())
        for b in bs:
            if folder(a) != folder(b):
                fedges[folder(a)].add(folder(b))
    bad = 0
    print(f"layers: {len(edges)} files in {len(fedges)} folders under {base}")
    for f in sorted(fedges):
        print(f"  {f} -> {' '.join(sorted(fedges[f])) or '(nothing)'}")
    for comp in sccs(fedges):
        if len(comp) > 1:
            print(f"layers: cycle between folders: {' '.join(comp)}")
            bad = 1
    comps = sccs(edges)
    big = max(comps, key=len)
    print(f"layers: largest group of files that all reach each other: "
          f"{len(big)} (at most {max_scc})")
    for comp in comps:
        if len(comp) > max_scc or (verbose and len(comp) > 1):
            print(f"  {len(comp)}: {' '.join(comp)}")
            if len(comp) > max_scc:
                bad = 1
    if tests is not None:
        lone = unlinked(objs, base, tests, skip, exempt)
        print(f"layers: files no unit suite links: {len(lone)}")
        for name in lone:
            print(f"  {name}")
        bad |= 1 if lone else 0
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
