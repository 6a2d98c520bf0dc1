"""Rotary position embedding (RoFormer, Su et al. 2021): rotate q and k by position.

Pair i rotates by the angle n * theta_i with theta_i = base^(-2i/hd), i in [0, hd/2). We pair
channel i with channel i + hd/2 ("rotate_half") instead of the paper's neighbours (2i, 2i+1).
The two differ only by a fixed permutation of the q/k channels, which the learned q/k
projections absorb, so q.k and hence attention are the same function of relative position.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import POSITIONS, PositionScheme


def rotary_angles(positions: torch.Tensor, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """n * theta_i as (..., T, hd/2), in float64: float32 angles drift by ~1e-3 rad at 65k positions."""
    i = torch.arange(head_dim // 2, dtype=torch.float64, device=positions.device)
    theta = base ** (-2 * i / head_dim)
    return positions.to(torch.float64).unsqueeze(-1) * theta


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) for the two halves of the last dimension."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rotary_tables(angles: torch.Tensor, scale: torch.Tensor | None, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """angles, scale: (T, hd/2) or (B, T, hd/2) -> (cos, sin) as (..., 1, T, hd) in `dtype`, scale folded in."""
    cos, sin = angles.cos(), angles.sin()
    if scale is not None:
        cos, sin = cos * scale, sin * scale
    # Both halves of a pair share one angle; unsqueeze(-3) broadcasts over heads.
    cos = torch.cat((cos, cos), dim=-1).unsqueeze(-3).to(dtype)
    sin = torch.cat((sin, sin), dim=-1).unsqueeze(-3).to(dtype)
    return cos, sin


def rotate_with(x: torch.Tensor, tables: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """x: (B, H, T, hd) rotated (and scaled) by `rotary_tables` output."""
    cos, sin = tables
    return x * cos + rotate_half(x) * sin


def apply_rotary(x: torch.Tensor, angles: torch.Tensor, scale: torch.Tensor | None = None) -> torch.Tensor:
    """x: (B, H, T, hd); angles, scale: (T, hd/2) or (B, T, hd/2), one value per channel pair.

    Per pair (x1, x2): (x1 cos - x2 sin, x2 cos + x1 sin) * scale, i.e. Eq. (12) of LEX.
    """
    return rotate_with(x, rotary_tables(angles, scale, x.dtype))


@dataclass(frozen=True)
class RotaryOptions:
    base: float = 10000.0


@POSITIONS.register
class RotaryPositions(PositionScheme):
    name = "rope"
    Options = RotaryOptions

    @classmethod
    def check_sizes(cls, *, head_dim, **sizes):
        if head_dim % 2:  # channels turn in pairs
            raise ValueError(f"position scheme {cls.name!r} needs an even head dimension, got {head_dim}")

    def angles(self, positions: torch.Tensor) -> torch.Tensor:
        return rotary_angles(positions, self.head_dim, self.options.base)

    def scales(self, q_pos, k_pos) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """Per-pair magnitudes for q and k; plain rotary keeps norms unchanged."""
        return None, None

    def rotation_tables(self, q_pos, k_pos, dtype):
        """((cos, sin) for q, (cos, sin) for k): see `rotary_tables`."""
        q_scale, k_scale = self.scales(q_pos, k_pos)
        q_tables = rotary_tables(self.angles(q_pos), q_scale, dtype)
        if k_pos is q_pos and k_scale is None:  # self-attention without scales: k turns like q
            return q_tables, q_tables
        return q_tables, rotary_tables(self.angles(k_pos), k_scale, dtype)

    def rotate(self, q, k, q_pos, k_pos):
        q_tables, k_tables = self.cached("rotation", q_pos, k_pos, lambda: self.rotation_tables(q_pos, k_pos, q.dtype),
                                         dtype=q.dtype)
        return rotate_with(q, q_tables), rotate_with(k, k_tables)
