"""The receptive-field paper's evaluation protocol (Section 3.4, Figure 3); its entry point is
`python -m lenex.receptive_field.evaluate`.

N text segments are taken from the evaluation split; for each, only the last token is scored,
and the number of tokens before it (L_ex - 1) varies, so every L_ex scores the same N tokens:
PPL = exp(mean_i -log p_i). The scored tokens are spread evenly over the split, each with at
least `span - 1` tokens before it (span = the longest length of the paper, 32 x L_tr), so every
length of every table of a preset scores the very same tokens. Segments run across document
boundaries, as in a stream of documents separated by end-of-text tokens.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ..device import autocast

log = logging.getLogger("lenex.receptive_field.last_token")


def segment_ends(n_tokens: int, span: int, count: int) -> np.ndarray:
    """Indices of the N scored tokens: evenly spaced, distinct, each with >= span - 1 tokens before it."""
    if span < 2:
        raise ValueError(f"the longest segment must have at least 2 tokens, got {span}")
    if count < 1:
        raise ValueError(f"the number of segments must be at least 1, got {count}")
    available = n_tokens - (span - 1)
    if available < count:
        raise ValueError(f"the evaluation split has {n_tokens} tokens: room for {max(available, 0)} segments "
                         f"of {span} tokens with distinct last tokens, {count} asked for")
    return (span - 1) + (np.arange(count, dtype=np.int64) * available) // count


def last_token_segments(tokens: np.ndarray, ends: np.ndarray, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs (N, length - 1), targets (N,)): segment i is tokens[end_i - length + 1 .. end_i];
    the model reads its first length - 1 tokens and is scored on the last one."""
    ends = np.asarray(ends, dtype=np.int64)
    if length < 2:
        raise ValueError(f"an evaluation length must be at least 2 tokens (one read, one scored), got {length}")
    if ends.min() < length - 1:
        raise ValueError(f"segment end {int(ends.min())} has fewer than {length - 1} tokens before it")
    index = ends[:, None] + np.arange(-(length - 1), 0, dtype=np.int64)[None, :]
    inputs = torch.from_numpy(np.asarray(tokens[index], dtype=np.int64))
    targets = torch.from_numpy(np.asarray(tokens[ends], dtype=np.int64))
    return inputs, targets


@torch.no_grad()
def last_token_nll(model, inputs: torch.Tensor, targets: torch.Tensor, mask=None, batch_tokens: int = 16384) -> np.ndarray:
    """-log p of each segment's last token (N,), reading `batch_tokens` tokens per forward pass.
    Only the last position is projected to the vocabulary."""
    device = next(model.parameters()).device
    batch = max(1, batch_tokens // max(1, inputs.shape[1]))
    out = np.empty(len(inputs), dtype=np.float64)
    for start in range(0, len(inputs), batch):
        rows = slice(start, start + batch)
        with autocast(device):
            last = model.hidden(inputs[rows].to(device), mask=mask)[:, -1]
            logits = model.logits(last).float()
        out[rows] = F.cross_entropy(logits, targets[rows].to(device), reduction="none").double().cpu().numpy()
    return out


def tokens_digest(targets: torch.Tensor) -> str:
    return hashlib.sha256(targets.numpy().astype(np.int64).tobytes()).hexdigest()


def evaluate(model, tokens: np.ndarray, lengths: list[int], span: int, segments: int, batch_tokens: int,
             mask=None) -> list[dict]:
    """One record per length, all scoring the same `segments` tokens."""
    ends = segment_ends(len(tokens), span, segments)
    records = []
    for length in tqdm(lengths, desc="last-token L_ex", unit="length"):
        inputs, targets = last_token_segments(tokens, ends, length)
        started = time.time()
        nll = last_token_nll(model, inputs, targets, mask, batch_tokens)
        mean = float(nll.mean())
        records.append({"length": int(length), "nll": mean, "ppl": math.exp(mean), "tokens": int(len(nll)),
                        "segments": int(len(nll)), "segment_nll": [round(float(v), 6) for v in nll],
                        "scored_tokens_sha256": tokens_digest(targets), "seconds": time.time() - started})
        log.info("L_ex=%d ppl=%.3f over %d last tokens", length, records[-1]["ppl"], len(nll))
    return records
