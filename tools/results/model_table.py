#!/usr/bin/env python3
"""The modelled figures of one run as a table for a terminal: what
`make run MODEL=<profile>` prints after the run (docs/output.md, "The
console and the log").

    python3 -m tools.results.model_table LOG MODEL.jsonl

LOG is the run's serial log (build/last-run.log), MODEL.jsonl the cache-
model plugin's file. The log is parsed and the model's figures attached by
tools/results/results.py (parse_log, merge_model), the cells formatted as
tools/results/report.py formats them; the table is headed MODELLED and names
the profile, one table per experiment, each figure's TCG median beside the
modelled cycles, ns and LLC misses per iteration. Exits 1 (saying why on
stderr) when the log or the model file cannot be read or is malformed (the
log's first bad line; tools/results/results.py lists them all).
Python 3 standard library only.
"""

import argparse
import sys

from tools.model import model_lines
from tools.results import results
from tools.results.report import fmt_num, modelled_cell


# The compact table's columns: heading, right-aligned.
MODEL_TABLE_COLUMNS = (("variant", False), ("metric", False),
                       ("unit", False), ("measured median (TCG)", True),
                       ("modelled cycles/iter", True),
                       ("modelled ns/iter", True),
                       ("modelled LLC misses/iter", True))
MODEL_TABLE_GAP = "  "


def model_table(res, model_info):
    """The modelled figures as text for a terminal: a heading that says
    MODELLED and names the profile, then per experiment the figures the
    model saw (measured median, marked NOISY when the kernel flagged it;
    modelled cycles, ns and LLC misses per iteration, an invalid figure
    marked as tools/results/report.py marks it).
    Figures the model did not see are counted, not listed."""
    profile = model_info["profile"]
    out = ["=== MODELLED figures: cache model, profile %s (a model of a "
           "%s-class machine, not a measurement of hardware; the tables "
           "above are TCG's timings) ===" % (profile, profile)]
    if not model_info.get("hello"):
        out.append("WARNING: the kernel never said hello to the model")
    for p in model_info.get("problems", ()):
        out.append("WARNING: %s" % p)
    order = []
    for r in res:
        if r["experiment"] not in order:
            order.append(r["experiment"])
    for exp in order:
        rows = [r for r in res if r["experiment"] == exp]
        seen = [r for r in rows if "model" in r]
        out.append("")
        if not seen:
            why = model_info.get("unattributed", {}).get(exp)
            out.append("%s: no modelled figures%s" %
                       (exp, " (%s)" % why if why else ""))
            continue
        table = [[h for h, _ in MODEL_TABLE_COLUMNS]]
        for r in seen:
            m = r["model"]
            table.append([r["variant"], r["metric"], r["unit"],
                          fmt_num(r["median"]) +
                          (" NOISY" if r.get("noisy") else ""),
                          modelled_cell(m, fmt_num(m["cycles_per_iter"])),
                          fmt_num(m["ns_per_iter"]),
                          fmt_num(m["llc_misses_per_iter"])])
        width = [max(len(row[i]) for row in table)
                 for i in range(len(MODEL_TABLE_COLUMNS))]
        out.append("%s (MODELLED, profile %s)" % (exp, profile))
        for row in table:
            out.append(MODEL_TABLE_GAP.join(
                cell.rjust(w) if right else cell.ljust(w)
                for cell, w, (_, right) in zip(row, width,
                                               MODEL_TABLE_COLUMNS)).rstrip())
        if len(seen) < len(rows):
            out.append("(%d more figure(s) of %s not seen by the model)" %
                       (len(rows) - len(seen), exp))
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name,
        description="Print a run's modelled figures as a table.")
    ap.add_argument("log", help="the run's serial log")
    ap.add_argument("model", help="the cache-model plugin's file")
    args = ap.parse_args(argv)
    try:
        res = results.load(args.log)["results"]
        info = results.merge_model(res, args.model)
    except (OSError, results.LogError, model_lines.ModelError) as e:
        print("model_table: %s" % e, file=sys.stderr)
        return 1
    sys.stdout.write(model_table(res, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
