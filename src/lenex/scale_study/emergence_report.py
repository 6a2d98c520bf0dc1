"""Emergence curves from recorded points: per sweep (or scale-study series) and effect, a table
(markdown) and a figure (png), generated from the records alone (docs/emergence.md).

A reading: per value the effect over seeds with its interval (lenex.scale_study.emergence); the
trend and its class by the forecasts' rule (lenex.scale_study.forecast.seed_trend: each seed's own
line on log2 of the variable, the mean slope with a t interval over seeds); beside it, labelled,
the old rule's pooled line and its class (the rule changed after these data were seen). Where the
effect would reach the claim's threshold is the forecasts' page (PREDICTIONS), not a crossing
here. A corpus sweep has no order: per corpus the effect, and the paired difference between its
two corpora over the seeds both have.
"""
from __future__ import annotations

import json
import math
import textwrap

from ..files import atomic_write_text, save_figure
from . import forecast
from .emergence import LEVEL, emergence, mean_interval, record_effect

#: The forecasts of every budget series toward its claim's threshold (lenex.scale_study.predictions).
PREDICTIONS = "results/scale-study/sweeps/predictions.md"


def seed_effects(records: list[dict], effect: dict) -> dict:
    """{value: {seed: e}} of one effect over a sweep's records of its model (records lacking a
    length or protocol it reads are left out: the analysis counts what was measured)."""
    out: dict = {}
    for r in records:
        if r["phenomenon"] != effect["model"]:
            continue
        e = record_effect(r, effect)
        if e is not None:
            out.setdefault(r["value"], {})[r["seed"]] = e
    return out


def scale_study_series(records: list[dict], effects: list[dict], least: int = 3) -> list[tuple[dict, dict, list[dict]]]:
    """The scale study's budget series: for each effect, every (tokenizer, shape) at which its
    phenomenon has at least `least` budgets measuring it; each as (effect, {tokenizer, shape}, records
    with value = train_tokens and seed = the study's one)."""
    series = []
    for effect in effects:
        groups: dict = {}
        for r in records:
            if r["phenomenon"] == effect["phenomenon"]:
                groups.setdefault((r["tokenizer"], r["shape"]), []).append(
                    {**r, "phenomenon": effect["phenomenon"], "value": r["train_tokens"], "seed": 1})
        for (tokenizer, shape), group in sorted(groups.items()):
            measured = seed_effects(group, {**effect, "model": effect["phenomenon"]})
            if len(measured) >= least:
                series.append((effect, {"tokenizer": tokenizer, "shape": shape}, group))
    return series


def seed_series(present: list, by_value: dict) -> dict:
    """{seed: [(log2 value, e), ...]}: each seed's own points, as lenex.scale_study.forecast reads
    a series (a budget sweep trains one shape, so a doubling of its tokens is one of its tokens per
    parameter too)."""
    series: dict = {}
    for v in present:
        for seed, e in by_value[v].items():
            series.setdefault(seed, []).append((math.log2(v), e))
    return {seed: sorted(points) for seed, points in sorted(series.items())}


def read_effect(values: list, by_value: dict, paper: float, variable: str, level: float = LEVEL) -> dict:
    """The reading of one effect over a sweep's values (those with at least one seed): `trend`
    (forecast.SeedTrend) and `class` by the rule; `pooled`, the old rule's reading (its line, class
    and crossing of the paper's full effect), kept beside it."""
    present = [v for v in values if by_value.get(v)]
    per_seed = [[by_value[v][s] for s in sorted(by_value[v])] for v in present]
    reading = {"values": present, "paper": paper, "points": [mean_interval(e, level) for e in per_seed],
               "class": None, "trend": None, "pooled": None, "contrast": None, "note": ""}
    if variable == "corpus":
        if len(present) == 2:
            first, second = (by_value[v] for v in present)
            common = sorted(set(first) & set(second))
            if common:
                reading["contrast"] = mean_interval([second[s] - first[s] for s in common], level)
        if reading["contrast"] is None:
            reading["note"] = "the paired difference needs both corpora measured with a common seed: not yet measured"
        elif reading["contrast"].low is None:
            reading["note"] = "one common seed: the paired difference has no interval"
        reading["class"] = contrast_class(reading["contrast"])
        return reading
    if len(present) < 2 or sum(map(len, per_seed)) < 3:
        reading["note"] = "a trend needs at least 3 effects at 2 or more values: not yet measured"
        return reading
    pooled = {k: v for k, v in emergence(present, per_seed, paper, level).items() if k != "points"}
    trend = forecast.seed_trend(seed_series(present, by_value), paper, level)
    note = ("no seed has two values: no per-seed trend" if trend is None else
            "" if trend.label else "one seed with two values: the per-seed slope has no interval")
    return {**reading, "pooled": pooled, "trend": trend, "class": None if trend is None else trend.label,
            "note": note}


def contrast_class(contrast) -> str | None:
    """A corpus contrast's class: 'differs' when its interval excludes 0, 'no difference resolved'
    when it holds 0 (an interval that holds 0 does not show the corpora alike), None when there is
    no interval (no common seed, or one)."""
    if contrast is None or contrast.low is None:
        return None
    return "differs" if contrast.low > 0 or contrast.high < 0 else "no difference resolved"


def _num(x: float | None, digits: int = 4) -> str:
    return "—" if x is None else f"{x:+.{digits}f}"


def _value(x) -> str:
    return f"{x:,}" if isinstance(x, int) else str(x)


def _interval(point) -> str:
    return "one seed: no interval" if point.low is None else f"[{_num(point.low)}, {_num(point.high)}]"


def effect_lines(title: str, variable: str, reading: dict, forecasts: str = PREDICTIONS) -> list[str]:
    """The markdown of one effect: a row per value, then the trend by the rule, the old pooled
    line labelled beside it, and where the forecast toward the claim's threshold is (`forecasts`,
    a link relative to the page)."""
    lines = [f"### {title}", "", f"e = ln ppl / ppl as named; the paper's e = {_num(reading['paper'])}.", "",
             f"| {variable} | seeds | e (mean) | {LEVEL:.0%} interval | fraction of the paper's |", "|---|---:|---:|---|---:|"]
    for value, point in zip(reading["values"], reading["points"]):
        fraction = "—" if reading["paper"] == 0 else f"{point.mean / reading['paper']:.3f}"
        lines.append(f"| {_value(value)} | {point.seeds} | {_num(point.mean)} | {_interval(point)} | {fraction} |")
    lines.append("")
    if reading["contrast"] is not None:
        c = reading["contrast"]
        lines.append(f"Paired over {c.seeds} seeds, e({_value(reading['values'][1])}) − e({_value(reading['values'][0])}) = "
                     f"{_num(c.mean)}, interval {_interval(c)}" + (f": **{reading['class']}**." if reading["class"] else "."))
    elif reading["pooled"] is not None:
        t = reading["trend"]
        if t is None:
            lines.append(f"Trend by the rule (each seed's own line): {reading['note']}.")
        else:
            lines.append(f"Trend by the rule (docs/emergence.md, \"Forecasts: the rule\": each seed's own least-squares "
                         f"line on log2 {variable}; {t.slope.how}): slope {_num(t.slope.mean)} per doubling, "
                         + (f"interval [{_num(t.slope.low)}, {_num(t.slope.high)}]: **{t.label}**."
                            if t.label else f"{reading['note']}."))
        p = reading["pooled"]["trend"]
        lines.append(f"Old rule, replaced after these data were seen (one least-squares line pooling all {p.n} effects "
                     f"as independent): slope {_num(p.slope)} per doubling, interval [{_num(p.slope_low)}, "
                     f"{_num(p.slope_high)}]: {reading['pooled']['class']}.")
        lines.append(f"Where it would reach the claim's threshold: the forecast in [predictions.md]({forecasts}) "
                     "(toward the claim's own threshold, where the old rule's crossing read the paper's full effect)."
                     if variable == "train_tokens" else f"A {variable} trend predicts no budget.")
    else:
        lines.append(reading["note"] + ".")
    return lines + [""]


def plot(panels: list[tuple[str, str, dict]], path) -> None:
    """One panel per effect: e against the variable (log2 axis for numbers) with its intervals,
    the fitted line and the paper's e."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = max(1, min(3, len(panels)))  # three panels to a row, titles wrapped to the panel
    rows = max(1, -(-len(panels) // columns))
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4.5 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (title, variable, reading) in zip(axes.flat, panels):
        numeric = variable != "corpus"
        xs = reading["values"] if numeric else list(range(len(reading["values"])))
        means = [p.mean for p in reading["points"]]
        errors = [[0 if p.low is None else p.mean - p.low for p in reading["points"]],
                  [0 if p.high is None else p.high - p.mean for p in reading["points"]]]
        ax.errorbar(xs, means, yerr=errors, fmt="o", capsize=3, label="ours (mean, interval)")
        if reading["pooled"] is not None and xs:
            grid = [min(xs) * 2 ** (i / 10) for i in range(int(10 * math.log2(max(xs) / min(xs))) + 1)]
            if reading["trend"] is not None:
                fits, sign = reading["trend"].fits, 1 if reading["paper"] > 0 else -1
                ax.plot(grid, [forecast.predict(fits, "linear", sign, math.log2(x)).mean for x in grid], "-",
                        label=f"seeds' lines, mean: {reading['class'] or 'no interval'}")
            t = reading["pooled"]["trend"]
            ax.plot(grid, [t.intercept + t.slope * math.log2(x) for x in grid], ":", color="gray",
                    label=f"old rule, pooled line: {reading['pooled']['class']}")
        ax.axhline(reading["paper"], color="gray", linestyle="--", label="the paper's")
        if numeric and xs:
            ax.set_xscale("log", base=2)
        else:
            ax.set_xticks(xs, [str(v) for v in reading["values"]])
        ax.set_xlabel(variable)
        ax.set_ylabel("effect e (log ratio)")
        ax.set_title(textwrap.fill(title, 55), fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def _point(p) -> dict | None:
    return None if p is None else {"mean": p.mean, "low": p.low, "high": p.high, "seeds": p.seeds}


def reading_record(about: dict, variable: str, reading: dict) -> dict:
    """One effect's reading as the claims read it (lenex.claims.emergence): which claim, where it
    was measured (`source`: a sweep or the scale study's series; `subject`: its model or series),
    the class and the slope per doubling with its interval by the rule (`trend`: the mean over
    `seeds` seeds fitted alone), `pooled` the old rule's class, line and crossing of the paper's
    full effect (None: does not grow; an unbounded upper end is None too, JSON having no
    infinity), and `forecast`, the page that forecasts it toward the claim's threshold."""
    trend, pooled = reading["trend"], reading["pooled"]
    old = None
    if pooled is not None:
        t, cross = pooled["trend"], pooled["crossing"]
        old = {"class": pooled["class"],
               "trend": {"slope": t.slope, "low": t.slope_low, "high": t.slope_high, "effects": t.n},
               "crossing": None if cross is None else {"value": cross.value, "low": cross.low,
                                                       "high": None if math.isinf(cross.high) else cross.high}}
    return {**about, "variable": variable, "paper": reading["paper"], "values": reading["values"],
            "points": [_point(p) for p in reading["points"]], "class": reading["class"],
            "trend": None if trend is None else {"slope": trend.slope.mean, "low": trend.slope.low,
                                                 "high": trend.slope.high, "seeds": len(trend.fits),
                                                 "how": trend.slope.how},
            "pooled": old, "forecast": PREDICTIONS if variable == "train_tokens" else None,
            "contrast": _point(reading["contrast"]), "note": reading["note"]}


def write_page(title: str, intro: list[str], panels: list[tuple[str, str, dict, dict]], md_path, png_path,
               forecasts: str = PREDICTIONS) -> None:
    """The page (markdown and figure) and beside it `emergence.json`, the same readings as records;
    `forecasts`: the predictions page as a link from this one."""
    lines = [f"# {title}", "", *intro, "", f"![the effects against the variable]({png_path.name})", ""]
    for name, variable, reading, _ in panels:
        lines += effect_lines(name, variable, reading, forecasts)
    records = [reading_record(about, variable, reading) for _, variable, reading, about in panels]
    atomic_write_text(md_path.with_suffix(".json"), json.dumps({"title": title, "effects": records}, indent=1) + "\n")
    atomic_write_text(md_path, "\n".join(lines).rstrip() + "\n")
    plot([panel[:3] for panel in panels], png_path)
