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

--model merges the cache-model plugin's file (tools/model/model.py): each
figure whose repetitions the model saw gets a "model" object (modelled
cycles per iteration and friends, profile named), and the JSON a "model"
section saying which profile ran, whether the kernel said hello and
the run's "problems" (doorbell errors, no summary line: printed as
warnings here, put at the top of tools/results/report.py's report);
the CSV then gains model_profile, model_cycles_per_iter and
model_llc_misses_per_iter columns. Experiments that time themselves
(copy, tbench, kbuild, pagecache_splice) label their regions by figure
(tools/model/model.py: keyed); regions over several CPUs are summed.
Modelled figures sit beside the measured ones, never in their place.

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
from tools.results.result_log import (BOOL, CSV_FIELDS, LogError,  # noqa: F401
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
    """Attach the model file's figures to results (tools/model/model.py);
    returns the JSON's "model" section. Raises OSError or
    model_lines.ModelError."""
    from tools.model import model_lines
    objs = model_lines.load(path)
    profile, hello, summary = model_lines.info(objs)
    skipped = model_lines.attribute(results, objs)
    return {"profile": profile, "hello": hello, "file": path,
            "summary": summary, "unattributed": skipped,
            "problems": model_lines.doorbell_problems(objs)}


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


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name,
        description="Extract @@ENV/@@RESULT lines from a serial log.")
    ap.add_argument("log", help="serial log (from make run or a machine)")
    ap.add_argument("--csv", help="write the results as CSV here")
    ap.add_argument("--json", help="write envs and results as JSON here")
    ap.add_argument("--model", help="merge this cache-model plugin file")
    args = ap.parse_args(argv)

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
        from tools.model import model_lines
        try:
            model_info = merge_model(results, args.model)
        except (OSError, model_lines.ModelError) as e:
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
    if not args.csv and not args.json:
        sys.stdout.write(to_json(envs, results, model_info, missing))
    for m in missing:
        print("results: not measured (%s): %s %s %s: %s" % (
            m["status"], m["experiment"], m["variant"], m["metric"],
            m["reason"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
