"""The scale study's plot and write-up, generated from its recorded points alone
(results/scale-study/points.jsonl): nothing here is typed by hand."""

from __future__ import annotations

import statistics
from pathlib import Path

from ..claims.predicates import threshold
from ..claims.scale import first_showing, ratio_at
from ..files import atomic_write_text, save_figure
from ..experiment.dimensions import beyond_train_ppl, early_token_discount
from ..records.scale_record import scores_of
from .points import missing_multiples, missing_protocols

PLOT, WRITEUP = "ratio.png", "README.md"


def longest_multiple(records: list[dict]) -> str:
    """The largest multiple every one of `records` was measured at (a multiple added to the config
    later may be missing from some)."""
    return str(max(set.intersection(*({int(k) for k in r["ratio"]} for r in records))))


def _plot(points: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    phenomena = list(dict.fromkeys(p["phenomenon"] for p in points))
    shapes = list(dict.fromkeys(p["shape"] for p in points))
    tokenizers = sorted({p["tokenizer"] for p in points})
    columns = min(4, len(phenomena))  # a grid of panels, four to a row, one per phenomenon
    rows = -(-len(phenomena) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4 * rows), squeeze=False)
    for ax in axes.flat[len(phenomena):]:
        ax.set_visible(False)
    for ax, phenomenon in zip(axes.flat, phenomena):
        for s, shape in enumerate(shapes):
            for t, tokenizer in enumerate(tokenizers):
                line = sorted((p for p in points if (p["phenomenon"], p["shape"], p["tokenizer"]) ==
                               (phenomenon, shape, tokenizer)), key=lambda p: p["tokens_seen"])
                if line:
                    k = longest_multiple(line)
                    ax.plot([p["tokens_seen"] for p in line], [p["ratio"][k] for p in line], marker="os^D"[t % 4],
                            color=f"C{s}", linestyle=["-", "--", ":", "-."][t % 4], label=f"{shape}, {tokenizer}")
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("training tokens")
        ax.set_ylabel(f"ppl(k L_tr) / ppl(L_tr), k = {max(max(p['multiples']) for p in points if p['phenomenon'] == phenomenon)}")
        ax.set_title(phenomenon)
        ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, out / PLOT, dpi=100)
    plt.close(fig)


def _distinct(points: list[dict], key: str) -> str:
    """Every value of `key` over the points and what was measured on them later (`added`)."""
    runs = [*points, *(a for p in points for a in p.get("added", []))]
    return ", ".join(sorted({str(r.get(key)) for r in runs if key in r})) or "none"


def _speed_rows(points: list[dict]) -> list[str]:
    """Training tokens/s per (shape, tokenizer): the head's width as a lever. Median and fastest:
    points run while the machine was shared are slower, and the fastest is the nearest to an idle
    core."""
    rows = []
    for shape in dict.fromkeys(p["shape"] for p in points):
        for tokenizer in dict.fromkeys(p["tokenizer"] for p in points):
            group = [p for p in points
                     if (p["shape"], p["tokenizer"]) == (shape, tokenizer) and p["train_tokens_per_s"]]
            if group:
                speeds = [p["train_tokens_per_s"] for p in group]
                params = ", ".join(f"{n:,}" for n in sorted({p["params"] for p in group}))
                rows.append(f"| {shape} | {tokenizer} | {group[0]['vocab_size']} | {params} | "
                            f"{statistics.median(speeds):,.0f} | {max(speeds):,.0f} | {len(group)} |")
    return rows


def first_showing_rows(points: list[dict], name: str = "explodes", multiple: int | None = None,
                       protocol: str = "lex") -> list[str]:
    """Per phenomenon, tokenizer and shape: the fewest training tokens at which the ratio at
    `multiple` (default: the phenomenon's largest) reaches the claims' `name` threshold, or the
    largest budget run and its ratio when none does; only the points scored with `protocol` at
    that multiple."""
    least, groups = threshold(name), {}
    for p in points:  # every scored point has a ratio at 1 x L_tr
        if ratio_at(p, multiple or 1, protocol) is not None:
            groups.setdefault((p["phenomenon"], p["tokenizer"], p["shape"]), []).append(p)
    rows = []
    for (phenomenon, tokenizer, shape), group in sorted(groups.items()):
        k = multiple or int(longest_multiple([scores_of(p, protocol) for p in group]))
        # The claims' own search, on one shape's points at a time.
        first, runs = first_showing(group, phenomenon, k, least, tokenizer, protocol=protocol)
        runs = sorted(runs, key=lambda p: p["tokens_seen"])
        if first:
            verdict = f"{first['tokens_seen']:,} ({k}x ratio {ratio_at(first, k, protocol):.3f})"
        else:
            verdict = f"not within {runs[-1]['tokens_seen']:,} ({k}x ratio {ratio_at(runs[-1], k, protocol):.3f})"
        ratios = ", ".join(f"{p['tokens_seen']:,}: {ratio_at(p, k, protocol):.3f}" for p in runs)
        rows.append(f"| {phenomenon} | {tokenizer} | {shape} | {verdict} | {ratios} |")
    return rows


# Position options that make a published scheme another one (ALiBi's shifted or equal slopes);
# the rest are a scheme's own published settings (Sandwich's d̄ = 128), compared like the others.
SCHEME_CHANGING_OPTIONS = {"shift", "same_h"}


def scheme_order_rows(points: list[dict]) -> list[str]:
    """Per tokenizer, shape and budget where two or more published schemes were trained (causal
    mask, no option changing the scheme: no shifted or equal slopes, no window), their ppl(L_tr) from the
    lowest: the order LEX's interpolation claims read at L_tr, as the study sees it."""
    groups: dict[tuple, dict[str, float]] = {}
    for p in points:
        config = p["model_config"]
        changed = set(config.get("position_options") or {}) & SCHEME_CHANGING_OPTIONS
        if config.get("mask") != "causal" or changed or config.get("mask_options"):
            continue
        key = (p["tokenizer"], p["shape"], p["tokens_seen"])
        groups.setdefault(key, {})[config["position"]] = p["ppl"][str(p["train_length"])]
    rows = []
    for (tokenizer, shape, tokens), ppl in sorted(groups.items()):
        if len(ppl) >= 2:
            order = " < ".join(f"{scheme} {value:.2f}" for scheme, value in sorted(ppl.items(), key=lambda kv: kv[1]))
            rows.append(f"| {tokenizer} | {shape} | {tokens:,} | {order} |")
    return rows


def writeup(points: list[dict], grid: list[dict]) -> str:
    """The Markdown write-up: status of the grid, how the points were made, and every number."""
    recorded = {p["key"]: p for p in points}
    missing = [g["key"] for g in grid if g["key"] not in recorded]
    short = [f"{g['key']} (no {', '.join([f'{k}x' for k in lacking] + [f'{p} scores' for p in protocols])})"
             for g in grid if g["key"] in recorded
             for lacking, protocols in [(missing_multiples(recorded[g["key"]], g["multiples"]),
                                         missing_protocols(recorded[g["key"]], g["multiples"], g["protocols"]))]
             if lacking or protocols]
    if not missing and not short:
        status = "complete: every grid point recorded, at every multiple"
    else:
        parts = [f"{len(points)} of {len(grid)} grid points recorded; not yet run: {', '.join(missing)}"
                 if missing else "every grid point recorded"]
        if short:  # a multiple or protocol added to the config later: measured when the study next runs them
            parts.append(f"{len(short)} recorded point(s) lack a multiple or protocol the config now asks for (measured on "
                         f"the kept model, or by training it again, when the study runs them): {', '.join(short)}")
        status = "PARTIAL: " + "; ".join(parts)
    wall = sum(p["point_wall_s"] for p in points)
    lines = [
        "# Scale study", "",
        "Generated by `python -m lenex.scale_study` from `points.jsonl` (config/scale-study.yaml names the grid);",
        "do not edit by hand. Each point trains one model (lenex.training.train) on the corpus's train split and scores",
        "the test split with the LEX protocol (lenex.scoring.evaluate: the same tokens at every length).", "",
        f"- Status: {status}",
        f"- Commands: {_distinct(points, 'command')}",
        f"- Revisions: {_distinct(points, 'git_rev')}; devices: {_distinct(points, 'device')}; "
        f"threads: {_distinct(points, 'threads')}",
        f"- Wall time of the recorded points (training + evaluation, as run): {wall:,.0f} s; points finished "
        f"between {min(p['finished_utc'] for p in points)} and {max(p['finished_utc'] for p in points)}", "",
        f"![ratio against training tokens]({PLOT})", "",
        f"## Smallest budget at which each shows (ratio at the largest multiple >= {threshold('explodes'):g}, "
        "the claims' `explodes`)", "",
        "| phenomenon | tokenizer | shape | first shows at (tokens seen) | ratio by tokens seen |",
        "|---|---|---|---|---|",
        *first_showing_rows(points), "",
        "## At 2 x L_tr, the first length beyond it (the multiple most claims read)", "",
        "| phenomenon | tokenizer | shape | first shows at (tokens seen) | ratio by tokens seen |",
        "|---|---|---|---|---|",
        *first_showing_rows(points, multiple=2), "",
        "## The receptive-field paper's last-token protocol", "",
        "Its tables score only the last token of each segment, every token before it in context",
        "(lenex.receptive_field.last_token), where the LEX protocol averages over every position of a piece;",
        "its claims ask the study at this protocol. The points scored with it, at their largest multiple",
        f"(`explodes`, ratio >= {threshold('explodes'):g}) and at 2 x L_tr:", "",
        "| phenomenon | tokenizer | shape | first shows at (tokens seen) | ratio by tokens seen |",
        "|---|---|---|---|---|",
        *first_showing_rows(points, protocol="last-token"), "",
        "| phenomenon | tokenizer | shape | first shows at 2 x L_tr (tokens seen) | ratio by tokens seen |",
        "|---|---|---|---|---|",
        *first_showing_rows(points, multiple=2, protocol="last-token"), "",
        "## Extrapolation read three ways (points with an L_tr / 2 score: the probes of docs/dimensions.md)", "",
        "D = ln ppl(L_tr/2) - ln ppl(L_tr) is the whole-piece protocol's start-up cost per L_tr; the whole-piece",
        "ratio ppl(k L_tr) / ppl(L_tr) carries a discount of about 1 - exp(-D (1 - 1/k)) from it. The perplexity",
        "of the tokens beyond L_tr alone (lenex.experiment.dimensions.beyond_train_ppl, from the whole-piece numbers) and",
        "the last-token ratio do not.", "",
        "| phenomenon | tokenizer | shape | L_tr | tokens seen | D | whole-piece ratio | beyond-L_tr ppl / ppl(L_tr) "
        "| last-token ratio |", "|---|---|---|---:|---:|---:|---|---|---|",
        *three_readings_rows(points), "",
        "## The schemes' order at L_tr (ppl(L_tr), lowest first)", "",
        "Every published scheme trained at the same shape and budget (causal mask). LEX's interpolation claims",
        "read this order at L_tr (xPos < RoPE < ALiBi < sinusoidal in the paper's Table 2); the receptive-field",
        "paper's Table 3 reads KERPLE and T5 below Sandwich, and Sandwich comparable to ALiBi, at L_tr.", "",
        "| tokenizer | shape | tokens seen | order |", "|---|---|---:|---|",
        *scheme_order_rows(points), "",
        "## Perplexity beyond L_tr", "",
        "| phenomenon | tokenizer | shape | params | tokens seen | steps | L_tr | ppl(L_tr) "
        "| ppl(k L_tr) / ppl(L_tr) | scored tokens |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for p in sorted(points, key=lambda p: (p["phenomenon"], p["tokenizer"], p["shape"], p["tokens_seen"])):
        ratios = ", ".join(f"{k}x {p['ratio'][str(k)]:.3f}" for k in p["multiples"] if k != 1)
        lines.append(f"| {p['phenomenon']} | {p['tokenizer']} | {p['shape']} | {p['params']:,} | "
                     f"{p['tokens_seen']:,} | "
                     f"{p['steps']} | {p['train_length']} | {p['ppl'][str(p['train_length'])]:.2f} | {ratios} | "
                     f"{p['scored_tokens']:,} |")
    lines += ["", "## Training speed (the output layer's width as a lever)", "",
              "| shape | tokenizer | vocabulary | params | tokens/s (median) | tokens/s (fastest) | points |",
              "|---|---|---:|---|---:|---:|---:|",
              *_speed_rows(points), ""]
    return "\n".join(lines)


def three_readings_rows(points: list[dict]) -> list[str]:
    """One row per point scored at L_tr / 2: D, and the ratio beyond L_tr by whole piece, by the
    tokens past L_tr and by last token, at each multiple."""
    rows = []
    for p in sorted(points, key=lambda p: (p["phenomenon"], p["tokenizer"], p["shape"], p["tokens_seen"])):
        length, ppl = p["train_length"], p["ppl"]
        if str(length // 2) not in ppl or length % 2:
            continue
        base = ppl[str(length)]
        beyond = {k: beyond_train_ppl(base, ppl[str(k * length)], k) / base for k in p["multiples"] if k != 1}
        last = (p.get("last_token") or {}).get("ratio", {})
        show = lambda d: ", ".join(f"{k}x {v:.3f}" for k, v in d.items()) or "—"  # noqa: E731
        rows.append(f"| {p['phenomenon']} | {p['tokenizer']} | {p['shape']} | {length} | {p['tokens_seen']:,} | "
                    f"{early_token_discount(ppl[str(length // 2)], base):.3f} | "
                    f"{show({k: v for k, v in p['ratio'].items() if k != '1'})} | {show(beyond)} | "
                    f"{show({k: v for k, v in last.items() if k != '1'})} |")
    return rows


def write_report(points: dict[str, dict], grid: list[dict], out: Path) -> None:
    """ratio.png and README.md under `out`, from the recorded points (nothing when none yet)."""
    values = list(points.values())
    if not values:
        return
    _plot(values, Path(out))
    atomic_write_text(Path(out) / WRITEUP, writeup(values, grid))
