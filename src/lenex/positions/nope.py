"""NoPE: no position information at all; causal masking alone orders the tokens."""

from __future__ import annotations

from dataclasses import dataclass

from .base import PositionScheme


@dataclass(frozen=True)
class NoPEOptions:
    pass


class NoPE(PositionScheme):
    name = "none"
    kind = "none"
    Options = NoPEOptions
