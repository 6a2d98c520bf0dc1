"""Registry of attention masks, chosen by one `mask` name plus its options."""

from __future__ import annotations

import inspect

from .base import AttentionMask
from .blockwise import BlockwiseMask
from .causal import CausalMask
from .sliding import SlidingMask, WindowedMask

MASKS: dict[str, type[AttentionMask]] = {
    cls.name: cls for cls in (CausalMask, BlockwiseMask, SlidingMask, WindowedMask)
}


def default_mask_options(name: str, train_length: int) -> dict:
    """The papers' defaults: BCA blocks of L_tr/2 (LEX 3.3), sliding window W = L_tr (LEX Table 5)."""
    if name == "blockwise":
        return {"block": train_length // 2}
    if name == "sliding":
        return {"window": train_length}
    return {}


def build_mask(name: str, options: dict | None = None) -> AttentionMask:
    """Build a mask by registry name; unknown names or option keys raise one clear error."""
    if name not in MASKS:
        raise ValueError(f"unknown attention mask {name!r}; known: {', '.join(sorted(MASKS))}")
    cls = MASKS[name]
    options = dict(options or {})
    params = inspect.signature(cls.__init__).parameters.values()
    allowed = [p.name for p in params if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"mask {name!r}: unknown option {unknown[0]!r}; allowed: {', '.join(allowed) or 'none'}"
        )
    missing = [p for p in allowed if p not in options]
    if missing:
        raise ValueError(f"mask {name!r}: missing option {missing[0]!r}")
    return cls(**options)


__all__ = ["AttentionMask", "MASKS", "build_mask", "default_mask_options", "CausalMask", "BlockwiseMask", "SlidingMask", "WindowedMask"]
