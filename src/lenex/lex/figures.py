"""The LEX paper's figures (Sun et al. 2023), as PNG and PDF.

    python -m lenex.lex.figures figure1 --spec config/experiments/lex.yaml --results R.json ... \\
        --preset tiny --out-png figure1.png --out-pdf figure1.pdf
    python -m lenex.lex.figures figure2 --head-dim 64 --max-distance 8192 --out-png ... --out-pdf ...

Figure 1: perplexity against evaluation length for the four variants of Table 2 (one section,
PG22), ours beside the paper's (log y), each row evaluated with its Table 2 mask (LEX: BCA
beyond L_tr). Figure 2: the analytic expectation g_zeta[n] of Eq. 10 for RoPE (zeta = 1) and
xPos (zeta-hat of Eq. 11, with positions divided by B as xPos computes them, Eq. 12); no
training involved.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from ..cli import run_cli
from ..files import atomic_write_text, save_figure
from .resolution import attention_resolution, expected_rotary_score, xpos_zeta_hat
from .targets import FIGURE2_VALUES
from ..tables.paper_results import load_paper_results
from ..tables.render import load_experiment, load_results, load_table_spec
from ..tables.table_data import build_table


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, png: str | Path, pdf: str | Path) -> None:
    save_figure(fig, png, dpi=150)
    save_figure(fig, pdf)


def perplexity_curves(spec: dict, results: list[dict], dataset: str, preset: str) -> tuple[str, dict]:
    """(section label, {row label: {"ours": [(length, ppl)], "paper": [(length, ppl)]}}) for one
    section of a table spec, through the table builder, so each row reads the cells its table shows."""
    if not results:
        raise ValueError("no evaluation results given: nothing to plot")
    table = build_table(spec, results, load_paper_results(), {"preset": preset})
    sections = [s for s in table.sections if s.dataset == dataset]
    if not sections:
        raise ValueError(f"table {spec['table']} has no section {dataset!r}; "
                         f"known: {', '.join(s.dataset for s in table.sections)}")
    curves = {}
    for row in sections[0].rows:
        curves[row.label] = {
            "ours": [(c.our_length, cell.ours) for c, cell in zip(table.columns, row.cells)
                     if cell.ours is not None],
            "paper": [(c.paper_length, cell.paper) for c, cell in zip(table.columns, row.cells)
                      if cell.paper is not None],
        }
    if not any(curve["ours"] for curve in curves.values()):
        raise ValueError(f"no result of ours for any row of section {dataset!r}: nothing to plot")
    return sections[0].label, curves


def figure1(spec: dict, results: list[dict], dataset: str, preset: str, png, pdf) -> None:
    section, curves = perplexity_curves(spec, results, dataset, preset)
    ours_train = results[0]["train_length"]
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, who, train_length in ((axes[0], "ours", ours_train), (axes[1], "paper", spec["paper_train_length"])):
        for label, curve in curves.items():
            if curve[who]:
                lengths, ppl = zip(*curve[who])
                ax.plot(lengths, ppl, marker="o", label=label)
        ax.axvline(train_length, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("evaluation length (tokens)")
        ax.set_ylabel("perplexity")
        where = f"preset `{preset}`" if who == "ours" else "paper"
        ax.set_title(f"{where}, L_tr = {train_length} (dotted)")
        ax.legend(fontsize=8)
    fig.suptitle(f"LEX Figure 1: perplexity by length on {section} (LEX with BCA beyond L_tr)")
    fig.tight_layout()
    save(fig, png, pdf)
    plt.close(fig)


def figure2_curves(head_dim: int, max_distance: int, gamma: float, scale_base: int) -> dict:
    """g_zeta[n], n = 0 .. max_distance, for RoPE and xPos, and R(g) of each (Eq. 4)."""
    n = np.arange(max_distance + 1)
    zeta_hat = xpos_zeta_hat(head_dim, gamma)
    curves = {
        "RoPE (zeta = 1)": expected_rotary_score(n, head_dim, 1.0),
        f"xPos (zeta-hat^(n/B), B = {scale_base}, as Eq. 12 computes it)": expected_rotary_score(
            n, head_dim, zeta_hat ** (1.0 / scale_base)),
        "zeta-hat^n (Eq. 10 without B)": expected_rotary_score(n, head_dim, zeta_hat),
    }
    return {label: (n, g, attention_resolution(g)) for label, g in curves.items()}


def far_variation(g) -> float:
    """The total variation of a curve g[0..N] over its far half (n >= N/2), in units of |g[0]|:
    how much the expected score still swings at long distances (0 for a flat tail)."""
    g = np.asarray(g, dtype=np.float64)
    if g.ndim != 1 or g.size < 3 or g[0] == 0:
        raise ValueError(f"far variation needs a 1-D curve of at least 3 points with g[0] != 0, got shape {g.shape}")
    return float(np.abs(np.diff(g[g.size // 2:])).sum() / abs(g[0]))


#: Significant digits an exact Figure 2 number is written with. numpy's vectorised cos differs in
#: its last bits between CPUs (the instruction set it dispatches to), and a sum over 8,192 distances
#: carries that to about 1e-15 relative: 12 digits are the same on every machine, and far more than
#: any claim reads.
EXACT_DIGITS = 12


def exact_digits(x: float) -> float:
    """`x` to EXACT_DIGITS significant digits."""
    return float(f"{x:.{EXACT_DIGITS}g}")


def figure2_cells(head_dim: int, max_distance: int, gamma: float, scale_base: int) -> dict:
    """What Figure 2 shows, as exact numbers for the claims (lenex.lex.targets.FIGURE2_VALUES): each
    curve's far variation and attention resolution; xPos as Eq. 12 computes it (zeta-hat^(n/B))
    and as Section 3.2's text draws it (zeta-hat^n)."""
    curves = list(figure2_curves(head_dim, max_distance, gamma, scale_base).values())
    values = {}
    for name, (_, g, resolution) in zip(("rope", "xpos", "xpos_text"), curves):
        values[f"{name}_far_variation"], values[f"{name}_resolution"] = far_variation(g), resolution
    return {"figure": "2", "paper": "lex", "exact": True,
            "values": {k: exact_digits(values[k]) for k in FIGURE2_VALUES},
            "head_dim": head_dim, "max_distance": max_distance, "gamma": gamma, "scale_base": scale_base}


def figure2(head_dim: int, max_distance: int, gamma: float, scale_base: int, png, pdf) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    styles = ({"linewidth": 0.6}, {"linewidth": 1.5}, {"linewidth": 1.0, "linestyle": "--"})
    for (label, (n, g, resolution)), style in zip(figure2_curves(head_dim, max_distance, gamma, scale_base).items(),
                                                  styles):
        ax.plot(n, g, label=f"{label}: R(g) = {resolution:.3f}", **style)
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.set_xlabel("relative distance n")
    ax.set_ylabel("g_zeta[n] (expected q.k, Eq. 10)")
    ax.set_title(f"LEX Figure 2: d = {head_dim}, gamma = {gamma}, n = 0..{max_distance}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, png, pdf)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="figure", required=True)
    one = sub.add_parser("figure1", help="perplexity against evaluation length")
    one.add_argument("--spec", required=True, help="the LEX experiment YAML")
    one.add_argument("--table-key", default="table2")
    one.add_argument("--dataset", default="pg22", help="the table section to plot")
    one.add_argument("--results", nargs="+", required=True, help="evaluation JSON files")
    one.add_argument("--preset", required=True)
    one.add_argument("--extra-schemes", default="{}", help="JSON: config `extra_schemes` drawn as curves")
    one.add_argument("--expect", default="{}", help="JSON: what the results record (lenex.records.provenance.check_result_paths)")
    two = sub.add_parser("figure2", help="analytic g_zeta[n] (Eq. 10)")
    two.add_argument("--head-dim", type=int, default=64, help="d: the paper's head dimension, 1024 / 16")
    two.add_argument("--max-distance", type=int, default=8192, help="the paper's longest length")
    two.add_argument("--gamma", type=float, default=0.4)
    two.add_argument("--scale-base", type=int, default=512)
    two.add_argument("--out-cells", default=None, help="its exact numbers as JSON, for the claims")
    for p in (one, two):
        p.add_argument("--out-png", required=True)
        p.add_argument("--out-pdf", required=True)
    args = parser.parse_args(argv)
    if args.figure == "figure1":
        extra = json.loads(args.extra_schemes)
        spec = load_table_spec(args.spec, args.table_key, extra)
        # A result of another model or cell than its path names is an error, as in the tables.
        results = load_results(args.results, load_experiment(args.spec, extra), expect=args.expect)
        figure1(spec, results, args.dataset, args.preset, args.out_png, args.out_pdf)
    else:
        if args.head_dim < 2 or args.head_dim % 2 or args.max_distance < 1 or not math.isfinite(args.gamma):
            raise ValueError("figure2 needs an even --head-dim >= 2 and --max-distance >= 1")
        figure2(args.head_dim, args.max_distance, args.gamma, args.scale_base, args.out_png, args.out_pdf)
        if args.out_cells:
            cells = figure2_cells(args.head_dim, args.max_distance, args.gamma, args.scale_base)
            atomic_write_text(args.out_cells, json.dumps(cells, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    run_cli(main)
