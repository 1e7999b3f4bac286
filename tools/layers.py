#!/usr/bin/env python3
"""Check that vyre's sources stay in layers (docs/layers.md, issue 24).

A module is the files of one folder that share a stem (x.c, x.h, x.cuh,
x.cu, x.cpp). A module uses another when one of its files includes a file
of the other (the includes as written) or when its object calls a symbol
the other's object defines (nm on the build's objects). The layer list is
tools/layers.conf. The check fails when:

  - a module uses a module of a higher layer of its folder;
  - a module uses a module of a folder ranked above its own;
  - modules use each other in a circle (any layer);
  - a source file has no layer in the list, or the list names a module
    that has no file.

Usage: layers.py [--root DIR] [--conf FILE] [--build DIR] [--graph]
Exit 0 when clean, 1 with one line per violation, 2 on bad usage.
Only the standard library is used.
"""

import argparse
import os
import re
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cpp")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def fail_usage(msg):
    print("layers: " + msg, file=sys.stderr)
    sys.exit(2)


def read_conf(path):
    """Return (folder ranks, module layers, include search dirs)."""
    ranks, layers, search = {}, {}, []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        fail_usage("%s: %s" % (path, e.strerror))
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].split()
        if not line:
            continue
        where = "%s:%d" % (path, n)
        if line[0] == "folder":
            if len(line) != 3 or not line[2].isdigit():
                fail_usage(where + ": expected 'folder DIR RANK'")
            ranks[line[1]] = int(line[2])
        elif line[0] == "search":
            search.extend(line[1:])
        elif line[0] == "layer":
            if len(line) < 4 or not line[2].isdigit():
                fail_usage(where + ": expected 'layer DIR N STEM...'")
            folder, level = line[1], int(line[2])
            if folder not in ranks:
                fail_usage(where + ": folder %s has no rank yet" % folder)
            for stem in line[3:]:
                key = folder + "/" + stem
                if key in layers:
                    fail_usage(where + ": %s listed twice" % key)
                layers[key] = level
        else:
            fail_usage(where + ": unknown keyword " + line[0])
    return ranks, layers, search


def list_sources(root, ranks):
    """Map module -> its files, for every source file directly in a folder."""
    modules = {}
    for folder in ranks:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            fail_usage("folder %s does not exist" % folder)
        for name in sorted(os.listdir(d)):
            stem, ext = os.path.splitext(name)
            if ext in SOURCE_EXT and os.path.isfile(os.path.join(d, name)):
                modules.setdefault(folder + "/" + stem, []).append(folder + "/" + name)
    return modules


def module_of(path, modules_by_file):
    return modules_by_file.get(os.path.normpath(path))


def include_edges(root, modules, modules_by_file, search):
    edges = {}
    for mod, files in modules.items():
        for f in files:
            text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
            for inc in INCLUDE_RE.findall(text):
                tries = [os.path.join(os.path.dirname(f), inc)]
                tries += [os.path.join(s, inc) for s in search]
                tries.append(inc)
                for t in tries:
                    target = module_of(t, modules_by_file)
                    if target:
                        if target != mod:
                            edges.setdefault((mod, target), "includes " + os.path.normpath(t))
                        break
    return edges


def nm_symbols(obj):
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True)
    defined = {ln.split()[-1] for ln in out.stdout.splitlines()
               if len(ln.split()) == 3 and ln.split()[1] in "TDBRVWGS"}
    out = subprocess.run(["nm", "--undefined-only", obj], capture_output=True, text=True)
    undefined = {ln.split()[-1] for ln in out.stdout.splitlines() if ln.split()}
    return defined, undefined


def call_edges(root, build, modules, modules_by_file):
    """Edges from the objects: who calls a symbol that whom defines."""
    if not build:
        return {}
    objdir = os.path.join(build, "obj")
    if not os.path.isdir(objdir):
        fail_usage("%s: no objects (build first, or leave --build out)" % objdir)
    defs, uses = {}, {}
    for mod, files in modules.items():
        for f in files:
            if not f.endswith(".c"):
                continue
            obj = os.path.join(objdir, f[:-2] + ".o")
            if not os.path.exists(obj):
                continue
            d, u = nm_symbols(obj)
            for s in d:
                defs.setdefault(s, mod)
            uses.setdefault(mod, set()).update(u)
    edges = {}
    for mod, syms in uses.items():
        for s in sorted(syms):
            target = defs.get(s)
            if target and target != mod:
                edges.setdefault((mod, target), "calls " + s)
    return edges


def circles(nodes, adj):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(adj.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(adj.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def folder_of(mod):
    return os.path.dirname(mod)


def main():
    ap = argparse.ArgumentParser(description="check vyre's layers")
    ap.add_argument("--root", default=".")
    ap.add_argument("--conf", default=None)
    ap.add_argument("--build", default=None, help="build dir whose obj/ holds the objects")
    ap.add_argument("--graph", action="store_true", help="print every edge")
    a = ap.parse_args()
    conf = a.conf or os.path.join(a.root, "tools/layers.conf")
    build = a.build
    if build and not os.path.isabs(build):
        build = os.path.join(a.root, build)

    ranks, layers, search = read_conf(conf)
    modules = list_sources(a.root, ranks)
    by_file = {os.path.normpath(f): m for m, fs in modules.items() for f in fs}
    edges = include_edges(a.root, modules, by_file, search)
    for k, why in call_edges(a.root, build, modules, by_file).items():
        edges.setdefault(k, why)

    problems = []
    for mod in sorted(modules):
        if mod not in layers:
            problems.append("%s: no layer in %s" % (mod, conf))
    for mod in sorted(layers):
        if mod not in modules:
            problems.append("%s: listed in %s but has no file" % (mod, conf))

    adj = {}
    for (src, dst), why in sorted(edges.items()):
        adj.setdefault(src, set()).add(dst)
        if a.graph:
            print("%s -> %s (%s)" % (src, dst, why))
        fs, fd = folder_of(src), folder_of(dst)
        if fs != fd:
            if ranks[fd] > ranks[fs]:
                problems.append("%s (folder rank %d) uses %s (folder rank %d): %s"
                                % (src, ranks[fs], dst, ranks[fd], why))
        elif src in layers and dst in layers and layers[dst] > layers[src]:
            problems.append("%s (layer %d) uses %s (layer %d): %s"
                            % (src, layers[src], dst, layers[dst], why))
    for comp in circles(modules.keys(), adj):
        problems.append("circle: " + " <-> ".join(comp))

    for p in problems:
        print("layers: " + p)
    if problems:
        print("layers: %d problem(s); the layer list is %s" % (len(problems), conf))
        return 1
    print("layers: %d modules, %d uses, no circle, nothing calls up" % (len(modules), len(edges)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
