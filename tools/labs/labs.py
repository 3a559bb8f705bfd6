#!/usr/bin/env python3
"""Keeps the labs' quoted output real: every block of shell output quoted
in docs/labs/*.md is regenerated from one boot of the current kernel, and
make test fails when a lab's command no longer runs or its quoted output
no longer matches what the code prints.

In a lab, a quoted transcript is a marker line naming the shell command,
then a fenced block holding the prompt line and the output:

    <!-- shell: info pat -->
    ```text
    kernel> info pat
    pat: IA32_PAT = 0x...
    ```

A marker "<!-- shell-run: COMMAND -->" with no block after it types the
command in the same boot without quoting it (for output that varies, like
a profile's ranking): it must run and print no error.

A marker may name another boot of tests/boot.cfg, "<!-- shell@BOOT: ... -->"
(e.g. shell@labs-model, a boot under the cache-model plugin): its commands
go to tests/sessions/BOOT.txt and are checked by that boot's post_check
(--boot BOOT). Unmarked commands belong to the boot "labs".

  labs.py --session     write tests/sessions/labs.txt: one boot typing
                        every marked command of every lab, in file order
  labs.py --refresh     --session, boot it (tools/runner/testrun.py labs) and
                        rewrite every block with what the boot printed,
                        numbers included (so every figure quoted is from
                        the last refresh, and a refresh changes figures
                        even when the code did not change)
  labs.py --check-log L [--boot B]
                        compare the transcripts in serial log L with the
                        blocks of boot B [labs] (the manifest's post_check);
                        also fails when tests/sessions/B.txt is stale

What --check-log checks, exactly: every marked command ran; none printed
a line starting "error:" unless its marker says error-ok; and each quoted
block has the same lines, in the same order, with the same words as the
boot's output once both are masked. The mask hides what legitimately
varies between runs and builds: every number (decimal, hex, timings),
spaces and table rules (columns and padding follow number widths), the
Accessed and Dirty flags of a page-table walk's entries, the
measured memory-type verdict of the environment header, and notes printed
only when timing makes them true (VOLATILE_RES). So the check keeps the
labs' commands and wording true to the code; the figures in a block are
those of the last --refresh and are not compared.

A run-only marker's command must also appear in the lab's visible text
(outside HTML comments): a reader following the page types what the boot
typed.

  labs.py --selftest    the tests of this file (tests/tools/test_labs.py)

Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LABS = os.path.join("docs", "labs")
DEFAULT_BOOT = "labs"
PROMPT = "kernel> "
MARKER_RE = re.compile(r"^<!-- shell(?:@([\w-]+))?: (.*?)( \(error-ok\))? -->$")
# A command the lab asks for without quoting its output (it varies too
# much, e.g. a profile's ranking): typed in the same boot, must not fail.
RUN_ONLY_RE = re.compile(r"^<!-- shell-run(?:@([\w-]+))?: (.*?) -->$")


def session_path(boot):
    return os.path.join("tests", "sessions", boot + ".txt")


def log_path_of(boot):
    return os.path.join("build", "logs", boot + ".log")
FENCE = "```"
ANSI_RE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])")
SESSION_STEP_TIMEOUT_S = 120


class LabError(Exception):
    pass


class Block:
    """One quoted transcript: file, line of the marker, command, the
    fence's line range [start, end) and the quoted lines."""

    def __init__(self, path, marker_line, command, error_ok, start, end,
                 lines, boot=None):
        self.boot = boot or DEFAULT_BOOT
        self.path, self.marker_line = path, marker_line
        self.command, self.error_ok = command, error_ok
        self.start, self.end, self.lines = start, end, lines


def lab_files(root=ROOT):
    return sorted(glob.glob(os.path.join(root, LABS, "[0-9]*.md")))


def blocks_of(path):
    """The marked blocks of one lab; raises LabError when a marker is not
    followed by a fenced block."""
    with open(path) as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        r = RUN_ONLY_RE.match(lines[i])
        if r:
            out.append(Block(path, i + 1, r.group(2), False, i, i, None,
                             r.group(1)))
            i += 1
            continue
        m = MARKER_RE.match(lines[i])
        if not m:
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith(FENCE):
            raise LabError("%s:%d: marker without a fenced block" %
                           (path, i + 1))
        j = i + 2
        while j < len(lines) and lines[j] != FENCE:
            j += 1
        if j == len(lines):
            raise LabError("%s:%d: unterminated block" % (path, i + 2))
        out.append(Block(path, i + 1, m.group(2), bool(m.group(3)), i + 2,
                         j, lines[i + 2:j], m.group(1)))
        i = j + 1
    return out


def all_blocks(boot=None):
    """Every block, or those of one boot."""
    out = []
    for p in lab_files():
        out.extend(b for b in blocks_of(p) if boot in (None, b.boot))
    return out


def boots():
    """The boots the labs use, the default one first."""
    names = [DEFAULT_BOOT]
    for b in all_blocks():
        if b.boot not in names:
            names.append(b.boot)
    return names


def session_text(blocks):
    lines = ["# Generated by tools/labs/labs.py --session from "
             "docs/labs/*.md:",
             "# every command the labs quote, in order. Do not edit.",
             "timeout %d" % SESSION_STEP_TIMEOUT_S,
             "expect ^kernel> $"]
    for b in blocks:
        lines += ["send " + b.command, "expect ^kernel> "]
    lines += ["send halt", "expect ^EXIT: STATUS=0", "exit"]
    return "\n".join(lines) + "\n"


def transcripts(log_text):
    """[(command, [output lines])] from a serial log, in order: each
    starts at a prompt line and ends before the next prompt."""
    text = ANSI_RE.sub("", log_text).replace("\r", "")
    out = []
    cur = None
    for line in text.split("\n"):
        if line.startswith(PROMPT):
            cur = (line[len(PROMPT):].strip(), [line.rstrip()])
            out.append(cur)
        elif cur is not None:
            cur[1].append(line.rstrip())
    for _, lines in out:
        while lines and not lines[-1]:
            lines.pop()
    return [t for t in out if t[0]]


# Lines whose presence or wording depends on timing, not on the code:
# dropped on both sides before comparing.
VOLATILE_RES = [
    re.compile(r"^tbench: note: .* fewer free than before"),
    # tlb_purge's once-a-second progress lines (the seed's format).
    re.compile(r"^tlb: shootdown IPIs \d+ \(naive\) \d+ \(batched\)$"),
    re.compile(r"^PTC\.E: \d+ \(old\) \d+ \(new\)$"),
    # Its closing ratio, or the note that a phase needed no IPI to divide by.
    re.compile(r"^tlb_purge: (IPIs per reclaimed page, naive / batched"
               r"|no ratio \()"),
    # Measured verdicts and warnings about how the vCPUs happened to be
    # scheduled: their wording follows the timings of the run.
    re.compile(r"^memtype: verdict: "),
    # Printed when a loaded host made UC look slower than WB under TCG.
    re.compile(r"^bench: UC measured slower than WB under QEMU TCG"),
    re.compile(r"^falseshare: \w+: WARNING: in \d+ of \d+ repetitions"),
    # How many figures a busy host made noisy (lib/bench_output.c).
    re.compile(r"^note: \d+ of \d+ figures NOISY: "),
]
# The memory-type verdict of the environment header comes from measured
# latencies; under TCG it may read "no" or "unknown" from run to run.
VERDICT_RE = re.compile(r"^(Memory types\s*: honoured:).*$")
# The same measured verdict, repeated in some experiments' own lines.
PLATFORM_VERDICT_RE = re.compile(
    r"(memory types honoured on this platform:) \w+")


def comparable(lines):
    return [mask(PLATFORM_VERDICT_RE.sub(
        r"\1 #", VERDICT_RE.sub(r"\1 #", l))) for l in lines
            if not any(r.search(l) for r in VOLATILE_RES)]


# A page-table walk's entry line ("  L2 PD  [254] = ... P W U A"): the
# Accessed and Dirty flags are set by the CPU when it uses the entry, so
# whether they show depends on what ran before, not on the code.
WALK_ENTRY_RE = re.compile(r"^\s+L[1-4] ")
WALK_AD_RE = re.compile(r"(?<= )[AD](?= |$)")


# A table's spread cell marked noisy ("322.89% NOISY") and the same flag
# in a @@RESULT line: the host's load decides them, not the code.
NOISY_MARK_RE = re.compile(r"(?<=%) NOISY\b|,\"noisy\":true")


def mask(line):
    if WALK_ENTRY_RE.match(line):
        line = WALK_AD_RE.sub("", line)
    line = NOISY_MARK_RE.sub("", line)
    line = re.sub(r"\b(?=[0-9]*[a-f])[0-9a-f]{7,}(-dirty)?\b", "#",
                  line)  # git hashes, bare hex words
    line = re.sub(r"0x[0-9a-fA-F]+", "#", line)
    line = re.sub(r"\d+(\.\d+)?", "#", line)
    line = re.sub(r"#(\.#)+", "#", line)
    line = re.sub(r"-{3,}", "---", line)  # table rules follow widths
    # Numbers are padded to their width ("[  0]", "[255]"): compare
    # without spaces at all.
    return re.sub(r"\s+", "", line)


def match_blocks(blocks, trans):
    """Pair each block with the next transcript of its command; returns
    [(block, transcript lines or None)]."""
    pairs, k = [], 0
    for b in blocks:
        while k < len(trans) and trans[k][0] != b.command:
            k += 1
        if k == len(trans):
            pairs.append((b, None))
            continue
        pairs.append((b, trans[k][1]))
        k += 1
    return pairs


HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)


def hidden_commands(path, boot=None):
    """Run-only markers of one lab (of one boot, or all) whose command
    the page never shows outside HTML comments: [(marker line, command)]."""
    with open(path) as f:
        visible = HTML_COMMENT_RE.sub("", f.read())
    return [(b.marker_line, b.command) for b in blocks_of(path)
            if b.lines is None and boot in (None, b.boot) and
            b.command not in visible]


def check(log_path, boot=DEFAULT_BOOT):
    """Problems (strings) of boot's log against its labs' blocks."""
    probs = []
    for path in lab_files():
        for line, command in hidden_commands(path, boot):
            probs.append("%s:%d: %s: typed by the boot but shown nowhere "
                         "on the page (only in an HTML comment)" %
                         (os.path.relpath(path, ROOT), line, command))
    blocks = all_blocks(boot)
    session = session_path(boot)
    try:
        with open(os.path.join(ROOT, session)) as f:
            if f.read() != session_text(blocks):
                probs.append("%s is stale: run make labs" % session)
    except OSError:
        probs.append("%s missing: run make labs" % session)
    with open(log_path, "rb") as f:
        trans = transcripts(f.read().decode("utf-8", "replace"))
    for b, got in match_blocks(blocks, trans):
        where = "%s:%d: %s" % (os.path.relpath(b.path, ROOT), b.marker_line,
                               b.command)
        if got is None:
            probs.append("%s: the command did not run" % where)
            continue
        if not b.error_ok and any(l.startswith("error:") for l in got):
            probs.append("%s: the command now fails: %s" %
                         (where, [l for l in got if
                                  l.startswith("error:")][0]))
            continue
        if b.lines is None:
            continue  # run only: it ran and printed no error
        want = comparable(b.lines)
        have = comparable(got)
        if want != have:
            n = next((i for i in range(min(len(want), len(have)))
                      if want[i] != have[i]), min(len(want), len(have)))
            probs.append("%s: quoted output differs (masked) at compared "
                         "line %d: quoted %r, now %r (make labs)" %
                         (where, n + 1,
                          want[n] if n < len(want) else "(end)",
                          have[n] if n < len(have) else "(end)"))
    return probs


def rewrite(log_path, boot=DEFAULT_BOOT):
    """Replace every block of boot with the log's transcript."""
    with open(log_path, "rb") as f:
        trans = transcripts(f.read().decode("utf-8", "replace"))
    by_file = {}
    for b, got in match_blocks(all_blocks(boot), trans):
        if got is None:
            raise LabError("%s:%d: %s did not run" % (b.path, b.marker_line,
                                                      b.command))
        by_file.setdefault(b.path, []).append((b, got))
    for path, items in by_file.items():
        with open(path) as f:
            lines = f.read().split("\n")
        for b, got in reversed(items):  # bottom up: ranges stay valid
            # Every quoted block, figures included: a quoted number is
            # always one this code printed at the last refresh.
            if b.lines is not None:
                lines[b.start:b.end] = got
        with open(path, "w") as f:
            f.write("\n".join(lines))


def write_sessions():
    for boot in boots():
        text = session_text(all_blocks(boot))
        with open(os.path.join(ROOT, session_path(boot)), "w") as f:
            f.write(text)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--session", action="store_true")
    g.add_argument("--refresh", action="store_true")
    g.add_argument("--check-log", metavar="LOG")
    g.add_argument("--selftest", action="store_true")
    ap.add_argument("--boot", default=DEFAULT_BOOT,
                    help="with --check-log: the boot LOG comes from")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    if args.selftest:
        return selftest()
    try:
        if args.session:
            write_sessions()
            return 0
        if args.refresh:
            write_sessions()
            probs = []
            for boot in boots():
                subprocess.call(
                    [sys.executable, "-m", "tools.runner.testrun", boot],
                    stdout=subprocess.DEVNULL)
                rewrite(log_path_of(boot), boot)
                probs += check(log_path_of(boot), boot)
        else:
            probs = check(args.check_log, args.boot)
    except (OSError, LabError) as err:
        print("labs: %s" % err)
        return 1
    if probs:
        print("labs: %d problem(s): %s" % (len(probs), probs[0]))
        for p in probs[1:]:
            print(p)
        return 1
    print("labs: %d command(s) ran, their quoted transcripts match" %
          len(all_blocks(None if args.refresh else args.boot)))
    return 0


def selftest():
    """Run tests/tools/test_labs.py; 0 when every test passed."""
    import unittest
    suite = unittest.defaultTestLoader.loadTestsFromName(
        "tests.tools.test_labs")
    res = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if res.wasSuccessful() and res.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
