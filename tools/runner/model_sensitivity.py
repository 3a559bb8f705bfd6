#!/usr/bin/env python3
"""Which seed conclusions does each assumed model parameter decide?

For every parameter of a cache-model profile that cachemodel/profiles.txt
marks "assumed", this tool runs the model at the low end, the default and
the high end of the parameter's plausible range (RANGES below says which
range and why) and reports, for each seed conclusion the run can decide,
its modelled ratio and whether its direction flips against the default:

    model_sensitivity.py --profile xeon5400-2008 [--params a,b|none]
                         [--smp N] [--full] [--tbench SETTINGS|none]
                         [--kbuild SETTINGS|none]
    model_sensitivity.py --from-json build/sensitivity/PROFILE-smpN.json

A seed conclusion is a ratio of two figures whose side of 1 the seed
measured: the comparisons of tools/results/seeds_data.json ("Seeds side by side"
in tools/results/report.py), plus the order of seed 000's WC and UC buffers
(DERIVED). A ratio within TIE of 1 has no direction. The measurement is
the cheapest boot that decides them: one vCPU under QEMU -icount (the
model is then deterministic), the shell running tbench and kbuild at
small sizes (SIZES), with every traced variant. Each sweep point writes
the whole profile file with one number changed and passes it to the
plugin (profiles=), so nothing in the repository changes.

Output: an environment line, a table per point (one column per
conclusion, * where the direction flips), a summary of what flips, a
gnuplot chart (PNG and SVG: each conclusion's ratio - 1 in percent, so a
flip is a crossing of 0), seed 000's normalised figures at the default
(model_tracing.normalised) and one "@@SENSITIVITY {json}" line per figure.
With --smp N > 1 the vCPUs are paced instead (not deterministic: give
settings with repetitions); a figure from broken pacing has no ratio.
The points are kept as JSON (--json) so that the table and chart can be
redrawn without running QEMU again (--from-json).

Python 3 standard library only (and gnuplot for the chart).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from tools.image import qemu
from tools.model import model_lines
from tools.model import model_profile
from tools.model import model_tracing
from tools.results import plot
from tools.results import results as results_mod
from tools.results import seed_ratios
from tools.runner import session
from tools.runner import testrun

PROFILES = os.path.join("cachemodel", "profiles.txt")
SEEDS = os.path.join("tools", "results", "seeds_data.json")
OUT_DIR = os.path.join("build", "sensitivity")
MODEL_SO = os.path.join("build", "cachemodel", "cachemodel.so")
TAG = "@@SENSITIVITY "
ASSUMED = "assumed"
# A modelled ratio closer to 1 than this has no direction (0.1 %: well
# above the deterministic model's rounding, below every effect the seeds
# reported).
TIE = 0.001
PCT = 100.0

# The measurement: sizes through the shell (experiments/tbench.c and
# kbuild.c list the settings). One point costs about 16 s of host CPU on
# one vCPU (measured on a 2-core host), so a profile with 13 assumed
# keys (26 points: a 0/1 key has one other value) takes about 7 minutes
# of CPU.
SIZES = {"tbench": "clients=2 steps=20 reps=1",
         "kbuild": "files=2 reps=1"}
SKIP = "none"             # --tbench none: that experiment is not run
BOOT_TIMEOUT_S = 1800
MEM = "512M"


# --------------------------------------------------------------------------
# The profile file: which keys are assumed, and a copy with one changed
# --------------------------------------------------------------------------
def profile_entries(text, name):
    """The keys of profile name in profiles.txt text, in file order: a
    list of dicts with key, values (the numbers as text), line (index in
    text's lines) and assumed (the key's own comment, or the comment
    lines just above it since the previous key, says "assumed"). Raises
    ValueError when the profile is not in text."""
    out, cur, block, found = [], None, [], False
    for i, raw in enumerate(text.split("\n")):
        body, _, comment = raw.partition("#")
        body = body.strip()
        if not body:
            if raw.strip().startswith("#"):
                block.append(comment)
            continue
        if body.startswith("["):
            cur = body.strip("[]")
            found |= cur == name
            block = []
            continue
        if cur == name:
            key, *vals = body.split()
            note = " ".join(block + [comment])
            out.append({"key": key, "values": vals, "line": i,
                        "assumed": ASSUMED in note.lower()})
        block = []
    if not found:
        raise ValueError("no profile [%s]" % name)
    return out


def with_value(text, entry, value):
    """text with entry's (single) number replaced by value, its comment
    kept."""
    lines = text.split("\n")
    body, sep, comment = lines[entry["line"]].partition("#")
    old = body.split()
    new = "%-14s %d" % (old[0], value)
    lines[entry["line"]] = (new.ljust(len(body)) if sep else new) + \
        (sep + comment if sep else "")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Plausible ranges
# --------------------------------------------------------------------------
def _scaled(lo, hi):
    """The default times lo to the default times hi."""
    return lambda v, p: (max(0, round(v * lo)), round(v * hi))


def _fixed(lo, hi):
    """lo to hi whatever the default."""
    return lambda v, p: (lo, hi)


# key: (rule(default, profile) -> (low, high), why). A key marked
# assumed that is not listed gets DEFAULT_RANGE.
RANGES = {
    "cpi_x100": (_scaled(0.5, 2),
                 "kernel code at half to twice the assumed instructions "
                 "per cycle (Core 2 and Skylake retire up to 4 a cycle)"),
    "mem_latency": (_scaled(0.75, 1.5),
                    "published load-to-use DRAM latencies of the 2007-2015 "
                    "machines span about 60 to 150 ns"),
    "remote_latency": (_scaled(0.5, 2),
                       "a cache-to-cache transfer: from a shared-cache "
                       "hit to a snoop over the bus"),
    "uc_load": (lambda v, p: (p.get("mem_latency", v) * 3 // 4, 2 * v),
                "one DRAM round trip, from the fastest DRAM access to "
                "twice this one (no overlap, a bus turnaround)"),
    "uc_store": (lambda v, p: (max(1, v // 2), max(2 * v,
                                                   p.get("mem_latency", v))),
                 "from half a posted bus write to a full DRAM round trip "
                 "(a store that is not posted)"),
    "wc_buffers": (_fixed(4, 10),
                   "Intel: 4 on P6, 6 on Pentium 4 and M, 10 from "
                   "Nehalem on"),
    "wc_chunk": (lambda v, p: (max(1, p.get("wc_burst", v) // 8),
                               p.get("wc_burst", v)),
                 "an 8-byte partial write holding the bus one eighth of "
                 "a burst (its data) up to a whole burst (the manual's "
                 "1/8 data rate)"),
    "locked": (_scaled(0.5, 2),
               "LOCK-prefixed read-modify-writes on Intel cores of "
               "2006-2015: about 10 to 40 cycles"),
    "fence": (_scaled(0.5, 3),
              "MFENCE from its isolated cost to a few times it"),
    "sfence": (_scaled(0.5, 3),
               "SFENCE from its isolated cost to a few times it (what it "
               "waits for is modelled apart)"),
    "clflush": (_scaled(0.5, 2), "no public figure: half to twice"),
    "llc_inclusive": (lambda v, p: (0, 0) if p.get("llc_cpus") else (0, 1),
                      "either; with an LLC per die (llc_cpus) 0 only: "
                      "the model has no inclusive LLC per die"),
    "fill_buffers": (_fixed(4, 12),
                     "from half of Core 2's 8 to Skylake's 12"),
    "prefetch_ahead": (_fixed(0, 32),
                       "streamer off to 32 lines ahead (the model's "
                       "limit; Intel: up to 20)"),
}
DEFAULT_RANGE = (_scaled(0.5, 2), "no published bound: half to twice")


def assumed_keys(entries):
    """The single-number keys marked assumed, in file order."""
    return [e for e in entries if e["assumed"] and len(e["values"]) == 1]


def sweep_values(entry, prof):
    """[(point, value)] for entry: "low" and "high" of its range (when
    they differ from the default) around "default"; and the range's
    reason."""
    v = int(entry["values"][0], 0)
    rule, why = RANGES.get(entry["key"], DEFAULT_RANGE)
    lo, hi = rule(v, prof)
    pts = []
    if lo != v:
        pts.append(("low", int(lo)))
    pts.append(("default", v))
    if hi != v:
        pts.append(("high", int(hi)))
    return pts, why


# --------------------------------------------------------------------------
# Conclusions
# --------------------------------------------------------------------------
# Seed 000's order of its three buffer types is not a comparison of
# seeds_data.json: these add it, in the same schema, from the seed's own
# figures (kbuild: the cache-hot builds' real time).
def _derived(exp, metric, what, num, den, reading):
    """A seed-000 conclusion of buffer type num over den (WB, WC, UC) in
    exp's metric, in seeds_data.json's comparison schema."""
    seed = {"tbench": "s000_tbench_%s",
            "kbuild": "s000_kbuild_%s_hot_real"}[exp]
    return {"id": "%s_trace_%s_over_%s" % (exp, num, den), "seed": "000",
            "title": "%s %s with trace buffers %s / %s" % (
                exp, what, num.upper(), den.upper()),
            "seed_ratio": {"numerator": seed % num,
                           "denominator": seed % den},
            "ours": {k: {"experiment": exp, "metric": metric,
                         "variant": "trace_" + v}
                     for k, v in (("numerator", num), ("denominator", den))},
            "reading": reading}


DERIVED = [
    _derived("tbench", "throughput", "throughput", "uc", "wc",
             "above 1: WC is the slowest buffer type (the seed's order)"),
    _derived("kbuild", "real_ms", "real time", "wc", "wb",
             "above 1: WC builds slower than WB"),
    _derived("kbuild", "real_ms", "real time", "uc", "wb",
             "above 1: UC builds slower than WB"),
    _derived("kbuild", "real_ms", "real time", "uc", "wc",
             "below 1: WC is the slowest buffer type (the seed's order)"),
]


def conclusions(seeds):
    """Every conclusion: seeds_data's comparisons then DERIVED, each with
    its seed ratio ("seed_value")."""
    figs = {f["id"]: f for f in seeds["figures"]}
    out = []
    for c in list(seeds["comparisons"]) + DERIVED:
        c = dict(c)
        c["seed_value"] = seed_ratios.seed_ratio(figs, c["seed_ratio"])
        out.append(c)
    return out


def direction(ratio, tie=TIE):
    """-1 below 1, +1 above, 0 within tie of 1; None without a ratio."""
    if ratio is None:
        return None
    if abs(ratio - 1) <= tie:
        return 0
    return 1 if ratio > 1 else -1


DIR_TEXT = {-1: "<1", 0: "=1", 1: ">1", None: "n/a"}


def evaluate(results, concl):
    """{conclusion id: modelled ratio or None} for results with model
    figures attached (model_lines.attribute)."""
    out = {}
    for c in concl:
        num, _ = seed_ratios.find_ours(results, c["ours"]["numerator"])
        den, _ = seed_ratios.find_ours(results, c["ours"]["denominator"])
        out[c["id"]] = (seed_ratios.modelled_ratio(num, den)
                        if num is not None and den is not None else None)
    return out


def decided(points, concl):
    """The conclusions that the default point decides (a modelled
    ratio), in concl's order."""
    base = next(p for p in points if p["point"] == "default")
    return [c for c in concl if base["ratios"].get(c["id"]) is not None]


def analyse(points, concl):
    """Flip analysis of sweep points (dicts with param, point, value and
    ratios; one point "default" with param None stands for every
    parameter's default). Returns figure rows: dicts with param, point,
    value, conclusion, ratio, seed_ratio, direction, default_direction,
    flips (direction differs from the default's) and agrees (direction is
    the seed's)."""
    base = next(p for p in points if p["point"] == "default")
    rows = []
    for p in points:
        for c in decided(points, concl):
            r = p["ratios"].get(c["id"])
            d, d0 = direction(r), direction(base["ratios"][c["id"]])
            sd = direction(c["seed_value"])
            rows.append({
                "param": p["param"], "point": p["point"],
                "value": p["value"], "conclusion": c["id"], "ratio": r,
                "seed_ratio": c["seed_value"], "direction": DIR_TEXT[d],
                "default_direction": DIR_TEXT[d0],
                "flips": d is not None and d != d0,
                "agrees": d is not None and d == sd,
            })
    return rows


def flip_summary(rows):
    """{param: sorted conclusion ids that flip somewhere in its range}."""
    out = {}
    for r in rows:
        if r["param"] is None:
            continue
        out.setdefault(r["param"], set())
        if r["flips"]:
            out[r["param"]].add(r["conclusion"])
    return {k: sorted(v) for k, v in out.items()}


# --------------------------------------------------------------------------
# Running one point
# --------------------------------------------------------------------------
def session_script(mode, sizes):
    """The shell session of one point (tools/runner/session.py): tbench and
    kbuild in mode with the settings of sizes (SKIP: not run)."""
    lines = ["timeout %d" % BOOT_TIMEOUT_S, "expect ^kernel> $"]
    for exp in ("tbench", "kbuild"):
        if sizes[exp] == SKIP:
            continue
        lines += ["send run %s %s %s" % (exp, mode, sizes[exp]),
                  # a failed experiment or a refused setting (the
                  # shell's "error:" line) ends the session at once
                  "expect ^(=== experiment %s: (done|FAILED) ===|error: "
                  ".*)$" % exp,
                  "reject ^(=== experiment %s: FAILED|error: )" % exp,
                  "expect ^kernel> "]
    lines += ["send halt", "expect ^EXIT: STATUS=0", "exit"]
    return "\n".join(lines) + "\n"


def run_point(profile_text, name, tag, outdir, smp, mode, sizes):
    """Boot the model with profile_text as the profiles file (profile
    name) and the session; returns (results with model figures, host CPU
    seconds). Raises RuntimeError when the boot or its files fail."""
    os.makedirs(outdir, exist_ok=True)
    prof_path = os.path.join(outdir, tag + ".profiles.txt")
    with open(prof_path, "w", encoding="utf-8") as f:
        f.write(profile_text)
    log = os.path.join(outdir, tag + ".log")
    mout = log + ".model.jsonl"
    script = os.path.join(outdir, tag + ".session.txt")
    with open(script, "w", encoding="utf-8") as f:
        f.write(session_script(mode, sizes))
    for p in (log, mout):
        if os.path.exists(p):
            os.unlink(p)
    cmdline = "shell run=none loglevel=5 %s%s" % (
        model_profile.kernel_options(prof_path, name),
        " icount" if smp == 1 else "")
    iso, err = testrun.build_image(cmdline)
    if not iso:
        raise RuntimeError("image: %s" % err)
    launch = qemu.Launch(
        iso, smp=smp, mem=MEM, serial="file:" + log,
        plugins=[qemu.Plugin(MODEL_SO, ["profile=" + name,
                                        "profiles=" + prof_path,
                                        "out=" + mout])],
        timeout=BOOT_TIMEOUT_S,
        extra=["-icount", "shift=0"] if smp == 1 else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        ex, _, probs = session.run(launch, script, log,
                                   os.path.join(outdir, tag + ".ppm"))
    except (OSError, qemu.LaunchError, session.ScriptError) as e:
        # A QEMU that exits at once (a plugin refusing the profile)
        # drops the session's socket: say what QEMU said.
        raise RuntimeError("%s: the boot failed (%s): %s" % (
            tag, e, qemu_said(log))) from e
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime -
           before.ru_utime - before.ru_stime)
    if probs:
        raise RuntimeError("%s: %s (log %s)" % (tag, probs[0], log))
    data = results_mod.load(log)
    objs = model_lines.load(mout)
    bad = model_lines.doorbell_problems(objs)
    if bad:
        raise RuntimeError("%s: %s" % (tag, bad[0]))
    model_lines.attribute(data["results"], objs)
    return data["results"], cpu


def qemu_said(log, lines=2):
    """The last lines QEMU wrote in a session (its .qemu-session.txt),
    joined; "nothing" when there are none."""
    try:
        with open(log + ".qemu-session.txt", encoding="utf-8",
                  errors="replace") as f:
            said = [l.strip() for l in f if l.strip() and
                    not l.startswith("#")]
    except OSError:
        said = []
    return " / ".join(said[-lines:]) or "nothing"


def point_record(param, point, value, results, cpu, concl):
    """What a point keeps: its ratios and the seed-000 normalised
    figures (model_tracing.normalised)."""
    return {"param": param, "point": point, "value": value,
            "cpu_s": round(cpu, 1), "ratios": evaluate(results, concl),
            "normalised": model_tracing.normalised(
                model_tracing.slowdowns(results))}


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------
def fmt(r):
    return "n/a" if r is None else "%.4f" % r


def text_table(doc, concl):
    """The human table: a legend of the conclusions, one row per point,
    and what flips per parameter."""
    pts = doc["points"]
    dec = decided(pts, concl)
    rows = analyse(pts, concl)
    flip = {(r["param"], r["point"], r["conclusion"]): r["flips"]
            for r in rows}
    out = ["model sensitivity, profile %s (modelled, not measured): %s" %
           (doc["profile"], doc["config"]), "", "conclusions (seed ratio, "
           "default modelled ratio; a ratio within %.1f %% of 1 has no "
           "direction):" % (TIE * PCT)]
    base = next(p for p in pts if p["point"] == "default")
    for i, c in enumerate(dec):
        out.append("  C%-2d %-32s seed %s (%s), model %s (%s)%s" % (
            i + 1, c["id"], fmt(c["seed_value"]),
            DIR_TEXT[direction(c["seed_value"])],
            fmt(base["ratios"][c["id"]]),
            DIR_TEXT[direction(base["ratios"][c["id"]])],
            "" if direction(c["seed_value"]) ==
            direction(base["ratios"][c["id"]]) else "  DISAGREES"))
    out += ["", "%-15s %-7s %6s " % ("parameter", "point", "value") +
            " ".join("%8s" % ("C%d" % (i + 1)) for i in range(len(dec))),
            "(* : the direction differs from the default's)"]
    for p in pts:
        cells = []
        for c in dec:
            r = p["ratios"].get(c["id"])
            mark = "*" if flip.get((p["param"], p["point"], c["id"])) \
                else " "
            cells.append("%7s%s" % ("n/a" if r is None else "%.4f" % r,
                                    mark))
        out.append("%-15s %-7s %6s " % (p["param"] or "(all)",
                                        p["point"], p["value"]
                                        if p["value"] is not None else "") +
                   " ".join(cells))
    out += ["", "parameter ranges and what flips inside them:"]
    summ = flip_summary(rows)
    for key, info in doc["params"].items():
        flips = summ.get(key, [])
        out.append("  %-15s %s..%s (default %s): %s; %s" % (
            key, info["low"], info["high"], info["default"], info["why"],
            "flips " + ", ".join(flips) if flips else "nothing flips"))
    return "\n".join(out) + "\n", rows


def result_lines(doc, rows):
    """One machine-readable line per figure."""
    out = []
    for r in rows:
        out.append(TAG + json.dumps(dict(profile=doc["profile"], **r),
                                    sort_keys=False))
    return out


# The chart's y axis: d = (ratio - 1) in percent drawn at
# sign(d) * log10(1 + |d| / CHART_LIN_PCT), linear near 0 and
# logarithmic beyond, so that a flip of a tenth of a percent shows beside
# a change of 50 %.
CHART_LIN_PCT = 0.1
CHART_TICS_PCT = (0, 0.1, 1, 10, 100)
CHART_SIZE = (1400, 800)
CHART_SLOT = 4          # x positions per parameter (3 points and a gap)


def chart_y(d):
    """Where a ratio - 1 of d percent goes on the chart's axis."""
    import math
    return math.copysign(math.log10(1 + abs(d) / CHART_LIN_PCT), d)


def chart(doc, concl, base):
    """Each decided conclusion's modelled ratio - 1 (percent, on the
    axis of chart_y) at every sweep point, grouped by parameter: a
    direction flip crosses 0. Returns the written paths."""
    pts = doc["points"]
    dec = decided(pts, concl)
    default = next(p for p in pts if p["point"] == "default")
    params = list(doc["params"])
    xs, tics = {}, []
    for i, key in enumerate(params):
        group = [p for p in pts if p["param"] == key]
        group.append(dict(default, param=key,
                          value=doc["params"][key]["default"]))
        group.sort(key=lambda p: p["value"])
        for j, p in enumerate(group):
            x = CHART_SLOT * i + j
            xs.setdefault(key, []).append((x, p))
            tics.append('%s %d' % (plot.gp_str("%s=%s" % (key, p["value"])),
                                   x))
    blocks = []
    for n, c in enumerate(dec):
        rows = []
        for key in params:
            for x, p in xs.get(key, []):
                r = p["ratios"].get(c["id"])
                if r is not None:
                    rows.append("%d %r" % (x, chart_y((r - 1) * PCT)))
            rows.append("")                 # gnuplot: a break in the line
        blocks.append(("c%d" % n, rows))
    ytics = sorted({(s * t, chart_y(s * t)) for t in CHART_TICS_PCT
                    for s in (-1, 1)})
    preamble = [
        "set title %s" % plot.gp_title(
            "Which seed conclusions flip: profile %s" % doc["profile"],
            "modelled (not measured): %s" % doc["config"]),
        "set ylabel %s" % plot.gp_str("modelled ratio - 1 (%, log beyond "
                                      "0.1 %); crossing 0: the direction "
                                      "flips"),
        "set ytics (%s)" % ", ".join("%s %r" % (plot.gp_str("%g" % t), y)
                                     for t, y in ytics),
        "set xtics (%s) rotate by -60 font \",8\"" % ", ".join(tics),
        "set xrange [-1:%d]" % (CHART_SLOT * len(params) - 1),
        "set grid ytics", "set key below maxrows 3",
        "set xzeroaxis lt -1 lw 2", "set bmargin 14",
    ]
    plot_cmd = "plot " + ", ".join(
        "$c%d using 1:2 with linespoints title %s" %
        (n, plot.gp_str("C%d %s" % (n + 1, c["id"])))
        for n, c in enumerate(dec))
    script, paths = plot._script(preamble, blocks, plot_cmd, base)
    script = script.replace("size %d,%d" % (plot.CHART_WIDTH,
                                            plot.CHART_HEIGHT),
                            "size %d,%d" % CHART_SIZE)
    return plot._write(script, base, paths)


# --------------------------------------------------------------------------
def git_commit():
    p = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"],
                       capture_output=True, text=True)
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"]).returncode
    return (p.stdout.strip() or "unknown") + ("-dirty" if dirty else "")


def sweep(args, concl):
    with open(args.profiles, encoding="utf-8") as f:
        text = f.read()
    entries = profile_entries(text, args.profile)
    prof = {e["key"]: int(e["values"][0], 0) for e in entries
            if len(e["values"]) == 1}
    keys = assumed_keys(entries)
    if args.params is not None:
        want = [k for k in args.params.split(",") if k and k != "none"]
        unknown = [k for k in want if k not in [e["key"] for e in keys]]
        if unknown:
            raise ValueError("not an assumed key of %s: %s (assumed: %s)" %
                             (args.profile, ", ".join(unknown),
                              ", ".join(e["key"] for e in keys)))
        keys = [e for e in keys if e["key"] in want]
    mode = "full" if args.full else "quick"
    sizes = {"tbench": args.tbench, "kbuild": args.kbuild}
    doc = {"profile": args.profile, "commit": git_commit(),
           "config": "%d vCPU%s%s, %s mode, tbench %s, kbuild %s" % (
               args.smp, "s" if args.smp > 1 else "",
               " (QEMU -icount)" if args.smp == 1 else " (paced)", mode,
               sizes["tbench"], sizes["kbuild"]),
           "params": {}, "points": []}
    outdir = os.path.join(args.out, args.profile)
    plan = [(None, "default", None, text)]
    for e in keys:
        vals, why = sweep_values(e, prof)
        lo = min(v for _, v in vals)
        hi = max(v for _, v in vals)
        doc["params"][e["key"]] = {"default": prof[e["key"]], "low": lo,
                                   "high": hi, "why": why}
        for point, v in vals:
            if point != "default":
                plan.append((e["key"], point, v, with_value(text, e, v)))
    print("model sensitivity: profile %s, commit %s, %s; %d points" %
          (args.profile, doc["commit"], doc["config"], len(plan)),
          flush=True)
    for n, (key, point, v, ptext) in enumerate(plan):
        tag = "default" if key is None else "%s-%s" % (key, point)
        t0 = time.monotonic()
        res, cpu = run_point(ptext, args.profile, "smp%d-%s" % (args.smp,
                                                                tag),
                             outdir, args.smp, mode, sizes)
        doc["points"].append(point_record(key, point, v, res, cpu, concl))
        print("  %d/%d %s%s: %.0f s CPU, %.0f s wall" % (
            n + 1, len(plan), tag, "" if v is None else "=%d" % v, cpu,
            time.monotonic() - t0), flush=True)
    return doc


def normalised_lines(doc):
    """The seed-000 normalised figures of the default point."""
    base = next(p for p in doc["points"] if p["point"] == "default")
    out = ["seed 000 normalised at the default ((X - WB) / (WB - off), "
           "modelled cycles per operation):"]
    for n in base["normalised"]:
        out.append("  %-7s %-9s %s" % (n["experiment"], n["variant"],
                                       fmt(n["normalised"]) if n["valid"]
                                       else "invalid (pacing)"))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="xeon5400-2008")
    ap.add_argument("--profiles", default=PROFILES)
    ap.add_argument("--params", help="comma-separated assumed keys (default "
                    "all; 'none': the default point only)")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--full", action="store_true",
                    help="the experiments' full mode (every CPU)")
    ap.add_argument("--tbench", default=SIZES["tbench"],
                    help="tbench's settings (default %(default)s; "
                    "none: not run)")
    ap.add_argument("--kbuild", default=SIZES["kbuild"],
                    help="kbuild's settings (default %(default)s; "
                    "none: not run)")
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--json", help="keep the points here (default "
                    "OUT/PROFILE-smpN.json)")
    ap.add_argument("--from-json", help="redraw from a kept sweep")
    ap.add_argument("--seeds", default=SEEDS)
    args = ap.parse_args(argv)
    with open(args.seeds, encoding="utf-8") as f:
        concl = conclusions(json.load(f))
    try:
        if args.from_json:
            with open(args.from_json, encoding="utf-8") as f:
                doc = json.load(f)
            path = args.from_json
        else:
            doc = sweep(args, concl)
            path = args.json or os.path.join(
                args.out, "%s-smp%d.json" % (args.profile, args.smp))
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1)
    except (OSError, ValueError, RuntimeError, model_lines.ModelError) as e:
        print("model_sensitivity: %s" % e, file=sys.stderr)
        return 1
    text, rows = text_table(doc, concl)
    sys.stdout.write(text)
    print("\n".join(normalised_lines(doc)))
    base = os.path.splitext(path)[0]
    if doc["params"]:
        try:
            paths = chart(doc, concl, base)
            print("chart: %s" % ", ".join(paths))
        except plot.GnuplotMissing:
            print("chart skipped: gnuplot is not installed",
                  file=sys.stderr)
        except RuntimeError as e:
            print("chart failed: %s" % e, file=sys.stderr)
            return 1
    print("\n".join(result_lines(doc, rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
