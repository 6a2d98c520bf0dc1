"""Perplexity at one evaluation length with the LEX protocol (LEX paper section 4.2):
`python -m lenex.scoring.evaluate --checkpoint M.pt --data DIR --length L --span S --out R.json`.

The same test text is divided into pieces of the target length, so every length scores
the same tokens: each test document contributes its first floor(len/S)*S tokens, S (the
span, the longest length of the table) being a multiple of every evaluated length. Each
piece is fed as [EOT, t_0 .. t_{L-2}] and predicts t_0 .. t_{L-1}, so every token of the
span is scored exactly once at every length, the first one of a piece from the
document-separator token alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import time

import numpy as np
import torch
from tqdm import tqdm

from ..records.checkpoint import provenance
from ..cli import add_run_options, add_scoring_inputs, run_cli, start_run
from ..data.store import load_split
from ..device import autocast, pick_device
from ..files import atomic_write_result
from ..masks import build_mask, default_mask_options
from ..records.provenance import add_expect_argument, load_checked

log = logging.getLogger("lenex.scoring.evaluate")


def scored_span(documents, span: int, max_tokens: int) -> tuple[np.ndarray, int]:
    """Concatenate whole multiples of `span` tokens from each document, up to max_tokens
    (rounded down to a multiple of span). Returns (tokens, documents skipped as too short)."""
    if span < 2:
        raise ValueError(f"the scored span must be at least 2 tokens, got {span}")
    budget = (max_tokens // span) * span
    if budget == 0:
        raise ValueError(f"max_tokens {max_tokens} is smaller than one span of {span} tokens")
    parts, total, skipped = [], 0, 0
    for doc in documents:
        usable = (len(doc) // span) * span
        if usable == 0:
            skipped += 1
            continue
        take = min(usable, budget - total)
        parts.append(np.asarray(doc[:take], dtype=np.int64))
        total += take
        if total >= budget:
            break
    if total == 0:
        raise ValueError(f"no test document has {span} tokens: the protocol cannot use this span")
    return np.concatenate(parts), skipped


def pieces(tokens: np.ndarray, length: int, span: int, bos: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets) of shape (n, length); inputs are targets shifted right behind `bos`."""
    if length < 1 or span % length:
        raise ValueError(f"evaluation length {length} does not divide the scored span {span}")
    targets = torch.from_numpy(tokens).view(-1, length)
    inputs = torch.cat([torch.full((targets.shape[0], 1), bos, dtype=torch.long), targets[:, :-1]], dim=1)
    return inputs, targets


def span_means(token_nll: np.ndarray, span: int) -> list[float]:
    """The mean NLL of each span's tokens (tokens in scoring order, a whole number of spans): the
    same units at every evaluated length, for comparisons paired over spans (lenex.claims)."""
    if token_nll.size % span:
        raise ValueError(f"{token_nll.size} scored tokens are not a whole number of spans of {span}")
    return [round(float(v), 6) for v in token_nll.reshape(-1, span).mean(axis=1)]


def position_profile(token_nll: np.ndarray, length: int, train_length: int) -> tuple[list[int], list[float]]:
    """(bin edges, mean NLL per bin) of the loss by position in a piece of `length`, in bins of
    1/16 of L_tr (16 bins per L_tr, the last one cut at `length`): a diagnostic of where in a
    piece the loss rises."""
    if train_length < 1 or length < 1:
        raise ValueError(f"position bins need positive lengths, got length {length}, L_tr {train_length}")
    by_position = token_nll.reshape(-1, length).mean(axis=0)
    edges, k = [0], 1
    while edges[-1] < length:
        edges.append(min(length, max(edges[-1] + 1, round(k * train_length / 16))))
        k += 1
    means = [round(float(by_position[a:b].mean()), 6) for a, b in zip(edges, edges[1:])]
    return edges, means


def evaluate_length(model, tokens: np.ndarray, length: int, span: int, mask, bos: int, batch_tokens: int,
                    train_length: int | None = None) -> dict:
    """The mean NLL over every scored token, the mean NLL of each span (`span_nll`) and, given the
    model's `train_length`, the loss by position (`position_bins`, `position_nll`)."""
    inputs, targets = pieces(tokens, length, span, bos)
    batch = max(1, batch_tokens // length)
    total_nll, device = 0.0, next(model.parameters()).device
    per_token = np.empty(targets.shape, dtype=np.float64)
    for start in tqdm(range(0, len(inputs), batch), desc=f"eval L={length}", unit="batch", mininterval=5):
        rows = slice(start, start + batch)
        with autocast(device):
            nll = model.token_nll(inputs[rows].to(device), targets[rows].to(device), mask=mask)
        total_nll += nll.double().sum().item()
        per_token[rows] = nll.double().cpu().numpy()
    mean = total_nll / targets.numel()
    result = {"nll": mean, "ppl": math.exp(mean), "tokens": int(targets.numel()), "pieces": int(len(inputs)),
              "span_nll": span_means(per_token.reshape(-1), span)}
    if train_length:
        result["position_bins"], result["position_nll"] = position_profile(per_token, length, train_length)
    return result


def run(checkpoint, data_dir, length: int, span: int, out, mask_name=None, mask_options=None,
        split="test", max_tokens=65536, batch_tokens=16384, position_options=None, extra=None, device="auto",
        expect=None) -> dict:
    overrides = {"position_options": position_options} if position_options else {}
    model, payload = load_checked(checkpoint, data_dir, expect, out, **overrides)  # the model it claims to be
    model.to(pick_device(device))
    return score(model, payload, checkpoint, data_dir, length, span, out, mask_name, mask_options, split,
                 max_tokens, batch_tokens, extra)


def score(model, payload: dict, checkpoint, data_dir, length: int, span: int, out, mask_name=None,
          mask_options=None, split="test", max_tokens=65536, batch_tokens=16384, extra=None) -> dict:
    """One cell with a loaded model (load_model): several cells of one model share one load."""
    cfg = model.config
    mask_name = mask_name or cfg.mask
    # A windowed model keeps its own window unless told otherwise; other masks take the papers' defaults.
    base = cfg.mask_options if mask_name == cfg.mask else default_mask_options(mask_name, cfg.train_length)
    mask = build_mask(mask_name, {**base, **(mask_options or {})})
    mask.check_length(length)
    data = load_split(data_dir, split)
    tokens, skipped = scored_span(data.documents(), span, max_tokens)
    started = time.time()
    result = evaluate_length(model, tokens, length, span, mask, data.meta["dataset"]["eot_token"], batch_tokens,
                             cfg.train_length)
    result.update(
        length=length, span=span, train_length=cfg.train_length, mask=mask_name, mask_options=mask.options(),
        protocol="lex", split=split, documents_skipped=skipped,
        scored_tokens_sha256=hashlib.sha256(tokens.astype(np.uint16).tobytes()).hexdigest(),
        **provenance(checkpoint, model, payload), seconds=time.time() - started,
        **(extra or {}),
    )
    atomic_write_result(out, result, cell=f"{checkpoint} on {data_dir} at L={length}, mask {mask_name}")
    log.info("L=%d mask=%s ppl=%.3f over %d tokens", length, mask_name, result["ppl"], result["tokens"])
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_scoring_inputs(parser, length_help="evaluation length in tokens")
    parser.add_argument("--span", type=int, required=True, help="scored span: the longest length of the table")
    parser.add_argument("--mask", default=None, help="attention mask at evaluation (default: the training mask)")
    parser.add_argument("--mask-options", default="{}", help="JSON, e.g. '{\"block\": 32}'")
    parser.add_argument("--position-options", default="{}", help="JSON overrides, e.g. '{\"interpolate_to\": 4096}'")
    add_run_options(parser)
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    start_run(args)
    run(args.checkpoint, args.data, args.length, args.span, args.out, args.mask, json.loads(args.mask_options),
        args.split, args.max_tokens, args.batch_tokens, json.loads(args.position_options), json.loads(args.extra), args.device,
        args.expect)


if __name__ == "__main__":
    run_cli(main)
