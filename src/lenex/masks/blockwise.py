"""Blockwise causal attention (LEX paper section 3.3, Figure 3).

Queries are cut into blocks of `block` tokens (half the training length in the
paper); a query sees its own block causally and the whole previous block. At
evaluation time this bounds every query's context to < 2*block tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import MASKS, AttentionMask


@dataclass(frozen=True)
class BlockwiseOptions:
    block: int  # tokens per block; no default here (BlockwiseMask.default_options: L_tr / 2)


@MASKS.register
class BlockwiseMask(AttentionMask):
    name = "blockwise"
    banded = True
    Options = BlockwiseOptions

    @classmethod
    def default_options(cls, train_length: int) -> dict:
        return {"block": train_length // 2}  # LEX 3.3: blocks of half the training length

    def allowed(self, q_idx: torch.Tensor, k_idx: torch.Tensor) -> torch.Tensor:
        q_block = (q_idx // self.block)[:, None]
        k_block = (k_idx // self.block)[None, :]
        return (k_idx[None, :] <= q_idx[:, None]) & (k_block >= q_block - 1)

    def mask_mod(self):
        block = self.block

        def blockwise(b, h, q_idx, kv_idx):
            return (kv_idx <= q_idx) & (kv_idx // block >= q_idx // block - 1)

        return blockwise

    def check_length(self, length: int) -> None:
        # A ragged last block would silently change what the last queries see.
        if length > self.block and length % self.block:
            raise ValueError(
                f"blockwise mask: length {length} is not divisible by the block size {self.block}"
            )

    def chunk(self, length: int) -> int:
        return self.block

    def key_range(self, q_start: int, q_end: int) -> tuple[int, int]:
        first_block = q_start // self.block
        return max(0, (first_block - 1) * self.block), q_end
