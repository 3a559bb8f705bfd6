#!/usr/bin/env python3
"""Check that every dependency of the tree points down the layers.

The rule is docs/layers.md; the tables below are the same rule for the
machine. Six checks, over every folder of the tree:

1. Includes. Every quoted #include (and nasm %include) of C, header and
   assembly files is resolved the way the compiler does (the including
   file's directory, then the include path of INCLUDE_PATH: the root,
   which is -I., and the architecture's asm/ headers) and checked
   against the layer of the including file (ALLOWED); so is a <...>
   include that the include path finds in the tree.
2. Imports. Every `import X` / `from X import` of the Python files
   (tools/, tests/) that names a module of the tree (by its dotted path
   from the root: tools.image.qemu) is checked the same way
   (PY_ALLOWED), tools/'s groups as layers of their own (tools/image
   at the bottom, the checks and the labs' tools on top); PY_INTERFACES
   names the modules any group may import. A Python file of tools/
   outside a group, and a line that edits sys.path, are reported too.
3. Interfaces. A function declared in a header of a lower layer and
   defined in a file of a higher one (the lower layer calls up) is
   allowed only when the header is named in INTERFACES with that
   implementer. The same table names the few headers any layer may
   include (trace points, the architecture's asm/ primitives, the cache
   model's doorbell).
4. Cycles. No file may reach itself through includes or imports, however
   long the path.
5. Rooms. kernel/ is three rooms (ROOMS): the core (kernel/), the
   benchmark environment (kernel/bench/) and the shell (kernel/shell/);
   a room includes its own and the rooms below it, and only the boot
   sequence (ROOM_TOP) starts every room.
6. Modules. Everywhere in the tree, a module (a .c file and its .h, as
   one node) may not reach itself either: x.c including y.h while y.c
   includes x.h is a cycle of two ideas, though no file reaches itself.
7. Function length. No function of the kernel's and the cache model's
   C (SIZE_CHECKED) is longer than FUNCTION_MAX_LINES, from its opening
   brace to its closing one; tests may be.

A file in no layer (a new top-level folder) is reported too. A problem
prints

    FILE:LINE: includes TARGET: LAYER may not include TARGET_LAYER

and the exit status is 1. Includes of system headers and imports of
modules outside the tree are not the rule's business.

    python3 -m tools.checks.check_layers [ROOT]
        check the tree (default: the root)
    python3 -m tools.checks.check_layers --ktap [ROOT]
        self-test, then the tree, as KTAP (the make test line)
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".h", ".asm", ".inc", ".S")
PY_SUFFIX = ".py"
# Not part of the tree's code: version control, the build output.
SKIPPED_DIRS = ("build",)

# Where a quoted include is looked for after the including file's own
# directory, in the compiler's order (the Makefile's -I flags).
ARCH_INCLUDE = "arch/x86_64/include"
INCLUDE_PATH = ("", ARCH_INCLUDE)

_KERNEL = {"lib", "mm", "arch/x86_64", "arch/ia64", "boot", "kernel"}
# Layer -> the layers its C and assembly files may include (own included).
# None: on top, anything.
ALLOWED = {
    "lib": {"lib"},
    "mm": {"lib", "mm"},
    "arch/ia64": {"lib", "arch/ia64"},
    "arch/x86_64": {"lib", "mm", "arch/x86_64", "boot"},
    "boot": {"lib", "arch/x86_64", "boot"},
    "kernel": _KERNEL,
    "trace": _KERNEL | {"trace"},
    "workloads": _KERNEL | {"trace", "workloads"},
    "experiments": _KERNEL | {"trace", "workloads", "experiments"},
    # Host code that runs inside QEMU: its own files and system headers.
    "cachemodel": {"cachemodel"},
    # Headers that may include no file of the tree (system headers only).
    "system": set(),
    "tools": None,
    "tests": None,
    # The coding labs' skeletons: pieces of kernel files, which
    # tools/labs/grade.py splices into them for a host build.
    "labs": None,
}

# kernel/'s rooms -> the rooms their files may include (own included):
# the core, the benchmark environment on it, the shell on both.
ROOMS = {
    "kernel": {"kernel"},
    "kernel/bench": {"kernel", "kernel/bench"},
    "kernel/shell": {"kernel", "kernel/bench", "kernel/shell"},
}
# The boot sequence, kmain(): it starts every room, so it may include any.
ROOM_TOP = {"kernel/main.c"}

# Layer -> the layers its Python files may import (own included).
# tools/ is a package of groups, bottom to top: the boot image (the QEMU
# launcher), the cache model's host side, a run's results, the test
# runner; the checks and the labs' tools on top. The tests import any.
_PY_IMAGE = {"tools", "tools/image"}
_PY_MODEL = _PY_IMAGE | {"tools/model"}
_PY_RESULTS = _PY_MODEL | {"tools/results"}
_PY_RUNNER = _PY_RESULTS | {"tools/runner"}
_PY_TOOLS = _PY_RUNNER | {"tools/checks", "tools/labs"}
PY_ALLOWED = {
    "tools": {"tools"},
    "tools/image": _PY_IMAGE,
    "tools/model": _PY_MODEL,
    "tools/results": _PY_RESULTS,
    "tools/runner": _PY_RUNNER,
    "tools/checks": _PY_TOOLS,
    "tools/labs": _PY_TOOLS,
    "tests": _PY_TOOLS | {"tests"},
}
# Python interfaces: modules any group may import, which import no module
# of the tree themselves. The schema and parser of the log's
# machine-readable lines, which every reader of a log uses (the model's
# tools join their figures to the results through it).
PY_INTERFACES = {"tools/results/result_log.py"}

# Interfaces: the named places where the layers meet other than by a
# plain downward include. Path -> (included_by, held_to, implemented_by):
#   included_by     "all": any layer may include it; None: the plain rule
#   held_to         the layer whose rule its own includes follow (None:
#                   its folder's)
#   implemented_by  layers above it that define what it declares (the
#                   lower layer calls up through it)
ALL = "all"
INTERFACES = {
    # Trace points from any layer; the header stays at the bottom.
    "trace/tracepoint.h": (ALL, "lib", {"trace"}),
    # The architecture's single instructions behind lib/atomic.h's
    # CPU-local operations and WC fence and lib/this_cpu.h (Linux's
    # asm/local.h behind linux/local.h): kernel builds only.
    ARCH_INCLUDE + "/asm/local.h": (ALL, "system", set()),
    ARCH_INCLUDE + "/asm/barrier.h": (ALL, "system", set()),
    ARCH_INCLUDE + "/asm/this_cpu.h": (ALL, "system", set()),
    # Where the direct map and the kernel image lie, as constants, for
    # mm/direct_map.h's inline conversions (Linux's __PAGE_OFFSET behind
    # __va()): kernel builds only.
    ARCH_INCLUDE + "/asm/direct_map.h": (ALL, "system", set()),
    # The cache model's doorbell protocol, shared by the plugin and the
    # kernel: plain constants.
    "cachemodel/doorbell.h": (ALL, "system", set()),
    # Declared low, implemented higher up.
    "lib/panic.h": (None, None, {"kernel"}),
    "lib/assert.h": (None, None, {"kernel"}),
    "lib/kprintf.h": (None, None, {"kernel"}),
    "lib/cycles.h": (None, None, {"arch/x86_64"}),
    "mm/vm.h": (None, None, {"arch/x86_64"}),
    "mm/tlb.h": (None, None, {"arch/x86_64"}),
    "mm/cachemodel.h": (None, None, {"arch/x86_64"}),
}

# Folders whose C functions are held to FUNCTION_MAX_LINES: the kernel's
# layers and the cache model (not the tests, the labs' skeletons, tools).
SIZE_CHECKED = ("kernel", "mm", "arch", "lib", "boot", "trace",
                "workloads", "experiments", "cachemodel")
FUNCTION_MAX_LINES = 120

INCLUDE_RE = re.compile(r'^\s*[#%]\s*include\s+(?:"([^"]+)"|<([^>]+)>)')
IMPORT_RE = re.compile(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)"
                       r"|from\s+([\w.]+)\s+import\b(.*))")
SYS_PATH_RE = re.compile(r"^\s*sys\.path\s*(?:\.\s*\w+\s*\(|\[|\+?=)")
# A function defined at file scope (Linux style: the body's brace on a
# line of its own) and a prototype in a header. Static ones are private.
DEF_RE = re.compile(r"^(?!static\b|typedef\b|extern\b)[A-Za-z_][\w \t*]*?"
                    r"\b(\w+)\s*\(([^;{}]*?)\)\s*\n\{", re.M)
DECL_RE = re.compile(r"^(?!static\b|typedef\b|#)[A-Za-z_][\w \t*]*?"
                     r"\b(\w+)\s*\(([^;{}#]*?)\)\s*"
                     r"(?:__attribute__\s*\(\([^;]*\)\)\s*)?;", re.M)


def folder_layer(path):
    """The layer a tree-relative path's folder belongs to, or None."""
    parts = path.split("/")
    if parts[0] == "arch" and len(parts) > 2:
        layer = "arch/" + parts[1]
        return layer if layer in ALLOWED else None
    return parts[0] if parts[0] in ALLOWED and len(parts) > 1 else None


def layer_of(path):
    """The layer whose rule path's own includes follow, or None."""
    iface = INTERFACES.get(path)
    if iface and iface[1]:
        return iface[1]
    return folder_layer(path)


def resolve(root, src, name, path=INCLUDE_PATH):
    """Tree-relative path of what src's '#include "name"' opens, or None."""
    for base in (os.path.dirname(src),) + tuple(path):
        cand = os.path.normpath(os.path.join(base, name))
        if not cand.startswith("..") and \
                os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    return None


def py_module(root, dotted):
    """Tree-relative path of the module or package a dotted name opens
    from the root, or None."""
    base = dotted.replace(".", "/")
    for cand in (base + PY_SUFFIX, base + "/__init__" + PY_SUFFIX):
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def resolve_import(root, module, names=()):
    """Tree-relative paths of what `import module` or `from module import
    names` reads: each name that is a module of the package, else the
    module itself; [] for a module outside the tree. Names are dotted
    paths from the root, as `python3 -m` run there finds them (no file
    of the tree edits sys.path)."""
    found = [f for f in (py_module(root, module + "." + n) for n in names)
             if f]
    if found:
        return found
    f = py_module(root, module)
    return [f] if f else []


def all_files(root):
    """Every file of the tree, sorted, minus hidden and build folders."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and
            not (rel == "." and d in SKIPPED_DIRS))
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            yield os.path.relpath(full, root).replace(os.sep, "/")


def sources(root):
    """The C, header and assembly files of the tree."""
    return [f for f in all_files(root) if f.endswith(SOURCE_SUFFIXES)]


def py_sources(root):
    return [f for f in all_files(root) if f.endswith(PY_SUFFIX)]


def violation(src, target):
    """Why src may not include target, or None if it may."""
    iface = INTERFACES.get(target)
    if iface and iface[0] == ALL:
        return None
    layer, tlayer = layer_of(src), folder_layer(target)
    if layer is None or tlayer is None:
        return None
    allowed = ALLOWED[layer]
    if allowed is None or tlayer in allowed:
        return None
    return "includes %s: %s may not include %s" % (target, layer, tlayer)


def room_of(path):
    """The room of kernel/ a path is in, or None outside kernel/."""
    d = os.path.dirname(path)
    return d if d in ROOMS else None


def room_violation(src, target):
    """Why src may not include target across kernel/'s rooms, or None."""
    room, troom = room_of(src), room_of(target)
    if room is None or troom is None or src in ROOM_TOP or \
            troom in ROOMS[room]:
        return None
    return "includes %s: the %s room may not include the %s room" % (
        target, room, troom)


def module_cycles(incs):
    """Cycles of modules (x.c and x.h as one node), in every folder of
    the tree, reported at the first include of each."""
    def module(path):
        return os.path.splitext(path)[0]
    edges, first = [], {}
    for s, n, t in incs:
        if module(s) != module(t):
            edges.append((module(s), n, module(t)))
            first.setdefault((module(s), module(t), n), s)
    return [(first[(src, nxt, n)], n, nxt, "module " + why)
            for src, n, nxt, why in cycles(edges)]


def _lines(root, path):
    with open(os.path.join(root, path), encoding="utf-8",
              errors="replace") as f:
        return f.read().split("\n")


def include_edges(root):
    """(src, line, target) for every quoted include found in the tree."""
    edges = []
    for src in sources(root):
        for n, text in enumerate(_lines(root, src), 1):
            m = INCLUDE_RE.match(text)
            if not m:
                continue
            # <name> skips the file's own folder; it is a file of the
            # tree only when the include path finds it there.
            target = (resolve(root, src, m.group(1)) if m.group(1) else
                      resolve(root, "", m.group(2)))
            if target is not None:
                edges.append((src, n, target))
    return edges


def _imported_names(lines, n, rest):
    """The names of a `from X import rest` on line n (0-based) of lines,
    a parenthesised list over several lines included."""
    text = rest.split("#")[0]
    while "(" in text and ")" not in text and n + 1 < len(lines):
        n += 1
        text += " " + lines[n].split("#")[0]
    return [w.split()[0] for w in text.strip(" ()\\").split(",")
            if w.strip(" ()\\")]


def import_edges(root):
    """(src, line, target) for every import of a module of the tree."""
    edges = []
    for src in py_sources(root):
        lines = _lines(root, src)
        for n, text in enumerate(lines):
            m = IMPORT_RE.match(text)
            if not m:
                continue
            if m.group(1):
                targets = [t for name in m.group(1).split(",")
                           for t in resolve_import(root, name.strip())]
            else:
                targets = resolve_import(
                    root, m.group(2), _imported_names(lines, n, m.group(3)))
            edges += [(src, n + 1, t) for t in targets if t != src]
    return edges


def sys_path_edits(root):
    """Python files that edit sys.path: (path, line, "", why)."""
    return [(src, n, "", "edits sys.path: import modules by their full "
             "name and run tools from the root (python3 -m tools.GROUP.NAME)")
            for src in py_sources(root)
            for n, text in enumerate(_lines(root, src), 1)
            if SYS_PATH_RE.match(text)]


def py_layer(path):
    """The layer of a Python file: its group for tools/ (tools/runner/x.py
    is in tools/runner), the package root tools/__init__.py in "tools",
    else its folder's layer."""
    parts = path.split("/")
    if parts[0] != "tools":
        return folder_layer(path)
    if len(parts) > 2:
        return "tools/" + parts[1]
    return "tools" if path == "tools/__init__" + PY_SUFFIX else None


def import_violation(src, target):
    layer, tlayer = py_layer(src), py_layer(target)
    if src in PY_INTERFACES:
        return "imports %s: an interface imports no module of the tree" % (
            target)
    if layer not in PY_ALLOWED:
        return "imports %s: %s has no Python layer" % (target, layer)
    if tlayer in PY_ALLOWED[layer] or target in PY_INTERFACES:
        return None
    return "imports %s: %s may not import %s" % (target, layer, tlayer)


def unplaced(root):
    """Files with code in no layer, Python files of tools/ in no group:
    (path, 0, "", why)."""
    return [(f, 0, "", "in no layer: give its folder one (docs/layers.md)")
            for f in sources(root) + py_sources(root)
            if folder_layer(f) is None] + [
        (f, 0, "", "in no group of tools/: put it in one (docs/layers.md)")
        for f in py_sources(root)
        if f.startswith("tools/") and py_layer(f) not in PY_ALLOWED]


def _higher(upper, lower):
    """True when layer upper sits above layer lower."""
    ua, la = ALLOWED.get(upper), ALLOWED.get(lower)
    return (upper != lower and ua is not None and la is not None and
            lower in ua and upper not in la)


def upward_calls(root):
    """Functions a lower layer declares and a higher one defines, through
    a header INTERFACES does not name with that implementer."""
    defined = {}
    declared = []
    for src in sources(root):
        text = "\n".join(_lines(root, src))
        if src.endswith(".c"):
            for m in DEF_RE.finditer(text):
                defined.setdefault(m.group(1), []).append(src)
        elif src.endswith(".h"):
            for m in DECL_RE.finditer(text):
                declared.append((src, text.count("\n", 0, m.start()) + 1,
                                 m.group(1)))
    found = []
    for header, n, name in declared:
        hlayer = folder_layer(header)
        named = INTERFACES.get(header, (None, None, set()))[2]
        for impl in defined.get(name, ()):
            ilayer = folder_layer(impl)
            if _higher(ilayer, hlayer) and ilayer not in named:
                found.append((header, n, impl,
                              "%s declares %s(), defined above it in %s: "
                              "name %s as an interface or move it" %
                              (hlayer, name, ilayer, header)))
    return found


def cycles(edges):
    """Every dependency cycle of the graph edges [(src, line, target)], one
    per strongly connected component, as (file, line, next, why): the
    path around the cycle from its first file in sorted order."""
    graph = {}
    for src, n, target in edges:
        graph.setdefault(src, {}).setdefault(target, n)
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        # Tarjan's algorithm, iteratively: (node, iterator over its edges).
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, {})))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in graph.get(node, {}):
                    comps.append(comp)
    found = []
    for comp in sorted(comps, key=min):
        path = _path_in(graph, comp, min(comp))
        first, second = path[0], path[1]
        found.append((first, graph[first][second], second,
                      "cycle: " + " -> ".join(path)))
    return found


def _path_in(graph, comp, start):
    """A shortest path start -> ... -> start inside comp (breadth first)."""
    prev = {start: None}
    queue = [start]
    for node in queue:
        for nxt in sorted(graph.get(node, {})):
            if nxt == start:
                path = [start]
                while node is not None:
                    path.insert(1, node)
                    node = prev[node]
                return path[1:] + [start]
            if nxt in comp and nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    raise AssertionError("no cycle through %s" % start)


def _function_name(lines, brace):
    """The name of the function whose body opens at lines[brace] (a "{"
    alone on its line, Linux style), or None for anything else."""
    start = brace
    while start > 0 and lines[start - 1].strip() and \
            not lines[start - 1].rstrip().endswith((";", "}", "*/")) and \
            not lines[start - 1].startswith("#"):
        start -= 1
    m = re.search(r"(\w+)\s*\(", " ".join(lines[start:brace]))
    return m.group(1) if m else None


def long_functions(root, limit=FUNCTION_MAX_LINES):
    """Functions of SIZE_CHECKED's C files longer than limit lines, brace
    to brace: (file, line of the opening brace, "", why)."""
    found = []
    for src in sources(root):
        if not src.endswith((".c", ".h")) or \
                src.split("/")[0] not in SIZE_CHECKED:
            continue
        lines = _lines(root, src)
        for i, text in enumerate(lines):
            if text != "{":
                continue
            name = _function_name(lines, i)
            end = i + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            n = end - i + 1
            if name and n > limit:
                found.append((src, i + 1, "",
                              "function %s() is %d lines (at most %d): "
                              "split it by its steps" % (name, n, limit)))
    return found


def check(root):
    """Every problem of the tree at root: (src, line, target, why)."""
    incs, imps = include_edges(root), import_edges(root)
    found = unplaced(root)
    found += [(s, n, t, why) for s, n, t in incs
              for why in [violation(s, t)] if why]
    found += [(s, n, t, why) for s, n, t in imps
              for why in [import_violation(s, t)] if why]
    found += sys_path_edits(root)
    found += [(s, n, t, why) for s, n, t in incs
              for why in [room_violation(s, t)] if why]
    found += upward_calls(root)
    file_cycles = cycles(incs)
    # A cycle of files is also one of modules: said once, as files.
    on_file_cycle = {f for _, _, _, why in file_cycles
                     for f in why.split(": ", 1)[1].split(" -> ")}
    found += file_cycles + cycles(imps)
    found += [c for c in module_cycles(incs) if c[0] not in on_file_cycle]
    found += long_functions(root)
    return found


def report(found, out=None, prefix=""):
    out = out or sys.stdout
    for src, n, _, why in found:
        where = "%s:%d" % (src, n) if n else src
        out.write("%s%s: %s\n" % (prefix, where, why))


def run_ktap(root):
    """Self-test (tests/tools/test_check_layers.py), then the tree."""
    import importlib.util
    import io
    import unittest
    path = os.path.join(root, "tests", "tools", "test_check_layers.py")
    spec = importlib.util.spec_from_file_location("test_check_layers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    print("KTAP version 1")
    print("1..2")
    suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    buf = io.StringIO()
    res = unittest.TextTestRunner(stream=buf, verbosity=0).run(suite)
    ok_self = res.wasSuccessful() and res.testsRun > 0
    if not ok_self:
        for line in buf.getvalue().splitlines():
            print("# " + line)
    print("%s 1 selftest" % ("ok" if ok_self else "not ok"))
    found = check(root)
    report(found, prefix="# ")
    print("%s 2 tree" % ("not ok" if found else "ok"))
    failures = (0 if ok_self else 1) + (1 if found else 0)
    print("# ktest: 2 test(s), %d failure(s)" % failures)
    return 1 if failures else 0


def main(argv):
    ktap = "--ktap" in argv
    args = [a for a in argv if a != "--ktap"]
    root = args[0] if args else os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    if ktap:
        return run_ktap(root)
    found = check(root)
    report(found)
    if found:
        print("%d layer problem(s): see docs/layers.md" % len(found))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
