"""Attention masks as pure index rules.

A mask says which key index j a query index i may attend to. It works on sequence
indices, not position ids: BCA and sliding windows cut the *input*, whatever positions
the tokens carry. Besides the dense rule (`allowed`), each banded mask tells which
contiguous key range a block of queries can see (`key_range`), so attention can be
computed block by block with memory linear in the length instead of an L x L matrix.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch


class AttentionMask(ABC):
    name: str = ""
    #: banded masks see a bounded number of keys per query; `chunk` queries are
    #: processed together and never need keys outside `key_range`.
    banded: bool = False

    @abstractmethod
    def allowed(self, q_idx: torch.Tensor, k_idx: torch.Tensor) -> torch.Tensor:
        """Boolean matrix (len(q_idx), len(k_idx)): may query i attend key j."""

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
        return {}
