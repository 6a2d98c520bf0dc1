"""Registry of attention masks, chosen by one `mask` name plus its options: each mask of this
package registers itself (`@MASKS.register`, lenex.registry) and declares its own defaults."""

from __future__ import annotations

from .base import MASKS, AttentionMask, make_mask_options
from .blockwise import BlockwiseMask
from .causal import CausalMask
from .sliding import SlidingMask, WindowedMask


def default_mask_options(name: str, train_length: int) -> dict:
    """The options mask `name` takes by default for a model trained at `train_length`, as the mask
    declares them (BCA blocks of L_tr/2, LEX 3.3; a sliding window W = L_tr, LEX Table 5)."""
    return MASKS[name].default_options(train_length)


def build_mask(name: str, options: dict | None = None) -> AttentionMask:
    """Build a mask by registry name; unknown names or option keys raise one clear error."""
    cls = MASKS[name]
    return cls(make_mask_options(name, cls.Options, options))


__all__ = ["AttentionMask", "MASKS", "build_mask", "make_mask_options", "default_mask_options", "CausalMask", "BlockwiseMask", "SlidingMask", "WindowedMask"]
