"""T5 relative position bias (Raffel et al., 2020), unidirectional (causal) bucketing.

Distances n = query - key below num_buckets/2 get a bucket each; larger ones share
logarithmically wider buckets up to max_distance, and everything beyond falls into the last
bucket. Each head learns one scalar per bucket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .base import POSITIONS, PositionScheme, largest_distance, pair_distance, relative_distance


def t5_relative_bucket(relative_position: torch.Tensor, num_buckets: int = 32, max_distance: int = 128) -> torch.Tensor:
    """relative_position = key - query (<= 0 for causal pairs) -> bucket ids in [0, num_buckets)."""
    n = (-relative_position).clamp(min=0)  # keys after the query (masked anyway) share bucket 0
    max_exact = num_buckets // 2
    # Clamp before the log so n = 0 does not produce -inf; those entries take the exact branch.
    scaled = torch.log(n.clamp(min=max_exact).float() / max_exact) / math.log(max_distance / max_exact)
    large = (max_exact + (scaled * (num_buckets - max_exact)).long()).clamp(max=num_buckets - 1)
    return torch.where(n < max_exact, n, large).long()


@dataclass(frozen=True)
class T5Options:
    num_buckets: int = 32
    max_distance: int = 128

    def __post_init__(self):
        # The log buckets run from num_buckets / 2 to max_distance: without room between them the
        # formula divides by log(1) = 0 and indexes outside the table.
        if self.num_buckets < 2 or not self.max_distance > self.num_buckets // 2:
            raise ValueError(f"position scheme 't5': option max_distance ({self.max_distance}) must exceed "
                             f"num_buckets // 2 ({self.num_buckets // 2}), and num_buckets be at least 2")


@POSITIONS.register
class T5Bias(PositionScheme):
    name = "t5"
    learned_bias = True
    Options = T5Options

    def __init__(self, options, **sizes):
        super().__init__(options, **sizes)
        # Small normal init, the same N(0, 0.02) LanguageModel gives every embedding table,
        # so the scheme behaves the same whether or not the model re-initialises it.
        self.table = nn.Embedding(options.num_buckets, self.n_heads)
        nn.init.normal_(self.table.weight, std=0.02)

    def buckets(self, q_pos, k_pos) -> torch.Tensor:
        return t5_relative_bucket(-relative_distance(q_pos, k_pos), self.options.num_buckets, self.options.max_distance)

    def bias(self, q_pos, k_pos):
        # The buckets depend on positions only (cached); the lookup stays in the graph for the gradient.
        buckets = self.cached("buckets", q_pos, k_pos, lambda: self.buckets(q_pos, k_pos), relative=True)
        # Gathered from the (H, num_buckets) table so the bias comes out (H, Tq, Tk) with last stride 1:
        # a lookup then movedim(-1, -3) leaves stride H there, and CUDA's fused SDPA kernels refuse
        # such a mask (the math kernel runs). Batched positions pay one copy to (B, H, Tq, Tk).
        bias = self.table.weight.T.contiguous()[:, buckets]
        return bias if buckets.dim() == 2 else bias.movedim(0, -3).contiguous()

    def score_mod(self, q_pos, k_pos):
        # Bucket of each causal distance n = 0 .. max (positions only: cached); the table's weight is
        # indexed inside the score_mod, so FlexAttention returns its gradient.
        def build():
            distances = torch.arange(largest_distance(q_pos, k_pos) + 1, device=q_pos.device)
            return t5_relative_bucket(-distances, self.options.num_buckets, self.options.max_distance)

        bucket_of = self.cached("bucket by distance", q_pos, k_pos, build, relative=True)
        weight, distance = self.table.weight, pair_distance(q_pos, k_pos)

        def t5(score, b, h, q_idx, kv_idx):
            return score + weight[bucket_of[distance(b, q_idx, kv_idx).clamp(min=0)], h]

        return t5
