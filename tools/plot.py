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

If gnuplot is not installed the charts are skipped with a message and the
exit status is 0, so a report can still be made without them.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

X_KEYS = ("clients", "cpus", "size")
X_LABELS = {"clients": "clients", "cpus": "CPUs", "size": "size (bytes)"}
CHART_WIDTH = 800
CHART_HEIGHT = 500
GNUPLOT_TIMEOUT_S = 60
TCG_NOTE = " [caches not modelled: QEMU TCG]"


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


def _caches_note(rows):
    return TCG_NOTE if any(not r["caches_modelled"] for r in rows) else ""


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
    lines = ["# Written by tools/plot.py"]
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


def bar_chart(res, experiment, metric, base, title=None):
    """One bar per variant (median, min..max error bar). Returns paths."""
    rows = _select(res, experiment, metric)
    if not rows:
        raise ValueError("no results for %s/%s" % (experiment, metric))
    unit = rows[0]["unit"]
    data = ["%s %r %r %r" % (gp_str(_label(r, rows)), float(r["median"]),
                             float(r["min"]), float(r["max"]))
            for r in rows]
    title = title or "%s: %s" % (experiment, metric)
    preamble = [
        "set title %s" % gp_str(title + _caches_note(rows)),
        "set ylabel %s" % gp_str(unit),
        "set style data histograms",
        "set style histogram errorbars gap 1 lw 1",
        "set style fill solid 0.6 border -1",
        "set yrange [0:*]",
        "set grid ytics",
        "set xtics rotate by -30 scale 0",
        # room under the axis for the rotated names and the key
        "set bmargin 6",
        "set key below",
    ]
    plot = ("plot $bars using 2:3:4:xtic(1) title "
            "\"median (error bar: min..max)\"")
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
               seeds=True):
    """One line per variant against x_key, with the seed's own curves
    (dashed, right-hand axis: other hardware) when seeds_data.json has
    them. Returns the written paths."""
    if x_key not in X_KEYS:
        raise ValueError("x must be one of " + ", ".join(X_KEYS))
    rows = [r for r in _select(res, experiment, metric) if x_key in r]
    if not rows:
        raise ValueError("no results for %s/%s with %s" %
                         (experiment, metric, x_key))
    unit = rows[0]["unit"]
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
            r[x_key], float(r["median"]), float(r["min"]),
            float(r["max"])) for r in pts]))
        plots.append("$s%d using 1:2:3:4 with yerrorlines title %s" %
                     (i, gp_str(name)))
    curves = seed_curves(experiment, metric, unit, x_key) if seeds else {}
    for j, (name, pts) in enumerate(sorted(curves.items())):
        i = len(blocks)
        blocks.append(("s%d" % i, ["%r %r" % (x, y) for x, y in pts]))
        plots.append("$s%d using 1:2 axes x1y2 with lines dashtype 2 "
                     "linewidth 2 title %s" % (i, gp_str("seed: " + name)))
    title = title or "%s: %s vs %s" % (experiment, metric, x_key)
    preamble = [
        "set title %s" % gp_str(title + _caches_note(rows)),
        "set xlabel %s" % gp_str(X_LABELS[x_key]),
        "set ylabel %s" % gp_str(unit),
        "set yrange [0:*]",
        "set grid",
        "set key top right",
        # keep the end points off the frame
        "set offsets graph 0.03, graph 0.03, 0, 0",
    ]
    if curves:
        preamble += [
            "set y2label %s" % gp_str("seed's " + unit +
                                      " (its own hardware; dashed)"),
            "set y2range [0:*]",
            "set y2tics",
            "set key top right font ',9'",
        ]
    if x_key == "size":
        preamble.append("set logscale x 2")
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


def auto_charts(res, outdir):
    """One chart per (experiment, metric) into outdir.

    Returns [(experiment, metric, [paths])]; raises GnuplotMissing.
    """
    if not find_gnuplot():
        raise GnuplotMissing("gnuplot not found")
    os.makedirs(outdir, exist_ok=True)
    charts = []
    for experiment, metric, x in chart_plan(res):
        base = os.path.join(outdir, safe_name("%s_%s" % (experiment,
                                                         metric)))
        if x:
            paths = line_chart(res, experiment, metric, x, base)
        else:
            paths = bar_chart(res, experiment, metric, base)
        charts.append((experiment, metric, paths))
    return charts


def main(argv=None):
    ap = argparse.ArgumentParser(description="Chart benchmark results.")
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
    res = data["results"]
    try:
        if args.kind == "auto":
            for _, _, paths in auto_charts(res, args.outdir):
                print("\n".join(paths))
            return 0
        if not args.experiment or not args.metric:
            ap.error("bar and line need --experiment and --metric")
        base = args.output or safe_name("%s_%s" % (args.experiment,
                                                   args.metric))
        if args.kind == "bar":
            paths = bar_chart(res, args.experiment, args.metric, base)
        else:
            if not args.x:
                ap.error("line needs --x")
            paths = line_chart(res, args.experiment, args.metric, args.x,
                               base)
    except (ValueError, RuntimeError) as e:
        print("plot: %s" % e, file=sys.stderr)
        return 1
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
