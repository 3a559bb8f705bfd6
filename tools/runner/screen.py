#!/usr/bin/env python3
"""Read the text on a screenshot: a QMP screendump (PPM) is cut into
character cells and each cell is matched pixel for pixel against a PSF
console font's glyphs.

  - Framebuffer console (UEFI): the kernel draws with the font the
    Makefile embeds (Lat15-Terminus16), 8x16 cells from the top left.
  - VGA text mode (BIOS): QEMU draws the font the VGA BIOS loaded into
    the card, SeaBIOS's 8x16 set. It is read from the VGA BIOS ROM itself
    (/usr/share/seabios/vgabios-stdvga.bin): the 8x16 table is found by
    the glyphs of 'A' and 'B' of Debian's Lat15-VGA16, which are the
    same IBM glyphs (many others differ in detail). Cells are 9 pixels
    wide (the 9th column is blank for these characters).

A cell whose pixels match no glyph reads as '?'; an inverted cell (the
framebuffer console's cursor) is matched inverted. Background is the
colour of the top-left pixel.

Usage: screen.py IMAGE.ppm [--font PSF[.gz]] [--cell-width N]
prints the text, one line per row, trailing blanks removed.
Python 3 standard library only.
"""

import argparse
import gzip
import struct
import sys

from tools.image.qemu import read_paths

FONT_FB = read_paths()["FONT_PSF"]   # the font the Makefile embeds
FONT_VGA = "/usr/share/consolefonts/Lat15-VGA16.psf.gz"
VGA_ROM = "/usr/share/seabios/vgabios-stdvga.bin"
VGA_GLYPH_BYTES = 16

PSF1_MAGIC = b"\x36\x04"
PSF1_MODE512 = 0x01
PSF1_HAS_TABLE = 0x02
PSF1_SEPARATOR = 0xFFFF
PSF2_MAGIC = b"\x72\xb5\x4a\x86"
PSF2_HAS_TABLE = 0x01
PSF2_SEPARATOR = 0xFF
PSF2_START_SEQ = 0xFE
ASCII_FIRST, ASCII_LAST = 0x20, 0x7E
VGA_TEXT_WIDTH = 720   # 80 columns x 9 pixels


class ScreenError(Exception):
    pass


def load_psf(path):
    """(width, height, {bitmap rows tuple: character}) for printable ASCII.
    Glyphs are looked up through the font's Unicode table when it has one."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    if data[:2] == PSF1_MAGIC:
        mode, charsize = data[2], data[3]
        n = 512 if mode & PSF1_MODE512 else 256
        width, height, stride, hdr = 8, charsize, 1, 4
        table = None
        if mode & PSF1_HAS_TABLE:
            table = psf1_table(data[hdr + n * charsize:], n)
    elif data[:4] == PSF2_MAGIC:
        (_, _, hdr, flags, n, charsize, height,
         width) = struct.unpack("<4sIIIIIII", data[:32])
        stride = (width + 7) // 8
        table = None
        if flags & PSF2_HAS_TABLE:
            table = psf2_table(data[hdr + n * charsize:], n)
    else:
        raise ScreenError("%s: not a PSF font" % path)
    glyphs = {}
    for cp in range(ASCII_FIRST, ASCII_LAST + 1):
        idx = table.get(cp, cp) if table else cp
        raw = data[hdr + idx * charsize: hdr + (idx + 1) * charsize]
        rows = []
        for y in range(height):
            bits = int.from_bytes(raw[y * stride:(y + 1) * stride], "big")
            rows.append(bits >> (stride * 8 - width))
        glyphs.setdefault(tuple(rows), chr(cp))
    return width, height, glyphs


def load_vga_rom_font(rom_path=VGA_ROM, anchor=FONT_VGA):
    """(8, 16, {rows: character}) from the VGA BIOS ROM's 8x16 table,
    located through the anchor font's 'A' and 'B'."""
    _, _, ref = load_psf(anchor)
    by_char = {c: bytes(rows) for rows, c in ref.items()}
    with open(rom_path, "rb") as f:
        rom = f.read()
    a, b = by_char["A"], by_char["B"]
    pos = rom.find(a + b)
    if pos < 0:
        raise ScreenError("%s: no 8x16 font table found" % rom_path)
    base = pos - ord("A") * VGA_GLYPH_BYTES
    glyphs = {}
    for cp in range(ASCII_FIRST, ASCII_LAST + 1):
        g = rom[base + cp * VGA_GLYPH_BYTES:
                base + (cp + 1) * VGA_GLYPH_BYTES]
        glyphs.setdefault(tuple(g), chr(cp))
    return 8, VGA_GLYPH_BYTES, glyphs


def psf1_table(tab, n):
    out = {}
    pos = 0
    for idx in range(n):
        while pos + 2 <= len(tab):
            (u,) = struct.unpack_from("<H", tab, pos)
            pos += 2
            if u == PSF1_SEPARATOR:
                break
            out.setdefault(u, idx)
    return out


def psf2_table(tab, n):
    out = {}
    pos = 0
    for idx in range(n):
        end = tab.find(bytes([PSF2_SEPARATOR]), pos)
        if end < 0:
            break
        entry = tab[pos:end]
        pos = end + 1
        entry = entry.split(bytes([PSF2_START_SEQ]))[0]
        for ch in entry.decode("utf-8", "replace"):
            out.setdefault(ord(ch), idx)
    return out


def read_ppm(path):
    """(width, height, pixel bytes RGB) of a binary P6 file."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6":
        raise ScreenError("%s: not a binary PPM (P6)" % path)
    w, h, maxval = (int(x) for x in fields[1:])
    if maxval != 255:
        raise ScreenError("%s: maxval %d, expected 255" % (path, maxval))
    pixels = data[pos + 1:]
    if len(pixels) < w * h * 3:
        raise ScreenError("%s: truncated" % path)
    return w, h, pixels


def screen_text(ppm, font=None, cell_width=None):
    """The screen's text as a list of lines."""
    w, h, px = read_ppm(ppm)
    if font is None and w == VGA_TEXT_WIDTH:
        gw, gh, glyphs = load_vga_rom_font()
    else:
        gw, gh, glyphs = load_psf(font or FONT_FB)
    cw = cell_width or (9 if w == VGA_TEXT_WIDTH else gw)
    bg = px[0:3]
    lines = []
    for row in range(h // gh):
        line = []
        for col in range(w // cw):
            rows = []
            for y in range(gh):
                off = ((row * gh + y) * w + col * cw) * 3
                bits = 0
                for x in range(gw):
                    on = px[off + 3 * x: off + 3 * x + 3] != bg
                    bits = bits << 1 | on
                rows.append(bits)
            rows = tuple(rows)
            ch = glyphs.get(rows)
            if ch is None:  # an inverted cell: the cursor
                full = (1 << gw) - 1
                ch = glyphs.get(tuple(full ^ r for r in rows), "?")
            line.append(ch)
        lines.append("".join(line).rstrip())
    return lines


def main(argv):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description=__doc__.split("\n")[0])
    ap.add_argument("image")
    ap.add_argument("--font")
    ap.add_argument("--cell-width", type=int)
    args = ap.parse_args(argv)
    try:
        for line in screen_text(args.image, args.font, args.cell_width):
            print(line)
    except (OSError, ScreenError) as err:
        print("screen.py: %s" % err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
