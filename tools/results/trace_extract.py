#!/usr/bin/env python3
"""Rebuild a CTF trace directory from a serial log (trace/ctf.h framing).

Usage: trace_extract.py LOG DIR [--check]
       trace_extract.py --decode DIR

Reads the @@TRACE-BEGIN / -FILE / -CHUNK / -END lines the kernel's
trace_export experiment writes, checks every chunk's CRC32 and length,
that chunks tile each file exactly, and each file's size and CRC32, then
writes DIR/metadata and DIR/stream_N. Any damage (a bad CRC, a missing,
repeated or overlapping chunk, a cut log) is reported and the exit
status is 1: a damaged log is never silently misread.

--check also decodes every packet itself (the rules below), runs
babeltrace2 on DIR and checks that both read the same number of events,
that every event name is one the metadata declares, that each CPU's
events come with increasing timestamps, and that the events babeltrace2
says were discarded match the lost counts the kernel printed ("trace:
cpu N: ... lost X ...").

--decode DIR decodes the CTF directory DIR (metadata, stream_*) with
those rules and prints one line per packet and per event:
  packet STREAM SEQ CONTENT_BITS DISCARDED
  event STREAM TIMESTAMP NAME VALUE...
It is the one written description of the packet format besides the
kernel's encoder (trace/ring_buffer.c, trace/ctf.c), and what the host
test tests/host/test_trace_export.c checks that encoder against. The
rules are babeltrace2's: a packet header and context as struct
rb_packet_header, then events while the position just past the last
field read is below content_size (equal: the packet ends; above: the
packet is damaged); each event header 8-aligned, compact (5-bit id,
27-bit timestamp folded into the running clock, one wrap when the low
bits go down) or extended (id 31, u32 id, u64 timestamp at byte 8); the
payload's fields naturally aligned, the payload aligned to its largest.

Standard library only; exit status 0 when everything is intact.
"""
import base64
import binascii
import os
import re
import shutil
import subprocess
import sys

BEGIN_RE = re.compile(r"@@TRACE-BEGIN v1 files=(\d+)")
FILE_RE = re.compile(r"@@TRACE-FILE (\d+) (\S+) (\d+) ([0-9a-f]{8})$")
CHUNK_RE = re.compile(
    r"@@TRACE-CHUNK (\d+) (\d+) (\d+) ([0-9a-f]{8}) ([A-Za-z0-9+/=]+)$")
END_RE = re.compile(r"@@TRACE-END chunks=(\d+) bytes=(\d+)")
LOST_RE = re.compile(r"trace: cpu (\d+): (\d+) packets, (\d+) records "
                     r"exported, lost (\d+)")
NAME_RE = re.compile(r"^[A-Za-z0-9_]+$")


class Damaged(Exception):
    pass


def parse(text):
    """Return [(name, bytes)] from the first complete framed trace."""
    lines = [l.strip("\r") for l in text.split("\n")]
    start = None
    for i, l in enumerate(lines):
        m = BEGIN_RE.search(l)
        if m:
            start, nfiles = i, int(m.group(1))
            break
    if start is None:
        raise Damaged("no @@TRACE-BEGIN line")
    files, data, seen = {}, {}, {}
    chunks = 0
    end = None
    for n, raw in enumerate(lines[start + 1:], start + 2):
        i = raw.find("@@TRACE-")
        if i < 0:
            continue
        l = raw[i:]
        m = FILE_RE.match(l)
        if m:
            f = int(m.group(1))
            if f in files or f >= nfiles or not NAME_RE.match(m.group(2)):
                raise Damaged("line %d: bad or repeated file %d" % (n, f))
            files[f] = (m.group(2), int(m.group(3)), int(m.group(4), 16))
            data[f] = bytearray(int(m.group(3)))
            seen[f] = []
            continue
        m = CHUNK_RE.match(l)
        if m:
            f, off, ln = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if f not in files:
                raise Damaged("line %d: chunk of unannounced file %d" %
                              (n, f))
            try:
                b = base64.b64decode(m.group(5), validate=True)
            except (binascii.Error, ValueError):
                raise Damaged("line %d: bad base64" % n)
            if len(b) != ln or binascii.crc32(b) != int(m.group(4), 16):
                raise Damaged("line %d: chunk %d+%d fails its CRC32 or "
                              "length" % (n, off, ln))
            if off + ln > len(data[f]):
                raise Damaged("line %d: chunk past the end of %s" %
                              (n, files[f][0]))
            data[f][off:off + ln] = b
            seen[f].append((off, ln))
            chunks += 1
            continue
        m = END_RE.match(l)
        if m:
            end = (int(m.group(1)), int(m.group(2)))
            break
        if l.startswith("@@TRACE-"):
            raise Damaged("line %d: malformed framing line" % n)
    if end is None:
        raise Damaged("no @@TRACE-END line (log cut?)")
    if len(files) != nfiles or end[0] != chunks:
        raise Damaged("%d of %d files, %d of %d chunks" %
                      (len(files), nfiles, chunks, end[0]))
    out = []
    for f in range(nfiles):
        name, size, crc = files[f]
        pos = 0
        for off, ln in sorted(seen[f]):
            if off != pos:
                raise Damaged("%s: gap or overlap at byte %d" % (name, pos))
            pos += ln
        if pos != size or binascii.crc32(bytes(data[f])) != crc:
            raise Damaged("%s: %d of %d bytes, or file CRC32 mismatch" %
                          (name, pos, size))
        out.append((name, bytes(data[f])))
    if sum(len(d) for _, d in out) != end[1]:
        raise Damaged("byte total differs from @@TRACE-END")
    return out


# The packet header and context (struct rb_packet_header), little endian.
PKT_MAGIC = 0xc1fc1fc1
PKT_HEADER_BYTES = 80
PKT_CONTENT_OFF = 40
PKT_SEQ_OFF = 56
PKT_TS_BEGIN_OFF = 24
EVENT_ALIGN = 8
COMPACT_ID_BITS = 5
COMPACT_TS_BITS = 27
EXTENDED_ID = (1 << COMPACT_ID_BITS) - 1
META_FIELDS_RE = re.compile(
    r'event \{\n\tname = "(\w+)";\n\tid = (\d+);\n\tstream_id = 0;\n'
    r'\tfields := struct \{\n((?:\t\tuint(?:8|16|32|64)_t \w+;\n)*)\t\};')
META_FIELD_RE = re.compile(r"uint(8|16|32|64)_t (\w+);")
STREAM_RE = re.compile(r"^stream_\d+$")


def metadata_events(text):
    """{id: (name, [field bytes...])} from the TSDL metadata."""
    events = {}
    for m in META_FIELDS_RE.finditer(text):
        sizes = [int(b) // 8 for b, _ in META_FIELD_RE.findall(m.group(3))]
        events[int(m.group(2))] = (m.group(1), sizes)
    return events


def align(x, a):
    return (x + a - 1) // a * a


def u(b, off, n):
    return int.from_bytes(b[off:off + n], "little")


def decode_packet(p, events, where):
    """Decode one packet (its bytes p): returns (seq, content bits,
    discarded, [(timestamp, id, values)]); raises Damaged."""
    if len(p) < PKT_HEADER_BYTES or u(p, 0, 4) != PKT_MAGIC:
        raise Damaged("%s: no packet magic" % where)
    content = u(p, PKT_CONTENT_OFF, 8)
    if content % 8 or content // 8 < PKT_HEADER_BYTES or \
            content // 8 > len(p):
        raise Damaged("%s: content_size %d bits outside the packet" %
                      (where, content))
    end = content // 8
    ts = u(p, PKT_TS_BEGIN_OFF, 8)
    low_mask = (1 << COMPACT_TS_BITS) - 1
    pos, out = PKT_HEADER_BYTES, []
    while pos < end:
        pos = align(pos, EVENT_ALIGN)
        if pos + 4 > end:
            raise Damaged("%s: event header at byte %d past the content "
                          "(%d bytes)" % (where, pos, end))
        word = u(p, pos, 4)
        eid = word & EXTENDED_ID
        if eid == EXTENDED_ID:
            if pos + 16 > end:
                raise Damaged("%s: extended header at byte %d past the "
                              "content" % (where, pos))
            eid, ts = u(p, pos + 4, 4), u(p, pos + 8, 8)
            pos += 16
        else:
            low = word >> COMPACT_ID_BITS
            if low < ts & low_mask:
                ts += 1 << COMPACT_TS_BITS
            ts = (ts & ~low_mask) | low
            pos += 4
        if eid not in events:
            raise Damaged("%s: undeclared event id %d at byte %d" %
                          (where, eid, pos))
        sizes = events[eid][1]
        pos = align(pos, max(sizes) if sizes else 1)
        values = []
        for n in sizes:
            pos = align(pos, n)
            values.append(u(p, pos, n))
            pos += n
        if pos > end:
            raise Damaged("%s: event %s ends at byte %d, past the content "
                          "(%d bytes)" % (where, events[eid][0], pos, end))
        out.append((ts, eid, values))
    return (u(p, PKT_SEQ_OFF, 8), content, u(p, PKT_DISCARDED_OFF, 8), out)


def decode_stream(b, events, name):
    """[(seq, content bits, discarded, events)] of a stream file."""
    packets, pos = [], 0
    while pos < len(b):
        if pos + PKT_HEADER_BYTES > len(b):
            raise Damaged("%s: %d stray bytes at the end" %
                          (name, len(b) - pos))
        size = u(b, pos + PKT_PACKET_SIZE_OFF, 8)
        if size % 8 or size // 8 < PKT_HEADER_BYTES or \
                pos + size // 8 > len(b):
            raise Damaged("%s: packet at byte %d: packet_size %d bits "
                          "does not fit the file" % (name, pos, size))
        packets.append(decode_packet(b[pos:pos + size // 8], events,
                                     "%s packet %d" % (name, len(packets))))
        pos += size // 8
    return packets


def decode_dir(d):
    """(events, {stream name: packets}) for every stream_N file of d, in
    the order of N."""
    with open(os.path.join(d, "metadata")) as f:
        events = metadata_events(f.read())
    if not events:
        raise Damaged("the metadata declares no events")
    out = {}
    streams = [n for n in os.listdir(d) if STREAM_RE.match(n)]
    for name in sorted(streams, key=lambda n: int(n[len("stream_"):])):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = decode_stream(f.read(), events, name)
    return events, out


def print_decoded(d):
    events, streams = decode_dir(d)
    for name, packets in streams.items():
        for seq, content, discarded, evs in packets:
            print("packet %s %d %d %d" % (name, seq, content, discarded))
            for ts, eid, values in evs:
                print("event %s %d %s %s" % (name, ts, events[eid][0],
                                             " ".join(map(str, values))))


def write_dir(files, d):
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    for name, b in files:
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)


BT_EVENT_RE = re.compile(
    r"^\[(\d+)\] .*? (\w+): \{ cpu_id = (\d+)[,} ]")
BT_DISCARD_RE = re.compile(r"[Dd]iscarded (\d+) events?")
META_EVENT_RE = re.compile(r'event \{\n\tname = "(\w+)";')


# Packet context offsets (struct rb_packet_header in trace/ring_buffer.h).
PKT_PACKET_SIZE_OFF = 48
PKT_DISCARDED_OFF = 64


def packet_discards(path):
    """events_discarded of each packet of a stream file, in order."""
    out = []
    with open(path, "rb") as f:
        b = f.read()
    pos = 0
    while pos + PKT_DISCARDED_OFF + 8 <= len(b):
        size = int.from_bytes(b[pos + PKT_PACKET_SIZE_OFF:
                                pos + PKT_PACKET_SIZE_OFF + 8], "little") // 8
        out.append(int.from_bytes(b[pos + PKT_DISCARDED_OFF:
                                    pos + PKT_DISCARDED_OFF + 8], "little"))
        if size <= 0:
            break
        pos += size
    return out


def check(d, text):
    """Run babeltrace2 on d; returns a list of problems (empty: good)."""
    problems = []
    with open(os.path.join(d, "metadata")) as f:
        declared = set(META_EVENT_RE.findall(f.read()))
    try:
        _, streams = decode_dir(d)
    except Damaged as exc:
        return ["the packets do not decode: %s" % exc]
    decoded = sum(len(evs) for packets in streams.values()
                  for _, _, _, evs in packets)
    try:
        p = subprocess.run(["babeltrace2", "--clock-cycles", d],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ["babeltrace2 did not run: %s" % exc]
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        return ["babeltrace2 failed (rc %d): %s" %
                (p.returncode, err.strip().split("\n")[-1:])]
    last, counts, discarded = {}, {}, 0
    for line in out.split("\n"):
        m = BT_EVENT_RE.match(line)
        if m:
            ts, name, cpu = int(m.group(1)), m.group(2), int(m.group(3))
            if name not in declared:
                problems.append("undeclared event name %r" % name)
            if ts < last.get(cpu, 0):
                problems.append("cpu %d: timestamp %d after %d" %
                                (cpu, ts, last[cpu]))
            last[cpu] = ts
            counts[cpu] = counts.get(cpu, 0) + 1
    for m in BT_DISCARD_RE.finditer(err + out):
        discarded += int(m.group(1))
    exported, lost = {}, {}
    for m in LOST_RE.finditer(text):
        exported[int(m.group(1))] = int(m.group(3))
        lost[int(m.group(1))] = int(m.group(4))
    if not exported:
        problems.append("the log has no 'trace: cpu N' summary lines")
    for cpu, n in exported.items():
        if counts.get(cpu, 0) != n:
            problems.append("cpu %d: babeltrace2 read %d events, the kernel "
                            "exported %d" % (cpu, counts.get(cpu, 0), n))
    # babeltrace2 reports the growth of events_discarded from packet to
    # packet; the first packet's count is its baseline. The last packet
    # (closed by the final flush) must carry the kernel's total.
    expect = 0
    for cpu in sorted(lost):
        counts_in = packet_discards(os.path.join(d, "stream_%d" % cpu))
        if not counts_in:
            continue
        expect += counts_in[-1] - counts_in[0]
        if counts_in[-1] != lost[cpu]:
            problems.append("cpu %d: last packet says %d discarded, the "
                            "kernel counted %d lost" %
                            (cpu, counts_in[-1], lost[cpu]))
    if discarded != expect:
        problems.append("babeltrace2 reports %d discarded events, the "
                        "packets say %d" % (discarded, expect))
    if sum(counts.values()) != decoded:
        problems.append("babeltrace2 read %d events, the packet rules %d" %
                        (sum(counts.values()), decoded))
    if not problems:
        print("trace_extract: babeltrace2 read %d events on %d CPUs, "
              "%d discarded, names and per-CPU order good" %
              (sum(counts.values()), len(counts), discarded))
    return problems


def main(argv):
    if argv[:1] == ["--decode"]:
        if len(argv) != 2:
            sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
            return 2
        try:
            print_decoded(argv[1])
        except (Damaged, OSError) as exc:
            print("trace_extract: damaged trace: %s" % exc)
            return 1
        return 0
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2 or any(a not in ("--check",) for a in argv
                             if a.startswith("--")):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    with open(args[0], "rb") as f:
        text = f.read().decode("utf-8", "replace")
    try:
        files = parse(text)
    except Damaged as exc:
        print("trace_extract: damaged trace: %s" % exc)
        return 1
    write_dir(files, args[1])
    print("trace_extract: %d files, %d bytes in %s" %
          (len(files), sum(len(b) for _, b in files), args[1]))
    if "--check" in argv:
        problems = check(args[1], text)
        for p in problems[:20]:
            print("trace_extract: " + p)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
