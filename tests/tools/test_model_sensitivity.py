#!/usr/bin/env python3
"""Tests of tools/runner/model_sensitivity.py (which profile keys are assumed, the
sweep's values, the flip analysis, its table and chart) and of seed 000's
normalised figures in tools/model/model.py (normalised) and tools/results/report.py
(section_seed000).

Data: the profiles, points and results below are SYNTHETIC, written by
hand in the formats of cachemodel/profiles.txt and tools/model/model.py; the
seed figures are tools/results/seeds_data.json's. No QEMU runs here. Run: python3
-m unittest tests/tools/test_model_sensitivity.py. The chart test runs
only when gnuplot is installed.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

from tools.model import model_tracing
from tools.results import report
from tools.results import seed_ratios
from tools.runner import model_sensitivity as ms
from tools.runner import session

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

PROFILES = """# a header comment that says assumed, before any profile
[one]
freq_mhz       2000           # a data sheet
# assumed: a block comment above the key
uc_store       36
mem_latency    200            # Assumed: ~100 ns
l1d            32768 8 3      # assumed, but three numbers
sfence         9              # a table

[two]
uc_store       40             # assumed
"""


def load_seeds():
    with open(ms.SEEDS, encoding="utf-8") as f:
        return json.load(f)


def modelled(exp, variant, metric, unit, cycles, cpus=1):
    """A result with model figures attached, as model_lines.attribute
    leaves it."""
    return {"experiment": exp, "variant": variant, "metric": metric,
            "unit": unit, "median": 1.0, "n": 1, "cpus": cpus,
            "model": {"cycles_per_iter": cycles, "insns_per_iter": 1.0,
                      "profile": "one"}}


def tracing_results(off, wb, wc, uc, kb=(100.0, 120.0, 130.0, 125.0)):
    res = []
    for v, c in zip(("trace_off", "trace_wb", "trace_wc", "trace_uc"),
                    (off, wb, wc, uc)):
        res.append(modelled("tbench", v, "throughput", "MB/s", c))
    for v, c in zip(("trace_off", "trace_wb", "trace_wc", "trace_uc"), kb):
        res.append(modelled("kbuild", v, "real_ms", "ms", c))
    return res


class ProfileTest(unittest.TestCase):
    def test_assumed_inline_and_block(self):
        e = {x["key"]: x for x in ms.profile_entries(PROFILES, "one")}
        self.assertTrue(e["uc_store"]["assumed"])      # block above
        self.assertTrue(e["mem_latency"]["assumed"])   # inline, any case
        self.assertFalse(e["freq_mhz"]["assumed"])     # header not counted
        self.assertFalse(e["sfence"]["assumed"])
        keys = [x["key"] for x in
                ms.assumed_keys(ms.profile_entries(PROFILES, "one"))]
        self.assertEqual(keys, ["uc_store", "mem_latency"])  # not l1d

    def test_sections_apart(self):
        e = ms.profile_entries(PROFILES, "two")
        self.assertEqual([(x["key"], x["values"]) for x in e],
                         [("uc_store", ["40"])])

    def test_unknown_profile(self):
        with self.assertRaises(ValueError):
            ms.profile_entries(PROFILES, "three")

    def test_with_value_changes_one_number(self):
        e = {x["key"]: x for x in ms.profile_entries(PROFILES, "one")}
        text = ms.with_value(PROFILES, e["mem_latency"], 466)
        again = {x["key"]: x for x in ms.profile_entries(text, "one")}
        self.assertEqual(again["mem_latency"]["values"], ["466"])
        self.assertTrue(again["mem_latency"]["assumed"])   # comment kept
        self.assertEqual(again["uc_store"]["values"], ["36"])
        other = ms.profile_entries(text, "two")
        self.assertEqual(other[0]["values"], ["40"])
        self.assertEqual(len(text.split("\n")), len(PROFILES.split("\n")))

    def test_real_profiles_parse(self):
        with open(os.path.join(ROOT, ms.PROFILES), encoding="utf-8") as f:
            text = f.read()
        keys = ms.assumed_keys(ms.profile_entries(text, "xeon5400-2008"))
        self.assertTrue(keys, "the seed machine's profile assumes nothing?")
        for e in keys:
            self.assertEqual(len(e["values"]), 1)


class RangeTest(unittest.TestCase):
    def test_uc_store_reaches_a_dram_round_trip(self):
        e = {"key": "uc_store", "values": ["36"]}
        pts, why = ms.sweep_values(e, {"mem_latency": 200})
        self.assertEqual(pts, [("low", 18), ("default", 36), ("high", 200)])
        self.assertTrue(why)

    def test_boolean_has_two_points(self):
        pts, _ = ms.sweep_values({"key": "llc_inclusive", "values": ["0"]},
                                 {})
        self.assertEqual(pts, [("default", 0), ("high", 1)])

    def test_no_inclusive_llc_per_die(self):
        # cm_profile_check() refuses llc_inclusive 1 with llc_cpus: the
        # sweep must not ask for it (a boot whose plugin fails to load)
        pts, why = ms.sweep_values({"key": "llc_inclusive", "values": ["0"]},
                                   {"llc_cpus": 2})
        self.assertEqual(pts, [("default", 0)])
        self.assertIn("llc_cpus", why)

    def test_unknown_key_half_to_twice(self):
        pts, why = ms.sweep_values({"key": "new_key", "values": ["10"]}, {})
        self.assertEqual(pts, [("low", 5), ("default", 10), ("high", 20)])
        self.assertEqual(why, ms.DEFAULT_RANGE[1])


class ConclusionTest(unittest.TestCase):
    def setUp(self):
        self.concl = ms.conclusions(load_seeds())
        self.ids = [c["id"] for c in self.concl]

    def test_seed_order_of_wc_and_uc(self):
        c = {x["id"]: x for x in self.concl}
        # The seed: WC the slowest (756 against 780 MB/s, 85.2 against
        # 84.3 s of a hot build).
        self.assertGreater(c["tbench_trace_uc_over_wc"]["seed_value"], 1)
        self.assertLess(c["kbuild_trace_uc_over_wc"]["seed_value"], 1)

    def test_direction_tie(self):
        self.assertEqual(ms.direction(1.0005), 0)
        self.assertEqual(ms.direction(1.002), 1)
        self.assertEqual(ms.direction(0.99), -1)
        self.assertIsNone(ms.direction(None))

    def test_evaluate_inverts_rates(self):
        # tbench throughput is a rate: the modelled ratio of a rate is
        # the inverse ratio of cycles.
        r = ms.evaluate(tracing_results(100, 110, 121, 115.5), self.concl)
        self.assertAlmostEqual(r["tbench_trace_wc_over_wb"], 110 / 121)
        self.assertAlmostEqual(r["tbench_trace_uc_over_wc"], 121 / 115.5)
        self.assertAlmostEqual(r["kbuild_trace_uc_over_wc"], 125 / 130)

    def points(self):
        default = ms.point_record(None, "default", None,
                                  tracing_results(100, 110, 121, 115.5), 1,
                                  self.concl)
        low = ms.point_record("uc_store", "low", 18,
                              tracing_results(100, 110, 121, 112), 1,
                              self.concl)
        high = ms.point_record("uc_store", "high", 200,
                               tracing_results(100, 110, 121, 140), 1,
                               self.concl)
        return [default, low, high]

    def test_flip_found_where_and_only_where(self):
        rows = ms.analyse(self.points(), self.concl)
        flips = {(r["point"], r["conclusion"]) for r in rows if r["flips"]}
        # UC/WC throughput: 121/115.5 > 1 at the default, 121/140 < 1 at
        # high; the low point stays above 1. UC/WB stays below 1.
        self.assertEqual(flips, {("high", "tbench_trace_uc_over_wc")})
        self.assertEqual(ms.flip_summary(rows)["uc_store"],
                         ["tbench_trace_uc_over_wc"])
        agree = {(r["point"], r["conclusion"]): r["agrees"] for r in rows}
        self.assertTrue(agree[("default", "tbench_trace_uc_over_wc")])
        self.assertFalse(agree[("high", "tbench_trace_uc_over_wc")])
        self.assertTrue(agree[("high", "tbench_trace_uc_over_wb")])

    def test_flip_is_against_the_default_not_the_seed(self):
        # kbuild UC/WC: the seed has UC cheaper (< 1); here UC is dearer
        # at every point (> 1): it disagrees with the seed, never flips.
        kb = (100.0, 120.0, 125.0, 130.0)
        pts = [ms.point_record(p, pt, v, tracing_results(100, 110, 121, 115,
                                                         kb), 1, self.concl)
               for p, pt, v in ((None, "default", None),
                                ("uc_store", "low", 18))]
        rows = [r for r in ms.analyse(pts, self.concl)
                if r["conclusion"] == "kbuild_trace_uc_over_wc"]
        self.assertEqual(len(rows), 2)
        self.assertFalse(any(r["flips"] for r in rows))
        self.assertFalse(any(r["agrees"] for r in rows))

    def test_undecided_conclusions_left_out(self):
        rows = ms.analyse(self.points(), self.concl)
        self.assertNotIn("pagecache_vanilla_scaling",
                         {r["conclusion"] for r in rows})

    def doc(self):
        return {"profile": "one", "commit": "x", "config": "synthetic",
                "params": {"uc_store": {"default": 36, "low": 18,
                                        "high": 200, "why": "a reason"}},
                "points": self.points()}

    def test_table_and_lines(self):
        text, rows = ms.text_table(self.doc(), self.concl)
        self.assertIn("a reason; flips tbench_trace_uc_over_wc\n", text)
        self.assertIn("*", text.split("uc_store        high")[1])
        lines = ms.result_lines(self.doc(), rows)
        self.assertEqual(len(lines), len(rows))
        first = json.loads(lines[0][len(ms.TAG):])
        self.assertEqual(first["profile"], "one")
        self.assertIn("flips", first)

    @unittest.skipUnless(shutil.which("gnuplot"), "gnuplot not installed")
    def test_chart(self):
        tmp = tempfile.mkdtemp()
        try:
            paths = ms.chart(self.doc(), self.concl,
                             os.path.join(tmp, "sens"))
            for p in paths:
                self.assertGreater(os.path.getsize(p), 0)
        finally:
            shutil.rmtree(tmp)

    def test_session_skips(self):
        text = ms.session_script("quick", {"tbench": "steps=5",
                                           "kbuild": ms.SKIP})
        self.assertIn("send run tbench quick steps=5\n", text)
        self.assertNotIn("kbuild", text)
        self.assertTrue(text.endswith("exit\n"))

    def test_session_stops_on_failure(self):
        # A failed experiment or a refused setting must end the session,
        # not leave it waiting for "done" until the boot's timeout.
        import re
        steps = session.parse_script(ms.session_script("quick", ms.SIZES))
        expect = next(a for _, c, a in steps if c == "expect" and
                      "tbench" in a)
        reject = next(a for _, c, a in steps if c == "reject")
        for line, bad in (("=== experiment tbench: done ===", False),
                          ("=== experiment tbench: FAILED ===", True),
                          ("error: run: tbench has no parameter 'x'", True)):
            self.assertTrue(re.search(expect, line, re.M), line)
            self.assertEqual(bool(re.search(reject, line, re.M)), bad, line)

    def test_chart_axis(self):
        self.assertEqual(ms.chart_y(0), 0)
        self.assertAlmostEqual(ms.chart_y(-0.9), -1.0)
        self.assertAlmostEqual(ms.chart_y(99.9), 3.0)


class NormalisedTest(unittest.TestCase):
    def test_model_normalised(self):
        rows = model_tracing.slowdowns(tracing_results(100, 110, 115, 130))
        n = {(x["experiment"], x["variant"]): x["normalised"]
             for x in model_tracing.normalised(rows)}
        # tbench cost per request 100 -> 110 (WB), WC 115: 0.5, UC 130: 2
        self.assertAlmostEqual(n[("tbench", "trace_wc")], 0.5)
        self.assertAlmostEqual(n[("tbench", "trace_uc")], 2.0)
        self.assertAlmostEqual(n[("kbuild", "trace_wc")], 0.5)
        self.assertAlmostEqual(n[("kbuild", "trace_uc")], 0.25)

    def test_no_wb_overhead(self):
        rows = model_tracing.slowdowns(tracing_results(100, 100, 115, 130))
        self.assertIsNone(model_tracing.normalised(rows)[0]["normalised"])

    def test_seed_figures(self):
        figs = {f["id"]: f for f in load_seeds()["figures"]}
        tb = seed_ratios.seed000_costs(figs, "tbench")
        kb = seed_ratios.seed000_costs(figs, "kbuild")
        # The seed's normalised figures as quoted: 0.50, 0.42; 0.49, 0.40.
        self.assertAlmostEqual(seed_ratios.normalised_cost(tb, "trace_wc"),
                               0.50, places=2)
        self.assertAlmostEqual(seed_ratios.normalised_cost(tb, "trace_uc"),
                               0.42, places=2)
        self.assertAlmostEqual(seed_ratios.normalised_cost(kb, "trace_wc"),
                               0.49, places=2)
        self.assertAlmostEqual(seed_ratios.normalised_cost(kb, "trace_uc"),
                               0.40, places=2)
        self.assertEqual(seed_ratios.cost_order(tb), "WB < UC < WC")

    def test_report_section(self):
        res = tracing_results(100, 110, 115, 130)
        out = "\n".join(report.section_seed000(res, load_seeds(),
                                               {"profile": "one"}))
        self.assertIn("| tbench | 1 | WC | 115 | 0.500 | 0.500 |", out)
        self.assertIn("| kbuild | 1 | UC | 125 | 0.250 | 0.396 |", out)
        self.assertIn("tbench: modelled WB < WC < UC; seed 000 WB < UC < "
                      "WC", out)
        self.assertEqual(report.section_seed000(res, load_seeds()), [])

    def test_report_section_invalid(self):
        res = tracing_results(100, 110, 115, 130)
        res[2]["model"].update(valid=False, pace_breaks=3)   # tbench WC
        out = "\n".join(report.section_seed000(res, load_seeds(),
                                               {"profile": "one"}))
        self.assertIn("| tbench | 1 | WC | 115 (INVALID: 3 pacing breaks) "
                      "| invalid | 0.500 |", out)
        self.assertIn("| tbench | 1 | UC | 130 | 2.000 |", out)
        self.assertIn("tbench: modelled n/a (invalid figures)", out)


if __name__ == "__main__":
    unittest.main()
