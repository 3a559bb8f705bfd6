"""Tracing's modelled slowdowns (tools/model/model.py tracing;
docs/cachemodel.md): each trace variant of tbench and kbuild against
trace_off, seed 000's normalised figures, and their table.

Python 3 standard library only.
"""

from tools.model.model_lines import WC_CAUSES

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
    operations per cycle lost, as the seeds count throughput lost), and
    busy_slowdown_pct, the same on the CPUs' own cycles summed (the
    work; with paced vCPUs slowdown_pct divides the elapsed time, the
    critical path, so the two differ by the part of a variant's extra
    work that ran beside another CPU's), in result order. trace_off
    itself is listed with both None."""
    out = []
    for exp, metric in SLOWDOWN_BASIS.items():
        mine = [r for r in results if r["experiment"] == exp and
                r["metric"] == metric and "model" in r and
                r["variant"].startswith("trace_")]
        off = next((r for r in mine if r["variant"] == TRACE_OFF), None)
        if off is None:
            continue
        base = off["model"]["cycles_per_iter"]
        busy_base = off["model"].get("busy_cycles_per_iter", base)
        off_valid = off["model"].get("valid", True)
        for r in mine:
            m = r["model"]
            c = m["cycles_per_iter"]
            busy = m.get("busy_cycles_per_iter", c)
            own_valid = m.get("valid", True)
            out.append({
                "experiment": exp, "variant": r["variant"],
                "cycles_per_op": c, "insns_per_op": m["insns_per_iter"],
                "busy_per_op": busy,
                "basis": m.get("basis", "busy"),
                "valid": own_valid and off_valid,
                "invalid_why": invalid_why(m, own_valid, off_valid),
                "pace_breaks": m.get("pace_breaks", 0),
                **{k: m.get(k + "_per_iter") for k in MEMORY_COLUMNS},
                "slowdown_pct": (None if r is off or not c else
                                 PCT * (1 - base / c)),
                "busy_slowdown_pct": (None if r is off or not busy else
                                      PCT * (1 - busy_base / busy)),
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
             "cycles/op divides %s; busy/op: the CPUs' own cycles summed, "
             "busy sd: the slowdown in them" %
             ("the elapsed modelled time (paced vCPUs)"
              if any(r["basis"] == "elapsed" for r in rows) else
              "the busy cycles (one vCPU)"),
             "%-8s %-30s %12s %12s %12s %9s %9s  %s" % (
                 "exp", "variant", "cycles/op", "busy/op", "insns/op",
                 "slowdown", "busy sd", "valid")]

    def pct(v):
        return "" if v is None else "%8.2f%%" % v
    for r in rows:
        lines.append("%-8s %-30s %12.1f %12.1f %12.1f %9s %9s  %s" % (
            r["experiment"], r["variant"], r["cycles_per_op"],
            r["busy_per_op"], r["insns_per_op"], pct(r["slowdown_pct"]),
            pct(r["busy_slowdown_pct"]),
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
