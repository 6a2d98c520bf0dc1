"""Full causal attention: every token sees itself and all tokens before it."""

from __future__ import annotations

import torch

from .base import MASKS, AttentionMask


@MASKS.register
class CausalMask(AttentionMask):
    name = "causal"

    def allowed(self, q_idx: torch.Tensor, k_idx: torch.Tensor) -> torch.Tensor:
        return k_idx[None, :] <= q_idx[:, None]

    def mask_mod(self):
        def causal(b, h, q_idx, kv_idx):
            return kv_idx <= q_idx

        return causal
