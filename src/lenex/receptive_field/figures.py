"""The receptive-field paper's figures, as PNG and PDF.

    python -m lenex.receptive_field.figures erf --erf E1.json E2.json --title T --out-png F.png --out-pdf F.pdf
    python -m lenex.receptive_field.figures figure8 --out-png F.png --out-pdf F.pdf   # also figure9, figure10

`erf` (Figures 4-7, 11-13): the cumulative normalized gradient c_m of each model against the
token position m when predicting the last token, with the most recent L_tr tokens and the 0.99
line marked; the legend gives each model's ERF (and TRF = w·R for windowed attention).
Figures 8-10 are exact, from Eq. (6): the Sandwich bias (p_m·p_n − d̄/2)/h for h = 8, d̄ = 128
(Figure 8: the matrix; Figure 9: its last row, m = 8192, with least-squares log fits; Figure 10:
the last row for several d̄).
"""

from __future__ import annotations

import argparse
import json
import textwrap

import numpy as np
import torch

from ..cli import run_cli
from ..files import atomic_write_text, save_figure
from ..records.provenance import check_result_paths
from ..tables.raw_results import read_recorded
from ..positions.sandwich import sandwich_profile
from ..positions.smoothed_sandwich import fit_log_curve
from .targets import EXACT_FIGURE_VALUES

#: Figure 9's printed fit: y = -0.825 log(1 + |m - n|) - 0.8.
PAPER_FIT = (-0.825, -0.8)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, png, pdf) -> None:
    save_figure(fig, png, dpi=150)
    save_figure(fig, pdf)


def sandwich_row(length: int = 8192, h: float = 8.0, dbar: int = 128) -> np.ndarray:
    """Bias of the last query (m = length) on keys n = 1..length: (p_m·p_n − d̄/2)/h, Eq. (6)."""
    distance = torch.arange(length - 1, -1, -1)
    return (sandwich_profile(distance, dbar) / h).numpy()


def sandwich_matrix(length: int = 8192, h: float = 8.0, dbar: int = 128, stride: int = 16) -> np.ndarray:
    """Eq. (6) on a grid of every `stride`-th position; NaN above the diagonal (masked keys)."""
    positions = torch.arange(0, length, stride)
    distance = positions[:, None] - positions[None, :]
    values = (sandwich_profile(distance.abs(), dbar) / h).numpy()
    values[distance.numpy() < 0] = np.nan
    return values


def log_fits(row: np.ndarray, recent: int = 50) -> dict:
    """Least-squares a·log(1 + |m − n|) + b over every distance, and over the `recent` nearest
    (the paper's footnote 7)."""
    distance = np.arange(len(row) - 1, -1, -1)
    return {"all": fit_log_curve(distance, row), "recent": fit_log_curve(distance[-recent:], row[-recent:])}


def figure_erf(results: list[dict], title: str):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    train_lengths = set()
    for r in results:
        c = np.asarray(r["c"])
        positions = np.arange(1, len(c) + 1)
        trf = f", TRF {r['trf']}" if r.get("trf") else ""
        ax.plot(positions, c, label=f"{r['variant']} (L_tr {r['train_length']}): ERF {r['erf']}{trf}")
        train_lengths.add((len(c), r["train_length"]))
    for length, train_length in sorted(train_lengths):
        ax.axvline(length - train_length + 1, color="grey", ls="--", lw=0.8)
        ax.text(length - train_length + 1, 0.02, f" last L_tr = {train_length}", color="grey", fontsize=7)
    ax.axhline(0.99, color="black", ls=":", lw=0.8)
    length = max(len(r["c"]) for r in results)
    ax.set(xlabel=f"token position m (predicting the {length + 1}-th token)", ylabel="c_m",
           ylim=(0, 1.02), xlim=(1, length))
    ax.set_title(textwrap.fill(title, 70), fontsize=10)  # the figure titles are the paper's captions: long
    ax.legend(fontsize=7, loc="lower left")  # c_m falls towards the right: the lower left stays empty
    fig.tight_layout()
    return fig


def figure8(length: int = 8192, stride: int = 16):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    image = ax.imshow(sandwich_matrix(length, stride=stride), cmap="viridis",
                      extent=(0, length, length, 0), interpolation="nearest")
    fig.colorbar(image, ax=ax, label="(p_m·p_n − d̄/2) / h")
    ax.set(xlabel="key position n", ylabel="query position m", title="Sandwich bias, Eq. (6): h = 8, d̄ = 128")
    fig.tight_layout()
    return fig


def figure9(length: int = 8192):
    plt = _pyplot()
    row = sandwich_row(length)
    fits = log_fits(row)
    n = np.arange(1, length + 1)
    x = np.log1p(np.abs(length - n))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(n, row, label="Sandwich, last row (m = 8192)", lw=1)
    for name, (a, b), style in (("fit over all distances", fits["all"], "--"),
                                ("fit over the 50 nearest (footnote 7)", fits["recent"], ":"),
                                ("paper's printed fit", PAPER_FIT, "-.")):
        ax.plot(n, a * x + b, style, label=f"{name}: {a:.3f}·log(1+|m−n|) {b:+.3f}")
    ax.set(xlabel="key position n", ylabel="bias", title="Last row of Figure 8 and its log fits (h = 8, d̄ = 128)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure10(length: int = 8192, dbars=(32, 64, 128, 256, 512)):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    distance = np.arange(length)
    for dbar in dbars:
        ax.plot(distance + 1, sandwich_row(length, dbar=dbar)[::-1], label=f"d̄ = {dbar}")
    ax.set(xscale="log", xlabel="distance m − n + 1", ylabel="bias (h = 8)",
           title="Sandwich's windowing effect for several d̄")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def recent_share(record: dict) -> float:
    """The share of the cumulative normalized gradient on the most recent L_tr tokens: c_m at the
    first of them (c is cumulative from the end, c[0] = 1)."""
    c, train_length = record["c"], int(record["train_length"])
    if not 1 <= train_length <= len(c):
        raise ValueError(f"{record.get('variant')}: L_tr {train_length} outside its c_m curve of {len(c)} positions")
    return float(c[len(c) - train_length])


def erf_figure_cells(records: list[dict], figure: str) -> dict:
    """An ERF figure's numbers for the claims: one row per model as the tables list ERFs
    (lenex.receptive_field.table.erf_rows), with each row's recent_share (the mean over its seeds)."""
    from .table import erf_rows  # the tables' rows, so a figure's ERF reads as a table's does

    rows = erf_rows(records)
    for row in rows:
        shares = [recent_share(r) for r in records if (r["corpus"], r["variant"]) == (row["corpus"], row["variant"])]
        row["recent_share"] = float(np.mean(shares))
    return {"figure": figure, "paper": "receptive-field", "extra": {"erf": rows}}


def exact_figure_cells(figure: str, length: int = 8192, train_length: int = 512,
                       dbars=(32, 64, 128, 256, 512)) -> dict:
    """Figures 8-10's numbers, exact from Eq. (6) (h = 8): Figure 8, the last row's bias at
    distance 0, at the paper's L_tr and at the farthest key; Figure 9, the least-squares log fit
    over every distance; Figure 10, the drop of the bias over the L_tr nearest keys for each d̄
    (the windowing effect)."""
    row = sandwich_row(length)
    values = {}
    if figure == "8":
        values = {"bias_at_0": float(row[-1]), "bias_at_ltr": float(row[-1 - train_length]), "bias_at_far": float(row[0])}
    elif figure == "9":
        a, b = log_fits(row)["all"]
        values = {"fit_slope": float(a), "fit_intercept": float(b)}
    elif figure == "10":
        for dbar in dbars:
            other = sandwich_row(length, dbar=dbar)
            values[f"window_drop_dbar{dbar}"] = float(other[-1] - other[-1 - train_length])
    if tuple(values) != EXACT_FIGURE_VALUES.get(figure, ()):
        raise ValueError(f"figure {figure}: computed {sorted(values)}, declared {EXACT_FIGURE_VALUES.get(figure)}")
    return {"figure": figure, "paper": "receptive-field", "exact": True, "values": values}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("figure", choices=["erf", "figure8", "figure9", "figure10"])
    parser.add_argument("--erf", nargs="*", default=[], help="ERF files (erf figures)")
    parser.add_argument("--title", default="")
    parser.add_argument("--out-png", required=True)
    parser.add_argument("--out-pdf", required=True)
    parser.add_argument("--expect", default="{}", help="JSON: what the ERF files record (lenex.records.provenance.check_result_paths)")
    parser.add_argument("--out-cells", default=None, help="the figure's numbers as JSON, for the claims")
    parser.add_argument("--number", default=None, help="the figure's number (its cells file's key)")
    args = parser.parse_args(argv)
    if args.figure == "erf":
        if not args.erf:
            raise ValueError("an ERF figure needs at least one --erf file")
        records = [read_recorded(p) for p in args.erf]
        for path, record in zip(args.erf, records):
            check_result_paths([record], path, args.expect)  # another model's ERF is an error, as in the tables
        fig = figure_erf(records, args.title)
        cells = erf_figure_cells(records, args.number) if args.out_cells else None
    else:
        fig = {"figure8": figure8, "figure9": figure9, "figure10": figure10}[args.figure]()
        cells = exact_figure_cells(args.figure.removeprefix("figure")) if args.out_cells else None
    save(fig, args.out_png, args.out_pdf)
    if cells is not None:
        if cells["figure"] is None:
            raise ValueError("an ERF figure's cells need --number (the figure's number)")
        atomic_write_text(args.out_cells, json.dumps(cells, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    run_cli(main)
