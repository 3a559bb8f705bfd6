"""The boot manifest, tests/boot.cfg: its parser, the check of each entry's
values, and the selection of boots by group and name.

An INI-like file: one [section] per boot, `key = value` lines, `#`
comments. Every key a section may set has a default in ENTRY_DEFAULTS; the
keys are documented in the manifest's own header and in docs/testing.md.
Python 3 standard library only.
"""

import os
import re

from tools.runner import ktap
from tools.model import model_lines
from tools.model import model_profile
from tools.image import qemu

MANIFEST = os.path.join("tests", "boot.cfg")
# The cache-model profiles (the kernel gets a profile's geometry).
MODEL_PROFILES = os.path.join("cachemodel", "profiles.txt")

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
    # tools/results/results.py, and there must be at least results_min results.
    "check_results": "no",
    "results_min": "1",
    # yes: the log carries a CTF trace export (trace/ctf.h): rebuild it
    # with tools/results/trace_extract.py, check it with babeltrace2, and check
    # that a damaged and a cut copy of the log are rejected.
    "check_trace": "no",
    # yes: boot alone, after the others. Timing-sensitive boots (several
    # vCPUs spinning on each other) stall when another QEMU shares the
    # host's cores.
    "exclusive": "no",
    # The cache-model plugin (docs/cachemodel.md): model = a profile of
    # cachemodel/profiles.txt (the kernel gets cachemodel=PROFILE),
    # model_sync = the plugin's sync= quantum in cycles, model_order = 1
    # orders contended locked operations (the plugin's order=1), model_check =
    # calibration | repeat (boot twice, identical model lines) | falseshare
    # | copy (movnti spares the bystander of a copy done in pieces) |
    # pacing (paced multi-CPU repetitions agree, none broken unflagged) |
    # serial (boot twice, serially paced regions agree within 0.5 %).
    "model": "",
    "model_sync": "",
    "model_order": "",
    "model_check": "",
    # A session script (tests/sessions/*.txt, tools/runner/session.py): the
    # serial port and QMP become sockets the script types into and reads.
    "session": "",
    # With a session: a command run on the log afterwards ({log} is
    # replaced); a non-zero exit fails the boot with its output.
    "post_check": "",
}
MODEL_CHECKS = ("calibration", "repeat", "falseshare", "copy", "pacing",
                "serial")
FIRMWARES = qemu.FIRMWARES
MEDIAS = qemu.MEDIAS
EXPECTS = ("pass", "panic", "hang", "triple")
EXPECT_LINES_SEP = ";;"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ManifestError(Exception):
    pass


# A pattern asks for a skipped test when it names the directive.
SKIP_WORD_RE = re.compile(r"\bSKIP\b", re.I)


def ktap_skip_line(line):
    """True when line is a KTAP result line with a SKIP directive, as
    `    ok 3 needs_x2apic # SKIP no x2APIC` (TAP: case-insensitive)."""
    m = ktap.RESULT_RE.match(line.strip())
    return bool(m and m.group(4) and
                m.group(4).strip()[:4].upper() == "SKIP")


class LinePattern:
    """One expect_lines regex, matched against the log one line at a
    time: ^ and $ are a line's ends and no match spans lines. A KTAP
    result line that says SKIP never satisfies a pattern that does not
    itself name SKIP: a skipped test did not pass, even when its line
    reads "ok". The verdict calls search(text) and shows pattern."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.regex = re.compile(pattern)
        self.skip_ok = bool(SKIP_WORD_RE.search(pattern))

    def search(self, text):
        """The first match in a line of text that may satisfy this
        pattern, or None."""
        for line in text.split("\n"):
            if not self.skip_ok and ktap_skip_line(line):
                continue
            m = self.regex.search(line)
            if m:
                return m
        return None


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
    if e["session"] and not os.path.isfile(e["session"]):
        bad("session script %s not found" % e["session"])
    e["groups_list"] = e["groups"].split()
    e["expect_res"] = []
    for pat in e["expect_lines"].split(EXPECT_LINES_SEP):
        pat = pat.strip()
        if not pat:
            continue
        try:
            e["expect_res"].append(LinePattern(pat))
        except re.error as err:
            bad("expect_lines regex %r: %s" % (pat, err))
    check_model_keys(e, bad)


def check_model_keys(e, bad):
    """Validate the model keys; give the kernel its cachemodel= option."""
    if not e["model"]:
        if e["model_check"] or e["model_sync"] or e["model_order"]:
            bad("model_check, model_sync and model_order need model = "
                "PROFILE")
        return
    if not NAME_RE.match(e["model"]):
        bad("model must be a profile name")
    if e["model_check"] and e["model_check"] not in MODEL_CHECKS:
        bad("model_check must be one of %s" % "|".join(MODEL_CHECKS))
    if e["model_sync"] and not e["model_sync"].isdigit():
        bad("model_sync must be a number of cycles")
    if e["model_order"] not in ("", "0", "1"):
        bad("model_order must be 0 or 1")
    if "cachemodel=" not in e["cmdline"]:
        try:
            e["cmdline"] += " " + model_profile.kernel_options(MODEL_PROFILES,
                                                       e["model"])
        except (OSError, model_lines.ModelError) as err:
            bad("model: %s" % err)


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

