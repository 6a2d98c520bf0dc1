"""How large and how long a corpus source is, before any split: documents, tokens, the
median document, and the share of documents (and of tokens) at least 2,048 and 4,096
tokens long, the evaluation lengths of a preset with L_tr = 256 at 8x and 16x.

    python -m lenex.data.survey --spec '{"source": "debian_sword"}' --resources resources

prints one Markdown table row per spec (``--spec`` repeatable) and, with ``--json``,
writes the numbers. Used to choose the workstation stand-ins (docs/data.md).
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text
from .corpus import read_corpus
from .tokenizer import get_tokenizer

LONG = (2048, 4096)
HEADER = ("| source | documents | tokens | median tokens | docs >= 2048 | docs >= 4096 "
          "| tokens in docs >= 2048 |\n|---|---|---|---|---|---|---|")


def length_summary(lengths: list[int], long: tuple[int, ...] = LONG) -> dict:
    """Document count, total and median tokens, and per threshold t the share of
    documents with at least t tokens and the tokens those documents hold."""
    if not lengths or any(n < 0 for n in lengths):
        raise ValueError(f"need a non-empty list of document lengths >= 0, got {lengths[:5]}")
    summary = {"documents": len(lengths), "tokens": int(sum(lengths)),
               "median": float(statistics.median(lengths))}
    for t in long:
        summary[f"share_docs_ge_{t}"] = sum(n >= t for n in lengths) / len(lengths)
        summary[f"tokens_in_docs_ge_{t}"] = int(sum(n for n in lengths if n >= t))
    return summary


def table_row(label: str, s: dict) -> str:
    return (f"| {label} | {s['documents']:,} | {s['tokens'] / 1e6:.2f}M | {s['median']:,.0f} "
            f"| {s['share_docs_ge_2048']:.0%} | {s['share_docs_ge_4096']:.0%} "
            f"| {s['tokens_in_docs_ge_2048'] / 1e6:.2f}M |")


def survey(spec: dict, resources: str, tokenizer: str = "gpt2") -> dict:
    tok = get_tokenizer(tokenizer)
    docs = read_corpus(spec, resources)
    lengths = [len(ids) for ids in tok.encode_batch([d.text for d in docs])]
    return {"spec": spec, "tokenizer": tok.name, "characters": sum(len(d.text) for d in docs),
            "groups": len({d.group for d in docs}), **length_summary(lengths)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", action="append", required=True, help="corpus spec as JSON (repeatable)")
    ap.add_argument("--resources", default="resources")
    ap.add_argument("--tokenizer", default="gpt2")
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args(argv)
    results = []
    print(HEADER)
    for text in args.spec:
        result = survey(json.loads(text), args.resources, args.tokenizer)
        results.append(result)
        print(table_row(result["spec"].get("source", "?") + _label(result["spec"]), result), flush=True)
    if args.json:
        atomic_write_text(Path(args.json), json.dumps(results, indent=2) + "\n")


def _label(spec: dict) -> str:
    extra = spec.get("packages") or spec.get("parts") or [p["source"] for p in spec.get("sources", [])]
    return f" ({', '.join(extra)})" if extra else ""


if __name__ == "__main__":
    run_cli(main)
