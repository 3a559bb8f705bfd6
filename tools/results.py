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

--model merges the cache-model plugin's file (tools/model.py): each
figure whose repetitions the model saw gets a "model" object (modelled
cycles per iteration and friends, profile named), and the JSON a "model"
section saying which profile ran and whether the kernel said hello;
the CSV then gains model_profile, model_cycles_per_iter and
model_llc_misses_per_iter columns. Experiments that time themselves
(copy, tbench, kbuild, pagecache_splice) label their regions by figure
(tools/model.py: keyed); regions over several CPUs are summed.
Modelled figures sit beside the measured ones, never in their place.

With neither output option the JSON goes to stdout. Python 3 standard
library only; plot.py and report.py import this module.
"""

import argparse
import csv
import io
import json
import os
import re
import sys

SCHEMA_VERSION = 1
ENV_TAG = "ENV"
RESULT_TAG = "RESULT"
MISSING_TAG = "MISSING"
# A prefix anywhere on the line: serial garbage may precede it.
PREFIX_RE = re.compile(r"@@(ENV|RESULT|MISSING)\b")

NUMBER = "number"
INT = "int"
STR = "str"
BOOL = "bool"
NUMBER_OR_NULL = "number|null"

ENV_SCHEMA = {
    "cpu_model": STR,
    "hypervisor": STR,
    "caches_modelled": BOOL,
    "cpus_online": INT,
    "ram_bytes": INT,
    "tsc_hz": INT,
    "tsc_source": STR,
    "pmu": BOOL,
    "memtypes_honoured": STR,
    "kernel_version": STR,
    "git_hash": STR,
    "cmdline": STR,
    "mode": STR,
    "schema": INT,
}
# Present when the command line names a cache-model profile (cachemodel=).
ENV_OPTIONAL = {
    "cache_model": STR,
}
ENV_ENUMS = {
    "memtypes_honoured": ("yes", "no", "unknown"),
    "mode": ("normal", "icount"),
}

RESULT_SCHEMA = {
    "experiment": STR,
    "variant": STR,
    "metric": STR,
    "unit": STR,
    "value": NUMBER,
    "n": INT,
    "min": NUMBER,
    "median": NUMBER,
    "max": NUMBER,
    "mean": NUMBER,
    "mad": NUMBER,
    "spread_pct": NUMBER_OR_NULL,
    "cpus": INT,
    "caches_modelled": BOOL,
    "schema": INT,
}
RESULT_OPTIONAL = {
    "size": INT,
    "clients": INT,
    "capped": BOOL,
}

MISSING_SCHEMA = {
    "experiment": STR,
    "variant": STR,
    "metric": STR,
    "status": STR,
    "reason": STR,
    "schema": INT,
}
MISSING_STATUSES = ("skipped", "cut_short")

# Column order of the CSV: the result fields, then where they came from.
CSV_FIELDS = (list(RESULT_SCHEMA) + list(RESULT_OPTIONAL) +
              ["env", "line"])


class LogError(Exception):
    """A malformed machine line: carries its 1-based line number."""

    def __init__(self, line, message):
        super().__init__("line %d: %s" % (line, message))
        self.line = line
        self.message = message


def _type_ok(value, kind):
    # bool is a subclass of int in Python; JSON true is not a number.
    if kind == BOOL:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == INT:
        return isinstance(value, int)
    if kind == NUMBER:
        return isinstance(value, (int, float))
    if kind == NUMBER_OR_NULL:
        return value is None or isinstance(value, (int, float))
    if kind == STR:
        return isinstance(value, str)
    raise AssertionError("unknown schema type " + kind)


def _check_fields(obj, required, optional, lineno, what):
    for key, kind in required.items():
        if key not in obj:
            raise LogError(lineno, "%s: missing key '%s'" % (what, key))
        if not _type_ok(obj[key], kind):
            raise LogError(lineno, "%s: key '%s' should be %s, got %s" %
                           (what, key, kind, json.dumps(obj[key])))
    for key, kind in optional.items():
        if key in obj and not _type_ok(obj[key], kind):
            raise LogError(lineno, "%s: key '%s' should be %s, got %s" %
                           (what, key, kind, json.dumps(obj[key])))
    if obj["schema"] != SCHEMA_VERSION:
        raise LogError(lineno, "%s: unsupported schema %r (this tool reads "
                       "%d)" % (what, obj["schema"], SCHEMA_VERSION))


def validate_env(obj, lineno):
    _check_fields(obj, ENV_SCHEMA, ENV_OPTIONAL, lineno, "@@ENV")
    for key, allowed in ENV_ENUMS.items():
        if obj[key] not in allowed:
            raise LogError(lineno, "@@ENV: key '%s' must be one of %s, got "
                           "%r" % (key, "/".join(allowed), obj[key]))
    if obj["cpus_online"] < 1:
        raise LogError(lineno, "@@ENV: cpus_online must be >= 1")


def validate_result(obj, lineno):
    _check_fields(obj, RESULT_SCHEMA, RESULT_OPTIONAL, lineno, "@@RESULT")
    for key in ("experiment", "variant", "metric", "unit"):
        if not obj[key]:
            raise LogError(lineno, "@@RESULT: key '%s' is empty" % key)
    if obj["n"] < 1:
        raise LogError(lineno, "@@RESULT: n must be >= 1")
    if obj["cpus"] < 1:
        raise LogError(lineno, "@@RESULT: cpus must be >= 1")
    if not obj["min"] <= obj["median"] <= obj["max"]:
        raise LogError(lineno, "@@RESULT: needs min <= median <= max")
    if obj["value"] != obj["median"]:
        raise LogError(lineno, "@@RESULT: value must equal median")


def validate_missing(obj, lineno):
    _check_fields(obj, MISSING_SCHEMA, {}, lineno, "@@MISSING")
    for key in ("experiment", "variant", "metric", "reason"):
        if not obj[key]:
            raise LogError(lineno, "@@MISSING: key '%s' is empty" % key)
    if obj["status"] not in MISSING_STATUSES:
        raise LogError(lineno, "@@MISSING: status must be one of %s, got "
                       "%r" % ("/".join(MISSING_STATUSES), obj["status"]))


def _decode_json(text, lineno, tag):
    try:
        obj, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as e:
        raise LogError(lineno, "@@%s: bad JSON: %s" % (tag, e.msg)) from None
    if text[end:].strip():
        raise LogError(lineno, "@@%s: text after the JSON object: %r" %
                       (tag, text[end:].strip()[:40]))
    if not isinstance(obj, dict):
        raise LogError(lineno, "@@%s: not a JSON object" % tag)
    return obj


def parse_lines(lines, missing=None):
    """Parse an iterable of text lines.

    Returns (envs, results, errors): envs is the list of @@ENV objects;
    each result is its @@RESULT object plus "env" (index into envs of the
    header it follows) and "line" (1-based line number). errors lists
    LogError for every malformed line; the good lines are still parsed.
    @@MISSING objects (with "env" and "line" too) are appended to the
    list missing when one is given, else only checked.
    """
    envs, results, errors = [], [], []
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        m = PREFIX_RE.search(line)
        if not m:
            continue
        tag = m.group(1)
        text = line[m.end():]
        try:
            if not text.startswith(" "):
                raise LogError(lineno, "@@%s: expected one space after the "
                               "prefix" % tag)
            obj = _decode_json(text.strip(), lineno, tag)
            if tag == ENV_TAG:
                validate_env(obj, lineno)
                envs.append(obj)
                continue
            if tag == MISSING_TAG:
                validate_missing(obj, lineno)
                into = missing if missing is not None else []
            else:
                validate_result(obj, lineno)
                into = results
            if not envs:
                raise LogError(lineno, "@@%s before any @@ENV header" %
                               tag)
            obj["env"] = len(envs) - 1
            obj["line"] = lineno
            into.append(obj)
        except LogError as e:
            errors.append(e)
    return envs, results, errors


def read_log_lines(path):
    """Lines of a log file; bytes that are not UTF-8 become U+FFFD."""
    with open(path, "rb") as f:
        data = f.read()
    # Split on \n only: a serial log may hold stray \r in the middle.
    return data.decode("utf-8", errors="replace").split("\n")


def parse_log(path, missing=None):
    """(envs, results, errors) of a log file, see parse_lines()."""
    return parse_lines(read_log_lines(path), missing)


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
            "summary": summary, "unattributed": skipped}


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
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import model
        try:
            model_info = merge_model(results, args.model)
        except (OSError, model.ModelError) as e:
            print("results: model file: %s" % e, file=sys.stderr)
            return 1
        if not model_info["hello"]:
            print("results: %s: the kernel never said hello to the model"
                  % args.model, file=sys.stderr)
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
