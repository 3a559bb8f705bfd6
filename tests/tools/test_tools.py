#!/usr/bin/env python3
"""Tests of tools/results/results.py, tools/results/plot.py,
tools/results/report.py and tools/model/model.py.

Data: sample.log is SYNTHETIC test data written by hand in the format of
docs/output.md (CRLF line ends, boot noise, an escape sequence, garbage
bytes); the other *.log files are malformed variants, each with one known
bad line. Run from the root: python3 -m unittest tests/tools/test_tools.py
Chart tests run only when gnuplot is installed.
"""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from tools.labs import labs
from tools.model import model_checks
from tools.model import model_cost
from tools.model import model_lines
from tools.model import model_profile
from tools.model import model_tracing
from tools.results import model_table
from tools.results import plot
from tools.results import report
from tools.results import results
from tools.results import seed_ratios
from tools.runner import screen
from tools.runner import session

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MKISO = os.path.join(ROOT, "tools", "image", "mkiso.sh")

SAMPLE = os.path.join(HERE, "sample.log")
SAMPLE_RESULTS = 36
SAMPLE_ENV_LINE = 12
SAMPLE_FIRST_RESULT_LINE = 14

# file -> (line number, text expected in the message)
MALFORMED = {
    "bad_json.log": (5, "bad JSON"),
    "missing_key.log": (3, "missing key 'unit'"),
    "wrong_type.log": (4, "key 'n' should be int"),
    "result_before_env.log": (2, "before any @@ENV"),
    "trailing_garbage.log": (3, "text after the JSON object"),
    "min_above_median.log": (3, "min <= median <= max"),
    "multi_error.log": (2, "unsupported schema 2"),
}

GOOD_RESULT = {
    "experiment": "copy", "variant": "movnti", "metric": "copy_cost",
    "unit": "cycles/KiB", "value": 1.5, "n": 7, "min": 1.0, "median": 1.5,
    "max": 2.0, "mean": 1.5, "mad": 0.1, "spread_pct": 66.67, "cpus": 1,
    "caches_modelled": True, "schema": 1,
}


def run_tool(module, *args, env=None):
    """Run a tool as make does: python3 -m tools.GROUP.NAME from the root."""
    return subprocess.run([sys.executable, "-m", "tools." + module] +
                          list(args), capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


def sample_env_line():
    with open(SAMPLE, "rb") as f:
        for line in f.read().decode("latin-1").split("\r\n"):
            if line.startswith("@@ENV "):
                return line
    raise AssertionError("sample.log has no @@ENV line")


def result_line(**changes):
    obj = dict(GOOD_RESULT)
    obj.update(changes)
    return "@@RESULT " + json.dumps(obj)


class ParseTest(unittest.TestCase):
    def test_sample_log(self):
        envs, res, errors = results.parse_log(SAMPLE)
        self.assertEqual(errors, [])
        self.assertEqual(len(envs), 1)
        self.assertEqual(len(res), SAMPLE_RESULTS)
        env = envs[0]
        self.assertEqual(env["cpu_model"], 'Synthetic test CPU "TCG"')
        self.assertIs(env["caches_modelled"], False)
        self.assertEqual(env["tsc_hz"], 2999999000)
        first = res[0]
        self.assertEqual(first["line"], SAMPLE_FIRST_RESULT_LINE)
        self.assertEqual(first["env"], 0)
        self.assertEqual((first["experiment"], first["variant"],
                          first["metric"], first["unit"]),
                         ("memtype", "WB", "write_cost", "ns/KiB"))
        self.assertEqual(first["value"], 41.0)
        self.assertEqual(first["min"], 40.1)
        # CRLF stripped: no field ends in \r
        self.assertFalse(any(str(v).endswith("\r")
                             for r in res for v in r.values()))
        lockless4 = [r for r in res if r["variant"] == "lockless" and
                     r.get("clients") == 4]
        self.assertEqual(len(lockless4), 1)
        self.assertEqual(lockless4[0]["median"], 300.0)

    def test_prefix_after_garbage_and_lookalikes(self):
        lines = ["junk \x1b[0m" + sample_env_line(),
                 "noise" + result_line(),
                 "@@RESULTS are not ours",
                 "@@ENVIRONMENT neither"]
        envs, res, errors = results.parse_lines(lines)
        self.assertEqual(errors, [])
        self.assertEqual((len(envs), len(res)), (1, 1))

    def test_prefix_needs_a_space(self):
        line = result_line().replace("@@RESULT ", "@@RESULT")
        _, res, errors = results.parse_lines([sample_env_line(), line])
        self.assertEqual(res, [])
        self.assertEqual(errors[0].line, 2)
        self.assertIn("one space", errors[0].message)

    def test_bool_is_not_a_number(self):
        lines = [sample_env_line(), result_line(n=True),
                 result_line(cpus=1.5), result_line(spread_pct=None),
                 result_line(size="4096"), result_line(size=4096)]
        _, res, errors = results.parse_lines(lines)
        self.assertEqual([e.line for e in errors], [2, 3, 5])
        self.assertEqual([r["line"] for r in res], [4, 6])

    def test_value_must_be_median(self):
        _, _, errors = results.parse_lines([sample_env_line(),
                                            result_line(value=1.0)])
        self.assertEqual(len(errors), 1)
        self.assertIn("value must equal median", errors[0].message)

    def test_env_enums(self):
        bad = sample_env_line().replace('"mode":"normal"', '"mode":"fast"')
        _, _, errors = results.parse_lines([bad])
        self.assertEqual(errors[0].line, 1)
        self.assertIn("'mode'", errors[0].message)

    def test_results_follow_their_env(self):
        env = sample_env_line()
        _, res, errors = results.parse_lines([env, result_line(), env,
                                              result_line()])
        self.assertEqual(errors, [])
        self.assertEqual([r["env"] for r in res], [0, 1])


class MissingTest(unittest.TestCase):
    LINE = ('@@MISSING {"experiment":"tlb_purge","variant":"batched",'
            '"metric":"*","status":"%s","reason":"%s","schema":1}')

    def test_missing_lines_are_kept_apart(self):
        missing = []
        envs, res, errors = results.parse_lines(
            [sample_env_line(), result_line(),
             self.LINE % ("cut_short", "time cap after 64 of 256 pages")],
            missing)
        self.assertEqual(errors, [])
        self.assertEqual(len(res), 1)
        self.assertEqual(missing[0]["status"], "cut_short")
        self.assertEqual(missing[0]["line"], 3)

    def test_bad_missing_lines_are_errors(self):
        for line in (self.LINE % ("lost", "x"), self.LINE % ("skipped", ""),
                     self.LINE.replace('"schema":1', '"schema":2') %
                     ("skipped", "x")):
            _, _, errors = results.parse_lines([sample_env_line(), line])
            self.assertEqual(len(errors), 1, line)

    def test_report_lists_them_and_seeds_say_why(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "cut.log")
            with open(SAMPLE, "rb") as f:
                data = f.read()
            gone = ('@@MISSING {"experiment":"tbench","variant":"*",'
                    '"metric":"*","status":"skipped","reason":"needs 2 '
                    'CPUs, this machine has 1","schema":1}\r\n')
            with open(log, "wb") as f:
                f.write(data + gone.encode())
            out = os.path.join(tmp, "r.md")
            p = run_tool("results.report", log, "-o", out, "--no-charts")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                text = f.read()
        self.assertIn("## Not measured", text)
        self.assertIn("| tbench | * | * | skipped | needs 2 CPUs, this "
                      "machine has 1 |", text)


class RejectTest(unittest.TestCase):
    def test_malformed_logs_report_line_numbers(self):
        for name, (line, text) in MALFORMED.items():
            with self.subTest(log=name):
                path = os.path.join(HERE, name)
                _, _, errors = results.parse_log(path)
                self.assertTrue(errors)
                self.assertEqual(errors[0].line, line)
                self.assertIn(text, errors[0].message)

                p = run_tool("results.results", path)
                self.assertEqual(p.returncode, 1)
                self.assertIn("%s:%d: " % (path, line), p.stderr)
                self.assertEqual(p.stdout, "")

    def test_every_bad_line_is_reported(self):
        path = os.path.join(HERE, "multi_error.log")
        p = run_tool("results.results", path)
        self.assertEqual(p.returncode, 1)
        for line in (2, 3, 4):
            self.assertIn("%s:%d: " % (path, line), p.stderr)

    def test_not_a_benchmark_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "boot.log")
            with open(path, "w") as f:
                f.write("KTAP version 1\n1..0\n")
            p = run_tool("results.results", path)
            self.assertEqual(p.returncode, 1)
            self.assertIn("no @@ENV", p.stderr)

    def test_report_rejects_malformed_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(HERE, "wrong_type.log")
            p = run_tool("results.report", path, "-o",
                         os.path.join(tmp, "r.md"), "--no-charts")
            self.assertEqual(p.returncode, 1)
            self.assertIn("%s:4: " % path, p.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "r.md")))


class OutputTest(unittest.TestCase):
    def test_csv_and_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            out_csv = os.path.join(tmp, "r.csv")
            out_json = os.path.join(tmp, "r.json")
            p = run_tool("results.results", SAMPLE, "--csv", out_csv,
                         "--json", out_json)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, "")

            with open(out_csv, newline="") as f:
                rows = list(csv.DictReader(f))
            with open(out_csv, newline="") as f:
                header = next(csv.reader(f))
            self.assertEqual(header, results.CSV_FIELDS)
            self.assertEqual(len(rows), SAMPLE_RESULTS)
            self.assertEqual(rows[0]["experiment"], "memtype")
            self.assertEqual(rows[0]["caches_modelled"], "false")
            self.assertEqual(rows[0]["size"], "")
            self.assertEqual(rows[0]["line"], str(SAMPLE_FIRST_RESULT_LINE))
            copy = [r for r in rows if r["variant"] == "movntdq"][0]
            self.assertEqual(copy["size"], "4096")
            self.assertEqual(float(copy["median"]), 333.125)

            with open(out_json) as f:
                data = json.load(f)
            self.assertEqual(data["schema"], results.SCHEMA_VERSION)
            envs, res, _ = results.parse_log(SAMPLE)
            self.assertEqual(data["envs"], envs)
            self.assertEqual(data["results"], res)
            # results.load() reads its own JSON back
            self.assertEqual(results.load(out_json)["results"], res)

    def test_json_to_stdout(self):
        p = run_tool("results.results", SAMPLE)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(json.loads(p.stdout)["results"]),
                         SAMPLE_RESULTS)


class SeedsDataTest(unittest.TestCase):
    def test_seeds_data_is_consistent(self):
        with open(report.DEFAULT_SEEDS) as f:
            seeds = json.load(f)
        ids = [f["id"] for f in seeds["figures"]]
        self.assertEqual(len(ids), len(set(ids)))
        for fig in seeds["figures"]:
            with self.subTest(figure=fig["id"]):
                self.assertRegex(fig["file"], r"^00[0-4]_")
                self.assertIsInstance(fig["value"], (int, float))
                self.assertTrue(fig["locator"])
                # a number with no quote is read off the graph or derived
                if fig["quote"] is None:
                    self.assertTrue(fig["file"].endswith(".png") or
                                    "derived" in fig["locator"])
        for c in seeds["comparisons"]:
            with self.subTest(comparison=c["id"]):
                self.assertIn(c["seed_ratio"]["numerator"], ids)
                self.assertIn(c["seed_ratio"]["denominator"], ids)
                for side in ("numerator", "denominator"):
                    sel = c["ours"][side]
                    for key in ("experiment", "metric", "variant"):
                        self.assertIn(key, sel)
                if "modelled_from" in c:
                    self.assertIn(c["modelled_from"]["counter"],
                                  model_lines.SPREAD_COUNTERS)
                    self.assertNotEqual(c["modelled_from"]["metric"],
                                        c["ours"]["numerator"]["metric"])

    def test_seed_ratios(self):
        with open(report.DEFAULT_SEEDS) as f:
            seeds = json.load(f)
        rows = {r["id"]: r for r in seed_ratios.compare(seeds, [], True)}
        self.assertAlmostEqual(rows["tbench_trace_wb_over_off"]["seed_ratio"],
                               942.72 / 1862.24)
        self.assertAlmostEqual(rows["tbench_trace_0108_kept"]["seed_ratio"],
                               68.0 / 48.0)
        self.assertIsNone(rows["tbench_trace_wb_over_off"]["our_ratio"])
        self.assertIn("not measured", rows["tbench_trace_wb_over_off"]
                      ["notes"])


class ReportTest(unittest.TestCase):
    def make_report(self, log, tmp, *extra):
        out = os.path.join(tmp, "report.md")
        p = run_tool("results.report", log, "-o", out, *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return f.read()

    def test_end_to_end(self):
        with tempfile.TemporaryDirectory() as tmp:
            charts = os.path.join(tmp, "charts")
            text = self.make_report(SAMPLE, tmp, "--charts", charts)
        self.assertIn("does not model caches", text)
        self.assertIn("| CPU model | Synthetic test CPU \"TCG\" |", text)
        self.assertIn("| TSC | 2999.999 MHz |", text)
        for exp in ("memtype", "copy", "tbench", "kbuild",
                    "pagecache_splice", "tlb_purge"):
            self.assertIn("\n### %s\n" % exp, text)
        self.assertIn("| movntdq | copy_cost | cycles/KiB | 1 |  | 4096 | "
                      "326.462 | 333.125 | 349.781 | 7.00% | 7 |", text)
        # seed 000: WB/off is 942.72/1862.24; ours 1040/2000 (2 clients)
        self.assertRegex(text, r"\| tbench throughput, tracing on \(WB "
                         r"buffers\) / off \| 000 \| 0\.506 \| 0\.520 \| "
                         r"1\.027 \|")
        self.assertIn("caches not modelled: not meaningful here", text)
        self.assertIn("not measured in this run", text)
        if plot.find_gnuplot():
            self.assertIn("](charts/tbench_throughput.png)", text)
        else:
            self.assertIn("Charts skipped", text)

    def test_platform_with_caches_says_nothing_about_tcg(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "kvm.log")
            with open(SAMPLE, "rb") as f:
                data = f.read().replace(b'"caches_modelled":false',
                                        b'"caches_modelled":true')
            with open(log, "wb") as f:
                f.write(data)
            text = self.make_report(log, tmp, "--no-charts")
        self.assertNotIn("does not model caches", text)
        self.assertNotIn("not meaningful here", text)
        self.assertIn("| Caches modelled | yes |", text)

    def test_report_from_results_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            out_json = os.path.join(tmp, "r.json")
            p = run_tool("results.results", SAMPLE, "--json", out_json)
            self.assertEqual(p.returncode, 0, p.stderr)
            text = self.make_report(out_json, tmp, "--no-charts")
        self.assertIn("### pagecache_splice", text)

    def test_without_gnuplot_charts_are_skipped(self):
        data = results.load(SAMPLE)
        with open(report.DEFAULT_SEEDS) as f:
            seeds = json.load(f)
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(plot, "find_gnuplot", return_value=None):
            with self.assertRaises(plot.GnuplotMissing):
                plot.auto_charts(data["results"], tmp)
            self.assertEqual(os.listdir(tmp), [])
        text = report.build_report(data, seeds, [],
                                   "Charts skipped: gnuplot is not "
                                   "installed.")
        self.assertIn("Charts skipped", text)
        self.assertNotIn("![", text)

    def test_plot_cli_skips_cleanly_without_gnuplot(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, PATH=tmp)  # no gnuplot on this PATH
            p = run_tool("results.plot", "auto", SAMPLE, "--outdir", tmp,
                         env=env)
            self.assertEqual(p.returncode, 0)
            self.assertIn("gnuplot not found", p.stderr)
            self.assertEqual(os.listdir(tmp), [])


@unittest.skipUnless(shutil.which("gnuplot"), "gnuplot not installed")
class PlotTest(unittest.TestCase):
    def test_auto_charts(self):
        res = results.load(SAMPLE)["results"]
        plan = {(e, m): x for e, m, x in plot.chart_plan(res)}
        self.assertIsNone(plan[("memtype", "write_cost")])
        self.assertEqual(plan[("tbench", "throughput")], "clients")
        self.assertEqual(plan[("copy", "copy_cost")], "size")
        with tempfile.TemporaryDirectory() as tmp:
            charts = plot.auto_charts(res, tmp)
            self.assertEqual(len(charts), len(plan))
            for _, _, paths in charts:
                for path in paths:
                    self.assertGreater(os.path.getsize(path), 0)
            svg = os.path.join(tmp, "tbench_throughput.svg")
            with open(svg) as f:
                self.assertIn("<svg", f.read())

    def test_bar_and_line_cli(self):
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "bar")
            p = run_tool("results.plot", "bar", SAMPLE, "--experiment",
                         "kbuild", "--metric", "elapsed", "-o", base)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.exists(base + ".svg"))
            with open(base + ".gp") as f:
                script = f.read()
            self.assertIn('"trace_wb" 1380.0 1350.0 1400.0', script)
            base = os.path.join(tmp, "line")
            p = run_tool("results.plot", "line", SAMPLE, "--experiment",
                         "pagecache_splice", "--metric", "throughput",
                         "--x", "clients", "-o", base)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.exists(base + ".svg"))
            p = run_tool("results.plot", "bar", SAMPLE, "--experiment", "nope",
                         "--metric", "x", "-o", base)
            self.assertEqual(p.returncode, 1)
            self.assertIn("no results", p.stderr)


# Cache-model lines, SYNTHETIC: built here with the numbers the checks need.
COUNTER_ZERO = {k: 0 for k in model_lines.COUNTERS}


def model_line(kind, **fields):
    obj = {"kind": kind, "profile": "tiny"}
    if kind in ("region", "total"):
        obj.update(COUNTER_ZERO)
        obj.update({"label": "", "id": -1, "iters": 0, "by": 0, "cpu": 0})
    obj.update(fields)
    return "@@MODEL " + json.dumps(obj)


def model_region(label, rid, by=0, cpu=None, iters=100, **counters):
    return model_line("region", label=label, id=rid, iters=iters, by=by,
                      cpu=by if cpu is None else cpu, **counters)


TINY_PROFILES = """[tiny]
freq_mhz 1000
l1d 1024 2 3
l2 0 0 0
llc 16384 4 30
mem_latency 100
uc_load 120
"""


def figure(exp, variant, n):
    return {"experiment": exp, "variant": variant, "metric": "m",
            "unit": "u", "n": n}


class ModelTest(unittest.TestCase):
    def test_kernel_options_from_the_profiles_file(self):
        profiles = os.path.join(ROOT, "cachemodel", "profiles.txt")
        self.assertEqual(
            model_profile.kernel_options(profiles, "core2-2007"),
            "cachemodel=core2-2007 "
            "cachemodel.caches=l1d:32768:8,llc:4194304:16")
        self.assertIn("l2:262144:4",
                      model_profile.kernel_options(profiles, "skylake-2015"))
        with self.assertRaises(model_lines.ModelError):
            model_profile.kernel_options(profiles, "no-such-profile")

    def test_parse_rejects_bad_lines(self):
        with self.assertRaises(model_lines.ModelError):
            model_lines.parse_lines(["@@MODEL {bad"])
        with self.assertRaises(model_lines.ModelError):
            model_lines.parse_lines(['@@MODEL {"kind":"region"}'])
        with self.assertRaises(model_lines.ModelError):
            model_lines.parse_lines(["noise"])

    def test_attribution_by_cpu_and_order(self):
        objs = model_lines.parse_lines(
            [model_line("start", freq_mhz=1000)] +
            [model_region("fs", i, by=i % 2, cycles=10 * i)
             for i in range(1, 5)] +
            [model_region("fs", 1, by=1, cpu=0, cycles=999)] +
            [model_region("mt", 5 + i, cycles=100) for i in range(3)])
        res = [figure("fs", "packed/cpu0", 2), figure("fs", "packed/cpu1", 2),
               figure("fs", "packed", 2), figure("mt", "WB", 2),
               figure("mt", "UC", 1), figure("other", "x", 1)]
        skipped = model_lines.attribute(res, objs)
        # CPU 1 opened regions 1 and 3, CPU 0 regions 2 and 4.
        self.assertEqual(res[0]["model"]["regions"], [2, 4])
        self.assertEqual(res[1]["model"]["regions"], [1, 3])
        self.assertNotIn("model", res[2])          # an aggregate
        self.assertEqual(res[3]["model"]["regions"], [5, 6])
        self.assertEqual(res[4]["model"]["regions"], [7])
        # cycles 20 and 40 over 100 iterations: median 0.3 (the line
        # CPU 0 contributed to CPU 1's region 1 is not CPU 0's own)
        self.assertAlmostEqual(res[0]["model"]["cycles_per_iter"], 0.3)
        self.assertEqual(skipped, {"other": "no model regions"})

    def test_attribution_refuses_mismatched_counts(self):
        objs = model_lines.parse_lines([model_line("start")] +
                                 [model_region("mt", i) for i in range(3)])
        res = [figure("mt", "WB", 2)]
        skipped = model_lines.attribute(res, objs)
        self.assertIn("do not match", skipped["mt"])
        self.assertNotIn("model", res[0])

    def test_attribution_by_key(self):
        # copy-like: phases interleaved per repetition, keyed labels;
        # tbench-like: one region set serves two metrics, not a third.
        lines = [model_line("start", freq_mhz=1000)]
        rid = 0
        for rep in range(2):
            for ph, cyc in (("copy", 10), ("bystander", 50)):
                rid += 1
                lines.append(model_region("cp|movnti|%s|4096" % ph, rid,
                                          cycles=cyc * (rep + 1),
                                          llc_misses=rep))
        rid += 1
        lines.append(model_region("tb|trace_uc|throughput+ops|0", rid,
                                  cycles=700))
        objs = model_lines.parse_lines(lines)
        res = [dict(figure("cp", "movnti", 2), metric="copy", size=4096),
               dict(figure("cp", "movnti", 2), metric="bystander",
                    size=4096),
               dict(figure("cp", "movnti", 2), metric="copy", size=64),
               dict(figure("tb", "trace_uc", 1), metric="throughput"),
               dict(figure("tb", "trace_uc", 1), metric="ops"),
               dict(figure("tb", "trace_uc", 9), metric="event_cycles")]
        skipped = model_lines.attribute(res, objs)
        self.assertEqual(res[0]["model"]["regions"], [1, 3])
        self.assertEqual(res[1]["model"]["regions"], [2, 4])
        # bystander: cycles 50 and 100 over 100 iterations
        self.assertAlmostEqual(res[1]["model"]["cycles_per_iter"], 0.75)
        self.assertAlmostEqual(res[1]["model"]["llc_misses_per_iter"],
                               0.005)
        self.assertNotIn("model", res[2])           # no regions of its key
        self.assertEqual(res[3]["model"]["regions"], [5])
        self.assertEqual(res[4]["model"]["regions"], [5])
        self.assertNotIn("model", res[5])           # not a metric of it
        self.assertEqual(skipped, {})

    def copy_check(self, nt_cycles, nt_lines=0):
        lines = [model_line("start", freq_mhz=1000)]
        for rid, (variant, cyc, misses) in enumerate(
                (("rep_movsb", 4000, 10), ("movnti", nt_cycles, nt_lines))):
            lines.append(model_region(
                "copy|%s|bystander_interleaved|16777216" % variant, rid + 1,
                iters=1, cycles=cyc, llc_misses=misses // 2,
                prefetches=misses - misses // 2))
        res = [dict(figure("copy", v, 1), metric="bystander_interleaved",
                    size=16777216) for v in ("rep_movsb", "movnti")]
        return model_checks.check_copy(res, model_lines.parse_lines(lines))

    def test_copy_check_wants_movnti_to_spare_the_bystander(self):
        problems, text = self.copy_check(1200)
        self.assertEqual(problems, [])
        self.assertIn("1200.0 cycles/KiB", text)
        problems, _ = self.copy_check(3900, nt_lines=6)
        self.assertTrue(problems and "not below" in problems[0])
        problems, _ = self.copy_check(4100)
        self.assertTrue(problems and "more than" in problems[0])
        problems, _ = model_checks.check_copy([], model_lines.parse_lines(
            [model_line("start")]))
        self.assertTrue(problems)

    def test_region_over_all_cpus_sums_them(self):
        # tbench pairs: the boot CPU opens the region, the server CPU works
        # in it too. Scope "all": both lines count, summed; scope "cpu":
        # only the opener's.
        lines = [model_line("start", freq_mhz=1000),
                 model_region("tb|pairs=1|throughput+ops|0", 1, by=0,
                              cycles=300, insns=30, scope="all"),
                 model_region("tb|pairs=1|throughput+ops|0", 1, by=0, cpu=1,
                              cycles=500, insns=50, scope="all"),
                 model_region("fs", 2, by=1, cycles=40, scope="cpu"),
                 model_region("fs", 2, by=1, cpu=0, cycles=999,
                              scope="cpu")]
        rs = model_lines.regions(model_lines.parse_lines(lines))
        self.assertEqual([r["id"] for r in rs], [1, 2])
        self.assertEqual(rs[0]["cycles"], 800)
        self.assertEqual(rs[0]["insns"], 80)
        self.assertEqual(rs[0]["cpus"], 2)
        self.assertEqual(rs[0]["cycles_max"], 500)
        self.assertEqual(rs[1]["cycles"], 40)
        res = [dict(figure("tb", "pairs=1", 1), metric="throughput")]
        self.assertEqual(model_lines.attribute(
                             res, model_lines.parse_lines(lines)),
                         {})
        self.assertAlmostEqual(res[0]["model"]["cycles_per_iter"], 8.0)
        self.assertAlmostEqual(res[0]["model"]["cycles_max_per_iter"], 5.0)
        self.assertEqual(res[0]["model"]["cpus"], 2)

    def test_tracing_slowdowns_against_trace_off(self):
        lines = [model_line("start", freq_mhz=1000)]
        for rid, (v, cyc) in enumerate((("trace_off", 800),
                                        ("trace_wb", 1000),
                                        ("trace_uc", 1600)), 1):
            causes = ({"wc_partials": 300, "wc_partial_fence": 200,
                       "wc_partial_locked": 0, "wc_partial_uncached": 0,
                       "wc_partial_evict": 100}
                      if v == "trace_wb" else {})
            lines.append(model_region("tbench|%s|throughput+ops|0" % v,
                                      rid, cycles=cyc, insns=cyc // 2,
                                      **causes))
        res = [dict(figure("tbench", v, 1), metric=m)
               for v in ("trace_off", "trace_wb", "trace_uc")
               for m in ("throughput", "ops")]
        res.append(dict(figure("kbuild", "trace_wb", 1), metric="real_ms"))
        model_lines.attribute(res, model_lines.parse_lines(lines))
        rows = model_tracing.slowdowns(res)
        self.assertEqual([r["variant"] for r in rows],
                         ["trace_off", "trace_wb", "trace_uc"])
        self.assertIsNone(rows[0]["slowdown_pct"])
        # 1 - 800/1000 and 1 - 800/1600: throughput lost, as the seeds
        self.assertAlmostEqual(rows[1]["slowdown_pct"], 20.0)
        self.assertAlmostEqual(rows[2]["slowdown_pct"], 50.0)
        # one vCPU: its busy cycles are the figure, the slowdowns equal
        self.assertAlmostEqual(rows[2]["busy_slowdown_pct"], 50.0)
        self.assertAlmostEqual(rows[2]["cycles_per_op"], 16.0)
        self.assertAlmostEqual(rows[2]["insns_per_op"], 8.0)
        # flush causes: per operation where the plugin gave them, else
        # unknown (files of older plugins), never a made-up 0
        self.assertAlmostEqual(rows[1]["wc_partial_fence"], 2.0)
        self.assertAlmostEqual(rows[1]["wc_partial_evict"], 1.0)
        self.assertIsNone(rows[2]["wc_partial_fence"])
        self.assertIn("n/a", model_tracing.slowdown_table(rows, "tiny"))

    def test_paced_regions_divide_elapsed_and_flag_breaks(self):
        # Two CPUs' lines of one "all" region: the figure divides its
        # elapsed time, the busy cycles stand beside it; a region whose
        # pacing broke makes the figure and the slowdown invalid.
        lines = [model_line("start", freq_mhz=1000)]
        for rid, (v, el, breaks) in enumerate((("trace_off", 600, 0),
                                               ("trace_wb", 900, 1)), 1):
            for cpu in (0, 1):
                lines.append(model_region(
                    "tbench|%s|throughput+ops|0" % v, rid, cpu=cpu,
                    scope="all", cycles=500, insns=100, elapsed=el,
                    paced=2000, pace_breaks=breaks, valid=breaks == 0))
        res = [dict(figure("tbench", v, 1), metric="throughput")
               for v in ("trace_off", "trace_wb")]
        model_lines.attribute(res, model_lines.parse_lines(lines))
        off, wb = res[0]["model"], res[1]["model"]
        self.assertEqual(off["basis"], "elapsed")
        self.assertAlmostEqual(off["cycles_per_iter"], 6.0)
        self.assertAlmostEqual(off["busy_cycles_per_iter"], 10.0)
        self.assertTrue(off["valid"])
        self.assertFalse(wb["valid"])
        self.assertEqual(wb["pace_breaks"], 1)
        rows = model_tracing.slowdowns(res)
        # elapsed 600 -> 900 loses a third of the throughput; the busy
        # cycles (500 on each CPU in both) none: the extra ran in parallel
        self.assertAlmostEqual(rows[1]["slowdown_pct"], 100 / 3)
        self.assertAlmostEqual(rows[1]["busy_slowdown_pct"], 0.0)
        self.assertIsNone(rows[0]["busy_slowdown_pct"])
        self.assertTrue(rows[0]["valid"])
        self.assertFalse(rows[1]["valid"])
        self.assertIn("NO (1 pacing breaks)",
                      model_tracing.slowdown_table(rows, "tiny"))
        # a valid variant divided by an invalid trace_off says so, and
        # does not claim pacing of its own broke
        off_bad = [dict(r, model=dict(r["model"])) for r in res]
        off_bad[0]["model"].update(valid=False, pace_breaks=2)
        off_bad[1]["model"].update(valid=True, pace_breaks=0)
        table = model_tracing.slowdown_table(
            model_tracing.slowdowns(off_bad), "tiny")
        self.assertIn("NO (trace_off is invalid)", table)
        self.assertIn("NO (2 pacing breaks)", table)
        self.assertNotIn("not paced", table)
        # the report marks the figure and leaves its ratio out
        self.assertIn("INVALID: 1 pacing breaks",
                      report.modelled_cell(wb, "9"))
        self.assertEqual(report.modelled_cell(off, "6"), "6")
        res[1]["unit"] = res[0]["unit"] = "MB/s"
        self.assertIsNone(seed_ratios.modelled_ratio(res[1], res[0]))
        self.assertIsNotNone(seed_ratios.modelled_ratio(res[0], res[0]))
        # check-pacing: paced repetitions within 2 %, all valid
        def run(els, valid=True, breaks=0, paced=2000, locked=96):
            ls = [model_line("start", freq_mhz=1000, cpus=2)]
            for rid, el in enumerate(els, 1):
                ls += [model_region("tb", rid, cpu=c, scope="all",
                                    iters=10, cycles=500, elapsed=el,
                                    paced=paced, pace_breaks=breaks,
                                    locked=locked,
                                    valid=valid) for c in (0, 1)]
            ls.append(model_line("summary", cpus=2, paced=paced,
                                 pace_waits=5, pace_stalls=0,
                                 pace_breaks=breaks))
            return model_checks.check_pacing(model_lines.parse_lines(ls),
                                      out=io.StringIO())
        self.assertEqual(run([1000, 1015]), [])
        self.assertIn("differ by 3.00 %", run([1000, 1030])[0])
        self.assertTrue(any("yet marked valid" in p
                            for p in run([1000, 1000], breaks=1)))
        self.assertTrue(any("invalid" in p for p in
                            run([1000, 1000], valid=False, breaks=1)))
        self.assertTrue(any("not paced" in p for p in
                            run([1000, 1000], valid=False, paced=0)))
        # parallel TCG's atomics lost on their way to the engine
        self.assertTrue(any("no locked operation" in p for p in
                            run([1000, 1000], locked=0)))
        # one vCPU: no timing fields, busy cycles, valid
        one = model_lines.parse_lines([model_line("start", freq_mhz=1000),
                                 model_region("x", 1, cycles=700)])
        r = model_lines.regions(one)[0]
        self.assertEqual(model_lines.region_basis(r), "busy")
        self.assertTrue(model_lines.region_valid(r))
        with self.assertRaises(model_lines.ModelError):
            model_lines.parse_lines([model_line("start"),
                               model_region("x", 1, valid="yes")])

    def test_compare_serial(self):
        # Two boots of a serially paced command: every serial region's
        # elapsed cycles per iteration within 0.5 % of the other boot's,
        # valid, in both, and some start aligned in each.
        def boot(els, serial=True, valid=True, aligned=4):
            ls = [model_line("start", freq_mhz=1000, cpus=2)]
            for rid, el in enumerate(els, 1):
                ls += [model_region("pc", rid, cpu=c, scope="all",
                                    iters=10, cycles=500, elapsed=el,
                                    paced=1000, pace_breaks=0,
                                    serial=serial, valid=valid)
                       for c in (0, 1)]
            ls.append(model_line("summary", cpus=2, paced=1000,
                                 pace_waits=5, pace_stalls=0,
                                 pace_breaks=0, aligned=aligned,
                                 doorbell_errors=0))
            return model_lines.parse_lines(ls)

        def cmp(a, b):
            return model_checks.compare_serial(a, b, out=io.StringIO())
        self.assertEqual(cmp(boot([1000, 2000]), boot([1004, 2000])), [])
        self.assertIn("0.600 % apart",
                      cmp(boot([1000, 2000]), boot([1006, 2000]))[0])
        self.assertTrue(any("no region was paced serially" in p for p in
                            cmp(boot([1000], serial=False), boot([1000]))))
        self.assertTrue(any("no start was aligned" in p for p in
                            cmp(boot([1000]), boot([1000], aligned=0))))
        self.assertTrue(any("invalid" in p for p in
                            cmp(boot([1000], valid=False), boot([1000]))))
        self.assertTrue(any("different serial regions" in p for p in
                            cmp(boot([1000, 2000]), boot([1000]))))

    def test_keyed_attribution_of_variants_in_one_pass(self):
        # tlb_purge-like: two variants counted over one run share its
        # region; each variant's metrics take it once, the spread of one
        # region is undefined, of three it is (max - min) / median.
        objs = model_lines.parse_lines([
            model_line("start", freq_mhz=1000),
            model_region("tp|old+new|purges+calls|0", 1, cycles=500),
            model_region("pc|v|tp|0", 2, cycles=100),
            model_region("pc|v|tp|0", 3, cycles=200),
            model_region("pc|v|tp|0", 4, cycles=110)])
        res = [dict(figure("tp", v, 1), metric=m)
               for v in ("old", "new") for m in ("purges", "calls")]
        res.append(dict(figure("pc", "v", 3), metric="tp"))
        skipped = model_lines.attribute(res, objs)
        self.assertEqual(skipped, {})
        for r in res[:4]:
            self.assertEqual(r["model"]["regions"], [1])
        self.assertIsNone(res[0]["model"]["spread_pct"])
        self.assertAlmostEqual(res[4]["model"]["spread_pct"],
                               100.0 * (2.0 - 1.0) / 1.1)
        # a second run of the same variants wants a second region
        res2 = res[:4] + [dict(figure("tp", "old", 1), metric="purges")]
        for r in res2:
            r.pop("model", None)
        skipped = model_lines.attribute(res2, objs[:2])
        self.assertIn("0 regions for 1 repetitions", skipped["tp"])

    def test_keyed_attribution_refuses_short_counts(self):
        objs = model_lines.parse_lines([model_line("start"),
                                  model_region("cp|x|copy|64", 1)])
        res = [dict(figure("cp", "x", 2), metric="copy", size=64)]
        skipped = model_lines.attribute(res, objs)
        self.assertIn("1 regions for 2 repetitions", skipped["cp"])
        self.assertNotIn("model", res[0])

    def test_keyed_attribution_of_a_one_pass_distribution(self):
        # trace_cost-like: 9 timed events in one region of 9 iterations
        # give one figure of n=9; a region of another count does not.
        objs = model_lines.parse_lines([
            model_line("start", freq_mhz=1000),
            model_region("tc|trace_wb|event_cycles|0", 1, iters=9,
                         cycles=900),
            model_region("tc|trace_uc|event_cycles|0", 2, iters=8,
                         cycles=900)])
        res = [dict(figure("tc", "trace_wb", 9), metric="event_cycles"),
               dict(figure("tc", "trace_uc", 9), metric="event_cycles")]
        skipped = model_lines.attribute(res, objs)
        self.assertEqual(res[0]["model"]["regions"], [1])
        self.assertAlmostEqual(res[0]["model"]["cycles_per_iter"], 100.0)
        self.assertNotIn("model", res[1])
        self.assertIn("1 regions for 9 repetitions", skipped["tc"])

    def calibration(self, l1_cycles):
        lines = [model_line("start"), model_line("hello")]
        for label, per in (("chase-l1", l1_cycles), ("chase-llc", 30),
                           ("chase-mem", 100), ("chase-uc", 120)):
            lines.append(model_region("modelcal/" + label, len(lines),
                                      loads=1000, mem_cycles=per * 1000))
        lines.append(model_region("modelcal/wc-write", 99, iters=16,
                                  wc_bursts=16))
        with tempfile.TemporaryDirectory() as d:
            prof = os.path.join(d, "p.txt")
            with open(prof, "w") as f:
                f.write(TINY_PROFILES)
            out = open(os.devnull, "w")
            try:
                return model_checks.check_calibration(
                    model_lines.parse_lines(lines), prof, out)
            finally:
                out.close()

    def test_calibration_matches_and_fails(self):
        self.assertEqual(self.calibration(3), [])
        problems = self.calibration(5)
        self.assertTrue(any("chase-l1" in p for p in problems))
        self.assertTrue(any("UC/WB" in p for p in problems))

    def test_report_modelled_ratio(self):
        t = {"unit": "ns/op", "model": {"cycles_per_iter": 40.0}}
        u = {"unit": "ns/op", "model": {"cycles_per_iter": 10.0}}
        self.assertEqual(seed_ratios.modelled_ratio(t, u), 4.0)
        # a rate: the ratio of rates is the inverse of the cycles' ratio
        r1 = {"unit": "MB/s", "model": {"cycles_per_iter": 40.0}}
        r2 = {"unit": "MB/s", "model": {"cycles_per_iter": 10.0}}
        self.assertEqual(seed_ratios.modelled_ratio(r1, r2), 0.25)
        self.assertIsNone(seed_ratios.modelled_ratio({"unit": "x"}, u))
        # a count: counts per modelled cycle of their regions
        c1 = {"unit": "purges (ia64 model)", "median": 6.0,
              "model": {"cycles_per_iter": 100.0}}
        c2 = {"unit": "purges (ia64 model)", "median": 3.0,
              "model": {"cycles_per_iter": 200.0}}
        self.assertEqual(seed_ratios.modelled_ratio(c1, c2), 4.0)
        self.assertEqual(seed_ratios.modelled_ratio(dict(c1, median=0.0), c2),
                         0.0)
        self.assertIsNone(seed_ratios.modelled_ratio(c1, dict(c2, median=0.0)))
        self.assertEqual(seed_ratios.unit_kind("tsc-cycles/KiB"), "time")
        self.assertEqual(seed_ratios.unit_kind("ms"), "time")
        self.assertEqual(seed_ratios.unit_kind("MiB/s"), "rate")
        self.assertEqual(seed_ratios.unit_kind("IPIs/1000 pages"), "count")

    def test_report_modelled_counts(self):
        """A comparison of PMU counts takes the model's counter from the
        regions of the figures "modelled_from" names."""
        c = {"ours": {"numerator": {"experiment": "copy", "variant": "nt",
                                    "metric": "copy_misses"},
                      "denominator": {"experiment": "copy", "variant": "std",
                                      "metric": "copy_misses"}},
             "modelled_from": {"metric": "copy", "counter": "llc_misses"}}

        def fig(variant, misses, valid=True, size=64):
            return {"experiment": "copy", "variant": variant,
                    "metric": "copy", "unit": "tsc-cycles/KiB", "size": size,
                    "median": 1.0, "n": 2,
                    "model": {"llc_misses_per_iter": misses, "valid": valid,
                              "regions": [1, 2],
                              "llc_misses_spread_pct": 1.5}}
        res = [fig("nt", 6.0), fig("std", 2.0), fig("nt", 100.0, size=8)]
        num, den, ratio = seed_ratios.modelled_counts(res, c)
        self.assertEqual(ratio, 3.0)  # the largest size's, 6 / 2
        self.assertIs(num, res[0])
        self.assertIsNone(seed_ratios.modelled_counts(res, dict(
            c, modelled_from=None)))
        self.assertIsNone(seed_ratios.modelled_counts(res[1:2], c))
        self.assertIsNone(seed_ratios.modelled_counts(
            [fig("nt", 6.0), fig("std", 2.0, valid=False)], c)[2])
        self.assertIsNone(seed_ratios.modelled_counts(
            [fig("nt", 6.0), fig("std", 0.0)], c)[2])
        self.assertEqual(
            seed_ratios.model_spread(num, den, "llc_misses"),
            "modelled llc misses: numerator 1.50 % (2 repetitions), "
            "denominator 1.50 % (2 repetitions) (one region for both)")
        rows = seed_ratios.compare({"figures": [
            {"id": "a", "value": 2.0}, {"id": "b", "value": 1.0}],
            "comparisons": [dict(c, id="x", title="t", seed="001",
                                 seed_ratio={"numerator": "a",
                                             "denominator": "b"})]},
            res, True)
        self.assertEqual(rows[0]["model_ratio"], 3.0)
        self.assertIsNone(rows[0]["our_ratio"])
        self.assertIn("cache model's llc misses per KiB in the regions "
                      "of the copy figures (size=64; a model", rows[0]["notes"])

    def test_report_seed_spread_line(self):
        num = {"n": 3, "spread_pct": 2.5,
               "model": {"regions": [1, 2, 3], "spread_pct": 0.5}}
        den = {"n": 1, "spread_pct": None,
               "model": {"regions": [4], "spread_pct": None}}
        self.assertEqual(
            seed_ratios.spread_line(num, den, {"profile": "tiny"}),
            "spread between repetitions: numerator 2.50 % (3 "
            "repetitions), denominator 1 repetition; modelled: numerator "
            "0.50 % (3 repetitions), denominator 1 repetition")
        self.assertNotIn("modelled", seed_ratios.spread_line(num, den))
        self.assertIsNone(seed_ratios.spread_line(None, den))

    def test_report_cost_section(self):
        cost = {"profile": "tiny", "cpus": 2, "cmdline": "run=default",
                "load_average": [1.0, 0.5, 0.25], "state_bytes": 3 << 20,
                "pairs": [{"plain_cpu_s": 10.0, "model_cpu_s": 30.0,
                           "plain_wall_s": 8.0, "model_wall_s": 20.0},
                          {"plain_cpu_s": 10.0, "model_cpu_s": 40.0,
                           "plain_wall_s": 8.0, "model_wall_s": 28.0}],
                "experiments": {"copy": {"plain_wall_s": 4.0,
                                         "model_wall_s": 12.0},
                                "idle": {"plain_wall_s": 0.0,
                                         "model_wall_s": 0.1}}}
        text = "\n".join(report.section_cost(cost))
        self.assertIn("| 1 | 10.0 s | 30.0 s | 3.0x | 8.0 s | 20.0 s | "
                      "2.5x |", text)
        self.assertIn("| all | 20.0 s | 70.0 s | 3.5x | 16.0 s | 48.0 s | "
                      "3.0x |", text)
        self.assertIn("| copy | 4.0 s | 12.0 s | 3.0x |", text)
        self.assertIn("| idle | 0.0 s | 0.1 s | n/a |", text)
        self.assertIn("Model state: 3.0 MiB", text)
        # A record from before the modelled boot's command line was kept:
        # the profile's name alone, as such boots had it.
        self.assertIn("as `run=default cachemodel=tiny`", text)
        text = "\n".join(report.section_cost(dict(
            cost, model_cmdline="run=default cachemodel=tiny "
            "cachemodel.caches=l1d:4096:4")))
        self.assertIn("as `run=default cachemodel=tiny "
                      "cachemodel.caches=l1d:4096:4`", text)
        line = "\n".join(report.model_state_line(
            {"profile": "tiny", "summary": {"state_bytes": 1 << 20}}))
        self.assertIn("Model state: 1.0 MiB", line)
        self.assertEqual(report.model_state_line({"profile": "tiny"}), [])

    def test_model_cost_spread(self):
        """The spread line of model_cost.py: each pair's ratio against its
        own plain boot (not the sums'), the extremes of each boot's CPU
        time, and nothing for a single pair."""
        pairs = [{"plain_cpu_s": 21.0, "model_cpu_s": 144.7},
                 {"plain_cpu_s": 16.9, "model_cpu_s": 140.9},
                 {"plain_cpu_s": 19.2, "model_cpu_s": 146.5}]
        self.assertEqual(
            model_cost.spread(pairs),
            "spread over 3 pairs: model x 6.9x to 8.3x; plain CPU 16.9 to "
            "21.0 s, model CPU 140.9 to 146.5 s")
        self.assertIsNone(model_cost.spread(pairs[:1]))
        self.assertIsNone(model_cost.spread([]))
        self.assertIsNone(model_cost.spread(
            [{"plain_cpu_s": 0.0, "model_cpu_s": 1.0}] * 2))

    def test_model_cost_cmdline(self):
        """The modelled boot boots as `make run MODEL=` does (the profile's
        geometry from cachemodel/profiles.txt), or with the name alone."""
        self.assertEqual(
            model_cost.modelled_cmdline("run=copy", "core2-2007"),
            "run=copy cachemodel=core2-2007 "
            "cachemodel.caches=l1d:32768:8,llc:4194304:16")
        self.assertEqual(
            model_cost.modelled_cmdline("run=copy", "core2-2007", True),
            "run=copy cachemodel=core2-2007")
        sky = model_cost.modelled_cmdline("run=default", "skylake-2015")
        self.assertIn("l2:262144:4", sky)
        self.assertIn("llc:8388608:16", sky)

    def test_report_cost_section_floor(self):
        """model_cost.py's record with the callbacks-only boot and the
        per-experiment CPU times: both get their columns."""
        pair = {"plain_cpu_s": 10.0, "floor_cpu_s": 14.0, "model_cpu_s": 50.0,
                "plain_wall_s": 8.0, "floor_wall_s": 9.0,
                "model_wall_s": 30.0}
        cost = {"profile": "tiny", "cpus": 2, "cmdline": "run=default",
                "load_average": [1.0, 0.5, 0.25], "state_bytes": 1 << 20,
                "pairs": [pair],
                "experiments": {"tbench": {
                    "plain_wall_s": 2.0, "plain_cpu_s": 3.0,
                    "floor_wall_s": 2.5, "floor_cpu_s": 4.0,
                    "model_wall_s": 10.0, "model_cpu_s": 15.0}}}
        text = "\n".join(report.section_cost(cost))
        self.assertIn("| 1 | 10.0 s | 14.0 s | 1.4x | 50.0 s | 5.0x | "
                      "8.0 s | 30.0 s | 3.8x |", text)
        self.assertIn("callbacks only CPU | floor ratio |", text)
        self.assertIn("| tbench | 2.0 s | 10.0 s | 5.0x | 3.0 s | 15.0 s | "
                      "5.0x |", text)
        no_floor = dict(cost, pairs=[{k: v for k, v in pair.items()
                                      if not k.startswith("floor")}])
        self.assertNotIn("floor ratio",
                         "\n".join(report.section_cost(no_floor)))

    def test_report_tracing_section(self):
        with open(report.DEFAULT_SEEDS) as f:
            seeds = json.load(f)

        def fig(v, metric, value, cyc=None):
            r = dict(figure("tbench", v, 1), metric=metric, median=value)
            if cyc is not None:
                r["model"] = {"cycles_per_iter": cyc, "insns_per_iter": 1.0}
            return r
        res = [fig("trace_off", "throughput", 1.0, 300.0),
               fig("trace_off", "insns_per_op", 100.0),
               fig("trace_wb", "throughput", 1.0, 400.0),
               fig("trace_wb", "insns_per_op", 104.0),
               fig("trace_wb", "slowdown_insns", 3.846)]
        text = "\n".join(report.section_tracing(
            res, seeds, {"profile": "tiny"}))
        self.assertIn("| tbench | trace_wb | 104 | 3.846 % | 400 | "
                      "25.00 % |", text)
        self.assertIn("| tbench | trace_off | 100 |  | 300 |  |", text)
        self.assertIn("52 %", text)                 # the seed's figure
        self.assertEqual(report.section_tracing(res[:1], seeds), [])

    def test_compare_ignores_summary(self):
        a = model_lines.parse_lines([model_line("start"), model_region("x", 1),
                               model_line("summary", host_seconds=1.0)])
        b = model_lines.parse_lines([model_line("start"), model_region("x", 1),
                               model_line("summary", host_seconds=2.0)])
        self.assertEqual(model_checks.comparable(a),
                         model_checks.comparable(b))
        c = model_lines.parse_lines([model_line("start"),
                               model_region("x", 1, loads=1)])
        self.assertNotEqual(model_checks.comparable(a),
                            model_checks.comparable(c))

    def test_compare_needs_region_lines(self):
        # Two clean runs without a single region: nothing was compared,
        # which must not pass as "identical".
        empty = [model_line("start"),
                 model_line("summary", doorbell_errors=0)]
        a = model_lines.parse_lines(empty)
        probs, _ = model_checks.compare(a, model_lines.parse_lines(empty))
        self.assertEqual(probs, ["neither run has a region line: nothing "
                                 "to compare"])
        full = model_lines.parse_lines(empty[:1] + [model_region("x", 1)] +
                                 empty[1:])
        self.assertEqual(model_checks.compare(full, list(full)), ([], 2))
        probs, _ = model_checks.compare(full, a)
        self.assertIn("the runs differ from line 2", probs[0])
        r = self.run_compare(empty, empty)
        self.assertEqual(r.returncode, 1)
        self.assertIn("nothing to compare", r.stderr)

    def run_compare(self, a_lines, b_lines):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, lines in (("a", a_lines), ("b", b_lines)):
                paths.append(os.path.join(d, name + ".jsonl"))
                with open(paths[-1], "w") as f:
                    f.write("\n".join(lines) + "\n")
            return run_tool("model.model", "compare", *paths)

    def test_doorbell_errors_fail_a_run(self):
        clean = [model_line("start"), model_region("x", 1),
                 model_line("summary", doorbell_errors=0, hellos=1,
                            regions=1)]
        self.assertEqual(model_lines.doorbell_problems(
                             model_lines.parse_lines(clean)),
                         [])
        bad = clean[:2] + [
            model_line("doorbell_error", cause="unknown_command", cpu=1,
                       offset=0x2ff, label="modelcal"),
            model_line("summary", doorbell_errors=3, doorbell_error_causes={
                "unknown_command": 2, "nested_begin": 1, "offset": 0})]
        probs = model_lines.doorbell_problems(model_lines.parse_lines(bad))
        self.assertEqual(probs[0], "3 doorbell error(s) (nested_begin 1, "
                                   "unknown_command 2)")
        self.assertIn("cpu 1, unknown_command at offset 0x2ff, label "
                      "'modelcal'", probs[1])
        # A run cut short (no summary) is not clean either.
        self.assertIn("no summary line",
                      model_lines.doorbell_problems(
                          model_lines.parse_lines(clean[:2]))[0])
        # compare fails on either run's errors, even when equal.
        probs, _ = model_checks.compare(model_lines.parse_lines(bad),
                                 model_lines.parse_lines(bad))
        self.assertTrue(probs[0].startswith("first run: 3 doorbell"))
        r = self.run_compare(clean, bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("second run: 3 doorbell error(s)", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.jsonl")
            for lines, rc in ((clean, 0), (bad, 1)):
                with open(path, "w") as f:
                    f.write("\n".join(lines) + "\n")
                self.assertEqual(run_tool("model.model", "check-doorbell",
                                          path).returncode, rc)
            # results.py keeps the problems, report.py flags them.
            log = os.path.join(d, "run.log")
            with open(log, "w") as f:
                f.write(sample_env_line() + "\n" + result_line() + "\n")
            r = run_tool("results.results", log, "--model", path)
            self.assertEqual(r.returncode, 0)
            self.assertIn("WARNING: 3 doorbell error(s)", r.stderr)
            data = json.loads(r.stdout)
            text = "\n".join(report.model_warnings(data["model"]))
            self.assertIn("WARNING: the cache model's figures are not "
                          "trustworthy", text)
            self.assertIn("3 doorbell error(s)", text)
        self.assertEqual(report.model_warnings(
            {"profile": "tiny", "problems": []}), [])
def grub_words(line):
    """The words GRUB makes of a grub.cfg command line, by the quoting
    rules of GRUB's manual (Shell-like scripting: Quoting): in single
    quotes every character is literal; outside, a backslash takes the
    next character literally and blanks separate words. Only what
    tools/image/mkiso.sh writes: no double quotes, no $ outside quotes."""
    words, cur, i, inword = [], [], 0, False
    while i < len(line):
        c = line[i]
        if c == "'":
            j = line.index("'", i + 1)
            cur.append(line[i + 1:j])
            i, inword = j + 1, True
            continue
        if c == "\\":
            cur.append(line[i + 1])
            i, inword = i + 2, True
            continue
        if c in " \t":
            if inword:
                words.append("".join(cur))
            cur, inword = [], False
        else:
            assert c not in "\"$;|&<>{}", "unquoted %r in %r" % (c, line)
            cur.append(c)
            inword = True
        i += 1
    if inword:
        words.append("".join(cur))
    return words


class KcmdlineQuotingTest(unittest.TestCase):
    """KCMDLINE through make and sh (the Makefile's recipe, run by sh
    with mkiso.sh replaced by a printf) and through GRUB's quoting (the
    grub.cfg of mkiso.sh --cfg, read by GRUB's rules). The kernel's part,
    and GRUB's own reading, are the cmdline-quoting boot."""

    NASTY = ['run=none note="a;b|c"', "it's=1 d=$HOME e=$(echo x) f=`id`",
             "b=back\\slash x=\\x41  two", "h=#c p=% s=* t='' u=\\'",
             "run=default"]

    def make_arg(self, kcmdline):
        """The command line mkiso.sh gets from make iso KCMDLINE=..."""
        r = subprocess.run(["make", "-n", "--no-print-directory", "iso",
                            "KCMDLINE=" + kcmdline, "ICOUNT=", "MODEL="],
                           cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
        lines = [l for l in r.stdout.split("\n")
                 if "tools/image/mkiso.sh" in l]
        self.assertEqual(len(lines), 1, r.stdout + r.stderr)
        # sh runs the recipe line; a function stands in for "sh
        # tools/image/mkiso.sh KERNEL ISO CMDLINE TIMEOUT" and prints CMDLINE.
        r = subprocess.run(["sh", "-c", 'sh() { printf "%s" "$4"; }\n' +
                            lines[0]], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def grub_line(self, kcmdline):
        """The kernel's words in mkiso.sh's grub.cfg, joined as GRUB
        joins them."""
        r = subprocess.run(["sh", MKISO, "--cfg", kcmdline],
                           capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        entry = [l.strip() for l in r.stdout.split("\n")
                 if l.strip().startswith("multiboot2 ")][0]
        words = grub_words(entry)
        self.assertEqual(words[:2], ["multiboot2", "/boot/kernel.elf"])
        title = [l for l in r.stdout.split("\n")
                 if l.startswith("menuentry ")][0]
        self.assertEqual(grub_words(title[:-2]),
                         ["menuentry", "kernel: run the experiments (%s)"
                          % kcmdline])
        return " ".join(words[2:])

    def test_make_and_sh_pass_it_as_typed(self):
        for k in self.NASTY:
            self.assertEqual(self.make_arg(k), k)

    def test_grub_cfg_quotes_every_word(self):
        for k in self.NASTY + ["", "a", "  lead", "trail "]:
            self.assertEqual(self.grub_line(k), k)

    def test_control_characters_refused(self):
        r = subprocess.run(["sh", MKISO, "--cfg", "a\nb"],
                           capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("control character", r.stderr)


class ScreenTest(unittest.TestCase):
    """tools/runner/screen.py reads text back from a picture of glyphs."""

    def render(self, text_rows, font_rows, w_cells, gw, gh, cw, invert=()):
        by_char = {c: rows for rows, c in font_rows.items()}
        w, h = w_cells * cw, len(text_rows) * gh
        px = bytearray(w * h * 3)
        for r, line in enumerate(text_rows):
            for c, ch in enumerate(line.ljust(w_cells)):
                rows = by_char[ch]
                for y in range(gh):
                    for x in range(gw):
                        on = rows[y] >> (gw - 1 - x) & 1
                        if (r, c) in invert:
                            on ^= 1
                        if on:
                            o = ((r * gh + y) * w + c * cw + x) * 3
                            px[o:o + 3] = b"\xaa\xaa\xaa"
        fd, path = tempfile.mkstemp(suffix=".ppm")
        with os.fdopen(fd, "wb") as f:
            f.write(b"P6\n%d %d\n255\n" % (w, h) + bytes(px))
        self.addCleanup(os.unlink, path)
        return path

    def test_framebuffer_font(self):
        gw, gh, glyphs = screen.load_psf(screen.FONT_FB)
        path = self.render([" kernel> help", "x=1 [ok]"], glyphs, 16, gw,
                           gh, gw, invert={(1, 9)})
        self.assertEqual(screen.screen_text(path),
                         [" kernel> help", "x=1 [ok]"])

    def test_vga_rom_font_and_unknown_cells(self):
        gw, gh, glyphs = screen.load_vga_rom_font()
        path = self.render(["Tmw0 xD"], glyphs, 80, gw, gh, 9)
        self.assertEqual(screen.screen_text(path), ["Tmw0 xD"])
        # A damaged cell is '?', not a guess.
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            hdr = data.index(b"255\n") + 4
            data[hdr:hdr + 3] = b"\x00\x00\x01"  # background changes
            f.seek(0)
            f.write(data)
        self.assertNotEqual(screen.screen_text(path), ["Tmw0 xD"])


class SessionScriptTest(unittest.TestCase):
    def test_parse_and_errors(self):
        steps = session.parse_script("# c\n\nexpect ^a$\nsend x y\n"
                                     "timeout 5\n")
        self.assertEqual([s[1] for s in steps], ["expect", "send",
                                                 "timeout"])
        for bad in ("frob x", "expect (", "timeout -1", "timeout x"):
            with self.assertRaises(session.ScriptError):
                session.parse_script(bad)

    def test_keyboard_codes(self):
        self.assertEqual(session.text_qcodes("aB-_"),
                         [["a"], ["shift", "b"], ["minus"],
                          ["shift", "minus"]])
        with self.assertRaises(session.ScriptError):
            session.text_qcodes("\u00e9")


class LabsTest(unittest.TestCase):
    """tools/labs/labs.py: what is masked, what is not, and transcripts."""

    def test_mask_keeps_words_not_figures(self):
        self.assertEqual(labs.mask("tsc  73091.281   1212610.343  2.4%"),
                         labs.mask("tsc  1.000  2.000  1395.02%"))
        self.assertEqual(labs.mask("git 834fdaec53f5-dirty at 0x1ffc0000"),
                         labs.mask("git 70302e9abcde at 0x200000"))
        self.assertNotEqual(labs.mask("PAT0=WB"), labs.mask("PAT0=WC"))
        self.assertNotEqual(labs.mask("-> 4 KiB page"),
                            labs.mask("-> 2 MiB page"))

    def test_transcripts_split_at_prompts(self):
        log = ("boot\r\nkernel> info pat\r\npat: x\r\n\r\n"
               "kernel> \x1b[Kpt 1\r\nerror: pt: no\r\nkernel> ")
        self.assertEqual(labs.transcripts(log),
                         [("info pat", ["kernel> info pat", "pat: x"]),
                          ("pt 1", ["kernel> pt 1", "error: pt: no"])])

    def test_blocks_and_errors(self):
        fd, path = tempfile.mkstemp(suffix=".md")
        with os.fdopen(fd, "w") as f:
            f.write("x\n<!-- shell: pt 1 (error-ok) -->\n```text\n"
                    "kernel> pt 1\n```\n<!-- shell: help -->\nno fence\n")
        self.addCleanup(os.unlink, path)
        with self.assertRaises(labs.LabError):
            labs.blocks_of(path)
        with open(path, "w") as f:
            f.write("<!-- shell: pt 1 (error-ok) -->\n```text\n"
                    "kernel> pt 1\n```\n")
        (b,) = labs.blocks_of(path)
        self.assertEqual((b.command, b.error_ok, b.lines, b.boot),
                         ("pt 1", True, ["kernel> pt 1"], "labs"))
        with open(path, "w") as f:
            f.write("<!-- shell@labs-model: run modelcal -->\n```text\n"
                    "kernel> run modelcal\n```\n"
                    "<!-- shell-run@labs-model: help -->\n")
        b, r = labs.blocks_of(path)
        self.assertEqual((b.command, b.boot, r.command, r.boot, r.lines),
                         ("run modelcal", "labs-model", "help",
                          "labs-model", None))


class NoiseTest(unittest.TestCase):
    """The kernel's "noisy" flag: optional, boolean, carried to the CSV
    and marked in the report (SYNTHETIC figures)."""

    def parse(self, *lines):
        return results.parse_lines([sample_env_line()] + list(lines))

    def test_schema(self):
        _, res, errors = self.parse(result_line(), result_line(noisy=True))
        self.assertEqual(errors, [])
        self.assertNotIn("noisy", res[0])
        self.assertIs(res[1]["noisy"], True)
        _, _, errors = self.parse(result_line(noisy="yes"))
        self.assertEqual(len(errors), 1)
        self.assertIn("key 'noisy' should be bool", errors[0].message)
        rows = list(csv.DictReader(io.StringIO(results.to_csv(res))))
        self.assertEqual([r["noisy"] for r in rows], ["", "true"])

    def test_report_marks_noisy_figures(self):
        _, res, _ = self.parse(result_line(variant="a"),
                               result_line(variant="b", noisy=True))
        text = "\n".join(report.section_results(res, [], None, "."))
        a = next(x for x in text.split("\n") if x.startswith("| a |"))
        b = next(x for x in text.split("\n") if x.startswith("| b |"))
        self.assertNotIn("NOISY", a)
        self.assertIn("%.2f%% **NOISY** |" % GOOD_RESULT["spread_pct"], b)
        self.assertIn("**1 of 2 figures NOISY**", text)
        _, res, _ = self.parse(result_line(variant="a"))
        self.assertNotIn("NOISY", "\n".join(
            report.section_results(res, [], None, ".")))


class ModelTableTest(unittest.TestCase):
    """tools/results/model_table.py: what make run MODEL= prints after a run
    (SYNTHETIC figures)."""

    def fig(self, variant, median, cycles=None, valid=True):
        r = {"experiment": "memtype", "variant": variant,
             "metric": "latency", "unit": "tsc-cycles/load",
             "median": median}
        if cycles is not None:
            r["model"] = {"profile": "tiny", "cycles_per_iter": cycles,
                          "ns_per_iter": cycles / 2,
                          "llc_misses_per_iter": 0.5, "valid": valid}
        return r

    def test_labelled_and_per_experiment(self):
        info = {"profile": "tiny", "hello": True, "problems": [],
                "unattributed": {"copy": "no regions"}}
        res = [self.fig("WB", 147, 18), dict(self.fig("UC", 150, 204,
                                                      valid=False),
                                             noisy=True),
               self.fig("WC", 29),
               dict(self.fig("x", 1), experiment="copy")]
        text = model_table.model_table(res, info)
        lines = text.split("\n")
        self.assertTrue(lines[0].startswith("=== MODELLED figures: cache "
                                            "model, profile tiny"))
        self.assertIn("memtype (MODELLED, profile tiny)", lines)
        wb = next(x for x in lines if x.startswith("WB "))
        self.assertEqual(wb.split(), ["WB", "latency", "tsc-cycles/load",
                                      "147", "18", "9", "0.5"])
        uc = next(x for x in lines if x.startswith("UC "))
        self.assertIn("150 NOISY", uc)
        self.assertIn("204 (INVALID: not paced)", uc)
        self.assertIn("(1 more figure(s) of memtype not seen by the model)",
                      lines)
        self.assertIn("copy: no modelled figures (no regions)", lines)
        self.assertNotIn("WARNING", text)
        info["hello"] = False
        self.assertIn("WARNING: the kernel never said hello",
                      model_table.model_table(res, info))

    def test_bad_model_file(self):
        r = run_tool("results.model_table", SAMPLE, os.path.join(HERE, "none"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("model_table: ", r.stderr)
        self.assertIn("none", r.stderr)
        r = run_tool("results.model_table", os.path.join(HERE, "bad_json.log"),
                     os.path.join(HERE, "none"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("line 5: @@RESULT: bad JSON", r.stderr)


if __name__ == "__main__":
    unittest.main()
