#!/usr/bin/env python3
"""The one QEMU launcher: builds the qemu-system-x86_64 command line from
named settings and decodes how QEMU ended.

Everything that boots the kernel goes through here: the Makefile's `run`,
`run-uefi`, `debug` and `bench` (through the command-line entry below) and
tools/runner/testrun.py (as a module). It is the only place that knows

  - the OVMF firmware files (read from tools/image/paths.mk, their one home)
    and that each UEFI boot gets a fresh writable copy of the variable
    store;
  - the isa-debug-exit device and its encoding: the kernel writes N to
    port 0xf4 and QEMU exits with (N << 1) | 1, so a status is always odd;
    0 means QEMU stopped without one (a triple fault under -no-reboot, a
    halt, Ctrl-A X); any other even code is a QEMU error;
  - timeout(1)'s exit codes, when a boot runs under a time limit;
  - how a USB stick, a gdb stub, icount and TCG plugins are spelled;
  - what a person sees of a run on this terminal: with a log file (--log)
    every byte of the serial port goes to the log and the terminal gets
    it through ConsoleFilter, which hides whole lines starting with "@@"
    (the machine-readable lines the tools read from the log) unless
    --raw; before and after the run it prints the host's load average;
  - which accelerator runs the guest: KVM with `-cpu host` when /dev/kvm
    is usable and nothing needs TCG, TCG otherwise (choose_accel). Only
    the command-line entry chooses; a Launch built in code (the test
    runner's) is TCG unless it asks, so `make test` does not depend on
    the host.

Command line (the Makefile's use; see --help):
  qemu.py [--firmware bios|uefi] [--machine M] [--media cd|usb] [--smp N]
          [--mem SIZE] [--cpu MODEL] [--icount SHIFT] [--serial stdio|file:PATH]
          [--gdb PORT] [--paused] [--vars PATH] [--plugin FILE[,K=V...]]...
          [--plugin-log PATH] [--timeout S] [--accel auto|tcg|kvm]
          [--log PATH [--raw]] [--raw-exit] [--dry-run]
          IMAGE [-- QEMU-ARGS...]
It prints one line naming the accelerator and one with the host's load
average before and after the run on stderr (with --log, a last one naming
the log), and exits with the
kernel's status; when it is not 0 it prints `kernel exited with status N`
on stderr. Without a status it says why and exits with 125 (124 when the
time limit ran out); with 2 for a setting it cannot run (ACCEL=kvm where
KVM is not usable).

Python 3 standard library only.
"""

import argparse
import errno
import fcntl
import os
import select
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PATHS_MK = os.path.join(ROOT, "tools", "image", "paths.mk")
QEMU = "qemu-system-x86_64"

FIRMWARES = ("bios", "uefi")
MEDIAS = ("cd", "usb")

# isa-debug-exit: where the kernel writes its status.
DEBUG_EXIT_IOBASE = 0xF4
DEBUG_EXIT_IOSIZE = 0x04

# Exit codes of coreutils timeout(1): 124 after SIGTERM did the job, 128+9
# when it had to follow up with SIGKILL (-k).
TIMEOUT_TERM_RC = 124
TIMEOUT_KILL_RC = 128 + 9
KILL_GRACE_S = 5

# What the command-line entry exits with when the kernel gave no status,
# and (as argparse does) for a setting it cannot run.
NO_STATUS_RC = 125
USAGE_RC = 2

# The USB stick: an xHCI controller with a mass-storage device, first in
# boot order. Read-only so that parallel boots may share one image (QEMU
# takes a write lock on writable images).
USB_ARGS = ["-device", "qemu-xhci",
            "-drive", "if=none,id=stick,format=raw,readonly=on,file={image}",
            "-device", "usb-storage,drive=stick,bootindex=1"]

# The serial destination that puts COM1 (and QEMU's monitor, Ctrl-A C) on
# this terminal.
SERIAL_STDIO = "stdio"


# Accelerators. "auto" is the command-line entry's default: KVM when
# kvm_status() says it is usable and no TCG-only feature is on, else TCG.
ACCEL_TCG = "tcg"
ACCEL_KVM = "kvm"
ACCELS = (ACCEL_TCG, ACCEL_KVM)
ACCEL_AUTO = "auto"
KVM_DEV = "/dev/kvm"
# <linux/kvm.h>: KVM_GET_API_VERSION is _IO(KVMIO, 0x00), KVMIO 0xAE; every
# KVM since Linux 2.6.22 answers 12 (KVM_API_VERSION).
KVM_GET_API_VERSION = 0xAE00
KVM_API_VERSION = 12
CPUINFO = "/proc/cpuinfo"
# CPU flags of hardware virtualisation (Intel VT-x, AMD-V). A /dev/kvm
# without either (a sandbox's stand-in) opens, but QEMU's -cpu host then
# aborts setting MSRs the CPU does not have.
HW_VIRT_FLAGS = ("vmx", "svm")
# The CPU model under KVM: the host's own, so the guest sees its real
# caches, PMU and memory types. The default model "max" becomes "host";
# any other model a user names is kept.
DEFAULT_CPU = "max"
KVM_CPU = "host"


def read_paths(path=PATHS_MK):
    """The NAME := value lines of tools/image/paths.mk as a dict. Raises
    OSError when the file cannot be read."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and ":=" in line:
                name, value = (s.strip() for s in line.split(":=", 1))
                out[name] = value
    return out


_PATHS = read_paths()
OVMF_CODE = _PATHS["OVMF_CODE"]
OVMF_VARS = _PATHS["OVMF_VARS"]


class LaunchError(Exception):
    """A setting QEMU cannot be started with (message says which)."""


class Plugin:
    """A TCG plugin: the shared object and its "name=value" arguments."""

    def __init__(self, file, args=()):
        self.file, self.args = file, list(args)

    @classmethod
    def parse(cls, spec):
        """From "FILE,name=value,...": raises LaunchError when an argument
        has no '='."""
        parts = spec.split(",")
        for a in parts[1:]:
            if "=" not in a:
                raise LaunchError("plugin argument %r: expected name=value"
                                  % a)
        return cls(parts[0], parts[1:])

    def option(self):
        """The value of QEMU's -plugin option."""
        return ",".join(["file=" + self.file] + self.args)


class Launch:
    """Named settings of one QEMU run. image is the boot image; vars is
    where a UEFI run's fresh copy of the variable store goes; serial is
    "stdio" (COM1 and the monitor on this terminal), "file:PATH" (COM1 to
    PATH, no monitor) or any other QEMU -serial value; monitor, when set,
    is where QEMU's monitor goes (e.g. "unix:PATH,server=on,wait=off");
    icount is None or the shift; gdb is None or a TCP port; paused starts
    the CPUs stopped (for gdb); plugins are Plugin objects; plugin_log
    sends plugin output to a file; timeout is None or seconds (then QEMU
    runs under timeout(1)); extra: more arguments, last on the line;
    accel: "tcg" (the default) or "kvm" (then -cpu max means -cpu host)."""

    def __init__(self, image, firmware="bios", machine="pc", media="cd",
                 smp=1, mem="512M", cpu="max", icount=None,
                 serial=SERIAL_STDIO, monitor=None, gdb=None, paused=False,
                 vars=None, plugins=(), plugin_log=None, timeout=None,
                 extra=(), accel=ACCEL_TCG):
        self.image, self.firmware, self.machine = image, firmware, machine
        self.media, self.smp, self.mem, self.cpu = media, smp, mem, cpu
        self.icount, self.serial, self.gdb = icount, serial, gdb
        self.monitor = monitor
        self.paused, self.vars = paused, vars
        self.plugins, self.plugin_log = list(plugins), plugin_log
        self.timeout, self.extra = timeout, list(extra)
        self.accel = accel

    def check(self):
        """Raise LaunchError for a setting that cannot work."""
        if self.firmware not in FIRMWARES:
            raise LaunchError("firmware must be one of %s" %
                              "|".join(FIRMWARES))
        if self.media not in MEDIAS:
            raise LaunchError("media must be one of %s" % "|".join(MEDIAS))
        if self.firmware == "uefi" and not self.vars:
            raise LaunchError("a UEFI run needs a path for its copy of "
                              "the variable store")
        if self.timeout is not None and self.timeout <= 0:
            raise LaunchError("timeout must be positive")
        if self.accel not in ACCELS:
            raise LaunchError("accelerator must be one of %s" %
                              "|".join(ACCELS))
        if self.accel == ACCEL_KVM and tcg_only(self):
            raise LaunchError("KVM cannot run this: %s requires TCG" %
                              tcg_only(self))


def tcg_only(s):
    """What in settings s only TCG can do (a phrase), or None."""
    if s.plugins:
        return "TCG plugins (MODEL=, PLUGINS=)"
    if s.icount is not None:
        return "icount (ICOUNT=1)"
    if "-accel" in s.extra:
        return "-accel after -- (TCG_THREAD=)"
    return None


def kvm_status(dev=KVM_DEV, cpuinfo=CPUINFO):
    """(usable, reason): whether QEMU can run this machine's guests under
    KVM. Usable means dev opens read-write, answers KVM_GET_API_VERSION
    with 12, and cpuinfo's flags name vmx or svm; reason says which test
    failed (or "/dev/kvm usable")."""
    try:
        fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
    except OSError as err:
        return False, "%s: %s" % (dev, err.strerror)
    try:
        version = fcntl.ioctl(fd, KVM_GET_API_VERSION)
    except OSError as err:
        return False, "%s: KVM_GET_API_VERSION: %s" % (dev, err.strerror)
    finally:
        os.close(fd)
    if version != KVM_API_VERSION:
        return False, "%s: KVM API version %d, not %d" % (
            dev, version, KVM_API_VERSION)
    try:
        with open(cpuinfo) as f:
            flags = set()
            for line in f:
                if line.startswith("flags"):
                    flags.update(line.split(":", 1)[1].split())
    except OSError as err:
        return False, "%s: %s" % (cpuinfo, err.strerror)
    if not flags & set(HW_VIRT_FLAGS):
        return False, ("%s opens but the CPU flags name neither %s: no "
                       "hardware virtualisation" %
                       (dev, " nor ".join(HW_VIRT_FLAGS)))
    return True, "%s usable" % dev


def choose_accel(requested, s, kvm=None):
    """The accelerator for settings s: (accel, reason). requested is
    "auto", "tcg" or "kvm"; kvm() answers as kvm_status (the default)
    does. Raises LaunchError when KVM is requested and cannot be used."""
    kvm = kvm or kvm_status
    if requested == ACCEL_TCG:
        return ACCEL_TCG, "ACCEL=tcg"
    if requested not in (ACCEL_KVM, ACCEL_AUTO):
        raise LaunchError("accelerator must be one of %s|%s" %
                          (ACCEL_AUTO, "|".join(ACCELS)))
    needs_tcg = tcg_only(s)
    if requested == ACCEL_KVM:
        if needs_tcg:
            raise LaunchError("ACCEL=kvm: %s requires TCG" % needs_tcg)
        ok, why = kvm()
        if not ok:
            raise LaunchError("ACCEL=kvm: KVM is not usable here: %s" % why)
        return ACCEL_KVM, "ACCEL=kvm"
    if needs_tcg:
        return ACCEL_TCG, "required by %s" % needs_tcg
    ok, why = kvm()
    return (ACCEL_KVM if ok else ACCEL_TCG), why


def accel_line(accel, reason, cpu):
    """The launcher's one line naming the accelerator."""
    if accel == ACCEL_KVM:
        return "qemu: accelerator KVM, -cpu %s (%s)" % (cpu, reason)
    return "qemu: accelerator TCG (%s)" % reason


def qemu_args(s):
    """The QEMU argument list for settings s (no timeout wrapper); raises
    LaunchError for a bad setting. Pure: copies nothing (see prepare)."""
    s.check()
    cmd = [QEMU, "-machine", s.machine, "-m", str(s.mem),
           "-smp", str(s.smp), "-cpu", cpu_model(s), "-display", "none",
           "-no-reboot", "-device", "isa-debug-exit,iobase=%#x,iosize=%#04x"
           % (DEBUG_EXIT_IOBASE, DEBUG_EXIT_IOSIZE)]
    cmd += accel_args(s)
    if s.icount is not None:
        cmd += ["-icount", "shift=%d" % s.icount]
    if s.serial == SERIAL_STDIO:
        cmd += ["-serial", "mon:stdio"]
    else:
        cmd += ["-serial", s.serial]
    if s.monitor:
        cmd += ["-monitor", s.monitor]
    elif s.serial.startswith("file:"):
        cmd += ["-monitor", "none"]
    if s.firmware == "uefi":
        cmd += ["-drive", "if=pflash,format=raw,readonly=on,file=" +
                OVMF_CODE,
                "-drive", "if=pflash,format=raw,file=" + s.vars]
    if s.media == "cd":
        cmd += ["-cdrom", s.image]
    else:
        cmd += [a.format(image=s.image) for a in USB_ARGS]
    if s.gdb is not None:
        cmd += ["-gdb", "tcp::%d" % s.gdb]
    if s.paused:
        cmd += ["-S"]
    for p in s.plugins:
        cmd += ["-plugin", p.option()]
    if s.plugin_log:
        cmd += ["-d", "plugin", "-D", s.plugin_log]
    return cmd + s.extra


def cpu_model(s):
    """The -cpu value: under KVM the default model is the host's own."""
    if s.accel == ACCEL_KVM and s.cpu == DEFAULT_CPU:
        return KVM_CPU
    return s.cpu


def accel_args(s):
    """The accelerator's options: none for TCG (QEMU's default, so that a
    -accel tcg,thread=... after -- stays the only one), -accel kvm."""
    return ["-accel", "kvm"] if s.accel == ACCEL_KVM else []


def command(s):
    """The full argument list: qemu_args(s), under timeout(1) when s has a
    time limit."""
    cmd = qemu_args(s)
    if s.timeout is not None:
        cmd = ["timeout", "-k", str(KILL_GRACE_S), "%g" % s.timeout] + cmd
    return cmd


def prepare(s):
    """Create what the run needs on disk: a fresh copy of the OVMF
    variable store for a UEFI run. Raises LaunchError when OVMF is not
    installed."""
    if s.firmware != "uefi":
        return
    if not (os.path.exists(OVMF_CODE) and os.path.exists(OVMF_VARS)):
        raise LaunchError("OVMF not installed (package ovmf)")
    d = os.path.dirname(s.vars)
    if d:
        os.makedirs(d, exist_ok=True)
    shutil.copyfile(OVMF_VARS, s.vars)


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


def describe_exit(ex, timeout_s):
    """One phrase saying how QEMU ended, for verdicts and messages."""
    if ex.kind == "timeout":
        return "timed out after %g s" % timeout_s
    if ex.kind == "status":
        return "QEMU exit code %d (status %d)" % (ex.rc, ex.status)
    if ex.kind == "nostatus":
        return "QEMU exited 0 without a status"
    return "QEMU exit code %r without a status" % ex.rc


def user_outcome(ex, timeout_s=None):
    """What the command-line entry reports: (exit code, message or None).
    The kernel's status is the exit code; a status other than 0 and every
    run without a status get a message."""
    if ex.kind == "status":
        if ex.status == 0:
            return 0, None
        return ex.status, "kernel exited with status %d" % ex.status
    if ex.kind == "timeout":
        return TIMEOUT_TERM_RC, ("QEMU stopped: no kernel status within "
                                 "%g s" % timeout_s)
    return NO_STATUS_RC, ("QEMU exited with code %s without a kernel status "
                          "(triple fault, QEMU error or exit=halt)" % ex.rc)


# --------------------------------------------------------------------------
# The console: what a person sees of the serial port
# --------------------------------------------------------------------------
# A line of serial output that starts with this is for the tools
# (@@ENV, @@RESULT, @@MISSING, @@MODEL...; docs/output.md); the console
# hides it unless asked (--raw), the log keeps it.
MACHINE_PREFIX = b"@@"
# How long the console holds back the first bytes of a line that could
# still become MACHINE_PREFIX (a lone "@") before it shows them anyway:
# the kernel writes a line's bytes back to back, so only a prompt or a
# user's echo waits longer, and neither must be held.
HOLD_S = 0.3
# Bytes read from QEMU's stdout at a time.
READ_CHUNK = 4096


class ConsoleFilter:
    """The serial stream as a person sees it: whole lines that start with
    MACHINE_PREFIX are dropped (their newline too), everything else is
    passed on as soon as it arrives, a partial line included, so that a
    prompt or a typed character shows at once.

    Invariant: held is empty or a proper prefix of MACHINE_PREFIX that
    began a line; it is the only output ever delayed. raw passes every
    byte through unchanged."""

    def __init__(self, raw=False):
        self.raw = raw
        self.at_line_start = True   # the next byte begins a line
        self.hiding = False         # inside a machine line
        self.held = b""

    def holding(self):
        """True while bytes are held back (see release)."""
        return bool(self.held)

    def feed(self, data):
        """The part of data (bytes) to show now."""
        if self.raw:
            return data
        out = bytearray()
        i = 0
        while i < len(data):
            if self.hiding:
                j = data.find(b"\n", i)
                if j < 0:
                    break
                self.hiding = False
                self.at_line_start = True
                i = j + 1
            elif self.at_line_start:
                b = data[i:i + 1]
                i += 1
                if b == b"\n":
                    out += self.held + b
                    self.held = b""
                    continue
                self.held += b
                if self.held == MACHINE_PREFIX:
                    self.held = b""
                    self.hiding = True
                    self.at_line_start = False
                elif not MACHINE_PREFIX.startswith(self.held):
                    out += self.held
                    self.held = b""
                    self.at_line_start = False
            else:
                # Inside a shown line: up to and with its newline at once.
                j = data.find(b"\n", i)
                end = len(data) if j < 0 else j + 1
                out += data[i:end]
                self.at_line_start = j >= 0
                i = end
        return bytes(out)

    def release(self):
        """The held bytes, to show now (after HOLD_S or at the end): the
        line they begin is then shown whole."""
        out, self.held = self.held, b""
        if out:
            self.at_line_start = False
        return out


def write_all(fd, data):
    """Write all of data to fd, waiting when it would block (QEMU makes
    the terminal non-blocking, and stdin and stdout often share it)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        except OSError as err:
            if err.errno == errno.EINTR:
                continue
            raise
        view = view[n:]


def pump(src, log, filt, out_fd, hold_s=HOLD_S):
    """Copy src (a readable fd) to the file object log unfiltered and,
    through filt, to out_fd, until end of file. A held partial line is
    shown after hold_s seconds without more data."""
    while True:
        timeout = hold_s if filt.holding() else None
        ready, _, _ = select.select([src], [], [], timeout)
        if not ready:
            write_all(out_fd, filt.release())
            continue
        try:
            data = os.read(src, READ_CHUNK)
        except InterruptedError:
            continue
        if not data:
            break
        log.write(data)
        log.flush()
        write_all(out_fd, filt.feed(data))
    write_all(out_fd, filt.release())


def load_line(when, loadavg=os.getloadavg):
    """The launcher's line with the host's load average; None when the
    system does not say."""
    try:
        one, five, fifteen = loadavg()
    except OSError:
        return None
    return ("qemu: host load average %.2f %.2f %.2f (1, 5, 15 min) %s "
            "the run" % (one, five, fifteen, when))


def run(s, stdin=None, stdout=None, stderr=None, interactive=False,
        log=None, raw=False):
    """Prepare and run settings s; returns (Exit, seconds). stdin, stdout
    and stderr are as for subprocess (None: this process's). interactive
    (main thread only): while QEMU runs, this process ignores SIGINT and
    leaves it to QEMU, as a shell would (with serial on stdio, Ctrl-C
    belongs to the guest). log (a path; serial on stdio only): QEMU's
    output, the serial port's every byte, is written there and shown on
    this process's stdout through ConsoleFilter(raw). Raises LaunchError
    before starting QEMU when a setting is bad or QEMU cannot be
    started."""
    cmd = command(s)
    if log is not None and s.serial != SERIAL_STDIO:
        raise LaunchError("a console log needs the serial port on stdio")
    prepare(s)
    logf = None
    if log is not None:
        d = os.path.dirname(log)
        try:
            if d:
                os.makedirs(d, exist_ok=True)
            logf = open(log, "wb")
        except OSError as err:
            raise LaunchError("cannot write the log %s: %s" % (log, err))
        stdout = subprocess.PIPE
    start = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr)
    except OSError as err:
        if logf:
            logf.close()
        raise LaunchError("cannot start %s: %s" % (cmd[0], err))
    if interactive:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if logf:
            with logf:
                pump(p.stdout.fileno(), logf, ConsoleFilter(raw),
                     sys.stdout.fileno())
            p.stdout.close()
        rc = p.wait()
    finally:
        if interactive:
            signal.signal(signal.SIGINT, old)
    elapsed = time.monotonic() - start
    timed_out = s.timeout is not None and elapsed >= s.timeout
    return decode_exit(rc, timed_out), elapsed


# --------------------------------------------------------------------------
# Command-line entry
# --------------------------------------------------------------------------
def parse_args(argv):
    """Launch settings and options from argv; exits on a usage error."""
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name,
        description="Boot IMAGE under QEMU; exit with the kernel's status.")
    ap.add_argument("image")
    ap.add_argument("--firmware", choices=FIRMWARES, default="bios")
    ap.add_argument("--machine", default="pc")
    ap.add_argument("--media", choices=MEDIAS, default="cd")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--cpu", default="max")
    ap.add_argument("--icount", type=int, metavar="SHIFT",
                    help="-icount shift=SHIFT (0: one instruction, 1 ns)")
    ap.add_argument("--serial", default=SERIAL_STDIO,
                    help="stdio (default), file:PATH or a QEMU -serial value")
    ap.add_argument("--gdb", type=int, metavar="PORT",
                    help="gdb stub on TCP PORT")
    ap.add_argument("--paused", action="store_true",
                    help="start with the CPUs stopped (-S)")
    ap.add_argument("--vars", help="the UEFI variable store's fresh copy")
    ap.add_argument("--plugin", action="append", default=[],
                    metavar="FILE[,NAME=VALUE...]", help="a TCG plugin")
    ap.add_argument("--plugin-log", metavar="PATH",
                    help="plugin output to PATH (-d plugin -D PATH)")
    ap.add_argument("--timeout", type=float, metavar="S",
                    help="stop QEMU after S seconds (timeout -k)")
    ap.add_argument("--accel", choices=(ACCEL_AUTO,) + ACCELS,
                    default=ACCEL_AUTO,
                    help="auto (default): KVM when /dev/kvm is usable and "
                    "no TCG-only option is on, else TCG")
    ap.add_argument("--log", metavar="PATH",
                    help="write the serial output, every line, to PATH and "
                    "show it here without its @@ lines (serial on stdio)")
    ap.add_argument("--raw", action="store_true",
                    help="with --log: show the @@ lines here too")
    ap.add_argument("--raw-exit", action="store_true",
                    help="exit with QEMU's own code, decode nothing")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the command, run nothing")
    a = ap.parse_args(argv)
    try:
        plugins = [Plugin.parse(p) for p in a.plugin]
        s = Launch(a.image, firmware=a.firmware, machine=a.machine,
                   media=a.media, smp=a.smp, mem=a.mem, cpu=a.cpu,
                   icount=a.icount, serial=a.serial, gdb=a.gdb,
                   paused=a.paused, vars=a.vars, plugins=plugins,
                   plugin_log=a.plugin_log, timeout=a.timeout, extra=extra)
        s.check()
        if a.log is not None and s.serial != SERIAL_STDIO:
            raise LaunchError("--log needs --serial stdio")
        if a.raw and a.log is None:
            raise LaunchError("--raw needs --log")
    except LaunchError as err:
        ap.error(str(err))
    return s, a


def resolve_accel(s, requested, kvm=None):
    """Set s.accel from the request ("auto", "tcg", "kvm"); returns the
    line to print. Raises LaunchError as choose_accel does."""
    s.accel, reason = choose_accel(requested, s, kvm)
    return accel_line(s.accel, reason, cpu_model(s))


def say_load(when):
    """Print the host's load average line on stderr, if there is one."""
    line = load_line(when)
    if line:
        print(line, file=sys.stderr)


def main(argv):
    s, a = parse_args(argv)
    try:
        line = resolve_accel(s, a.accel)
    except LaunchError as err:
        print("qemu.py: %s" % err, file=sys.stderr)
        return USAGE_RC
    print(line, file=sys.stderr)
    if a.dry_run:
        print(" ".join(command(s)))
        return 0
    say_load("before")
    sys.stdout.flush()
    try:
        ex, _ = run(s, interactive=True, log=a.log, raw=a.raw)
    except LaunchError as err:
        print("qemu.py: %s" % err, file=sys.stderr)
        return NO_STATUS_RC
    say_load("after")
    if a.log is not None:
        print("qemu: the whole serial output is in %s%s" % (
            a.log, "" if a.raw else " (RAW=1 also shows its @@ lines here)"),
            file=sys.stderr)
    if a.raw_exit:
        return ex.rc if ex.rc is not None and ex.rc >= 0 else NO_STATUS_RC
    code, msg = user_outcome(ex, s.timeout)
    if msg:
        print(msg, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
