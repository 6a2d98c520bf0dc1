"""Registry of position schemes, chosen by one `position` name plus its options."""

from __future__ import annotations

from .alibi import Alibi, alibi_slopes
from .base import PositionScheme, make_options
from .cache import TableCache, contiguous_positions, run_of
from .kerple import Kerple
from .learned import LearnedPositions, interpolate_position_table
from .nope import NoPE
from .plugins import default_module, load_scheme_module
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


def scheme_module(name: str, module: str | None = None) -> str | None:
    """Register scheme `name` from `module` (or from lenex/positions/<name>.py when it is not built
    in) and return the module to record in the model config: None for a built-in scheme.
    A name still unknown afterwards is one ValueError naming it."""
    if module is None and name not in POSITIONS:
        module = default_module(name)
    if module is not None:
        load_scheme_module(module, POSITIONS)
    if name not in POSITIONS:
        where = f" (module {module!r} does not define it)" if module else ""
        raise ValueError(f"unknown position scheme {name!r}{where}; known: {', '.join(sorted(POSITIONS))}")
    return module


def build_position(name: str, options: dict | None, *, d_model: int, n_heads: int, head_dim: int,
                   train_length: int, module: str | None = None) -> PositionScheme:
    """Build a scheme by registry name (imported from `module` first when given); unknown names
    or option keys raise one clear ValueError."""
    scheme_module(name, module)
    cls = POSITIONS[name]
    return cls(make_options(name, cls.Options, options), d_model=d_model, n_heads=n_heads,
               head_dim=head_dim, train_length=train_length)


__all__ = [
    "PositionScheme", "POSITIONS", "build_position", "scheme_module", "alibi_slopes", "t5_relative_bucket", "sandwich_bias",
    "xpos_zeta", "TableCache", "contiguous_positions", "run_of", "interpolate_position_table", "fit_log_curve", "apply_rotary", "rotary_angles",
]
