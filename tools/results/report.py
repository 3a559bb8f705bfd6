#!/usr/bin/env python3
"""A Markdown report of a benchmark run, with the seeds side by side.

    report.py INPUT -o report.md [--charts DIR | --no-charts]
              [--seeds seeds_data.json] [--title TITLE]

INPUT is a serial log or the JSON written by results.py. The report has:
the environment; a plain statement when the platform does not model
caches (QEMU TCG); one table per experiment; charts drawn by plot.py
(skipped, with a note, when gnuplot is missing); and the seeds' published
figures as ratios next to the same ratios measured here. Absolute numbers
are never compared: the seeds ran on 2005-2009 machines. Standard library
only.
"""

import argparse
import json
import os
import sys

from tools.results import plot
from tools.results import results
from tools.results import seed_ratios

HERE = os.path.dirname(os.path.abspath(__file__))

DEFAULT_SEEDS = os.path.join(HERE, "seeds_data.json")
DEFAULT_TITLE = "Benchmark report"
NUM_DECIMALS = 3

NO_CACHES_STATEMENT = (
    "**This platform does not model caches** (QEMU TCG). Cache hits and "
    "misses, non-temporal stores and memory types (WB/WC/UC) cost nothing "
    "extra here, so every figure that depends on them (copy consumer and "
    "bystander costs, trace buffers by memory type, LLC counts) says "
    "nothing about real hardware. Only ratios of instruction work are "
    "meaningful; run under KVM or on a real machine for cache effects.")

ENV_ROWS = (
    ("cpu_model", "CPU model"),
    ("hypervisor", "Hypervisor"),
    ("caches_modelled", "Caches modelled"),
    ("cpus_online", "CPUs online"),
    ("ram_bytes", "RAM"),
    ("tsc_hz", "TSC"),
    ("tsc_source", "TSC source"),
    ("pmu", "PMU"),
    ("memtypes_honoured", "Memory types honoured"),
    ("kernel_version", "Kernel version"),
    ("git_hash", "Git hash"),
    ("cmdline", "Command line"),
    ("mode", "Mode"),
)

MIB = 1 << 20
MHZ = 1000000


def fmt_num(v):
    """A number for a table: integers as such, else up to 3 decimals."""
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    s = "%.*f" % (NUM_DECIMALS, v)
    return s.rstrip("0").rstrip(".") if "." in s else s


def fmt_ratio(r):
    return "n/a" if r is None else "%.3f" % r


def md_escape(s):
    """Text safe inside a Markdown table cell."""
    return str(s).replace("\\", "\\\\").replace("|", "\\|")\
        .replace("\n", " ").replace("\r", " ")


def env_value(env, key):
    v = env.get(key)
    if key == "ram_bytes":
        return "%d MiB" % (v // MIB)
    if key == "tsc_hz":
        return "%.3f MHz" % (v / MHZ)
    if key == "hypervisor" and v == "none":
        return "none (bare metal)"
    if key == "mode" and v == "icount":
        return "icount (deterministic: one TSC tick per instruction)"
    if isinstance(v, bool):
        return "yes" if v else "**no**" if key == "caches_modelled" else "no"
    return v if v != "" else "(empty)"


def caches_modelled(envs):
    return all(e["caches_modelled"] for e in envs)


def section_env(envs):
    out = ["## Environment", ""]
    if len(envs) == 1:
        out += ["| field | value |", "|---|---|"]
        for key, label in ENV_ROWS:
            out.append("| %s | %s |" % (label, md_escape(env_value(envs[0],
                                                                    key))))
    else:
        out.append("| field | " + " | ".join("boot %d" % (i + 1)
                                             for i in range(len(envs))) +
                   " |")
        out.append("|---|" + "---|" * len(envs))
        for key, label in ENV_ROWS:
            out.append("| %s | %s |" % (label, " | ".join(
                md_escape(env_value(e, key)) for e in envs)))
    return out + [""]


def experiments_in_order(res):
    seen = []
    for r in res:
        if r["experiment"] not in seen:
            seen.append(r["experiment"])
    return seen


def model_warnings(model):
    """Why the model's figures may not be what they claim: the plugin's
    problems that results.py recorded (doorbell errors, no summary)."""
    probs = model.get("problems")
    if probs is None:             # written before results.py kept them
        summ = model.get("summary") or {}
        n = summ.get("doorbell_errors")
        probs = (["no summary line: QEMU did not end normally"]
                 if not summ else
                 ["%d doorbell error(s)" % n] if n else [])
    if not probs:
        return []
    return ["> **WARNING: the cache model's figures are not trustworthy "
            "in this run**: %s. A region around a command the plugin "
            "refused is not the region the kernel measured "
            "(docs/cachemodel.md)." % "; ".join(md_escape(p)
                                                 for p in probs), ""]


def model_note(model):
    """The statement a report with cache-model figures starts with."""
    return ("**Caches: modelled (profile %s)** by the cache-model QEMU "
            "plugin (docs/cachemodel.md); memory types: honoured (by the "
            "model). The measured columns stay TCG's; the \"modelled\" "
            "columns are the model's cycles per iteration of the same "
            "repetitions: a model of a %s-class machine, not a hardware "
            "measurement.%s" % (
                model["profile"], model["profile"],
                "" if model.get("hello") else
                " WARNING: the kernel never said hello to the model."))


MIB = 1 << 20


def model_state_line(model):
    """The model's state from the plugin's summary line, if it wrote one."""
    summ = model.get("summary") or {}
    if "state_bytes" not in summ:
        return []
    return ["Model state: %.1f MiB (the plugin's summary line; the goal is "
            "at most 64 MiB). What the model costs against plain TCG: "
            "`make model-cost MODEL=%s`, shown below when the report is "
            "given its record (`--cost`)." %
            (summ["state_bytes"] / MIB, model["profile"]), ""]


def section_cost(cost):
    """The record of tools/model/model_cost.py: plain against modelled boots,
    with the callbacks-only boot (the floor) beside them when it was run."""
    pairs = cost["pairs"]
    floor = all("floor_cpu_s" in p for p in pairs)
    out = ["## Cost of the model", "",
           "`tools/model/model_cost.py` (`make model-cost MODEL=%s`): the "
           "boot `%s` (%d CPUs) under plain TCG and, as `%s`, under the "
           "model, QEMU's CPU time (user + system) and wall time; load "
           "average at the end %s. The goal is at most 5x, with at most "
           "64 MiB of model state." % (
               cost["profile"], cost["cmdline"], cost["cpus"],
               cost.get("model_cmdline",
                        cost["cmdline"] + " cachemodel=" + cost["profile"]),
               " / ".join("%.2f" % x for x in cost["load_average"])),
           ""]
    if floor:
        out += ["Callbacks only: the plugin with `model=off`, the same "
                "callbacks returning at once, the floor no model behind "
                "them can go below.", ""]
    out += ["| pair | plain CPU |" + (" callbacks only CPU | floor ratio |"
                                      if floor else "") +
            " modelled CPU | CPU ratio | plain wall | modelled wall | "
            "wall ratio |",
            "|--:|--:|" + ("--:|--:|" if floor else "") +
            "--:|--:|--:|--:|--:|"]
    tot = {k: 0.0 for k in pairs[0]}
    for i, p in enumerate(pairs, 1):
        for k in tot:
            tot[k] += p[k]
        out.append(cost_row(str(i), p, floor))
    out.append(cost_row("all", tot, floor))
    out += ["", "Model state: %.1f MiB (profile %s)." %
            (cost["state_bytes"] / MIB, cost["profile"]), ""]
    exps = cost.get("experiments") or {}
    if exps:
        cpu = all("model_cpu_s" in e for e in exps.values())
        out += ["Per experiment, summed over the pairs (from its "
                "`=== experiment` line to its `done` line): wall time" +
                (", and QEMU's CPU time over the same span" if cpu else "") +
                ":", "",
                "| experiment | plain wall | modelled wall | ratio |" +
                (" plain CPU | modelled CPU | CPU ratio |" if cpu else ""),
                "|---|--:|--:|--:|" + ("--:|--:|--:|" if cpu else "")]
        for name in sorted(exps, key=lambda n: -exps[n]["model_wall_s"]):
            e = exps[name]
            row = "| %s | %.1f s | %.1f s | %s |" % (
                name, e["plain_wall_s"], e["model_wall_s"],
                ratio(e["model_wall_s"], e["plain_wall_s"]))
            if cpu:
                row += " %.1f s | %.1f s | %s |" % (
                    e["plain_cpu_s"], e["model_cpu_s"],
                    ratio(e["model_cpu_s"], e["plain_cpu_s"]))
            out.append(row)
        out.append("")
    return out


def ratio(num, den):
    """num / den as "N.Nx", or "n/a" when den is not positive."""
    return "%.1fx" % (num / den) if den > 0 else "n/a"


def cost_row(name, p, floor=False):
    row = "| %s | %.1f s |" % (name, p["plain_cpu_s"])
    if floor:
        row += " %.1f s | %s |" % (p["floor_cpu_s"],
                                   ratio(p["floor_cpu_s"], p["plain_cpu_s"]))
    return row + " %.1f s | %s | %.1f s | %.1f s | %s |" % (
        p["model_cpu_s"], ratio(p["model_cpu_s"], p["plain_cpu_s"]),
        p["plain_wall_s"], p["model_wall_s"],
        ratio(p["model_wall_s"], p["plain_wall_s"]))


def section_results(res, charts, chart_note, report_dir, model=None):
    out = ["## Results", ""]
    if not res:
        return out + ["No @@RESULT lines in this log.", ""]
    out += ["Figures are the median of n repetitions; spread is "
            "(max - min) / median.", ""]
    if model:
        out += ["Modelled columns: cycles, ns and LLC misses per "
                "iteration on the cache model, profile %s (median over the "
                "same repetitions; an iteration is the figure's own unit: "
                "a KiB for copy, a request for tbench). For work spread "
                "over several paced vCPUs (a region over every CPU) the "
                "cycles divided are the region's elapsed modelled time; "
                "otherwise its CPUs' busy cycles (instructions x CPI + "
                "memory). Figures from vCPUs that were not paced, or "
                "whose pacing broke, are marked INVALID."
                % md_escape(model["profile"]), ""]
    if chart_note:
        out += [chart_note, ""]
    for exp in experiments_in_order(res):
        rows = [r for r in res if r["experiment"] == exp]
        modelled = any("model" in r for r in rows)
        mhead = (" modelled cycles/iter (profile %s) | modelled ns/iter | "
                 "modelled LLC misses/iter |" %
                 md_escape(model["profile"])) if modelled else ""
        out += ["### %s" % md_escape(exp), "",
                "| variant | metric | unit | cpus | clients | size | min | "
                "median | max | spread | n |" + mhead,
                "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|" +
                ("--:|--:|--:|" if modelled else "")]
        for r in rows:
            m = r.get("model")
            mcols = ""
            if modelled:
                mcols = (" %s | %s | %s |" % (
                    modelled_cell(m, fmt_num(m["cycles_per_iter"])),
                    fmt_num(m["ns_per_iter"]),
                    fmt_num(m["llc_misses_per_iter"])) if m else " | | |")
            out.append("| %s | %s | %s | %d | %s | %s | %s | %s | %s | "
                       "%s | %d |" % (
                           md_escape(r["variant"]), md_escape(r["metric"]),
                           md_escape(r["unit"]), r["cpus"],
                           r.get("clients", ""), r.get("size", ""),
                           fmt_num(r["min"]), fmt_num(r["median"]),
                           fmt_num(r["max"]),
                           spread_cell(r), r["n"]) + mcols)
        out.append("")
        noisy = sum(1 for r in rows if r.get("noisy"))
        if noisy:
            out += [NOISY_NOTE % (noisy, len(rows)), ""]
        for cexp, metric, paths in charts:
            if cexp != exp:
                continue
            png = [p for p in paths if p.endswith(".png")]
            svg = [p for p in paths if p.endswith(".svg")]
            img = (png or svg)[0]
            rel = os.path.relpath(img, report_dir)
            out.append("![%s: %s](%s)" % (md_escape(exp), md_escape(metric),
                                          rel.replace(os.sep, "/")))
            if svg and png:
                out.append("")
                out.append("(SVG: [%s](%s))" % (
                    os.path.basename(svg[0]),
                    os.path.relpath(svg[0], report_dir).replace(os.sep,
                                                                "/")))
            out.append("")
    return out


def section_missing(missing):
    """Figures the run did not measure (@@MISSING): skipped on this
    machine, or cut short. Empty when there are none."""
    if not missing:
        return []
    out = ["## Not measured", "",
           "These figures have no number in this run. Skipped: the machine "
           "lacks what the work needs, and the experiment said so before "
           "starting it. Cut short: the work started and stopped before "
           "it was done; the experiment failed.", "",
           "| experiment | variant | metric | status | reason |",
           "|---|---|---|---|---|"]
    for m in missing:
        out.append("| %s | %s | %s | %s | %s |" % (
            md_escape(m["experiment"]), md_escape(m["variant"]),
            md_escape(m["metric"]),
            "cut short" if m["status"] == "cut_short" else "skipped",
            md_escape(m["reason"])))
    return out + [""]


# Under a table with noisy figures (the kernel's "noisy" flag).
NOISY_NOTE = ("**%d of %d figures NOISY**: their repetitions spread more "
              "than the kernel's threshold (docs/output.md, \"Noise\"), "
              "so the host's load may have set them; do not read a "
              "difference into them.")


def spread_cell(r):
    """A figure's spread in percent, marked NOISY when the kernel flagged
    it."""
    spread = r.get("spread_pct")
    text = "n/a" if spread is None else "%.2f%%" % spread
    return text + " **NOISY**" if r.get("noisy") else text


def modelled_cell(m, text):
    """A modelled figure's cell: marked when the figure is invalid."""
    if m.get("valid", True):
        return text
    return "%s (INVALID: %s)" % (text, "%d pacing breaks" %
                                 m["pace_breaks"] if m.get("pace_breaks")
                                 else "not paced")


def section_seeds(seeds, res, cache_ok, model=None, missing=()):
    out = ["## Seeds side by side", "",
           "Each row divides two figures of one seed post and the same two "
           "figures of this run. Ratios only: the seeds' absolute numbers "
           "come from 2005-2009 machines and other workloads. Under each "
           "row, the spread ((max - min) / median) between the "
           "repetitions of its two figures.", ""]
    if not cache_ok:
        out += ["Rows that depend on cache behaviour are marked: on this "
                "platform caches are not modelled.", ""]
    mhead, mrule = "", ""
    if model:
        out += ["The modelled ratio divides the same two figures as "
                "modelled by the cache model (profile %s): a model, not "
                "a measurement. For a count (as the ia64 model's global "
                "purges) it is the ratio of the counts made in the "
                "modelled run per modelled cycle of their regions." %
                md_escape(model["profile"]), ""]
        mhead, mrule = " modelled ratio (profile %s) |" % md_escape(
            model["profile"]), "--:|"
    out += ["| comparison | seed | seed ratio | our ratio | ours / seed |" +
            mhead + " reading | notes |",
            "|---|---|--:|--:|--:|" + mrule + "---|---|"]
    for r in seed_ratios.compare(seeds, res, cache_ok, missing):
        mcol = " %s |" % fmt_ratio(r["model_ratio"]) if model else ""
        out.append("| %s | %s | %s | %s | %s |%s %s | %s |" % (
            md_escape(r["title"]), r["seed"], fmt_ratio(r["seed_ratio"]),
            fmt_ratio(r["our_ratio"]), fmt_ratio(r["ours_over_seed"]),
            mcol, md_escape(r["reading"]), md_escape(r["notes"])))
        spread = seed_ratios.spread_line(r["num"], r["den"], model)
        if model and r["counts"]:
            counted = seed_ratios.model_spread(
                r["counts"][0], r["counts"][1],
                r["comparison"]["modelled_from"]["counter"])
            spread = (spread + "; " if spread else
                      "spread between repetitions: ") + counted
        if spread:
            out.append("| _%s_ | | | | |%s | |" % (
                md_escape(spread), " |" if model else ""))
    out += ["", "### Seed figures used", "",
            "| id | seed file | quantity | variant | value | unit | where |",
            "|---|---|---|---|--:|---|---|"]
    used = set()
    for c in seeds["comparisons"]:
        used.add(c["seed_ratio"]["numerator"])
        used.add(c["seed_ratio"]["denominator"])
    for f in seeds["figures"]:
        if f["id"] not in used:
            continue
        where = f["locator"]
        if f.get("quote"):
            where += ': "%s"' % f["quote"]
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            f["id"], f["file"], md_escape(f["quantity"]),
            md_escape(f["variant"]), fmt_num(f["value"]), md_escape(f["unit"]),
            md_escape(where)))
    return out + [""]


TRACING_GOAL_PCT = 5
SEED_SLOWDOWNS = ("s004_slowdown_prev", "s004_slowdown_0108",
                  "s004_slowdown_0110")


def section_tracing(res, seeds, model=None):
    """Tracing slowdowns the kernel counted (slowdown_insns, QEMU -icount)
    and the cache model's (model_tracing.slowdowns()), per traced variant;
    empty when the run has neither."""
    from tools.model import model_tracing
    counted = {(r["experiment"], r["variant"]): r for r in res
               if r["metric"] == "slowdown_insns"}
    per_op = {(r["experiment"], r["variant"]): r for r in res
              if r["metric"] == "insns_per_op"}
    modelled = {(m["experiment"], m["variant"]): m
                for m in model_tracing.slowdowns(res)}
    keys = []
    for k in list(per_op) + list(modelled):
        if k not in keys:
            keys.append(k)
    if not counted and all(m["slowdown_pct"] is None
                           for m in modelled.values()):
        return []                       # nothing traced to compare
    figs = {f["id"]: f for f in seeds["figures"]}
    quoted = ", ".join("%s %%" % fmt_num(figs[i]["value"])
                       for i in SEED_SLOWDOWNS if i in figs)
    out = ["## Tracing slowdown", "",
           "Slowdown: operations per instruction (counted) or per modelled "
           "cycle lost against `trace_off`, 1 - off / traced, as the seeds "
           "count throughput lost. The goal for `trace_wb` is under %d %%; "
           "the seeds measured %s on 8-core hardware (seed 004) and LTTng "
           "0.31 lost 49 %% (seed 000). Counted figures come from QEMU "
           "-icount (deterministic on one CPU), modelled ones from the "
           "cache model: neither is a hardware measurement." %
           (TRACING_GOAL_PCT, quoted or "their own figures"), ""]
    mhead = ""
    if model:
        mhead = (" modelled cycles/op (profile %s) | slowdown, modelled |" %
                 md_escape(model["profile"]))
    out += ["| experiment | variant | instructions/op (counted) | "
            "slowdown, counted |" + mhead,
            "|---|---|--:|--:|" + ("--:|--:|" if model else "")]
    for k in keys:
        c, p, m = counted.get(k), per_op.get(k), modelled.get(k)
        row = "| %s | %s | %s | %s |" % (
            md_escape(k[0]), md_escape(k[1]),
            fmt_num(p["median"]) if p else "",
            "%s %%" % fmt_num(c["median"]) if c else "")
        if model:
            row += " %s | %s |" % (
                modelled_cell(m, fmt_num(m["cycles_per_op"])) if m else "",
                "%.2f %%" % m["slowdown_pct"]
                if m and m["slowdown_pct"] is not None else "")
        out.append(row)
    return out + [""]


def section_seed000(res, seeds, model=None):
    """Seed 000's normalised WC and UC figures beside the modelled ones of
    this run (tools/model/model.py normalised), with the order of the three
    buffer types; empty without modelled tracing variants."""
    from tools.model import model_tracing
    if not model:
        return []
    rows = model_tracing.slowdowns(res)
    norm = model_tracing.normalised(rows)
    if not norm:
        return []
    figs = {f["id"]: f for f in seeds["figures"]}
    cpus = {r["experiment"]: r.get("cpus") for r in res
            if r["variant"] == model_tracing.TRACE_OFF and "model" in r}
    out = ["## Seed 000 normalised", "",
           "Tracing into WC or UC buffers: the extra cost over WB divided "
           "by WB's extra cost over no tracing, (X - WB) / (WB - off). "
           "Modelled on profile %s (modelled cycles per operation, not a "
           "measurement); the seed's from its own figures (tbench: "
           "throughput, inverted; kbuild: the cache-hot builds' real "
           "time)." % md_escape(model["profile"]), "",
           "| experiment | CPUs | variant | modelled cycles/op | normalised, "
           "modelled | normalised, seed 000 |",
           "|---|--:|---|--:|--:|--:|"]
    orders = []
    for exp in seed_ratios.SEED000_NORMALISED:
        mine = [n for n in norm if n["experiment"] == exp]
        if not mine:
            continue
        seed = seed_ratios.seed000_costs(figs, exp)
        for n in mine:
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                exp, cpus.get(exp, "") or "",
                seed_ratios.SEED000_LABEL[n["variant"]],
                modelled_cell(n, fmt_num(n["cycles_per_op"])),
                fmt_ratio(n["normalised"]) if n["valid"] else "invalid",
                fmt_ratio(seed_ratios.normalised_cost(seed, n["variant"])
                          if seed else None)))
        costs = {r["variant"]: r["cycles_per_op"] for r in rows
                 if r["experiment"] == exp}
        valid = all(n["valid"] for n in mine)
        orders.append("%s: modelled %s; seed 000 %s" % (
            exp,
            seed_ratios.cost_order(costs) if valid else
            "n/a (invalid figures)",
            seed_ratios.cost_order(seed) if seed else "n/a"))
    return out + ["", "Order, cheapest first: " + "; ".join(orders) + ".",
                  ""]


def build_report(data, seeds, charts=(), chart_note=None, report_dir=".",
                 title=DEFAULT_TITLE, source=None, cost=None):
    envs, res = data["envs"], data["results"]
    cache_ok = caches_modelled(envs)
    out = ["# " + title, ""]
    if source:
        out += ["Generated by tools/results/report.py from `%s`." % source, ""]
    model = data.get("model")
    if not cache_ok:
        out += ["> " + NO_CACHES_STATEMENT, ""]
    if model:
        out += ["> " + model_note(model), ""]
        out += model_warnings(model)
        out += model_state_line(model)
    out += section_env(envs)
    missing = data.get("missing", [])
    out += section_results(res, charts, chart_note, report_dir, model)
    out += section_missing(missing)
    out += section_tracing(res, seeds, model)
    out += section_seed000(res, seeds, model)
    out += section_seeds(seeds, res, cache_ok, model, missing)
    if cost:
        out += [""] + section_cost(cost)
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description="Markdown benchmark report.")
    ap.add_argument("input", help="serial log or results.py JSON")
    ap.add_argument("-o", "--output", required=True, help="report.md")
    ap.add_argument("--charts", help="draw charts into this directory")
    ap.add_argument("--no-charts", action="store_true")
    ap.add_argument("--seeds", default=DEFAULT_SEEDS)
    ap.add_argument("--title", default=DEFAULT_TITLE)
    ap.add_argument("--cost", help="tools/model/model_cost.py's record "
                    "(build/cost/cost.json): adds the model's cost")
    args = ap.parse_args(argv)

    try:
        data = results.load(args.input)
    except results.LogError as e:
        print("%s:%d: %s" % (args.input, e.line, e.message), file=sys.stderr)
        return 1
    if not data["envs"]:
        print("%s: no @@ENV header: not a benchmark log" % args.input,
              file=sys.stderr)
        return 1
    with open(args.seeds, encoding="utf-8") as f:
        seeds = json.load(f)
    cost = None
    if args.cost:
        try:
            with open(args.cost, encoding="utf-8") as f:
                cost = json.load(f)
            if not cost.get("pairs"):
                raise ValueError("no pairs")
        except (OSError, ValueError) as e:
            print("%s: not a model_cost.py record (%s)" % (args.cost, e),
                  file=sys.stderr)
            return 1

    report_dir = os.path.dirname(os.path.abspath(args.output))
    charts, chart_note = [], None
    if not args.no_charts:
        chart_dir = args.charts or os.path.join(report_dir, "charts")
        try:
            charts = plot.auto_charts(data["results"], chart_dir,
                                      envs=data["envs"])
        except plot.GnuplotMissing:
            chart_note = "Charts skipped: gnuplot is not installed."
            print("report: gnuplot not found; charts skipped",
                  file=sys.stderr)
        except RuntimeError as e:
            chart_note = "Charts skipped: %s" % e
            print("report: %s" % e, file=sys.stderr)

    text = build_report(data, seeds, charts, chart_note, report_dir,
                        args.title, os.path.basename(args.input), cost)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
