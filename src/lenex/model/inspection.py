"""Looking inside the model during its own forward pass, and stepping it with a key/value cache.

`LanguageModel.inspect(idx, see, positions, mask)` runs the ordinary forward and, after each block,
calls `see(view)` with a `LayerView` of that block: its input (the residual stream entering it) and,
computed only when asked, the attention logits a_ij per head before the mask and the attention
probabilities after it. Nothing is kept between layers, so a caller can reduce one layer's
(B, H, T, T) logits before the next layer runs. The plain forward pays one `if` per layer.

`LanguageModel.step(idx, q_pos, k_pos, allowed, cache)` reads a chunk of tokens through the same
blocks, each layer attending to its `KeyValueCache` slot (the raw keys and values of the tokens read
before) plus the chunk itself.
"""

from __future__ import annotations

import math

import torch

from ..masks import AttentionMask
from ..positions import PositionScheme


class LayerView:
    """One block's attention as its forward computed it. `layer`: the block's index; `input`: the
    residual stream entering the block (B, T, D)."""

    def __init__(self, layer: int, block, block_input: torch.Tensor, positions: torch.Tensor,
                 scheme: PositionScheme, mask: AttentionMask):
        self.layer, self.input = layer, block_input
        self._block, self._positions, self._scheme, self._mask = block, positions, scheme, mask
        self._rotated = None  # the forward's (q, k) after the position scheme, when they are the logits' q, k

    def record(self, rotated: tuple[torch.Tensor, torch.Tensor], exact: bool) -> None:
        """Called by the attention: its rotated (q, k). exact=False: they are not the fp32 q, k of a
        whole-sequence rotation (bf16 autocast, or xPos rotated without scales for per-span scaling),
        so `logits` recomputes them from the block's input in fp32."""
        self._rotated = rotated if exact else None

    def _query_key(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self._rotated is not None:
            return self._rotated
        q, k, _ = self._block.attn.heads(self._block.ln_attn(self.input.float()))
        return self._scheme.rotate(q.float(), k.float(), self._positions, self._positions)

    def logits(self) -> torch.Tensor:
        """a_ij (B, H, T, T) in fp32: q.k / sqrt(d_head) after the position scheme's rotation (and
        scales, over the whole sequence at once), plus its additive bias; before mask and softmax."""
        with torch.autocast(self.input.device.type, enabled=False):
            q, k = self._query_key()
            logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            bias = self._scheme.bias(self._positions, self._positions)
            return logits if bias is None else logits + bias.float()

    def allowed(self) -> torch.Tensor:
        """(T, T) booleans: the pairs (query i, key j) the forward's mask lets attend."""
        idx = torch.arange(self.input.shape[1], device=self.input.device)
        return self._mask.allowed(idx, idx)

    def probabilities(self) -> torch.Tensor:
        """(B, H, T, T) fp32 attention weights: softmax over keys of `logits` with the forward's mask."""
        return self.logits().masked_fill(~self.allowed(), float("-inf")).softmax(dim=-1)


class KeyValueCache:
    """Per layer, the raw (unrotated) keys and values of the last `keep` tokens read, for
    `LanguageModel.step`. Keys are stored before rotation and rotated again with every step's
    queries, so xPos (whose scales depend on a centre shared by q and k in one call) stays exact."""

    def __init__(self, layers: int, keep: int):
        if int(keep) < 0:
            raise ValueError(f"a key/value cache keeps a non-negative number of tokens, got {keep!r}")
        self.keep = int(keep)
        self.key_positions: torch.Tensor | None = None  # of cached + new keys, set by each step
        self.slots = [CacheSlot(self) for _ in range(layers)]


class CacheSlot:
    """One layer's part of a `KeyValueCache`."""

    def __init__(self, cache: KeyValueCache):
        self.cache, self.k, self.v = cache, None, None

    def extend(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The cached keys/values followed by the new ones (B, H, T, hd); keeps the last `keep`."""
        if self.k is not None:
            k, v = torch.cat((self.k, k), dim=2), torch.cat((self.v, v), dim=2)
        expected = self.cache.key_positions.shape[-1]
        if k.shape[2] != expected:
            raise ValueError(f"key/value cache: {k.shape[2]} keys (cached + new) but {expected} key positions")
        keep = slice(-self.cache.keep, None) if self.cache.keep else slice(0, 0)
        self.k, self.v = k[:, :, keep], v[:, :, keep]
        return k, v
