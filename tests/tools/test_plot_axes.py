#!/usr/bin/env python3
"""Tests of tools/results/plot.py's readability rules: size labels in
B/KiB/MiB, size ticks that never collide, the choice of a log y axis, and
titles that say the platform and whether the figures are modelled.

Sources under test: tools/results/plot.py (size_label, size_ticks, wants_log_y,
log_floor, platform, what_line, gp_title, model_profile, and the
gnuplot scripts of line_chart, bar_chart and auto_charts).

Run: python3 -m unittest tests/tools/test_plot_axes.py
"""

import math
import os
import shutil
import tempfile
import unittest

from tools.results import plot

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

TCG_ENV = {"hypervisor": "TCGTCGTCGTCG", "cpu_model": "QEMU TCG CPU"}
KVM_ENV = {"hypervisor": "KVMKVMKVM", "cpu_model": "AMD EPYC 7763"}
METAL_ENV = {"hypervisor": "none", "cpu_model": "Intel Core2 Duo E8400"}


def row(variant, size, median, spread=0.1, env=0, caches=False, **extra):
    """A result row as results.py makes it (SYNTHETIC numbers); size None:
    a figure without a size."""
    r = {"experiment": "copy", "variant": variant, "metric": "copy",
         "unit": "cycles/KiB", "median": median,
         "min": median * (1 - spread), "max": median * (1 + spread),
         "env": env, "caches_modelled": caches}
    if size is not None:
        r["size"] = size
    r.update(extra)
    return r


class SizeLabels(unittest.TestCase):
    def test_units(self):
        self.assertEqual(plot.size_label(64), "64 B")
        self.assertEqual(plot.size_label(1023), "1023 B")
        self.assertEqual(plot.size_label(4 * KiB), "4 KiB")
        self.assertEqual(plot.size_label(256 * KiB), "256 KiB")
        self.assertEqual(plot.size_label(MiB + MiB // 2), "1.5 MiB")
        self.assertEqual(plot.size_label(4 * MiB), "4 MiB")
        self.assertEqual(plot.size_label(32 * MiB), "32 MiB")
        self.assertEqual(plot.size_label(2 * GiB), "2 GiB")

    def test_never_scientific(self):
        # The old axis printed 1.04858e+06 and 4.1943e+06.
        for n in (262144, 1048576, 4194304, 3 * MiB + 12345):
            self.assertNotIn("e+", plot.size_label(n))


class SizeTicks(unittest.TestCase):
    def assert_apart(self, ticks, max_ticks=plot.MAX_SIZE_TICKS):
        vals = [v for v, _ in ticks]
        self.assertEqual(vals, sorted(set(vals)))
        span = math.log2(vals[-1]) - math.log2(vals[0])
        for a, b in zip(vals, vals[1:]):
            self.assertGreaterEqual(math.log2(b) - math.log2(a),
                                    span / max_ticks - 1e-9, (a, b))

    def test_copy_sizes_all_labelled(self):
        ticks = plot.size_ticks([64, 4096, 262144, 4194304, 64])
        self.assertEqual(ticks, [(64, "64 B"), (4096, "4 KiB"),
                                 (262144, "256 KiB"), (4194304, "4 MiB")])

    def test_dense_sweep_is_thinned(self):
        sizes = [1 << k for k in range(6, 27)]      # 64 B .. 64 MiB
        ticks = plot.size_ticks(sizes)
        self.assertLessEqual(len(ticks), plot.MAX_SIZE_TICKS + 1)
        self.assertEqual(ticks[0], (64, "64 B"))
        self.assertEqual(ticks[-1], (64 * MiB, "64 MiB"))
        self.assert_apart(ticks)

    def test_close_sizes_do_not_collide(self):
        sizes = [4 * KiB, 4 * KiB + 512, 5 * KiB, 6 * KiB, 8 * MiB,
                 8 * MiB - 4 * KiB]
        ticks = plot.size_ticks(sizes)
        self.assert_apart(ticks)
        self.assertEqual(ticks[0][0], 4 * KiB)
        self.assertEqual(ticks[-1][0], 8 * MiB)

    def test_degenerate(self):
        self.assertEqual(plot.size_ticks([]), [])
        self.assertEqual(plot.size_ticks([4096, 4096]), [(4096, "4 KiB")])


class LogY(unittest.TestCase):
    def test_ratio(self):
        # rep_movsb at ~100x the other routines (the copy chart).
        self.assertTrue(plot.wants_log_y([2800, 2100, 370000]))
        self.assertTrue(plot.wants_log_y([1, plot.LOG_Y_RATIO]))
        self.assertFalse(plot.wants_log_y([41.0, 41.2, 41.1]))
        self.assertFalse(plot.wants_log_y([1, plot.LOG_Y_RATIO * 0.99]))

    def test_not_for_zero_or_negative(self):
        self.assertFalse(plot.wants_log_y([0, 5, 500]))
        self.assertFalse(plot.wants_log_y([-1, 500]))
        self.assertFalse(plot.wants_log_y([]))

    def test_floor_below_smallest(self):
        self.assertEqual(plot.log_floor([10.0, 40.0, 300.0]), 1.0)
        self.assertEqual(plot.log_floor([15.0, 300.0]), 10.0)
        self.assertEqual(plot.log_floor([0.0, 0.5, 3.0]), 0.1)


class Titles(unittest.TestCase):
    def test_platforms(self):
        rows = [row("a", 64, 1.0)]
        self.assertEqual(plot.platform([TCG_ENV], rows), "QEMU TCG")
        self.assertEqual(plot.platform([KVM_ENV], rows),
                         "KVM (AMD EPYC 7763)")
        self.assertEqual(plot.platform([METAL_ENV], rows),
                         "bare metal (Intel Core2 Duo E8400)")
        self.assertIsNone(plot.platform(None, rows))
        two = [row("a", 64, 1.0), row("b", 64, 1.0, env=1)]
        self.assertEqual(plot.platform([TCG_ENV, KVM_ENV], two),
                         "QEMU TCG / KVM (AMD EPYC 7763)")

    def test_measured_lines(self):
        tcg = plot.what_line([row("a", 64, 1.0)], [TCG_ENV])
        self.assertTrue(tcg.startswith("measured on QEMU TCG"), tcg)
        self.assertIn("caches not modelled", tcg)
        self.assertIn("not hardware's", tcg)
        kvm = plot.what_line([row("a", 64, 1.0, caches=True)], [KVM_ENV])
        self.assertEqual(kvm, "measured on KVM (AMD EPYC 7763)")
        self.assertNotIn("MODELLED", tcg + kvm)

    def test_modelled_line(self):
        text = plot.what_line([row("a", 64, 1.0)], [TCG_ENV], "core2-2007")
        self.assertTrue(text.startswith("MODELLED"), text)
        self.assertIn("core2-2007", text)

    def test_model_profile(self):
        m = {"profile": "p", "cycles_per_iter": 3.0}
        self.assertEqual(plot.model_profile([row("a", 64, 1, model=m)]), "p")
        self.assertIsNone(plot.model_profile([row("a", 64, 1, model=m),
                                              row("b", 64, 1)]))

    def test_two_line_title(self):
        self.assertEqual(plot.gp_title('a "b"', "c"), '"a \\"b\\"\\nc"')


@unittest.skipUnless(shutil.which("gnuplot"), "gnuplot not installed")
class Scripts(unittest.TestCase):
    """The gnuplot scripts carry the rules (and gnuplot accepts them)."""

    def script(self, base):
        with open(base + ".gp") as f:
            return f.read()

    def bar_script(self, rows):
        """The gnuplot script of rows' bar chart."""
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "bar")
            plot.bar_chart(rows, "copy", "copy", base, envs=[TCG_ENV])
            return self.script(base)

    def test_copy_sweep(self):
        rows = []
        for size in (64, 4096, 262144, 4194304):
            rows += [row("unrolled64", size, 2000.0),
                     row("rep_movsb", size, 300000.0)]
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "copy")
            plot.line_chart(rows, "copy", "copy", "size", base,
                            envs=[TCG_ENV])
            gp = self.script(base)
        self.assertIn('set xtics ("64 B" 64, "4 KiB" 4096, '
                      '"256 KiB" 262144, "4 MiB" 4194304)', gp)
        self.assertIn("set logscale x 2", gp)
        self.assertIn("set logscale y 10", gp)
        self.assertIn("measured on QEMU TCG", gp)
        self.assertNotIn("e+0", gp.split("EOD")[-1])

    def test_even_costs_stay_linear_from_zero(self):
        gp = self.bar_script([row(v, None, 41.0) for v in ("WB", "WC", "UC")])
        self.assertNotIn("logscale y", gp)
        self.assertIn("set yrange [0:*]", gp)

    def test_auto_adds_a_modelled_chart(self):
        rows = [row(v, None, 41.0, model={"profile": "p",
                                          "cycles_per_iter": c})
                for v, c in (("WB", 10.0), ("WC", 40.0), ("UC", 300.0))]
        with tempfile.TemporaryDirectory() as tmp:
            charts = plot.auto_charts(rows, tmp, envs=[TCG_ENV])
            self.assertEqual([m for _, m, _ in charts],
                             ["copy", "copy (modelled)"])
            measured = self.script(os.path.join(tmp, "copy_copy"))
            modelled = self.script(os.path.join(tmp, "copy_copy_modelled"))
        self.assertNotIn("MODELLED", measured)
        for line in ("MODELLED by the cache model, profile p",
                     '"WB" 10.0 10.0 10.0',      # the model's figure
                     "set logscale y 10", "set yrange [1.0:*]",
                     'set format y "%.0s%c"'):
            self.assertIn(line, modelled)

    def test_noisy_figures_are_marked(self):
        # The kernel's "noisy" flag marks the bar and the line's key
        # entry, and the title counts them; the modelled chart of the
        # same rows (one modelled value, no spread) is not marked.
        rows = [row("WB", None, 41.0, noisy=True), row("UC", None, 40.0)]
        gp = self.bar_script(rows)
        self.assertIn('"WB [NOISY]" 41.0', gp)
        self.assertIn('"UC" 40.0', gp)
        self.assertIn('\\n1 of 2 figures NOISY (marked [NOISY]): their '
                      'repetitions spread too much to compare"', gp)
        self.assertNotIn("NOISY", self.bar_script([row("UC", None, 40.0)]))
        pts = [row("movnti", 4096, 10.0, noisy=True),
               row("movnti", 65536, 10.0)]
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "l")
            plot.line_chart(pts, "copy", "copy", "size", base,
                            envs=[TCG_ENV])
            gp = self.script(base)
            self.assertIn('title "movnti [NOISY] (1 of 2 points)"', gp)
            for r in pts:
                r["model"] = {"profile": "p", "cycles_per_iter": 5.0}
            plot.line_chart(pts, "copy", "copy", "size", base,
                            envs=[TCG_ENV], modelled=True)
            self.assertNotIn("NOISY", self.script(base))

    def test_counts_from_one_print_plain_numbers(self):
        # 56 IPIs against 1: the axis starts at 0.1, printed as such.
        gp = self.bar_script([row("naive", None, 56.0, spread=0),
                              row("batched", None, 1.0, spread=0)])
        self.assertIn("set yrange [0.1:*]", gp)
        self.assertIn('set format y "%g"', gp)


if __name__ == "__main__":
    unittest.main()
