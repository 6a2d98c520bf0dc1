"""The `gpu` preset's seeds by the rule of docs/gpu.md ("Seeds where a forecast lies near its
threshold"): the claims whose forecast at the preset (results/scale-study/sweeps/predictions.md)
has a 95% interval holding a boundary of the claim's threshold region, the models their cells read,
and what 3 seeds of them cost by the cost model (benchmarks/preset_cost.py); 3 seeds where the
paper's training stays within the preset's 20 GPU-hours, else one seed and those claims named as
pairing over text pieces only.

    python -m benchmarks.gpu_seeds      # writes results/gpu/seeds.md

Small pure functions (`boundaries`, `near`, `series_near`, `cell_models`, `paper_decision`) and the
page; the forecasts, the presets and the cost model are read, never typed.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from lenex.files import atomic_write_text, read_yaml

ROOT = Path(__file__).resolve().parents[1]
PRESET = "gpu"
SEEDS = 3  # the "at least 3 seeds": a t interval over seeds needs 2, and 3 give it df 2
TRAINING_HOURS = 20.0  # the preset's training bound a paper (config/presets/gpu.yaml's header)
PAGE = ROOT / "results/gpu/seeds.md"


def boundaries(holds_in: tuple[float, float]) -> list[float]:
    """The finite ends of a region of e (lo, hi)."""
    return [b for b in holds_in if math.isfinite(b)]


def near(estimate, holds_in: tuple[float, float]) -> bool | None:
    """Whether a prediction's interval holds a finite boundary of the region (low <= b <= high);
    None with no prediction or no interval (undecided, not near)."""
    if estimate is None or estimate.low is None:
        return None
    return any(estimate.low <= b <= estimate.high for b in boundaries(holds_in))


def series_near(result: dict, holds_in: tuple[float, float], target: str = "gpu") -> dict:
    """One forecast's reading by the rule: the forms read (the chosen one; every applicable one
    where the criterion does not separate them), each form's `near`, and the series' own: True if
    any form is near, else None if any is undecided, else False."""
    at = result["targets"][target]["forms"]
    forms = [result["choice"]["chosen"]] if result["choice"]["separated"] else list(at)
    each = {form: near(at[form]["estimate"], holds_in) for form in forms}
    verdict = True if True in each.values() else None if None in each.values() else False
    return {"forms": each, "near": verdict}


def cell_models(claim: dict, experiment: dict, per_variant: bool) -> list[str]:
    """The models a claim's check cells read: `corpus/variant` (each section's `corpus`, else its
    dataset) where each corpus trains its own, the variant alone where one model is scored on
    every corpus (`per_variant`); sorted, each once. A cell of a row the experiment lacks is an
    error naming it."""
    from lenex.claims.evaluate import references
    from lenex.claims.refs import cell_row, expand

    rows = {}
    for table in (experiment.get("tables") or {}).values():
        for section in table.get("sections") or []:
            for row in section.get("rows") or []:
                if "variant" in row:
                    rows[(str(table["table"]), section["dataset"], row["method"])] = (
                        section.get("corpus") or section["dataset"], row["variant"])
    found = set()
    for ref in (r for ref in references(claim.get("check")) for r in expand(ref)):
        key = cell_row(ref)
        if key is None:
            continue
        if key not in rows:
            raise ValueError(f"claim {claim['id']!r}: cell {ref} names no row of its experiment")
        corpus, variant = rows[key]
        found.add(variant if per_variant else f"{corpus}/{variant}")
    return sorted(found)


def paper_decision(now_hours: float, added_hours: float, limit: float = TRAINING_HOURS) -> dict:
    """A paper's training GPU-hours with the near claims' models at SEEDS seeds, and whether they
    fit the preset's bound."""
    if now_hours < 0 or added_hours < 0:
        raise ValueError(f"GPU-hours cannot be negative: {now_hours}, {added_hours}")
    total = now_hours + added_hours
    return {"now": now_hours, "added": added_hours, "total": total, "fits": total <= limit}


def readings(found: list[dict]) -> list[dict]:
    """Each forecast row of predictions.md with the rule's reading at the gpu preset (rows with no
    forecast there: `near` None and why)."""
    out = []
    for row in found:
        r = row["result"]
        if r is None or "targets" not in r:
            out.append({**row, "reading": None, "why": row["note"] or "no forecast"})
            continue
        out.append({**row, "reading": series_near(r, row["region"]), "why": ""})
    return out


def plan(root: Path = ROOT, preset_name: str = PRESET) -> dict:
    """The whole reading: each series' reading, the near claims with their models, seeds now and
    cost, and per paper the decision."""
    from lenex.experiment.presets import group_view, paper_view, seed_list
    from lenex.pipeline.papers import paper_named
    from lenex.scale_study import sweeps as sw
    from lenex.scale_study.sweep_run import forecast_rows

    from .preset_cost import gpu_hours, model_gpu_hours

    found, _, specs = forecast_rows(root, sw.load_sweeps(root / "config" / "sweeps.yaml"))
    series = readings(found)
    preset = read_yaml(root / "config" / "presets" / f"{preset_name}.yaml")
    claims: dict[str, dict] = {}
    for row in series:
        if row["reading"] and row["reading"]["near"]:
            claims.setdefault(row["claim"], {"paper": row["scale"]["paper"], "series": []})["series"].append(
                f"{row['source']}, {row['subject']}")
    for claim, entry in claims.items():
        paper = entry["paper"]
        experiment = read_yaml(root / "config" / "experiments" / f"{paper}.yaml")
        view = paper_view(preset, paper)
        models = []
        for key in cell_models(specs[claim], experiment, not paper_named(paper).models_per_corpus):
            variant = key.rpartition("/")[2]
            seeds = len(seed_list(group_view(view, experiment["variants"][variant].get("group")), key))
            hours = model_gpu_hours(preset, paper, variant)
            models.append({"model": key, "variant": variant, "seeds": seeds, "hours": hours,
                           "added": max(0, SEEDS - seeds) * hours})
        entry["models"] = models
    named = {(e["paper"], m["model"]) for e in claims.values() for m in e["models"]}
    unread = sorted(f"{paper} {key}: {n}" for paper in ("lex", "receptive-field", "segmented")
                    for key, n in ((paper_view(preset, paper).get("experiment") or {}).get("power_seeds") or {}).items()
                    if (paper, key) not in named)
    now = gpu_hours(preset_name)
    papers = {}
    for paper in dict.fromkeys(e["paper"] for e in claims.values()):
        added = {m["model"]: m["added"] for e in claims.values() if e["paper"] == paper for m in e["models"]}
        papers[paper] = paper_decision(now[paper], sum(added.values()))
    return {"preset": preset_name, "series": series, "claims": claims, "papers": papers, "hours_now": now,
            "unread": unread}


def _interval(est) -> str:
    if est is None:
        return "—"
    return f"{est.mean:+.3f}" + ("" if est.low is None else f" ({est.low:+.3f}, {est.high:+.3f})")


def _region(holds_in) -> str:
    lo, hi = holds_in
    return (f"e ≥ {lo:+.3f}" if math.isinf(hi) else f"e < {hi:+.3f}" if math.isinf(lo)
            else f"{lo:+.3f} < e < {hi:+.3f}")


def _near_word(value) -> str:
    return "**near**" if value else "undecided (no interval)" if value is None else "not near"


def page(result: dict) -> str:
    """The result as Markdown."""
    lines = [f"# The `{result['preset']}` preset's seeds: claims whose forecast lies near its threshold", "",
             "Generated by `python -m benchmarks.gpu_seeds` from the forecasts of "
             "[predictions.md](../scale-study/sweeps/predictions.md) (the committed points, the presets, the claims), "
             "the presets and the cost model (`benchmarks/preset_cost.py`, the rates of `benchmarks/gpu_cost.py`), by "
             "the rule of docs/gpu.md (\"Seeds where a forecast lies near its threshold\"): a forecast at the gpu "
             "preset is near when its 95% interval holds a finite boundary of the claim's threshold region (the "
             "chosen form's; each applicable form's where the held-out criterion does not separate them); a near "
             f"claim's models train {SEEDS} seeds where the paper's training stays within {TRAINING_HOURS:g} "
             "GPU-hours.", "",
             "## Every forecast at the gpu preset", "",
             "| claim | measured by | the check holds at | forms read: e (95%) | reading |", "|---|---|---|---|---|"]
    for row in result["series"]:
        if row["reading"] is None:
            lines.append(f"| {row['claim']} | {row['source']}, {row['subject']} | — | {row['why']} | no forecast |")
            continue
        at = row["result"]["targets"]["gpu"]["forms"]
        forms = "; ".join(f"{f}: {_interval(at[f]['estimate'])}" for f in row["reading"]["forms"])
        lines.append(f"| {row['claim']} | {row['source']}, {row['subject']} | {_region(row['region'])} | {forms} | "
                     f"{_near_word(row['reading']['near'])} |")
    lines += ["", "## The near claims, their models and the cost of their seeds", ""]
    if result["unread"]:
        lines += ["The preset trains more seeds of models no near claim reads (the forecasts moved since it was set: "
                  "by the rule they go back to one seed): " + "; ".join(result["unread"]) + ".", ""]
    if not result["claims"]:
        lines += ["No forecast lies near its claim's threshold: the preset's seeds stay as they are.", ""]
        return "\n".join(lines).rstrip("\n") + "\n"
    lines += [f"| claim | paper | near by | model | seeds at the preset | GPU-hours a seed | {SEEDS} seeds | "
              f"added to the preset for {SEEDS} seeds |", "|---|---|---|---|---:|---:|---:|---:|"]
    for claim, entry in result["claims"].items():
        for m in entry["models"]:
            lines.append(f"| {claim} | {entry['paper']} | {'; '.join(entry['series'])} | {m['model']} | {m['seeds']} | "
                         f"{m['hours']:.2f} | {SEEDS * m['hours']:.2f} | {m['added']:.2f} |")
    lines += ["", f"| paper | training GPU-hours at the preset | added | with {SEEDS} seeds of the near claims' models | "
              f"within {TRAINING_HOURS:g}? | so |", "|---|---:|---:|---:|---|---|"]
    for paper, d in result["papers"].items():
        mine = [m for e in result["claims"].values() if e["paper"] == paper for m in e["models"]]
        done = all(m["seeds"] >= SEEDS for m in mine)
        so = (f"the preset trains them at {SEEDS} seeds (config/presets/gpu.yaml)" if d["fits"] and done else
              f"fits: set them to {SEEDS} seeds in config/presets/gpu.yaml" if d["fits"] else
              "does not fit: one seed; these claims' intervals pair over text pieces only (evaluation noise, "
              "not training-seed noise)")
        lines.append(f"| {paper} | {d['now']:.2f} | {d['added']:.2f} | {d['total']:.2f} | "
                     f"{'yes' if d['fits'] else 'no'} | {so} |")
    beyond_one = sum((SEEDS - 1) * m["hours"] for e in result["claims"].values() for m in e["models"])
    lines += ["", "The hours at the preset count the seeds it already trains (its `experiment.power_seeds` included), "
              "so once the preset trains them, nothing is added and the total is the preset's own. Their seeds past "
              f"the first cost {beyond_one:.2f} GPU-hours in all."]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(PAGE))
    args = parser.parse_args(argv)
    text = page(plan())
    atomic_write_text(Path(args.out), text)
    print(text)


if __name__ == "__main__":
    main()
