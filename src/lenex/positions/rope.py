"""Rotary position embedding (RoFormer, Su et al. 2021): rotate q and k by position.

Pair i rotates by the angle n * theta_i with theta_i = base^(-2i/hd), i in [0, hd/2). We pair
channel i with channel i + hd/2 ("rotate_half") instead of the paper's neighbours (2i, 2i+1).
The two differ only by a fixed permutation of the q/k channels, which the learned q/k
projections absorb, so q.k and hence attention are the same function of relative position.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import PositionScheme


def rotary_angles(positions: torch.Tensor, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """n * theta_i as (..., T, hd/2), in float64: float32 angles drift by ~1e-3 rad at 65k positions."""
    i = torch.arange(head_dim // 2, dtype=torch.float64, device=positions.device)
    theta = base ** (-2 * i / head_dim)
    return positions.to(torch.float64).unsqueeze(-1) * theta


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) for the two halves of the last dimension."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def apply_rotary(x: torch.Tensor, angles: torch.Tensor, scale: torch.Tensor | None = None) -> torch.Tensor:
    """x: (B, H, T, hd); angles, scale: (T, hd/2) or (B, T, hd/2), one value per channel pair.

    Per pair (x1, x2): (x1 cos - x2 sin, x2 cos + x1 sin) * scale, i.e. Eq. (12) of LEX.
    """
    cos, sin = angles.cos(), angles.sin()
    if scale is not None:
        cos, sin = cos * scale, sin * scale
    # Both halves of a pair share one angle; unsqueeze(-3) broadcasts over heads.
    cos = torch.cat((cos, cos), dim=-1).unsqueeze(-3).to(x.dtype)
    sin = torch.cat((sin, sin), dim=-1).unsqueeze(-3).to(x.dtype)
    return x * cos + rotate_half(x) * sin


@dataclass(frozen=True)
class RotaryOptions:
    base: float = 10000.0


class RotaryPositions(PositionScheme):
    name = "rope"
    kind = "rotary"
    Options = RotaryOptions

    def __init__(self, options, **sizes):
        super().__init__(options, **sizes)
        if self.head_dim % 2:
            raise ValueError(f"position scheme {self.name!r} needs an even head dimension, got {self.head_dim}")

    def angles(self, positions: torch.Tensor) -> torch.Tensor:
        return rotary_angles(positions, self.head_dim, self.options.base)

    def scales(self, q_pos, k_pos) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """Per-pair magnitudes for q and k; plain rotary keeps norms unchanged."""
        return None, None

    def rotate(self, q, k, q_pos, k_pos):
        q_scale, k_scale = self.scales(q_pos, k_pos)
        return apply_rotary(q, self.angles(q_pos), q_scale), apply_rotary(k, self.angles(k_pos), k_scale)
