"""The dimensionless groups that govern length extrapolation (docs/dimensions.md), as pure functions.

A small model keeps a paper's phenomenon when it keeps the numbers the phenomenon depends on, not
the paper's sizes, as a wind-tunnel model keeps a Reynolds number. Each function takes sizes in
tokens (or dimensions) and returns a number without units; `lenex.scale_study.dimensions_report` tabulates
them for the papers and for our presets.
"""

from __future__ import annotations

import math
import statistics

from ..positions import alibi_slopes


def rotary_geometry(rotary_dims: int, base: float, train_length: int, reach: int = 8) -> dict:
    """Where a rotary scheme's wavelengths 2 pi base^(2i/d) (d = the rotated dimensions of a head)
    fall against L_tr: pairs per octave of wavelength, how many pairs turn by less than a full
    cycle over L_tr (never seen wrapping in training), how many of those have their first wrap
    within `reach` x L_tr, and the first unseen wrap (the shortest wavelength beyond L_tr) in L_tr."""
    if rotary_dims < 2 or rotary_dims % 2 or base <= 1 or train_length < 1:
        raise ValueError(f"rotary geometry needs an even rotary dimension >= 2, base > 1 and L_tr >= 1, "
                         f"got {rotary_dims}, {base}, {train_length}")
    pairs = rotary_dims // 2
    wavelengths = [2 * math.pi * base ** (2 * i / rotary_dims) for i in range(pairs)]
    unseen = [w for w in wavelengths if w > train_length]
    return {
        "pairs_per_octave": rotary_dims / (2 * math.log2(base)),
        "unseen_share": len(unseen) / pairs,
        "wraps_within_reach": sum(w <= reach * train_length for w in unseen),
        "first_unseen_wrap": min(unseen) / train_length if unseen else None,
    }


def xpos_decay(gamma: float, scale_base: float, train_length: int) -> dict:
    """L_tr / B and how far the fastest-decaying pair's factor zeta_0^(n/B) falls across L_tr
    (zeta_0 = gamma / (1 + gamma), Eq. 11 at i = 0): xPos is close to RoPE when it stays near 1."""
    zeta0 = gamma / (1 + gamma)
    ratio = train_length / scale_base
    return {"train_over_base": ratio, "fastest_decay_over_train": zeta0**ratio}


def alibi_extent(n_heads: int, train_length: int, shift: float = 0.0, same_h: float | None = None,
                 slope_scale: float = 1.0) -> dict:
    """Largest and smallest slope x L_tr: how many nats the sharpest and the broadest head take
    off a key one training length away (the receptive-field paper's ERF grows as they shrink)."""
    slopes = alibi_slopes(n_heads, shift, same_h, slope_scale).tolist()
    return {"largest_slope_x_train": max(slopes) * train_length, "smallest_slope_x_train": min(slopes) * train_length}


def window_extent(window: int, n_layer: int, train_length: int) -> dict:
    """Windowed attention: the theoretical receptive field w R over L_tr, and w over L_tr (a
    window of L_tr or more is no window during training)."""
    return {"trf_over_train": window * n_layer / train_length, "window_over_train": window / train_length}


def curve_extent(distance_scale: float, train_length: int, paper_train_length: int) -> float:
    """A fixed curve of distance (Sandwich's profile, T5's buckets) read at s x distance spans,
    over our L_tr, this multiple of what it spanned over the paper's L_tr (1: the paper's)."""
    return distance_scale * train_length / paper_train_length


def early_token_discount(ppl_half: float, ppl_train: float) -> float:
    """D = ln ppl(L_tr/2) - ln ppl(L_tr). With a per-piece start-up cost S (NLL above the
    long-context level summed over a piece's first tokens), mean NLL(L) = l + S/L, so D = S/L_tr:
    the whole-piece protocol's built-in discount beyond L_tr grows with it (`whole_piece_discount`)."""
    if ppl_half <= 0 or ppl_train <= 0:
        raise ValueError(f"perplexities must be positive, got {ppl_half}, {ppl_train}")
    return math.log(ppl_half / ppl_train)


def whole_piece_discount(discount: float, multiple: float) -> float:
    """1 - ppl(k L_tr) / ppl(L_tr) for a model whose per-token loss beyond L_tr stays at its
    long-context level: exp(-D (1 - 1/k)) below 1 by the start-up cost alone."""
    return 1 - math.exp(-discount * (1 - 1 / multiple))


def beyond_train_ppl(ppl_train: float, ppl_k: float, multiple: float) -> float:
    """Perplexity of the tokens past L_tr in a whole piece of k L_tr, from the whole-piece numbers:
    in a causal model the first L_tr tokens of a k L_tr piece score as an L_tr piece does, so
    k ln ppl(k L_tr) = ln ppl(L_tr) + (k - 1) ln ppl(beyond)."""
    if multiple <= 1:
        raise ValueError(f"the multiple must exceed 1, got {multiple}")
    return math.exp((multiple * math.log(ppl_k) - math.log(ppl_train)) / (multiple - 1))


def passes(tokens_per_model: float, unique_tokens: float) -> float:
    """How many times a model sees its training split."""
    return tokens_per_model / unique_tokens


def tokens_per_parameter(tokens: float, n_layer: int, d_model: int, d_ff: int) -> float:
    """Training tokens per non-embedding parameter (attention 4 d^2 and FFN 2 d d_ff per layer)."""
    return tokens / (n_layer * (4 * d_model**2 + 2 * d_model * d_ff))


def median_discount(pairs: list[tuple[float, float]]) -> float | None:
    """The median D over (ppl(L_tr/2), ppl(L_tr)) pairs of several models (None if none)."""
    values = [early_token_discount(half, full) for half, full in pairs]
    return statistics.median(values) if values else None
