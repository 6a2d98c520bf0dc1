"""NoPE: no position information at all; causal masking alone orders the tokens."""

from __future__ import annotations

from .base import POSITIONS, PositionScheme


@POSITIONS.register
class NoPE(PositionScheme):
    name = "none"
