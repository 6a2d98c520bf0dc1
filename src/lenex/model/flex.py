"""The FlexAttention path: a scheme's bias as a score_mod, a mask as a block mask.

Nothing of size L x L is built: the bias is computed per (query, key) pair inside the kernel
from the scheme's `score_mod`, and the mask is a `BlockMask` that lists, for each tile of BLOCK
queries, the tiles of keys it sees (whole ones and partial ones, where the mask's `mask_mod`
decides per pair). It is built tile row by tile row from the mask's `key_range`, so building
it takes memory BLOCK x (keys a tile sees), and it holds (L / BLOCK)^2 int32 indices.

On CUDA the call is compiled (a fused Triton kernel); elsewhere torch runs FlexAttention's
unfused implementation, forward only (docs/attention-kernels.md says what runs where).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache

import torch

from ..masks import AttentionMask
from ..positions import PositionScheme

#: Query and key tile of the block mask (FlexAttention's own default).
BLOCK = 128


@dataclass
class FlexSpan:
    """The whole sequence in one FlexAttention call (a plan of one entry, like a causal Span)."""

    block_mask: object  # torch.nn.attention.flex_attention.BlockMask
    score_mod: object | None  # the scheme's bias (PositionScheme.score_mod); None: no bias
    q_scale: None = None  # per-span scales always take the reference path
    k_scale: None = None


def fallback_reason(positions: torch.Tensor, scheme: PositionScheme, mask: AttentionMask,
                    dropout: float = 0.0) -> str | None:
    """Why this attention cannot take the flex path (it then takes the reference one), or None."""
    if _lags(type(scheme), "score_mod", "bias"):
        return f"position scheme {scheme.name!r} has a bias but declares no score_mod for it"
    if mask.mask_mod() is None or _lags(type(mask), "mask_mod", "allowed"):
        return f"mask {mask.name!r} declares no mask_mod for its rule"
    if scheme.span_scale_rows(positions) is not None:
        return f"position scheme {scheme.name!r} scales q and k per span at this length (its span_scale_rows)"
    if dropout > 0:
        return "attention dropout in training (FlexAttention has none)"
    return None


def _lags(cls: type, hook: str, rule: str) -> bool:
    """True when `hook` (score_mod, mask_mod) is defined further up the class tree than `rule` (bias,
    allowed): a subclass that changed the rule without the hook would get its parent's hook."""
    where = {name: next(i for i, c in enumerate(cls.__mro__) if name in vars(c)) for name in (hook, rule)}
    return where[hook] > where[rule]


def block_mask(mask: AttentionMask, length: int, device, block: int | None = None):
    """The BlockMask of `mask` over `length` queries and keys, built on the CPU one row of tiles at a
    time (each row's dense rule covers only the keys its tiles see) and moved to `device`. It holds
    (length / block)^2 int32 tile indices at most, 1 / block^2 of a dense mask."""
    from torch.nn.attention.flex_attention import BlockMask

    block = block or BLOCK
    tiles = math.ceil(length / block)
    idx = torch.arange(length)
    partial_count, full_count = torch.zeros(tiles, dtype=torch.int32), torch.zeros(tiles, dtype=torch.int32)
    partial_at, full_at = (torch.zeros(tiles, tiles, dtype=torch.int32) for _ in range(2))
    for row in range(tiles):
        q_start, q_end = row * block, min((row + 1) * block, length)
        first = mask.key_range(q_start, q_end)[0] // block
        last = math.ceil(q_end / block)
        allowed = torch.zeros(block, (last - first) * block, dtype=torch.bool)
        # Pairs past the sequence's end stay False, so a tile cut by the end is never "full".
        seen = mask.allowed(idx[q_start:q_end], idx[first * block: min(last * block, length)])
        allowed[: seen.shape[0], : seen.shape[1]] = seen
        by_tile = allowed.view(block, last - first, block).transpose(0, 1).flatten(1)
        full = by_tile.all(dim=1)
        partial = by_tile.any(dim=1) & ~full
        for count, at, which in ((partial_count, partial_at, partial), (full_count, full_at, full)):
            found = which.nonzero().flatten() + first
            count[row] = len(found)
            at[row, : len(found)] = found
    as_mask = [t[None, None].to(device) for t in (partial_count, partial_at, full_count, full_at)]
    return BlockMask.from_kv_blocks(*as_mask, BLOCK_SIZE=block, mask_mod=mask.mask_mod(),
                                    seq_lengths=(length, length))


_BLOCK_MASKS: OrderedDict = OrderedDict()  # the last few block masks built, by what they depend on
_KEEP = 16


@torch.compiler.disable  # a model compiled whole looks it up eagerly, not rebuilt inside its graph
def cached_block_mask(mask: AttentionMask, length: int, device):
    """`block_mask` of this mask, length and device, built once. A block mask depends on neither the
    positions nor the scheme. Inference mode is part of the key: an inference tensor cannot be saved
    for a later backward."""
    key = (mask.name, tuple(sorted(mask.options().items())), length, str(torch.device(device)), BLOCK,
           torch.is_inference_mode_enabled())
    if key not in _BLOCK_MASKS:
        with torch.no_grad():
            _BLOCK_MASKS[key] = block_mask(mask, length, device)
        while len(_BLOCK_MASKS) > _KEEP:
            _BLOCK_MASKS.popitem(last=False)
    _BLOCK_MASKS.move_to_end(key)
    return _BLOCK_MASKS[key]


def flex_plan(positions: torch.Tensor, scheme: PositionScheme, mask: AttentionMask) -> list[FlexSpan]:
    """A plan of one FlexSpan: the block mask cached (`cached_block_mask`), the score_mod made afresh
    (learned biases change every step; the scheme caches its position-only tables)."""
    blocks = cached_block_mask(mask, positions.shape[-1], positions.device)
    return [FlexSpan(blocks, scheme.score_mod(positions, positions))]


@cache
def _compiled():
    return torch.compile(torch.nn.attention.flex_attention.flex_attention)


def flex_attend(q, k, v, span: FlexSpan) -> torch.Tensor:
    """One FlexAttention call: compiled on CUDA (inline when the caller is compiled), eager elsewhere."""
    from torch.nn.attention.flex_attention import flex_attention

    call = _compiled() if q.device.type == "cuda" and not torch.compiler.is_compiling() else flex_attention
    return call(q, k.to(q.dtype), v.to(q.dtype), score_mod=span.score_mod, block_mask=span.block_mask)
