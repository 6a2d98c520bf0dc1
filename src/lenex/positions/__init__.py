"""Registry of position schemes, chosen by one `position` name plus its options."""

from __future__ import annotations

from .alibi import Alibi, alibi_slopes
from .base import PositionScheme, make_options
from .cache import TableCache, contiguous_positions, run_of
from .kerple import Kerple
from .learned import LearnedPositions, interpolate_position_table
from .nope import NoPE
from .rope import RotaryPositions, apply_rotary, rotary_angles
from .sandwich import Sandwich, sandwich_bias
from .sinusoidal import SinusoidalPositions
from .smoothed_sandwich import SmoothedSandwich, fit_log_curve
from .t5 import T5Bias, t5_relative_bucket
from .xpos import XPos, xpos_zeta

POSITIONS: dict[str, type[PositionScheme]] = {
    cls.name: cls
    for cls in (NoPE, LearnedPositions, SinusoidalPositions, RotaryPositions, XPos, Alibi, Sandwich,
                SmoothedSandwich, Kerple, T5Bias)
}


def build_position(name: str, options: dict | None, *, d_model: int, n_heads: int, head_dim: int,
                   max_length: int) -> PositionScheme:
    """Build a scheme by registry name; unknown names or option keys raise one clear ValueError."""
    if name not in POSITIONS:
        raise ValueError(f"unknown position scheme {name!r}; known: {', '.join(sorted(POSITIONS))}")
    cls = POSITIONS[name]
    return cls(make_options(name, cls.Options, options), d_model=d_model, n_heads=n_heads,
               head_dim=head_dim, max_length=max_length)


__all__ = [
    "PositionScheme", "POSITIONS", "build_position", "alibi_slopes", "t5_relative_bucket", "sandwich_bias",
    "xpos_zeta", "TableCache", "contiguous_positions", "run_of", "interpolate_position_table", "fit_log_curve", "apply_rotary", "rotary_angles",
]
