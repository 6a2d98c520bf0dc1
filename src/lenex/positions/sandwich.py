"""Sandwich (receptive-field paper, Section 6.1, Eq. 6): a parameter-free relative bias.

The inner product of two sinusoidal embeddings depends only on m - n:
p_m . p_n = sum_{i=1}^{dbar/2} cos((m - n) / 10000^(2i/dbar)). Sandwich subtracts its maximum
dbar/2 (reached at m = n) and divides by ALiBi's compression ratios h_k = k * 8/H:
bias_k(m, n) = (p_m . p_n - dbar/2) / h_k. The sum runs over i = 1..dbar/2 as printed in the paper.

`distance_scale` (default 1: the published bias) reads the profile at s (m - n): a model trained at
L_tr = L_paper / s then sees over its training window the part of the curve the paper's saw over
its own (docs/dimensions.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import POSITIONS, PositionScheme, largest_distance, pair_distance, per_head, relative_distance


def compression_ratios(n_heads: int) -> list[float]:
    return [k * 8.0 / n_heads for k in range(1, n_heads + 1)]


def sandwich_profile(distance: torch.Tensor, dbar: int = 128, distance_scale: float = 1.0) -> torch.Tensor:
    """p_m . p_n - dbar/2 at distances s (m - n), in float64 (before dividing by h)."""
    i = torch.arange(1, dbar // 2 + 1, dtype=torch.float64, device=distance.device)
    angle = (distance.to(torch.float64) * distance_scale).unsqueeze(-1) / 10000.0 ** (2 * i / dbar)
    return angle.cos().sum(-1) - dbar / 2


def sandwich_bias(length: int, n_heads: int, dbar: int = 128) -> torch.Tensor:
    """The full (H, L, L) Sandwich bias for positions 0..L-1 (symmetric in m, n)."""
    positions = torch.arange(length)
    profile = sandwich_profile(relative_distance(positions, positions), dbar)
    ratios = torch.tensor(compression_ratios(n_heads), dtype=torch.float64).view(-1, 1, 1)
    return (profile / ratios).to(torch.float32)


@dataclass(frozen=True)
class SandwichOptions:
    dbar: int = 128  # the paper's choice for all experiments
    distance_scale: float = 1.0  # the profile read at s x distance: keeps its shape over L_tr at a smaller L_tr

    def __post_init__(self):
        check_distance_scale("sandwich", self.distance_scale)


def check_distance_scale(scheme: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"position scheme {scheme!r}: option distance_scale must be positive, got {value}")


@POSITIONS.register
class Sandwich(PositionScheme):
    name = "sandwich"
    Options = SandwichOptions

    def bias(self, q_pos, k_pos):
        return self.cached("bias", q_pos, k_pos, lambda: self.fresh_bias(q_pos, k_pos), relative=True)

    def fresh_bias(self, q_pos, k_pos):
        distance = relative_distance(q_pos, k_pos).abs()
        # Evaluate the profile once per distinct distance (a 1-D table), then gather: the
        # direct (Tq, Tk, dbar/2) evaluation would need dbar/2 times the memory.
        span = int(distance.max()) + 1 if distance.numel() else 1
        table = sandwich_profile(torch.arange(span, device=distance.device), self.options.dbar,
                                 self.options.distance_scale)
        profile = table.to(torch.float32)[distance].unsqueeze(-3)
        return profile / per_head(compression_ratios(self.n_heads), profile)

    def score_mod(self, q_pos, k_pos):
        # The same float32 profile by distance as `fresh_bias`, looked up per pair instead of gathered.
        def build():
            distances = torch.arange(largest_distance(q_pos, k_pos) + 1, device=q_pos.device)
            return sandwich_profile(distances, self.options.dbar, self.options.distance_scale).to(torch.float32)

        table = self.cached("profile by distance", q_pos, k_pos, build, relative=True)
        ratios = torch.tensor(compression_ratios(self.n_heads), dtype=torch.float32, device=q_pos.device)
        distance = pair_distance(q_pos, k_pos)

        def sandwich(score, b, h, q_idx, kv_idx):
            return score + table[distance(b, q_idx, kv_idx).abs()] / ratios[h]

        return sandwich
