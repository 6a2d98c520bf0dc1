"""Learned absolute position embeddings, optionally extended by linear interpolation.

Interpolation follows the segmented-sequences paper (Section 3.2): with an integral
beta = L_e / L_t, e'_i = ((beta - i%beta)/beta) e_{i//beta} + ((i%beta)/beta) e_{i//beta + 1}
and e_{L_t} := e_{L_t - 1}. The module always stores the trained L_t-row table (L_t: the
model's `train_length`), so a checkpoint trained without interpolation loads and can be
evaluated with `interpolate_to`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .base import POSITIONS, PositionScheme
from .cache import run_of


def interpolate_position_table(table: torch.Tensor, new_length: int) -> torch.Tensor:
    """Stretch a (L_t, D) table to (new_length, D) by the paper's linear interpolation."""
    old_length = table.shape[0]
    if new_length < old_length or new_length % old_length:
        raise ValueError(
            f"interpolating {old_length} positions to {new_length} needs an integral ratio "
            f"L_e / L_t >= 1, got {new_length / old_length:g}"
        )
    beta = new_length // old_length
    i = torch.arange(new_length, device=table.device)
    lower = i // beta
    upper = (lower + 1).clamp(max=old_length - 1)  # e_{L_t} := e_{L_t - 1}
    frac = ((i % beta).to(table.dtype) / beta).unsqueeze(-1)
    return (1 - frac) * table[lower] + frac * table[upper]


@dataclass(frozen=True)
class LearnedOptions:
    interpolate_to: int | None = None  # L_e; None: use the trained table as is


@POSITIONS.register
class LearnedPositions(PositionScheme):
    name = "learned"
    Options = LearnedOptions

    def __init__(self, options, **sizes):
        super().__init__(options, **sizes)
        self.table = nn.Embedding(self.train_length, self.d_model)
        nn.init.normal_(self.table.weight, std=0.02)
        if options.interpolate_to is not None:  # fail at build time, not at the first batch
            interpolate_position_table(torch.zeros(self.train_length, 1), options.interpolate_to)

    def interpolated(self, new_length: int) -> torch.Tensor:
        return interpolate_position_table(self.table.weight, new_length)

    def embed(self, positions: torch.Tensor) -> torch.Tensor:
        target = self.options.interpolate_to
        table = self.table.weight if target is None else self.interpolated(target)
        run = run_of(positions)
        if run is not None:  # a marked run: its range is known without reading the tensor (no GPU sync)
            low, high = run[0], run[0] + run[1] - 1
        else:
            low, high = (int(positions.min()), int(positions.max())) if positions.numel() else (0, -1)
        if high >= low and (low < 0 or high >= table.shape[0]):
            bad = low if low < 0 else high
            hint = "" if target is not None else "; set position option interpolate_to to extend it"
            raise ValueError(f"position {bad} is outside the learned position table of size {table.shape[0]}{hint}")
        return F.embedding(positions, table)
