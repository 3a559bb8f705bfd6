#!/usr/bin/env python3
"""Scripted interactive boots: QEMU with its serial port on a Unix socket
(instead of a file) and QMP on another, driven by a session script.

A script (tests/sessions/*.txt) is one step per line; '#' starts a
comment line, blank lines are ignored:

  timeout S          later expects and screens wait at most S seconds [30]
  expect REGEX       wait until REGEX matches serial output that arrived
                     after the previous match (ANSI sequences and CR
                     removed; multi-line mode, so ^ and $ work per line)
  reject REGEX       fail if REGEX matched anything since the previous
                     expect (use after an expect: checks what came between)
  send TEXT          type TEXT and Enter on the serial line
  sendraw TEXT       send TEXT with Python escapes (\\x1b[A is Up), no Enter
  type TEXT          type TEXT and Enter on the PS/2 keyboard (QMP send-key)
  keys K [K...]      press QMP key codes on the keyboard: up, left, ret...
  screen REGEX       take a screendump and wait until REGEX matches the text
                     read from it (tools/runner/screen.py); the last
                     image is kept as build/logs/NAME.screen.ppm
  exit               wait for QEMU to end (the kernel printed EXIT)

The serial log is written as it arrives to the boot's log file, so the
runner's usual verdict (EXIT line and exit code, panics, KTAP) applies on
top of the script's own.
Python 3 standard library only.
"""

import codecs
import json
import os
import re
import socket
import subprocess
import tempfile
import threading
import time

from tools.image import qemu
from tools.runner import screen

DEFAULT_STEP_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 20.0
POLL_S = 0.05
SCREEN_RETRY_S = 1.0
KILL_GRACE_S = 5
# Delay between keyboard events: the kernel polls the controller.
KEY_DELAY_S = 0.05

ANSI_RE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])")
COMMANDS = ("timeout", "expect", "reject", "send", "sendraw", "type", "keys",
            "screen", "exit")

# Characters to QMP qcodes (US layout); shifted ones as ("shift", code).
QCODE_PLAIN = {" ": "spc", "-": "minus", "=": "equal", ".": "dot",
               ",": "comma", "/": "slash", ";": "semicolon",
               "'": "apostrophe", "[": "bracket_left",
               "]": "bracket_right", "\\": "backslash", "`": "grave_accent"}
QCODE_SHIFTED = {"_": "minus", "+": "equal", ">": "dot", "<": "comma",
                 "?": "slash", ":": "semicolon", '"': "apostrophe",
                 "{": "bracket_left", "}": "bracket_right", "|": "backslash",
                 "~": "grave_accent", "!": "1", "@": "2", "#": "3",
                 "$": "4", "%": "5", "^": "6", "&": "7", "*": "8", "(": "9",
                 ")": "0"}


class ScriptError(Exception):
    pass


def parse_script(text, source="session"):
    """List of (lineno, command, argument); raises ScriptError."""
    steps = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cmd, _, arg = line.partition(" ")
        if cmd not in COMMANDS:
            raise ScriptError("%s:%d: unknown step %r" % (source, n, cmd))
        if cmd in ("expect", "reject", "screen"):
            try:
                re.compile(arg)
            except re.error as err:
                raise ScriptError("%s:%d: bad regex: %s" % (source, n, err))
        if cmd == "timeout":
            try:
                if float(arg) <= 0:
                    raise ValueError
            except ValueError:
                raise ScriptError("%s:%d: timeout needs seconds" %
                                  (source, n))
        steps.append((n, cmd, arg))
    return steps


def text_qcodes(text):
    """QMP key lists (each a list of qcodes pressed together) for text."""
    out = []
    for ch in text:
        if ch.isalpha() and ch.isascii():
            out.append(["shift", ch.lower()] if ch.isupper() else [ch])
        elif ch.isdigit():
            out.append([ch])
        elif ch in QCODE_PLAIN:
            out.append([QCODE_PLAIN[ch]])
        elif ch in QCODE_SHIFTED:
            out.append(["shift", QCODE_SHIFTED[ch]])
        else:
            raise ScriptError("cannot type %r on the keyboard" % ch)
    return out


class Qmp:
    """A minimal QMP client: capabilities negotiation, then commands."""

    def __init__(self, path):
        self.sock = connect_unix(path)
        self.buf = b""
        self._read()  # greeting
        self.command("qmp_capabilities")

    def _read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ScriptError("QMP connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise ScriptError("QMP %s: %s" %
                                  (name, reply["error"].get("desc")))
            # an asynchronous event: skip it

    def close(self):
        self.sock.close()


def connect_unix(path, timeout=CONNECT_TIMEOUT_S):
    end = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > end:
                raise ScriptError("cannot connect to %s" % path)
            time.sleep(POLL_S)


class Serial:
    """The serial line: a reader thread appends to the log and a buffer."""

    def __init__(self, path, log):
        self.sock = connect_unix(path)
        self.log = open(log, "wb")
        self.data = b""
        self.lock = threading.Lock()
        self.closed = False
        self.thread = threading.Thread(target=self._reader, daemon=True)
        self.thread.start()

    def _reader(self):
        while True:
            try:
                chunk = self.sock.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                return
            with self.lock:
                self.data += chunk
                self.log.write(chunk)
                self.log.flush()

    def text(self):
        with self.lock:
            raw = self.data
        return ANSI_RE.sub("", raw.decode("utf-8", "replace")).replace(
            "\r", "")

    def send(self, data):
        self.sock.sendall(data)

    def close(self):
        self.thread.join(timeout=2)
        try:
            self.sock.close()
        finally:
            self.log.close()


def run(launch, script_path, log, shot):
    """Boot qemu.Launch launch (its serial and monitor settings are
    replaced: serial and QMP go to sockets) and play the script; its
    timeout bounds the whole session. Returns (exit, elapsed, problems):
    a qemu.Exit (kind "timeout" when the session had to kill QEMU),
    seconds, and problem lines naming the failed step."""
    with open(script_path) as f:
        steps = parse_script(f.read(), script_path)
    tmp = tempfile.mkdtemp(prefix="ksession.")
    ser_path = os.path.join(tmp, "serial")
    qmp_path = os.path.join(tmp, "qmp")
    overall_timeout_s = launch.timeout or DEFAULT_STEP_TIMEOUT_S
    launch.timeout = None
    launch.serial = "chardev:ser0"
    launch.monitor = "none"
    launch.extra = launch.extra + [
        "-chardev", "socket,id=ser0,path=%s,server=on,wait=on" % ser_path,
        "-qmp", "unix:%s,server=on,wait=off" % qmp_path]
    qemu.prepare(launch)
    full = qemu.qemu_args(launch)
    start = time.monotonic()
    deadline = start + overall_timeout_s
    problems = []
    qlog = open(log + ".qemu-session.txt", "w")
    qlog.write("# " + " ".join(full) + "\n")
    qlog.flush()
    proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=qlog,
                            stderr=subprocess.STDOUT)
    serial = qmp = None
    killed = False
    try:
        serial = Serial(ser_path, log)
        qmp = Qmp(qmp_path)
        problems = play(steps, serial, qmp, proc, shot, deadline,
                        script_path)
    except ScriptError as err:
        problems.append(str(err))
    finally:
        if problems or proc.poll() is None:
            end = time.monotonic() + (0 if problems else KILL_GRACE_S)
            while proc.poll() is None and time.monotonic() < end:
                time.sleep(POLL_S)
            if proc.poll() is None:
                killed = True
                proc.kill()
        rc = proc.wait()
        if qmp:
            qmp.close()
        if serial:
            serial.close()
        qlog.close()
        for p in (ser_path, qmp_path):
            if os.path.exists(p):
                os.unlink(p)
        os.rmdir(tmp)
    elapsed = time.monotonic() - start
    ex = qemu.Exit("timeout", qemu.TIMEOUT_TERM_RC) if killed else \
        qemu.decode_exit(rc, False)
    return ex, elapsed, problems


def play(steps, serial, qmp, proc, shot, deadline, source):
    """Run the steps; returns problem lines (empty on success)."""
    step_timeout = DEFAULT_STEP_TIMEOUT_S
    mark = 0          # serial text before mark has been matched already
    last_mark = 0
    for n, cmd, arg in steps:
        where = "%s:%d: %s %s" % (os.path.basename(source), n, cmd, arg)
        limit = min(time.monotonic() + step_timeout, deadline)
        if cmd == "timeout":
            step_timeout = float(arg)
        elif cmd == "expect":
            rx = re.compile(arg, re.M)
            while True:
                text = serial.text()
                m = rx.search(text, mark)
                if m:
                    last_mark, mark = mark, m.end()
                    break
                if time.monotonic() > limit or (serial.closed and
                                                proc.poll() is not None):
                    tail = text[mark:][-400:].replace("\n", " | ")
                    return ["%s: not seen within %g s; after the last "
                            "match: %s" % (where, step_timeout, tail)]
                time.sleep(POLL_S)
        elif cmd == "reject":
            rx = re.compile(arg, re.M)
            seg = serial.text()[last_mark:mark]
            m = rx.search(seg)
            if m:
                return ["%s: matched %r" % (where, m.group(0))]
        elif cmd in ("send", "sendraw"):
            data = codecs.decode(arg, "unicode_escape") if \
                cmd == "sendraw" else arg + "\r"
            serial.send(data.encode("latin-1"))
        elif cmd in ("type", "keys"):
            combos = text_qcodes(arg) + [["ret"]] if cmd == "type" else \
                [k.split("+") for k in arg.split()]
            for combo in combos:
                qmp.command("send-key", keys=[
                    {"type": "qcode", "data": k} for k in combo])
                time.sleep(KEY_DELAY_S)
        elif cmd == "screen":
            rx = re.compile(arg, re.M)
            while True:
                if os.path.exists(shot):
                    os.unlink(shot)
                qmp.command("screendump", filename=os.path.abspath(shot))
                text = "\n".join(screen.screen_text(shot))
                if rx.search(text):
                    break
                if time.monotonic() > limit:
                    with open(shot + ".txt", "w") as f:
                        f.write(text + "\n")
                    return ["%s: not on the screen within %g s (text read "
                            "from it in %s.txt)" % (where, step_timeout,
                                                    shot)]
                time.sleep(SCREEN_RETRY_S)
        elif cmd == "exit":
            while proc.poll() is None:
                if time.monotonic() > limit:
                    return ["%s: QEMU still running after %g s" %
                            (where, step_timeout)]
                time.sleep(POLL_S)
    return []
