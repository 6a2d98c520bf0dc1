"""The "Training curves" section of a paper's diagnostics page and its `<paper>.curves.png`
(lenex.tables.diagnostics): each trained model's curve (lenex.training.curve, written by rule train),
read as a recorded file (from its raw results under `from_raw`), one table per model (a row per
seed: final train and validation loss, the still-falling slope) and one panel per model (train and
validation loss against tokens seen, log x, one line per seed). A run whose raw results hold no
curve (recorded before curves were) says so in one sentence (NO_CURVE) and its figure says it too.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..files import save_figure
from ..training.curve import slope_cells
from .raw_results import holds_recorded, read_recorded

NO_CURVE = "No training curve recorded for this run"
#: The figure draws at most this many models' panels (the tables list every model).
MAX_PANELS = 48
_CURVE = re.compile(r"results/[^/]+/curves/[^/]+/(?P<model>.+)/curve\.json")


def model_and_seed(path: str) -> tuple[str, int | None]:
    """(model without its seed, seed) of a curve's path results/<preset>/curves/<paper>/<model>/curve.json:
    `alibi/seed2` -> ('alibi', 2), `arxiv/alibi/seed1` -> ('arxiv/alibi', 1), `bloom/seed1/ootb` ->
    ('bloom/ootb', 1); a model without a seed<s> segment keeps its path and seed None."""
    found = _CURVE.fullmatch(str(path))
    if not found:
        raise ValueError(f"{path} is not a training curve's path (results/<preset>/curves/<paper>/<model>/curve.json)")
    parts = found.group("model").split("/")
    seeds = [i for i, part in enumerate(parts) if re.fullmatch(r"seed\d+", part)]
    if not seeds:
        return "/".join(parts), None
    return "/".join(parts[:seeds[-1]] + parts[seeds[-1] + 1:]), int(parts[seeds[-1]][4:])


def read_curves(paths: list[str]) -> tuple[dict[str, dict], list[str]]:
    """({path: curve} of the curves recorded, [paths of those not recorded]) (`split_curves`)."""
    return split_curves({path: read_recorded(path) if holds_recorded(path) else None for path in paths})


def split_curves(read: dict[str, dict | None]) -> tuple[dict[str, dict], list[str]]:
    """({path: curve}, [paths without one]) of curves as read (None: not recorded): a curve file saying
    its run has none (lenex.training.curve.no_curve: a trainer whose metrics are not lenex's) is not one."""
    found, missing = {}, []
    for path, curve in read.items():
        if curve is None or "none" in curve:
            missing.append(path)
        else:
            found[path] = curve
    return found, missing


def by_model(curves: dict[str, dict]) -> dict[str, dict[int | None, dict]]:
    """{model: {seed: curve}}, models and seeds sorted."""
    models: dict[str, dict] = {}
    for path, curve in curves.items():
        model, seed = model_and_seed(path)
        models.setdefault(model, {})[seed] = curve
    return {m: dict(sorted(models[m].items(), key=lambda kv: (kv[0] is None, kv[0] or 0))) for m in sorted(models)}


def _loss(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def section(curves: dict[str, dict], missing: list[str], png: str, title: str = "Training curves") -> list[str]:
    """The page's "## Training curves" section (Markdown lines)."""
    lines = [f"## {title}", ""]
    if not curves:
        why = f" (its results hold none of its {len(missing)} models' curves: see docs/curves.md)" if missing else ""
        return lines + [f"{NO_CURVE}{why}.", ""]
    models = by_model(curves)
    intro = ["Each model's loss against the tokens it has seen (lenex.training.curve, docs/curves.md): final train "
             "loss (the last logged step's), final and best validation loss, and the slope of validation loss per "
             "doubling of tokens over the last interval between two validations (nats; negative: still falling, "
             "\"still falling\" past −0.01; — with a single validation); and the mean train loss over the last doubling "
             "of tokens minus that over the doubling before (train Δ / last doubling; the learning rate's decay is "
             "part of it)."]
    if missing:
        intro.append(f"{len(missing)} of its {len(missing) + len(curves)} models have no curve recorded.")
    if len(models) > MAX_PANELS:
        intro.append(f"The figure draws the first {MAX_PANELS} of the {len(models)} models.")
    lines += [" ".join(intro), "", f"![training curves]({png})", ""]
    for model, seeds in models.items():
        lines += [f"### {model}", "", "| seed | steps | tokens | final train loss | final val loss | best val loss | "
                  "val slope / doubling | train Δ / last doubling |", "|---|---|---|---|---|---|---|---|"]
        for seed, curve in seeds.items():
            s = curve["summary"]
            lines.append(f"| {'—' if seed is None else seed} | {s['steps']} | {s['tokens']:,} | "
                         f"{_loss(s['final_train_loss'])} | {_loss(s['final_valid_loss'])} | "
                         f"{_loss(s['best_valid_loss'])} | {' | '.join(slope_cells(s))} |")
        lines.append("")
    return lines


def plot(curves: dict[str, dict], paper: str, preset: str, png) -> None:
    """One panel per model (the first MAX_PANELS): train loss (line) and validation loss (dashed,
    markers) against tokens seen, log x, one colour per seed; a figure saying NO_CURVE without any."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(by_model(curves).items())[:MAX_PANELS]
    if not models:
        fig, ax = plt.subplots(figsize=(6, 1.2))
        ax.axis("off")
        ax.text(0.5, 0.5, f"{paper} at {preset}: {NO_CURVE[0].lower()}{NO_CURVE[1:]}", ha="center", va="center")
        save_figure(fig, png, dpi=100)
        plt.close(fig)
        return
    columns = min(4, len(models))
    rows = -(-len(models) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 2.8 * rows), squeeze=False)
    for ax, (model, seeds) in zip(axes.flat, models):
        for index, (seed, curve) in enumerate(seeds.items()):
            colour = plt.cm.tab10.colors[index % 10]
            points = curve["points"]
            ax.plot([p["tokens"] for p in points], [p["train_loss"] for p in points], color=colour, linewidth=1,
                    label=f"seed {seed} train" if seed is not None else "train")
            valid = [p for p in points if "valid_loss" in p]
            if valid:
                ax.plot([p["tokens"] for p in valid], [p["valid_loss"] for p in valid], color=colour, linewidth=1,
                        linestyle="--", marker="o", markersize=3, label=f"seed {seed} val" if seed is not None else "val")
        ax.set_xscale("log", base=2)
        ax.set_title(model, fontsize=8)
        ax.set_xlabel("tokens seen", fontsize=7)
        ax.set_ylabel("loss (nats)", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=5, ncol=2)
    for ax in list(axes.flat)[len(models):]:
        ax.set_visible(False)
    fig.suptitle(f"{paper} at {preset}: training curves (train solid, validation dashed)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, png, dpi=90)
    plt.close(fig)


def write(paths: list[str], paper: str, preset: str, png) -> list[str]:
    """Read the curves, draw `png`, return the page's section."""
    curves, missing = read_curves(paths)
    plot(curves, paper, preset, png)
    return section(curves, missing, Path(png).name)
