#!/usr/bin/env bash
# The call graph between the build's object files, and its circles.
#
#   scripts/check-layers.sh [BUILD_DIR]      (make check runs it with BUILD set)
#
# Reads the build's Makefile for what each program and library is made of
# (bin_PROGRAMS, sbin_PROGRAMS, noinst_LIBRARIES, lib_LIBRARIES: their
# *_OBJECTS, and the programs' LDADD archives), and for every object the
# symbols it defines (nm: global T, D, B, R, ...) and the ones it uses (U).
# An edge A -> B when A uses a symbol B defines. A circle is a strongly
# connected component of more than one object: each of its objects calls,
# through the others, back into itself, so none of them can be understood,
# tested or replaced alone. Each library is one graph, each program one
# graph with the archives it links.
#
# Every circle must be listed in scripts/layers-allowed.txt (one circle per
# line, its objects sorted and separated by spaces, a comment saying why);
# a circle that is not, a listed circle that grew, shrank or is gone, fails:
# the list holds exactly the circles the tree has, so it only ever shrinks.
# A failure prints the calls that close the circle (which symbols each
# object takes from the next), so the way out is visible.
#
# Objects are named by their path in the build tree with automake's
# per-target prefix dropped (ioserver/engine.o, not
# ioserver/ioserver_ddio_server-engine.o), so the list does not depend on
# the build's flags. Closes with "layers: N passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../test/lib.sh"
[ -n "${1:-}" ] && BUILD=$(cd "$1" && pwd)
t_init layers
allowed=$SRC/scripts/layers-allowed.txt
command -v nm >/dev/null || t_unusable layers/nm "nm missing (binutils)"
command -v python3 >/dev/null || t_unusable layers/python3 "python3 missing"
[ -f "$BUILD/Makefile" ] || t_unusable layers/build "$BUILD/Makefile missing: run configure and make"
[ -f "$allowed" ] || t_unusable layers/allowed "$allowed missing"

python3 - "$BUILD" "$allowed" "$T_TMP/results" <<'PY'
import os, re, subprocess, sys

build, allowed_file, results = sys.argv[1:4]
out = open(results, "w")
def result(line):
    out.write(line + "\n")
    out.flush()

# ---- the Makefile's variables (continuations joined, $(VAR) expanded) ----------
def makefile_vars(path):
    text = open(path).read().replace("\\\n", " ")
    vars_ = {}
    for line in text.split("\n"):
        m = re.match(r"^([A-Za-z0-9_]+)\s*(\+?)=\s*(.*)$", line)
        if m and m.group(2):
            vars_[m.group(1)] = vars_.get(m.group(1), "") + " " + m.group(3)
        elif m:
            vars_[m.group(1)] = m.group(3)
    return vars_

mk = makefile_vars(os.path.join(build, "Makefile"))
def expand(value, depth=0):
    if depth > 20:
        return value
    return re.sub(r"\$\(([A-Za-z0-9_]+)\)",
                  lambda m: expand(mk.get(m.group(1), ""), depth + 1), value)
def words(var):
    return expand(mk.get(var, "")).replace("$(OBJEXT)", "o").split()
def canon(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)

def node_name(obj, target):
    """ioserver/ioserver_ddio_server-engine.o -> ioserver/engine.o"""
    d, b = os.path.split(obj)
    for p in (canon(target), canon(os.path.basename(target))):
        if b.startswith(p + "-"):
            b = b[len(p) + 1:]
            break
    return os.path.join(d, b)

# ---- symbols per object --------------------------------------------------------
DEF = set("ABCDGRSTVWiu")      # defined, global (i: indirect function)
USE = set("Uvw")               # undefined (w/v: weak references)
def nm_A(paths):
    r = subprocess.run(["nm", "-A", "-P"] + paths, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or "nm failed")
    syms = {}
    for line in r.stdout.splitlines():
        # -P: "NAME: SYMBOL TYPE [VALUE SIZE]", NAME is file or archive[member]
        m = re.match(r"^(.*?): (\S+) (\S)( .*)?$", line)
        if not m:
            continue
        name, sym, t = m.group(1), m.group(2), m.group(3)
        d, u = syms.setdefault(name, (set(), set()))
        if t in DEF:
            d.add(sym)
        elif t in USE:
            u.add(sym)
    return syms

def library_nodes(lib):
    """lib (common/libddio-common.a) -> {node: (defs, uses)} of its members"""
    c = canon(lib)
    objs = words("am_%s_OBJECTS" % c) or words("%s_OBJECTS" % c)
    by_base = {os.path.basename(o): o for o in objs}
    path = os.path.join(build, lib)
    if not os.path.exists(path):
        raise RuntimeError("%s not built: run make" % lib)
    nodes = {}
    for name, ds in nm_A([path]).items():
        m = re.match(r"^.*\[(.*)\]$", name)
        member = m.group(1) if m else name
        obj = by_base.get(member, os.path.join(os.path.dirname(lib), member))
        nodes[node_name(obj, lib)] = ds
    return nodes

def program_nodes(prog):
    c = canon(prog)
    objs = words("am_%s_OBJECTS" % c) or words("%s_OBJECTS" % c)
    if not objs:
        raise RuntimeError("the Makefile lists no objects for %s" % prog)
    missing = [o for o in objs if not os.path.exists(os.path.join(build, o))]
    if missing:
        raise RuntimeError("not built: %s: run make" % " ".join(missing))
    nodes = {}
    for name, ds in nm_A([os.path.join(build, o) for o in objs]).items():
        rel = os.path.relpath(name, build)
        nodes[node_name(rel, prog)] = ds
    return nodes

# ---- the graph, its strongly connected components (Tarjan, iterative) ----------
def graph(nodes):
    definer = {}
    for n, (defs, _) in nodes.items():
        for s in defs:
            definer.setdefault(s, set()).add(n)
    edges = {n: {} for n in nodes}   # a -> {b: [symbols a takes from b]}
    for a, (_, uses) in nodes.items():
        for s in sorted(uses):
            for b in definer.get(s, ()):
                if b != a:
                    edges[a].setdefault(b, []).append(s)
    return edges

def sccs(edges):
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(frozenset(comp))
    return comps

def show(comp, edges):
    lines = []
    for a in sorted(comp):
        for b in sorted(edges[a]):
            if b in comp:
                s = edges[a][b]
                more = " (+%d more)" % (len(s) - 4) if len(s) > 4 else ""
                lines.append("    %s -> %s: %s%s" % (a, b, ", ".join(s[:4]), more))
    return lines

# ---- the allowed circles ---------------------------------------------------------
allowed = {}                   # frozenset -> line number
for no, line in enumerate(open(allowed_file), 1):
    line = line.split("#", 1)[0].split()
    if line:
        allowed[frozenset(line)] = no
rel_allowed = "scripts/layers-allowed.txt"

libs = words("noinst_LIBRARIES") + words("lib_LIBRARIES")
progs = [p.replace("$(EXEEXT)", "") for p in words("bin_PROGRAMS") + words("sbin_PROGRAMS")]
progs = [p for p in progs if p]
found = {}                     # frozenset -> (scope, edges)
lib_nodes = {}
for lib in libs:
    try:
        lib_nodes[lib] = library_nodes(lib)
    except RuntimeError as e:
        result("FAIL: layers/%s: %s" % (lib, e))
        continue
scopes = [(lib, lib_nodes[lib]) for lib in libs if lib in lib_nodes]
for prog in progs:
    try:
        nodes = program_nodes(prog)
    except RuntimeError as e:
        result("FAIL: layers/%s: %s" % (prog, e))
        continue
    for lib in words("%s_LDADD" % canon(prog)):
        if lib in lib_nodes:
            nodes.update(lib_nodes[lib])
    scopes.append((prog, nodes))

reported = set()
named = set()                  # listed circles a failure already named
for scope, nodes in scopes:
    edges = graph(nodes)
    comps = sccs(edges)
    bad = []
    for comp in comps:
        found.setdefault(comp, (scope, edges))
        # a library's own circles are its failure, not each program's
        if comp not in allowed and comp not in reported:
            bad.append(comp)
            reported.add(comp)
    own = [c for c in comps if c in allowed]
    note = "%d objects, %d edges, %d listed circle%s" % (
        len(nodes), sum(len(e) for e in edges.values()), len(own), "" if len(own) == 1 else "s")
    if not bad:
        result("PASS: layers/%s (%s)" % (scope, note))
        continue
    for comp in bad:
        grown = [a for a in allowed if a < comp]
        shrunk = [a for a in allowed if comp < a]
        why = "a circle not in %s" % rel_allowed
        named.update(grown + shrunk)
        if grown:
            why = "the circle of %s line %d grew" % (rel_allowed, allowed[grown[0]])
        elif shrunk:
            why = ("the circle of %s line %d shrank: list it instead"
                   % (rel_allowed, allowed[shrunk[0]]))
        result("FAIL: layers/%s: %s:" % (scope, why))
        result("    %s" % " ".join(sorted(comp)))
        result("  the calls around it (object -> the object it calls: symbols):")
        result("\n".join(show(comp, edges)))

# a listed circle the tree no longer has: the list must say so
gone = [(no, a) for a, no in allowed.items() if a not in found and a not in named]
for no, a in sorted(gone):
    result("FAIL: layers/allowed: %s line %d lists a circle the build does not have "
           "(remove or correct the line): %s" % (rel_allowed, no, " ".join(sorted(a))))
if not gone:
    result("PASS: layers/allowed (%d circle%s listed, each in the build)"
           % (len(allowed), "" if len(allowed) == 1 else "s"))
PY
rc=$?
# the results, each failure followed by its indented details
t_results "$T_TMP/results"; n=$T_NRESULTS
if [ $rc -ne 0 ] || [ $n -eq 0 ]; then t_fail layers/run "the graph script failed (exit $rc)"; fi
t_done
