"""xPos (LEX Transformer, Sun et al. 2023, Section 3.2 and Algorithm 1).

Rotary rotation plus an exponential decay per channel pair: q_n <- rot(q_n) * zeta^(n/B),
k_m <- rot(k_m) * zeta^(-m/B), zeta_i = (2i/hd + gamma) / (1 + gamma), so q_n.k_m decays
as zeta^((n-m)/B) with the relative distance.

Stability: for the smallest zeta, zeta^(-n/B) overflows fp32 (and zeta^(n/B) underflows)
beyond n ~ 36k. We use zeta^((n-c)/B) and zeta^(-(m-c)/B) with a reference c: every pair's
product is still zeta^((n-m)/B), so attention is unchanged. Up to EXPONENT_LIMIT (inputs of
~16k positions at B = 512), c is the midpoint of all positions in the call (as TorchScale
centres). Beyond it, `rotate_unscaled` rotates only and attention scales each span of queries
and its keys against the span's own last key (`span_scales`): |exponent| stays below the limit
at any length, masked pairs included, so 1M positions stay finite in fp32.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import POSITIONS
from .rope import RotaryPositions, rotary_tables, rotate_with

# Largest |exponent| a scale or a (masked) q.k product may reach: e^40 ~ 2e17 leaves fp32 (3e38)
# room for the q and k norms.
EXPONENT_LIMIT = 40.0


def xpos_zeta(head_dim: int, gamma: float = 0.4, dtype=torch.float32) -> torch.Tensor:
    """(2i/hd + gamma) / (1 + gamma) for channel pairs i = 0 .. hd/2 - 1 (Eq. 11)."""
    i = torch.arange(head_dim // 2, dtype=torch.float64, device="cpu")
    return ((2 * i / head_dim + gamma) / (1 + gamma)).to(dtype)


@dataclass(frozen=True)
class XPosOptions:
    gamma: float = 0.4
    scale_base: int = 512  # B: positions are divided by B inside the exponent
    rotation: bool = True  # False: decay only, LEX Table 4 "w/o rotation"
    zeta: str = "vector"  # "scalar": every zeta_i = gamma / (1 + gamma), LEX Table 4 "scalar zeta"
    base: float = 10000.0  # rotation angles theta_i = base^(-2i/hd), as for rope

    def __post_init__(self):
        if self.zeta not in ("vector", "scalar"):
            raise ValueError(f"position scheme 'xpos': option zeta must be 'vector' or 'scalar', got {self.zeta!r}")


@POSITIONS.register
class XPos(RotaryPositions):
    name = "xpos"
    Options = XPosOptions

    def log_zeta(self, device) -> torch.Tensor:
        gamma = self.options.gamma
        zeta = xpos_zeta(self.head_dim, gamma, dtype=torch.float64)
        if self.options.zeta == "scalar":
            zeta = torch.full_like(zeta, gamma / (1 + gamma))
        return zeta.log().to(device)

    def angles(self, positions):
        if not self.options.rotation:
            return torch.zeros(*positions.shape, self.head_dim // 2, dtype=torch.float64, device=positions.device)
        return super().angles(positions)

    def scales(self, q_pos, k_pos):
        everything = torch.cat((q_pos.flatten(), k_pos.flatten())).to(torch.float64)
        centre = (everything.min() + everything.max()) / 2
        log_zeta = self.log_zeta(q_pos.device) / self.options.scale_base
        q_scale = torch.exp(log_zeta * (q_pos.to(torch.float64) - centre).unsqueeze(-1))
        k_scale = torch.exp(-log_zeta * (k_pos.to(torch.float64) - centre).unsqueeze(-1))
        return q_scale, k_scale

    def _decay_rate(self) -> float:
        """max_i |ln zeta_i| / B: how fast the largest exponent grows per position."""
        return float(self.log_zeta("cpu").abs().max()) / self.options.scale_base

    def span_scale_rows(self, positions):
        rate = self._decay_rate()
        if rate == 0 or float(positions.max() - positions.min()) * rate <= EXPONENT_LIMIT:
            return None
        return max(1, int(EXPONENT_LIMIT / rate))

    def span_scales(self, q_pos, k_pos):
        """(q_scale, k_scale) for one span, relative to its last key c (every key m <= c): the
        k scales zeta^((c-m)/B) are <= 1, the q scales zeta^((n-c)/B) at most e^EXPONENT_LIMIT for
        queries within `span_scale_rows` of c. Shapes (..., T, hd), broadcast over heads."""
        reference = k_pos.max().to(torch.float64)
        log_zeta = self.log_zeta(q_pos.device) / self.options.scale_base
        q_scale = torch.exp(log_zeta * (q_pos.to(torch.float64) - reference).unsqueeze(-1))
        k_scale = torch.exp(-log_zeta * (k_pos.to(torch.float64) - reference).unsqueeze(-1))

        def table(scale):  # both channels of a pair share a scale; batched positions get a heads axis
            scale = torch.cat((scale, scale), dim=-1).to(torch.float32)
            return scale.unsqueeze(-3) if scale.dim() == 3 else scale

        return table(q_scale), table(k_scale)

    def rotate_unscaled(self, q, k, q_pos, k_pos):
        """Rotation only: the scales come per span (`span_scales`) when one reference cannot hold them."""
        q_tables = self.cached("rotation-unscaled", q_pos, q_pos,
                               lambda: rotary_tables(self.angles(q_pos), None, q.dtype), dtype=q.dtype)
        k_tables = q_tables if k_pos is q_pos else rotary_tables(self.angles(k_pos), None, k.dtype)
        return rotate_with(q, q_tables), rotate_with(k, k_tables)
