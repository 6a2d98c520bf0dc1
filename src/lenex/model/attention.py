"""Multi-head attention over an attention plan.

The plan is built once per forward pass (bias and mask do not depend on the layer) and
lists query/key spans with their additive float masks. A full causal mask with no bias
becomes one span with SDPA's `is_causal` fast path. Banded masks (blockwise, sliding,
windowed) on long inputs become one span per query chunk, each seeing only its key
range, so memory grows linearly with the length instead of building an L x L matrix.

That is the reference path. With the flex kernel (`kernels.py`, `flex.py`) a plan is one
FlexSpan (score_mod and block mask) wherever the scheme and mask declare theirs; the causal
no-bias case keeps SDPA's `is_causal` span with either kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..masks import AttentionMask
from ..positions import PositionScheme
from .flex import FlexSpan, fallback_reason, flex_attend, flex_plan


# Long inputs with per-span scales: at most this many mask entries per span (query rows are cut to fit).
MASK_ENTRIES = 1 << 24


@dataclass
class Span:
    q: slice
    k: slice
    mask: torch.Tensor | None  # additive, broadcastable to (B, H, q, k); None: causal fast path
    q_scale: torch.Tensor | None = None  # per-span q/k magnitudes (`PositionScheme.span_scale_rows`)
    k_scale: torch.Tensor | None = None
    cast: dict = field(default_factory=dict, repr=False)  # the mask in each compute dtype, made once per plan

    def mask_as(self, dtype: torch.dtype) -> torch.Tensor | None:
        """The additive mask in `dtype`, cast once per plan (not in every layer)."""
        if self.mask is None or self.mask.dtype == dtype:
            return self.mask
        if dtype not in self.cast:
            self.cast[dtype] = self.mask.to(dtype)
        return self.cast[dtype]


def additive_mask(allowed: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """Boolean `allowed` (Tq, Tk) plus an optional bias -> the additive float mask SDPA takes.
    Built with `where`, never by adding -inf to a bias, so no entry can become inf - inf = NaN.
    Contiguous: `where` keeps a permuted bias's layout, and CUDA's fused kernels need a last stride of 1."""
    kept = torch.zeros((), device=allowed.device) if bias is None else bias
    return torch.where(allowed, kept, torch.tensor(float("-inf"), device=allowed.device)).contiguous()


def plan_attention(positions: torch.Tensor, scheme: PositionScheme, mask: AttentionMask,
                   kernel: str = "reference", dropout: float = 0.0) -> list[Span | FlexSpan]:
    """Spans covering all queries of a sequence of len(positions[-1]) tokens. Cached per marked run
    of positions and mask unless the scheme's bias has parameters (T5, KERPLE: it changes every step).
    kernel: "reference" or "flex" (resolved, `kernels.resolve_kernel`); flex falls back to the
    reference spans where `flex.fallback_reason` names a reason. dropout: the attention dropout
    the plan will be used with (flex has none)."""
    if kernel not in ("reference", "flex"):
        raise ValueError(f"attention plan: kernel {kernel!r} is not reference or flex (resolve auto first)")
    if dropout > 0:
        kernel = "reference"  # flex has no attention dropout (fallback_reason names it)
    if scheme.learned_bias:
        return _plan(positions, scheme, mask, kernel)
    key = f"plan {kernel} {mask.name} {sorted(mask.options().items())}"
    return scheme.cached(key, positions, positions, lambda: _plan(positions, scheme, mask, kernel))


def _plan(positions: torch.Tensor, scheme: PositionScheme, mask: AttentionMask,
          kernel: str = "reference") -> list[Span | FlexSpan]:
    length = positions.shape[-1]
    mask.check_length(length)
    # Checked here, inside the cached build: a scheme's span_scale_rows may read the positions (a GPU sync).
    if (kernel == "flex" and not (mask.name == "causal" and not scheme.adds_bias)
            and fallback_reason(positions, scheme, mask) is None):
        return flex_plan(positions, scheme, mask)
    idx = torch.arange(length, device=positions.device)
    rows = scheme.span_scale_rows(positions)
    if rows is not None:
        return _scaled_plan(positions, scheme, mask, rows)
    chunk = mask.chunk(length)
    if not mask.banded or length <= 2 * chunk:
        bias = scheme.bias(positions, positions)
        if bias is None and mask.name == "causal":
            return [Span(slice(0, length), slice(0, length), None)]
        return [Span(slice(0, length), slice(0, length), additive_mask(mask.allowed(idx, idx), bias))]
    spans = []
    for q_start in range(0, length, chunk):
        q_end = min(q_start + chunk, length)
        k_start, k_end = mask.key_range(q_start, q_end)
        allowed = mask.allowed(idx[q_start:q_end], idx[k_start:k_end])
        bias = scheme.bias(positions[..., q_start:q_end], positions[..., k_start:k_end])
        spans.append(Span(slice(q_start, q_end), slice(k_start, k_end), additive_mask(allowed, bias)))
    return spans


def _scaled_plan(positions: torch.Tensor, scheme: PositionScheme, mask: AttentionMask, rows: int) -> list[Span]:
    """Spans of at most `rows` queries (and MASK_ENTRIES mask entries), each with its keys up to its
    last query (every mask is causal) and the scheme's q/k scales relative to that span."""
    length = positions.shape[-1]
    idx = torch.arange(length, device=positions.device)
    chunk = mask.chunk(length)
    spans = []
    for q_start in range(0, length, chunk):
        q_end = min(q_start + chunk, length)
        step = min(rows, max(1, MASK_ENTRIES // (q_end - mask.key_range(q_start, q_end)[0])))
        for start in range(q_start, q_end, step):
            end = min(start + step, q_end)
            k_start = mask.key_range(start, end)[0]
            q_span, k_span = slice(start, end), slice(k_start, end)
            q_pos, k_pos = positions[..., q_span], positions[..., k_span]
            allowed = mask.allowed(idx[q_span], idx[k_span])
            spans.append(Span(q_span, k_span, additive_mask(allowed, scheme.bias(q_pos, k_pos)),
                              *scheme.span_scales(q_pos, k_pos)))
    return spans


def attend(q, k, v, plan: list[Span], dropout_p: float = 0.0) -> torch.Tensor:
    """q, k, v: (B, H, T, hd), already rotated (and scaled, unless the plan's spans carry scales).
    Returns (B, H, T, hd)."""
    if isinstance(plan[0], FlexSpan):
        if dropout_p:
            raise ValueError("attention dropout on the flex kernel: plan_attention takes the reference path for it")
        return flex_attend(q, k, v, plan[0])
    outputs = []
    for span in plan:
        attn_mask = span.mask_as(q.dtype)
        q_span, k_span = q[:, :, span.q], k[:, :, span.k]
        if span.q_scale is not None:
            q_span, k_span = q_span * span.q_scale.to(q.dtype), k_span * span.k_scale.to(k.dtype)
        outputs.append(
            F.scaled_dot_product_attention(
                q_span,
                k_span,
                v[:, :, span.k],
                attn_mask=attn_mask,
                is_causal=span.mask is None,
                dropout_p=dropout_p,
            )
        )
    return outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=2)
