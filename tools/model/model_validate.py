#!/usr/bin/env python3
"""The cache model against published figures (make model-validate).

Runs the model's microbenchmarks (tests/host/model_validate.c, built as
build/host/model_validate) for each profile of cachemodel/validation_data.json
and prints, per profile, two tables: the validation rows (published
figures no parameter was set from, only compared against) and, apart,
the fitting rows (figures a parameter was set from: their error only
shows that the model reproduces its own input). Each row gives the
modelled figure beside the published one, its source and the error; each
table ends with its mean absolute percentage error (MAPE). Every
modelled figure is a prediction of the model, not a measurement of a
machine.

The bounds of the data file apply to the validation rows: at least
min_validation_rows of them, their MAPE at most mape_percent, and none
off by more than max_ratio (either way). A fitting row off by more than
max_ratio is also a failure (the model no longer reproduces its input).
A 'shortfall' note explains an error, it does not excuse it. Two
exceptions exist, both printed with their reason and both checked to
still be needed:

* an 'open' validation row: a published figure the model misses by more
  than max_ratio for the missing mechanism the field names. It is printed
  with the validation rows and in a second MAPE (all validation rows),
  left out of the gated MAPE and ratio check; an open row the model
  meets within max_ratio is itself a failure (it must become an ordinary
  row).
* an 'ungated' profile (the data file's "ungated" map, profile to
  reason): every other profile is gated. An ungated profile prints its
  problems and is skipped in the short form; if it meets every bound,
  the short form fails (the exemption must go).

--ktap is the short form make test runs (as a host test): one KTAP test
per profile of the data file, failing when a gated profile exceeds a
bound above or an exemption is no longer needed.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "cachemodel", "validation_data.json")
PROFILES = os.path.join(ROOT, "cachemodel", "profiles.txt")
BINARY = os.path.join(ROOT, "build", "host", "model_validate")
RESULT_TAG = "@@RESULT "
SOURCE_WIDTH = 60


def load_data(path):
    """The data file, checked for the fields every figure needs."""
    with open(path) as f:
        data = json.load(f)
    for fig in data["figures"]:
        for key in ("profile", "bench", "set", "value", "unit", "source",
                    "quote"):
            if key not in fig:
                raise ValueError("%s: a figure lacks '%s': %r"
                                 % (path, key, fig))
        if fig["set"] not in ("fit", "validation"):
            raise ValueError("%s: set must be fit or validation: %r"
                             % (path, fig))
        if "open" in fig and fig["set"] != "validation":
            raise ValueError("%s: only a validation row can be open: %r"
                             % (path, fig))
    return data


def gated_rows(rows):
    """The validation rows the bounds apply to (open rows left out)."""
    return [r for r in rows if r["set"] == "validation" and "open" not in r]


def open_rows(rows):
    return [r for r in rows if "open" in r]


def run_model(binary, profiles_file, profiles, short):
    """{(profile, bench): (value, unit)} from the harness's @@RESULT lines."""
    cmd = [binary] + (["--short"] if short else []) + [profiles_file]
    out = subprocess.run(cmd + profiles, check=True, capture_output=True,
                         text=True).stdout
    modelled = {}
    for line in out.splitlines():
        if line.startswith(RESULT_TAG):
            r = json.loads(line[len(RESULT_TAG):])
            modelled[(r["profile"], r["bench"])] = (r["value"], r["unit"])
    return modelled


def rows_of(data, modelled, profile):
    """The figures of profile with their modelled values and errors."""
    rows = []
    for fig in data["figures"]:
        if fig["profile"] != profile:
            continue
        got = modelled.get((profile, fig["bench"]))
        if got is None:
            raise ValueError("no modelled figure '%s' for %s"
                             % (fig["bench"], profile))
        if got[1] != fig["unit"]:
            raise ValueError("%s %s: modelled in %s, published in %s"
                             % (profile, fig["bench"], got[1], fig["unit"]))
        err = (got[0] - fig["value"]) / fig["value"]
        ratio = max(got[0], fig["value"]) / max(min(got[0], fig["value"]),
                                                 1e-12)
        rows.append(dict(fig, modelled=got[0], error=err, ratio=ratio))
    return rows


def mape(rows):
    return (100.0 * sum(abs(r["error"]) for r in rows) / len(rows)
            if rows else float("nan"))


def print_rows(title, rows):
    print(title)
    print("%-22s %10s %10s %-7s %8s  %s"
          % ("bench", "modelled", "published", "unit", "error", "source"))
    for r in rows:
        print("%-22s %10.2f %10.2f %-7s %+7.1f%%  %s"
              % (r["bench"], r["modelled"], r["value"], r["unit"],
                 100 * r["error"], r["source"][:SOURCE_WIDTH]))
        if "open" in r:
            print("%-22s   OPEN (outside the bounds, not gated): %s"
                  % ("", r["open"]))
        if "direct" in r:
            print("%-22s   direct: %s" % ("", r["direct"]))
        if "shortfall" in r:
            print("%-22s   shortfall: %s" % ("", r["shortfall"]))


def summary(profile, rows):
    val = gated_rows(rows)
    opn = open_rows(rows)
    fit = [r for r in rows if r["set"] == "fit"]
    worst = max(val, key=lambda r: r["ratio"]) if val else None
    direct = [r for r in val if "direct" in r]
    text = ("%s: validation MAPE %.1f%% over %d rows (worst %s, %.2fx;"
            " %d of them a parameter's own value); fitting MAPE %.1f%%"
            " over %d rows"
            % (profile, mape(val), len(val),
               worst["bench"] if worst else "-",
               worst["ratio"] if worst else float("nan"), len(direct),
               mape(fit), len(fit)))
    if opn:
        text += ("; open: %s; MAPE with the open rows %.1f%% over %d rows"
                 % (", ".join("%s %.2fx" % (r["bench"], r["ratio"])
                              for r in opn),
                    mape(val + opn), len(val + opn)))
    return text


def print_table(profile, rows, bounds, ungated):
    print("## %s: modelled (the model's prediction) vs published" % profile)
    print_rows("# validation rows (compared only; the bounds apply to all"
               " but open rows)",
               [r for r in rows if r["set"] == "validation"])
    print_rows("# fitting rows (a parameter was set from each)",
               [r for r in rows if r["set"] == "fit"])
    print("MAPE " + summary(profile, rows))
    problems = check(profile, rows, bounds)
    print("bounds (%s): %s"
          % ("gated in make test" if profile not in ungated
             else "NOT gated in make test: " + ungated[profile],
             "; ".join(problems) if problems else "met"))
    print()


def check(profile, rows, bounds):
    """Problems of a gated profile: [] when it passes."""
    problems = []
    val = gated_rows(rows)
    if len(rows) < bounds["min_rows"]:
        problems.append("%d rows < %d" % (len(rows), bounds["min_rows"]))
    if len(val) < bounds["min_validation_rows"]:
        problems.append("%d validation rows < %d"
                        % (len(val), bounds["min_validation_rows"]))
    if val and mape(val) > bounds["mape_percent"]:
        problems.append("validation MAPE %.1f%% > %s%%"
                        % (mape(val), bounds["mape_percent"]))
    for r in rows:
        if "open" in r:
            if r["ratio"] <= bounds["max_ratio"]:
                problems.append("open row %s within %sx (%.2fx): make it"
                                " an ordinary validation row"
                                % (r["bench"], bounds["max_ratio"],
                                   r["ratio"]))
        elif r["ratio"] > bounds["max_ratio"]:
            problems.append("%s row %s off by %.2fx > %sx"
                            % (r["set"], r["bench"], r["ratio"],
                               bounds["max_ratio"]))
    return problems


def main():
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=BINARY)
    ap.add_argument("--profiles-file", default=PROFILES)
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--ktap", action="store_true",
                    help="the short form for make test, as KTAP")
    ap.add_argument("profiles", nargs="*",
                    help="profiles (default: every profile of the data)")
    args = ap.parse_args()
    data = load_data(args.data)
    ungated = data.get("ungated", {})
    profiles = args.profiles or sorted({f["profile"]
                                        for f in data["figures"]})
    modelled = run_model(args.binary, args.profiles_file, profiles,
                         args.ktap)
    if args.ktap:
        print("KTAP version 1")
        print("1..%d" % len(profiles))
        failed = False
        for n, p in enumerate(profiles, 1):
            rows = rows_of(data, modelled, p)
            print("# " + summary(p, rows))
            problems = check(p, rows, data["bounds"])
            for pr in problems:
                print("# %s: %s" % (p, pr))
            if p in ungated:
                if problems:
                    print("ok %d %s # SKIP not gated: %s"
                          % (n, p, ungated[p]))
                    continue
                problems = ["meets every bound: take it out of 'ungated'"]
                print("# %s: %s" % (p, problems[0]))
            failed |= bool(problems)
            print("%sok %d %s" % ("not " if problems else "", n, p))
        return 1 if failed else 0
    for p in profiles:
        print_table(p, rows_of(data, modelled, p), data["bounds"], ungated)
    for c in data.get("considered", []):
        print("considered, not used (%s): %s -- %s"
              % (c["profile"], c["what"], c["reason"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
