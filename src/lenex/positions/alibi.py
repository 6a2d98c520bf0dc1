"""ALiBi (Press et al., 2022): a linear penalty -slope_h * (m - n) on the scaled logits.

The receptive-field paper (Section 3.2) writes slope = 1/2^h with h = k * 8/H, k = 1..H, and
varies it two ways (Section 4): shift every h by Delta, or give all heads the same h.

`slope_scale` (default 1: the published slopes) multiplies every slope. What governs ALiBi's
extrapolation is slope x L_tr (how far, in training lengths, each head sees: docs/dimensions.md), so
a model trained at L_tr = L_paper / s keeps the paper's products with slope_scale = s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .base import POSITIONS, PositionScheme, pair_distance, per_head, relative_distance


def _geometric_slopes(n_heads: int) -> list[float]:
    return [2.0 ** (-8.0 * k / n_heads) for k in range(1, n_heads + 1)]


def alibi_slopes(n_heads: int, shift: float = 0.0, same_h: float | None = None,
                 slope_scale: float = 1.0) -> torch.Tensor:
    """Per-head slopes (H,). Non-power-of-two H uses ALiBi's rule: the slopes of the closest
    lower power of two p, then every other slope of the 2p-head sequence, first H - p of them."""
    if same_h is not None:
        slopes = [2.0 ** -same_h] * n_heads
    else:
        p = 2 ** int(math.floor(math.log2(n_heads)))
        slopes = _geometric_slopes(p) + _geometric_slopes(2 * p)[0::2][: n_heads - p]
    # h -> h + Delta multiplies every slope by 2^-Delta.
    scale = slope_scale * 2.0 ** -shift
    return torch.tensor(slopes, dtype=torch.float64, device="cpu").mul(scale).to(torch.float32)


@dataclass(frozen=True)
class AlibiOptions:
    shift: float = 0.0  # Delta added to every h (receptive-field paper, Section 4.1)
    same_h: float | None = None  # one h for all heads (Section 4.2); 0 gives slope 1
    slope_scale: float = 1.0  # every slope times this: keeps slope x L_tr at a smaller L_tr

    def __post_init__(self):
        if not self.slope_scale > 0:
            raise ValueError(f"position scheme 'alibi': option slope_scale must be positive, got {self.slope_scale}")


@POSITIONS.register
class Alibi(PositionScheme):
    name = "alibi"
    Options = AlibiOptions

    def __init__(self, options, **sizes):
        super().__init__(options, **sizes)
        # Python floats, not a buffer: nothing to checkpoint and no device to keep in sync.
        self.slopes = alibi_slopes(self.n_heads, options.shift, options.same_h, options.slope_scale).tolist()

    def bias(self, q_pos, k_pos):
        return self.cached("bias", q_pos, k_pos, lambda: self.fresh_bias(q_pos, k_pos), relative=True)

    def fresh_bias(self, q_pos, k_pos):
        # |m - n| keeps masked (key after query) entries finite and non-positive.
        distance = relative_distance(q_pos, k_pos).abs().to(torch.float32).unsqueeze(-3)
        return -per_head(self.slopes, distance) * distance

    def score_mod(self, q_pos, k_pos):
        slopes, distance = torch.tensor(self.slopes, device=q_pos.device), pair_distance(q_pos, k_pos)

        def alibi(score, b, h, q_idx, kv_idx):
            return score - slopes[h] * distance(b, q_idx, kv_idx).abs()

        return alibi
