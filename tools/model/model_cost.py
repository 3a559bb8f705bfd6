#!/usr/bin/env python3
"""What the cache model costs: one boot under plain TCG, the same boot
under the cache-model plugin, and the figures side by side
(docs/cachemodel.md, "Cost of the model").

    model_cost.py --profile core2-2007 [--smp 2] [--cmdline run=default]
                  [--pairs 1]

Prints, per pair and overall, wall time and CPU time (user + system of
QEMU) of both boots and their ratio; then, summed over the pairs, the wall
time of each experiment in both boots (from when its "=== experiment"
line reached the serial port to when its "done" line did), so the cost
can be read per workload; and the model's state in bytes (the plugin's
summary line). The same figures go to build/cost/cost.json, which
`python3 -m tools.results.report --cost` prints as the report's "Cost of
the model" section. The host may be shared: run pairs back to back and read the
spread, not one figure. Python 3 standard library only.
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


def boot(iso, smp, log, plugins=()):
    """(wall seconds, CPU seconds, {experiment: wall seconds}) of one
    boot, its serial output saved in log; raises on a failed one. The
    serial port is read through a pipe so each line gets the host time
    it arrived at."""
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
    with open(log, "w") as f:
        for raw in p.stdout:
            now = time.monotonic() - start
            line = raw.decode("utf-8", "replace")
            f.write(line)
            m = EXPERIMENT_START.search(line)
            if m:
                opened[m.group(1)] = now
            m = EXPERIMENT_DONE.search(line)
            if m and m.group(1) in opened:
                phases[m.group(1)] = (phases.get(m.group(1), 0.0) +
                                      now - opened.pop(m.group(1)))
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--smp", default="2")
    ap.add_argument("--cmdline", default="run=default")
    ap.add_argument("--pairs", type=int, default=1)
    args = ap.parse_args(argv)
    for need in (KERNEL, MODEL_SO):
        if not os.path.exists(need):
            print("model_cost: %s missing (make %s)" % (need, need),
                  file=sys.stderr)
            return 1
    os.makedirs(OUT, exist_ok=True)
    plain_iso = image("plain", args.cmdline)
    model_iso = image("model", args.cmdline + " cachemodel=" + args.profile)
    model_file = os.path.join(OUT, "model.jsonl")
    plugin = qemu.Plugin(MODEL_SO, ["profile=" + args.profile,
                                    "profiles=" + PROFILES,
                                    "out=" + model_file])
    tot = [0.0, 0.0, 0.0, 0.0]
    pairs = []
    per_exp = {}	# experiment -> [plain wall, modelled wall]
    print("%-6s %12s %12s %12s %12s %8s %8s" % (
        "pair", "plain wall", "model wall", "plain CPU", "model CPU",
        "wall x", "CPU x"))
    try:
        for i in range(1, args.pairs + 1):
            pw, pc, pphases = boot(plain_iso, args.smp,
                                   os.path.join(OUT, "plain%d.log" % i))
            mw, mc, mphases = boot(model_iso, args.smp,
                                   os.path.join(OUT, "model%d.log" % i),
                                   [plugin])
            for name in pphases:
                if name in mphases:
                    e = per_exp.setdefault(name, [0.0, 0.0])
                    e[0] += pphases[name]
                    e[1] += mphases[name]
            for k, v in enumerate((pw, mw, pc, mc)):
                tot[k] += v
            pairs.append({"plain_wall_s": pw, "model_wall_s": mw,
                          "plain_cpu_s": pc, "model_cpu_s": mc})
            print("%-6d %10.1f s %10.1f s %10.1f s %10.1f s %7.1fx %7.1fx" %
                  (i, pw, mw, pc, mc, mw / pw, mc / pc))
        print("%-6s %10.1f s %10.1f s %10.1f s %10.1f s %7.1fx %7.1fx" %
              ("all", tot[0], tot[1], tot[2], tot[3], tot[1] / tot[0],
               tot[3] / tot[2]))
        if per_exp:
            print()
            print("%-20s %12s %12s %8s" % ("experiment", "plain wall",
                                           "model wall", "wall x"))
            for name in sorted(per_exp, key=lambda n: -per_exp[n][1]):
                plain, model = per_exp[name]
                print("%-20s %10.1f s %10.1f s %7.1fx" %
                      (name, plain, model,
                       model / plain if plain > 0 else float("inf")))
        state = state_bytes(model_file)
        print("model state: %.1f MiB (profile %s, %s CPUs)" %
              (state / MIB, args.profile, args.smp))
        record = {"profile": args.profile, "cpus": int(args.smp),
                  "cmdline": args.cmdline, "load_average": os.getloadavg(),
                  "pairs": pairs, "state_bytes": state,
                  "experiments": {n: {"plain_wall_s": p, "model_wall_s": m}
                                  for n, (p, m) in per_exp.items()}}
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
