"""Sliding-window causal attention and the receptive-field paper's windowed attention.

`sliding`: each token sees itself and the W-1 tokens before it; an evaluation-time
choice (LEX Table 5). `windowed`: the same rule (receptive-field paper section 3.3,
l_mn defined iff n + w > m >= n) but meant to be used in training too, so a model
trained with it is evaluated with it by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import MASKS, AttentionMask


@dataclass(frozen=True)
class WindowOptions:
    window: int  # tokens a query sees, itself included (sliding's default: L_tr, SlidingMask.default_options)


@MASKS.register
class SlidingMask(AttentionMask):
    name = "sliding"
    banded = True
    Options = WindowOptions

    @classmethod
    def default_options(cls, train_length: int) -> dict:
        return {"window": train_length}  # LEX Table 5: W = L_tr

    def allowed(self, q_idx: torch.Tensor, k_idx: torch.Tensor) -> torch.Tensor:
        distance = q_idx[:, None] - k_idx[None, :]
        return (distance >= 0) & (distance < self.window)

    def mask_mod(self):
        window = self.window

        def sliding(b, h, q_idx, kv_idx):
            distance = q_idx - kv_idx
            return (distance >= 0) & (distance < window)

        return sliding

    def chunk(self, length: int) -> int:
        # Query chunks as long as the window keep each chunk's key range at 2W.
        return self.window

    def key_range(self, q_start: int, q_end: int) -> tuple[int, int]:
        return max(0, q_start - self.window + 1), q_end


@MASKS.register
class WindowedMask(SlidingMask):
    name = "windowed"

    @classmethod
    def default_options(cls, train_length: int) -> dict:
        return {}  # a model trained with its window names it: no default to take
