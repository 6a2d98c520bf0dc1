"""Perplexity by the segmented-sequences paper's rule (Section 4.5):

    python -m lenex.segmented.evaluate --checkpoint M.pt --data DIR --length L --out R.json

Test documents are cut into non-overlapping pieces of L tokens, one document per piece (no
packing, no sliding window, remainders discarded: `lenex.data.tokens.document_pieces`). A
piece is scored as a Hugging Face causal LM scores `labels = input_ids`: tokens 1..L-1, each
from all earlier tokens of its piece, at positions 0..L-2. The paper reports the mean over
pieces of each piece's perplexity (equation 3): `ppl`; `corpus_ppl` is exp(mean token NLL).

A learned position table shorter than L is first stretched to L by the paper's interpolation
(Section 3.2, beta = L / L_t must be whole): the "out of the box" APE extrapolation.
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
from ..data.tokens import document_pieces
from ..device import autocast, pick_device
from ..scoring.evaluate import position_profile, scored_data_digests
from ..files import atomic_write_result
from ..records.provenance import add_expect_argument, load_checked
from .models import extended

log = logging.getLogger("lenex.segmented.evaluate")


def table_length(model) -> int | None:
    """Positions a learned table holds, or None for schemes that take any position. A Hugging Face
    model's config describes it the same way (lenex.hf.models.describe: GPT-2 is `learned`,
    its train_length the table's n_positions)."""
    return model.config.train_length if model.config.position == "learned" else None


def ready_for(model, length: int):
    """The model able to read `length` tokens: learned tables interpolated when too short."""
    limit = table_length(model)
    if limit is None or length <= limit:
        return model, None
    if length % limit:
        raise ValueError(f"length {length} is not a whole multiple of the learned table's {limit} positions: "
                         "the paper's interpolation needs an integral beta")
    return extended(model, length).eval(), length // limit


def test_pieces(split, length: int, max_tokens: int | None, seed: int = 0) -> np.ndarray:
    """The pieces scored: all of them, or a seeded subset of max_tokens // length."""
    pieces = document_pieces(split, length).pieces
    if len(pieces) == 0:
        raise ValueError(f"no test document has {length} tokens")
    if max_tokens:
        count = max(1, max_tokens // length)
        if count < len(pieces):
            pieces = pieces[np.sort(np.random.default_rng(seed).permutation(len(pieces))[:count])]
    return pieces


@torch.no_grad()
def token_nll(model, pieces: np.ndarray, batch_tokens: int) -> np.ndarray:
    """NLL of every predicted token (n, L-1): tokens 1..L-1 of each piece, at positions 0..L-2."""
    device = next(model.parameters()).device
    length = pieces.shape[1]
    batch = max(1, batch_tokens // length)
    out = []
    for start in tqdm(range(0, len(pieces), batch), desc=f"eval L={length}", unit="batch", mininterval=5):
        tokens = torch.from_numpy(pieces[start:start + batch].astype(np.int64)).to(device)
        with autocast(device):
            nll = model.token_nll(tokens[:, :-1], tokens[:, 1:])
        out.append(nll.double().cpu().numpy())
    return np.concatenate(out)


def pieces_digest(pieces: np.ndarray) -> str:
    """The scored pieces' identity: two results pair piece by piece only when these agree."""
    return hashlib.sha256(np.ascontiguousarray(pieces, dtype=np.int64).tobytes()).hexdigest()


def run(checkpoint, data_dir, length: int, out, max_tokens: int | None = None, batch_tokens: int = 16384,
        split: str = "test", extra: dict | None = None, device: str = "auto", expect=None) -> dict:
    model, payload = load_checked(checkpoint, data_dir, expect, out)
    model, beta = ready_for(model, length)
    model.to(pick_device(device))
    data = load_split(data_dir, split)
    pieces = test_pieces(data, length, max_tokens)
    started = time.time()
    per_token = token_nll(model, pieces, batch_tokens)
    nll = per_token.mean(axis=1)
    train_length = model.config.train_length if beta is None else length // beta
    result = {
        "ppl": float(np.mean(np.exp(nll))), "corpus_ppl": math.exp(float(nll.mean())), "nll": float(nll.mean()),
        "pieces": int(len(pieces)), "tokens": int(len(pieces) * (length - 1)), "length": length,
        "protocol": "segmented-4.5", "split": split, "interpolated_beta": beta,
        # Per piece, for comparisons paired over pieces (lenex.claims): the same pieces for every model
        # scored at this length (the hash says which); other lengths cut other pieces.
        "piece_nll": [round(float(v), 6) for v in nll], "scored_tokens_sha256": pieces_digest(pieces),
        "train_length": train_length,
        # The loss by position (lenex.tables.diagnostics): bin edges count predicted positions 0..L-2.
        **dict(zip(("position_bins", "position_nll"), position_profile(per_token, length - 1, train_length))),
        **scored_data_digests(data_dir, data), **provenance(checkpoint, model, payload),
        "seconds": time.time() - started, **(extra or {}),
    }
    atomic_write_result(out, result)
    log.info("L=%d ppl=%.3f (corpus %.3f) over %d pieces", length, result["ppl"], result["corpus_ppl"], len(pieces))
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_scoring_inputs(parser, length_help="L_e: evaluation length in tokens", max_tokens=0)
    add_run_options(parser, extra_help="JSON merged into the result (model, run, ...)")
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    start_run(args)
    run(args.checkpoint, args.data, args.length, args.out, args.max_tokens or None, args.batch_tokens,
        args.split, json.loads(args.extra), args.device, args.expect)


if __name__ == "__main__":
    run_cli(main)
