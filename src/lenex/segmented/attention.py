"""Figure 3's statistic: the median attention weight of queries past L_t (Section 6).

    python -m lenex.segmented.attention --checkpoint M.pt --data DIR --length L --train-length L_t --out A.json

For every layer, head and query i >= L_t of each scored test piece, the median over the
query's keys j <= i of its attention weight a_ij. The paper plots the distribution of these
medians before and after chunk training and compares them with the mean, which for a query
over i + 1 keys is 1 / (i + 1); we report each median times (i + 1) (1 = as much as the
uniform weight, below 1 = a few keys take most of the weight), so queries at different
positions share one axis. The weights are the model's own, read during its forward pass
(`LanguageModel.inspect`, or transformers' eager attention for Hugging Face models).
"""

from __future__ import annotations

import argparse
import json
import logging

import numpy as np
import torch

from ..records.checkpoint import provenance
from ..cli import add_run_options, run_cli, start_run
from ..data.store import load_split
from ..device import pick_device
from ..files import atomic_write_result
from ..records.provenance import add_expect_argument, load_checked
from .evaluate import ready_for, test_pieces

log = logging.getLogger("lenex.segmented.attention")


def median_over_keys(weights: torch.Tensor, start: int) -> torch.Tensor:
    """For queries i >= start: median_j<=i a_ij * (i + 1), flattened over batch, heads, queries
    (torch's median: the lower middle value when a query has an even number of keys)."""
    length = weights.shape[-1]
    rows = weights[..., start:, :]
    query = torch.arange(start, length, device=weights.device)
    visible = torch.arange(length, device=weights.device)[None, :] <= query[:, None]
    medians = rows.masked_fill(~visible, float("nan")).nanmedian(dim=-1).values
    return (medians * (query + 1).to(medians.dtype)).flatten()


@torch.no_grad()
def median_attention(model, pieces: np.ndarray, train_length: int) -> np.ndarray:
    """Every layer's medians (see module doc) over the given pieces, piece by piece, from the
    attention probabilities of the model's own forward (`inspect`: own and Hugging Face models)."""
    out, device = [], next(model.parameters()).device

    def collect(view):
        out.append(median_over_keys(view.probabilities(), train_length).cpu())

    for piece in pieces:
        model.inspect(torch.from_numpy(piece.astype(np.int64))[None].to(device), collect)
    return torch.cat(out).numpy()


def run(checkpoint, data_dir, length: int, train_length: int, out, max_pieces: int = 4, extra=None,
        device: str = "auto", expect=None) -> dict:
    model, payload = load_checked(checkpoint, data_dir, expect, out)
    recorded = provenance(checkpoint, model, payload)  # the model as trained, before any APE extension
    model, _ = ready_for(model, length)
    model.to(pick_device(device))
    pieces = test_pieces(load_split(data_dir, "test"), length, max_pieces * length)
    medians = median_attention(model, pieces, train_length)
    result = {"length": length, "train_length": train_length, "pieces": len(pieces),
              "medians_times_keys": [round(float(v), 6) for v in medians],
              "mean": float(medians.mean()), "median": float(np.median(medians)), **recorded,
              **(extra or {})}
    atomic_write_result(out, result, indent=None)
    log.info("%d medians: mean %.3f, median %.3f", len(medians), result["mean"], result["median"])
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--length", type=int, required=True, help="test piece length (L_e)")
    parser.add_argument("--train-length", type=int, required=True, help="L_t: queries from here on are counted")
    parser.add_argument("--max-pieces", type=int, default=4)
    add_run_options(parser)
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    start_run(args)
    run(args.checkpoint, args.data, args.length, args.train_length, args.out, args.max_pieces, json.loads(args.extra),
        args.device, args.expect)


if __name__ == "__main__":
    run_cli(main)
