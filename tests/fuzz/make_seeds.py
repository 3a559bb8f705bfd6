#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz harnesses, tests/fuzz/corpus/NAME/,
from real firmware data: the kernel is booted under QEMU (through
tools/image/qemu.py) with crash=hang, and while it hangs the multiboot2
information GRUB left and the ACPI tables the firmware built are read out
of guest memory with the QEMU monitor's pmemsave. The boot report says
where both are. From each boot it writes

  multiboot2/BOOT  the boot information block, exactly as GRUB made it
  acpi/BOOT        the harness's header, the RSDP from GRUB's ACPI tag and
                   the firmware's table area at its real address
  fwmap/BOOT       the firmware memory map from the block, plus the
                   kernel's three carve-outs (low MiB, image, block)

and, without QEMU, cmdline/ seeds (the manifest's command lines and the
documented examples) and psf/ seeds (the console font the kernel embeds,
and two small fonts built here: PSF1 with a unicode table, PSF2 with a
UTF-8 table). Layouts: the comments at the top of each tests/fuzz/*.c.

Run from the repository root after `make` (needs build/kernel.elf and
build/font.psf): python3 -m tests.fuzz.make_seeds. Takes a minute or two.
"""

import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

from tools.image import qemu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


CORPUS = os.path.join("tests", "fuzz", "corpus")
KERNEL = os.path.join("build", "kernel.elf")
FONT = os.path.join("build", "font.psf")
CMDLINE = "crash=hang run=none"
BOOT_WAIT_S = 240

# (seed name, launcher settings)
BOOTS = [
    ("seabios-pc-1cpu", dict(firmware="bios", machine="pc", smp=1)),
    ("seabios-q35-4cpu", dict(firmware="bios", machine="q35", smp=4)),
    ("ovmf-q35-2cpu", dict(firmware="uefi", machine="q35", smp=2)),
]

MBI_RE = re.compile(r"boot information at (0x[0-9a-f]+) \((\d+) bytes\)")
TABLE_RE = re.compile(r"^acpi:\s+(\w{4}|\S+)\s+(0x[0-9a-f]+) len\s+(\d+)",
                      re.M)
DONE_RE = re.compile(r"^(tsc|smp|cpu): ", re.M)

MB2_TAG_MMAP = 6
MB2_TAG_ACPI_OLD = 14
MB2_TAG_ACPI_NEW = 15

# fuzz_acpi.c's header.
ACPI_FIX_SUMS, ACPI_TAG_NEW, ACPI_TAG_OLD = 0x01, 0x02, 0x04
ACPI_RSDP_AREA = 64
ACPI_HEADER = 16
TABLE_AREA_MAX = 256 << 10

# fuzz_fwmap.c's header: capacity byte (64 entries), flags (quiet).
FWMAP_CAP_BYTE, FWMAP_FLAGS = 63, 0
KERNEL_IMAGE = (0x100000, 0x400000)   # where linker.ld puts the image


def hmp(sock_path, command):
    """Send one monitor command and wait for its prompt."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.settimeout(30)
    buf = b""
    while not buf.endswith(b"(qemu) "):
        buf += s.recv(4096)
    s.sendall(command.encode() + b"\n")
    buf = b""
    while b"(qemu) " not in buf:
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    s.close()


def boot_and_dump(name, settings, iso, tmp):
    """Boot, wait for the report, dump the block and the tables; returns
    (log text, block bytes, [(phys, bytes)] of the table area)."""
    log = os.path.join(tmp, name + ".log")
    sock = os.path.join(tmp, name + ".sock")
    s = qemu.Launch(iso, serial="file:" + log, mem="512M",
                    monitor="unix:%s,server=on,wait=off" % sock,
                    vars=os.path.join(tmp, name + ".vars"), **settings)
    qemu.prepare(s)
    p = subprocess.Popen(["nice"] + qemu.command(s),
                         stdin=subprocess.DEVNULL)
    try:
        text = ""
        deadline = time.monotonic() + BOOT_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(1)
            if os.path.exists(log):
                with open(log, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
                if DONE_RE.search(text) and MBI_RE.search(text):
                    break
        else:
            raise RuntimeError("%s: no boot report in %d s" %
                               (name, BOOT_WAIT_S))
        time.sleep(1)
        m = MBI_RE.search(text)
        mbi_addr, mbi_len = int(m.group(1), 16), int(m.group(2))
        mbi_file = os.path.join(tmp, name + ".mbi")
        hmp(sock, 'pmemsave %#x %d "%s"' % (mbi_addr, mbi_len, mbi_file))
        tables = [(int(a, 16), int(n)) for _, a, n in TABLE_RE.findall(text)]
        area = None
        if tables:
            lo = min(a for a, _ in tables)
            hi = max(a + n for a, n in tables)
            if hi - lo <= TABLE_AREA_MAX:
                area_file = os.path.join(tmp, name + ".tables")
                hmp(sock, 'pmemsave %#x %d "%s"' % (lo, hi - lo, area_file))
                time.sleep(1)
                with open(area_file, "rb") as f:
                    area = (lo, f.read())
            else:
                print("%s: tables spread over %d KiB, no acpi seed" %
                      (name, (hi - lo) >> 10))
        time.sleep(1)
        with open(mbi_file, "rb") as f:
            mbi = f.read()
        return text, mbi, area
    finally:
        p.kill()
        p.wait()


def tags(mbi):
    """(type, payload) of each multiboot2 tag."""
    total = struct.unpack_from("<I", mbi)[0]
    off = 8
    while off + 8 <= min(total, len(mbi)):
        t, size = struct.unpack_from("<II", mbi, off)
        if t == 0 or size < 8:
            break
        yield t, mbi[off + 8:off + size]
        off += (size + 7) & ~7


def acpi_seed(mbi, area):
    """fuzz_acpi's input: header, RSDP (from the tag), the table area."""
    rsdp, flags = None, ACPI_FIX_SUMS
    for t, payload in tags(mbi):
        if t == MB2_TAG_ACPI_NEW:
            rsdp, flags = payload, ACPI_FIX_SUMS | ACPI_TAG_NEW
        elif t == MB2_TAG_ACPI_OLD and rsdp is None:
            rsdp, flags = payload, ACPI_FIX_SUMS | ACPI_TAG_OLD
    if rsdp is None:
        return None
    lo, data = area
    rsdp = rsdp[:ACPI_RSDP_AREA]
    base = lo - ACPI_HEADER - ACPI_RSDP_AREA
    head = struct.pack("<BBBB4xQ", flags, len(rsdp), len(rsdp), 0, base)
    return head + rsdp.ljust(ACPI_RSDP_AREA, b"\0") + data


def fwmap_seed(mbi, mbi_addr):
    """fuzz_fwmap's input: header, the firmware's entries, carve-outs."""
    out = bytearray([FWMAP_CAP_BYTE, FWMAP_FLAGS])
    for t, payload in tags(mbi):
        if t != MB2_TAG_MMAP:
            continue
        esize = struct.unpack_from("<I", payload)[0]
        for off in range(8, len(payload) - esize + 1, esize):
            base, length, typ = struct.unpack_from("<QQI", payload, off)
            out += struct.pack("<QQI", base, length, typ)
    for base, length in ((0, 0x100000), KERNEL_IMAGE,
                         (mbi_addr, len(mbi))):
        out += struct.pack("<QQI", base, length, 0)
    return bytes(out)


def write(sub, name, data):
    d = os.path.join(CORPUS, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    print("  %s/%s (%d bytes)" % (sub, name, len(data)))


def cmdline_seeds():
    lines = set()
    with open(os.path.join("tests", "boot.cfg")) as f:
        for m in re.finditer(r"^cmdline\s*=\s*(.*)$", f.read(), re.M):
            lines.add(m.group(1).strip())
    lines |= {
        'console=serial,fb exit=halt ktest=mm,string loglevel=7',
        'run=copy,tbench runmode=full maxcpus=2 nosmp poison icount',
        'ktest="all" run=list crash=none exit=reboot',
        'maxcpus=0x10 loglevel=9 bogus console= run=no"ne',
    }
    for i, line in enumerate(sorted(lines)):
        write("cmdline", "line%02d" % i, line.encode())


def psf1_font():
    """256 glyphs, 8x8, with a unicode table mapping glyph g to g (and
    glyph 1 also to U+263A), as psf(5) describes."""
    glyphs = bytes((g * 7 + r) & 0xff for g in range(256) for r in range(8))
    table = b""
    for g in range(256):
        table += struct.pack("<H", g)
        if g == 1:
            table += struct.pack("<H", 0x263A)
        table += struct.pack("<H", 0xFFFF)
    return bytes([0x36, 0x04, 0x02, 8]) + glyphs + table


def psf2_font():
    """8 glyphs of 12x10 pixels (2 bytes a row), UTF-8 table with one
    sequence entry."""
    n, h, w = 8, 10, 12
    bpg = h * ((w + 7) // 8)
    head = struct.pack("<IIIIIIII", 0x864AB572, 0, 32, 1, n, bpg, h, w)
    glyphs = bytes((g + r) & 0xff for g in range(n) for r in range(bpg))
    table = b""
    for g in range(n):
        table += chr(ord("A") + g).encode()
        if g == 2:
            table += "é".encode() + b"\xFE" + "e\u0301".encode()
        table += b"\xFF"
    return head + glyphs + table


def main():
    os.chdir(ROOT)
    if not os.path.exists(KERNEL):
        sys.exit("make_seeds.py: build the kernel first (make)")
    with tempfile.TemporaryDirectory() as tmp:
        iso = os.path.join(tmp, "seed.iso")
        subprocess.run(["sh", os.path.join("tools", "image", "mkiso.sh"),
                        KERNEL, iso, CMDLINE, "0"], check=True,
                       stdout=subprocess.DEVNULL)
        for name, settings in BOOTS:
            print("%s: booting" % name, flush=True)
            text, mbi, area = boot_and_dump(name, settings, iso, tmp)
            mbi_addr = int(MBI_RE.search(text).group(1), 16)
            write("multiboot2", name, mbi)
            write("fwmap", name, fwmap_seed(mbi, mbi_addr))
            if area:
                seed = acpi_seed(mbi, area)
                if seed:
                    write("acpi", name, seed)
    cmdline_seeds()
    with open(FONT, "rb") as f:
        write("psf", "Lat15-Terminus16", f.read())
    write("psf", "psf1-8x8-unicode", psf1_font())
    write("psf", "psf2-12x10-utf8", psf2_font())


if __name__ == "__main__":
    main()
