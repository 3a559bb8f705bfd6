#!/usr/bin/env python3
"""Runs the libFuzzer harnesses of tests/fuzz/ (built by the Makefile into
build/fuzz/fuzz_*): each replays its checked-in inputs, then fuzzes for a
bounded time, and the figures libFuzzer reports are summed up per harness.

  tests/fuzz/corpus/NAME/       seed inputs (checked in, small)
  tests/fuzz/regressions/NAME/  every input that once made NAME fail
  build/fuzz/work/NAME/         what make fuzz found since (not checked in)
  build/fuzz/crashes/NAME/      inputs that fail now (crash-*, timeout-*,
                                leak-*, oom-*): fix, then move them to
                                regressions/

Usage: fuzz.py [--seconds S] [--replay-only] [NAME ...]   (make fuzz)
tools/runner/testrun.py imports it for make test's short runs (fuzz_test()).
Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SOURCES = os.path.join("tests", "fuzz")
BUILD = os.path.join("build", "fuzz")

# A single input running longer than this is a hang (libFuzzer -timeout).
INPUT_TIMEOUT_S = 10
RSS_LIMIT_MB = 2048
# Wall-clock margin over the fuzzing time (start-up, corpus loading).
MARGIN_S = 60
REPORT_LINES = 30     # lines of a failing run's output kept as diagnostics

STAT_RE = re.compile(r"^stat::(\w+):\s*(\d+)", re.M)
COV_RE = re.compile(r"cov: (\d+) ft: (\d+) corp: (\d+)/")
FAIL_RE = re.compile(r"^(==\d+==ERROR: .*|SUMMARY: .*|.*runtime error: .*|"
                     r"panic: .*|.*ALARM: .*|.*Test unit written to .*)$",
                     re.M)


def harnesses(root=ROOT):
    """Names of the harnesses, from the sources (fuzz_acpi, ...)."""
    return sorted(os.path.basename(p)[:-2] for p in
                  glob.glob(os.path.join(root, SOURCES, "fuzz_*.c")))


def short(name):
    """fuzz_acpi -> acpi: the corpus directories' name."""
    return name[len("fuzz_"):] if name.startswith("fuzz_") else name


def binary(name):
    return os.path.join(BUILD, name)


def corpus_dirs(name):
    """The checked-in corpus directories of name that exist."""
    dirs = [os.path.join(SOURCES, sub, short(name))
            for sub in ("corpus", "regressions")]
    return [d for d in dirs if os.path.isdir(d)]


def corpus_files(name):
    """Every checked-in input of name, sorted."""
    out = []
    for d in corpus_dirs(name):
        out += sorted(os.path.join(d, f) for f in os.listdir(d)
                      if os.path.isfile(os.path.join(d, f)))
    return out


class Run:
    """What one libFuzzer process did: ok, its output, and the figures
    (execs, execs_per_s, cov, ft, corpus; None when not printed)."""

    def __init__(self, ok, out):
        self.ok, self.out = ok, out
        stats = dict((k, int(v)) for k, v in STAT_RE.findall(out))
        self.execs = stats.get("number_of_executed_units")
        self.execs_per_s = stats.get("average_exec_per_sec")
        cov = COV_RE.findall(out)
        self.cov, self.ft, self.corpus = \
            (int(x) for x in cov[-1]) if cov else (None, None, None)

    def failure(self):
        """The lines that say why the run failed (sanitizer reports,
        libFuzzer's artifact line), else the output's tail."""
        lines = FAIL_RE.findall(self.out)
        if not lines:
            lines = self.out.rstrip("\n").split("\n")[-REPORT_LINES:]
        return lines[:REPORT_LINES]


def libfuzzer(name, args, wall_s):
    """Run harness name with args under nice; returns a Run."""
    crashes = os.path.join(BUILD, "crashes", short(name))
    os.makedirs(crashes, exist_ok=True)
    cmd = ["nice", binary(name), "-print_final_stats=1",
           "-timeout=%d" % INPUT_TIMEOUT_S,
           "-rss_limit_mb=%d" % RSS_LIMIT_MB,
           "-artifact_prefix=" + crashes + os.sep] + args
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=wall_s)
        out = p.stdout.decode("utf-8", "replace")
        return Run(p.returncode == 0, "# " + " ".join(cmd) + "\n" + out)
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode("utf-8", "replace")
        return Run(False, out + "\nno end after %d s" % wall_s)


def replay(name):
    """Run every checked-in input of name once; returns (count, Run)."""
    files = corpus_files(name)
    if not files:
        return 0, Run(True, "")
    return len(files), libfuzzer(name, ["-runs=1"] + files,
                                 INPUT_TIMEOUT_S * len(files) + MARGIN_S)


def fuzz(name, seconds, work):
    """Fuzz name for seconds from work (new inputs go there) plus the
    checked-in corpus; returns a Run."""
    os.makedirs(work, exist_ok=True)
    return libfuzzer(name, ["-max_total_time=%d" % seconds, work] +
                     corpus_dirs(name), seconds + MARGIN_S)


def figures(run, seconds):
    return "%d s: %s execs (%s/s), cov %s, ft %s, corpus %s" % (
        seconds, run.execs, run.execs_per_s, run.cov, run.ft, run.corpus)


def fuzz_test(name, seconds):
    """make test's check of one harness: the checked-in inputs replay
    cleanly, then `seconds` of fuzzing from a scratch corpus find nothing.
    Returns (ok, description, diagnostics) for a TAP line."""
    desc = "fuzz: " + name
    if not os.access(binary(name), os.X_OK):
        return False, "%s: %s not built (make fuzzers)" % (desc,
                                                           binary(name)), []
    n, r = replay(name)
    if not r.ok:
        return False, "%s: a checked-in input fails" % desc, r.failure()
    work = tempfile.mkdtemp(prefix=short(name) + ".", dir=BUILD)
    try:
        r = fuzz(name, seconds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not r.ok:
        return False, "%s: fuzzing found a failure" % desc, r.failure()
    return True, "%s (%d inputs replayed; %s)" % (desc, n,
                                                   figures(r, seconds)), []


def main(argv):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name,
        description="Replay and fuzz the harnesses of tests/fuzz/.")
    ap.add_argument("names", nargs="*", help="harnesses (default: all)")
    ap.add_argument("--seconds", type=int, default=60,
                    help="fuzzing time per harness (default %(default)s)")
    ap.add_argument("--replay-only", action="store_true")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    names = args.names or harnesses()
    unknown = set(names) - set(harnesses())
    if unknown:
        ap.error("no harness %s in %s" % (", ".join(sorted(unknown)),
                                          SOURCES))
    failed = 0
    for name in names:
        if not os.access(binary(name), os.X_OK):
            print("%s: not built (make fuzzers)" % name)
            failed += 1
            continue
        n, r = replay(name)
        if not r.ok:
            print("%s: FAIL: a checked-in input fails" % name)
            print("\n".join("  " + x for x in r.failure()))
            failed += 1
            continue
        if args.replay_only:
            print("%s: %d inputs replayed" % (name, n))
            continue
        work = os.path.join(BUILD, "work", short(name))
        print("%s: fuzzing for %d s (new inputs in %s)" %
              (name, args.seconds, work), flush=True)
        r = fuzz(name, args.seconds, work)
        if r.ok:
            print("%s: %d inputs replayed; %s" %
                  (name, n, figures(r, args.seconds)), flush=True)
        else:
            print("%s: FAIL: fuzzing found a failure (inputs in %s)" %
                  (name, os.path.join(BUILD, "crashes", short(name))))
            print("\n".join("  " + x for x in r.failure()))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
