"""Exact masked attention for a `transformers` causal LM, chunk by chunk through its own forward.

BCA and sliding windows cut the input: a query may see only some earlier keys, and in a deep
model a key's own states depend on what *it* could see. So a window of raw tokens cannot be
re-read per query chunk; instead the queries are read in chunks (`mask.chunk`: one BCA block,
or W queries of a sliding window; `chunk` tokens for causal attention), each chunk through the
model's own forward with

- explicit `position_ids` (the tokens' indices in the piece: RoPE and its scaling settings, or
  GPT-2's learned table, act inside the model as usual),
- the previous chunks' keys and values as a `DynamicCache`, cut to the keys the mask lets this
  chunk reach (`mask.key_range`), which were computed under the same mask when they were queries,
- a 4D additive mask (0 where `mask.allowed`, the dtype's minimum elsewhere) over those keys.

That equals one dense forward under the (L, L) mask (tested) while memory grows with the
chunk times the keys in reach, linear in the length. `ScoreRecorder` reads the pre-softmax
attention logits (LEX Eq. 13) from the same calls, for attention resolution.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

RECORDER_NAME = "lenex_scores"


def additive_mask(allowed: torch.Tensor, dtype) -> torch.Tensor:
    """(1, 1, q, k): 0 where attention is allowed, the dtype's minimum elsewhere (eager and SDPA both add it)."""
    mask = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    return mask.masked_fill(~allowed, torch.finfo(dtype).min)[None, None]


def _cache(kv, drop: int):
    from transformers import DynamicCache

    if kv is None:
        return DynamicCache()
    return DynamicCache([(k[:, :, drop:], v[:, :, drop:]) for k, v in kv])


@torch.no_grad()
def masked_logits(hf_model, idx: torch.Tensor, mask, chunk: int | None = None, recorder=None) -> torch.Tensor:
    """(B, L, V) logits of `idx` (B, L) under `mask` (a lenex AttentionMask), positions 0..L-1.
    `chunk`: queries per forward for masks without their own (causal); default all L at once."""
    batch, length = idx.shape
    mask.check_length(length)
    step = mask.chunk(length) if mask.banded else (chunk or length)
    dtype = next(hf_model.parameters()).dtype
    kv, kv_start, out = None, 0, []
    for q_start in range(0, length, step):
        q_end = min(q_start + step, length)
        k_start = mask.key_range(q_start, q_end)[0]
        if k_start < kv_start:
            raise ValueError(f"mask {mask.name!r} reaches key {k_start} from chunk {q_start}, behind the cache")
        q_idx = torch.arange(q_start, q_end, device=idx.device)
        allowed = mask.allowed(q_idx, torch.arange(k_start, q_end, device=idx.device))
        if recorder is not None:
            recorder.set_chunk(q_idx, k_start, allowed, batch)
        result = hf_model(input_ids=idx[:, q_start:q_end], position_ids=q_idx.expand(batch, -1),
                          attention_mask=additive_mask(allowed, dtype), past_key_values=_cache(kv, k_start - kv_start),
                          use_cache=True)
        kv = [(layer.keys, layer.values) for layer in result.past_key_values.layers]
        kv_start = k_start
        out.append(result.logits)
    return torch.cat(out, dim=1)


class ScoreRecorder:
    """Running sums, per layer and head, of the pre-softmax attention logits by distance n = i - j
    over the pairs the mask allows: q.k * scaling after the model's own rotation (the query and
    key states its attention function receives), before mask and softmax."""

    def __init__(self, n_layer: int, n_head: int, length: int):
        self.sums = torch.zeros(n_layer, n_head, length, dtype=torch.float64)
        self.counts = torch.zeros(length, dtype=torch.float64)
        self.length = length

    def set_chunk(self, q_idx: torch.Tensor, k_start: int, allowed: torch.Tensor, batch: int) -> None:
        k_idx = torch.arange(k_start, k_start + allowed.shape[1], device=q_idx.device)
        self.allowed = allowed
        self.distance = (q_idx[:, None] - k_idx[None, :])[allowed]
        self.counts += batch * torch.bincount(self.distance, minlength=self.length).double().cpu()

    def attention(self, module, query, key, value, attention_mask, scaling=None, **kwargs):
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        keys = key.repeat_interleave(query.shape[1] // key.shape[1], dim=1)  # grouped-query attention
        scale = scaling if scaling is not None else query.shape[-1] ** -0.5
        logits = (query.float() @ keys.float().transpose(-1, -2)) * scale  # (B, H, q, k)
        values = logits.double().sum(0)[:, self.allowed].cpu()  # (H, pairs)
        self.sums[module.layer_idx].index_add_(1, self.distance.cpu(), values)
        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, **kwargs)

    def mean(self) -> np.ndarray:
        """s[n] per (layer, head, n); NaN where no allowed pair has distance n."""
        counts = self.counts.where(self.counts > 0, torch.tensor(torch.nan, dtype=torch.float64))
        return (self.sums / counts).numpy()


@contextlib.contextmanager
def recording(hf_model, recorder: ScoreRecorder):
    """Within the block every attention layer of `hf_model` goes through `recorder.attention`."""
    from transformers import AttentionInterface

    AttentionInterface.register(RECORDER_NAME, recorder.attention)
    configs = [m.config for m in hf_model.modules() if hasattr(getattr(m, "config", None), "_attn_implementation")]
    before = [c._attn_implementation for c in configs]
    for c in configs:
        c._attn_implementation = RECORDER_NAME
    try:
        yield recorder
    finally:
        for c, name in zip(configs, before):
            c._attn_implementation = name
