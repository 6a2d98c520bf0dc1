"""Cache-window scoring (receptive-field paper, Appendix B) and the re-encoding it replaces.

Cache window: tokens are read left to right; every layer keeps the keys and values of the
last w tokens it has seen, drops the oldest, and a new token attends only to that cache, so
scoring L tokens costs O(w * L). Re-encoding: every token is scored by encoding its last w
tokens from scratch (positions renumbered from 0), O(w^2 * L), the APE-model cost.

What is equal to what (tested):
- The cache window equals the `sliding` mask with window w over the whole sequence, for every
  scheme: in both, each layer's token attends to the same w hidden states of that layer, with
  the tokens' original position ids (gaps allowed).
- It equals re-encoding only for a single layer with a relative scheme (ALiBi, Sandwich,
  KERPLE, T5, RoPE, xPos, none): there the cached keys depend on their token alone, and a
  relative scheme does not see the renumbering. With two or more layers a cached key already
  saw up to w tokens before it, so the cache window reaches (layers x w) tokens back while
  re-encoding reaches w; absolute schemes (learned, sinusoidal) also see the renumbering.

Each step is the model's own (`LanguageModel.step` with a `KeyValueCache`); cached keys are
stored before rotation and rotated again with the query at each step, so xPos stays exact.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..model import LanguageModel
from ..positions import contiguous_positions


def _check(idx: torch.Tensor, targets: torch.Tensor, window: int) -> None:
    if int(window) < 1:
        raise ValueError(f"cache window must be a positive number of tokens, got {window!r}")
    if idx.dim() != 2 or idx.shape != targets.shape:
        raise ValueError(f"idx and targets must both be (batch, length); got {tuple(idx.shape)} and {tuple(targets.shape)}")


def _positions(positions: torch.Tensor | None, start: int, end: int, device) -> torch.Tensor:
    """Position ids of sequence indices start..end-1: given ones, or a marked run (cached tables)."""
    return contiguous_positions(start, end, device) if positions is None else positions[start:end]


@torch.no_grad()
def score_with_cache(model: LanguageModel, idx: torch.Tensor, targets: torch.Tensor, window: int,
                     positions: torch.Tensor | None = None, chunk: int = 1, score_from: int = 0) -> torch.Tensor:
    """Per-token NLL (B, T) of `targets` given `idx`, read `chunk` tokens at a time with a
    per-layer key/value cache of the last `window` tokens (chunk=1: the paper's generation).
    Tokens before `score_from` are read but not projected to the vocabulary (their NLL is NaN):
    the receptive-field paper's protocol scores only the last token of a segment."""
    _check(idx, targets, window)
    if int(chunk) < 1:
        raise ValueError(f"chunk must be a positive number of tokens, got {chunk!r}")
    length, window, chunk = idx.shape[1], int(window), int(chunk)
    if positions is not None:
        positions = positions.to(idx.device)
    cache = model.new_cache(window - 1)  # each layer keeps w-1 old tokens: the next query sees them
    out = torch.empty(targets.shape, dtype=torch.float32, device=idx.device)
    for start in range(0, length, chunk):
        end = min(start + chunk, length)
        first_key = max(0, start - (window - 1))  # the step's first query sees w-1 tokens back
        q_pos, k_pos = _positions(positions, start, end, idx.device), _positions(positions, first_key, end, idx.device)
        # Query i of the chunk (sequence index start+i) sees keys first_key+j with 0 <= distance < w.
        distance = torch.arange(start, end, device=idx.device)[:, None] - torch.arange(first_key, end, device=idx.device)
        first = max(start, score_from)
        hidden = model.step(idx[:, start:end], q_pos, k_pos, (distance >= 0) & (distance < window), cache,
                            hidden_from=min(first, end) - start)
        if first >= end:
            out[:, start:end] = float("nan")
            continue
        out[:, start:first] = float("nan")
        logits = model.logits(hidden).float()
        out[:, first:end] = F.cross_entropy(logits.transpose(1, 2), targets[:, first:end], reduction="none")
    return out


@torch.no_grad()
def score_by_reencoding(model: LanguageModel, idx: torch.Tensor, targets: torch.Tensor, window: int,
                        batch_windows: int = 64) -> torch.Tensor:
    """Per-token NLL (B, T): token t is scored by encoding idx[t-window+1 .. t] afresh, with
    positions 0..window-1. The first `window` tokens share one causal pass over their prefix."""
    _check(idx, targets, window)
    batch, length = idx.shape
    head = min(window, length)
    out = torch.empty(targets.shape, dtype=torch.float32, device=idx.device)
    out[:, :head] = model.token_nll(idx[:, :head], targets[:, :head])
    if length <= window:
        return out
    # Row (b, t - window + 1) of the unfolded view is the window ending at token t.
    windows = idx.unfold(1, window, 1)[:, 1:].reshape(-1, window)
    last_targets = targets[:, window:].reshape(-1)
    scored = torch.empty(len(windows), dtype=torch.float32, device=idx.device)
    for rows in torch.arange(len(windows), device=idx.device).split(batch_windows):
        last_hidden = model.hidden(windows[rows])[:, -1]
        scored[rows] = F.cross_entropy(model.logits(last_hidden).float(), last_targets[rows], reduction="none")
    out[:, window:] = scored.view(batch, length - window)
    return out
