"""Registry of position schemes, chosen by one `position` name plus its options: each scheme of
this package registers itself (`@POSITIONS.register`, lenex.registry); a scheme of your own is a
module named by the model config (`position_module`: a dotted name or a .py path)."""

from __future__ import annotations

from .alibi import alibi_slopes
from .base import POSITIONS, PositionScheme, make_options
from .cache import TableCache, contiguous_positions, run_of
from .learned import interpolate_position_table
from .rope import apply_rotary, rotary_angles
from .sandwich import sandwich_bias
from .smoothed_sandwich import fit_log_curve
from .t5 import t5_relative_bucket
from .xpos import xpos_zeta


def scheme_module(name: str, module: str | None = None) -> str | None:
    """Register scheme `name` from `module` when one is given, and return the module to record in
    the model config: None for a scheme of this package. A name still unknown afterwards is one
    ValueError naming it."""
    if module is not None:
        POSITIONS.load_module(module)
    if name not in POSITIONS:
        where = f" (module {module!r} does not define it)" if module else ""
        raise ValueError(POSITIONS.unknown(name, where))
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
