"""Registry of attention masks, chosen by one `mask` name plus its options."""

from __future__ import annotations

from .base import AttentionMask, make_mask_options
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
    return cls(make_mask_options(name, cls.Options, options))


__all__ = ["AttentionMask", "MASKS", "build_mask", "make_mask_options", "default_mask_options", "CausalMask", "BlockwiseMask", "SlidingMask", "WindowedMask"]
