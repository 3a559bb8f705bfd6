#!/usr/bin/env python3
"""Read the cache-model plugin's @@MODEL lines (docs/cachemodel.md).

The plugin (cachemodel/plugin.c) writes one JSON object per line to its own
file: "start", "hello", one "region" per CPU per measured repetition,
a "doorbell_error" for each of the first few malformed commands, "total"
per CPU and a closing "summary". These commands parse them, tie regions
to the @@RESULT figures of the serial log, and check them:

    model.py summary MODEL.jsonl
    model.py check-doorbell MODEL.jsonl       (summary there, no errors?)
    model.py check-calibration MODEL.jsonl [--profiles cachemodel/profiles.txt]
    model.py compare A.jsonl B.jsonl          (identical region lines?)
    model.py check-falseshare LOG MODEL.jsonl (packed >> aligned?)
    model.py tracing LOG MODEL.jsonl          (trace variants' slowdown)
    model.py check-copy LOG MODEL.jsonl       (movnti spares the bystander?)
    model.py check-pacing MODEL.jsonl         (paced repetitions agree?)
    model.py compare-serial A.jsonl B.jsonl   (serial regions agree?)
    model.py kcmdline PROFILE [--profiles cachemodel/profiles.txt]
                                              (the kernel's options for it)

The parsing and attribution are tools/model/model_lines.py, the profiles
tools/model/model_profile.py, the checks tools/model/model_checks.py and
the tracing slowdowns tools/model/model_tracing.py; this file is the
commands.

Python 3 standard library only.
"""

import argparse
import sys

from tools.model.model_checks import (check_calibration, check_copy,
                                      check_falseshare, check_pacing,
                                      compare, compare_serial,
                                      pacing_summary)
from tools.model.model_lines import (ModelError, attribute,
                                     doorbell_problems, info, load)
from tools.model.model_profile import kernel_options
from tools.model.model_tracing import normalised, slowdown_table, slowdowns


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary", help="what a model file holds")
    s.add_argument("model")
    s = sub.add_parser("check-doorbell",
                       help="a summary line and no doorbell errors?")
    s.add_argument("model")
    s = sub.add_parser("check-calibration",
                       help="modelcal regions against the profile")
    s.add_argument("model")
    s.add_argument("--profiles", default="cachemodel/profiles.txt")
    s = sub.add_parser("compare", help="identical region lines?")
    s.add_argument("a")
    s.add_argument("b")
    s = sub.add_parser("compare-serial",
                       help="two boots' serially paced regions agree?")
    s.add_argument("a")
    s.add_argument("b")
    s = sub.add_parser("check-copy",
                       help="movnti spares the bystander (pieces)?")
    s.add_argument("log")
    s.add_argument("model")
    s = sub.add_parser("check-pacing",
                       help="paced repetitions agree within 2 %%?")
    s.add_argument("model")
    s.add_argument("--ordered", action="store_true",
                   help="the run must have ordered contended locked "
                   "operations (order=1), some of them waiting")
    s = sub.add_parser("kcmdline", help="kernel options for a profile")
    s.add_argument("profile")
    s.add_argument("--profiles", default="cachemodel/profiles.txt")
    s = sub.add_parser("check-falseshare",
                       help="packed >> aligned invalidations?")
    s.add_argument("log")
    s.add_argument("model")
    s = sub.add_parser("tracing",
                       help="modelled slowdown of tbench/kbuild's trace "
                            "variants over trace_off")
    s.add_argument("log")
    s.add_argument("model")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "summary":
            objs = load(args.model)
            profile, hello, summ = info(objs)
            print("profile %s, hello %s, %d region lines" %
                  (profile, "yes" if hello else "NO",
                   sum(o["kind"] == "region" for o in objs)))
            if summ:
                print("model state %.1f MiB, host time %.1f s" %
                      (summ["state_bytes"] / 2**20, summ["host_seconds"]))
                print(pacing_summary(summ))
            problems = doorbell_problems(objs)
        elif args.cmd == "check-doorbell":
            objs = load(args.model)
            problems = doorbell_problems(objs)
            if not problems:
                print("doorbell: no errors, %d hello(s), %d regions" %
                      (info(objs)[2]["hellos"], info(objs)[2]["regions"]))
        elif args.cmd == "kcmdline":
            print(kernel_options(args.profiles, args.profile))
            return 0
        elif args.cmd == "check-calibration":
            problems = check_calibration(load(args.model), args.profiles)
        elif args.cmd == "check-pacing":
            problems = check_pacing(load(args.model), ordered=args.ordered)
        elif args.cmd == "compare-serial":
            problems = compare_serial(load(args.a), load(args.b))
        elif args.cmd == "compare":
            a_objs, b_objs = load(args.a), load(args.b)
            problems, n = compare(a_objs, b_objs)
            if not problems:
                print("identical: %d lines (%d regions)" %
                      (n, sum(o["kind"] == "region" for o in a_objs)))
        else:
            from tools.results import result_log as results_mod
            envs, res, errs = results_mod.parse_log(args.log)
            if errs:
                raise ModelError("%s: %s" % (args.log, errs[0].message))
            objs = load(args.model)
            if args.cmd == "tracing":
                attribute(res, objs)
                rows = slowdowns(res)
                problems = [] if rows else [
                    "no trace_off figure with model data in %s" % args.log]
                bad = [r["variant"] for r in rows if not r["valid"]]
                if bad:
                    problems.append("invalid modelled figures (vCPUs not "
                                    "paced, or pacing broken): %s" %
                                    ", ".join(bad))
                sys.stdout.write(slowdown_table(rows, info(objs)[0]))
                for n in normalised(rows):
                    print("normalised (seed 000): %s %s %s" % (
                        n["experiment"], n["variant"],
                        "invalid" if not n["valid"] else
                        "n/a" if n["normalised"] is None else
                        "%.3f" % n["normalised"]))
            else:
                check = (check_copy if args.cmd == "check-copy"
                         else check_falseshare)
                problems, text = check(res, objs)
                sys.stdout.write(text)
    except (OSError, ModelError) as e:
        print("model: %s" % e, file=sys.stderr)
        return 1
    for p in problems:
        print("model: %s" % p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
