#!/usr/bin/env python3
"""Read the cache-model plugin's @@MODEL lines (docs/cachemodel.md).

The plugin (cachemodel/plugin.c) writes one JSON object per line to its own
file: "start", "hello", one "region" per CPU per measured repetition,
a "doorbell_error" for each of the first few malformed commands, "total"
per CPU and a closing "summary". This module parses them, ties regions to
the @@RESULT figures of the serial log, and checks them:

    model.py summary MODEL.jsonl
    model.py check-doorbell MODEL.jsonl       (summary there, no errors?)
    model.py check-calibration MODEL.jsonl [--profiles cachemodel/profiles.txt]
    model.py compare A.jsonl B.jsonl          (identical region lines?)
    model.py check-falseshare LOG MODEL.jsonl (packed >> aligned?)
    model.py tracing LOG MODEL.jsonl          (trace variants' slowdown)
    model.py check-copy LOG MODEL.jsonl       (movnti spares the bystander?)
    model.py check-pacing MODEL.jsonl         (paced repetitions agree?)
    model.py kcmdline PROFILE [--profiles cachemodel/profiles.txt]
                                              (the kernel's options for it)

Attribution. The kernel labels regions with the experiment's name and the
benchmark harness marks every measured repetition, so the regions of one
experiment arrive in the order of its @@RESULT figures: a figure with n
repetitions owns the next n regions opened by its CPU (variant ".../cpuN":
CPU N; otherwise the CPU of the next region), and an aggregate over CPUs
(a variant V when V/cpuN exist) owns none. When the counts do not add up
the experiment's regions stay unattributed, never guessed.

Keyed regions. An experiment that times itself (not through the harness)
labels each region "EXPERIMENT|VARIANT|METRIC|SIZE" (SIZE: the figure's
size, 0 when it has none; METRIC may be several joined by "+", as
"throughput+ops", and so may VARIANT, for variants measured in one pass
over the same work). A figure with n repetitions owns the next n regions
of its key; the figures of one multi-metric or multi-variant key share
its regions. A
distribution timed in one pass (n samples of one event, as trace_cost's
event_cycles) owns the next region alone when that region ran exactly n
iterations. Keyed regions never enter the order-based attribution above.

Pacing. With more than one vCPU the plugin paces them by their modelled
clocks (docs/cachemodel.md, "Several CPUs: pacing by modelled time") and
every region line also carries "elapsed" (the global modelled clock at
its end minus at its start), "paced" (the quantum, 0 when not paced),
"pace_breaks" and "valid" (paced and never broken). A figure's modelled
cycles per iteration divide the elapsed time for a region over every CPU
(scope "all") of such a run, else the busy cycles (instructions x CPI +
memory, summed over the region's CPUs); the figure says which ("basis")
and carries the busy cycles beside it. A figure from any region that is
not valid is marked invalid, and the tracing command fails on it rather
than print it as valid.

Python 3 standard library only.
"""

import argparse
import json
import re
import statistics
import sys

PREFIX = "@@MODEL "
KINDS = ("start", "hello", "region", "doorbell_error", "total", "summary")
COUNTERS = ("insns", "loads", "stores", "l1_hits", "l1_misses", "l2_hits",
            "l2_misses", "llc_hits", "llc_misses", "invalidations",
            "transfers", "writebacks", "uncached", "wc_bursts",
            "wc_partials", "nt_stores", "clflushes", "locked", "fences",
            "mem_cycles", "cycles")
# Counters newer plugins add (absent from older files, then read as
# unknown): partial WC flushes by cause, summing to wc_partials.
WC_CAUSES = ("fence", "locked", "uncached", "evict")
OPTIONAL_COUNTERS = tuple("wc_partial_" + c for c in WC_CAUSES) + (
    "prefetches", "prefetch_useful", "prefetch_late", "bus_queued",
    "store_stalls", "bus_late", "line_queued", "causal_waits")
# Counters whose spread between repetitions a figure's model data carries
# beside its cycles' ("llc_misses_spread_pct"): the ones the report divides
# in place of a hardware counter (tools/results/seeds_data.json, "modelled_from").
SPREAD_COUNTERS = ("llc_misses",)
# Region timing of multi-vCPU runs (absent with one vCPU).
PACE_FIELDS = ("elapsed", "paced", "pace_breaks")
PER_CPU_VARIANT_RE = re.compile(r"^(.*)/cpu(\d+)$")
# Calibration: modelled per-load latency within this fraction of the
# profile's number (the loop's own few stack accesses dilute it slightly).
CAL_TOLERANCE = 0.02
LINE_BYTES = 64
KIB = 1024
# Keyed region labels: EXPERIMENT|VARIANT|METRIC|SIZE, VARIANT and METRIC
# may each name several joined by "+".
KEY_SEP = "|"
METRIC_SEP = "+"
VARIANT_SEP = "+"


class ModelError(Exception):
    pass


def parse_lines(lines, source="model"):
    """The objects of the @@MODEL lines; ModelError on a malformed one."""
    out = []
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if not line.startswith(PREFIX):
            raise ModelError("%s:%d: not a @@MODEL line" % (source, n))
        try:
            obj = json.loads(line[len(PREFIX):])
        except ValueError as e:
            raise ModelError("%s:%d: bad JSON: %s" % (source, n, e))
        if not isinstance(obj, dict) or obj.get("kind") not in KINDS:
            raise ModelError("%s:%d: unknown kind" % (source, n))
        if obj["kind"] in ("region", "total"):
            for key in COUNTERS + ("id", "cpu", "by", "iters"):
                if not isinstance(obj.get(key), int):
                    raise ModelError("%s:%d: '%s' missing or not an "
                                     "integer" % (source, n, key))
            for key in OPTIONAL_COUNTERS + PACE_FIELDS:
                if key in obj and not isinstance(obj[key], int):
                    raise ModelError("%s:%d: '%s' is not an integer" %
                                     (source, n, key))
            if "valid" in obj and not isinstance(obj["valid"], bool):
                raise ModelError("%s:%d: 'valid' is not a boolean" %
                                 (source, n))
        out.append(obj)
    return out


def load(path):
    with open(path, encoding="utf-8") as f:
        objs = parse_lines(f, path)
    if not objs or objs[0]["kind"] != "start":
        raise ModelError("%s: no start line (did the plugin load?)" % path)
    return objs


def info(objs):
    """profile, hello seen, summary (or None) of a parsed file."""
    start = objs[0]
    hello = any(o["kind"] == "hello" for o in objs)
    summary = next((o for o in objs if o["kind"] == "summary"), None)
    return start["profile"], hello, summary


def doorbell_problems(objs):
    """What makes a run's model lines untrustworthy, as sentences: no
    summary line (QEMU did not end normally: the file is cut short) or
    doorbell errors (commands the plugin refused, cachemodel/plugin_doorbell.c:
    the regions around them are not what the kernel measured). Empty
    when the run is clean."""
    _, _, summary = info(objs)
    if summary is None:
        return ["no summary line: QEMU did not end normally, the model "
                "file is incomplete"]
    n = summary.get("doorbell_errors")
    if not isinstance(n, int):
        return ["the summary line has no doorbell_errors count"]
    if n == 0:
        return []
    causes = summary.get("doorbell_error_causes") or {}
    by = ", ".join("%s %d" % (k, v) for k, v in sorted(causes.items()) if v)
    out = ["%d doorbell error(s)%s" % (n, " (%s)" % by if by else "")]
    for o in objs:
        if o["kind"] == "doorbell_error":
            out.append("doorbell error: cpu %s, %s at offset %#x, label "
                       "'%s'" % (o.get("cpu"), o.get("cause"),
                                 o.get("offset", 0), o.get("label", "")))
    return out


def merge_cpus(lines):
    """One region line from the per-CPU lines of an "all" region: every
    counter summed over the CPUs (the whole work, in CPU cycles), plus
    "cpus" (CPUs that ran) and "cycles_max" (the busiest CPU's cycles, a
    modelled elapsed time when the CPUs ran side by side)."""
    first = lines[0]
    out = dict(first)
    for k in COUNTERS:
        out[k] = sum(o[k] for o in lines)
    for k in OPTIONAL_COUNTERS:
        if all(k in o for o in lines):
            out[k] = sum(o[k] for o in lines)
    out["cpu"] = first["by"]
    out["cpus"] = len(lines)
    out["cycles_max"] = max(o["cycles"] for o in lines)
    # elapsed, paced and pace_breaks are the region's, on every line.
    if "valid" in first:
        out["valid"] = all(o.get("valid") for o in lines)
    return out


def regions(objs):
    """One line per region, in id order: for a region of scope "cpu" (the
    default) the line of the CPU that opened it; for scope "all" (work the
    opener handed to several CPUs) the sum of every CPU's line."""
    own, whole = [], {}
    for o in objs:
        if o["kind"] != "region":
            continue
        if o.get("scope") == "all":
            whole.setdefault(o["id"], []).append(o)
        elif o["cpu"] == o["by"]:
            own.append(o)
    own += [merge_cpus(ls) for ls in whole.values()]
    return sorted(own, key=lambda o: o["id"])


def region_basis(r):
    """What a region's modelled cycles per iteration divide: "elapsed"
    (the global modelled clock's advance) for a region over every CPU of a
    multi-vCPU run, else "busy" (its CPUs' own cycles)."""
    return ("elapsed" if "elapsed" in r and r.get("scope") == "all"
            else "busy")


def region_valid(r):
    """False for a region of a multi-vCPU run that was not paced or whose
    pacing broke; True otherwise (one vCPU needs no pacing)."""
    return r.get("valid", True)


def region_figures(r, freq_mhz):
    """Per-iteration figures of one region line: cycles_per_iter divides
    region_basis(r)'s cycles; busy_cycles_per_iter the busy cycles (summed
    over the CPUs of an "all" region; cycles_max_per_iter: its busiest
    CPU's); elapsed_per_iter the elapsed time (None with one vCPU)."""
    it = r["iters"] or 1
    cycles = r["elapsed"] if region_basis(r) == "elapsed" else r["cycles"]
    return {
        "cycles_per_iter": cycles / it,
        "busy_cycles_per_iter": r["cycles"] / it,
        "elapsed_per_iter": (r["elapsed"] / it if "elapsed" in r
                             else None),
        "insns_per_iter": r["insns"] / it,
        "cycles_max_per_iter": r.get("cycles_max", r["cycles"]) / it,
        "cpus": r.get("cpus", 1),
        "ns_per_iter": cycles / it * 1000.0 / freq_mhz,
        "l1_misses_per_iter": r["l1_misses"] / it,
        "llc_misses_per_iter": r["llc_misses"] / it,
        "prefetches_per_iter": r.get("prefetches", 0) / it,
        "invalidations_per_iter": r["invalidations"] / it,
        "transfers_per_iter": r["transfers"] / it,
        "uncached_per_iter": r["uncached"] / it,
        "wc_bursts_per_iter": r["wc_bursts"] / it,
        "wc_partials_per_iter": r["wc_partials"] / it,
        "fences_per_iter": r["fences"] / it,
        "locked_per_iter": r["locked"] / it,
        "bus_queued_per_iter": (r["bus_queued"] / it if "bus_queued" in r
                                else None),
        **{"wc_partial_%s_per_iter" % c: (r["wc_partial_" + c] / it
                                          if "wc_partial_" + c in r
                                          else None)
           for c in WC_CAUSES},
    }


def region_key(label):
    """(experiment, variant, metric, size) of a keyed label, else None."""
    parts = label.split(KEY_SEP)
    if len(parts) != 4 or not parts[3].isdigit():
        return None
    return parts[0], parts[1], parts[2], int(parts[3])


def region_spread_pct(figs, key="cycles_per_iter"):
    """Spread of the repetitions' modelled key (cycles per iteration by
    default), as the kernel's spread_pct ((max - min) / median, in %), or
    None with fewer than two repetitions or a zero median."""
    per = [f[key] for f in figs]
    mid = statistics.median(per)
    if len(per) < 2 or mid == 0:
        return None
    return 100.0 * (max(per) - min(per)) / mid


def set_model(res, rs, profile, freq):
    figs = [region_figures(r, freq) for r in rs]
    res["model"] = {
        "profile": profile,
        "regions": [r["id"] for r in rs],
        **{k: (None if any(f[k] is None for f in figs) else
               statistics.median(f[k] for f in figs)) for k in figs[0]},
        "basis": region_basis(rs[0]),
        "spread_pct": region_spread_pct(figs),
        **{"%s_spread_pct" % c: region_spread_pct(figs, c + "_per_iter")
           for c in SPREAD_COUNTERS},
        "valid": all(region_valid(r) for r in rs),
        "pace_breaks": sum(r.get("pace_breaks", 0) for r in rs),
        "paced": min((r["paced"] for r in rs if "paced" in r),
                     default=None),
    }


def attribute_keyed(results, keyed, profile, freq):
    """Attach keyed regions ({key: [regions in id order]}) to results.
    Returns {experiment: reason} for experiments with keyed regions that
    did not add up."""
    owner = {}                # (exp, one variant, one metric, size) -> key
    for k in keyed:
        for v in k[1].split(VARIANT_SEP):
            for m in k[2].split(METRIC_SEP):
                owner[(k[0], v, m, k[3])] = k
    cursor = {}
    served = {}               # key -> (variant, metric)s served at its cursor
    width = {}                # key -> repetitions of its current figures
    problems = {}
    for res in results:
        k = owner.get((res["experiment"], res["variant"], res["metric"],
                       res.get("size", 0)))
        if k is None:
            continue
        seen = served.setdefault(k, set())
        vm = (res["variant"], res["metric"])
        if vm in seen:                        # the variant's next run
            cursor[k] = cursor.get(k, 0) + width[k]
            seen.clear()
        seen.add(vm)
        width[k] = res["n"]
        pos = cursor.get(k, 0)
        rs = keyed[k][pos:pos + res["n"]]
        if (len(rs) != res["n"] and rs and res["n"] > 1 and
                rs[0]["iters"] == res["n"]):
            # A distribution from one pass (a latency per event): its n
            # samples are the n iterations of one region.
            rs = rs[:1]
            width[k] = 1
        if len(rs) != width[k]:
            problems[res["experiment"]] = (
                "%s: %d regions for %d repetitions" %
                (KEY_SEP.join(map(str, k)), len(rs), res["n"]))
            continue
        set_model(res, rs, profile, freq)
    for k, q in keyed.items():
        used = cursor.get(k, 0) + width.get(k, 0)
        if used != len(q) and k[0] not in problems:
            problems[k[0]] = ("%s: %d regions, %d taken by figures" %
                              (KEY_SEP.join(map(str, k)), len(q), used))
    return problems


def attribute(results, objs):
    """Attach modelled figures to results (list of @@RESULT dicts, in log
    order). Returns {experiment: reason} for experiments left out."""
    profile, _, _ = info(objs)
    freq = objs[0].get("freq_mhz") or 1000
    by_label = {}
    keyed = {}
    for r in regions(objs):
        k = region_key(r["label"])
        if k:
            keyed.setdefault(k, []).append(r)
        else:
            by_label.setdefault(r["label"].split("/")[0], []).append(r)
    skipped = attribute_keyed(results, keyed, profile, freq)
    keyed_exps = {k[0] for k in keyed}
    exps = []
    for res in results:
        if res["experiment"] not in exps:
            exps.append(res["experiment"])
    for exp in exps:
        regs = by_label.get(exp, [])
        # Figures keyed regions served are not in the order's count.
        mine = [r for r in results if r["experiment"] == exp and
                "model" not in r]
        if not regs:
            if exp not in keyed_exps:
                skipped[exp] = "no model regions"
            continue
        per_cpu = {}
        for r in regs:
            per_cpu.setdefault(r["by"], []).append(r)
        variants = {m["variant"] for m in mine}
        plan = []
        for res in mine:
            m = PER_CPU_VARIANT_RE.match(res["variant"])
            if m:
                plan.append((res, int(m.group(2))))
            elif any(v.startswith(res["variant"] + "/cpu")
                     for v in variants):
                continue                     # an aggregate: no regions
            else:
                plan.append((res, None))
        pos = {c: 0 for c in per_cpu}
        used = set()
        ok = True
        taken = []
        for res, cpu in plan:
            if cpu is None:
                free = [r for r in regs if r["id"] not in used]
                if not free:
                    ok = False
                    break
                cpu = free[0]["by"]
            q = per_cpu.get(cpu, [])
            n = res["n"]
            if pos.get(cpu, 0) + n > len(q):
                ok = False
                break
            rs = q[pos[cpu]:pos[cpu] + n]
            used.update(r["id"] for r in rs)
            taken.append((res, rs))
            pos[cpu] += n
        if not ok or any(pos[c] != len(per_cpu[c]) for c in per_cpu):
            skipped[exp] = ("%d regions do not match its figures' "
                            "repetitions" % len(regs))
            continue
        for res, rs in taken:
            set_model(res, rs, profile, freq)
    return skipped


# --------------------------------------------------------------------------
# Profiles (the same format as cachemodel/profile.c reads)
# --------------------------------------------------------------------------
LEVEL_KEYS = ("l1d", "l2", "llc")


def read_profile(path, name):
    prof, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                cur = line.strip("[]")
                continue
            if cur != name:
                continue
            key, *vals = line.split()
            vals = [int(v, 0) for v in vals]
            prof[key] = vals if key in LEVEL_KEYS else vals[0]
    if not prof:
        raise ModelError("%s: no profile %r" % (path, name))
    return prof


def kernel_options(path, name):
    """The kernel command-line options for a run under profile name:
    cachemodel=NAME and cachemodel.caches=, the profile's cache geometry
    (lib/cache_geometry.h: levels that exist, LEVEL:BYTES:WAYS). The
    profile file stays the one home of these numbers. Raises ModelError
    for an unknown profile or one without the levels."""
    prof = read_profile(path, name)
    levels = []
    for key in LEVEL_KEYS:
        if key not in prof or len(prof[key]) < 2:
            raise ModelError("%s: profile %r has no %s line" %
                             (path, name, key))
        size, ways = prof[key][0], prof[key][1]
        if size:
            levels.append("%s:%d:%d" % (key, size, ways))
    return "cachemodel=%s cachemodel.caches=%s" % (name, ",".join(levels))


def calibration_expectations(prof):
    """Per-load latency (mem_cycles per load) each chase must show."""
    return {
        "modelcal/chase-l1": prof["l1d"][2],
        "modelcal/chase-llc": prof["llc"][2],
        "modelcal/chase-mem": prof["mem_latency"],
        "modelcal/chase-uc": prof["uc_load"],
    }


def check_calibration(objs, profiles_path, out=sys.stdout):
    profile, hello, _ = info(objs)
    prof = read_profile(profiles_path, profile)
    regs = regions(objs)
    problems = []
    if not hello:
        problems.append("the kernel never said hello")
    out.write("calibration of profile %s (modelled cycles, per access)\n"
              % profile)
    out.write("%-22s %10s %10s  %s\n" % ("figure", "modelled", "profile",
                                        "verdict"))
    measured = {}
    for label, want in calibration_expectations(prof).items():
        rs = [r for r in regs if r["label"] == label]
        if not rs:
            problems.append("no regions labelled %s" % label)
            continue
        got = statistics.median(r["mem_cycles"] / r["loads"] for r in rs)
        measured[label] = got
        good = abs(got - want) <= CAL_TOLERANCE * want
        out.write("%-22s %10.2f %10d  %s\n" % (label, got, want,
                                               "ok" if good else "WRONG"))
        if not good:
            problems.append("%s: %.2f cycles per load, profile says %d" %
                            (label, got, want))
    if "modelcal/chase-l1" in measured and "modelcal/chase-uc" in measured:
        ratio = measured["modelcal/chase-uc"] / measured["modelcal/chase-l1"]
        want = prof["uc_load"] / prof["l1d"][2]
        good = abs(ratio - want) <= CAL_TOLERANCE * want
        out.write("%-22s %10.2f %10.2f  %s\n" % ("UC / WB (L1) ratio", ratio,
                                               want,
                                               "ok" if good else "WRONG"))
        if not good:
            problems.append("UC/WB ratio %.2f, profile says %.2f" %
                            (ratio, want))
    wc = [r for r in regs if r["label"] == "modelcal/wc-write"]
    if not wc:
        problems.append("no regions labelled modelcal/wc-write")
    for r in wc[:1]:
        kib = r["iters"] * LINE_BYTES / KIB
        per_kib = r["wc_bursts"] / kib if kib else 0
        good = per_kib == KIB / LINE_BYTES and r["wc_partials"] == 0
        out.write("%-22s %10.2f %10d  %s\n" % ("WC bursts per KiB", per_kib,
                                               KIB // LINE_BYTES,
                                               "ok" if good else "WRONG"))
        if not good:
            problems.append("WC: %.2f bursts per KiB, %d partial flushes" %
                            (per_kib, r["wc_partials"]))
    return problems


# Paced repetitions of one region must agree this closely in elapsed
# modelled cycles per iteration (docs/cachemodel.md, "Several CPUs:
# pacing by modelled time").
PACING_TOLERANCE = 0.02


def check_pacing(objs, out=sys.stdout):
    """A multi-vCPU run's repetitions under pacing: the run must be paced,
    every region over every CPU valid (paced, no break; a region whose
    pacing broke must say so) and holding locked operations (the pair's
    locks; parallel TCG reports them differently from one vCPU's), and
    the repetitions of each label within
    PACING_TOLERANCE of each other in elapsed cycles per iteration.
    Returns the problems."""
    _, _, summ = info(objs)
    problems = []
    if summ is None:
        return ["no summary line (did QEMU exit cleanly?)"]
    if summ.get("cpus", 1) < 2:
        return ["one vCPU: nothing to pace"]
    out.write(pacing_summary(summ) + "\n")
    if not summ.get("paced"):
        problems.append("the vCPUs were not paced")
    groups = {}
    for r in regions(objs):
        if r.get("scope") != "all":
            continue
        if "elapsed" not in r:
            problems.append("region %d has no elapsed time" % r["id"])
            continue
        if r.get("pace_breaks", 0) and r.get("valid"):
            problems.append("region %d: %d pacing breaks, yet marked "
                            "valid" % (r["id"], r["pace_breaks"]))
        if not r.get("locked"):
            # tbench's pair takes locks in every request: a paced region
            # without a locked operation lost parallel TCG's atomics,
            # which reach the plugin as stores only.
            problems.append("region %d (%s) counted no locked operation"
                            % (r["id"], r["label"]))
        if not region_valid(r):
            problems.append("region %d (%s) is invalid: %s" % (
                r["id"], r["label"], "%d pacing breaks" % r["pace_breaks"]
                if r.get("pace_breaks") else "not paced"))
        groups.setdefault(r["label"], []).append(r)
    compared = 0
    for label, rs in groups.items():
        if len(rs) < 2:
            continue
        per = [r["elapsed"] / (r["iters"] or 1) for r in rs]
        busy = [r["cycles"] / (r["iters"] or 1) for r in rs]
        spread = (max(per) - min(per)) / min(per) if min(per) else 0.0
        compared += 1
        out.write("%s: %d repetitions, elapsed cycles/iter %s (spread "
                  "%.2f %%), busy cycles/iter %s\n" % (
                      label, len(rs), " ".join("%.0f" % x for x in per),
                      100.0 * spread, " ".join("%.0f" % x for x in busy)))
        if spread > PACING_TOLERANCE:
            problems.append("%s: repetitions differ by %.2f %% (at most "
                            "%.0f %%)" % (label, 100.0 * spread,
                                          100.0 * PACING_TOLERANCE))
    if not compared:
        problems.append("no label with two repetitions over every CPU")
    return problems


def pacing_summary(summ):
    """One line on the pacing of a run, from its summary line."""
    if summ.get("cpus", 1) == 1:
        return "one vCPU: no pacing needed"
    if "paced" not in summ:
        return "vCPUs not paced (a plugin without pacing)"
    if not summ["paced"]:
        return ("vCPUs NOT paced (sync=0, or single-threaded TCG): "
                "multi-CPU figures are invalid")
    return ("vCPUs paced, quantum %d cycles: %d waits, %d host stalls, "
            "%d pacing breaks%s" % (
                summ["paced"], summ["pace_waits"], summ["pace_stalls"],
                summ["pace_breaks"],
                " (regions spanning them are invalid)"
                if summ["pace_breaks"] else ""))


def comparable(objs):
    """The lines that must repeat exactly from run to run."""
    return [json.dumps(o, sort_keys=True) for o in objs
            if o["kind"] in ("start", "hello", "region")]


def compare(a_objs, b_objs):
    """Problems of two runs that must have written identical region
    lines: either run untrustworthy (doorbell_problems()), no region
    line at all (nothing was compared), or the first line that differs.
    Returns (problems, lines compared)."""
    problems = []
    for name, objs in (("first", a_objs), ("second", b_objs)):
        problems += ["%s run: %s" % (name, p)
                     for p in doorbell_problems(objs)]
    nregions = [sum(o["kind"] == "region" for o in objs)
                for objs in (a_objs, b_objs)]
    if not any(nregions):
        problems.append("neither run has a region line: nothing to "
                        "compare")
    a, b = comparable(a_objs), comparable(b_objs)
    if a != b:
        diff = next((i for i, (x, y) in enumerate(zip(a, b))
                     if x != y), min(len(a), len(b)))
        problems.append("the runs differ from line %d of %d/%d "
                        "compared lines (%d/%d region lines)" %
                        (diff + 1, len(a), len(b), nregions[0],
                         nregions[1]))
    return problems, len(a)


# Tracing slowdowns: the figure whose modelled cycles per operation stand
# for an experiment's work (tbench: per request; kbuild: per file).
SLOWDOWN_BASIS = {"tbench": "throughput", "kbuild": "real_ms"}
TRACE_OFF = "trace_off"
PCT = 100.0


def invalid_why(m, own_valid, off_valid):
    """Why a slowdown figure is invalid (None when it is valid): its own
    region's pacing broke or was off, or only the trace_off region it is
    divided by is invalid."""
    if not own_valid:
        return ("%d pacing breaks" % m["pace_breaks"]
                if m.get("pace_breaks") else "not paced")
    if not off_valid:
        return TRACE_OFF + " is invalid"
    return None


def slowdowns(results):
    """Modelled slowdown of each traced variant against trace_off, from
    results with model figures attached (attribute() first): a list of
    dicts with experiment, variant, cycles_per_op, insns_per_op and
    slowdown_pct = 100 * (1 - off / variant) on modelled cycles (the
    operations per cycle lost, as the seeds count throughput lost), in
    result order. trace_off itself is listed with slowdown_pct None."""
    out = []
    for exp, metric in SLOWDOWN_BASIS.items():
        mine = [r for r in results if r["experiment"] == exp and
                r["metric"] == metric and "model" in r and
                r["variant"].startswith("trace_")]
        off = next((r for r in mine if r["variant"] == TRACE_OFF), None)
        if off is None:
            continue
        base = off["model"]["cycles_per_iter"]
        off_valid = off["model"].get("valid", True)
        for r in mine:
            m = r["model"]
            c = m["cycles_per_iter"]
            own_valid = m.get("valid", True)
            out.append({
                "experiment": exp, "variant": r["variant"],
                "cycles_per_op": c, "insns_per_op": m["insns_per_iter"],
                "busy_per_op": m.get("busy_cycles_per_iter", c),
                "basis": m.get("basis", "busy"),
                "valid": own_valid and off_valid,
                "invalid_why": invalid_why(m, own_valid, off_valid),
                "pace_breaks": m.get("pace_breaks", 0),
                **{k: m.get(k + "_per_iter") for k in MEMORY_COLUMNS},
                "slowdown_pct": (None if r is off or not c else
                                 PCT * (1 - base / c)),
            })
    return out


# Seed 000's normalisation: the extra cost of WC or UC buffers over WB,
# divided by WB's extra cost over no tracing.
NORMALISED_VARIANTS = ("trace_wc", "trace_uc")
TRACE_WB = "trace_wb"


def normalised(rows):
    """Seed 000's normalised figures from slowdowns() rows: for each
    experiment with trace_off, trace_wb and a variant of
    NORMALISED_VARIANTS, a dict with experiment, variant, cycles_per_op,
    valid and pace_breaks (of the three figures) and normalised =
    (variant - wb) / (wb - off) on modelled cycles per operation (None
    when WB costs no more than off), in rows' order."""
    out = []
    by = {(r["experiment"], r["variant"]): r for r in rows}
    for r in rows:
        exp = r["experiment"]
        off, wb = by.get((exp, TRACE_OFF)), by.get((exp, TRACE_WB))
        if r["variant"] not in NORMALISED_VARIANTS or not off or not wb:
            continue
        extra = wb["cycles_per_op"] - off["cycles_per_op"]
        out.append({"experiment": exp, "variant": r["variant"],
                    "cycles_per_op": r["cycles_per_op"],
                    "valid": r["valid"] and wb["valid"] and off["valid"],
                    "pace_breaks": max(x["pace_breaks"]
                                       for x in (r, wb, off)),
                    "normalised": ((r["cycles_per_op"] -
                                    wb["cycles_per_op"]) / extra
                                   if extra > 0 else None)})
    return out


# Where a variant's memory cycles go, per operation (model.py tracing).
MEMORY_COLUMNS = ("l1_misses", "llc_misses", "uncached", "fences", "locked",
                  "wc_bursts", "wc_partials") + tuple(
                      "wc_partial_" + c for c in WC_CAUSES) + (
                          "bus_queued",)
MEMORY_HEADS = dict(zip(MEMORY_COLUMNS, (
    "L1miss", "LLCmiss", "uncached", "fences", "locked", "WCburst",
    "WCpartial", "by:fence", "by:locked", "by:uncach", "by:evict",
    "busQueued")))


def slowdown_table(rows, profile):
    lines = ["tracing slowdown on the cache model (profile %s; modelled, "
             "not measured)" % profile,
             "cycles/op divides %s; busy/op: the CPUs' own cycles summed" %
             ("the elapsed modelled time (paced vCPUs)"
              if any(r["basis"] == "elapsed" for r in rows) else
              "the busy cycles (one vCPU)"),
             "%-8s %-30s %12s %12s %12s %9s  %s" % (
                 "exp", "variant", "cycles/op", "busy/op", "insns/op",
                 "slowdown", "valid")]
    for r in rows:
        sd = ("" if r["slowdown_pct"] is None else
              "%8.2f%%" % r["slowdown_pct"])
        lines.append("%-8s %-30s %12.1f %12.1f %12.1f %9s  %s" % (
            r["experiment"], r["variant"], r["cycles_per_op"],
            r["busy_per_op"], r["insns_per_op"], sd,
            "yes" if r["valid"] else "NO (%s)" % r["invalid_why"]))
    lines += ["", "per operation (WC partial flushes also by cause; "
              "busQueued: cycles waited for the bus, CPUs summed):",
              "%-8s %-30s " % ("exp", "variant") +
              " ".join("%9s" % MEMORY_HEADS[c] for c in MEMORY_COLUMNS)]
    for r in rows:
        lines.append("%-8s %-30s " % (r["experiment"], r["variant"]) +
                     " ".join("%9s" % ("n/a" if r[c] is None else
                                       "%.2f" % r[c])
                              for c in MEMORY_COLUMNS))
    return "\n".join(lines) + "\n"


# Invalidations per packed increment the falseshare check asks for at
# least (see check_falseshare()).
FALSESHARE_MIN_PACKED = 0.02


def check_falseshare(results, objs):
    """Packed counters must cost far more invalidations than aligned ones
    on the model. Returns (problems, text)."""
    skipped = attribute(results, objs)
    if "falseshare" in skipped:
        return ["falseshare: %s" % skipped["falseshare"]], ""
    inv = {}
    for res in results:
        if res["experiment"] != "falseshare" or "model" not in res:
            continue
        base = PER_CPU_VARIANT_RE.match(res["variant"])
        name = base.group(1) if base else res["variant"]
        inv.setdefault(name, []).append(
            res["model"]["invalidations_per_iter"])
    if "packed" not in inv or "aligned" not in inv:
        return ["falseshare: no packed/aligned figures with model data"], ""
    packed = sum(inv["packed"]) / len(inv["packed"])
    aligned = sum(inv["aligned"]) / len(inv["aligned"])
    text = ("falseshare on the model: %.3f invalidations per increment "
            "packed, %.3f aligned\n" % (packed, aligned))
    # A contended line moves once per hand-over; while the other CPU's
    # request is on its way (remote_latency), the owner goes on
    # incrementing, so a packed increment costs about (cycles per
    # increment / remote_latency) invalidations: 0.03 on core2-2007
    # (174-cycle hand-overs, a few cycles an increment).
    if not (packed >= FALSESHARE_MIN_PACKED and packed > 10 * aligned):
        return ["falseshare: packed %.3f is not >> aligned %.3f "
                "invalidations per increment" % (packed, aligned)], text
    return [], text


# The copy direction: a non-temporal copy must leave the bystander at
# most this fraction of an ordinary copy's modelled cost when the copy
# comes in pieces (docs/cachemodel.md: 0.31 on core2-2007).
COPY_NT_MAX_FRACTION = 0.5


def check_copy(results, objs):
    """In the copy experiment's interleaved scenario (a copy larger than
    the LLC in write()-sized pieces), the bystander must bring far fewer
    lines from memory (demand LLC misses plus the hardware prefetches it
    triggers) after movnti than after rep movsb on the model, and cost no
    more cycles (a sequential bystander's refetches are mostly hidden by
    the prefetcher, so the cycles differ less than the lines). Returns
    (problems, text)."""
    skipped = attribute(results, objs)
    if "copy" in skipped:
        return ["copy: %s" % skipped["copy"]], ""
    cyc = {}
    for res in results:
        if (res["experiment"] == "copy" and "model" in res and
                res["metric"] == "bystander_interleaved"):
            cyc[res["variant"]] = (res["model"]["cycles_per_iter"],
                                   res["model"]["llc_misses_per_iter"] +
                                   res["model"]["prefetches_per_iter"],
                                   res.get("size", 0))
    if "movnti" not in cyc or "rep_movsb" not in cyc:
        return ["copy: no bystander_interleaved figures of movnti and "
                "rep_movsb with model data"], ""
    nt, std = cyc["movnti"], cyc["rep_movsb"]
    text = ("copy on the model, %d bytes in pieces: the bystander costs "
            "%.1f cycles/KiB (%.2f lines from memory) after movnti, %.1f "
            "(%.2f) after rep_movsb\n" % (nt[2], nt[0], nt[1], std[0],
                                          std[1]))
    if not (std[1] > 0 and nt[1] <= COPY_NT_MAX_FRACTION * std[1]):
        return ["copy: movnti's bystander brings %.2f lines/KiB from "
                "memory, not below %.2f x rep_movsb's %.2f"
                % (nt[1], COPY_NT_MAX_FRACTION, std[1])], text
    if nt[0] > std[0]:
        return ["copy: movnti's bystander costs %.1f cycles/KiB, more than "
                "rep_movsb's %.1f" % (nt[0], std[0])], text
    return [], text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary", help="what a model file holds")
    s.add_argument("model")
    s = sub.add_parser("check-doorbell",
                       help="a summary line and no doorbell errors?")
    s.add_argument("model")
    s = sub.add_parser("check-calibration",
                       help="modelcal regions against the profile")
    s.add_argument("model")
    s.add_argument("--profiles", default="cachemodel/profiles.txt")
    s = sub.add_parser("compare", help="identical region lines?")
    s.add_argument("a")
    s.add_argument("b")
    s = sub.add_parser("check-copy",
                       help="movnti spares the bystander (pieces)?")
    s.add_argument("log")
    s.add_argument("model")
    s = sub.add_parser("check-pacing",
                       help="paced repetitions agree within 2 %%?")
    s.add_argument("model")
    s = sub.add_parser("kcmdline", help="kernel options for a profile")
    s.add_argument("profile")
    s.add_argument("--profiles", default="cachemodel/profiles.txt")
    s = sub.add_parser("check-falseshare",
                       help="packed >> aligned invalidations?")
    s.add_argument("log")
    s.add_argument("model")
    s = sub.add_parser("tracing",
                       help="modelled slowdown of tbench/kbuild's trace "
                            "variants over trace_off")
    s.add_argument("log")
    s.add_argument("model")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "summary":
            objs = load(args.model)
            profile, hello, summ = info(objs)
            print("profile %s, hello %s, %d region lines" %
                  (profile, "yes" if hello else "NO",
                   sum(o["kind"] == "region" for o in objs)))
            if summ:
                print("model state %.1f MiB, host time %.1f s" %
                      (summ["state_bytes"] / 2**20, summ["host_seconds"]))
                print(pacing_summary(summ))
            problems = doorbell_problems(objs)
        elif args.cmd == "check-doorbell":
            objs = load(args.model)
            problems = doorbell_problems(objs)
            if not problems:
                print("doorbell: no errors, %d hello(s), %d regions" %
                      (info(objs)[2]["hellos"], info(objs)[2]["regions"]))
        elif args.cmd == "kcmdline":
            print(kernel_options(args.profiles, args.profile))
            return 0
        elif args.cmd == "check-calibration":
            problems = check_calibration(load(args.model), args.profiles)
        elif args.cmd == "check-pacing":
            problems = check_pacing(load(args.model))
        elif args.cmd == "compare":
            a_objs, b_objs = load(args.a), load(args.b)
            problems, n = compare(a_objs, b_objs)
            if not problems:
                print("identical: %d lines (%d regions)" %
                      (n, sum(o["kind"] == "region" for o in a_objs)))
        else:
            from tools.results import result_log as results_mod
            envs, res, errs = results_mod.parse_log(args.log)
            if errs:
                raise ModelError("%s: %s" % (args.log, errs[0].message))
            objs = load(args.model)
            if args.cmd == "tracing":
                attribute(res, objs)
                rows = slowdowns(res)
                problems = [] if rows else [
                    "no trace_off figure with model data in %s" % args.log]
                bad = [r["variant"] for r in rows if not r["valid"]]
                if bad:
                    problems.append("invalid modelled figures (vCPUs not "
                                    "paced, or pacing broken): %s" %
                                    ", ".join(bad))
                sys.stdout.write(slowdown_table(rows, info(objs)[0]))
                for n in normalised(rows):
                    print("normalised (seed 000): %s %s %s" % (
                        n["experiment"], n["variant"],
                        "invalid" if not n["valid"] else
                        "n/a" if n["normalised"] is None else
                        "%.3f" % n["normalised"]))
            else:
                check = (check_copy if args.cmd == "check-copy"
                         else check_falseshare)
                problems, text = check(res, objs)
                sys.stdout.write(text)
    except (OSError, ModelError) as e:
        print("model: %s" % e, file=sys.stderr)
        return 1
    for p in problems:
        print("model: %s" % p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
