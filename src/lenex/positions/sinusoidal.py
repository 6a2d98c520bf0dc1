"""Fixed sinusoidal absolute positions (Vaswani et al., 2017), computed for any position.

p_{m,2i} = sin(m / 10000^{2i/d}), p_{m,2i+1} = cos(m / 10000^{2i/d}), then multiplied by
d**-0.5: the raw entries have unit amplitude and would swamp token embeddings initialised
with std 0.02; the fixed factor puts both on one scale (x-transformers' scaled sinusoidal
does the same with a learnable scale).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import POSITIONS, PositionScheme


def sinusoidal_table(positions: torch.Tensor, dim: int) -> torch.Tensor:
    """Unscaled interleaved sin/cos features, (..., dim), in float64 so large positions stay exact."""
    i = torch.arange((dim + 1) // 2, dtype=torch.float64, device=positions.device)
    angle = positions.to(torch.float64).unsqueeze(-1) / 10000.0 ** (2 * i / dim)
    features = torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2)
    return features[..., :dim]


@dataclass(frozen=True)
class SinusoidalOptions:
    pass


@POSITIONS.register
class SinusoidalPositions(PositionScheme):
    name = "sinusoidal"
    Options = SinusoidalOptions

    def embed(self, positions: torch.Tensor) -> torch.Tensor:
        return (sinusoidal_table(positions, self.d_model) * self.d_model**-0.5).to(torch.float32)
