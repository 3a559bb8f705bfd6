#!/usr/bin/env python3
"""Check that every #include (and nasm %include) points down the layers.

The rule is docs/layers.md; the table ALLOWED below is the same rule for
the machine. Every quoted include in the scanned directories is resolved
the way the compiler does (the including file's directory first, then the
tree's root, which is -I.) and checked against the layer of the including
file. A violation prints

    FILE:LINE: includes TARGET: LAYER may not include TARGET_LAYER

and the exit status is 1. Includes of system headers (<...>) and of
files outside the tree are not the rule's business.

    python3 tools/check_layers.py [ROOT]        check the tree (default .)
    python3 tools/check_layers.py --ktap [ROOT] self-test, then the tree,
                                                as KTAP (the make test line)
"""
import os
import re
import sys

SCANNED = ("boot", "arch", "kernel", "lib", "mm", "trace", "workloads",
           "experiments", "tests")
SOURCE_SUFFIXES = (".c", ".h", ".asm", ".inc")

# The trace-point header: the one header of an upper layer that any layer
# may include, so that lib/ and mm/ can emit trace events. It may itself
# include lib/ only (checked: it is given the layer "lib" below).
TRACEPOINT_HEADER = "trace/tracepoint.h"

# Files of mm/ that glue the portable memory manager to the x86_64 MMU:
# they alone in mm/ may include arch/x86_64/ headers.
MM_ARCH_GLUE = ("mm/kernel_map.c", "mm/page_alloc.c")

_KERNEL = {"lib", "mm", "arch/x86_64", "arch/ia64", "boot", "kernel"}
# Layer -> the layers its files may include (their own included).
ALLOWED = {
    "lib": {"lib"},
    "mm": {"lib", "mm"},
    "mm-arch-glue": {"lib", "mm", "arch/x86_64"},
    "arch/ia64": {"lib", "arch/ia64"},
    "arch/x86_64": {"lib", "mm", "arch/x86_64", "boot"},
    "boot": {"lib", "arch/x86_64", "boot"},
    "kernel": _KERNEL,
    "trace": _KERNEL | {"trace"},
    "workloads": _KERNEL | {"trace", "workloads"},
    "experiments": _KERNEL | {"trace", "workloads", "experiments"},
    "tests": None,  # on top: anything
}

INCLUDE_RE = re.compile(r'^\s*[#%]\s*include\s+"([^"]+)"')


def layer_of(path):
    """The layer of a tree-relative path, or None if it has none."""
    if path == TRACEPOINT_HEADER:
        return "lib"
    if path in MM_ARCH_GLUE:
        return "mm-arch-glue"
    parts = path.split("/")
    if parts[0] == "arch" and len(parts) > 2:
        return "arch/" + parts[1]
    if parts[0] in ALLOWED:
        return parts[0]
    return None


def target_layer(path):
    """The layer an included file belongs to (glue counts as mm)."""
    layer = layer_of(path)
    if path == TRACEPOINT_HEADER:
        return "trace"
    return "mm" if layer == "mm-arch-glue" else layer


def resolve(root, src, name):
    """Tree-relative path of what src's '#include "name"' opens, or None."""
    for base in (os.path.dirname(src), ""):
        cand = os.path.normpath(os.path.join(base, name))
        if not cand.startswith("..") and \
                os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    return None


def sources(root):
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE_SUFFIXES):
                    full = os.path.join(dirpath, f)
                    yield os.path.relpath(full, root).replace(os.sep, "/")


def violation(src, target):
    """Why src may not include target, or None if it may."""
    if target == TRACEPOINT_HEADER:
        return None
    layer, tlayer = layer_of(src), target_layer(target)
    if layer is None or tlayer is None:
        return None
    allowed = ALLOWED[layer]
    if allowed is None or tlayer in allowed:
        return None
    return "%s may not include %s" % (layer, tlayer)


def check(root):
    """Every violation in the tree at root: (src, line, target, why)."""
    found = []
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8",
                  errors="replace") as f:
            for n, text in enumerate(f, 1):
                m = INCLUDE_RE.match(text)
                if not m:
                    continue
                target = resolve(root, src, m.group(1))
                if target is None:
                    continue
                why = violation(src, target)
                if why:
                    found.append((src, n, target, why))
    return found


def report(found, out=None, prefix=""):
    out = out or sys.stdout
    for src, n, target, why in found:
        out.write("%s%s:%d: includes %s: %s\n" % (prefix, src, n, target,
                                                  why))


def run_ktap(root):
    """Self-test (tests/tools/test_check_layers.py), then the tree."""
    import io
    import unittest
    sys.path.insert(0, os.path.join(root, "tests", "tools"))
    print("KTAP version 1")
    print("1..2")
    suite = unittest.defaultTestLoader.loadTestsFromName(
        "test_check_layers")
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
    root = args[0] if args else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    if ktap:
        return run_ktap(root)
    found = check(root)
    report(found)
    if found:
        print("%d include(s) cross the layers the wrong way "
              "(docs/layers.md)" % len(found))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
