#!/usr/bin/env python3
"""What the cache model costs: one boot under plain TCG, the same boot
under the cache-model plugin with its callbacks only (model=off: every
callback the model uses is registered and returns at once, the floor no
model can go below), the same boot under the model, and the figures side
by side (docs/cachemodel.md, "Cost of the model").

    model_cost.py --profile core2-2007 [--smp 2] [--cmdline run=default]
                  [--pairs 1] [--no-floor] [--same-work] [--sync CYCLES]

The modelled boot gets the kernel options `make run MODEL=` gives it
(tools/model/model_profile.py, kernel_options()): with the profile's
cache geometry some experiments size their work by the modelled LLC,
not by CPUID's. --same-work leaves the geometry out, so both boots do
the same work.

Prints, per pair and overall, wall time and CPU time (user + system of
QEMU) of the boots and their ratios to the plain one, and with two pairs
or more their spread (spread()); then, summed over the
pairs, each experiment's wall time in the plain and the modelled boot
(from when its "=== experiment" line reached the serial port to when its
"done" line did) and QEMU's CPU time over the same span in every boot
(read from /proc as those lines arrive), so the cost can be read per
workload; and the model's state in bytes (the plugin's summary line).
The three boots of a pair run one after the other. The same figures go
to build/cost/cost.json, which `python3 -m tools.results.report --cost`
prints as the report's "Cost of the model" section. The host may be
shared: run pairs back to back and read the spread, not one figure.
Python 3 standard library only.
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

from tools.image import qemu
from tools.model.model_profile import kernel_options

HERE = os.path.dirname(os.path.abspath(__file__))

ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(ROOT, "build")
KERNEL = os.path.join(BUILD, "kernel.elf")
MODEL_SO = os.path.join(BUILD, "cachemodel", "cachemodel.so")
PROFILES = os.path.join(ROOT, "cachemodel", "profiles.txt")
MKISO = os.path.join(ROOT, "tools", "image", "mkiso.sh")
OUT = os.path.join(BUILD, "cost")
COST_JSON = os.path.join(OUT, "cost.json")
TIMEOUT_S = 1800
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20
EXPERIMENT_START = re.compile(r"=== experiment (\S+) \(")
EXPERIMENT_DONE = re.compile(r"=== experiment (\S+): (?:done|skipped) ===")


def image(name, cmdline):
    path = os.path.join(OUT, name + ".iso")
    subprocess.run(["sh", MKISO, KERNEL, path, cmdline, "0"], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def process_cpu_seconds(pid):
    """User + system CPU seconds of a running process so far (all its
    threads; /proc/PID/stat), or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # After "pid (comm)": state is field 3, utime 14, stime 15 (proc(5)).
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def child_pid(pid):
    """The first child of process pid (QEMU under timeout(1)), or None."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
    except OSError:
        return None
    return int(kids[0]) if kids else None


def boot(iso, smp, log, plugins=()):
    """(wall seconds, CPU seconds, {experiment: [wall seconds, CPU
    seconds]}) of one boot, its serial output saved in log; raises on a
    failed one. The serial port is read through a pipe so each line gets
    the host time it arrived at, and QEMU's CPU time then (from /proc)."""
    launch = qemu.Launch(iso, smp=smp, serial=qemu.SERIAL_STDIO,
                         plugins=plugins, timeout=TIMEOUT_S)
    cmd = qemu.command(launch)
    qemu.prepare(launch)
    before = cpu_seconds()
    start = time.monotonic()
    opened, phases = {}, {}
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    except OSError as err:
        raise qemu.LaunchError("cannot start %s: %s" % (cmd[0], err))
    qemu_pid = None
    with open(log, "w") as f:
        for raw in p.stdout:
            now = time.monotonic() - start
            line = raw.decode("utf-8", "replace")
            f.write(line)
            start_m = EXPERIMENT_START.search(line)
            done_m = EXPERIMENT_DONE.search(line)
            if not (start_m or done_m):
                continue
            if qemu_pid is None:
                qemu_pid = child_pid(p.pid)
            cpu = process_cpu_seconds(qemu_pid) if qemu_pid else None
            if start_m:
                opened[start_m.group(1)] = (now, cpu)
            if done_m and done_m.group(1) in opened:
                t0, c0 = opened.pop(done_m.group(1))
                e = phases.setdefault(done_m.group(1), [0.0, 0.0])
                e[0] += now - t0
                if cpu is not None and c0 is not None:
                    e[1] += cpu - c0
    rc = p.wait()	# the command runs under timeout(1)
    wall = time.monotonic() - start
    ex = qemu.decode_exit(rc, wall >= TIMEOUT_S)
    if ex.kind != "status" or ex.status != 0:
        raise RuntimeError("%s: the boot did not end with status 0 (%s)"
                           % (log, qemu.describe_exit(ex, TIMEOUT_S)))
    return wall, cpu_seconds() - before, phases


def state_bytes(model_file):
    with open(model_file) as f:
        for line in f:
            obj = json.loads(line.split(" ", 1)[1])
            if obj.get("kind") == "summary":
                return obj["state_bytes"]
    raise RuntimeError("%s: no summary line" % model_file)


COLUMN_NAMES = {"plain": "plain", "floor": "callbacks", "model": "model"}


def ratio(num, den):
    return "%.1fx" % (num / den) if den > 0 else "n/a"


def print_header(kinds):
    print("%-6s" % "pair" +
          "".join(" %12s" % (COLUMN_NAMES[k] + " wall") for k in kinds) +
          "".join(" %12s" % (COLUMN_NAMES[k] + " CPU") for k in kinds) +
          "".join(" %8s" % (COLUMN_NAMES[k][:5] + " x") for k in kinds[1:]))


def print_row(name, kinds, row):
    """One line: each boot's wall and CPU time, then each CPU time as a
    multiple of the plain boot's."""
    print("%-6s" % name +
          "".join(" %10.1f s" % row[k + "_wall_s"] for k in kinds) +
          "".join(" %10.1f s" % row[k + "_cpu_s"] for k in kinds) +
          "".join(" %7.1fx" % (row[k + "_cpu_s"] / row["plain_cpu_s"])
                  for k in kinds[1:]))


def spread(pairs):
    """Over two or more pairs: the lowest and highest of the modelled
    boot's CPU time as a multiple of its own pair's plain boot's, and of
    each boot's CPU time, as one line; None for fewer pairs. One pair
    says little on a shared host: the plain boot's CPU time alone moves
    by a fifth from one boot to the next (docs/cachemodel.md, "Cost of
    the model")."""
    if len(pairs) < 2:
        return None
    ratios = [p["model_cpu_s"] / p["plain_cpu_s"] for p in pairs
              if p["plain_cpu_s"] > 0]
    plain = [p["plain_cpu_s"] for p in pairs]
    model = [p["model_cpu_s"] for p in pairs]
    if not ratios:
        return None
    return ("spread over %d pairs: model x %.1fx to %.1fx; plain CPU "
            "%.1f to %.1f s, model CPU %.1f to %.1f s" %
            (len(pairs), min(ratios), max(ratios), min(plain), max(plain),
             min(model), max(model)))


def modelled_cmdline(cmdline, profile, same_work=False,
                     profiles=PROFILES):
    """The modelled boot's kernel command line: by default the options
    `make run MODEL=` boots with, the profile's name and its cache
    geometry, by which copy sizes its interleaved phase (a smaller LLC
    than CPUID's: less of it); with same_work the name alone, so the
    kernel sizes its work by CPUID's caches as the plain boot does."""
    if same_work:
        return cmdline + " cachemodel=" + profile
    return cmdline + " " + kernel_options(profiles, profile)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--smp", default="2")
    ap.add_argument("--cmdline", default="run=default")
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--no-floor", dest="floor", action="store_false",
                    help="leave out the callbacks-only boot")
    ap.add_argument("--same-work", action="store_true",
                    help="boot the model without the profile's cache "
                    "geometry, so every experiment sizes its work as in "
                    "the plain boot (default: as make run MODEL= boots)")
    ap.add_argument("--sync", type=int, default=None,
                    help="the pacing quantum in cycles (the plugin's "
                    "sync=; default: the plugin's own)")
    args = ap.parse_args(argv)
    for need in (KERNEL, MODEL_SO):
        if not os.path.exists(need):
            print("model_cost: %s missing (make %s)" % (need, need),
                  file=sys.stderr)
            return 1
    os.makedirs(OUT, exist_ok=True)
    plain_iso = image("plain", args.cmdline)
    model_cmdline = modelled_cmdline(args.cmdline, args.profile,
                                     args.same_work)
    model_iso = image("model", model_cmdline)
    model_file = os.path.join(OUT, "model.jsonl")
    plugin = qemu.Plugin(MODEL_SO, ["profile=" + args.profile,
                                    "profiles=" + PROFILES,
                                    "out=" + model_file] +
                        ([] if args.sync is None
                         else ["sync=%d" % args.sync]))
    floor = qemu.Plugin(MODEL_SO, ["model=off"])
    kinds = ["plain"] + (["floor"] if args.floor else []) + ["model"]
    tot = {}
    pairs = []
    per_exp = {}	# experiment -> {"plain_wall_s": ..., "model_cpu_s": ...}
    print_header(kinds)
    try:
        for i in range(1, args.pairs + 1):
            row, phases = {}, {}
            for kind in kinds:
                iso = plain_iso if kind == "plain" else model_iso
                plugins = {"plain": [], "floor": [floor],
                           "model": [plugin]}[kind]
                w, c, phases[kind] = boot(
                    iso, args.smp, os.path.join(OUT, "%s%d.log" % (kind, i)),
                    plugins)
                row[kind + "_wall_s"] = w
                row[kind + "_cpu_s"] = c
            for name in phases["plain"]:
                if all(name in phases[k] for k in kinds):
                    e = per_exp.setdefault(name, {})
                    for k in kinds:
                        wall, cpu = phases[k][name]
                        e[k + "_wall_s"] = e.get(k + "_wall_s", 0.0) + wall
                        e[k + "_cpu_s"] = e.get(k + "_cpu_s", 0.0) + cpu
            for k, v in row.items():
                tot[k] = tot.get(k, 0.0) + v
            pairs.append(row)
            print_row(str(i), kinds, row)
        print_row("all", kinds, tot)
        line = spread(pairs)
        if line:
            print(line)
        if per_exp:
            print()
            print("%-20s %12s %12s %8s" % ("experiment", "plain wall",
                                           "model wall", "wall x") +
                  "".join(" %12s" % (COLUMN_NAMES[k] + " CPU")
                          for k in kinds) + " %8s" % "CPU x")
            for name in sorted(per_exp,
                               key=lambda n: -per_exp[n]["model_cpu_s"]):
                e = per_exp[name]
                print("%-20s %10.1f s %10.1f s %8s" % (
                    name, e["plain_wall_s"], e["model_wall_s"],
                    ratio(e["model_wall_s"], e["plain_wall_s"])) +
                    "".join(" %10.1f s" % e[k + "_cpu_s"] for k in kinds) +
                    " %8s" % ratio(e["model_cpu_s"], e["plain_cpu_s"]))
        state = state_bytes(model_file)
        print("model state: %.1f MiB (profile %s, %s CPUs)" %
              (state / MIB, args.profile, args.smp))
        print("modelled boot's command line: %s" % model_cmdline)
        if args.floor:
            print("callbacks only: %.1fx the plain boot's CPU time; the "
                  "model adds %.1fx" % (
                      tot["floor_cpu_s"] / tot["plain_cpu_s"],
                      (tot["model_cpu_s"] - tot["floor_cpu_s"]) /
                      tot["plain_cpu_s"]))
        record = {"profile": args.profile, "cpus": int(args.smp),
                  "cmdline": args.cmdline, "model_cmdline": model_cmdline,
                  "load_average": os.getloadavg(),
                  "pairs": pairs, "state_bytes": state,
                  "experiments": per_exp}
        with open(COST_JSON, "w") as f:
            json.dump(record, f, indent=1)
        print("(also in %s)" % os.path.relpath(COST_JSON, ROOT))
    except (RuntimeError, OSError, qemu.LaunchError,
            subprocess.CalledProcessError) as e:
        print("model_cost: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
