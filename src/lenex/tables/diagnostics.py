"""Diagnostics for reading length extrapolation at a small L_tr: ours, not the papers' metrics.

    python -m lenex.tables.diagnostics --paper lex --preset workstation --cells T2.cells.json .. \\
        --results R.json .. --curves C.json .. --out-md D.md --out-png D.png --out-pdf D.pdf \\
        --out-curves-png D.curves.png

Two readings the papers do not print (docs/dimensions.md says why a small L_tr needs them):

- The perplexity of the tokens beyond L_tr alone, from a whole-piece table's numbers
  (lenex.experiment.dimensions.beyond_train_ppl), for our cells and, computed the same way, for the paper's.
  A causal model scores the first L_tr tokens of a k L_tr piece as it scores an L_tr piece, so
  ppl(k L_tr) / ppl(L_tr) mixes those tokens in and carries the early-token discount; the
  beyond-L_tr ratio does not. The step is exact where every length scores the same tokens (LEX);
  elsewhere (a protocol that cuts other pieces at other lengths) it is an estimate, said so.
- The loss by position in every evaluation of a model beyond its own L_tr (its `position_nll`,
  lenex.scoring.evaluate.position_profile; mean over seeds), L_tr marked. Under a last-token protocol (the
  receptive-field paper) each evaluation already is the loss at one position: the figure plots
  it against that position, and there is no discount to undo.

Then its models' training curves (lenex.tables.training_curves: why a small model shows a paper's
phenomenon or not starts with whether it trained long enough), in `<paper>.curves.png`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from ..cli import run_cli
from ..experiment.dimensions import beyond_train_ppl
from ..files import atomic_write_text, read_json, save_figure
from ..records.checks import check_finite
from . import training_curves
from .render import load_results

PROTOCOLS = ("whole-piece", "last-token")


def _ratios(base: float | None, value: float | None, multiple: float) -> tuple[float | None, float | None]:
    """(ppl(k L_tr) / ppl(L_tr), beyond-L_tr ppl / ppl(L_tr)), None where a value is missing."""
    if base is None or value is None or base <= 0 or value <= 0:
        return None, None
    return value / base, beyond_train_ppl(base, value, multiple) / base


def beyond_rows(cells: dict) -> list[dict]:
    """Per row and multiple k > 1 of one perplexity table: the whole-piece and the beyond-L_tr
    ratios against the row's own cell at L_tr, for the paper's numbers and ours (empty for a table
    of another metric, or without a column at L_tr)."""
    if cells.get("metric") != "ppl":
        return []
    by_row = defaultdict(dict)
    for cell in cells["cells"]:
        by_row[(cell["section"], cell["row"])][float(cell["multiple"])] = cell
    rows = []
    for (section, label), columns in by_row.items():
        base = columns.get(1.0)
        if base is None:
            continue
        for multiple in sorted(k for k in columns if k > 1):
            cell = columns[multiple]
            paper_whole, paper_beyond = _ratios(base["paper"], cell["paper"], multiple)
            ours_whole, ours_beyond = _ratios(base["ours"], cell["ours"], multiple)
            rows.append({"table": cells["table"], "section": section, "row": label, "multiple": multiple,
                         "paper_whole": paper_whole, "paper_beyond": paper_beyond,
                         "ours_whole": ours_whole, "ours_beyond": ours_beyond})
    return rows


def model_label(record: dict) -> str:
    """What a record's model is called on the figure: its variant, or a segmented model and run."""
    if record.get("variant"):
        return str(record["variant"])
    return "/".join(str(record[k]) for k in ("model", "run") if record.get(k)) or Path(record["checkpoint"]).stem


def _mean_over_seeds(curves: list[list[float]]) -> list[float]:
    return [float(v) for v in np.mean(np.asarray(curves, dtype=np.float64), axis=0)]


def position_curves(records: list[dict]) -> dict[tuple[str, str, str], dict]:
    """{(corpus, model, mask): curve} of the longest evaluation beyond each model's L_tr that records
    its loss by position: x the bin midpoints in units of L_tr, y the mean NLL over seeds."""
    longest: dict[tuple, dict] = {}
    for r in records:
        if "position_nll" not in r or not r.get("train_length") or r["length"] <= r["train_length"]:
            continue
        key = (str(r.get("corpus", "-")), model_label(r), str(r.get("mask", "causal")))
        longest.setdefault(key, {}).setdefault(r["length"], []).append(r)
    curves = {}
    for key, by_length in longest.items():
        length = max(by_length)
        group = by_length[length]
        edges = group[0]["position_bins"]
        if any(r["position_bins"] != edges for r in group):
            raise ValueError(f"{key}: the seeds of one evaluation bin its positions differently")
        train_length = group[0]["train_length"]
        mids = [(a + b) / 2 / train_length for a, b in zip(edges, edges[1:])]
        curves[key] = {"x": mids, "nll": _mean_over_seeds([r["position_nll"] for r in group]),
                       "length": length, "train_length": train_length, "seeds": len(group),
                       "widths": [b - a for a, b in zip(edges, edges[1:])]}
    return curves


def last_token_curves(records: list[dict]) -> dict[tuple[str, str, str], dict]:
    """{(corpus, model, mask): curve} of last-token evaluations: x the scored token's position in
    units of L_tr (L_ex / L_tr), y its NLL, the mean over seeds."""
    points: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    train: dict[tuple, int] = {}
    for r in records:
        if r.get("protocol") != "last-token" or "nll" not in r:
            continue
        key = (str(r.get("corpus", "-")), model_label(r), str(r.get("mask", "causal")))
        points[key][int(r["length"])].append(float(r["nll"]))
        train[key] = int(r["train_length"])
    return {key: {"x": [n / train[key] for n in sorted(by_length)],
                  "nll": [float(np.mean(by_length[n])) for n in sorted(by_length)],
                  "train_length": train[key], "seeds": max(len(v) for v in by_length.values())}
            for key, by_length in points.items()}


def tail_ppl(curve: dict) -> tuple[float, float]:
    """(ppl of the positions before L_tr, ppl of those at and beyond it) of a whole-piece curve,
    each bin weighted by its width."""
    x, nll, widths = np.asarray(curve["x"]), np.asarray(curve["nll"]), np.asarray(curve["widths"])
    inside = x < 1
    if inside.all() or not inside.any():
        raise ValueError("a loss-by-position curve needs bins on both sides of L_tr")
    mean = lambda mask: float(np.sum(nll[mask] * widths[mask]) / np.sum(widths[mask]))  # noqa: E731
    return math.exp(mean(inside)), math.exp(mean(~inside))


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def render_markdown(paper: str, preset: str, protocol: str, rows: list[dict], curves: dict, png: str,
                    exact: bool) -> str:
    lines = [f"# Diagnostics of `{paper}` at `{preset}` (ours, not the paper's metrics)", ""]
    if protocol == "last-token":
        lines += ["This paper scores the last token of each segment with all of its context: every cell is "
                  "already the loss at one position, with no early-token discount to undo. The figure plots "
                  "that loss against the position (L_ex / L_tr), one line per model, mean over seeds.", ""]
    else:
        note = ("exact here: every length scores the same tokens" if exact else
                "an estimate here: this protocol cuts other pieces at other lengths")
        lines += ["Whole-piece ratio: ppl(k L_tr) / ppl(L_tr), what the tables compare. Beyond-L_tr ratio: the "
                  "perplexity of the tokens past L_tr alone over ppl(L_tr), from the same two numbers "
                  f"(lenex.experiment.dimensions.beyond_train_ppl; {note}). The paper's columns apply the same step to "
                  "the paper's own numbers.", ""]
        if rows:
            lines += ["| table | section | row | k | paper whole | paper beyond | ours whole | ours beyond |",
                      "|---|---|---|---|---|---|---|---|"]
            lines += [f"| {r['table']} | {r['section']} | {r['row']} | {r['multiple']:g} | {_fmt(r['paper_whole'])} | "
                      f"{_fmt(r['paper_beyond'])} | {_fmt(r['ours_whole'])} | {_fmt(r['ours_beyond'])} |"
                      for r in rows]
        else:
            lines.append("No perplexity table of this paper has a column at L_tr and one beyond it.")
        if curves:
            lines += ["", "Loss by position in the longest evaluation of each model beyond its own L_tr (mean over "
                      "seeds): perplexity of the positions before L_tr and at or beyond it.", "",
                      "| corpus | model | mask | length / L_tr | seeds | ppl before L_tr | ppl beyond L_tr | ratio |",
                      "|---|---|---|---|---|---|---|---|"]
            for (corpus, model, mask), curve in sorted(curves.items()):
                before, beyond = tail_ppl(curve)
                lines.append(f"| {corpus} | {model} | {mask} | {curve['length'] / curve['train_length']:g} | "
                             f"{curve['seeds']} | {before:.2f} | {beyond:.2f} | {beyond / before:.3f} |")
    lines += ["", f"![loss by position]({png})", ""]
    return "\n".join(lines)


def panels(tables: list[dict], curves: dict) -> list[tuple[str, list[tuple[tuple, str]]]]:
    """The figure's panels: one per table section whose rows have a curve (each row drawn with its
    mask at the table's longest column, under the table's row label), then one per corpus for the
    curves no table shows."""
    out, shown = [], set()
    for cells in (t for t in tables if t.get("metric") == "ppl"):  # a resolution table's rows: no loss
        longest: dict[tuple, dict] = {}
        for cell in cells["cells"]:
            row = (cell["section"], cell["row"])
            if row not in longest or float(cell["multiple"]) > float(longest[row]["multiple"]):
                longest[row] = cell
        sections: dict[str, list] = {}
        for (section, label), cell in longest.items():
            key = (str(cell.get("corpus")), str(cell.get("variant")), str(cell.get("mask")))
            if key in curves and key not in [k for k, _ in sections.get(section, [])]:
                sections.setdefault(section, []).append((key, label))
                shown.add(key)
        out += [(f"Table {cells['table']}, {section}", lines) for section, lines in sections.items()]
    rest = sorted(k for k in curves if k not in shown)
    for corpus in dict.fromkeys(k[0] for k in rest):
        out.append((f"{corpus}: evaluations no table shows",
                    [(k, k[1] if k[2] == "causal" else f"{k[1]} ({k[2]})") for k in rest if k[0] == corpus]))
    return out


def coarse(curve: dict, per_bin: int = 4) -> tuple[list[float], list[float]]:
    """A whole-piece curve in bins `per_bin` times wider (width-weighted means), for reading: bins
    of L_tr / 16 over 16 spans are noisy."""
    if "widths" not in curve:
        return curve["x"], curve["nll"]
    x, nll, w = (np.asarray(curve[k], dtype=np.float64) for k in ("x", "nll", "widths"))
    groups = [slice(i, i + per_bin) for i in range(0, len(x), per_bin)]
    return ([float(np.average(x[g], weights=w[g])) for g in groups],
            [float(np.average(nll[g], weights=w[g])) for g in groups])


def plot(curves: dict, tables: list[dict], paper: str, preset: str, protocol: str, png, pdf) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn = panels(tables, curves)
    columns = min(3, len(drawn))
    rows = -(-len(drawn) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4 * rows), squeeze=False)
    for ax, (title, lines) in zip(axes.flat, drawn):
        ax.set_prop_cycle(color=plt.cm.tab20.colors)  # a table may have 17 rows: 10 colours repeat
        for key, label in lines:
            ax.plot(*coarse(curves[key]), marker="o" if protocol == "last-token" else None,
                    markersize=3, linewidth=1, label=label)
        ax.axvline(1.0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlabel("position / L_tr" + (" (= L_ex / L_tr)" if protocol == "last-token" else ", bins of L_tr / 4"))
        ax.set_ylabel("NLL (nats), mean over seeds")
        ax.set_title(title, fontsize=9)
        if protocol == "last-token":
            ax.set_xscale("log", base=2)
        ax.legend(fontsize=6, ncol=2)
    for ax in list(axes.flat)[len(drawn):]:
        ax.set_visible(False)
    what = "last-token loss by position" if protocol == "last-token" else "loss by position beyond L_tr"
    fig.suptitle(f"{paper} at {preset}: {what} (ours, a diagnostic, not a paper metric)")
    fig.tight_layout()
    save_figure(fig, png, dpi=120)
    save_figure(fig, pdf)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paper", required=True)
    parser.add_argument("--preset", required=True)
    parser.add_argument("--protocol", required=True, choices=PROTOCOLS)
    parser.add_argument("--same-tokens", action="store_true",
                        help="every evaluation length scores the same tokens: the beyond-L_tr step is exact")
    parser.add_argument("--cells", nargs="*", default=[], help="the paper's table cells files")
    parser.add_argument("--results", nargs="*", default=[], help="its recorded evaluations")
    parser.add_argument("--expect", default="{}", help="JSON: what the results record (lenex.records.provenance)")
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-png", required=True)
    parser.add_argument("--out-pdf", required=True)
    parser.add_argument("--curves", nargs="*", default=[], help="its models' training curves (written by rule train), "
                        "each where recorded")
    parser.add_argument("--out-curves-png", required=True)
    args = parser.parse_args(argv)
    expect = json.loads(args.expect)
    records = load_results(args.results, expect=expect or None)
    tables = [read_json(path) for path in args.cells]
    for path, cells in zip(args.cells, tables):
        check_finite(cells, f"cells file {path}")
    tables = [cells for cells in tables if "cells" in cells and "table" in cells]
    rows = [row for cells in tables for row in beyond_rows(cells)]
    curves = last_token_curves(records) if args.protocol == "last-token" else position_curves(records)
    if not curves:
        raise ValueError(f"{args.paper}: no evaluation beyond its model's L_tr records a loss by position")
    plot(curves, tables, args.paper, args.preset, args.protocol, args.out_png, args.out_pdf)
    png = Path(args.out_png).name
    page = render_markdown(args.paper, args.preset, args.protocol, rows, curves, png, args.same_tokens)
    trained = training_curves.write(args.curves, args.paper, args.preset, args.out_curves_png)
    atomic_write_text(args.out_md, page + "\n" + "\n".join(trained))


if __name__ == "__main__":
    run_cli(main)
