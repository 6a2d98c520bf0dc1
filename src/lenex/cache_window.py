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

Cached keys are stored before rotation and rotated again with the query at each step, so xPos
(whose scales depend on a centre shared by q and k in one call) stays exact.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .model import LanguageModel, additive_mask


def _check(idx: torch.Tensor, targets: torch.Tensor, window: int) -> None:
    if int(window) < 1:
        raise ValueError(f"cache window must be a positive number of tokens, got {window!r}")
    if idx.dim() != 2 or idx.shape != targets.shape:
        raise ValueError(f"idx and targets must both be (batch, length); got {tuple(idx.shape)} and {tuple(targets.shape)}")


@torch.no_grad()
def score_with_cache(model: LanguageModel, idx: torch.Tensor, targets: torch.Tensor, window: int,
                     positions: torch.Tensor | None = None, chunk: int = 1) -> torch.Tensor:
    """Per-token NLL (B, T) of `targets` given `idx`, read `chunk` tokens at a time with a
    per-layer key/value cache of the last `window` tokens (chunk=1: the paper's generation)."""
    _check(idx, targets, window)
    if int(chunk) < 1:
        raise ValueError(f"chunk must be a positive number of tokens, got {chunk!r}")
    length = idx.shape[1]
    positions = torch.arange(length, device=idx.device) if positions is None else positions.to(idx.device)
    order = torch.arange(length, device=idx.device)  # sequence indices: the window cuts the input
    scheme = model.position
    caches = [None] * len(model.blocks)  # per layer: (raw keys, values, positions, indices)
    out = torch.empty(targets.shape, dtype=torch.float32, device=idx.device)
    for start in range(0, length, chunk):
        new = slice(start, min(start + chunk, length))
        x = model.tok_emb(idx[:, new])
        added = scheme.embed(positions[new])
        if added is not None:
            x = x + added
        for layer, block in enumerate(model.blocks):
            q, k, v = block.attn.heads(block.ln_attn(x))
            if caches[layer] is not None:
                old_k, old_v, old_pos, old_idx = caches[layer]
                k, v = torch.cat((old_k, k), dim=2), torch.cat((old_v, v), dim=2)
                k_pos, k_idx = torch.cat((old_pos, positions[new])), torch.cat((old_idx, order[new]))
            else:
                k_pos, k_idx = positions[new], order[new]
            q_rot, k_rot = scheme.rotate(q, k, positions[new], k_pos)
            distance = order[new][:, None] - k_idx[None, :]
            allowed = (distance >= 0) & (distance < window)
            attn_mask = additive_mask(allowed, scheme.bias(positions[new], k_pos)).to(q.dtype)
            x = x + block.attn.merge(F.scaled_dot_product_attention(q_rot, k_rot, v, attn_mask=attn_mask))
            x = x + block.mlp(block.ln_mlp(x))
            keep = slice(-(window - 1), None) if window > 1 else slice(0, 0)  # the next query sees w-1 old tokens
            caches[layer] = (k[:, :, keep], v[:, :, keep], k_pos[keep], k_idx[keep])
        logits = model.logits(model.ln_f(x)).float()
        out[:, new] = F.cross_entropy(logits.transpose(1, 2), targets[:, new], reduction="none")
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
