"""The FlexAttention path: a scheme's bias as a score_mod, a mask as a block mask.

Nothing of size L x L is built: the bias is computed per (query, key) pair inside the kernel
from the scheme's `score_mod`, and the mask is a `BlockMask` that lists, for each tile of BLOCK
queries, the tiles of keys it sees (whole ones and partial ones, where the mask's `mask_mod`
decides per pair). It is built tile row by tile row from the mask's `key_range`, so building
it takes memory BLOCK x (keys a tile sees), and it holds (L / BLOCK)^2 int32 indices.

On CUDA the call is compiled (a fused Triton kernel); elsewhere torch runs FlexAttention's
unfused implementation, forward only (docs/attention-kernels.md says what runs where). The
compiled call holds dynamo's recompile limit at RECOMPILE_LIMIT and makes reaching it an error,
since past it dynamo would run FlexAttention unfused without a word; `compile_count` and
`call_counts` say what was compiled and how each call ran.
"""

from __future__ import annotations

import math
import os
from collections import Counter, OrderedDict
from dataclasses import dataclass
from functools import cache

import torch

from ..masks import AttentionMask
from ..positions import PositionScheme

#: Query and key tile of the block mask (FlexAttention's own default).
BLOCK = 128

#: The smallest head dimension FlexAttention's CUDA (Triton) lowering takes: tl.dot needs 16.
MIN_CUDA_HEAD_DIM = 16

#: Devices on which `flex_attend` calls FlexAttention through torch.compile (elsewhere: torch's eager,
#: unfused implementation), and the backend it compiles with. Tests compile on the CPU with aot_eager
#: (forward and backward traced as on CUDA, not fused) by changing these two.
COMPILED_ON: tuple[str, ...] = ("cuda",)
COMPILE_BACKEND = "inductor"
#: Backends whose compiled FlexAttention is one fused kernel (aot_eager only traces the graph).
FUSED_BACKENDS = ("inductor",)

#: Graphs dynamo may hold for the compiled flex_attention. Each distinct score_mod (ALiBi, KERPLE, T5,
#: Sandwich, smoothed Sandwich, or none: 6) x mask_mod with its options (4 masks) x length (the first
#: one static, then one dynamic graph: 2) x grad mode (training, no_grad evaluation: 2) x dtype (bf16
#: autocast, fp32: 2) is one graph: 192 for a process that runs every scheme x mask (the CUDA tests, the
#: GPU bench); a run of one scheme needs 32 at most. A loop lenex did not plan for (a sweep of
#: windows, each a new mask_mod) can need more: LENEX_FLEX_RECOMPILE_LIMIT raises it.
RECOMPILE_LIMIT = 6 * 4 * 2 * 2 * 2
RECOMPILE_LIMIT_ENVIRONMENT = "LENEX_FLEX_RECOMPILE_LIMIT"

_CALLS: Counter = Counter()  # flex_attend calls made outside a compiled caller, by how they ran


@dataclass
class FlexSpan:
    """The whole sequence in one FlexAttention call (a plan of one entry, like a causal Span)."""

    block_mask: object  # torch.nn.attention.flex_attention.BlockMask
    score_mod: object | None  # the scheme's bias (PositionScheme.score_mod); None: no bias
    q_scale: None = None  # per-span scales always take the reference path
    k_scale: None = None


def fallback_reason(positions: torch.Tensor, scheme: PositionScheme, mask: AttentionMask,
                    dropout: float = 0.0) -> str | None:
    """Why this attention cannot take the flex path (it then takes the reference one), or None."""
    refused = kernel_refusal(positions.device, scheme.head_dim)
    if refused:
        return refused
    if _lags(type(scheme), "score_mod", "bias"):
        return f"position scheme {scheme.name!r} has a bias but declares no score_mod for it"
    if mask.mask_mod() is None or _lags(type(mask), "mask_mod", "allowed"):
        return f"mask {mask.name!r} declares no mask_mod for its rule"
    if scheme.span_scale_rows(positions) is not None:
        return f"position scheme {scheme.name!r} scales q and k per span at this length (its span_scale_rows)"
    if dropout > 0:
        return "attention dropout in training (FlexAttention has none)"
    return None


def kernel_refusal(device, head_dim: int) -> str | None:
    """Why the compiled FlexAttention kernel would refuse heads of `head_dim` on `device`, or None:
    inductor's CUDA lowering raises for head dimensions below MIN_CUDA_HEAD_DIM (CPU's does not)."""
    if (torch.device(device).type == "cuda" and call_mode(device) == "compiled"
            and COMPILE_BACKEND == "inductor" and head_dim < MIN_CUDA_HEAD_DIM):
        return (f"head dimension {head_dim} is below {MIN_CUDA_HEAD_DIM}, the least FlexAttention's CUDA "
                "kernel takes")
    return None


def _lags(cls: type, hook: str, rule: str) -> bool:
    """True when `hook` (score_mod, mask_mod) is defined further up the class tree than `rule` (bias,
    allowed): a subclass that changed the rule without the hook would get its parent's hook."""
    where = {name: next(i for i, c in enumerate(cls.__mro__) if name in vars(c)) for name in (hook, rule)}
    return where[hook] > where[rule]


def block_mask(mask: AttentionMask, length: int, device, block: int | None = None):
    """The BlockMask of `mask` over `length` queries and keys, built on the CPU one row of tiles at a
    time (each row's dense rule covers only the keys its tiles see) and moved to `device`. It holds
    (length / block)^2 int32 tile indices at most, 1 / block^2 of a dense mask."""
    from torch.nn.attention.flex_attention import BlockMask

    block = block or BLOCK
    tiles = math.ceil(length / block)
    idx = torch.arange(length)
    partial_count, full_count = torch.zeros(tiles, dtype=torch.int32), torch.zeros(tiles, dtype=torch.int32)
    partial_at, full_at = (torch.zeros(tiles, tiles, dtype=torch.int32) for _ in range(2))
    for row in range(tiles):
        q_start, q_end = row * block, min((row + 1) * block, length)
        first = mask.key_range(q_start, q_end)[0] // block
        last = math.ceil(q_end / block)
        allowed = torch.zeros(block, (last - first) * block, dtype=torch.bool)
        # Pairs past the sequence's end stay False, so a tile cut by the end is never "full".
        seen = mask.allowed(idx[q_start:q_end], idx[first * block: min(last * block, length)])
        allowed[: seen.shape[0], : seen.shape[1]] = seen
        by_tile = allowed.view(block, last - first, block).transpose(0, 1).flatten(1)
        full = by_tile.all(dim=1)
        partial = by_tile.any(dim=1) & ~full
        for count, at, which in ((partial_count, partial_at, partial), (full_count, full_at, full)):
            found = which.nonzero().flatten() + first
            count[row] = len(found)
            at[row, : len(found)] = found
    as_mask = [t[None, None].to(device) for t in (partial_count, partial_at, full_count, full_at)]
    return BlockMask.from_kv_blocks(*as_mask, BLOCK_SIZE=block, mask_mod=mask.mask_mod(),
                                    seq_lengths=(length, length))


_BLOCK_MASKS: OrderedDict = OrderedDict()  # the last few block masks built, by what they depend on
_KEEP = 16


@torch.compiler.disable  # a model compiled whole looks it up eagerly, not rebuilt inside its graph
def cached_block_mask(mask: AttentionMask, length: int, device):
    """`block_mask` of this mask, length and device, built once. A block mask depends on neither the
    positions nor the scheme. Inference mode is part of the key: an inference tensor cannot be saved
    for a later backward."""
    key = (mask.name, tuple(sorted(mask.options().items())), length, str(torch.device(device)), BLOCK,
           torch.is_inference_mode_enabled())
    if key not in _BLOCK_MASKS:
        with torch.no_grad():
            _BLOCK_MASKS[key] = block_mask(mask, length, device)
        while len(_BLOCK_MASKS) > _KEEP:
            _BLOCK_MASKS.popitem(last=False)
    _BLOCK_MASKS.move_to_end(key)
    return _BLOCK_MASKS[key]


def flex_plan(positions: torch.Tensor, scheme: PositionScheme, mask: AttentionMask) -> list[FlexSpan]:
    """A plan of one FlexSpan: the block mask cached (`cached_block_mask`), the score_mod made afresh
    (learned biases change every step; the scheme caches its position-only tables)."""
    blocks = cached_block_mask(mask, positions.shape[-1], positions.device)
    return [FlexSpan(blocks, scheme.score_mod(positions, positions))]


def recompile_limit() -> int:
    """RECOMPILE_LIMIT, or LENEX_FLEX_RECOMPILE_LIMIT where it is set."""
    value = os.environ.get(RECOMPILE_LIMIT_ENVIRONMENT)
    if value is None:
        return RECOMPILE_LIMIT
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{RECOMPILE_LIMIT_ENVIRONMENT}={value!r} is not a positive whole number of graphs")
    return int(value)


def _first_config(config, *names: str) -> str:
    """The first of `names` this torch's dynamo config has (newer names first, older aliases after)."""
    for name in names:
        if hasattr(config, name):
            return name
    raise RuntimeError(f"torch {torch.__version__}: dynamo has none of the settings {', '.join(names)}, so the "
                       "compiled FlexAttention could reach its recompile limit and run unfused unseen")


def _limits() -> dict:
    """dynamo settings for one compiled flex call: the recompile limit, and reaching it an error."""
    import torch._dynamo.config as config

    limit = recompile_limit()
    accumulated = _first_config(config, "accumulated_recompile_limit", "accumulated_cache_size_limit")
    return {_first_config(config, "recompile_limit", "cache_size_limit"): limit,
            accumulated: max(limit, getattr(config, accumulated)),
            _first_config(config, "fail_on_recompile_limit_hit", "fail_on_cache_limit_hit"): True}


def _limit_errors() -> tuple[type, ...]:
    import torch._dynamo.exc as exc

    return tuple(getattr(exc, name) for name in ("FailOnRecompileLimitHit", "FailOnCacheLimitHit")
                 if hasattr(exc, name))


@cache
def _compiled(backend: str):
    import torch._dynamo

    compiled = torch.compile(torch.nn.attention.flex_attention.flex_attention, backend=backend)
    limit_errors = _limit_errors()

    def call(*args, **kwargs):
        # Patched per call, not process-wide: a model compiled whole keeps torch's own limits.
        try:
            with torch._dynamo.config.patch(_limits()):
                return compiled(*args, **kwargs)
        except limit_errors as err:
            raise RuntimeError(
                f"compiled FlexAttention: dynamo's recompile limit ({recompile_limit()} graphs, "
                f"{compile_count()} held) is reached; past it FlexAttention would run unfused. Set "
                f"{RECOMPILE_LIMIT_ENVIRONMENT} higher if this run needs more distinct score_mod x mask x "
                "shape graphs (TORCH_LOGS=recompiles names why each was compiled)") from err

    return call


def compile_count() -> int | None:
    """Graphs dynamo holds for flex_attention called through torch.compile in this process (any
    backend; `torch._dynamo.reset()` clears them). A model compiled whole traces FlexAttention into
    its own graph, which this does not count. None where this torch cannot list them."""
    from torch._dynamo import eval_frame
    from torch.nn.attention.flex_attention import flex_attention

    entries = getattr(eval_frame, "_debug_get_cache_entry_list", None)
    return None if entries is None else len(entries(flex_attention.__code__))


def call_mode(device) -> str:
    """How `flex_attend` runs FlexAttention on `device` when its caller is not compiled: "compiled"
    (through torch.compile with COMPILE_BACKEND) or "eager" (torch's unfused implementation). With
    dynamo disabled (TORCHDYNAMO_DISABLE=1) torch.compile would run it eagerly: "eager"."""
    import torch._dynamo.config as config

    if torch.device(device).type in COMPILED_ON and not getattr(config, "disable", False):
        return "compiled"
    return "eager"


def call_counts() -> Counter:
    """flex_attend calls so far by how they ran: "compiled" or "eager" (a copy; calls traced into a
    compiled caller's graph are not counted). The difference of two readings says how the calls in
    between ran."""
    return Counter(_CALLS)


def flex_attend(q, k, v, span: FlexSpan) -> torch.Tensor:
    """One FlexAttention call: compiled where `call_mode` says so (inline when the caller is compiled),
    eager elsewhere."""
    from torch.nn.attention.flex_attention import flex_attention

    k, v = k.to(q.dtype), v.to(q.dtype)
    if torch.compiler.is_compiling():
        return flex_attention(q, k, v, score_mod=span.score_mod, block_mask=span.block_mask)
    mode = call_mode(q.device)
    _CALLS[mode] += 1
    call = _compiled(COMPILE_BACKEND) if mode == "compiled" else flex_attention
    return call(q, k, v, score_mod=span.score_mod, block_mask=span.block_mask)
