"""xPos (LEX Transformer, Sun et al. 2023, Section 3.2 and Algorithm 1).

Rotary rotation plus an exponential decay per channel pair: q_n <- rot(q_n) * zeta^(n/B),
k_m <- rot(k_m) * zeta^(-m/B), zeta_i = (2i/hd + gamma) / (1 + gamma), so q_n.k_m decays
as zeta^((n-m)/B) with the relative distance.

Stability: for the smallest zeta, zeta^(-n/B) overflows fp32 (and zeta^(n/B) underflows)
beyond n ~ 36k. We use zeta^((n-c)/B) and zeta^(-(m-c)/B) with c the midpoint of all
positions in the call: every pair's product is still zeta^((n-m)/B), so attention is
unchanged, while the exponents halve, which keeps 65,536 positions finite in fp32
(TorchScale centres the same way).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .rope import RotaryPositions


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
