#!/usr/bin/env python3
"""Self-tests of the test runner (tools/runner/testrun.py and the modules it
drives): the verdict function (tools/runner/verdicts.py) on fake serial logs
(tests/runner/*.log) and fake QEMU exit codes, so that a hang, a triple
fault, a panic and a nested `not ok` are shown to be caught without QEMU.
Also the exit-code decoding (tools/image/qemu.py), the KTAP parser
(tools/runner/ktap.py), the manifest parser (tools/runner/manifest.py),
the TAP writer and the launcher settings of a manifest entry.

Run from the root: python3 -m unittest tests/runner/test_testrun.py
(testrun.py runs it as the "runner: self-test" TAP line).
"""

import contextlib
import io
import os
import shutil
import tempfile
import unittest

from tools.runner import ktap
from tools.runner import manifest
from tools.image import qemu
from tools.runner import testrun
from tools.runner.verdicts import verdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def status_rc(status):
    """The exit code QEMU gives when the kernel writes status."""
    return (status << 1) | 1


RC_TRIPLE = 0          # -no-reboot turns a triple fault into exit 0
RC_QEMU_ERROR = 1      # QEMU's own error exit: odd, reads as status 0


def fixture(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return f.read()


def entry(expect="pass", cmdline="ktest=all run=none", timeout=60,
          lines="", status=""):
    e = dict(manifest.ENTRY_DEFAULTS, name="fake", expect=expect,
             cmdline=cmdline, timeout=str(timeout), expect_lines=lines,
             expect_status=status)
    manifest.check_entry(e, "test")
    return e


class DecodeExit(unittest.TestCase):
    def test_status_codes(self):
        ex = qemu.decode_exit(status_rc(0), False)
        self.assertEqual((ex.kind, ex.status), ("status", 0))
        ex = qemu.decode_exit(status_rc(3), False)
        self.assertEqual((ex.kind, ex.status), ("status", 3))

    def test_zero_is_no_status(self):
        ex = qemu.decode_exit(RC_TRIPLE, False)
        self.assertEqual(ex.kind, "nostatus")
        self.assertIsNone(ex.status)

    def test_timeout_codes(self):
        self.assertEqual(qemu.decode_exit(qemu.TIMEOUT_TERM_RC, True).kind,
                         "timeout")
        self.assertEqual(qemu.decode_exit(qemu.TIMEOUT_KILL_RC, True).kind,
                         "timeout")
        # 137 without the clock running out is a genuine status 68.
        ex = qemu.decode_exit(qemu.TIMEOUT_KILL_RC, False)
        self.assertEqual((ex.kind, ex.status), ("status", 68))

    def test_errors(self):
        self.assertEqual(qemu.decode_exit(2, False).kind, "error")
        self.assertEqual(qemu.decode_exit(-9, False).kind, "error")
        self.assertEqual(qemu.decode_exit(qemu.TIMEOUT_TERM_RC, False).kind,
                         "error")


class PassVerdicts(unittest.TestCase):
    def test_good_log_passes(self):
        v = verdict(entry(), status_rc(0), fixture("good.log"), False)
        self.assertTrue(v.ok, v.reason)

    def test_boot_log_before_ktap_is_cut(self):
        # good.log has a "not ok 9" line before its KTAP header.
        root = ktap.parse_ktap(ktap.ktap_section(fixture("good.log")))
        self.assertEqual(root.plan, 2)
        self.assertEqual([r.name for r in root.results], ["string", "mm"])
        self.assertEqual(root.results[0].sub.name, "string")
        self.assertEqual(root.results[0].sub.results[2].directive,
                         "SKIP no x2APIC")

    def test_nested_not_ok_is_named(self):
        v = verdict(entry(), status_rc(1), fixture("notok_nested.log"),
                       False)
        self.assertFalse(v.ok)
        self.assertEqual(v.reason,
                         "not ok: 1 test(s) failed: mm.buddy_exhaust")
        self.assertTrue(any("mm/buddy.c:210" in d for d in v.diag), v.diag)

    def test_nested_not_ok_under_ok_suite_line(self):
        # The suite line lies (ok) but a test inside failed.
        log = fixture("notok_nested.log").replace("not ok 2 mm", "ok 2 mm")
        log = log.replace("STATUS=1", "STATUS=0")
        v = verdict(entry(), status_rc(0), log, False)
        self.assertFalse(v.ok)
        self.assertIn("mm.buddy_exhaust", v.reason)

    def test_missing_plan(self):
        v = verdict(entry(), status_rc(0), fixture("noplan.log"), False)
        self.assertFalse(v.ok)
        self.assertIn("no plan", v.reason)

    def test_plan_count_mismatch(self):
        log = fixture("good.log").replace("\n1..2\n", "\n1..3\n")
        v = verdict(entry(), status_rc(0), log, False)
        self.assertFalse(v.ok)
        self.assertIn("plans 3 but has 2", v.reason)

    def test_missing_exit_line(self):
        log = fixture("good.log").replace("EXIT: STATUS=0\n", "")
        v = verdict(entry(), status_rc(0), log, False)
        self.assertFalse(v.ok)
        self.assertIn("no EXIT: STATUS line", v.reason)

    def test_qemu_error_is_not_status_zero(self):
        # QEMU failing to start exits 1, which decodes as status 0.
        v = verdict(entry(), RC_QEMU_ERROR, "", False)
        self.assertFalse(v.ok)

    def test_channels_disagree(self):
        v = verdict(entry(), status_rc(2), fixture("good.log"), False)
        self.assertFalse(v.ok)
        self.assertIn("status mismatch", v.reason)

    def test_nonzero_status(self):
        log = fixture("good.log").replace("STATUS=0", "STATUS=4")
        v = verdict(entry(), status_rc(4), log, False)
        self.assertFalse(v.ok)
        self.assertIn("status 4", v.reason)

    def test_cut_short_figures_fail_a_pass(self):
        # A figure reported cut short fails the boot; a skipped one not.
        line = ('@@MISSING {"experiment":"tlb_purge","variant":"batched",'
                '"metric":"*","status":"%s","reason":"time cap","schema":1}')
        good = fixture("good.log")
        cut = good.replace("EXIT: STATUS=0", line % "cut_short" +
                           "\nEXIT: STATUS=0")
        v = verdict(entry(), status_rc(0), cut, False)
        self.assertFalse(v.ok)
        self.assertIn("cut short: tlb_purge batched: time cap", v.reason)
        skipped = good.replace("EXIT: STATUS=0", line % "skipped" +
                               "\nEXIT: STATUS=0")
        v = verdict(entry(), status_rc(0), skipped, False)
        self.assertTrue(v.ok, v.reason)

    def test_hang_is_caught(self):
        v = verdict(entry(timeout=60), qemu.TIMEOUT_TERM_RC,
                       fixture("noexit.log"), True)
        self.assertFalse(v.ok)
        self.assertEqual(v.reason, "hang: no EXIT line after 60 s")

    def test_hang_killed_is_caught(self):
        v = verdict(entry(), qemu.TIMEOUT_KILL_RC, fixture("noexit.log"),
                       True)
        self.assertFalse(v.ok)
        self.assertTrue(v.reason.startswith("hang:"), v.reason)

    def test_triple_fault_is_caught(self):
        v = verdict(entry(), RC_TRIPLE, fixture("noexit.log"), False)
        self.assertFalse(v.ok)
        self.assertEqual(v.reason,
                         "triple fault: QEMU exited 0 without a status")

    def test_triple_fault_after_good_ktap(self):
        # Every test passed, then the kernel died before reporting.
        log = fixture("good.log").replace("EXIT: STATUS=0\n", "")
        v = verdict(entry(), RC_TRIPLE, log, False)
        self.assertFalse(v.ok)
        self.assertIn("triple fault", v.reason)

    def test_panic_fails_a_pass_boot(self):
        v = verdict(entry(), status_rc(3), fixture("panic_pf.log"), False)
        self.assertFalse(v.ok)
        self.assertTrue(v.reason.startswith("panic: page fault"), v.reason)

    def test_ktap_required_by_cmdline(self):
        log = "kernel 0.1\nEXIT: STATUS=0\n"
        v = verdict(entry(), status_rc(0), log, False)
        self.assertFalse(v.ok)
        self.assertIn("no KTAP", v.reason)
        v = verdict(entry(cmdline="run=none"), status_rc(0), log, False)
        self.assertTrue(v.ok, v.reason)

    def test_named_suites_must_run(self):
        good = fixture("good.log")
        v = verdict(entry(cmdline="ktest=mm,string"), status_rc(0), good,
                       False)
        self.assertTrue(v.ok, v.reason)
        v = verdict(entry(cmdline="ktest=mm,strnig"), status_rc(0), good,
                       False)
        self.assertFalse(v.ok)
        self.assertIn("suite strnig", v.reason)
        empty = "KTAP version 1\n1..0\n# ktest: 0 suite(s)\n" \
            "EXIT: STATUS=0\n"
        v = verdict(entry(cmdline="ktest=all"), status_rc(0), empty, False)
        self.assertFalse(v.ok)
        self.assertIn("no suite ran", v.reason)

    def test_ansi_and_crlf_are_ignored(self):
        log = fixture("good.log").replace("\n", "\r\n")
        log = log.replace("KTAP version 1\r\n1..2", "\x1b[0mKTAP version 1"
                          "\r\n1..2", 1)
        v = verdict(entry(), status_rc(0), log, False)
        self.assertTrue(v.ok, v.reason)


PF_LINES = r"PANIC:.*page fault ;; CR2: 0x ;; RIP: \w+\+0x[0-9a-f]+ ;; " \
    r"Backtrace:"


class OtherExpectations(unittest.TestCase):
    def test_expected_panic(self):
        v = verdict(entry("panic", lines=PF_LINES), status_rc(3),
                       fixture("panic_pf.log"), False)
        self.assertTrue(v.ok, v.reason)

    def test_panic_missing_line(self):
        log = fixture("panic_pf.log").replace("Backtrace:", "(no trace)")
        v = verdict(entry("panic", lines=PF_LINES), status_rc(3), log,
                       False)
        self.assertFalse(v.ok)
        self.assertIn("Backtrace:", v.reason)

    def test_panic_with_status_zero(self):
        log = fixture("panic_pf.log").replace("STATUS=3", "STATUS=0")
        v = verdict(entry("panic"), status_rc(0), log, False)
        self.assertFalse(v.ok)

    def test_panic_expect_status(self):
        v = verdict(entry("panic", status="5"), status_rc(3),
                       fixture("panic_pf.log"), False)
        self.assertFalse(v.ok)

    def test_no_panic_when_expected(self):
        v = verdict(entry("panic"), status_rc(0), fixture("good.log"),
                       False)
        self.assertFalse(v.ok)
        self.assertIn("no PANIC", v.reason)

    def test_panic_then_hang(self):
        log = fixture("panic_pf.log").replace("EXIT: STATUS=3\n", "")
        v = verdict(entry("panic"), qemu.TIMEOUT_TERM_RC, log, True)
        self.assertFalse(v.ok)

    def test_expected_hang(self):
        v = verdict(entry("hang"), qemu.TIMEOUT_TERM_RC,
                       fixture("noexit.log"), True)
        self.assertTrue(v.ok, v.reason)
        v = verdict(entry("hang"), qemu.TIMEOUT_KILL_RC,
                       fixture("noexit.log"), True)
        self.assertTrue(v.ok, v.reason)

    def test_hang_expected_but_exited(self):
        v = verdict(entry("hang"), status_rc(0), fixture("good.log"),
                       False)
        self.assertFalse(v.ok)
        v = verdict(entry("hang"), RC_TRIPLE, fixture("noexit.log"),
                       False)
        self.assertFalse(v.ok)

    def test_expected_triple(self):
        v = verdict(entry("triple"), RC_TRIPLE, fixture("noexit.log"),
                       False)
        self.assertTrue(v.ok, v.reason)

    def test_triple_expected_but_not(self):
        for rc, log, timed_out in (
                (status_rc(0), fixture("good.log"), False),
                (qemu.TIMEOUT_TERM_RC, fixture("noexit.log"), True),
                (2, fixture("noexit.log"), False)):
            v = verdict(entry("triple"), rc, log, timed_out)
            self.assertFalse(v.ok, (rc, v))


class TapOutput(unittest.TestCase):
    def test_lines_and_counts(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            tap = testrun.Tap(2)
            tap.result(True, "host: test_x")
            tap.result(False, "boot: y: panic: #PF", ["first", ""])
        self.assertEqual(out.getvalue().split("\n"), [
            "TAP version 13", "1..2", "ok 1 - host: test_x",
            "not ok 2 - boot: y: panic: \\#PF", "# first", "#", ""])
        self.assertEqual((tap.n, tap.failed), (2, 1))


class Manifest(unittest.TestCase):
    def test_project_manifest(self):
        with open(os.path.join(ROOT, "tests", "boot.cfg")) as f:
            entries = manifest.parse_manifest(f.read())
        byname = {e["name"]: e for e in entries}
        for name in ("bios-pc", "uefi-q35", "usb-bios", "usb-uefi",
                     "smp4-bios", "panic-pf", "panic-ud", "runner-hang",
                     "runner-triple"):
            self.assertIn(name, byname)
        self.assertEqual(byname["runner-hang"]["expect"], "hang")
        self.assertEqual(byname["runner-triple"]["expect"], "triple")
        self.assertEqual(byname["usb-uefi"]["media"], "usb")
        self.assertEqual(byname["usb-uefi"]["firmware"], "uefi")
        self.assertGreaterEqual(len(byname["panic-pf"]["expect_res"]), 4)
        sel = manifest.select_entries(entries, ["panic"], [])
        self.assertEqual({e["name"] for e in sel},
                         {"panic-pf", "panic-ud", "panic-stack",
                          "trace-panic"})
        self.assertTrue(all(e["expect"] == "panic" for e in sel))

    def test_bad_manifests(self):
        for text in ("[a]\nfirmware = coreboot\n",
                     "[a]\nsmp = 0\n",
                     "[a]\nbogus = 1\n",
                     "[a]\n[a]\n",
                     "key = 1\n",
                     "[a]\nexpect = maybe\n",
                     "[a]\nexpect_lines = (unclosed\n",
                     "[a]\ntimeout = soon\n"):
            with self.assertRaises(manifest.ManifestError, msg=text):
                manifest.parse_manifest(text, "bad.cfg")

    def test_expect_lines_are_anchored(self):
        # Unanchored, "ok \d+ x" also matches "not ok 3 x" and the
        # middle of any line: every pattern names where its line starts.
        with open(os.path.join(ROOT, "tests", "boot.cfg")) as f:
            entries = manifest.parse_manifest(f.read())
        for e in entries:
            for r in e["expect_res"]:
                self.assertTrue(r.pattern.startswith("^"),
                                "[%s]: expect_lines pattern /%s/ is not "
                                "anchored (start it with ^)" %
                                (e["name"], r.pattern))

    def test_skipped_test_never_satisfies_a_pass_pattern(self):
        skipped = fixture("good.log").replace(
            "ok 2 strlen_empty", "ok 2 strlen_empty # SKIP fewer than 4 "
            "CPUs")
        for pat in (r"ok \d+ strlen_empty", r"^\s*ok \d+ strlen_empty",
                    r"strlen_empty"):
            self.assertTrue(verdict(entry(lines=pat), status_rc(0),
                                    fixture("good.log"), False).ok, pat)
            v = verdict(entry(lines=pat), status_rc(0), skipped, False)
            self.assertFalse(v.ok, pat)
            self.assertEqual(v.reason,
                             "expected line /%s/ not in log" % pat)
        # A pattern that asks for the skip gets it; TAP's directive is
        # case-insensitive.
        for pat in (r"^\s*ok \d+ strlen_empty # SKIP fewer",
                    r"(?i)strlen_empty # skip"):
            self.assertTrue(verdict(entry(lines=pat), status_rc(0),
                                    skipped, False).ok, pat)
        self.assertTrue(manifest.ktap_skip_line("    ok 3 x # skip why"))
        self.assertFalse(manifest.ktap_skip_line("ok 3 x"))
        self.assertFalse(manifest.ktap_skip_line("quirk: SKIP # SKIP"))

    def test_manifest_pass_patterns_refuse_skips(self):
        # The project's own patterns, against the skip lines they were
        # written to tell apart from a pass (smp4-workloads on 2 CPUs).
        with open(os.path.join(ROOT, "tests", "boot.cfg")) as f:
            byname = {e["name"]: e for e in manifest.parse_manifest(
                f.read())}
        pats = byname["smp4-workloads"]["expect_res"]
        self.assertEqual(len(pats), 2)
        for name, r in zip(("tbench_quick_checksum_every_pair",
                            "kbuild_quick_checksum_every_cpu"), pats):
            self.assertTrue(r.search("    ok 4 %s\n" % name), r.pattern)
            for bad in ("    ok 4 %s # SKIP fewer than 4 CPUs: no second "
                        "pair" % name, "    not ok 4 %s" % name,
                        "    ok 4 %s_and_more" % name):
                self.assertIsNone(r.search(bad + "\n"), bad)

    def test_unknown_name(self):
        entries = manifest.parse_manifest("[a]\n[b]\n", "x.cfg")
        with self.assertRaises(manifest.ManifestError):
            manifest.select_entries(entries, [], ["c"])
        self.assertEqual(len(manifest.select_entries(entries, [], ["b"])), 1)


class BootLaunch(unittest.TestCase):
    """A manifest entry becomes launcher settings, then a QEMU command."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.saved = (testrun.IMAGES, qemu.OVMF_VARS, qemu.OVMF_CODE)
        testrun.IMAGES = self.tmp
        qemu.OVMF_VARS = os.path.join(self.tmp, "vars.fd")
        qemu.OVMF_CODE = os.path.join(self.tmp, "code.fd")
        for path in (qemu.OVMF_VARS, qemu.OVMF_CODE):
            with open(path, "wb") as f:
                f.write(b"\0" * 16)

    def tearDown(self):
        testrun.IMAGES, qemu.OVMF_VARS, qemu.OVMF_CODE = self.saved
        shutil.rmtree(self.tmp)

    def test_usb_uefi(self):
        e = dict(entry(), firmware="uefi", media="usb", machine="q35",
                 name="u")
        launch = testrun.boot_launch(e, "img.iso", "u.log")
        qemu.prepare(launch)
        cmd = qemu.command(launch)
        joined = " ".join(cmd)
        self.assertNotIn("-cdrom", cmd)
        self.assertIn("usb-storage,drive=stick,bootindex=1", joined)
        self.assertIn("file=img.iso", joined)
        self.assertIn("if=pflash,format=raw,readonly=on", joined)
        self.assertIn("isa-debug-exit,iobase=0xf4,iosize=0x04", joined)
        self.assertIn("-no-reboot", cmd)
        self.assertEqual(cmd[:4], ["timeout", "-k", str(qemu.KILL_GRACE_S),
                                   "60"])
        self.assertEqual(cmd[cmd.index("-serial") + 1], "file:u.log")
        self.assertTrue(os.path.exists(os.path.join(self.tmp,
                                                    "OVMF_VARS.u.fd")))

    def test_bios_cd_extra(self):
        e = dict(entry(), extra="-d int -D {name}.qlog", name="b")
        cmd = qemu.command(testrun.boot_launch(e, "img.iso", "b.log"))
        self.assertEqual(cmd[cmd.index("-cdrom") + 1], "img.iso")
        self.assertEqual(cmd[-4:], ["-d", "int", "-D", "b.qlog"])
        self.assertNotIn("pflash", " ".join(cmd))

    def test_bad_extra(self):
        e = dict(entry(), extra="-D {nosuch}", name="b")
        with self.assertRaises(KeyError):
            testrun.boot_launch(e, "img.iso", "b.log")


if __name__ == "__main__":
    unittest.main()
