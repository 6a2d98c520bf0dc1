"""Where each phenomenon would show: every emergence reading of a budget (the scale
study's series and each sweep's, their `emergence.json`), its trend and the budget at which its
fitted line reaches the paper's effect, set beside the tokens per model of three presets of the
claim's paper: `workstation` (what our verdicts read), `gpu` (one GPU-day per paper) and `paper`
(the paper's own). Tokens per model are the fewest of the models the claim reads: its
`scale.variants`, else the variants of the table rows its cell references name (the experiment
definition's `tables`), else, for a claim that reads no table cell, the paper's fewest
(lenex.experiment.presets.budget_tokens). So a Table 3 claim of the receptive-field paper is set
beside Table 3's budget, not beside the shorter-L_tr fixes' smaller one.

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

from ..claims.emergence import paired_difference
from ..experiment.presets import budget_tokens, paper_view
from ..files import read_yaml

PRESETS = ("workstation", "gpu", "paper")


def config_files(root: str | Path) -> list[str]:
    """What the predictions read besides the emergence records, relative to `root`: the presets,
    the claims files and the experiment definitions of their papers (the rule's inputs)."""
    claims = sorted((Path(root) / "config" / "claims").glob("*.yaml"))
    return ([f"config/presets/{name}.yaml" for name in PRESETS] + [f"config/claims/{p.name}" for p in claims]
            + [f"config/experiments/{p.name}" for p in claims])


def table_variants(experiment: dict) -> dict[tuple[str, str, str], str]:
    """(table number, dataset, method) -> the variant of that row, from an experiment definition."""
    found = {}
    for table in (experiment.get("tables") or {}).values():
        for section in table.get("sections") or []:
            for row in section.get("rows") or []:
                if "variant" in row:
                    found[(str(table["table"]), section["dataset"], row["method"])] = row["variant"]
    return found


def read_variants(claim: dict, rows: dict[tuple[str, str, str], str]) -> list[str]:
    """The variants a claim reads: its `scale.variants`, else those of the rows its cell references
    name (`table_variants`); sorted, each once."""
    # Imported here: workflow/rules/sweeps.smk imports this module when Snakemake parses the
    # workflow, and the claims' references pull in scipy.stats (about 0.6 s on every start-up).
    from ..claims.evaluate import references
    from ..claims.refs import cell_row, expand

    named = (claim.get("scale") or {}).get("variants")
    if named:
        return sorted(set(named))
    found = set()
    for ref in (r for ref in references(claim.get("check")) for r in expand(ref)):
        row = cell_row(ref)
        if row in rows:
            found.add(rows[row])
    return sorted(found)


def claim_budgets(config_dir: Path) -> dict[str, dict]:
    """claim id -> {"paper": its paper, "budgets": preset -> tokens per model of the models it reads}
    (the module's docstring), from config/claims/<paper>.yaml, config/experiments/<paper>.yaml and
    the presets. A variant a claim reads that its paper does not define is an error naming it."""
    presets = {name: read_yaml(config_dir / "presets" / f"{name}.yaml") for name in PRESETS}
    found: dict[str, dict] = {}
    for path in sorted((config_dir / "claims").glob("*.yaml")):
        paper = path.stem
        experiment = read_yaml(config_dir / "experiments" / f"{paper}.yaml")
        variants, rows = experiment["variants"], table_variants(experiment)
        views = {name: paper_view(preset, paper) for name, preset in presets.items()}
        for claim in read_yaml(path)["claims"]:
            named = read_variants(claim, rows)
            unknown = sorted(set(named) - set(variants))
            if unknown:
                raise ValueError(f"{path.name}: claim {claim['id']!r} reads variants {unknown}, which "
                                 f"are not variants of {paper}")
            read = {name: variants[name] for name in named} or variants
            found[claim["id"]] = {"paper": paper, "budgets": {name: budget_tokens(view, read)
                                                              for name, view in views.items()}}
    return found


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


def rows(readings: list[dict], claims: dict[str, dict]) -> list[dict]:
    """One row per reading: its claim, paper, trend, crossing, the claim's budgets at the presets
    (`claim_budgets`) and what it says. A reading of a claim no claims file names is an error naming it."""
    found = []
    for r in readings:
        if r["claim"] not in claims:
            raise ValueError(f"an emergence reading names claim {r['claim']!r}, which no config/claims file has")
        paper, tokens = claims[r["claim"]]["paper"], claims[r["claim"]]["budgets"]
        found.append({"claim": r["claim"], "paper": paper, "source": r["source"], "subject": r["subject"],
                      "variable": r["variable"], "class": r["class"], "trend": r["trend"], "crossing": r["crossing"],
                      "contrast": r.get("contrast"), "values": r.get("values"),
                      "budgets": tokens, "says": says(r, tokens["gpu"], tokens["paper"])})
    return found


def _g(x) -> str:
    return "—" if x is None else f"{x:.3g}"


def _slope(row: dict) -> str:
    """The trend's slope with its interval, or a corpus sweep's paired difference with its own."""
    trend, contrast = row["trend"], row.get("contrast")
    if trend is not None:
        return f"{trend['slope']:+.4f} ({trend['low']:+.4f}, {trend['high']:+.4f})"
    if contrast and contrast.get("low") is not None:
        return f"{paired_difference(row)} ({contrast['low']:+.4f}, {contrast['high']:+.4f})"
    return "—"


def page(found: list[dict]) -> str:
    """The predictions as Markdown: one table, every reading."""
    lines = ["# Where each phenomenon would show: the emergence trends against one GPU-day", "",
             "Built by `python -m lenex.scale_study.sweep_run predictions` from every committed emergence record "
             "(the scale study's series and each sweep's `emergence.json`) and the presets' budgets "
             "(lenex.scale_study.predictions: what each line says, and why a crossing is a forecast at the "
             "reading's shape, not a measurement at the preset's). Budgets: training tokens per model of the "
             "models the claim reads at each preset.", "",
             "| claim | measured by | trend | slope per doubling, or the corpora's paired difference (95%) | "
             "budget reaching the paper's effect (95%) | "
             "workstation | one GPU-day | paper | prediction |",
             "|---|---|---|---|---|---:|---:|---:|---|"]
    for row in found:
        cross, tokens, slope = row["crossing"], row["budgets"], _slope(row)
        reach = "—" if cross is None else f"{_g(cross['value'])} ({_g(cross['low'])} to {_g(cross.get('high'))})"
        lines.append(f"| {row['claim']} | {row['source']}, {row['subject']} ({row['variable']}) | {row['class'] or '—'} | "
                     f"{slope} | {reach} | {tokens['workstation']:.3g} | {tokens['gpu']:.3g} | {tokens['paper']:.3g} | "
                     f"{row['says']} |")
    return "\n".join(lines) + "\n"
