"""The checks on a run's @@MODEL lines that tests/boot.cfg's model_check
names (tools/model/model.py check-*; docs/cachemodel.md): calibration
against the profile, pacing of several vCPUs, two runs identical, and the
falseshare and copy directions.

Python 3 standard library only.
"""

import json
import statistics
import sys

from tools.model.model_lines import (PER_CPU_VARIANT_RE, attribute,
                                     doorbell_problems, info, region_valid,
                                     regions)
from tools.model.model_profile import read_profile

# Calibration: modelled per-load latency within this fraction of the
# profile's number (the loop's own few stack accesses dilute it slightly).
CAL_TOLERANCE = 0.02
LINE_BYTES = 64
KIB = 1024


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


def check_pacing(objs, out=sys.stdout, ordered=False):
    """A multi-vCPU run's repetitions under pacing: the run must be paced
    (and, with ordered, have ordered contended locked operations, at least
    one of which waited for another CPU),
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
    if ordered and not summ.get("ordered"):
        problems.append("ordering was asked for (order=1) and is off")
    elif ordered and not summ.get("order_waits"):
        problems.append("ordering was on and no locked operation waited: "
                        "the pair's locks contend in every request")
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


# Two boots of one command paced serially (one CPU at a time, the turn
# passing by modelled clock: cachemodel/pace.h, invariant 9) must agree
# this closely, region by region, in elapsed modelled cycles per
# iteration: their order of events is the model's, not the host's
# (docs/cachemodel.md, "Serial pacing"). Far inside PACING_TOLERANCE.
SERIAL_TOLERANCE = 0.005


def compare_serial(a_objs, b_objs, out=sys.stdout):
    """Problems of two boots of one serially paced command: either run
    untrustworthy (doorbell_problems()), no region paced serially, no
    start aligned (DB_CMD_ALIGN), a serial region invalid or in one run
    only, or one whose elapsed cycles per iteration differ by more than
    SERIAL_TOLERANCE. Prints the worst difference."""
    problems = []
    runs = []
    for name, objs in (("first", a_objs), ("second", b_objs)):
        problems += ["%s run: %s" % (name, p)
                     for p in doorbell_problems(objs)]
        summ = info(objs)[2]
        if summ is not None and not summ.get("aligned"):
            problems.append("%s run: no start was aligned" % name)
        rs = {r["id"]: r for r in regions(objs)
              if r.get("scope") == "all" and r.get("serial")}
        if not rs:
            problems.append("%s run: no region was paced serially" % name)
        for r in rs.values():
            if not region_valid(r):
                problems.append("%s run: region %d (%s) is invalid" %
                                (name, r["id"], r["label"]))
        runs.append(rs)
    a, b = runs
    if set(a) != set(b):
        problems.append("the runs have different serial regions (%d, %d)"
                        % (len(a), len(b)))
    worst, worst_id = 0.0, None
    for rid in sorted(set(a) & set(b)):
        x = a[rid]["elapsed"] / (a[rid]["iters"] or 1)
        y = b[rid]["elapsed"] / (b[rid]["iters"] or 1)
        d = abs(x - y) / min(x, y) if min(x, y) else 0.0
        if d > worst or worst_id is None:
            worst, worst_id = d, rid
        if d > SERIAL_TOLERANCE:
            problems.append("region %d (%s): %.0f and %.0f elapsed cycles "
                            "per iteration, %.3f %% apart (at most %.1f %%)"
                            % (rid, a[rid]["label"], x, y, 100.0 * d,
                               100.0 * SERIAL_TOLERANCE))
    if worst_id is not None:
        out.write("%d serial regions compared, worst %.3f %% apart "
                  "(region %d, %s)\n" % (len(set(a) & set(b)),
                                         100.0 * worst, worst_id,
                                         a[worst_id]["label"]))
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
    line = ("vCPUs paced, quantum %d cycles: %d waits, %d host stalls, "
            "%d pacing breaks%s" % (
                summ["paced"], summ["pace_waits"], summ["pace_stalls"],
                summ["pace_breaks"],
                " (regions spanning them are invalid)"
                if summ["pace_breaks"] else ""))
    if summ.get("ordered"):
        line += ("; contended locked operations in modelled-time order "
                 "(order=1): %d waits" % summ["order_waits"])
    if "pause_waits" in summ:
        line += ("; %d pauses: woken by a write %d, timeout %d, alone %d, "
                 "gave up %d, no sleep %d; %d cycles skipped" % (
                     summ["pause_waits"], summ["pw_write"],
                     summ["pw_timeout"], summ["pw_alone"],
                     summ["pw_gave_up"], summ["pw_none"],
                     summ["pw_skipped_cycles"]))
    return line


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




# Invalidations per packed increment the falseshare check asks for at
# least (see check_falseshare()).
FALSESHARE_MIN_PACKED = 0.5


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
    # Both CPUs increment side by side through every repetition, paced
    # at the quantum the experiment asks for (far under a hand-over):
    # every packed increment then takes the line from the other CPU,
    # 1.00 in every boot measured. At the default quantum a CPU runs a
    # quantum's worth of increments on the line it holds, 0.2 to 0.3
    # invalidations each (docs/cachemodel.md, falseshare).
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
