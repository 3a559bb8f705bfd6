#!/usr/bin/env python3
"""Charts of benchmark results with gnuplot (PNG and SVG).

    plot.py bar  INPUT --experiment E --metric M [-o BASE]
    plot.py line INPUT --experiment E --metric M --x clients|cpus|size
                 [-o BASE]
    plot.py auto INPUT --outdir DIR

INPUT is a serial log or the JSON written by results.py. A bar chart has
one bar per variant (the median; the error bar spans min..max); a line
chart has one line per variant against client count, CPU count or size.
'auto' draws one chart per (experiment, metric): a line chart when the
clients, cpus or size values vary, else a bar chart. BASE.png, BASE.svg
and the gnuplot script BASE.gp are written.

Readability rules (each a named constant below):
  - a size axis is logarithmic (base 2) with ticks at measured sizes
    labelled in B/KiB/MiB/GiB, thinned so that no two labels collide;
  - when the medians of one chart span LOG_Y_RATIO or more (a routine
    much slower than the others), the y axis is logarithmic, so the
    cheap routines are not flattened against the axis;
  - the title's second line says what the figures are: measured (and on
    which platform: QEMU TCG, KVM, bare metal, from the @@ENV header) or
    modelled by the cache model (and with which profile). When the
    results carry the model's figures, 'auto' draws each chart twice:
    measured, and modelled (BASE_modelled);
  - a measured figure the kernel flagged noisy (its spread is above the
    threshold of docs/output.md, "Noise") is marked NOISY_MARK in its
    bar's label or its line's key entry, and a third line of the title
    counts them.

If gnuplot is not installed the charts are skipped with a message and the
exit status is 0, so a report can still be made without them.
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys

from tools.results import results


X_KEYS = ("clients", "cpus", "size")
X_LABELS = {"clients": "clients", "cpus": "CPUs", "size": "size"}
CHART_WIDTH = 800
CHART_HEIGHT = 500
GNUPLOT_TIMEOUT_S = 60
TCG_NOTE = "caches not modelled"
# How a noisy measured figure is marked (the kernel's "noisy" flag).
NOISY_WORD = "NOISY"
NOISY_MARK = " [%s]" % NOISY_WORD

# Size axis: at most this many labelled ticks. A label is up to 7
# characters ("512 KiB") in a 10-point font, about 60 pixels; 8 ticks on
# the ~650-pixel plot area leave 80 pixels each.
MAX_SIZE_TICKS = 8
SIZE_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"),
              (1, "B"))
# The y axis turns logarithmic when the largest median of a chart is at
# least this many times its smallest: at a ratio of 10 on a linear axis
# the cheapest line sits in the bottom tenth, indistinguishable from 0.
LOG_Y_RATIO = 10.0
# Entries per row of a line chart's key (below the plot): three names of
# up to ~20 characters with their samples fit the chart's width.
KEY_COLUMNS = 3
# Log-axis tick labels: the mantissa and an SI prefix (2k, 300k, 1M); an
# axis that reaches below 1 prints plain numbers instead (0.1, not 100m).
LOG_Y_FORMAT = "%.0s%c"
LOG_Y_FORMAT_SMALL = "%g"

# CPUID hypervisor vendor strings (docs/output.md: the @@ENV field).
HYPERVISOR_NAMES = {"TCGTCGTCGTCG": "QEMU TCG", "KVMKVMKVM": "KVM",
                    "none": "bare metal", "": "bare metal"}


class GnuplotMissing(Exception):
    pass


def find_gnuplot():
    return shutil.which("gnuplot")


def png_terminal(gnuplot):
    """'pngcairo' when this gnuplot has it, else 'png', else None."""
    try:
        p = subprocess.run([gnuplot, "-e", "set terminal"],
                           capture_output=True, text=True,
                           timeout=GNUPLOT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = set(re.findall(r"^\s*(\S+)\s", p.stdout + p.stderr, re.M))
    for term in ("pngcairo", "png"):
        if term in names:
            return term
    return None


def gp_str(s):
    """A gnuplot double-quoted string literal."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def safe_name(s):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_") or "chart"


def _select(res, experiment, metric):
    return [r for r in res if r["experiment"] == experiment and
            r["metric"] == metric]


def size_label(n):
    """Bytes as the largest binary unit that keeps the figure >= 1:
    64 -> "64 B", 4096 -> "4 KiB", 1572864 -> "1.5 MiB"."""
    for unit, name in SIZE_UNITS:
        if n >= unit:
            return "%s %s" % (("%.2f" % (n / unit)).rstrip("0").rstrip("."),
                              name)
    return "%d B" % n


def size_ticks(sizes, max_ticks=MAX_SIZE_TICKS):
    """[(size, label)] for a base-2 log axis over sizes: the measured
    sizes, in order, thinned so that neighbours are at least 1/max_ticks
    of the axis apart (so no labels collide). The smallest and largest
    sizes are always kept."""
    vals = sorted({int(v) for v in sizes if v and v > 0})
    if len(vals) <= 1:
        return [(v, size_label(v)) for v in vals]
    lo, hi = math.log2(vals[0]), math.log2(vals[-1])
    gap = (hi - lo) / max_ticks
    kept = [vals[0]]
    for v in vals[1:]:
        if math.log2(v) - math.log2(kept[-1]) >= gap:
            kept.append(v)
    if kept[-1] != vals[-1]:
        # The largest is always labelled: it replaces its too-close
        # neighbour (never the smallest).
        if len(kept) > 1:
            kept.pop()
        kept.append(vals[-1])
    return [(v, size_label(v)) for v in kept]


def wants_log_y(values, ratio=LOG_Y_RATIO):
    """True when values (the medians of one chart) are all positive and
    the largest is at least ratio times the smallest."""
    vals = [float(v) for v in values]
    if not vals or min(vals) <= 0:
        return False
    return max(vals) / min(vals) >= ratio


def platform(envs, rows):
    """Where rows were measured, from their @@ENV headers: "QEMU TCG",
    "KVM", "bare metal" or "hypervisor NAME", with the CPU model; None
    when the headers are not known."""
    idx = sorted({r.get("env") for r in rows if r.get("env") is not None})
    if not envs or not idx or idx[-1] >= len(envs):
        return None
    names = []
    for i in idx:
        e = envs[i]
        hv = e.get("hypervisor", "")
        name = HYPERVISOR_NAMES.get(hv, "hypervisor " + hv)
        cpu = e.get("cpu_model", "")
        if cpu and name != "QEMU TCG":
            name += " (%s)" % cpu
        if name not in names:
            names.append(name)
    return " / ".join(names)


def what_line(rows, envs, modelled=None):
    """The title's second line: what the figures are. modelled is the
    cache-model profile when the chart shows the model's figures."""
    where = platform(envs, rows)
    if modelled:
        return "MODELLED by the cache model, profile %s%s" % (
            modelled, " (guest run on %s)" % where if where else "")
    text = "measured" + (" on " + where if where else "")
    if any(not r["caches_modelled"] for r in rows):
        text += ": " + TCG_NOTE
        if where == "QEMU TCG":
            text += "; times are the emulator's, not hardware's"
    return text


def noise_note(rows):
    """"N of M figures NOISY ..." when the kernel flagged some of rows'
    measured figures noisy, else None."""
    n = sum(1 for r in rows if r.get("noisy"))
    if not n:
        return None
    return "%d of %d figures %s (marked%s): their repetitions spread too " \
        "much to compare" % (n, len(rows), NOISY_WORD, NOISY_MARK)


def gp_title(first, second, third=None):
    """A gnuplot title of two lines, or three."""
    title = gp_str(first)[:-1] + "\\n" + gp_str(second)[1:]
    if third:
        title = title[:-1] + "\\n" + gp_str(third)[1:]
    return title


def log_floor(values):
    """The power of ten below the smallest positive value (strictly, so
    that a bar of exactly a power of ten still has a height)."""
    lo = min(v for v in values if v > 0)
    return 10.0 ** (math.ceil(math.log10(lo)) - 1)


def log_y_settings(axis="y", floor=None):
    """A base-10 log axis; floor: its bottom (bars grow from there)."""
    small = floor is not None and floor < 1
    out = ["set logscale %s 10" % axis,
           "set format %s %s" % (axis, gp_str(LOG_Y_FORMAT_SMALL if small
                                              else LOG_Y_FORMAT)),
           "set m%stics 10" % axis]
    if floor is not None:
        out.append("set %srange [%r:*]" % (axis, floor))
    return out


def size_axis_settings(sizes, axis="x"):
    ticks = size_ticks(sizes)
    return ["set logscale %s 2" % axis,
            "set %stics (%s)" % (axis, ", ".join(
                "%s %d" % (gp_str(label), v) for v, label in ticks))]


def _outputs(base, png_term):
    """Terminal settings and file names for each output format."""
    outs = []
    if png_term:
        outs.append(("set terminal %s size %d,%d noenhanced" %
                     (png_term, CHART_WIDTH, CHART_HEIGHT), base + ".png"))
    outs.append(("set terminal svg size %d,%d dynamic noenhanced" %
                 (CHART_WIDTH, CHART_HEIGHT), base + ".svg"))
    return outs


def _script(preamble, data_blocks, plot_cmd, base):
    gnuplot = find_gnuplot()
    if not gnuplot:
        raise GnuplotMissing("gnuplot not found")
    outs = _outputs(base, png_terminal(gnuplot))
    lines = ["# Written by tools/results/plot.py"]
    for name, rows in data_blocks:
        lines.append("$%s << EOD" % name)
        lines.extend(rows)
        lines.append("EOD")
    lines.extend(preamble)
    for term, path in outs:
        lines.append(term)
        lines.append("set output %s" % gp_str(os.path.basename(path)))
        lines.append(plot_cmd)
        lines.append("unset output")
    return "\n".join(lines) + "\n", [p for _, p in outs]


def _write(script, base, paths):
    # gnuplot writes the outputs relative to its working directory.
    outdir = os.path.dirname(os.path.abspath(base))
    gnuplot = find_gnuplot()
    with open(base + ".gp", "w", encoding="utf-8") as f:
        f.write(script)
    p = subprocess.run([gnuplot, os.path.basename(base) + ".gp"],
                       cwd=outdir, capture_output=True, text=True,
                       timeout=GNUPLOT_TIMEOUT_S)
    if p.returncode != 0:
        raise RuntimeError("gnuplot failed on %s.gp: %s" %
                           (base, p.stderr.strip()))
    return paths


# The figure a modelled chart shows: the model's cycles per iteration of
# the figure's repetitions (tools/model/model.py), one value, no spread.
MODEL_VALUE = "cycles_per_iter"
MODEL_UNIT = "modelled cycles per iteration"


def model_profile(rows):
    """The cache-model profile of rows' modelled figures, or None when
    not every row has one."""
    profiles = {(r.get("model") or {}).get("profile") for r in rows}
    if len(profiles) != 1 or None in profiles or \
            any((r.get("model") or {}).get(MODEL_VALUE) is None
                for r in rows):
        return None
    return profiles.pop()


def _figures(r, modelled):
    """(median, min, max) of row r: measured, or the model's one value."""
    if modelled:
        v = float(r["model"][MODEL_VALUE])
        return v, v, v
    return float(r["median"]), float(r["min"]), float(r["max"])


def bar_chart(res, experiment, metric, base, title=None, envs=None,
              modelled=False):
    """One bar per variant (median, min..max error bar); modelled: the
    cache model's figure instead. envs: the @@ENV headers, for the
    title. Returns paths."""
    rows = _select(res, experiment, metric)
    if not rows:
        raise ValueError("no results for %s/%s" % (experiment, metric))
    profile = model_profile(rows) if modelled else None
    if modelled and not profile:
        raise ValueError("no modelled figures for %s/%s" %
                         (experiment, metric))
    unit = MODEL_UNIT if modelled else rows[0]["unit"]
    figs = [_figures(r, modelled) for r in rows]
    data = ["%s %r %r %r" % ((gp_str(_label(r, rows) + (
        NOISY_MARK if r.get("noisy") and not modelled else "")),) + f)
            for r, f in zip(rows, figs)]
    title = title or "%s: %s" % (experiment, metric)
    log_y = wants_log_y(f[0] for f in figs)
    preamble = [
        "set title %s" % gp_title(title, what_line(rows, envs, profile),
                                  None if modelled else noise_note(rows)),
        "set ylabel %s" % gp_str(unit + (" (log scale)" if log_y else "")),
        "set style data histograms",
        "set style histogram errorbars gap 1 lw 1",
        "set style fill solid 0.6 border -1",
    ] + (log_y_settings(floor=log_floor(v for f in figs for v in f))
         if log_y else ["set yrange [0:*]"]) + [
        "set grid ytics",
        "set xtics rotate by -30 scale 0",
        # room under the axis for the rotated names and the key
        "set bmargin 6",
        "set key below",
    ]
    plot = ("plot $bars using 2:3:4:xtic(1) title %s" %
            gp_str("modelled" if modelled else
                   "median (error bar: min..max)"))
    script, paths = _script(preamble, [("bars", data)], plot, base)
    return _write(script, base, paths)


def _label(r, rows):
    """Variant name, plus whatever else tells apart rows of one chart."""
    parts = [r["variant"]]
    for key in X_KEYS:
        if len({x.get(key) for x in rows}) > 1 and key in r:
            parts.append("%s=%s" % (key, r[key]))
    return " ".join(parts)


SEEDS_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "seeds_data.json")


def seed_curves(experiment, metric, unit, x_key, path=SEEDS_JSON):
    """The seed's own curves for a chart of ours: {variant: [(x, value)]}.

    A seed belongs to (experiment, metric) when one of its comparisons in
    seeds_data.json names them; its figures with the same unit and an x_key
    value form one curve per variant. Empty when there are none.
    """
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    seeds = set()
    for c in data.get("comparisons", []):
        for side in ("numerator", "denominator"):
            o = c.get("ours", {}).get(side, {})
            if o.get("experiment") == experiment and \
                    o.get("metric") == metric:
                seeds.add(c.get("seed"))
    curves = {}
    for fig in data.get("figures", []):
        if fig.get("seed") in seeds and fig.get("unit") == unit and \
                fig.get(x_key) is not None:
            curves.setdefault(fig["variant"], []).append(
                (fig[x_key], float(fig["value"])))
    for pts in curves.values():
        pts.sort()
    return curves


def line_chart(res, experiment, metric, x_key, base, title=None,
               seeds=True, envs=None, modelled=False):
    """One line per variant against x_key, with the seed's own curves
    (dashed, right-hand axis: other hardware) when seeds_data.json has
    them; modelled: the cache model's figures instead of the measured
    ones (and no seed curves). envs: the @@ENV headers, for the title.
    Returns the written paths."""
    if x_key not in X_KEYS:
        raise ValueError("x must be one of " + ", ".join(X_KEYS))
    rows = [r for r in _select(res, experiment, metric) if x_key in r]
    if not rows:
        raise ValueError("no results for %s/%s with %s" %
                         (experiment, metric, x_key))
    profile = model_profile(rows) if modelled else None
    if modelled and not profile:
        raise ValueError("no modelled figures for %s/%s" %
                         (experiment, metric))
    unit = MODEL_UNIT if modelled else rows[0]["unit"]
    seeds = seeds and not modelled
    # Another key splits the lines only if it varies at one x value (a
    # key that moves with x, like cpus with clients, does not).
    others = []
    for k in X_KEYS:
        if k == x_key:
            continue
        per_x = {}
        for r in rows:
            per_x.setdefault(r[x_key], set()).add(r.get(k))
        if any(len(v) > 1 for v in per_x.values()):
            others.append(k)
    series = {}
    for r in rows:
        name = " ".join([r["variant"]] +
                        ["%s=%s" % (k, r.get(k)) for k in others])
        series.setdefault(name, []).append(r)
    blocks, plots = [], []
    for i, (name, pts) in enumerate(sorted(series.items())):
        pts.sort(key=lambda r: r[x_key])
        blocks.append(("s%d" % i, ["%d %r %r %r" % (
            (r[x_key],) + _figures(r, modelled)) for r in pts]))
        noisy = 0 if modelled else sum(1 for r in pts if r.get("noisy"))
        if noisy:
            name += "%s (%d of %d points)" % (NOISY_MARK, noisy, len(pts))
        plots.append("$s%d using 1:2:3:4 with yerrorlines title %s" %
                     (i, gp_str(name)))
    curves = seed_curves(experiment, metric, unit, x_key) if seeds else {}
    for j, (name, pts) in enumerate(sorted(curves.items())):
        i = len(blocks)
        blocks.append(("s%d" % i, ["%r %r" % (x, y) for x, y in pts]))
        plots.append("$s%d using 1:2 axes x1y2 with lines dashtype 2 "
                     "linewidth 2 title %s" % (i, gp_str("seed: " + name)))
    title = title or "%s: %s vs %s" % (experiment, metric, x_key)
    log_y = wants_log_y(_figures(r, modelled)[0] for r in rows)
    preamble = [
        "set title %s" % gp_title(title, what_line(rows, envs, profile),
                                  None if modelled else noise_note(rows)),
        "set xlabel %s" % gp_str(X_LABELS[x_key] +
                                 (" (log scale)" if x_key == "size"
                                  else "")),
        "set ylabel %s" % gp_str(unit + (" (log scale)" if log_y else "")),
    ] + (log_y_settings() if log_y else ["set yrange [0:*]"]) + [
        "set grid",
        # below the plot, so that no line runs under it; three entries
        # a row leave room for the longest variant names
        "set key below horizontal maxcols %d" % KEY_COLUMNS,
        # keep the end points off the frame
        "set offsets graph 0.03, graph 0.03, 0, 0",
    ]
    if curves:
        preamble += [
            "set y2label %s" % gp_str("seed's " + unit +
                                      " (its own hardware; dashed)"),
            "set y2tics",
        ]
        seed_vals = [y for pts in curves.values() for _, y in pts]
        preamble += (log_y_settings("y2") if wants_log_y(seed_vals)
                     else ["set y2range [0:*]"])
    if x_key == "size":
        preamble += size_axis_settings(r[x_key] for r in rows)
    else:
        preamble.append("set xtics 1")
    script, paths = _script(preamble, blocks, "plot " + ", ".join(plots),
                            base)
    return _write(script, base, paths)


def chart_plan(res):
    """[(experiment, metric, x_key or None)] in first-seen order."""
    plan, seen = [], set()
    for r in res:
        key = (r["experiment"], r["metric"])
        if key in seen:
            continue
        seen.add(key)
        rows = _select(res, *key)
        x = None
        for k in X_KEYS:
            if len({r.get(k) for r in rows}) > 1 and \
                    all(k in r for r in rows):
                x = k
                break
        plan.append((key[0], key[1], x))
    return plan


def auto_charts(res, outdir, envs=None):
    """One chart per (experiment, metric) into outdir, and a second one
    (metric "METRIC (modelled)", file BASE_modelled) when every figure of
    it has the cache model's. envs: the @@ENV headers, for the titles.

    Returns [(experiment, metric, [paths])]; raises GnuplotMissing.
    """
    if not find_gnuplot():
        raise GnuplotMissing("gnuplot not found")
    os.makedirs(outdir, exist_ok=True)
    charts = []
    for experiment, metric, x in chart_plan(res):
        base = os.path.join(outdir, safe_name("%s_%s" % (experiment,
                                                         metric)))
        kinds = [(False, base, metric)]
        if model_profile(_select(res, experiment, metric)):
            kinds.append((True, base + "_modelled", metric + " (modelled)"))
        for modelled, b, name in kinds:
            if x:
                paths = line_chart(res, experiment, metric, x, b,
                                   envs=envs, modelled=modelled)
            else:
                paths = bar_chart(res, experiment, metric, b, envs=envs,
                                  modelled=modelled)
            charts.append((experiment, name, paths))
    return charts


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m " + __spec__.name, description="Chart benchmark results.")
    ap.add_argument("kind", choices=("bar", "line", "auto"))
    ap.add_argument("input", help="serial log or results.py JSON")
    ap.add_argument("--experiment")
    ap.add_argument("--metric")
    ap.add_argument("--x", choices=X_KEYS, help="x axis of a line chart")
    ap.add_argument("-o", "--output", help="output base name (no suffix)")
    ap.add_argument("--outdir", default=".", help="directory for 'auto'")
    args = ap.parse_args(argv)

    if not find_gnuplot():
        print("plot: gnuplot not found; skipping charts", file=sys.stderr)
        return 0
    try:
        data = results.load(args.input)
    except results.LogError as e:
        print("%s:%d: %s" % (args.input, e.line, e.message), file=sys.stderr)
        return 1
    res, envs = data["results"], data["envs"]
    try:
        if args.kind == "auto":
            for _, _, paths in auto_charts(res, args.outdir, envs):
                print("\n".join(paths))
            return 0
        if not args.experiment or not args.metric:
            ap.error("bar and line need --experiment and --metric")
        base = args.output or safe_name("%s_%s" % (args.experiment,
                                                   args.metric))
        if args.kind == "bar":
            paths = bar_chart(res, args.experiment, args.metric, base,
                              envs=envs)
        else:
            if not args.x:
                ap.error("line needs --x")
            paths = line_chart(res, args.experiment, args.metric, args.x,
                               base, envs=envs)
    except (ValueError, RuntimeError) as e:
        print("plot: %s" % e, file=sys.stderr)
        return 1
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
