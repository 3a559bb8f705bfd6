"""KTAP, the kernel's test output: a parser into a tree of blocks and
results, and the checks a test run must pass (every plan met, results
numbered in order, no `not ok` at any level, the suites asked for ran).

The kernel prints KTAP version 1 on its serial line, after the boot log;
the host tests print the same format on stdout. Lines that are not KTAP
are ignored, as the KTAP specification allows. Python 3 standard library
only.
"""

import re

KTAP_HEADER = "KTAP version 1"
# GRUB's menu paints the serial line with ANSI/VT100 sequences.
ANSI_RE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])")


class KtapBlock:
    """One KTAP document (the top level or a nested suite)."""

    def __init__(self, name=None):
        self.name = name
        self.plan = None
        self.results = []
        self.pending_diag = []  # "# ..." lines since the last result


class KtapResult:
    def __init__(self, ok, num, name, directive, diag, sub):
        self.ok, self.num, self.name = ok, num, name
        self.directive = directive  # "" or e.g. "SKIP no x2APIC"
        self.diag = diag            # diagnostics printed before the line
        self.sub = sub              # nested KtapBlock or None


KTAP_INDENT = 4
RESULT_RE = re.compile(r"^(not ok|ok)\s+(\d+)\s*(?:-\s*)?([^#]*?)\s*"
                       r"(?:#\s*(.*))?$")
PLAN_RE = re.compile(r"^1\.\.(\d+)")
SUBTEST_RE = re.compile(r"^#\s*Subtest:\s*(.*)$")


def clean_log(text):
    """The log as analysed: ANSI sequences and carriage returns removed."""
    return ANSI_RE.sub("", text).replace("\r", "")


def ktap_section(text):
    """Everything from the first top-level "KTAP version 1" line on, or
    None when there is none (boot-log lines before it are cut)."""
    lines = clean_log(text).split("\n")
    for i, line in enumerate(lines):
        if line.rstrip() == KTAP_HEADER:
            return lines[i:]
    return None


def parse_ktap(lines):
    """Parse KTAP lines (starting at the header) into a KtapBlock tree.

    A nested block at depth d+1 belongs to the next result line at depth
    d. Lines that are not KTAP (kernel log, EXIT line) are ignored, as
    the KTAP spec allows.
    """
    root = KtapBlock()
    stack = [root]  # stack[d] is the open block at depth d
    for raw in lines:
        line = raw.rstrip()
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if not body or indent % KTAP_INDENT:
            continue
        depth = indent // KTAP_INDENT
        if depth > len(stack):
            continue  # deeper than any open block: not ours
        if depth == len(stack):
            # The first line of a nested block opens it.
            if body != KTAP_HEADER and not SUBTEST_RE.match(body):
                continue
            stack.append(KtapBlock())
        blk = stack[depth]
        if body == KTAP_HEADER:
            if depth > 0 and (blk.plan is not None or blk.results):
                # A new nested document without a result line for the
                # previous one; start afresh (the old one is lost, and
                # the plan count of the parent will show it).
                del stack[depth:]
                blk = KtapBlock()
                stack.append(blk)
            continue
        m = SUBTEST_RE.match(body)
        if m:
            blk.name = m.group(1).strip()
            continue
        m = PLAN_RE.match(body)
        if m:
            blk.plan = int(m.group(1))
            continue
        if body.startswith("#"):
            blk.pending_diag.append(body)
            continue
        m = RESULT_RE.match(body)
        if m:
            sub = stack[depth + 1] if len(stack) > depth + 1 else None
            del stack[depth + 1:]
            blk.results.append(KtapResult(
                m.group(1) == "ok", int(m.group(2)), m.group(3).strip(),
                (m.group(4) or "").strip(), blk.pending_diag, sub))
            blk.pending_diag = []
    return root


def ktap_failures(blk, prefix=""):
    """Names of failed tests in blk, as "suite.test" for nested tests
    (a failed suite without a failed test inside is named alone)."""
    out = []
    for r in blk.results:
        name = prefix + r.name
        inner = ktap_failures(r.sub, name + ".") if r.sub else []
        out.extend(inner)
        if not r.ok and not inner:
            out.append(name)
    return out


def ktap_diags(blk):
    """Diagnostic lines printed before failed results, depth first."""
    out = []
    for r in blk.results:
        if r.sub:
            out.extend(ktap_diags(r.sub))
        if not r.ok:
            out.extend(r.diag)
    return out


def ktap_problems(blk, where="top level"):
    """Structural problems: missing plan, plan/count mismatch, numbering."""
    probs = []
    if blk.plan is None:
        probs.append("KTAP: no plan (1..N) at %s" % where)
    elif blk.plan != len(blk.results):
        probs.append("KTAP: %s plans %d but has %d result line(s)" %
                     (where, blk.plan, len(blk.results)))
    for i, r in enumerate(blk.results, 1):
        if r.num != i:
            probs.append("KTAP: %s: result %d numbered %d" %
                         (where, i, r.num))
            break
    for r in blk.results:
        if r.sub:
            probs.extend(ktap_problems(r.sub, "suite " + r.name))
    return probs


def check_ktap(text, ktest):
    """Verdict of the KTAP part of a log: (problems, diagnostics).

    ktest: the value of ktest= on the command line ("all", "none", a
    comma-separated suite list) or None. When it asks for tests the KTAP
    part must be there, must not be empty, and every named suite must
    have run (a misspelt suite would otherwise pass with zero tests).
    """
    required = ktest is not None and ktest != "none"
    lines = ktap_section(text)
    if lines is None:
        if required:
            return ["no KTAP output (command line has ktest=%s)" % ktest], []
        return [], []
    root = parse_ktap(lines)
    probs = []
    failed = ktap_failures(root)
    if failed:
        probs.append("not ok: %d test(s) failed: %s" %
                     (len(failed), ", ".join(failed)))
    probs.extend(ktap_problems(root))
    if required and not root.results and root.plan is not None:
        probs.append("KTAP: no suite ran (ktest=%s)" % ktest)
    if required and ktest != "all":
        ran = {r.name for r in root.results}
        for suite in (name.split(".")[0] for name in ktest.split(",")):
            if suite and suite not in ran:
                probs.append("KTAP: suite %s (ktest=%s) did not run" %
                             (suite, ktest))
    return probs, ktap_diags(root)

