"""Segment samplers of the segmented-sequences paper (Karypis et al. 2023, Section 3.1, Figure 1).

From one L_e-long sequence (one document piece), a sampler builds one training sequence and
keeps every token's *original* position id, so a model trained at L_t sees the positions (APE)
or the distances (RoPE, ALiBi) of L_e:

- `chunk-α`: 1/α contiguous, non-overlapping segments of αL_t tokens, in their original
  order, concatenated: exactly L_t tokens. The loss covers every prediction, so the first
  token of a segment is predicted from the last token of the previous one (the paper's
  "discontinuities", 1/α - 1 per sequence).
- `prefix-α`: an index i with (1-α)L_t < i < L_e - αL_t; the suffix is the αL_t tokens from
  i, the prefix (1-α)L_t tokens drawn at random from positions < i, kept in order. The loss
  covers only predictions inside the contiguous suffix (no discontinuity is ever scored).
- `full`: the whole L_e sequence (the paper's upper bound, L_e tokens per sequence).

Every function here is pure: randomness comes from a numpy Generator the caller seeds.
A sampled sequence of n tokens gives n - 1 predictions (inputs tokens[:-1] at positions[:-1],
targets tokens[1:]), as a Hugging Face causal LM trains on `labels = input_ids`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

_METHOD = re.compile(r"^(full|chunk-(?P<chunk>[0-9.]+)|prefix-(?P<prefix>[0-9.]+))$")


@dataclass(frozen=True)
class Method:
    kind: str  # "full" | "chunk" | "prefix"
    alpha: float | None = None

    @property
    def name(self) -> str:
        return self.kind if self.alpha is None else f"{self.kind}-{self.alpha:g}"


def parse_method(name: str) -> Method:
    """'full', 'chunk-0.25', 'prefix-0.5' -> Method; anything else is one clear error."""
    match = _METHOD.match(name)
    if not match:
        raise ValueError(f"unknown segment method {name!r}; known: full, chunk-<alpha>, prefix-<alpha>")
    if name == "full":
        return Method("full")
    kind = "chunk" if match["chunk"] else "prefix"
    alpha = float(match[kind])
    if not 0 < alpha < 1:
        raise ValueError(f"{name}: alpha must lie strictly between 0 and 1, got {alpha:g}")
    return Method(kind, alpha)


def segment_length(alpha: float, train_length: int) -> int:
    """αL_t as a whole number of tokens; chunk-α also needs 1/α whole segments."""
    length = alpha * train_length
    if abs(length - round(length)) > 1e-9 or round(length) < 1:
        raise ValueError(f"alpha {alpha:g} x L_t {train_length} = {length:g} is not a whole number of tokens")
    return int(round(length))


@dataclass(frozen=True)
class Segmented:
    """One training sequence: tokens, their original positions, and which tokens are targets."""

    tokens: np.ndarray     # (n,) int64
    positions: np.ndarray  # (n,) int64, strictly increasing original position ids
    loss_on: np.ndarray    # (n,) bool: token is predicted (from its predecessor) in the loss


def chunk_positions(rng: np.random.Generator, train_length: int, extended_length: int, alpha: float) -> np.ndarray:
    """Original positions of 1/α non-overlapping segments of αL_t tokens in [0, L_e), in order.

    Uniform over all placements: the L_e - L_t tokens left out are split into 1/α + 1 gaps by
    1/α sorted draws from [0, L_e - L_t] (stars and bars); segment j starts after gap j."""
    seg = segment_length(alpha, train_length)
    if train_length % seg:
        raise ValueError(f"chunk-{alpha:g}: 1/alpha = {train_length / seg:g} segments is not a whole number")
    count, free = train_length // seg, extended_length - train_length
    if free < 0:
        raise ValueError(f"L_e {extended_length} is shorter than L_t {train_length}")
    gaps = np.sort(rng.integers(0, free + 1, size=count))
    starts = gaps + np.arange(count) * seg
    return (starts[:, None] + np.arange(seg)[None, :]).reshape(-1).astype(np.int64)


def prefix_positions(rng: np.random.Generator, train_length: int, extended_length: int,
                     alpha: float) -> tuple[np.ndarray, int]:
    """(positions, suffix start index in the sequence) for prefix-α: i drawn with
    (1-α)L_t < i < L_e - αL_t, suffix i .. i+αL_t-1, prefix (1-α)L_t sorted draws from [0, i)."""
    suffix = segment_length(alpha, train_length)
    prefix = train_length - suffix
    low, high = prefix + 1, extended_length - suffix - 1  # the paper's strict inequalities
    if low > high:
        raise ValueError(f"prefix-{alpha:g}: no index i with {prefix} < i < {extended_length - suffix} "
                         f"(L_e {extended_length} too short for L_t {train_length})")
    start = int(rng.integers(low, high + 1))
    before = np.sort(rng.choice(start, size=prefix, replace=False))
    positions = np.concatenate([before, start + np.arange(suffix)]).astype(np.int64)
    return positions, prefix


def sample_segments(piece: np.ndarray, method: Method, train_length: int, rng: np.random.Generator) -> Segmented:
    """One training sequence from one L_e-long piece (L_e = len(piece))."""
    piece = np.asarray(piece, dtype=np.int64)
    extended = len(piece)
    if method.kind == "full":
        positions = np.arange(extended, dtype=np.int64)
        loss_on = np.ones(extended, dtype=bool)
    elif method.kind == "chunk":
        positions = chunk_positions(rng, train_length, extended, method.alpha)
        loss_on = np.ones(train_length, dtype=bool)
    else:
        positions, suffix_start = prefix_positions(rng, train_length, extended, method.alpha)
        # Only predictions whose input and target both lie in the suffix: suffix[1:] are targets.
        loss_on = np.zeros(train_length, dtype=bool)
        loss_on[suffix_start + 1:] = True
    loss_on[0] = False  # the first token has no predecessor
    return Segmented(piece[positions], positions, loss_on)


def as_batch(sequences: list[Segmented]) -> dict[str, torch.Tensor]:
    """Stack sequences of one length into the trainer's batch: x, y, positions, loss_mask."""
    tokens = torch.from_numpy(np.stack([s.tokens for s in sequences]))
    positions = torch.from_numpy(np.stack([s.positions for s in sequences]))
    loss_on = torch.from_numpy(np.stack([s.loss_on for s in sequences]))
    return {"x": tokens[:, :-1], "y": tokens[:, 1:], "positions": positions[:, :-1], "loss_mask": loss_on[:, 1:]}


class SegmentBatches:
    """Epochs over a fixed set of L_e-long pieces, one sampled sequence per piece per epoch.

    Step s belongs to epoch s // steps_per_epoch; each epoch visits the pieces in an order
    seeded by (seed, epoch), the last incomplete batch dropped. Piece p in epoch e is sampled
    with a Generator seeded by (seed, e, p), so a batch depends on (seed, step) alone and a
    resumed run draws exactly what an uninterrupted one would."""

    def __init__(self, pieces: np.ndarray, method: Method, train_length: int, batch_size: int, seed: int):
        if batch_size < 1 or len(pieces) < batch_size:
            raise ValueError(f"{len(pieces)} training pieces are fewer than one batch of {batch_size}")
        self.pieces, self.method, self.train_length = pieces, method, train_length
        self.batch_size, self.seed = batch_size, seed
        self.steps_per_epoch = len(pieces) // batch_size

    def steps(self, epochs: int) -> int:
        return epochs * self.steps_per_epoch

    def __call__(self, step: int) -> dict[str, torch.Tensor]:
        epoch, index = divmod(step, self.steps_per_epoch)
        order = np.random.default_rng([self.seed, epoch]).permutation(len(self.pieces))
        chosen = order[index * self.batch_size:(index + 1) * self.batch_size]
        return as_batch([sample_segments(self.pieces[p], self.method, self.train_length,
                                         np.random.default_rng([self.seed, epoch, int(p)]))
                         for p in chosen])
