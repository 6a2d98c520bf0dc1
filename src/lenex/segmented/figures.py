"""Figures 2 and 3 of the segmented-sequences paper (PNG + PDF).

    python -m lenex.segmented.figures figure2 --results R.json.. --title T --preset P --out-png F.png --out-pdf F.pdf
    python -m lenex.segmented.figures figure3 --results before.json after.json ...

Figure 2: "out of the box" perplexity against evaluation length (L_t .. 5 L_t), one line per
position scheme (APE interpolated, RoPE, ALiBi). Figure 3: histograms of the median attention
weight of queries past L_t (`lenex.segmented.attention`), before and after chunk training.
"""

from __future__ import annotations

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..cli import run_cli  # noqa: E402
from ..files import atomic_write_text, save_figure  # noqa: E402
from ..tables.raw_results import read_recorded  # noqa: E402
from ..records.provenance import check_result_paths  # noqa: E402
from .targets import FIGURE3_VALUES  # noqa: E402

LABELS = {"learned": "APE (interpolated)", "rope": "RoPE", "alibi": "ALiBi"}


def _save(fig, png, pdf) -> None:
    for path in (png, pdf):
        save_figure(fig, path, bbox_inches="tight")
    plt.close(fig)


def recorded_scale(preset: str, results: list[dict], hf: bool) -> str:
    """The subtitle: the scale of the models actually plotted, from the configs their results
    recorded (not the preset's shared model, which they need not be)."""
    if hf:
        return f"preset {preset}: the paper's Hugging Face models"
    shapes: dict[str, list[str]] = {}
    for r in results:
        cfg = r.get("model_config")
        shape = (f"{cfg['n_layer']}x{cfg['d_model']}, L_t {r.get('base_train_length', cfg['train_length'])}"
                 if cfg else "size not recorded")
        names = shapes.setdefault(shape, [])
        if r.get("model", "?") not in names:
            names.append(r.get("model", "?"))
    described = "; ".join(f"{', '.join(names)}: {shape}" for shape, names in shapes.items())
    return f"preset {preset}: own stand-in models ({described}) - NOT the paper's scale"


def figure2_series(results: list[dict]) -> dict[str, list[tuple[float, float]]]:
    """model -> [(length / L_t, ppl)] sorted by length."""
    series: dict[str, list] = {}
    for r in results:
        series.setdefault(r["model"], []).append((r["length"] / r["base_train_length"], r["ppl"]))
    return {m: sorted(points) for m, points in series.items()}


def figure2(results: list[dict], title: str, scale: str, png, pdf) -> None:
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    positions = {r["model"]: r["model_config"]["position"] for r in results}
    for model, points in figure2_series(results).items():
        x, y = zip(*points)
        ax.plot(x, y, marker="o", label=f"{LABELS.get(positions[model], positions[model])} ({model} stand-in)")
    ax.set_yscale("log")
    ax.set_xlabel("evaluation length / L_t")
    ax.set_ylabel("perplexity (mean over test pieces)")
    ax.set_title(f"{title}\n{scale}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    _save(fig, png, pdf)


def figure3(before: dict, after: dict, title: str, scale: str, png, pdf) -> None:
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    values = [np.asarray(r["medians_times_keys"]) for r in (before, after)]
    top = max(float(np.quantile(v, 0.99)) for v in values)
    bins = np.linspace(0, max(top, 1.0), 40)
    for v, label in zip(values, (f"before (OOTB), mean {values[0].mean():.2f}",
                                 f"after ({after['run']}), mean {values[1].mean():.2f}")):
        ax.hist(np.clip(v, 0, bins[-1]), bins=bins, alpha=0.55, label=label)
    ax.axvline(1.0, color="k", lw=0.8, ls="--", label="uniform weight (the mean)")
    ax.set_xlabel("median attention weight x keys, queries past L_t")
    ax.set_ylabel("layer x head x query count")
    ax.set_title(f"{title}\n{scale}", fontsize=9)
    ax.legend(fontsize=8)
    _save(fig, png, pdf)


def figure3_cells(before: dict, after: dict) -> dict:
    """What Figure 3 shows, as data for the claims: the mean over layers, heads and queries past L_t
    of the median attention weight x keys (1.0 = uniform), before and after segmented training."""
    values = {side: np.asarray(r["medians_times_keys"], dtype=np.float64) for side, r in
              (("before", before), ("after", after))}
    return {"figure": "3", "paper": "segmented", "after_run": after.get("run"),
            "values": {FIGURE3_VALUES[side]: float(v.mean()) for side, v in values.items()}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("figure", choices=["figure2", "figure3"])
    parser.add_argument("--results", nargs="+", required=True, help="figure3: before.json after.json")
    parser.add_argument("--title", required=True)
    parser.add_argument("--preset", required=True, help="the preset the results were computed at")
    parser.add_argument("--hf", action="store_true", help="the results come from the released HF models")
    parser.add_argument("--out-png", required=True)
    parser.add_argument("--out-pdf", required=True)
    parser.add_argument("--out-cells", default=None, help="figure3: its numbers as JSON, for the claims")
    parser.add_argument("--expect", default="{}", help="JSON: what the results record (lenex.records.provenance.check_result_paths)")
    args = parser.parse_args(argv)
    results = [read_recorded(p) for p in args.results]
    for path, result in zip(args.results, results):
        check_result_paths([result], path, args.expect)  # another cell's result is an error, as in the tables
    scale = recorded_scale(args.preset, results, args.hf)
    if args.figure == "figure2":
        figure2(results, args.title, scale, args.out_png, args.out_pdf)
    else:
        if len(results) != 2:
            raise ValueError(f"figure3 takes two results (before, after), got {len(results)}")
        figure3(results[0], results[1], args.title, scale, args.out_png, args.out_pdf)
        if args.out_cells:
            atomic_write_text(args.out_cells, json.dumps(figure3_cells(*results), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    run_cli(main)
