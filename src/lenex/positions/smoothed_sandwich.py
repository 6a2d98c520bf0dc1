"""Smoothed Sandwich (receptive-field paper, Section 6.2 and footnote 7).

Each head's Sandwich bias is replaced by the least-squares log curve a * log(1 + |m - n|) + b
fitted to that head's bias at the 50 most recent distances (0..49): footnote 7 fits "the most
recent 50 points" because nearby tokens matter most. With `distance_scale` s the curve is fitted
in the paper's distances and read at s |m - n|, as Sandwich's own profile is (lenex.positions.sandwich).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import POSITIONS, PositionScheme, pair_distance, per_head, relative_distance
from .sandwich import check_distance_scale, compression_ratios, sandwich_profile


def fit_log_curve(distances, values) -> tuple[float, float]:
    """Closed-form least squares of values ~ a * log(1 + |distances|) + b, in float64."""
    x = torch.log1p(torch.as_tensor(distances, dtype=torch.float64, device="cpu").abs())
    y = torch.as_tensor(values, dtype=torch.float64, device="cpu")
    x_centred = x - x.mean()
    a = (x_centred * (y - y.mean())).sum() / (x_centred**2).sum()
    b = y.mean() - a * x.mean()
    return float(a), float(b)


def smoothed_sandwich_coefficients(n_heads: int, dbar: int = 128, fit_points: int = 50):
    """Per-head (a_k, b_k) fitted to Sandwich's bias at distances 0..fit_points-1."""
    distances = torch.arange(fit_points, device="cpu")
    profile = sandwich_profile(distances, dbar)
    return [fit_log_curve(distances, profile / h) for h in compression_ratios(n_heads)]


@dataclass(frozen=True)
class SmoothedSandwichOptions:
    dbar: int = 128
    fit_points: int = 50  # footnote 7: the most recent 50 distances
    distance_scale: float = 1.0  # the curve read at s x distance (see lenex.positions.sandwich)

    def __post_init__(self):
        check_distance_scale("smoothed_sandwich", self.distance_scale)


@POSITIONS.register
class SmoothedSandwich(PositionScheme):
    name = "smoothed_sandwich"
    Options = SmoothedSandwichOptions

    def __init__(self, options, **sizes):
        super().__init__(options, **sizes)
        coefficients = smoothed_sandwich_coefficients(self.n_heads, options.dbar, options.fit_points)
        self.slopes = [a for a, _ in coefficients]  # Python floats: fixed, nothing to checkpoint
        self.offsets = [b for _, b in coefficients]

    def bias(self, q_pos, k_pos):
        return self.cached("bias", q_pos, k_pos, lambda: self.fresh_bias(q_pos, k_pos), relative=True)

    def fresh_bias(self, q_pos, k_pos):
        distance = relative_distance(q_pos, k_pos).abs().to(torch.float32) * self.options.distance_scale
        log_distance = torch.log1p(distance).unsqueeze(-3)
        return per_head(self.slopes, log_distance) * log_distance + per_head(self.offsets, log_distance)

    def score_mod(self, q_pos, k_pos):
        slopes = torch.tensor(self.slopes, dtype=torch.float32, device=q_pos.device)
        offsets = torch.tensor(self.offsets, dtype=torch.float32, device=q_pos.device)
        # The scale as a tensor: a Python float captured by a score_mod can become a symbolic float
        # that FlexAttention's tracing rejects once it has recompiled for another score_mod.
        scale = torch.tensor(self.options.distance_scale, dtype=torch.float32, device=q_pos.device)
        distance = pair_distance(q_pos, k_pos)

        def smoothed_sandwich(score, b, h, q_idx, kv_idx):
            log_distance = torch.log1p(distance(b, q_idx, kv_idx).abs().to(torch.float32) * scale)
            return score + slopes[h] * log_distance + offsets[h]

        return smoothed_sandwich
