"""KERPLE, logarithmic variant (Chi et al., 2022): bias = -r1_h * log(1 + r2_h * |m - n|).

r1, r2 are learnable per head and must stay positive for the bias to be a conditionally
positive definite kernel. We store unconstrained raw values and use softplus(raw): positive
by construction, with a gradient everywhere (a clamp at a small epsilon would give zero
gradient to a parameter pushed below it and leave it stuck there).
Initialisation follows KERPLE's setting, r1 ~ U(0, 2) and r2 ~ U(0, 1), drawn from
[0.01, upper] so no head starts with a vanishing bias.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import POSITIONS, PositionScheme, pair_distance, relative_distance

_LOW = 0.01


def _inverse_softplus(y: torch.Tensor) -> torch.Tensor:
    return y + torch.log(-torch.expm1(-y))


@POSITIONS.register
class Kerple(PositionScheme):
    name = "kerple"
    learned_bias = True

    def __init__(self, options, **sizes):
        super().__init__(options, **sizes)
        self.raw_r1 = nn.Parameter(_inverse_softplus(torch.empty(self.n_heads).uniform_(_LOW, 2.0)))
        self.raw_r2 = nn.Parameter(_inverse_softplus(torch.empty(self.n_heads).uniform_(_LOW, 1.0)))

    @property
    def r1(self) -> torch.Tensor:
        return F.softplus(self.raw_r1)

    @property
    def r2(self) -> torch.Tensor:
        return F.softplus(self.raw_r2)

    @staticmethod
    def distance(q_pos, k_pos) -> torch.Tensor:
        return relative_distance(q_pos, k_pos).abs().to(torch.float32).unsqueeze(-3)

    def bias(self, q_pos, k_pos):
        # |m - n| depends on positions only (cached); r1, r2 are learned, so the rest is recomputed.
        distance = self.cached("distance", q_pos, k_pos, lambda: self.distance(q_pos, k_pos), relative=True)
        r1, r2 = self.r1.view(-1, 1, 1), self.r2.view(-1, 1, 1)
        return -r1 * torch.log1p(r2 * distance)

    def score_mod(self, q_pos, k_pos):
        # r1, r2 enter the score_mod as captured tensors: FlexAttention returns their gradient.
        r1, r2, distance = self.r1, self.r2, pair_distance(q_pos, k_pos)

        def kerple(score, b, h, q_idx, kv_idx):
            return score - r1[h] * torch.log1p(r2[h] * distance(b, q_idx, kv_idx).abs().to(torch.float32))

        return kerple
