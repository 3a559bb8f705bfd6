"""The seeds' published figures against this run's, as numbers: which
result a comparison names, the seed's ratio and ours (measured, and
modelled where the cache model counted the figures), the spread between
repetitions, and seed 000's costs of a trace buffer by memory type,
normalised. report.py lays these out as Markdown; model_sensitivity.py
recomputes the modelled ratios under other parameters. Standard library
only.
"""

PCT = 100.0
# Keys that tell apart results of one experiment/variant/metric.
CONFIG_KEYS = ("clients", "cpus", "size")


def why_missing(missing, selector):
    """The @@MISSING entry that covers a comparison's selector, or None."""
    for m in missing:
        if m["experiment"] != selector.get("experiment"):
            continue
        if m["variant"] not in ("*", selector.get("variant")):
            continue
        if m["metric"] not in ("*", selector.get("metric")):
            continue
        return m
    return None


def find_ours(res, selector):
    """The result a comparison names, and a note when several match.

    A selector names experiment, metric and variant, and may pin clients,
    cpus or size. When several results still match, the most loaded one
    (largest clients, then cpus, then size) is used, and the note says so.
    """
    matches = [r for r in res
               if all(r.get(k) == v for k, v in selector.items())]
    if not matches:
        return None, None
    best = max(matches, key=lambda r: tuple(r.get(k, 0)
                                            for k in CONFIG_KEYS))
    note = None
    if len(matches) > 1:
        note = "largest of %d configurations (%s)" % (len(matches), ", ".join(
            "%s=%s" % (k, best[k]) for k in CONFIG_KEYS if k in best))
    return best, note


def seed_ratio(figs, spec):
    num = figs[spec["numerator"]]["value"]
    den = figs[spec["denominator"]]["value"]
    if spec.get("transform") == "one_minus_percent":
        num, den = PCT - num, PCT - den
    return None if den == 0 else num / den


def model_valid(r):
    """False when r's modelled figure came from vCPUs that were not paced
    or whose pacing broke (tools/model/model.py: "valid")."""
    return r.get("model", {}).get("valid", True)


# Units whose first word is one of these are times (per unit of work).
TIME_UNITS = ("s", "ms", "us", "ns", "cycles", "tsc-cycles")


def unit_kind(unit):
    """"rate" (a unit per second), "time" (seconds or cycles, maybe per
    unit of work) or "count" (events: purges, IPIs, pages)."""
    if "/s" in unit:
        return "rate"
    if unit.split("/")[0].split(" ")[0] in TIME_UNITS:
        return "time"
    return "count"


def modelled_ratio(num, den):
    """The same ratio on the cache model's figures (cycles per iteration
    of the same repetitions), or None. A rate (a unit per second) is the
    inverse of a time, so its ratio is taken the other way round. A count
    (events the run counted, as the ia64 model's global purges) has no
    modelled value of its own: it becomes a rate, the count over its
    regions' modelled cycles, so the ratio is the counts' ratio measured
    in the modelled run, divided by the ratio of their modelled times."""
    if "model" not in num or "model" not in den:
        return None
    if not (model_valid(num) and model_valid(den)):
        return None
    a = num["model"]["cycles_per_iter"]
    b = den["model"]["cycles_per_iter"]
    if unit_kind(num["unit"]) == "count":
        if not a or not b or den["median"] == 0:
            return None
        return (num["median"] / a) / (den["median"] / b)
    if unit_kind(num["unit"]) == "rate":
        a, b = b, a
    return a / b if b else None


def modelled_counts(res, c):
    """For a comparison whose figures count hardware events ("modelled_from"
    in tools/results/seeds_data.json: a metric whose model regions hold the same
    work, and the model's counter of those events): the model's count per
    iteration of those regions, as (numerator figure, denominator figure,
    ratio). The figures are those of the named metric with the
    comparison's experiment, variant and configuration. None without
    "modelled_from" or when a side has no model data; the ratio is None
    when a side's model data is invalid or the denominator's count is 0."""
    spec = c.get("modelled_from")
    if not spec:
        return None
    key = spec["counter"] + "_per_iter"
    sides = []
    for side in ("numerator", "denominator"):
        r, _ = find_ours(res, dict(c["ours"][side], metric=spec["metric"]))
        if r is None or r.get("model", {}).get(key) is None:
            return None
        sides.append(r)
    num, den = sides
    ok = model_valid(num) and model_valid(den) and den["model"][key]
    return num, den, (num["model"][key] / den["model"][key] if ok
                      else None)


def fmt_spread(spread, n):
    """A figure's spread between its n repetitions, for the seed table."""
    if n < 2:
        return "1 repetition"
    if spread is None:
        return "n/a (%d repetitions)" % n
    return "%.2f %% (%d repetitions)" % (spread, n)


def spread_line(num, den, model=None):
    """The text under a seed row: the spread ((max - min) / median)
    between the repetitions of its numerator and denominator, measured
    and, with a model, modelled (cycles per iteration); None when the
    row has no figures."""
    if num is None or den is None:
        return None
    text = "spread between repetitions: numerator %s, denominator %s" % (
        fmt_spread(num.get("spread_pct"), num["n"]),
        fmt_spread(den.get("spread_pct"), den["n"]))
    if model and "model" in num and "model" in den:
        text += "; " + model_spread(num, den)
    return text


def model_spread(num, den, counter=None):
    """The modelled half of a spread line: the spread between the
    repetitions of num's and den's modelled cycles per iteration, or of
    their counter (as "llc_misses") when given."""
    nm, dm = num["model"], den["model"]
    key = counter + "_spread_pct" if counter else "spread_pct"
    text = "modelled%s: numerator %s, denominator %s" % (
        " " + counter.replace("_", " ") if counter else "",
        fmt_spread(nm.get(key), len(nm.get("regions", ()))),
        fmt_spread(dm.get(key), len(dm.get("regions", ()))))
    if nm.get("regions") == dm.get("regions"):
        text += " (one region for both)"
    return text


def compare(seeds, res, cache_ok, missing=()):
    """Rows of the seed comparison: dicts with the table's columns."""
    figs = {f["id"]: f for f in seeds["figures"]}
    rows = []
    for c in seeds["comparisons"]:
        s = seed_ratio(figs, c["seed_ratio"])
        num, nnote = find_ours(res, c["ours"]["numerator"])
        den, dnote = find_ours(res, c["ours"]["denominator"])
        ours = None
        notes = []
        if num is None or den is None:
            gone = [why_missing(missing, c["ours"][k])
                    for k in ("numerator", "denominator")]
            gone = [m for m in gone if m]
            if gone:
                notes.append("not measured: %s (%s)" % (
                    "cut short" if gone[0]["status"] == "cut_short"
                    else "skipped", gone[0]["reason"]))
            else:
                notes.append("not measured in this run")
        elif den["median"] == 0:
            notes.append("our denominator is 0")
        else:
            ours = num["median"] / den["median"]
            for n in (nnote, dnote):
                if n and n not in notes:
                    notes.append(n)
        mratio = (modelled_ratio(num, den)
                  if num is not None and den is not None else None)
        counts = modelled_counts(res, c)
        if counts:
            mratio = counts[2]
            config = ", ".join("%s=%s" % (k, counts[0][k])
                               for k in CONFIG_KEYS if k in counts[0])
            notes.append("modelled: the cache model's %s per %s in the "
                         "regions of the %s figures (%sa model, no PMU "
                         "needed)" % (
                             c["modelled_from"]["counter"].replace(
                                 "_", " "),
                             counts[0]["unit"].split("/")[-1],
                             c["modelled_from"]["metric"],
                             config + "; " if config else ""))
            if counts[2] is None:
                notes.append("modelled ratio left out: vCPUs not paced, "
                             "pacing broken or no events in the "
                             "denominator")
        if ours is not None and c.get("needs_caches") and not cache_ok:
            notes.append("caches not modelled: not meaningful here"
                         if mratio is None else
                         "caches not modelled: our ratio not meaningful "
                         "here, the modelled one models them")
        if (num is not None and den is not None and "model" in num and
                "model" in den and not (model_valid(num) and
                                        model_valid(den))):
            notes.append("modelled ratio left out: vCPUs not paced or "
                         "pacing broken")
        rows.append({
            "id": c["id"], "title": c["title"], "seed": c["seed"],
            "comparison": c,
            "seed_ratio": s, "our_ratio": ours,
            "model_ratio": mratio,
            "ours_over_seed": (ours / s if ours is not None and s
                               else None),
            "num": num, "den": den, "counts": counts,
            "reading": c.get("reading", ""), "notes": "; ".join(notes),
        })
    return rows


# Seed 000's normalised tracing costs, (X - WB) / (WB - off) for X the WC
# or UC buffers, from the seed's own figures: per experiment, whether its
# figures are rates (tbench's MB/s: the cost of a megabyte is the
# inverse) or times (kbuild's cache-hot real time), then the figure ids
# of off, WB and each variant.
SEED000_NORMALISED = {
    "tbench": ("rate", "s000_tbench_off", "s000_tbench_wb",
               {"trace_wc": "s000_tbench_wc",
                "trace_uc": "s000_tbench_uc"}),
    "kbuild": ("time", "s000_kbuild_off_hot_real", "s000_kbuild_wb_hot_real",
               {"trace_wc": "s000_kbuild_wc_hot_real",
                "trace_uc": "s000_kbuild_uc_hot_real"}),
}
SEED000_LABEL = {"trace_off": "off", "trace_wb": "WB", "trace_wc": "WC",
                 "trace_uc": "UC"}


def seed000_costs(figs, exp):
    """{variant: the seed's cost} for exp's off, WB, WC and UC (a rate's
    inverse), or None when a figure is missing."""
    kind, off, wb, others = SEED000_NORMALISED[exp]
    ids = dict(others, trace_off=off, trace_wb=wb)
    if any(i not in figs for i in ids.values()):
        return None
    return {v: (1.0 / figs[i]["value"] if kind == "rate" else
                figs[i]["value"]) for v, i in ids.items()}


def normalised_cost(costs, variant):
    """(costs[variant] - WB) / (WB - off), or None when WB costs no more
    than off."""
    extra = costs["trace_wb"] - costs["trace_off"]
    if extra <= 0:
        return None
    return (costs[variant] - costs["trace_wb"]) / extra


def cost_order(costs):
    """"WB < WC < UC": the buffer types from cheapest to dearest."""
    order = sorted((v for v in ("trace_wb", "trace_wc", "trace_uc")
                    if v in costs), key=lambda v: costs[v])
    return " < ".join(SEED000_LABEL[v] for v in order)
