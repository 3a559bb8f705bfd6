#!/usr/bin/env python3
"""The benchmark log's machine-readable lines: their schema, and the parser
that finds and validates them (docs/output.md).

    @@ENV {"cpu_model":"...", ...}
    @@RESULT {"experiment":"copy","variant":"movnti", ...}
    @@MISSING {"experiment":"copy","variant":"*","status":"skipped", ...}

Anything else in a log is ignored; a line that carries a prefix but is
not a valid object of the schema is a LogError. results.py (CSV, JSON)
and model.py (the cache model's figures beside the measured ones) both
read logs through this module, which imports neither.
"""

import json
import re

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
    # true when the spread exceeds the kernel's noise threshold
    # (lib/bench_output.h: BENCH_NOISY_SPREAD_PCT); omitted otherwise.
    "noisy": BOOL,
}

# @@MISSING: figures that were not measured (docs/output.md).
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
