"""Attention masks as pure index rules.

A mask says which key index j a query index i may attend to. It works on sequence
indices, not position ids: BCA and sliding windows cut the *input*, whatever positions
the tokens carry. Besides the dense rule (`allowed`), each banded mask tells which
contiguous key range a block of queries can see (`key_range`), so attention can be
computed block by block with memory linear in the length instead of an L x L matrix.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod

import torch

from ..config import NoOptions, build_dataclass
from ..registry import Registry


def make_mask_options(mask: str, options_cls: type, options: dict | None):
    """Build the mask's options dataclass; an unknown or missing key raises a ValueError naming
    the mask and the key (and, when unknown, the known ones)."""
    return build_dataclass(options_cls, dict(options or {}), "option", context=f"mask {mask!r}: ")


class AttentionMask(ABC):
    name: str = ""
    Options: type = NoOptions  # a dataclass of the mask's options (make_mask_options)
    #: banded masks see a bounded number of keys per query; `chunk` queries are
    #: processed together and never need keys outside `key_range`.
    banded: bool = False

    def __init__(self, settings=None):
        """`settings`: an Options instance (make_mask_options). Every option becomes an attribute of
        the same name; mask options are sizes in tokens (a block, a window), so each must be a
        positive integer (a mask with other kinds of options overrides this)."""
        self.settings = self.Options() if settings is None else settings
        for key in (f.name for f in dataclasses.fields(self.Options)):
            value = getattr(self.settings, key)
            if int(value) < 1:
                raise ValueError(f"{self.name} mask: {key} must be a positive integer, got {value!r}")
            setattr(self, key, int(value))

    @classmethod
    def default_options(cls, train_length: int) -> dict:
        """The options a model trained at `train_length` gets when its config names none (the
        papers' defaults, declared by each mask that has options): none by default."""
        return {}

    @abstractmethod
    def allowed(self, q_idx: torch.Tensor, k_idx: torch.Tensor) -> torch.Tensor:
        """Boolean matrix (len(q_idx), len(k_idx)): may query i attend key j."""

    def mask_mod(self):
        """The rule as a FlexAttention mask_mod, `fn(b, h, q_idx, kv_idx) -> bool tensor`, equal to
        `allowed` at every pair; None: none declared, so attention takes the reference path."""
        return None

    def dense(self, length: int, device=None) -> torch.Tensor:
        idx = torch.arange(length, device=device)
        return self.allowed(idx, idx)

    def check_length(self, length: int) -> None:
        """Raise a ValueError naming the length when this mask cannot be applied."""

    # Banded masks override the two below.
    def chunk(self, length: int) -> int:
        return length

    def key_range(self, q_start: int, q_end: int) -> tuple[int, int]:
        return 0, q_end

    def options(self) -> dict:
        """The options as used (what result files record): each Options field's attribute."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self.Options)}


#: The attention masks by `name`: each registers itself (`@MASKS.register`) in its module of this package.
MASKS = Registry("attention mask", members="lenex.masks.*")
