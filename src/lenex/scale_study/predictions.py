"""Where each phenomenon would show (issue 49): every emergence reading of a budget (the scale
study's series and each sweep's, their `emergence.json`), its trend and the budget at which its
fitted line reaches the paper's effect, set beside the tokens per model of three presets of the
claim's paper: `workstation` (what our verdicts read), `gpu` (one GPU-day per paper) and `paper`
(the paper's own). Tokens per model are the paper's fewest at each preset
(lenex.experiment.presets.budget_tokens).

What a line says, from its reading alone:
  - shows within one GPU-day: the crossing's whole interval lies at or below the gpu preset's tokens;
  - may show within one GPU-day: the crossing's estimate does, its interval's upper end does not;
  - needs more than one GPU-day: the estimate lies beyond the gpu preset's tokens (and where it lies
    against the paper's own budget);
  - does not grow: the trend is flat or shrinks, so no budget is predicted.
A reading of another variable (heads, corpus) predicts no budget and says so. Every crossing is
extrapolated along log2 of the budget from small models (the reading's shape), so it is a
forecast at those shapes, not a measurement at the preset's.
"""
from __future__ import annotations

from pathlib import Path

from ..experiment.presets import budget_tokens, paper_view
from ..files import read_yaml

PRESETS = ("workstation", "gpu", "paper")


def preset_budgets(config_dir: Path, papers: list[str]) -> dict[str, dict[str, int]]:
    """paper -> preset -> the paper's fewest training tokens per model at that preset."""
    found: dict[str, dict[str, int]] = {}
    for name in PRESETS:
        preset = read_yaml(config_dir / "presets" / f"{name}.yaml")
        for paper in papers:
            variants = read_yaml(config_dir / "experiments" / f"{paper}.yaml")["variants"]
            found.setdefault(paper, {})[name] = budget_tokens(paper_view(preset, paper), variants)
    return found


def claim_papers(config_dir: Path) -> dict[str, str]:
    """claim id -> its paper, from config/claims/<paper>.yaml."""
    return {claim["id"]: path.stem for path in sorted((config_dir / "claims").glob("*.yaml"))
            for claim in read_yaml(path)["claims"]}


def says(reading: dict, gpu_tokens: int, paper_tokens: int) -> str:
    """What one reading predicts (the module's docstring)."""
    if reading["variable"] != "train_tokens":
        return f"not a budget trend ({reading['variable']}): predicts no budget"
    if reading["trend"] is None:
        return "no trend: " + (reading.get("note") or "too few points")
    if reading["class"] != "grows":
        return f"does not grow ({reading['class']}): no budget predicted"
    cross = reading["crossing"]
    if cross is None:
        return "grows, but its line never reaches the paper's effect"
    high = cross.get("high")
    if high is not None and high <= gpu_tokens:
        return "shows within one GPU-day"
    if cross["value"] <= gpu_tokens:
        return "may show within one GPU-day (its interval reaches beyond)"
    where = "within" if cross["value"] <= paper_tokens else "beyond"
    return f"needs more than one GPU-day ({where} the paper's own budget)"


def rows(readings: list[dict], papers: dict[str, str], budgets: dict[str, dict[str, int]]) -> list[dict]:
    """One row per reading: its claim, paper, trend, crossing, the presets' budgets and what it says.
    A reading of a claim no claims file names is an error naming it."""
    found = []
    for r in readings:
        if r["claim"] not in papers:
            raise ValueError(f"an emergence reading names claim {r['claim']!r}, which no config/claims file has")
        paper = papers[r["claim"]]
        tokens = budgets[paper]
        found.append({"claim": r["claim"], "paper": paper, "source": r["source"], "subject": r["subject"],
                      "variable": r["variable"], "class": r["class"], "trend": r["trend"], "crossing": r["crossing"],
                      "budgets": tokens, "says": says(r, tokens["gpu"], tokens["paper"])})
    return found


def _g(x) -> str:
    return "—" if x is None else f"{x:.3g}"


def page(found: list[dict]) -> str:
    """The predictions as Markdown: one table, every reading."""
    lines = ["# Where each phenomenon would show: the emergence trends against one GPU-day", "",
             "Built by `python -m lenex.scale_study.sweep_run predictions` from every committed emergence record "
             "(the scale study's series and each sweep's `emergence.json`) and the presets' budgets "
             "(lenex.scale_study.predictions: what each line says, and why a crossing is a forecast at the "
             "reading's shape, not a measurement at the preset's). Budgets: the paper's fewest training tokens "
             "per model at each preset.", "",
             "| claim | measured by | trend | slope per doubling (95%) | budget reaching the paper's effect (95%) | "
             "workstation | one GPU-day | paper | prediction |",
             "|---|---|---|---|---|---:|---:|---:|---|"]
    for row in found:
        trend, cross, tokens = row["trend"], row["crossing"], row["budgets"]
        slope = "—" if trend is None else f"{trend['slope']:+.4f} ({trend['low']:+.4f}, {trend['high']:+.4f})"
        reach = "—" if cross is None else f"{_g(cross['value'])} ({_g(cross['low'])} to {_g(cross.get('high'))})"
        lines.append(f"| {row['claim']} | {row['source']}, {row['subject']} ({row['variable']}) | {row['class'] or '—'} | "
                     f"{slope} | {reach} | {tokens['workstation']:.3g} | {tokens['gpu']:.3g} | {tokens['paper']:.3g} | "
                     f"{row['says']} |")
    return "\n".join(lines) + "\n"
