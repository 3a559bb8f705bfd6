#!/usr/bin/env python3
"""Host-side test runner: host unit tests, the runner's self-test and every
boot of tests/boot.cfg under QEMU, reported as one TAP version 13 stream.

Follows kvm-unit-tests' run_tests.sh in spirit: one manifest of boot
configurations, `-g GROUP` filtering, QEMU under `timeout -k`, one log per
boot, and two independent channels for the kernel's verdict (the
isa-debug-exit code and a final `EXIT: STATUS=N` serial line) that must
agree. A boot that never reports a status (hang, triple fault, QEMU error)
is never a pass unless the manifest says that outcome is expected.

Usage: testrun.py [-g GROUP] [-j N] [--list] [--boot-only|--host-only]
                  [NAME ...]
Python 3 standard library only.
"""

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

# --------------------------------------------------------------------------
# Paths and constants. Paths are relative to the repository root; main()
# changes into it first.
# --------------------------------------------------------------------------
BUILD = "build"
KERNEL = os.path.join(BUILD, "kernel.elf")
IMAGES = os.path.join(BUILD, "images")
LOGS = os.path.join(BUILD, "logs")
MANIFEST = os.path.join("tests", "boot.cfg")
MKISO = os.path.join("tools", "mkiso.sh")
SELFTEST = os.path.join("tests", "runner", "test_testrun.py")
HOST_TESTS = os.path.join(BUILD, "host", "test_*")

OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"
QEMU = "qemu-system-x86_64"

# isa-debug-exit: the kernel writes N to this port and QEMU exits with
# (N << 1) | 1, so every code the device produces is odd.
DEBUG_EXIT_IOBASE = 0xF4
DEBUG_EXIT_IOSIZE = 0x04

# Exit codes of coreutils timeout(1): 124 after SIGTERM did the job, 128+9
# when it had to follow up with SIGKILL (-k).
TIMEOUT_TERM_RC = 124
TIMEOUT_KILL_RC = 128 + 9
KILL_GRACE_S = 5

GRUB_TIMEOUT = 0          # every test image boots its first entry at once
DEFAULT_JOBS = 2          # this machine: 2 cores, TCG only
HOST_TEST_TIMEOUT_S = 120  # keeps make test within its 10 minutes
SELFTEST_TIMEOUT_S = 120
LOG_TAIL_LINES = 25       # log lines shown as TAP diagnostics on failure
IMAGE_HASH_CHARS = 12     # hex digits of the image-name hash

# Defaults of a manifest entry; every key a section may set is listed here.
ENTRY_DEFAULTS = {
    "firmware": "bios",
    "machine": "pc",
    "smp": "1",
    "mem": "512M",
    "cpu": "max",
    "media": "cd",
    "extra": "",
    "cmdline": "ktest=all run=none",
    "timeout": "60",
    "groups": "",
    "expect": "pass",
    "expect_lines": "",
    "expect_status": "",
    # yes: the @@ENV/@@RESULT lines must parse and validate with
    # tools/results.py, and there must be at least results_min results.
    "check_results": "no",
    "results_min": "1",
    # yes: boot alone, after the others. Timing-sensitive boots (several
    # vCPUs spinning on each other) stall when another QEMU shares the
    # host's cores.
    "exclusive": "no",
    # The cache-model plugin (docs/cachemodel.md): model = a profile of
    # cachemodel/profiles.txt (the kernel gets cachemodel=PROFILE),
    # model_sync = sync= quantum in cycles, model_check = calibration |
    # repeat (boot twice, identical model lines) | falseshare.
    "model": "",
    "model_sync": "",
    "model_check": "",
}
FIRMWARES = ("bios", "uefi")
MEDIAS = ("cd", "usb")
EXPECTS = ("pass", "panic", "hang", "triple")
EXPECT_LINES_SEP = ";;"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

# The USB stick: an xHCI controller with a mass-storage device, first in
# boot order. Read-only so that parallel boots may share one image (QEMU
# takes a write lock on writable images).
USB_OPTS = ("-device qemu-xhci -drive if=none,id=stick,format=raw,"
            "readonly=on,file={iso} "
            "-device usb-storage,drive=stick,bootindex=1")

# Serial output markers (the kernel protocol).
KTAP_HEADER = "KTAP version 1"
EXIT_RE = re.compile(r"^EXIT: STATUS=(-?\d+)\s*$", re.M)
PANIC_RE = re.compile(r"^[ \t]*PANIC:\s*(.*)$", re.M)
KTEST_CMDLINE_RE = re.compile(r"(?:^|\s)ktest=(\S+)")
# GRUB's menu paints the serial line with ANSI/VT100 sequences.
ANSI_RE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])")


# --------------------------------------------------------------------------
# Manifest
# --------------------------------------------------------------------------
class ManifestError(Exception):
    pass


def parse_manifest(text, source=MANIFEST):
    """Parse the INI-like boot manifest.

    Returns a list of entry dicts (in file order) with every key of
    ENTRY_DEFAULTS filled in plus "name"; raises ManifestError on an
    unknown key, a bad value or a duplicate name.
    """
    entries = []
    cur = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = "%s:%d" % (source, lineno)
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^\[([^\]]*)\]$", line)
        if m:
            name = m.group(1).strip()
            if not NAME_RE.match(name):
                raise ManifestError("%s: bad section name %r" % (where, name))
            if any(e["name"] == name for e in entries):
                raise ManifestError("%s: duplicate section [%s]" %
                                    (where, name))
            cur = dict(ENTRY_DEFAULTS, name=name)
            entries.append(cur)
            continue
        if "=" not in line:
            raise ManifestError("%s: expected 'key = value'" % where)
        if cur is None:
            raise ManifestError("%s: key outside a [section]" % where)
        key, value = (s.strip() for s in line.split("=", 1))
        if key not in ENTRY_DEFAULTS:
            raise ManifestError("%s: unknown key %r" % (where, key))
        cur[key] = value
    for e in entries:
        check_entry(e, source)
    return entries


def check_entry(e, source):
    """Validate one entry's values; raise ManifestError naming it."""
    def bad(msg):
        raise ManifestError("%s: [%s]: %s" % (source, e["name"], msg))

    if e["firmware"] not in FIRMWARES:
        bad("firmware must be one of %s" % "|".join(FIRMWARES))
    if e["media"] not in MEDIAS:
        bad("media must be one of %s" % "|".join(MEDIAS))
    if e["expect"] not in EXPECTS:
        bad("expect must be one of %s" % "|".join(EXPECTS))
    if not e["smp"].isdigit() or int(e["smp"]) < 1:
        bad("smp must be a positive integer")
    if not re.match(r"^\d+[KMGT]?$", e["mem"]):
        bad("mem must look like 512M")
    try:
        e["timeout_s"] = float(e["timeout"])
    except ValueError:
        bad("timeout must be a number of seconds")
    if e["timeout_s"] <= 0:
        bad("timeout must be positive")
    if e["expect_status"] and not re.match(r"^\d+$", e["expect_status"]):
        bad("expect_status must be a non-negative integer")
    e["groups_list"] = e["groups"].split()
    e["expect_res"] = []
    for pat in e["expect_lines"].split(EXPECT_LINES_SEP):
        pat = pat.strip()
        if not pat:
            continue
        try:
            e["expect_res"].append(re.compile(pat, re.M))
        except re.error as err:
            bad("expect_lines regex %r: %s" % (pat, err))
    model_entry_check(e, bad)


def select_entries(entries, groups, names):
    """Entries in any of groups (all when empty) and named in names (all
    when empty); raises ManifestError for a name that is not in the file."""
    known = {e["name"] for e in entries}
    for n in names:
        if n not in known:
            raise ManifestError("no boot named %r in %s" % (n, MANIFEST))
    out = []
    for e in entries:
        if names and e["name"] not in names:
            continue
        if groups and not set(groups) & set(e["groups_list"]):
            continue
        out.append(e)
    if groups and not out:
        raise ManifestError("no boot in group(s) %s" % " ".join(groups))
    return out


# --------------------------------------------------------------------------
# Exit-code decoding: the only place that knows isa-debug-exit's encoding
# and timeout(1)'s codes.
# --------------------------------------------------------------------------
class Exit:
    """How QEMU ended. kind is one of:
      "status"   the kernel wrote a status to isa-debug-exit (status is set)
      "timeout"  timeout(1) fired: the guest hung
      "nostatus" QEMU exited 0: triple fault under -no-reboot, or a halt
      "error"    any other code (QEMU failed, killed by a signal)
    """

    def __init__(self, kind, rc, status=None):
        self.kind, self.rc, self.status = kind, rc, status

    def __repr__(self):
        return "Exit(%s, rc=%r, status=%r)" % (self.kind, self.rc,
                                               self.status)


def decode_exit(rc, timed_out):
    """Decode QEMU's exit code rc (as returned through timeout(1)).

    timed_out says the wall clock reached the timeout: it is needed
    because 137 (timeout's SIGKILL code) is odd and would otherwise read
    as kernel status 68.
    """
    if timed_out and rc in (TIMEOUT_TERM_RC, TIMEOUT_KILL_RC):
        return Exit("timeout", rc)
    if rc is None or rc < 0:
        return Exit("error", rc)
    if rc & 1:
        return Exit("status", rc, rc >> 1)
    if rc == 0:
        return Exit("nostatus", rc)
    return Exit("error", rc)


# --------------------------------------------------------------------------
# KTAP
# --------------------------------------------------------------------------
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
        for suite in ktest.split(","):
            if suite and suite not in ran:
                probs.append("KTAP: suite %s (ktest=%s) did not run" %
                             (suite, ktest))
    return probs, ktap_diags(root)


# --------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------
class Verdict:
    def __init__(self, ok, reason, diag=()):
        self.ok, self.reason, self.diag = ok, reason, list(diag)

    def __repr__(self):
        return "Verdict(%r, %r)" % (self.ok, self.reason)


def exit_statuses(text):
    return [int(s) for s in EXIT_RE.findall(text)]


def describe_exit(ex, timeout_s):
    if ex.kind == "timeout":
        return "timed out after %g s" % timeout_s
    if ex.kind == "status":
        return "QEMU exit code %d (status %d)" % (ex.rc, ex.status)
    if ex.kind == "nostatus":
        return "QEMU exited 0 without a status"
    return "QEMU exit code %r without a status" % ex.rc


def verdict(entry, rc, log, timed_out):
    """Decide one boot. entry: a manifest entry (only cmdline, timeout_s,
    expect, expect_res and expect_status are used); rc: the exit code of
    timeout+QEMU; log: the serial log text; timed_out: the wall clock
    reached the timeout. Returns a Verdict whose reason is one line.
    """
    text = clean_log(log)
    ex = decode_exit(rc, timed_out)
    statuses = exit_statuses(text)
    line_status = statuses[-1] if statuses else None
    panic = PANIC_RE.search(text)
    expect = entry.get("expect", "pass")
    timeout_s = entry.get("timeout_s", 0)
    want = entry.get("expect_status", "")
    want = int(want) if want != "" else None
    probs, diag = [], []

    def missing_lines():
        return ["expected line /%s/ not in log" % r.pattern
                for r in entry.get("expect_res", []) if not r.search(text)]

    def channels_agree():
        # Both channels present and equal; reasons otherwise.
        p = []
        if line_status is None:
            p.append("no EXIT: STATUS line (%s)" %
                     describe_exit(ex, timeout_s))
        if ex.kind != "status":
            if line_status is not None:
                p.append("EXIT: STATUS=%d printed but %s" %
                         (line_status, describe_exit(ex, timeout_s)))
        elif line_status is not None and ex.status != line_status:
            p.append("status mismatch: EXIT: STATUS=%d but QEMU exit code"
                     " %d decodes to %d" % (line_status, ex.rc, ex.status))
        return p

    if expect == "pass":
        if ex.kind == "timeout":
            if line_status is None:
                probs.append("hang: no EXIT line after %g s" % timeout_s)
            else:
                probs.append("hang: EXIT: STATUS=%d printed but QEMU did "
                             "not exit within %g s" %
                             (line_status, timeout_s))
        elif ex.kind == "nostatus" and line_status is None:
            probs.append("triple fault: QEMU exited 0 without a status")
        if panic:
            probs.append("panic: %s" % panic.group(1).strip())
        m = KTEST_CMDLINE_RE.search(entry.get("cmdline", ""))
        kprobs, diag = check_ktap(text, m.group(1) if m else None)
        probs.extend(kprobs)
        if ex.kind not in ("timeout", "nostatus") or line_status is not None:
            probs.extend(channels_agree())
        expected = want if want is not None else 0
        if ex.kind == "status" and line_status == ex.status and \
                ex.status != expected:
            probs.append("kernel exited with status %d (expected %d)" %
                         (ex.status, expected))
        probs.extend(missing_lines())
    elif expect == "panic":
        if not panic:
            probs.append("expected a panic, no PANIC: line (%s)" %
                         describe_exit(ex, timeout_s))
        probs.extend(missing_lines())
        probs.extend(channels_agree())
        if ex.kind == "status" and line_status == ex.status:
            if want is not None and ex.status != want:
                probs.append("panic status %d, expected %d" %
                             (ex.status, want))
            elif ex.status == 0:
                probs.append("panic but status 0 on both channels")
    elif expect == "hang":
        if ex.kind != "timeout":
            probs.append("expected a hang, but %s" %
                         describe_exit(ex, timeout_s))
        if line_status is not None:
            probs.append("expected a hang, but EXIT: STATUS=%d printed" %
                         line_status)
        probs.extend(missing_lines())
    elif expect == "triple":
        if ex.kind != "nostatus":
            probs.append("expected a triple fault (QEMU exit 0), but %s" %
                         describe_exit(ex, timeout_s))
        if line_status is not None:
            probs.append("expected a triple fault, but EXIT: STATUS=%d "
                         "printed" % line_status)
        probs.extend(missing_lines())
    else:
        probs.append("unknown expect=%s" % expect)

    if probs:
        return Verdict(False, probs[0],
                       ["also: " + p for p in probs[1:]] + diag)
    what = {"pass": "", "panic": "panicked as expected",
            "hang": "hang as expected", "triple": "triple fault as expected"}
    return Verdict(True, what[expect])


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
    lines = clean_log(text).rstrip("\n").split("\n")
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
    probs, diag = check_ktap(out, "all")
    if rc != 0:
        probs.append("exit code %d" % rc)
    if probs:
        return False, "host: %s: %s" % (name, probs[0]), \
            ["also: " + p for p in probs[1:]] + diag + log_tail(out)
    return True, "host: " + name, []


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


def run_selftest(tap):
    run_python_tests(tap, "runner: self-test", [SELFTEST])


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


def qemu_command(e, iso, log):
    """The argument list that boots entry e from iso, serial to log."""
    machine = e["machine"]
    cmd = [QEMU, "-machine", machine, "-m", e["mem"], "-smp", e["smp"],
           "-cpu", e["cpu"], "-display", "none", "-no-reboot",
           "-device", "isa-debug-exit,iobase=%#x,iosize=%#04x" %
           (DEBUG_EXIT_IOBASE, DEBUG_EXIT_IOSIZE),
           "-serial", "file:" + log, "-monitor", "none"]
    subst = {"iso": iso, "log": log, "name": e["name"]}
    if e["firmware"] == "uefi":
        vars_copy = os.path.join(IMAGES, "OVMF_VARS.%s.fd" % e["name"])
        shutil.copyfile(OVMF_VARS, vars_copy)
        cmd += ["-drive", "if=pflash,format=raw,readonly=on,file=" +
                OVMF_CODE,
                "-drive", "if=pflash,format=raw,file=" + vars_copy]
        subst["vars"] = vars_copy
    if e["media"] == "cd":
        cmd += ["-cdrom", iso]
    else:
        cmd += USB_OPTS.format(**subst).split()
    cmd += e["extra"].format(**subst).split()
    cmd += model_options(e, model_out(e, log))
    return cmd


def run_boot(e, iso, tap_desc):
    """Boot entry e; returns (ok, description, diagnostics)."""
    os.makedirs(LOGS, exist_ok=True)
    log = os.path.join(LOGS, e["name"] + ".log")
    qlog = os.path.join(LOGS, e["name"] + ".qemu.txt")
    if os.path.exists(log):
        os.unlink(log)
    if e["firmware"] == "uefi" and not (os.path.exists(OVMF_CODE) and
                                        os.path.exists(OVMF_VARS)):
        return False, tap_desc + ": OVMF not installed (package ovmf)", []
    try:
        cmd = qemu_command(e, iso, log)
    except (KeyError, IndexError, ValueError) as err:
        return False, tap_desc + ": bad extra= option: %s" % err, []
    t = e["timeout_s"]
    full = ["timeout", "-k", str(KILL_GRACE_S), "%g" % t] + cmd
    with open(qlog, "w") as qf:
        qf.write("# " + " ".join(full) + "\n")
        qf.flush()
        start = time.monotonic()
        rc = subprocess.call(full, stdin=subprocess.DEVNULL, stdout=qf,
                             stderr=subprocess.STDOUT)
        elapsed = time.monotonic() - start
    timed_out = elapsed >= t
    try:
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        text = ""
    v = verdict(e, rc, text, timed_out)
    desc = "%s (%.1f s%s)" % (tap_desc, elapsed,
                              ", " + v.reason if v.ok and v.reason else "")
    if v.ok and e.get("model_check"):
        ok, why, mdiag = check_model(e, iso, log)
        if not ok:
            return False, "%s: %s" % (desc, why), mdiag + ["log: " + log]
        desc = "%s (%.1f s, %s)" % (tap_desc, elapsed, why)
    if v.ok and e.get("check_results", "no") == "yes":
        ok, why, rdiag = check_results(log, int(e.get("results_min", "1")))
        if not ok:
            return False, "%s: %s" % (desc, why), rdiag + ["log: " + log]
        desc = "%s (%.1f s, %s)" % (tap_desc, elapsed, why)
    if v.ok:
        return True, desc, []
    with open(qlog, "rb") as f:
        qtext = f.read().decode("utf-8", "replace").strip()
    qdiag = ["qemu: " + q for q in qtext.split("\n")[1:] if q.strip()]
    return False, "%s: %s" % (desc, v.reason), \
        v.diag + qdiag + ["log: " + log] + log_tail(text)


RESULTS_TOOL = os.path.join("tools", "results.py")


def check_results(log, minimum):
    """Validate a log's machine-readable lines with tools/results.py.
    Returns (ok, reason-or-summary, diagnostics)."""
    p = subprocess.run([sys.executable, RESULTS_TOOL, log],
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


# --------------------------------------------------------------------------
# The cache-model plugin (docs/cachemodel.md)
# --------------------------------------------------------------------------
MODEL_SO = os.path.join(BUILD, "cachemodel", "cachemodel.so")
MODEL_PROFILES = os.path.join("cachemodel", "profiles.txt")
MODEL_TOOL = os.path.join("tools", "model.py")
MODEL_CHECKS = ("calibration", "repeat", "falseshare")


def model_entry_check(e, bad):
    """Validate the model keys; give the kernel its cachemodel= option."""
    if not e.get("model"):
        if e.get("model_check") or e.get("model_sync"):
            bad("model_check and model_sync need model = PROFILE")
        return
    if not NAME_RE.match(e["model"]):
        bad("model must be a profile name")
    if e.get("model_check") and e["model_check"] not in MODEL_CHECKS:
        bad("model_check must be one of %s" % "|".join(MODEL_CHECKS))
    if e.get("model_sync") and not e["model_sync"].isdigit():
        bad("model_sync must be a number of cycles")
    if "cachemodel=" not in e["cmdline"]:
        e["cmdline"] += " cachemodel=" + e["model"]


def model_out(e, log):
    """The plugin's file next to the serial log (log.model.jsonl)."""
    return log + ".model.jsonl" if e.get("model") else None


def model_options(e, out):
    if not e.get("model"):
        return []
    opt = "%s,profile=%s,profiles=%s,out=%s" % (MODEL_SO, e["model"],
                                                  MODEL_PROFILES, out)
    if e.get("model_sync"):
        opt += ",sync=" + e["model_sync"]
    return ["-plugin", opt]


def model_tool(args):
    p = subprocess.run([sys.executable, MODEL_TOOL] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode("utf-8", "replace").strip()


def check_model(e, iso, log):
    """Run the entry's model_check. Returns (ok, summary, diagnostics)."""
    out = model_out(e, log)
    kind = e["model_check"]
    if kind == "calibration":
        rc, text = model_tool(["check-calibration", out])
        lines = text.split("\n")
        return rc == 0, ("model calibration " +
                         ("matches the profile" if rc == 0 else "WRONG")), \
            [] if rc == 0 else lines
    if kind == "falseshare":
        rc, text = model_tool(["check-falseshare", log, out])
        return rc == 0, text.split("\n")[0], \
            [] if rc == 0 else text.split("\n")
    # repeat: a second boot must give identical model lines.
    log2 = log + ".again"
    cmd = qemu_command(e, iso, log2)
    rc = subprocess.call(["timeout", "-k", str(KILL_GRACE_S),
                          "%g" % e["timeout_s"]] + cmd,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    rc, text = model_tool(["compare", out, model_out(e, log2)])
    return rc == 0, ("second boot: " + text.split("\n")[0]), \
        [] if rc == 0 else text.split("\n")


def run_tools_tests(tap):
    """The host-side results tools' unit tests, as one TAP line."""
    run_python_tests(tap, "tools: results/plot/report tests",
                     ["-m", "unittest", "-q", TOOLS_TESTS])


TOOLS_TESTS = os.path.join("tests", "tools", "test_tools.py")


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

    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
    boots = entries if do_boot else []

    if args.list:
        for p in hosts:
            print("host  %s" % os.path.basename(p))
        if do_host:
            print("runner self-test")
            print("tools tests")
        for e in boots:
            print("boot  %-16s %-4s %-3s %s smp=%s mem=%s timeout=%gs "
                  "expect=%s groups=%s cmdline=%r" %
                  (e["name"], e["firmware"], e["media"], e["machine"],
                   e["smp"], e["mem"], e["timeout_s"], e["expect"],
                   ",".join(e["groups_list"]), e["cmdline"]))
        return 0

    tap = Tap(len(hosts) + (2 if do_host else 0) + len(boots))
    start = time.monotonic()
    if hosts:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            run_in_order(pool, [(run_host_test, (p,)) for p in hosts], tap)
    if do_host:
        run_selftest(tap)
        run_tools_tests(tap)
    if boots:
        run_boots(boots, args.jobs, tap)
    print("# %d passed, %d failed (%.0f s)" %
          (tap.n - tap.failed, tap.failed, time.monotonic() - start))
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
