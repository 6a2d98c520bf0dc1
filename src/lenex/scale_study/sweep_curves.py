"""The training curves of the emergence sweeps' points (docs/curves.md): a point records its run's
curve (`training_curve`, lenex.training.curve) since its point rule does; one recorded before can
be given it afterwards (`sweep_run attach-curve`). `results/scale-study/sweeps/curves.md` and
`curves.png` (rule sweep_curves, `python -m lenex.scale_study.sweep_run curves`) show, per sweep,
each point's final validation loss against its budget, one line per seed, and say which points
have no curve recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..files import atomic_write_text, read_json, save_figure
from ..training.curve import curve_of, read_records

NO_CURVE = "no curve recorded"


def point_curve(record: dict, metrics) -> dict:
    """The training curve of a point's run from its metrics.jsonl: tokens per step and the final
    validation loss (its checkpoint's) from the point's record, which must be the same run's."""
    steps, seen, where = record.get("steps"), record.get("tokens_seen"), record.get("id", "the point")
    if not isinstance(steps, int) or not isinstance(seen, int) or steps <= 0 or seen % steps:
        raise ValueError(f"{where}: its record gives no whole tokens per step (steps {steps!r}, tokens_seen {seen!r})")
    records = read_records(metrics)
    if records[-1]["step"] != steps:
        raise ValueError(f"{metrics} ends at step {records[-1]['step']}, but point {where} trained {steps} steps: "
                         "not its run's metrics")
    return curve_of(records, seen // steps, "the point's record (tokens_seen / steps)",
                    {"step": steps, "valid_loss": record.get("valid_loss")})


def write_point(path: Path, record: dict) -> None:
    """A point record as sweep_run writes it (indented, keys sorted), atomically."""
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")


def attach_curve(out: Path, sweep: str, ident: str, metrics) -> dict:
    """Add the curve of `metrics` to the committed point record <out>/<sweep>/points/<ident>.json
    (run at a revision before points recorded their curves); a record with one already is refused."""
    path = Path(out) / sweep / "points" / f"{ident}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such point record (sweep {sweep!r}, point {ident!r})")
    record = read_json(path)
    if "training_curve" in record:
        raise ValueError(f"{path} has a training curve already (recorded by its run); nothing attached")
    record["training_curve"] = point_curve(record, metrics)
    write_point(path, record)
    return record


def curve_rows(records: list[dict]) -> list[dict]:
    """Per point (by value, then seed): its id, value, seed, budget (train tokens) and, where it has a
    curve, its final validation loss, slope per doubling and whether it is still falling."""
    rows = []
    for r in records:
        summary = (r.get("training_curve") or {}).get("summary")
        rows.append({"id": r["id"], "value": r.get("value"), "seed": r.get("seed"), "budget": r["train_tokens"],
                     "final_valid_loss": summary["final_valid_loss"] if summary else None,
                     "slope": summary["valid_slope_per_doubling"] if summary else None,
                     "still_falling": summary["still_falling"] if summary else None,
                     "train_slope": summary.get("train_slope_last_doubling") if summary else None,
                     "curve": summary is not None})
    return sorted(rows, key=lambda row: (str(row["value"]) if not isinstance(row["value"], (int, float)) else "",
                                         row["value"] if isinstance(row["value"], (int, float)) else 0,
                                         row["seed"] or 0, row["id"]))


def _slope(row: dict) -> str:
    if row["slope"] is None:
        return "—"
    return f"{row['slope']:+.3f}" + (" (still falling)" if row["still_falling"] else "")


def page(sweeps: dict[str, dict], by_sweep: dict[str, list[dict]], png: str) -> str:
    """curves.md: per sweep (config order) a table of its recorded points' final validation losses."""
    lines = ["# Training curves of the emergence sweeps' points", "",
             "Each point's final validation loss at L_tr (its checkpoint's, the last point of its training curve: "
             "lenex.training.curve, docs/curves.md) against its budget (training tokens), and the slope of validation "
             "loss per doubling of tokens over its curve's last interval (nats; negative: still falling; — with one "
             "validation, as the points validate at their end), and the mean train loss over the last doubling of "
             "tokens minus that over the doubling before (the learning rate's decay is part of it). Points "
             f"recorded before points kept their curves say \"{NO_CURVE}\" (`python -m lenex.scale_study.sweep_run "
             "attach-curve <sweep> <point> <metrics.jsonl>` adds one from the run's metrics). Generated by "
             "`python -m lenex.scale_study.sweep_run curves`.", "", f"![final validation loss against budget]({png})", ""]
    for name, spec in sweeps.items():
        rows = curve_rows(by_sweep.get(name, []))
        variable = spec["variable"]["name"]
        with_curve = sum(row["curve"] for row in rows)
        lines += [f"## {name}", "", f"{len(rows)} points recorded, {with_curve} with a training curve.", ""]
        if not rows:
            continue
        lines += [f"| point | {variable} | seed | budget (tokens) | final val loss | val slope / doubling | "
                  "train Δ / last doubling |", "|---|---|---|---|---|---|---|"]
        for row in rows:
            loss = NO_CURVE if not row["curve"] else ("—" if row["final_valid_loss"] is None
                                                      else f"{row['final_valid_loss']:.3f}")
            lines.append(f"| {row['id']} | {row['value']} | {row['seed']} | {row['budget']:,} | {loss} | {_slope(row)} | "
                         f"{'—' if row['train_slope'] is None else format(row['train_slope'], '+.3f')} |")
        lines.append("")
    return "\n".join(lines)


def plot(sweeps: dict[str, dict], by_sweep: dict[str, list[dict]], png) -> None:
    """One panel per sweep: final validation loss against budget (log x), one line per seed, for the
    points with a curve; a panel without any says NO_CURVE."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(sweeps) or ["(no sweep)"]
    columns = min(2, len(names))
    rows = -(-len(names) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.6 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        found = [row for row in curve_rows(by_sweep.get(name, [])) if row["curve"] and row["final_valid_loss"] is not None]
        ax.set_title(name, fontsize=9)
        if not found:
            ax.text(0.5, 0.5, f"{NO_CURVE} for any point", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        for seed in sorted({row["seed"] for row in found}, key=lambda s: s or 0):
            mine = sorted((row["budget"], row["final_valid_loss"]) for row in found if row["seed"] == seed)
            ax.plot([b for b, _ in mine], [v for _, v in mine], marker="o", markersize=4, linewidth=1, label=f"seed {seed}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("budget (training tokens)")
        ax.set_ylabel("final validation loss (nats)")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.suptitle("Emergence sweeps: final validation loss against budget, per seed", fontsize=10)
    fig.tight_layout()
    save_figure(fig, png, dpi=100)
    plt.close(fig)


def write(sweeps: dict[str, dict], out: Path) -> None:
    """curves.md and curves.png under `out` (results/scale-study/sweeps) from the recorded points."""
    out = Path(out)
    by_sweep = {name: [read_json(p) for p in sorted((out / name / "points").glob("*.json"))] for name in sweeps}
    plot(sweeps, by_sweep, out / "curves.png")
    atomic_write_text(out / "curves.md", page(sweeps, by_sweep, "curves.png"))
