"""Multi-head attention over an attention plan.

The plan is built once per forward pass (bias and mask do not depend on the layer) and
lists query/key spans with their additive float masks. A full causal mask with no bias
becomes one span with SDPA's `is_causal` fast path. Banded masks (blockwise, sliding,
windowed) on long inputs become one span per query chunk, each seeing only its key
range, so memory grows linearly with the length instead of building an L x L matrix.

That is the reference path. With the flex kernel (`kernels.py`, `flex.py`) a plan is one
FlexSpan (score_mod and block mask) wherever the scheme and mask declare theirs; the causal
no-bias case keeps SDPA's `is_causal` span with either kernel.

`plan_kind` names a plan's path (flex, sdpa, reference), `model_plan` builds the plan a model's
forward builds (one for all its layers), and `attention_path` says whether that path runs fused.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..masks import AttentionMask
from ..positions import PositionScheme, contiguous_positions
from . import flex
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


PLAN_KINDS = ("flex", "sdpa", "reference")


def plan_kind(plan: list[Span | FlexSpan]) -> str:
    """"flex": one FlexAttention call; "sdpa": one SDPA call with `is_causal` and no mask tensor (flash
    attention's case); "reference": SDPA over spans with additive float masks."""
    if isinstance(plan[0], FlexSpan):
        return "flex"
    return "sdpa" if len(plan) == 1 and plan[0].mask is None else "reference"


def model_plan(model, length: int, mask: AttentionMask | None = None, device=None) -> list[Span | FlexSpan]:
    """The plan `model`'s forward builds for `length` tokens at positions 0..length-1 under `mask`
    (default: its training mask), in its current train/eval mode, on `device` (default: its
    parameters'). Every layer of the forward attends through this one plan."""
    device = torch.device(device) if device is not None else next(model.parameters()).device
    positions = contiguous_positions(0, length, device=device)
    return plan_attention(positions, model.position, mask or model.train_mask, model.kernel(device),
                          model.config.dropout if model.training else 0.0)


def attention_path(model, length: int, mask: AttentionMask | None = None, device=None,
                   dtype: torch.dtype | None = None, compiled_with: str | None = None) -> dict:
    """What computes `model`'s attention at `length` tokens: {"plan": flex|sdpa|reference, "spans",
    "fused": bool, "why": str, "fallback": why flex was not taken or None, "compiled_graphs":
    `flex.compile_count()`}. compiled_with: the torch.compile backend of a model compiled whole
    (FlexAttention is then traced into its graph); None: the model runs eagerly. Flex is fused only
    where it is compiled with a fusing backend (inductor), never its eager implementation. SDPA plans are fused where every span runs
    with SDPA restricted to its flash, memory-efficient and cuDNN kernels, which this tries on one
    sequence of the model's heads in `dtype` (default: bf16 on CUDA, as autocast runs it; else the
    parameters'), with a backward when the model is training."""
    device = torch.device(device) if device is not None else next(model.parameters()).device
    plan = model_plan(model, length, mask, device)
    kind = plan_kind(plan)
    record = {"plan": kind, "spans": len(plan), "compiled_graphs": flex.compile_count(), "fallback": None}
    if kind != "flex" and model.kernel(device) == "flex":
        positions = contiguous_positions(0, length, device=device)
        record["fallback"] = (fallback_reason(positions, model.position, mask or model.train_mask,
                                              model.config.dropout if model.training else 0.0)
                              or "no bias under the causal mask: SDPA's is_causal call")
    if kind == "flex":
        mode = "compiled" if compiled_with else flex.call_mode(device)
        backend = compiled_with or flex.COMPILE_BACKEND
        inside = " inside the model's graph" if compiled_with else ""
        if mode == "eager":
            record.update(fused=False, why=f"FlexAttention runs eagerly on {device.type} (unfused)")
        elif backend not in flex.FUSED_BACKENDS:
            record.update(fused=False, why=f"FlexAttention compiled with {backend}{inside} (traced, not fused)")
        else:
            record.update(fused=True, why=f"FlexAttention compiled with {backend}{inside} on {device.type}")
        return record
    if dtype is None:
        dtype = torch.bfloat16 if device.type == "cuda" else next(model.parameters()).dtype
    refused = _fused_sdpa_refusal(plan, model.config.n_head, model.config.head_dim, device, dtype, model.training)
    record.update(fused=refused is None,
                  why=refused or f"SDPA's fused kernels take every span on {device.type} in {dtype}")
    return record


def _fused_sdpa_refusal(plan: list[Span], heads: int, head_dim: int, device, dtype, backward: bool) -> str | None:
    """None when every span's SDPA call runs restricted to the fused kernels; else SDPA's refusal."""
    length = max(span.q.stop for span in plan)
    with torch.inference_mode(False):  # tensors a backward may save, even when asked under inference mode
        q, k, v = (torch.randn(1, heads, length, head_dim, device=device, dtype=dtype).requires_grad_(backward)
                   for _ in range(3))
        return _first_refusal(plan, q, k, v, dtype, backward)


def _first_refusal(plan: list[Span], q, k, v, dtype, backward: bool) -> str | None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    fused = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]
    with warnings.catch_warnings(), torch.set_grad_enabled(backward):
        warnings.simplefilter("ignore")  # SDPA warns why each kernel declined; its error says enough
        for span in plan:
            # A copy without grad: the probe's backward must not reach a learned bias's parameters.
            mask = None if span.mask is None else span.mask_as(dtype).detach().clone()
            try:
                with sdpa_kernel(fused):
                    out = F.scaled_dot_product_attention(q[:, :, span.q], k[:, :, span.k], v[:, :, span.k],
                                                         attn_mask=mask, is_causal=span.mask is None)
                    if backward:
                        out.sum().backward()
            except torch.OutOfMemoryError:
                raise
            except RuntimeError as err:  # SDPA's "no available kernel"
                return f"SDPA restricted to its fused kernels refuses span {span.q.start}:{span.q.stop}: " \
                       f"{str(err).splitlines()[0]}"
    return None
