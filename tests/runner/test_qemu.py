#!/usr/bin/env python3
"""Unit tests of the QEMU launcher, tools/image/qemu.py: the command line built
from each setting, the choice of accelerator (KVM or TCG, with /dev/kvm
and /proc/cpuinfo stood in for), the fresh copy of the UEFI variable
store, the decoding of QEMU's exit code into what `make run` reports, and
the command-line entry end to end with a fake qemu-system-x86_64 on PATH.

Run from the root: python3 -m unittest tests/runner/test_qemu.py
(tools/runner/testrun.py runs it as the "runner: qemu launcher tests"
TAP line).
"""

import contextlib
import io
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

from tools.runner import manifest
from tools.image import qemu
from tools.runner import testrun

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# The launcher as make runs it: a module, from the root.
LAUNCHER = ["-m", "tools.image.qemu"]


def status_rc(status):
    """The exit code QEMU gives when the kernel writes status."""
    return (status << 1) | 1


def option_pairs(cmd):
    """cmd's options as a sorted list of (option, value or None)."""
    out, i = [], 1
    while i < len(cmd):
        if i + 1 < len(cmd) and not cmd[i + 1].startswith("-"):
            out.append((cmd[i], cmd[i + 1]))
            i += 2
        else:
            out.append((cmd[i], None))
            i += 1
    return sorted(out)


def opt(cmd, name):
    """The value following option name in cmd (first occurrence)."""
    return cmd[cmd.index(name) + 1]


class CommandLine(unittest.TestCase):
    def test_defaults_bios_cd(self):
        cmd = qemu.command(qemu.Launch("k.iso"))
        self.assertEqual(cmd[0], qemu.QEMU)
        self.assertEqual(opt(cmd, "-machine"), "pc")
        self.assertEqual(opt(cmd, "-smp"), "1")
        self.assertEqual(opt(cmd, "-m"), "512M")
        self.assertEqual(opt(cmd, "-cpu"), "max")
        self.assertEqual(opt(cmd, "-cdrom"), "k.iso")
        self.assertEqual(opt(cmd, "-serial"), "mon:stdio")
        self.assertEqual(opt(cmd, "-display"), "none")
        self.assertEqual(opt(cmd, "-device"),
                         "isa-debug-exit,iobase=0xf4,iosize=0x04")
        self.assertIn("-no-reboot", cmd)
        for absent in ("-monitor", "-icount", "-S", "-gdb", "-plugin",
                       "pflash", "timeout"):
            self.assertNotIn(absent, " ".join(cmd))

    def test_same_arguments_as_the_old_make_run(self):
        # make run before the launcher existed (SMP=2, the defaults).
        old = ("qemu-system-x86_64 -machine pc -m 512M -smp 2 -cpu max "
               "-display none -no-reboot -device "
               "isa-debug-exit,iobase=0xf4,iosize=0x04 -cdrom "
               "build/kernel.iso -serial mon:stdio").split()
        new = qemu.command(qemu.Launch("build/kernel.iso", smp=2))
        self.assertEqual(new[0], old[0])
        self.assertEqual(option_pairs(new), option_pairs(old))

    def test_settings(self):
        s = qemu.Launch("k.iso", machine="q35", smp=4, mem="1G",
                        cpu="qemu64", icount=0, serial="file:b/x.log",
                        gdb=1234, paused=True, extra=["-d", "int"])
        cmd = qemu.command(s)
        self.assertEqual(opt(cmd, "-machine"), "q35")
        self.assertEqual(opt(cmd, "-smp"), "4")
        self.assertEqual(opt(cmd, "-m"), "1G")
        self.assertEqual(opt(cmd, "-cpu"), "qemu64")
        self.assertEqual(opt(cmd, "-icount"), "shift=0")
        self.assertEqual(opt(cmd, "-serial"), "file:b/x.log")
        self.assertEqual(opt(cmd, "-monitor"), "none")
        self.assertEqual(opt(cmd, "-gdb"), "tcp::1234")
        self.assertIn("-S", cmd)
        self.assertEqual(cmd[-2:], ["-d", "int"])

    def test_monitor(self):
        sock = "unix:b/m.sock,server=on,wait=off"
        cmd = qemu.command(qemu.Launch("k.iso", serial="file:x.log",
                                       monitor=sock))
        self.assertEqual(cmd.count("-monitor"), 1)
        self.assertEqual(opt(cmd, "-monitor"), sock)

    def test_uefi_usb(self):
        s = qemu.Launch("k.iso", firmware="uefi", media="usb",
                        vars="b/vars.fd")
        cmd = qemu.command(s)
        drives = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-drive"]
        self.assertEqual(drives[0], "if=pflash,format=raw,readonly=on,"
                         "file=" + qemu.OVMF_CODE)
        self.assertEqual(drives[1], "if=pflash,format=raw,file=b/vars.fd")
        self.assertIn("if=none,id=stick,format=raw,readonly=on,file=k.iso",
                      drives)
        self.assertIn("usb-storage,drive=stick,bootindex=1", cmd)
        self.assertIn("qemu-xhci", cmd)
        self.assertNotIn("-cdrom", cmd)

    def test_plugins(self):
        s = qemu.Launch("k.iso", plugins=[
            qemu.Plugin.parse("b/libcache.so,l1=32K,ways=8"),
            qemu.Plugin("b/libinsn.so")], plugin_log="b/plugin.log")
        cmd = qemu.command(s)
        plugins = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-plugin"]
        self.assertEqual(plugins, ["file=b/libcache.so,l1=32K,ways=8",
                                   "file=b/libinsn.so"])
        self.assertEqual(opt(cmd, "-d"), "plugin")
        self.assertEqual(opt(cmd, "-D"), "b/plugin.log")
        with self.assertRaises(qemu.LaunchError):
            qemu.Plugin.parse("b/libcache.so,32K")

    def test_timeout_wrapper(self):
        cmd = qemu.command(qemu.Launch("k.iso", timeout=90))
        self.assertEqual(cmd[:5], ["timeout", "-k", str(qemu.KILL_GRACE_S),
                                   "90", qemu.QEMU])

    def test_bad_settings(self):
        for s in (qemu.Launch("k.iso", firmware="coreboot"),
                  qemu.Launch("k.iso", media="floppy"),
                  qemu.Launch("k.iso", firmware="uefi"),  # no vars copy
                  qemu.Launch("k.iso", timeout=0)):
            with self.assertRaises(qemu.LaunchError):
                qemu.command(s)


def kvm_usable():
    return True, "/dev/kvm usable"


def kvm_absent():
    return False, "/dev/kvm: No such file or directory"


def kvm_never():
    raise AssertionError("/dev/kvm probed although TCG was asked for")


class Accelerator(unittest.TestCase):
    """KVM or TCG: the command line of each and the launcher's choice."""

    def test_tcg_is_qemus_default_no_option(self):
        cmd = qemu.command(qemu.Launch("k.iso"))
        self.assertNotIn("-accel", cmd)
        self.assertEqual(opt(cmd, "-cpu"), "max")

    def test_kvm_command_line(self):
        cmd = qemu.command(qemu.Launch("k.iso", accel="kvm", smp=2))
        self.assertEqual(opt(cmd, "-accel"), "kvm")
        self.assertEqual(cmd.count("-accel"), 1)
        self.assertEqual(opt(cmd, "-cpu"), "host")
        self.assertEqual(opt(cmd, "-smp"), "2")
        # A model the user names is kept.
        cmd = qemu.command(qemu.Launch("k.iso", accel="kvm",
                                       cpu="Haswell"))
        self.assertEqual(opt(cmd, "-cpu"), "Haswell")

    def test_kvm_refuses_tcg_only_settings(self):
        for kw in ({"plugins": [qemu.Plugin("p.so")]}, {"icount": 0},
                   {"extra": ["-accel", "tcg,thread=single"]}):
            with self.assertRaises(qemu.LaunchError, msg=kw):
                qemu.command(qemu.Launch("k.iso", accel="kvm", **kw))
        with self.assertRaises(qemu.LaunchError):
            qemu.command(qemu.Launch("k.iso", accel="hvf"))

    def test_auto_takes_kvm_when_usable(self):
        s = qemu.Launch("k.iso")
        self.assertEqual(qemu.choose_accel("auto", s, kvm_usable)[0], "kvm")
        accel, why = qemu.choose_accel("auto", s, kvm_absent)
        self.assertEqual(accel, "tcg")
        self.assertIn("No such file", why)

    def test_auto_stays_tcg_for_tcg_only_settings(self):
        for kw in ({"plugins": [qemu.Plugin("p.so")]}, {"icount": 0},
                   {"extra": ["-accel", "tcg,thread=multi"]}):
            s = qemu.Launch("k.iso", **kw)
            self.assertEqual(qemu.choose_accel("auto", s, kvm_usable)[0],
                             "tcg", kw)

    def test_explicit_choice(self):
        s = qemu.Launch("k.iso")
        self.assertEqual(qemu.choose_accel("tcg", s, kvm_never)[0], "tcg")
        self.assertEqual(qemu.choose_accel("kvm", s, kvm_usable)[0], "kvm")
        with self.assertRaisesRegex(qemu.LaunchError,
                                    "ACCEL=kvm.*No such file"):
            qemu.choose_accel("kvm", s, kvm_absent)
        with self.assertRaisesRegex(qemu.LaunchError, "requires TCG"):
            qemu.choose_accel("kvm", qemu.Launch("k.iso", icount=0),
                              kvm_usable)

    def test_runner_boots_stay_on_tcg(self):
        # make test's results must not depend on the host: every boot of
        # tests/boot.cfg is a TCG command line even where KVM works.
        with open(os.path.join(ROOT, manifest.MANIFEST)) as f:
            entries = manifest.parse_manifest(f.read())
        self.assertTrue(entries)
        with mock.patch.object(qemu, "kvm_status", kvm_usable):
            for e in entries:
                launch = testrun.boot_launch(e, "img.iso", "b.log")
                self.assertEqual(launch.accel, "tcg", e["name"])
                cmd = qemu.command(launch)
                self.assertNotIn("kvm", cmd, e["name"])
                self.assertNotEqual(opt(cmd, "-cpu"), "host", e["name"])


class KvmProbe(unittest.TestCase):
    """kvm_status() on stand-ins for /dev/kvm and /proc/cpuinfo."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.dev = os.path.join(self.tmp, "kvm")
        with open(self.dev, "w"):
            pass
        self.cpuinfo = os.path.join(self.tmp, "cpuinfo")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def flags(self, flags):
        with open(self.cpuinfo, "w") as f:
            f.write("processor\t: 0\nflags\t\t: fpu %s pat\n\n" % flags)

    def test_missing_device(self):
        ok, why = qemu.kvm_status(os.path.join(self.tmp, "none"))
        self.assertFalse(ok)
        self.assertIn("No such file", why)

    def test_unreadable_device(self):
        if os.geteuid() == 0:
            self.skipTest("root opens a mode-0 file")
        os.chmod(self.dev, 0)
        ok, why = qemu.kvm_status(self.dev, self.cpuinfo)
        self.assertFalse(ok)
        self.assertIn("Permission denied", why)

    def test_not_a_kvm_device(self):
        # A regular file opens read-write but has no KVM ioctls.
        self.flags("vmx")
        ok, why = qemu.kvm_status(self.dev, self.cpuinfo)
        self.assertFalse(ok)
        self.assertIn("KVM_GET_API_VERSION", why)

    def probe(self, version, flags):
        self.flags(flags)
        with mock.patch.object(qemu.fcntl, "ioctl",
                               return_value=version) as ioctl:
            out = qemu.kvm_status(self.dev, self.cpuinfo)
        self.assertEqual(ioctl.call_args[0][1], qemu.KVM_GET_API_VERSION)
        return out

    def test_usable(self):
        self.assertEqual(self.probe(12, "vmx")[0], True)
        self.assertEqual(self.probe(12, "svm")[0], True)

    def test_wrong_api_version(self):
        ok, why = self.probe(11, "vmx")
        self.assertFalse(ok)
        self.assertIn("version 11", why)

    def test_no_hardware_virtualisation(self):
        ok, why = self.probe(12, "sse2 hypervisor")
        self.assertFalse(ok)
        self.assertIn("neither vmx nor svm", why)


class Firmware(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.saved = (qemu.OVMF_CODE, qemu.OVMF_VARS)
        qemu.OVMF_CODE = os.path.join(self.tmp, "code.fd")
        qemu.OVMF_VARS = os.path.join(self.tmp, "vars.fd")
        for path, fill in ((qemu.OVMF_CODE, b"C"), (qemu.OVMF_VARS, b"V")):
            with open(path, "wb") as f:
                f.write(fill * 64)

    def tearDown(self):
        qemu.OVMF_CODE, qemu.OVMF_VARS = self.saved
        shutil.rmtree(self.tmp)

    def test_fresh_vars_copy(self):
        copy = os.path.join(self.tmp, "sub", "OVMF_VARS.fd")
        s = qemu.Launch("k.iso", firmware="uefi", vars=copy)
        qemu.prepare(s)
        with open(copy, "r+b") as f:   # a run wrote variables
            f.write(b"dirty")
        qemu.prepare(s)
        with open(copy, "rb") as f:
            self.assertEqual(f.read(), b"V" * 64)

    def test_bios_copies_nothing(self):
        qemu.prepare(qemu.Launch("k.iso"))
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         ["code.fd", "vars.fd"])

    def test_missing_ovmf(self):
        os.unlink(qemu.OVMF_CODE)
        s = qemu.Launch("k.iso", firmware="uefi",
                        vars=os.path.join(self.tmp, "v.fd"))
        with self.assertRaises(qemu.LaunchError) as cm:
            qemu.prepare(s)
        self.assertIn("ovmf", str(cm.exception))


class OneHome(unittest.TestCase):
    def test_paths_come_from_paths_mk(self):
        paths = qemu.read_paths()
        self.assertEqual(set(paths), {"OVMF_CODE", "OVMF_VARS", "FONT_PSF"})
        self.assertEqual(qemu.OVMF_CODE, paths["OVMF_CODE"])
        with open(os.path.join(ROOT, "Makefile")) as f:
            mk = f.read()
        for value in paths.values():
            self.assertNotIn(value, mk)
        self.assertIn("include tools/image/paths.mk", mk)
        self.assertNotIn("qemu-system-x86_64 ", mk)


class Outcome(unittest.TestCase):
    def test_status(self):
        self.assertEqual(qemu.user_outcome(qemu.decode_exit(status_rc(0),
                                                            False)),
                         (0, None))
        self.assertEqual(qemu.user_outcome(qemu.decode_exit(status_rc(3),
                                                            False)),
                         (3, "kernel exited with status 3"))

    def test_no_status(self):
        for rc in (0, 2, -9):
            code, msg = qemu.user_outcome(qemu.decode_exit(rc, False))
            self.assertEqual(code, qemu.NO_STATUS_RC)
            self.assertIn("without a kernel status", msg)

    def test_timeout(self):
        code, msg = qemu.user_outcome(
            qemu.decode_exit(qemu.TIMEOUT_TERM_RC, True), 30)
        self.assertEqual(code, qemu.TIMEOUT_TERM_RC)
        self.assertIn("30 s", msg)


FAKE_QEMU = """#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_ARGS"
[ -n "$FAKE_OUT" ] && printf '%s' "$FAKE_OUT"
[ -n "$FAKE_SLEEP" ] && sleep "$FAKE_SLEEP"
exit "$FAKE_RC"
"""


class CommandLineEntry(unittest.TestCase):
    """tools/image/qemu.py as make runs it, with a fake QEMU."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        fake = os.path.join(self.tmp, qemu.QEMU)
        with open(fake, "w") as f:
            f.write(FAKE_QEMU)
        os.chmod(fake, 0o755)
        self.args = os.path.join(self.tmp, "args")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def launch(self, rc, *argv, sleep="", out="", stdout=None):
        """Run the launcher; (exit code, stderr after its first line,
        which must name the accelerator, without the load average
        lines, which must be there). The fake QEMU prints out; the
        launcher's stdout goes to the list stdout when one is given."""
        env = dict(os.environ, PATH=self.tmp + os.pathsep +
                   os.environ.get("PATH", ""), FAKE_ARGS=self.args,
                   FAKE_RC=str(rc), FAKE_SLEEP=sleep, FAKE_OUT=out)
        p = subprocess.run([sys.executable] + LAUNCHER + list(argv),
                           cwd=ROOT,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=60)
        if stdout is not None:
            stdout.append(p.stdout)
        lines = p.stderr.decode().strip().split("\n")
        if p.returncode != 2:
            self.assertRegex(lines[0], r"^qemu: accelerator (TCG|KVM)")
            self.assertRegex(lines[1], r"^qemu: host load average [0-9.]+ "
                             r"[0-9.]+ [0-9.]+ \(1, 5, 15 min\) before the "
                             r"run$")
            lines = lines[2:]
            after = [x for x in lines if x.startswith(
                "qemu: host load average") and x.endswith("after the run")]
            self.assertEqual(len(after), 1, lines)
            lines.remove(after[0])
        return p.returncode, "\n".join(lines).strip()

    def passed_args(self):
        with open(self.args) as f:
            return f.read().split("\n")[:-1]

    def test_status_zero_is_silent(self):
        rc, err = self.launch(status_rc(0), "--smp", "2", "k.iso")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(opt(self.passed_args(), "-smp"), "2")

    def test_status_fails_make(self):
        rc, err = self.launch(status_rc(3), "k.iso")
        self.assertEqual((rc, err), (3, "kernel exited with status 3"))

    def test_no_status(self):
        rc, err = self.launch(0, "k.iso")
        self.assertEqual(rc, qemu.NO_STATUS_RC)
        self.assertIn("QEMU exited with code 0 without a kernel status",
                      err)

    def test_raw_exit(self):
        rc, err = self.launch(0, "--raw-exit", "k.iso")
        self.assertEqual((rc, err), (0, ""))
        rc, err = self.launch(status_rc(2), "--raw-exit", "k.iso")
        self.assertEqual((rc, err), (status_rc(2), ""))

    def test_timeout(self):
        rc, err = self.launch(status_rc(0), "--timeout", "0.5", "k.iso",
                              sleep="20")
        self.assertEqual(rc, qemu.TIMEOUT_TERM_RC)
        self.assertIn("no kernel status within 0.5 s", err)

    def test_extra_and_plugin(self):
        rc, _ = self.launch(status_rc(0), "--plugin", "p.so,a=1", "k.iso",
                            "--", "-d", "int")
        self.assertEqual(rc, 0)
        args = self.passed_args()
        self.assertEqual(opt(args, "-plugin"), "file=p.so,a=1")
        self.assertEqual(args[-2:], ["-d", "int"])

    def test_console_hides_machine_lines_log_keeps_all(self):
        serial = ("boot\r\n@@ENV {}\r\ntable 1\r\n@@RESULT {\"a\":1}\r\n"
                  "@ not a machine line\r\nverdict\r\n$ ")
        log = os.path.join(self.tmp, "sub", "run.log")
        shown = []
        rc, err = self.launch(status_rc(0), "--log", log, "k.iso",
                              out=serial, stdout=shown)
        self.assertEqual(rc, 0)
        self.assertEqual(shown[0], b"boot\r\ntable 1\r\n@ not a machine "
                         b"line\r\nverdict\r\n$ ")
        with open(log, "rb") as f:
            self.assertEqual(f.read(), serial.encode())
        self.assertEqual(err, "qemu: the whole serial output is in %s "
                         "(RAW=1 also shows its @@ lines here)" % log)

    def test_console_raw_shows_all(self):
        serial = "a\r\n@@RESULT {}\r\nb\r\n"
        log = os.path.join(self.tmp, "run.log")
        shown = []
        rc, err = self.launch(status_rc(0), "--log", log, "--raw", "k.iso",
                              out=serial, stdout=shown)
        self.assertEqual(rc, 0)
        self.assertEqual(shown[0], serial.encode())
        with open(log, "rb") as f:
            self.assertEqual(f.read(), serial.encode())
        self.assertEqual(err, "qemu: the whole serial output is in %s" % log)

    def test_console_log_needs_stdio(self):
        rc, err = self.launch(status_rc(0), "--log", "x.log", "--serial",
                              "file:y.log", "k.iso")
        self.assertEqual(rc, 2)
        self.assertIn("--log needs --serial stdio", err)
        rc, err = self.launch(status_rc(0), "--raw", "k.iso")
        self.assertEqual(rc, 2)
        self.assertIn("--raw needs --log", err)

    def test_usage_error(self):
        rc, err = self.launch(status_rc(0), "--firmware", "uefi", "k.iso")
        self.assertEqual(rc, 2)
        self.assertIn("variable store", err)


def feed_all(filt, chunks):
    """What filt shows of chunks fed one after another, then released."""
    return b"".join(filt.feed(c) for c in chunks) + filt.release()


class Console(unittest.TestCase):
    """ConsoleFilter: whole @@ lines hidden, everything else at once."""

    def test_hides_whole_machine_lines(self):
        f = qemu.ConsoleFilter()
        self.assertEqual(feed_all(f, [b"x\r\n@@RESULT {}\r\ny\r\n"]),
                         b"x\r\ny\r\n")

    def test_every_split_gives_the_same_screen(self):
        text = (b"@@ENV {}\r\nhead\r\n@@RESULT {\"v\":1}\r\n\r\n"
                b"@x\r\nmid @@RESULT stays\r\n@@MODEL z\r\n> ")
        want = b"head\r\n\r\n@x\r\nmid @@RESULT stays\r\n> "
        for cut in range(len(text) + 1):
            f = qemu.ConsoleFilter()
            self.assertEqual(feed_all(f, [text[:cut], text[cut:]]), want,
                             cut)
        f = qemu.ConsoleFilter()
        self.assertEqual(feed_all(f, [text[i:i + 1]
                                      for i in range(len(text))]), want)

    def test_partial_line_shown_at_once(self):
        # A prompt and the characters a user types are not held back.
        f = qemu.ConsoleFilter()
        self.assertEqual(f.feed(b"boot\r\nkmm> "), b"boot\r\nkmm> ")
        self.assertFalse(f.holding())
        self.assertEqual(f.feed(b"h"), b"h")
        self.assertEqual(f.feed(b"@"), b"@")
        self.assertEqual(f.feed(b"@x"), b"@x")

    def test_lone_at_held_then_released(self):
        f = qemu.ConsoleFilter()
        self.assertEqual(f.feed(b"\r\n@"), b"\r\n")
        self.assertTrue(f.holding())
        self.assertEqual(f.release(), b"@")
        # Once shown, the line is shown to its end, even as "@@".
        self.assertEqual(f.feed(b"@tail\r\n@@h\r\n"), b"@tail\r\n")
        # A line that is only "@" is shown with its newline.
        self.assertEqual(f.feed(b"@"), b"")
        self.assertEqual(f.feed(b"\n"), b"@\n")

    def test_raw(self):
        f = qemu.ConsoleFilter(raw=True)
        self.assertEqual(feed_all(f, [b"@@RESULT {}\r\n"]),
                         b"@@RESULT {}\r\n")

    def test_pump_releases_held_bytes_after_the_hold(self):
        # A line that begins "@" and then waits (a prompt) is shown after
        # the hold; the log gets every byte.
        r, w = os.pipe()
        o_r, o_w = os.pipe()
        os.write(w, b"ok\r\n@")
        log = io.BytesIO()
        import threading
        t = threading.Thread(target=qemu.pump,
                             args=(r, log, qemu.ConsoleFilter(), o_w, 0.05))
        t.start()
        got, deadline = b"", time.monotonic() + 10
        while not got.endswith(b"@") and time.monotonic() < deadline:
            if select.select([o_r], [], [], 0.1)[0]:
                got += os.read(o_r, 100)
        self.assertEqual(got, b"ok\r\n@")
        os.write(w, b"@@RESULT {}\r\n@@x\r\n")
        os.close(w)
        t.join(10)
        os.close(o_w)
        rest = os.read(o_r, 100)
        self.assertEqual(rest, b"@@RESULT {}\r\n")
        self.assertEqual(log.getvalue(), b"ok\r\n@@@RESULT {}\r\n@@x\r\n")
        for fd in (r, o_r):
            os.close(fd)

    def test_load_line(self):
        self.assertEqual(qemu.load_line("before", lambda: (1.5, 0.25, 2)),
                         "qemu: host load average 1.50 0.25 2.00 (1, 5, 15 "
                         "min) before the run")

        def fail():
            raise OSError("no loadavg")
        self.assertIsNone(qemu.load_line("after", fail))


class AcceleratorEntry(unittest.TestCase):
    """The command-line entry's choice, with the probe stood in for."""

    def main(self, kvm, *argv):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(qemu, "kvm_status", kvm), \
                contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            rc = qemu.main(["--dry-run"] + list(argv) + ["k.iso"])
        return rc, out.getvalue().split(), err.getvalue()

    def test_auto_without_kvm_one_line(self):
        rc, cmd, err = self.main(kvm_absent)
        self.assertEqual(rc, 0)
        self.assertNotIn("-accel", cmd)
        self.assertEqual(opt(cmd, "-cpu"), "max")
        self.assertEqual(err.count("\n"), 1)
        self.assertIn("accelerator TCG", err)

    def test_auto_with_kvm(self):
        rc, cmd, err = self.main(kvm_usable)
        self.assertEqual(rc, 0)
        self.assertEqual(opt(cmd, "-accel"), "kvm")
        self.assertEqual(opt(cmd, "-cpu"), "host")
        self.assertIn("accelerator KVM, -cpu host", err)

    def test_tcg_forced_with_kvm(self):
        rc, cmd, err = self.main(kvm_never, "--accel", "tcg")
        self.assertEqual(rc, 0)
        self.assertNotIn("-accel", cmd)
        self.assertIn("accelerator TCG (ACCEL=tcg)", err)

    def test_kvm_asked_without_kvm_is_an_error(self):
        rc, cmd, err = self.main(kvm_absent, "--accel", "kvm")
        self.assertEqual(rc, qemu.USAGE_RC)
        self.assertEqual(cmd, [])
        self.assertIn("ACCEL=kvm: KVM is not usable here: /dev/kvm", err)


if __name__ == "__main__":
    unittest.main()
