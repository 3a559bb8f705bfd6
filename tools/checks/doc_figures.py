#!/usr/bin/env python3
"""Keeps the docs honest about figures typed into them: every table of
measured or modelled figures in docs/ and docs/labs/ that nothing
regenerates carries a provenance line, and this checks that line against
the tree.

A provenance line is one Markdown line of the form

    [Provenance](README.md#figures-in-the-docs): commit `0123456789ab`;
    `make run MODEL=core2-2007 SMP=1 ICOUNT=1 KCMDLINE="run=tbench"`;
    `python3 -m tools.model.model tracing LOG build/model.jsonl`.

(all on one line): the commit that typed the figures in, then the
commands that produced them, each in backquotes. Words between them are
free text. The check does not re-measure anything (that would take a
modelled boot per table); it proves that the figures can still be
reproduced as written:

  - each commit exists in this repository (skipped, said so, without git);
  - `make [VAR=VALUE...] TARGET...`: each target is a target of the
    Makefile, each variable is one the Makefile reads; MODEL= names a
    profile of cachemodel/profiles.txt; KCMDLINE= holds only options of
    kernel/options.c or declared by an experiment (OPTION_*), and its
    run= only experiments that exist;
  - `python3 -m tools.GROUP.NAME [SUBCOMMAND] [--option...]`: the tool
    (tools/GROUP/NAME.py) exists, its subcommand (when it has
    subcommands) and --options are declared in it;
  - `build/host/NAME ...`: tests/host/NAME.c exists;
  - shell commands (`run copy size=2097152 reps=3`): the command is in
    kernel/shell/shell_table.c; for run and profile, the experiment exists and
    every KEY= is one of its declared settings;
  - `objdump ...` and the like (HOST_TOOLS) are host programs: not checked.

  python3 -m tools.checks.doc_figures [ROOT]
        check every doc, print the problems
  python3 -m tools.checks.doc_figures --ktap [ROOT]
        self-test (tests/tools/test_doc_figures.py), then labs.py's
        self-test, then the tree, as KTAP (the test_docs host test)
Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

LINE_RE = re.compile(r"^\[Provenance\]\([^)]*\): (.*)$")
SPAN_RE = re.compile(r"`([^`]+)`")
COMMIT_RE = re.compile(r"^[0-9a-f]{7,40}$")
HOST_TOOLS = ("objdump", "babeltrace2", "uptime")
RUN_SPECIAL = ("default", "all", "none", "list")
SHELL_RUN_MODES = ("quick", "full")


class Tree:
    """What the checks look names up in, read once from a source tree."""

    def __init__(self, root):
        self.root = root
        self.makefile = self._read("Makefile") + self._read(
            os.path.join("tools", "image", "paths.mk"))
        self.targets = set()
        for m in re.finditer(r"^([A-Za-z0-9_.%/$()\- ]+?)\s*:(?!=)",
                             self.makefile, re.M):
            self.targets.update(m.group(1).split())
        self.options = set(re.findall(r'^\s*KOPT\("([\w.]+)", OPT_',
                                      self._read("kernel/options.c"), re.M))
        self.shell_cmds = set(re.findall(
            r'\[SHELL_CMD_\w+\]\s*=\s*\{"(\w+)"',
            self._read("kernel/shell/shell_table.c")))
        self.profiles = set(re.findall(
            r"^\[([\w.-]+)\]", self._read("cachemodel/profiles.txt"), re.M))
        self.experiments = {}
        for path in sorted(glob.glob(os.path.join(root, "experiments",
                                                  "*.c"))):
            src = self._read(os.path.relpath(path, root))
            self._experiments_of(src)
            self.options.update(re.findall(
                r'\bOPTION_(?:UINT|ENUM|STRING)\(\s*\w+,\s*"\w+",\s*'
                r'"([\w.]+)"', src))

    def _read(self, rel):
        try:
            with open(os.path.join(self.root, rel)) as f:
                return f.read()
        except OSError:
            return ""

    def _experiments_of(self, src):
        """name -> set of setting names, from EXPERIMENT(...) and
        EXPERIMENT_PARAMS(..., params) with its experiment_param array."""
        arrays = {m.group(1): set(re.findall(r'\{"(\w+)"', m.group(2)))
                  for m in re.finditer(
                      r"struct experiment_param (\w+)\[\]\s*=\s*\{(.*?)\};",
                      src, re.S)}
        for m in re.finditer(r"\bEXPERIMENT(_PARAMS)?\(\s*\w+,\s*\"(\w+)\""
                             r"(.*?)\);", src, re.S):
            params = set()
            if m.group(1):
                last = m.group(3).rsplit(",", 1)[-1].strip()
                params = arrays.get(last, set())
            self.experiments[m.group(2)] = params


def git_has(root, commit):
    """True/False, or None when there is no git repository to ask."""
    try:
        p = subprocess.run(["git", "-C", root, "cat-file", "-e",
                            commit + "^{commit}"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    except OSError:
        return None
    if p.returncode == 0:
        return True
    inside = subprocess.run(["git", "-C", root, "rev-parse", "--git-dir"],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode == 0
    return False if inside else None


def check_kcmdline(tree, value):
    probs = []
    for tok in value.split():
        key, _, val = tok.partition("=")
        if key not in tree.options:
            probs.append("kernel option '%s' does not exist" % key)
        elif key == "run":
            for name in val.split(","):
                if name not in RUN_SPECIAL and name not in tree.experiments:
                    probs.append("run=: no experiment '%s'" % name)
    return probs


def check_make(tree, words):
    probs = []
    while words and "=" in words[0]:  # environment before make
        words = words[1:]
    if not words or words[0] != "make":
        return ["not a make command"]
    for w in words[1:]:
        if "=" in w:
            var, _, val = w.partition("=")
            if not re.search(r"\b%s\b" % re.escape(var), tree.makefile):
                probs.append("make variable %s is not read by the "
                             "Makefile" % var)
            elif var == "MODEL" and val not in tree.profiles:
                probs.append("MODEL=%s: no such profile in "
                             "cachemodel/profiles.txt" % val)
            elif var == "KCMDLINE":
                probs += check_kcmdline(tree, val)
        elif w.startswith("-"):
            probs.append("make option %s: give variables, not options" % w)
        elif w not in tree.targets:
            probs.append("make target %s does not exist" % w)
    return probs


def check_tool(tree, words):
    if len(words) < 3 or words[1] != "-m":
        return ["not a tool's command: tools run as modules from the root, "
                "python3 -m tools.GROUP.NAME"]
    module = words[2]
    path = module.replace(".", "/") + ".py"
    src = tree._read(path)
    if not module.startswith("tools.") or not src:
        return ["no tool %s" % module]
    probs = []
    subs = set(re.findall(r'add_parser\(\s*"([\w-]+)"', src))
    args = words[3:]
    positional = [a for a in args if not a.startswith("-")]
    if subs and (not positional or positional[0] not in subs):
        probs.append("%s has no subcommand %s" %
                     (path, positional[0] if positional else "(none)"))
    for a in args:
        if a.startswith("--"):
            opt = a.split("=", 1)[0]
            if '"%s"' % opt not in src:
                probs.append("%s has no option %s" % (path, opt))
    return probs


def check_shell(tree, words):
    if words[0] not in tree.shell_cmds:
        return ["'%s' is neither a shell command nor a known program" %
                words[0]]
    if words[0] not in ("run", "profile") or len(words) < 2:
        return []
    name = words[1]
    if name == "list" and words[0] == "run":
        return []
    if name not in tree.experiments:
        return ["%s: no experiment '%s'" % (words[0], name)]
    probs = []
    for w in words[2:]:
        if w in SHELL_RUN_MODES:
            continue
        key = w.partition("=")[0]
        if key not in tree.experiments[name]:
            probs.append("%s %s: no setting '%s'" % (words[0], name, key))
    return probs


def check_command(tree, text):
    """Problems (strings) of one command of a provenance line."""
    try:
        words = shlex.split(text)
    except ValueError as err:
        return ["does not parse: %s" % err]
    if not words:
        return ["empty command"]
    first = next((w for w in words if "=" not in w), words[0])
    if first == "make":
        return check_make(tree, words)
    if words[0] == "python3":
        return check_tool(tree, words)
    if words[0].startswith("build/host/"):
        name = os.path.basename(words[0])
        if not tree._read(os.path.join("tests", "host", name + ".c")):
            return ["no source tests/host/%s.c for %s" % (name, words[0])]
        return []
    if words[0] in HOST_TOOLS:
        return []
    return check_shell(tree, words)


def provenance_lines(path):
    """[(line number, [commits], [commands])] of one Markdown file,
    outside fenced code blocks."""
    out = []
    fenced = False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                fenced = not fenced  # an example in a code block
                continue
            m = None if fenced else LINE_RE.match(line.rstrip("\n"))
            if not m:
                continue
            spans = SPAN_RE.findall(m.group(1))
            commits = [s for s in spans if COMMIT_RE.match(s)]
            out.append((n, commits, [s for s in spans if s not in commits]))
    return out


def check(root):
    """(problems, number of provenance lines, notes) for docs/*.md and
    docs/*/*.md (the labs)."""
    tree = Tree(root)
    probs, notes, count = [], [], 0
    for path in sorted(glob.glob(os.path.join(root, "docs", "*.md")) +
                       glob.glob(os.path.join(root, "docs", "*", "*.md"))):
        rel = os.path.relpath(path, root)
        for n, commits, commands in provenance_lines(path):
            count += 1
            where = "%s:%d" % (rel, n)
            if not commits:
                probs.append("%s: names no commit" % where)
            if not commands:
                probs.append("%s: names no command" % where)
            for c in commits:
                known = git_has(root, c)
                if known is False:
                    probs.append("%s: commit %s is not in this "
                                 "repository" % (where, c))
                elif known is None and not notes:
                    notes.append("no git repository: commits not checked")
            for cmd in commands:
                probs += ["%s: `%s`: %s" % (where, cmd, p)
                          for p in check_command(tree, cmd)]
    return probs, count, notes


def run_unittests(module):
    import io
    import unittest
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    buf = io.StringIO()
    res = unittest.TextTestRunner(stream=buf, verbosity=0).run(suite)
    ok = res.wasSuccessful() and res.testsRun > 0
    return ok, buf.getvalue().splitlines()


def run_ktap(root):
    """The test_docs host test: both self-tests, then the tree."""
    print("KTAP version 1")
    print("1..3")
    failures = 0
    for n, module in ((1, "test_doc_figures"), (2, "test_labs")):
        ok, lines = run_unittests("tests.tools." + module)
        if not ok:
            failures += 1
            for line in lines:
                print("# " + line)
        print("%s %d %s" % ("ok" if ok else "not ok", n, module))
    probs, count, notes = check(root)
    for line in notes + probs:
        print("# " + line)
    print("# %d provenance line(s) in docs/" % count)
    ok = not probs and count > 0
    failures += not ok
    print("%s 3 provenance_lines" % ("ok" if ok else "not ok"))
    print("# ktest: 3 test(s), %d failure(s)" % failures)
    return 1 if failures else 0


def main(argv):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description=__doc__.split("\n")[0])
    ap.add_argument("--ktap", action="store_true",
                    help="the self-tests and the check, as KTAP")
    ap.add_argument("root", nargs="?", default=os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    args = ap.parse_args(argv)
    if args.ktap:
        return run_ktap(args.root)
    probs, count, notes = check(args.root)
    for line in notes + probs:
        print(line)
    print("%d provenance line(s), %d problem(s)" % (count, len(probs)))
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
