#!/usr/bin/env python3
"""File-level call graph of the core's objects, from `nm`: an edge a -> b
when a.o leaves a symbol undefined that b.o defines.  Exits 1 and names the
files of every cycle (strongly connected component of more than one file),
so that a new cycle between core files fails the build's tests.

Usage: check_cycles.py [--nm NM] [--dot FILE] OBJECT_OR_DIR...
       check_cycles.py --self-test CC   (the check finds a cycle it is shown)
A directory is searched recursively for *.o files.
"""
import argparse
import os
import subprocess
import sys


def objects(paths):
    out = []
    # a CMake list (a;b;c) passed as one argument counts as its items
    paths = [q for p in paths for q in p.split(";") if q]
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                out += [os.path.join(root, f) for f in files if f.endswith(".o")]
        else:
            out.append(p)
    return sorted(out)


def unit_name(path):
    # CMake names objects src/<dirs>/<file>.c.o: keep the source's path below src/
    base = path[:-2] if path.endswith(".o") else path
    parts = base.replace(os.sep, "/").split("/")
    if "src" in parts:
        parts = parts[len(parts) - 1 - parts[::-1].index("src") + 1:]
    else:
        parts = parts[-1:]
    return "/".join(parts)


def symbols(nm, obj):
    text = subprocess.run([nm, "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in text.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            undefined.add(name)
        elif (kind.isupper() and kind != "N") or kind == "i":
            # global definitions: text, data, bss, common, weak; "i" an
            # indirect function (target_clones dispatch)
            defined.add(name)
    return defined, undefined


def strongly_connected(graph):
    """Tarjan's algorithm, iterative; components in discovery order."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
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
                comps.append(sorted(comp))
    return comps


def self_test(cc, nm):
    """Three objects a -> b -> c: no cycle; then c -> a added: one cycle of all three."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        src = {"a": "int b(void); int a(void) { return b(); }",
               "b": "int c(void); int b(void) { return c(); }",
               "c": "int c(void) { return 1; }",
               "c_cyclic": "int a(void); int c(void) { return a(); }"}
        for name, text in src.items():
            with open(os.path.join(d, name + ".c"), "w") as f:
                f.write(text + "\n")
            subprocess.run([cc, "-c", "-o", os.path.join(d, name + ".o"), os.path.join(d, name + ".c")], check=True)
        me = [sys.executable, os.path.abspath(__file__), "--nm", nm]
        ok = subprocess.run(me + [os.path.join(d, n + ".o") for n in "abc"], capture_output=True, text=True)
        bad = subprocess.run(me + [os.path.join(d, n + ".o") for n in ("a", "b", "c_cyclic")], capture_output=True,
                             text=True)
        print(ok.stdout + bad.stdout, end="")
        if ok.returncode != 0 or bad.returncode != 1 or "cycle among 3 files" not in bad.stdout:
            print("check_cycles: self-test FAILED")
            return 1
        print("check_cycles: self-test passed")
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--dot", help="also write the graph in Graphviz form")
    ap.add_argument("--self-test", metavar="CC", help="check the checker with objects compiled by CC")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()
    if a.self_test:
        return self_test(a.self_test, a.nm)
    objs = objects(a.paths)
    if not objs:
        print("check_cycles: no object files under", " ".join(a.paths), file=sys.stderr)
        return 2
    owner, needs = {}, {}
    for o in objs:
        u = unit_name(o)
        d, n = symbols(a.nm, o)
        needs[u] = n
        for s in d:
            owner.setdefault(s, u)
    graph = {u: set() for u in needs}
    for u, n in needs.items():
        for s in n:
            v = owner.get(s)
            if v and v != u:
                graph[u].add(v)
    if a.dot:
        with open(a.dot, "w") as f:
            f.write("digraph core {\n")
            for u in sorted(graph):
                for v in sorted(graph[u]):
                    f.write(f'  "{u}" -> "{v}";\n')
            f.write("}\n")
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    edges = sum(len(v) for v in graph.values())
    if not cycles:
        print(f"check_cycles: {len(graph)} files, {edges} call edges, no cycles")
        return 0
    for c in cycles:
        inside = [f"{u} -> {v}" for u in c for v in sorted(graph[u]) if v in c]
        print(f"check_cycles: cycle among {len(c)} files: " + ", ".join(c))
        for e in inside:
            print("    " + e)
    print(f"check_cycles: {len(cycles)} cycle(s) in {len(graph)} files")
    return 1


if __name__ == "__main__":
    sys.exit(main())
