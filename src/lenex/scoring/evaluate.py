"""Perplexity at one evaluation length with the LEX protocol (LEX paper section 4.2):
`python -m lenex.scoring.evaluate --checkpoint M.pt --data DIR --length L --span S --out R.json`.

The same test text is divided into pieces of the target length, so every length scores
the same tokens: spans of S tokens (S, the span, the longest length of the table, being a
multiple of every evaluated length) drawn across every test document that holds one, by the
fixed rule and seed of lenex.scoring.sample, so a table reads its split, not whichever
documents sort first. Each
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
from ..data.store import META_DIGEST, SPLIT_DIGEST, load_split
from ..device import autocast, pick_device
from ..files import atomic_write_result
from ..masks import build_mask, default_mask_options
from ..records.provenance import add_expect_argument, load_checked
from .sample import RULES, ScoredSample, first_documents, sample_spans

log = logging.getLogger("lenex.scoring.evaluate")


#: The scored sample's seed (lenex.scoring.sample): one fixed value, so every model scored on a split
#: at a span and budget reads the same tokens, whichever preset or rule asks.
SAMPLE_SEED = 1234


def scored_sample(documents, span: int, max_tokens: int, rule: str = "across-documents") -> ScoredSample:
    """The tokens an evaluation scores: `max_tokens` // span spans of `span` tokens drawn across
    every document that holds one (lenex.scoring.sample states the rule), or, for a design fixed
    before that rule, the first documents' whole spans."""
    if rule == "first-documents":
        return first_documents(documents, span, max_tokens)
    if rule != "across-documents":
        raise ValueError(f"scored_rule {rule!r} is not one of {', '.join(RULES)}")
    return sample_spans(documents, span, max_tokens, SAMPLE_SEED)


def scored_span(documents, span: int, max_tokens: int) -> tuple[np.ndarray, int]:
    """The scored sample's tokens and the documents too short for one span."""
    sample = scored_sample(documents, span, max_tokens)
    return sample.tokens, sample.documents - sample.eligible


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
        expect=None, scored_rule="across-documents") -> dict:
    overrides = {"position_options": position_options} if position_options else {}
    model, payload = load_checked(checkpoint, data_dir, expect, out, **overrides)  # the model it claims to be
    model.to(pick_device(device))
    return score(model, payload, checkpoint, data_dir, length, span, out, mask_name, mask_options, split,
                 max_tokens, batch_tokens, extra, scored_rule)


def scored_data_digests(data_dir, data) -> dict:
    """`data_sha256`: the digests of the corpus files this evaluation read, as its meta.json
    records them (load_split compared them with the files), so a table job can tell that the
    corpus changed after the evaluation (lenex.tables.raw_results.check_inputs_current); empty
    for a corpus written before digests."""
    meta_file, split_file = f"{data_dir}/meta.json", f"{data_dir}/{data.meta['file']}"
    digests = {meta_file: data.meta["dataset"].get(META_DIGEST), split_file: data.meta.get(SPLIT_DIGEST)}
    digests = {path: digest for path, digest in digests.items() if digest}
    return {"data_sha256": digests} if digests else {}


def score(model, payload: dict, checkpoint, data_dir, length: int, span: int, out, mask_name=None,
          mask_options=None, split="test", max_tokens=65536, batch_tokens=16384, extra=None,
          scored_rule="across-documents") -> dict:
    """One cell with a loaded model (load_model): several cells of one model share one load."""
    cfg = model.config
    mask_name = mask_name or cfg.mask
    # A windowed model keeps its own window unless told otherwise; other masks take the papers' defaults.
    base = cfg.mask_options if mask_name == cfg.mask else default_mask_options(mask_name, cfg.train_length)
    mask = build_mask(mask_name, {**base, **(mask_options or {})})
    mask.check_length(length)
    data = load_split(data_dir, split)
    sample = scored_sample(data.documents(), span, max_tokens, scored_rule)
    tokens, skipped = sample.tokens, sample.documents - sample.eligible
    started = time.time()
    result = evaluate_length(model, tokens, length, span, mask, data.meta["dataset"]["eot_token"], batch_tokens,
                             cfg.train_length)
    result.update(
        length=length, span=span, train_length=cfg.train_length, mask=mask_name, mask_options=mask.options(),
        protocol="lex", split=split, documents_skipped=skipped, scored=sample.summary(),
        scored_tokens_sha256=hashlib.sha256(tokens.astype(np.uint16).tobytes()).hexdigest(),
        **scored_data_digests(data_dir, data), **provenance(checkpoint, model, payload), seconds=time.time() - started,
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
