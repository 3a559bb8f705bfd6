"""The cache-model plugin's @@MODEL lines (docs/cachemodel.md): parsing
them, and attributing their regions to the @@RESULT figures of the serial
log. The checks over them are tools/model/model_checks.py, the tracing
slowdowns tools/model/model_tracing.py, the commands tools/model/model.py.

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

"""

import json
import re
import statistics

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
