#!/usr/bin/env python3
"""Parse benchmark output out of a serial log into CSV and JSON.

The kernel prints one machine-readable line per figure (docs/output.md):

    @@ENV {"cpu_model":"...", ...}
    @@RESULT {"experiment":"copy","variant":"movnti", ...}
    @@MISSING {"experiment":"copy","variant":"*","status":"skipped", ...}

A @@MISSING line stands for figures that were not measured: "skipped"
(the machine lacks what the work needs; said before it started) or
"cut_short" (the work started and stopped before it was done). They
are kept apart from the results ("missing" in the JSON), never as
numbers.
Anything else in the log (boot messages, KTAP, tables, CRLF line ends,
garbage bytes from a real serial line) is ignored. A line that carries a
prefix but is not a valid object of the schema is an error: every such
line is reported as LOG:LINE: message on stderr and the exit status is 1.

    results.py LOG [--csv OUT.csv] [--json OUT.json] [--model MODEL.jsonl]
               [--model-table]

--model merges the cache-model plugin's file (tools/model.py): each
figure whose repetitions the model saw gets a "model" object (modelled
cycles per iteration and friends, profile named), and the JSON a "model"
section saying which profile ran, whether the kernel said hello and
the run's "problems" (doorbell errors, no summary line: printed as
warnings here, put at the top of tools/report.py's report);
the CSV then gains model_profile, model_cycles_per_iter and
model_llc_misses_per_iter columns. Experiments that time themselves
(copy, tbench, kbuild, pagecache_splice) label their regions by figure
(tools/model.py: keyed); regions over several CPUs are summed.
Modelled figures sit beside the measured ones, never in their place.
--model-table (with --model) prints, instead of the JSON, a compact
table per experiment of the modelled figures beside the measured median,
headed MODELLED with the profile: what `make run MODEL=<profile>` shows
after the run (docs/output.md).

With neither output option the JSON goes to stdout. Python 3 standard
library only; plot.py and report.py import this module.
"""

import argparse
import csv
import io
import json
import sys

# The log format lives in result_log.py; these names are part of this
# module's interface too (plot.py, report.py and the tests use them).
from result_log import (BOOL, CSV_FIELDS, LogError,  # noqa: F401
                        RESULT_OPTIONAL, RESULT_SCHEMA, SCHEMA_VERSION,
                        parse_lines, parse_log)


def load(path):
    """Results from a log or from results.py's JSON output.

    Returns {"envs": [...], "results": [...], "missing": [...]}; raises
    LogError (the first one) when a log holds malformed lines.
    """
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        out = {"envs": data["envs"], "results": data["results"],
               "missing": data.get("missing", [])}
        if "model" in data:
            out["model"] = data["model"]
        return out
    missing = []
    envs, results, errors = parse_log(path, missing)
    if errors:
        raise errors[0]
    return {"envs": envs, "results": results, "missing": missing}


def to_json(envs, results, model_info=None, missing=()):
    data = {"schema": SCHEMA_VERSION, "envs": envs, "results": results,
            "missing": list(missing)}
    if model_info is not None:
        data["model"] = model_info
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def merge_model(results, path):
    """Attach the model file's figures to results (tools/model.py);
    returns the JSON's "model" section. Raises OSError or
    model.ModelError."""
    import model
    objs = model.load(path)
    profile, hello, summary = model.info(objs)
    skipped = model.attribute(results, objs)
    return {"profile": profile, "hello": hello, "file": path,
            "summary": summary, "unattributed": skipped,
            "problems": model.doorbell_problems(objs)}


# Extra CSV columns when the cache model's figures were merged (--model).
MODEL_CSV_FIELDS = ("model_profile", "model_cycles_per_iter",
                    "model_llc_misses_per_iter")


def to_csv(results):
    modelled = any("model" in r for r in results)
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(CSV_FIELDS) +
                       (list(MODEL_CSV_FIELDS) if modelled else []),
                       extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in results:
        row = dict(r)
        m = r.get("model")
        if m:
            row["model_profile"] = m["profile"]
            row["model_cycles_per_iter"] = m["cycles_per_iter"]
            row["model_llc_misses_per_iter"] = m["llc_misses_per_iter"]
        for key, kind in list(RESULT_SCHEMA.items()) + \
                list(RESULT_OPTIONAL.items()):
            if kind == BOOL and key in row:
                row[key] = "true" if row[key] else "false"
            if row.get(key) is None:
                row[key] = ""
        w.writerow(row)
    return out.getvalue()


# The compact table's columns: heading, right-aligned.
MODEL_TABLE_COLUMNS = (("variant", False), ("metric", False),
                       ("unit", False), ("measured median (TCG)", True),
                       ("modelled cycles/iter", True),
                       ("modelled ns/iter", True),
                       ("modelled LLC misses/iter", True))
MODEL_TABLE_GAP = "  "


def model_table(results, model_info):
    """The modelled figures as text for a terminal: a heading that says
    MODELLED and names the profile, then per experiment the figures the
    model saw (measured median, modelled cycles, ns and LLC misses per
    iteration; an invalid figure marked as tools/report.py marks it).
    Figures the model did not see are counted, not listed."""
    from report import fmt_num, modelled_cell
    profile = model_info["profile"]
    out = ["=== MODELLED figures: cache model, profile %s (a model of a "
           "%s-class machine, not a measurement of hardware; the tables "
           "above are TCG's timings) ===" % (profile, profile)]
    if not model_info.get("hello"):
        out.append("WARNING: the kernel never said hello to the model")
    for p in model_info.get("problems", ()):
        out.append("WARNING: %s" % p)
    order = []
    for r in results:
        if r["experiment"] not in order:
            order.append(r["experiment"])
    for exp in order:
        rows = [r for r in results if r["experiment"] == exp]
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
                          fmt_num(r["median"]),
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
        description="Extract @@ENV/@@RESULT lines from a serial log.")
    ap.add_argument("log", help="serial log (from make run or a machine)")
    ap.add_argument("--csv", help="write the results as CSV here")
    ap.add_argument("--json", help="write envs and results as JSON here")
    ap.add_argument("--model", help="merge this cache-model plugin file")
    ap.add_argument("--model-table", action="store_true",
                    help="print the modelled figures as a table (needs "
                    "--model) instead of the JSON")
    args = ap.parse_args(argv)
    if args.model_table and not args.model:
        ap.error("--model-table needs --model")

    missing = []
    try:
        envs, results, errors = parse_log(args.log, missing)
    except OSError as e:
        print("results: %s" % e, file=sys.stderr)
        return 1
    for e in errors:
        print("%s:%d: %s" % (args.log, e.line, e.message), file=sys.stderr)
    if errors:
        print("results: %d malformed line(s); no output written" %
              len(errors), file=sys.stderr)
        return 1
    if not envs:
        print("%s: no @@ENV header: not a benchmark log" % args.log,
              file=sys.stderr)
        return 1

    model_info = None
    if args.model:
        import model
        try:
            model_info = merge_model(results, args.model)
        except (OSError, model.ModelError) as e:
            print("results: model file: %s" % e, file=sys.stderr)
            return 1
        if not model_info["hello"]:
            print("results: %s: the kernel never said hello to the model"
                  % args.model, file=sys.stderr)
        for p in model_info["problems"]:
            print("results: %s: WARNING: %s" % (args.model, p),
                  file=sys.stderr)
        for exp, why in model_info["unattributed"].items():
            print("results: model figures for %s left out: %s" % (exp, why),
                  file=sys.stderr)

    if args.csv:
        with open(args.csv, "w", encoding="utf-8", newline="") as f:
            f.write(to_csv(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(to_json(envs, results, model_info, missing))
    if args.model_table:
        sys.stdout.write(model_table(results, model_info))
    elif not args.csv and not args.json:
        sys.stdout.write(to_json(envs, results, model_info, missing))
    for m in missing:
        print("results: not measured (%s): %s %s %s: %s" % (
            m["status"], m["experiment"], m["variant"], m["metric"],
            m["reason"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
