#!/usr/bin/env python3
"""Host-side test runner: host unit tests, the runner's and the tools'
self-tests and every boot of tests/boot.cfg under QEMU, reported as one
TAP version 13 stream.

Follows kvm-unit-tests' run_tests.sh in spirit: one manifest of boot
configurations, `-g GROUP` filtering, QEMU under `timeout -k`, one log per
boot, and two independent channels for the kernel's verdict (the
isa-debug-exit code and a final `EXIT: STATUS=N` serial line) that must
agree. A boot that never reports a status (hang, triple fault, QEMU error)
is never a pass unless the manifest says that outcome is expected.

This file runs things and writes TAP; the pieces it drives live beside it
in tools/runner/, the launcher in tools/image/:
  manifest.py  tests/boot.cfg: parser, checks, selection by group and name
  ktap.py      the KTAP parser and its checks
  verdicts.py  the verdict on one boot (log + QEMU exit vs. expectation)
  fuzz.py      the libFuzzer harnesses: corpus replay and short runs
  qemu.py      (tools/image/) the QEMU launcher and the exit-code decoding

Usage, from the root: python3 -m tools.runner.testrun [-g GROUP] [-j N]
                      [--list] [--boot-only|--host-only] [NAME ...]
Python 3 standard library only.
"""

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import subprocess
import sys
import threading
import time

from tools.runner import fuzz
from tools.runner import ktap
from tools.image import qemu
from tools.runner import session
from tools.runner.manifest import (MANIFEST, ManifestError, parse_manifest,
                                   select_entries)
from tools.runner.verdicts import verdict

# --------------------------------------------------------------------------
# Paths and constants. Paths are relative to the repository root; main()
# changes into it first.
# --------------------------------------------------------------------------
BUILD = "build"
KERNEL = os.path.join(BUILD, "kernel.elf")
IMAGES = os.path.join(BUILD, "images")
LOGS = os.path.join(BUILD, "logs")
MKISO = os.path.join("tools", "image", "mkiso.sh")
SELFTEST = os.path.join("tests", "runner", "test_testrun.py")
HOST_TESTS = os.path.join(BUILD, "host", "test_*")
QEMU_TESTS = os.path.join("tests", "runner", "test_qemu.py")
TOOLS_TESTS = os.path.join("tests", "tools", "test_tools.py")
PLOT_AXES_TESTS = os.path.join("tests", "tools", "test_plot_axes.py")
DIAGRAM_TESTS = os.path.join("tests", "tools", "test_diagrams.py")
GRADE_TESTS = os.path.join("tests", "tools", "test_grade.py")
SENSITIVITY_TESTS = os.path.join("tests", "tools",
                                 "test_model_sensitivity.py")
RESULTS_TOOL = ["-m", "tools.results.results"]
TRACE_TOOL = ["-m", "tools.results.trace_extract"]
SPIN_CHECK = os.path.join("tools", "checks", "spin_check.sh")

GRUB_TIMEOUT = 0          # every test image boots its first entry at once
DEFAULT_JOBS = 2          # this machine: 2 cores, TCG only
HOST_TEST_TIMEOUT_S = 120  # keeps make test within its 10 minutes
SELFTEST_TIMEOUT_S = 120
# Fuzzing time per harness in make test (after its corpus replay): short,
# to keep make test within its budget; make fuzz runs them for longer.
FUZZ_TEST_S = 4
LOG_TAIL_LINES = 25       # log lines shown as TAP diagnostics on failure
IMAGE_HASH_CHARS = 12     # hex digits of the image-name hash


# --------------------------------------------------------------------------
# TAP output
# --------------------------------------------------------------------------
class Tap:
    """TAP version 13 writer; thread-safe, numbers lines itself."""

    def __init__(self, planned):
        self.n = 0
        self.failed = 0
        self.lock = threading.Lock()
        print("TAP version 13")
        print("1..%d" % planned, flush=True)

    def result(self, ok, desc, diag=()):
        with self.lock:
            self.n += 1
            if not ok:
                self.failed += 1
            desc = desc.replace("#", "\\#")
            print("%s %d - %s" % ("ok" if ok else "not ok", self.n, desc))
            for d in diag:
                print("# " + d.rstrip() if d.strip() else "#")
            sys.stdout.flush()


def log_tail(text, n=LOG_TAIL_LINES):
    lines = ktap.clean_log(text).rstrip("\n").split("\n")
    tail = lines[-n:]
    return ["--- last %d log line(s) ---" % len(tail)] + \
        ["| " + line for line in tail]


# --------------------------------------------------------------------------
# Host tests and the self-test
# --------------------------------------------------------------------------
def host_programs():
    return sorted(p for p in glob.glob(HOST_TESTS)
                  if os.path.isfile(p) and os.access(p, os.X_OK))


def run_host_test(path):
    """Run one host test program; returns (ok, description, diagnostics).
    It must exit 0 and print clean KTAP."""
    name = os.path.basename(path)
    try:
        p = subprocess.run([path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           timeout=HOST_TEST_TIMEOUT_S)
        out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode("utf-8", "replace")
        return False, "host: %s: hang: no exit after %d s" % \
            (name, HOST_TEST_TIMEOUT_S), log_tail(out)
    probs, diag = ktap.check_ktap(out, "all")
    if rc != 0:
        probs.append("exit code %d" % rc)
    if probs:
        return False, "host: %s: %s" % (name, probs[0]), \
            ["also: " + p for p in probs[1:]] + diag + log_tail(out)
    skips = ktap_skips(out)
    if skips:
        return True, "host: %s (%d skipped: %s)" % (
            name, len(skips), "; ".join(skips)), []
    return True, "host: " + name, []


def ktap_skips(out):
    """The tests of a KTAP output that were skipped, as "suite.test:
    reason": a pass with skips says so on its TAP line."""
    lines = ktap.ktap_section(out)
    if lines is None:
        return []
    found = []

    def walk(blk, prefix):
        for r in blk.results:
            if r.sub:
                walk(r.sub, prefix + r.name + ".")
            if r.directive[:4].upper() == "SKIP":
                found.append("%s%s: %s" % (prefix, r.name,
                                           r.directive[4:].strip()))
    walk(ktap.parse_ktap(lines), "")
    return found



def run_in_order(pool, jobs, tap):
    """Submit every (function, args) of jobs to pool and report their
    (ok, description, diagnostics) results in submission order."""
    futures = [pool.submit(fn, *args) for fn, args in jobs]
    for f in futures:
        tap.result(*f.result())


def run_python_tests(tap, desc, args):
    """Run a Python unittest command as one TAP line."""
    try:
        p = subprocess.run([sys.executable] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=SELFTEST_TIMEOUT_S)
        out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired:
        out, rc = "", None
    if rc == 0:
        tap.result(True, desc)
    else:
        tap.result(False, "%s: unittest failed (rc %r)" % (desc, rc),
                   log_tail(out, 60))


# The Python test programs run as one TAP line each: (description, args).
PYTHON_TESTS = [
    ("runner: self-test", ["-m", "unittest", "-q", SELFTEST]),
    ("runner: qemu launcher tests", ["-m", "unittest", "-q", QEMU_TESTS]),
    ("tools: results/plot/report tests", ["-m", "unittest", "-q",
                                          TOOLS_TESTS]),
    ("tools: chart axes and titles, diagrams", ["-m", "unittest", "-q",
                                                PLOT_AXES_TESTS,
                                                DIAGRAM_TESTS]),
    ("tools: grade.py tests", ["-m", "unittest", "-q", GRADE_TESTS]),
    ("tools: model sensitivity and seed 000 normalised tests",
     ["-m", "unittest", "-q", SENSITIVITY_TESTS]),
]

# Promela models checked with spin, one TAP line each: (model, defines);
# a "!" define set is a deliberately broken model the check must reject.
SPIN_MODELS = [
    (os.path.join("trace", "model", "ring_buffer.pml"),
     ["", "-DDISCARD", "-DPAGES", "!-DPAGES -DBUG_WINDOW_ORDER",
      "!-DDISCARD -DBUG_FAST_NO_DELIVER"]),
]
SPIN_TIMEOUT_S = 300  # five searches (~40 s of CPU), on a loaded machine


def run_spin_models(tap):
    """Each Promela model's exhaustive spin search, one TAP line each."""
    for model, defines in SPIN_MODELS:
        desc = "model: %s (spin)" % os.path.basename(model)
        try:
            p = subprocess.run(["sh", SPIN_CHECK, model] + defines,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT,
                               timeout=SPIN_TIMEOUT_S)
            out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
        except subprocess.TimeoutExpired:
            out, rc = "", None
        lines = out.strip().split("\n")
        if rc == 0:
            tap.result(True, "%s: %s" % (desc, "; ".join(lines)))
        else:
            tap.result(False, "%s: failed (rc %r)" % (desc, rc), lines)


# --------------------------------------------------------------------------
# Boots
# --------------------------------------------------------------------------
def image_path(cmdline):
    key = "%s\0%d" % (cmdline, GRUB_TIMEOUT)
    h = hashlib.sha1(key.encode()).hexdigest()[:IMAGE_HASH_CHARS]
    return os.path.join(IMAGES, h + ".iso")


def build_image(cmdline):
    """Build (or reuse) the ISO for cmdline; returns (path, error)."""
    iso = image_path(cmdline)
    newest = max(os.path.getmtime(KERNEL), os.path.getmtime(MKISO))
    if os.path.exists(iso) and os.path.getmtime(iso) > newest:
        return iso, None
    os.makedirs(IMAGES, exist_ok=True)
    p = subprocess.run(["sh", MKISO, KERNEL, iso, cmdline,
                        str(GRUB_TIMEOUT)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        return None, p.stdout.decode("utf-8", "replace")
    with open(iso + ".cmdline", "w") as f:  # what the hash stands for
        f.write(cmdline + "\n")
    return iso, None


def boot_launch(e, iso, log):
    """The launcher settings that boot manifest entry e from iso, serial
    to log, under its timeout. The entry's extra= options may name {iso},
    {log}, {name} and {vars} (the UEFI variable store's copy). Raises
    KeyError, IndexError or ValueError for a bad extra=."""
    vars_copy = os.path.join(IMAGES, "OVMF_VARS.%s.fd" % e["name"])
    subst = {"iso": iso, "log": log, "name": e["name"], "vars": vars_copy}
    return qemu.Launch(
        iso, firmware=e["firmware"], machine=e["machine"], media=e["media"],
        smp=e["smp"], mem=e["mem"], cpu=e["cpu"], serial="file:" + log,
        vars=vars_copy if e["firmware"] == "uefi" else None,
        plugins=model_plugins(e, log),
        timeout=e["timeout_s"], extra=e["extra"].format(**subst).split())


def run_boot(e, iso, tap_desc):
    """Boot entry e; returns (ok, description, diagnostics)."""
    os.makedirs(LOGS, exist_ok=True)
    log = os.path.join(LOGS, e["name"] + ".log")
    qlog = os.path.join(LOGS, e["name"] + ".qemu.txt")
    if os.path.exists(log):
        os.unlink(log)
    if e.get("session"):
        return run_session_boot(e, iso, log, tap_desc)
    try:
        launch = boot_launch(e, iso, log)
        cmd = qemu.command(launch)
    except (KeyError, IndexError, ValueError) as err:
        return False, tap_desc + ": bad extra= option: %s" % err, []
    except qemu.LaunchError as err:
        return False, "%s: %s" % (tap_desc, err), []
    with open(qlog, "w") as qf:
        qf.write("# " + " ".join(cmd) + "\n")
        qf.flush()
        try:
            ex, elapsed = qemu.run(launch, stdin=subprocess.DEVNULL,
                                   stdout=qf, stderr=subprocess.STDOUT)
        except qemu.LaunchError as err:
            return False, "%s: %s" % (tap_desc, err), []
    try:
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        text = ""
    v = verdict(e, ex.rc, text, ex.kind == "timeout")
    desc = "%s (%.1f s%s)" % (tap_desc, elapsed,
                              ", " + v.reason if v.ok and v.reason else "")
    if v.ok and e.get("model"):
        ok, why, mdiag = check_model(e, iso, log)
        if not ok:
            return False, "%s: %s" % (desc, why), mdiag + ["log: " + log]
        desc = "%s (%.1f s, %s)" % (tap_desc, elapsed, why)
    if v.ok and e.get("check_results", "no") == "yes":
        ok, why, rdiag = check_results(log, int(e.get("results_min", "1")))
        if not ok:
            return False, "%s: %s" % (desc, why), rdiag + ["log: " + log]
        desc = "%s (%.1f s, %s)" % (tap_desc, elapsed, why)
    if v.ok and e.get("check_trace", "no") == "yes":
        ok, why, tdiag = check_trace(log, e["name"])
        if not ok:
            return False, "%s: %s" % (desc, why), tdiag + ["log: " + log]
        desc = "%s (%.1f s, %s)" % (tap_desc, elapsed, why)
    if v.ok:
        return True, desc, []
    with open(qlog, "rb") as f:
        qtext = f.read().decode("utf-8", "replace").strip()
    qdiag = ["qemu: " + q for q in qtext.split("\n")[1:] if q.strip()]
    return False, "%s: %s" % (desc, v.reason), \
        v.diag + qdiag + ["log: " + log] + log_tail(text)


# --------------------------------------------------------------------------
# The cache-model plugin (docs/cachemodel.md; keys in tools/runner/manifest.py)
# --------------------------------------------------------------------------
MODEL_SO = os.path.join(BUILD, "cachemodel", "cachemodel.so")
MODEL_PROFILES = os.path.join("cachemodel", "profiles.txt")
MODEL_TOOL = ["-m", "tools.model.model"]


def model_out(log):
    """The plugin's file next to the serial log."""
    return log + ".model.jsonl"


def model_plugins(e, log):
    if not e.get("model"):
        return []
    args = ["profile=" + e["model"], "profiles=" + MODEL_PROFILES,
            "out=" + model_out(log)]
    if e.get("model_sync"):
        args.append("sync=" + e["model_sync"])
    if e.get("model_order"):
        args.append("order=" + e["model_order"])
    return [qemu.Plugin(MODEL_SO, args)]


def model_tool(args):
    p = subprocess.run([sys.executable] + MODEL_TOOL + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode("utf-8", "replace").strip()


def check_model(e, iso, log):
    """The model's checks of a boot under the plugin: its file must be
    complete and free of doorbell errors (commands the plugin refused:
    tools/model/model.py check-doorbell), then the entry's model_check passes.
    Returns (ok, summary, diagnostics)."""
    rc, text = model_tool(["check-doorbell", model_out(log)])
    if rc != 0:
        lines = text.split("\n")
        return False, lines[0], lines[1:]
    kind = e.get("model_check")
    if not kind:
        return True, text.split("\n")[0], []
    if kind == "pacing":
        rc, text = model_tool(["check-pacing", model_out(log)] +
                              (["--ordered"] if e.get("model_order") == "1"
                               else []))
        lines = text.split("\n")
        return rc == 0, (lines[-1] if rc == 0 else "model pacing check "
                         "failed"), [] if rc == 0 else lines
    if kind == "calibration":
        rc, text = model_tool(["check-calibration", model_out(log)])
        return rc == 0, ("model calibration " +
                         ("matches the profile" if rc == 0 else "WRONG")), \
            [] if rc == 0 else text.split("\n")
    if kind in ("falseshare", "copy"):
        rc, text = model_tool(["check-" + kind, log, model_out(log)])
        return rc == 0, text.split("\n")[0], \
            [] if rc == 0 else text.split("\n")
    # repeat: a second boot must write identical model lines; serial:
    # serially paced regions within tools/model/model_checks.py's
    # SERIAL_TOLERANCE of the first boot's.
    log2 = log + ".again"
    try:
        qemu.run(boot_launch(e, iso, log2), stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except qemu.LaunchError as err:
        return False, "second boot: %s" % err, []
    rc, text = model_tool(["compare-serial" if kind == "serial" else
                           "compare", model_out(log), model_out(log2)])
    return rc == 0, "second boot: " + text.split("\n")[0], \
        [] if rc == 0 else text.split("\n")
def run_session_boot(e, iso, log, tap_desc):
    """Boot e with its session script (tools/runner/session.py) instead of a
    serial file; the script's problems come before the usual verdict's."""
    shot = os.path.join(LOGS, e["name"] + ".screen.ppm")
    try:
        launch = boot_launch(e, iso, log)
        ex, elapsed, probs = session.run(launch, e["session"], log, shot)
    except (KeyError, IndexError, ValueError) as err:
        return False, tap_desc + ": bad extra= option: %s" % err, []
    except (OSError, qemu.LaunchError, session.ScriptError) as err:
        return False, "%s: session: %s" % (tap_desc, err), []
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    v = verdict(e, ex.rc, text, ex.kind == "timeout")
    desc = "%s (%.1f s)" % (tap_desc, elapsed)
    if not probs and v.ok and e.get("post_check"):
        cmd = [a.format(log=log) for a in e["post_check"].split()]
        p = subprocess.run([sys.executable] + cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            out = p.stdout.decode("utf-8", "replace").strip().split("\n")
            return False, "%s: %s" % (desc, out[0]), out[1:]
    if not probs and v.ok and e.get("model"):
        ok, why, mdiag = check_model(e, iso, log)
        if not ok:
            return False, "%s: %s" % (desc, why), mdiag + ["log: " + log]
        desc = "%s (%.1f s, %s)" % (tap_desc, elapsed, why)
    if not probs and v.ok:
        return True, desc, []
    probs = probs + ([] if v.ok else [v.reason])
    return False, "%s: %s" % (desc, probs[0]), \
        ["also: " + p for p in probs[1:]] + v.diag + ["log: " + log] + \
        log_tail(text)


def run_trace_tool(args):
    p = subprocess.run([sys.executable] + TRACE_TOOL + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace").strip()


def check_trace(log, name):
    """Extract and check a log's CTF export, then make sure a copy with
    one damaged chunk and a cut copy are both rejected. Returns (ok,
    reason-or-summary, diagnostics)."""
    d = os.path.join(BUILD, "traces", name)
    rc, out = run_trace_tool([log, d, "--check"])
    if rc != 0:
        return False, "trace export check failed", out.split("\n")
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    lines = text.split("\n")
    chunk = [i for i, l in enumerate(lines) if "@@TRACE-CHUNK" in l]
    if not chunk:
        return False, "no trace chunks in the log", []
    bad = list(lines)
    i = chunk[len(chunk) // 2]
    fields = bad[i].split(" ")
    b64 = fields[-1]  # "@@TRACE-CHUNK file offset length crc base64"
    fields[-1] = ("B" if b64[0] == "A" else "A") + b64[1:]
    bad[i] = " ".join(fields)
    cut = lines[:chunk[-1]]
    for label, copy, want in (("damaged", bad, "CRC32"),
                              ("cut", cut, "TRACE-END")):
        path = os.path.join(BUILD, "traces", "%s.%s.log" % (name, label))
        with open(path, "w") as f:
            f.write("\n".join(copy))
        rc, out = run_trace_tool([path, d + "." + label])
        if rc != 1 or want not in out:
            return False, "a %s copy of the log was not rejected" % label, \
                out.split("\n")
    return True, "trace read by babeltrace2; damaged and cut copies " \
        "rejected", []


def check_results(log, minimum):
    """Validate a log's machine-readable lines with tools/results/results.py.
    Returns (ok, reason-or-summary, diagnostics)."""
    p = subprocess.run([sys.executable] + RESULTS_TOOL + [log],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL)
    err = p.stderr.decode("utf-8", "replace").strip().split("\n")
    if p.returncode != 0:
        return False, "results.py rejected the log: " + err[0], err[1:]
    try:
        data = json.loads(p.stdout.decode("utf-8", "replace"))
        n = len(data.get("results", []))
    except ValueError as exc:
        return False, "results.py wrote no JSON: %s" % exc, []
    if n < minimum:
        return False, "only %d @@RESULT line(s), expected >= %d" % \
            (n, minimum), []
    return True, "%d results valid" % n, []


def run_boots(entries, jobs, tap):
    if not os.path.exists(KERNEL):
        for e in entries:
            tap.result(False, "boot: %s: %s missing (make %s)" %
                       (e["name"], KERNEL, KERNEL))
        return
    images = {}
    for e in entries:  # sequential: parallel boots may share an image
        if e["cmdline"] not in images:
            images[e["cmdline"]] = build_image(e["cmdline"])
    shared, alone = [], []
    for e in entries:
        iso, err = images[e["cmdline"]]
        desc = "boot: " + e["name"]
        if iso is None:
            res = (False, desc + ": mkiso.sh failed",
                   err.strip().split("\n")[-LOG_TAIL_LINES:])
            job = (lambda r: r, (res,))
        else:
            job = (run_boot, (e, iso, desc))
        (alone if e.get("exclusive") == "yes" else shared).append(job)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        run_in_order(pool, shared, tap)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        run_in_order(pool, alone, tap)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------
def default_jobs():
    j = os.environ.get("JOBS", "")
    return int(j) if j.isdigit() and int(j) > 0 else DEFAULT_JOBS


def main(argv):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name,
        description="Run host tests and the boots of %s as TAP." % MANIFEST)
    ap.add_argument("names", nargs="*", help="boots to run (default: all)")
    ap.add_argument("-g", "--group", action="append", default=[],
                    help="only boots in GROUP (repeatable)")
    ap.add_argument("-j", "--jobs", type=int, default=default_jobs(),
                    help="parallel boots (default %(default)s)")
    ap.add_argument("--list", action="store_true",
                    help="list the selected boots and host tests")
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--boot-only", action="store_true")
    only.add_argument("--host-only", action="store_true")
    ap.add_argument("--manifest", default=MANIFEST, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("-j must be at least 1")

    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    try:
        with open(args.manifest) as f:
            entries = parse_manifest(f.read(), args.manifest)
        entries = select_entries(entries, args.group, args.names)
    except (OSError, ManifestError) as err:
        print("TAP version 13\n1..0\nBail out! %s" % err)
        return 2

    # Selecting boots by group or name implies boots only.
    selecting = bool(args.group or args.names)
    do_host = not args.boot_only and not selecting
    do_boot = not args.host_only
    hosts = host_programs() if do_host else []
    fuzzers = fuzz.harnesses() if do_host else []
    boots = entries if do_boot else []

    if args.list:
        for p in hosts:
            print("host  %s" % os.path.basename(p))
        for name in fuzzers:
            print("fuzz  %s" % name)
        if do_host:
            for desc, _ in PYTHON_TESTS:
                print(desc)
            for model, _ in SPIN_MODELS:
                print("model %s" % model)
        for e in boots:
            print("boot  %-16s %-4s %-3s %s smp=%s mem=%s timeout=%gs "
                  "expect=%s groups=%s cmdline=%r" %
                  (e["name"], e["firmware"], e["media"], e["machine"],
                   e["smp"], e["mem"], e["timeout_s"], e["expect"],
                   ",".join(e["groups_list"]), e["cmdline"]))
        return 0

    tap = Tap(len(hosts) + len(fuzzers) +
              (len(PYTHON_TESTS) + len(SPIN_MODELS) if do_host else 0) +
              len(boots))
    start = time.monotonic()
    if hosts or fuzzers:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            run_in_order(pool, [(run_host_test, (p,)) for p in hosts] +
                         [(fuzz.fuzz_test, (n, FUZZ_TEST_S))
                          for n in fuzzers], tap)
    if do_host:
        for desc, test_args in PYTHON_TESTS:
            run_python_tests(tap, desc, test_args)
        run_spin_models(tap)
    if boots:
        run_boots(boots, args.jobs, tap)
    print("# %d passed, %d failed (%.0f s)" %
          (tap.n - tap.failed, tap.failed, time.monotonic() - start))
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
