"""The verdict on one boot: the serial log and QEMU's exit judged against
what the manifest entry expects (pass, panic, hang or triple fault).

The kernel reports its status on two channels that must agree: the
isa-debug-exit code (decoded by tools/image/qemu.py) and a final serial line
`EXIT: STATUS=N`. A boot that never reports a status is never a pass
unless the entry expects that outcome. A passing boot must also have
measured what it started: a figure its experiment reports cut short
(`@@MISSING` with status "cut_short", docs/output.md) fails it, while a
skipped one (the machine lacks what it needs) does not. Python 3 standard
library only.
"""

import json
import re

from tools.runner import ktap
from tools.image.qemu import decode_exit, describe_exit

# Serial output markers (the kernel protocol).
EXIT_RE = re.compile(r"^EXIT: STATUS=(-?\d+)\s*$", re.M)
PANIC_RE = re.compile(r"^[ \t]*PANIC:\s*(.*)$", re.M)
KTEST_CMDLINE_RE = re.compile(r"(?:^|\s)ktest=(\S+)")
MISSING_RE = re.compile(r"@@MISSING (\{.*\})\s*$", re.M)


class Verdict:
    def __init__(self, ok, reason, diag=()):
        self.ok, self.reason, self.diag = ok, reason, list(diag)

    def __repr__(self):
        return "Verdict(%r, %r)" % (self.ok, self.reason)


def exit_statuses(text):
    return [int(s) for s in EXIT_RE.findall(text)]


def cut_short(text):
    """'EXPERIMENT VARIANT: reason' of every figure the log reports cut
    short; a line that does not parse counts too (it cannot be cleared)."""
    out = []
    for m in MISSING_RE.finditer(text):
        try:
            obj = json.loads(m.group(1))
        except ValueError:
            out.append("unreadable @@MISSING line")
            continue
        if not isinstance(obj, dict) or obj.get("status") != "skipped":
            obj = obj if isinstance(obj, dict) else {}
            out.append("%s %s: %s" % (obj.get("experiment", "?"),
                                      obj.get("variant", "?"),
                                      obj.get("reason", "?")))
    return out


def verdict(entry, rc, log, timed_out):
    """Decide one boot. entry: a manifest entry (only cmdline, timeout_s,
    expect, expect_res and expect_status are used); rc: the exit code of
    timeout+QEMU; log: the serial log text; timed_out: the wall clock
    reached the timeout. Returns a Verdict whose reason is one line.
    """
    text = ktap.clean_log(log)
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
        kprobs, diag = ktap.check_ktap(text, m.group(1) if m else None)
        probs.extend(kprobs)
        if ex.kind not in ("timeout", "nostatus") or line_status is not None:
            probs.extend(channels_agree())
        expected = want if want is not None else 0
        if ex.kind == "status" and line_status == ex.status and \
                ex.status != expected:
            probs.append("kernel exited with status %d (expected %d)" %
                         (ex.status, expected))
        probs.extend(missing_lines())
        probs.extend("figures cut short: %s" % c for c in cut_short(text))
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
