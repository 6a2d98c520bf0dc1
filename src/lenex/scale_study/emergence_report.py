"""Emergence curves from recorded points: per sweep (or scale-study series) and effect, a table
(markdown) and a figure (png), generated from the records alone (docs/emergence.md).

A reading is lenex.scale_study.emergence's: per value the effect over seeds with its interval, the
log-linear trend, its class and the crossing. A corpus sweep has no order: per corpus the effect,
and the paired difference between its two corpora over the seeds both have.
"""
from __future__ import annotations

import json
import math
import textwrap

from ..files import atomic_write_text, save_figure
from ..records.scale_record import scores_of
from .emergence import LEVEL, effect_of, emergence, mean_interval


def seed_effects(records: list[dict], effect: dict) -> dict:
    """{value: {seed: e}} of one effect over a sweep's records of its model (records lacking a
    length or protocol it reads are left out: the analysis counts what was measured)."""
    out: dict = {}
    for r in records:
        if r["phenomenon"] != effect["model"]:
            continue
        scores = scores_of(r, effect.get("protocol", "lex"))
        try:
            e = effect_of(scores["ppl"], effect["numerator"], effect["denominator"], r["train_length"]) if scores else None
        except ValueError:
            e = None
        if e is not None:
            out.setdefault(r["value"], {})[r["seed"]] = e
    return out


def read_effect(values: list, by_value: dict, paper: float, variable: str, level: float = LEVEL) -> dict:
    """The reading of one effect over a sweep's values (those with at least one seed)."""
    present = [v for v in values if by_value.get(v)]
    per_seed = [[by_value[v][s] for s in sorted(by_value[v])] for v in present]
    reading = {"values": present, "paper": paper, "points": [mean_interval(e, level) for e in per_seed],
               "class": None, "trend": None, "crossing": None, "contrast": None, "note": ""}
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
    return {**reading, **{k: v for k, v in emergence(present, per_seed, paper, level).items() if k != "points"}}


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


def effect_lines(title: str, variable: str, reading: dict) -> list[str]:
    """The markdown of one effect: a row per value, then the trend and the crossing in words."""
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
    elif reading["trend"] is not None:
        t = reading["trend"]
        lines.append(f"Trend (least squares on log2 {variable}, {t.n} effects): slope {_num(t.slope)} per doubling, "
                     f"interval [{_num(t.slope_low)}, {_num(t.slope_high)}]: **{reading['class']}**.")
        cross = reading["crossing"]
        lines.append("Reaches the paper's effect: " + (
            "does not grow" if cross is None else
            f"at {variable} ≈ {cross.value:,.4g} (interval {cross.low:,.4g} to "
            f"{'unbounded' if math.isinf(cross.high) else f'{cross.high:,.4g}'})") + ".")
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
        if reading["trend"] is not None and xs:
            t = reading["trend"]
            grid = [min(xs) * 2 ** (i / 10) for i in range(int(10 * math.log2(max(xs) / min(xs))) + 1)]
            ax.plot(grid, [t.intercept + t.slope * math.log2(x) for x in grid], "-", label=f"trend: {reading['class']}")
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
    the trend's class and slope per doubling with its interval, and the crossing (None: does not
    grow; an unbounded upper end is None too, JSON having no infinity)."""
    trend, cross = reading["trend"], reading["crossing"]
    return {**about, "variable": variable, "paper": reading["paper"], "values": reading["values"],
            "points": [_point(p) for p in reading["points"]], "class": reading["class"],
            "trend": None if trend is None else {"slope": trend.slope, "low": trend.slope_low,
                                                 "high": trend.slope_high, "effects": trend.n},
            "crossing": None if cross is None else {"value": cross.value, "low": cross.low,
                                                    "high": None if math.isinf(cross.high) else cross.high},
            "contrast": _point(reading["contrast"]), "note": reading["note"]}


def write_page(title: str, intro: list[str], panels: list[tuple[str, str, dict, dict]], md_path, png_path) -> None:
    """The page (markdown and figure) and beside it `emergence.json`, the same readings as records."""
    lines = [f"# {title}", "", *intro, "", f"![the effects against the variable]({png_path.name})", ""]
    for name, variable, reading, _ in panels:
        lines += effect_lines(name, variable, reading)
    records = [reading_record(about, variable, reading) for _, variable, reading, about in panels]
    atomic_write_text(md_path.with_suffix(".json"), json.dumps({"title": title, "effects": records}, indent=1) + "\n")
    atomic_write_text(md_path, "\n".join(lines).rstrip() + "\n")
    plot([panel[:3] for panel in panels], png_path)
