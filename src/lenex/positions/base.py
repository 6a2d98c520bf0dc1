"""The interface every position scheme implements, plus helpers shared by the schemes.

Positions are integer tensors of *original* position ids. They may have gaps (segmented
training keeps each token's original position), so every scheme computes from the given
values and never from arange(T).
"""

from __future__ import annotations

import inspect
import re

import torch
from torch import nn

from ..config import NoOptions, build_dataclass
from ..registry import Registry
from .cache import TableCache, run_of

#: A registry name: it becomes a preset's `positions` key, a variant's `position` and a part of code
#: stamp paths, so it is one word of letters, digits, '_' and '-' (`log-distance`). The schemas'
#: scheme-name patterns are this one (tests/test_scheme_interface.py checks them).
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class PositionScheme(nn.Module):
    """Base class: by default a scheme adds nothing, rotates nothing and biases nothing.

    Everything the model and its configs ask of a scheme is a method or attribute declared here
    with that default; a scheme overrides what it does differently, so no code outside the scheme
    names it."""

    name: str = ""
    Options: type = NoOptions  # a dataclass of the scheme's options (lenex.config.build_dataclass)
    learned_bias: bool = False  # True: bias() depends on parameters, so attention plans are not cached
    # The model's sizes, set by __init__ (declared here: the attention kernels ask for head_dim).
    d_model: int
    n_heads: int
    head_dim: int
    train_length: int  # L_tr, the model's training length (ModelConfig.train_length): a learned table's rows

    def __init__(self, options, *, d_model: int, n_heads: int, head_dim: int, train_length: int):
        super().__init__()
        self.check_sizes(d_model=d_model, n_heads=n_heads, head_dim=head_dim, train_length=train_length)
        self.options = options
        self.d_model, self.n_heads, self.head_dim, self.train_length = d_model, n_heads, head_dim, train_length
        self.tables = TableCache()  # position-only tables, reused across layers and steps

    @classmethod
    def check_sizes(cls, *, d_model: int, n_heads: int, head_dim: int, train_length: int) -> None:
        """Raise one ValueError naming the scheme when it cannot serve a model of these sizes.
        Called by __init__, and when the DAG is built (lenex.pipeline.variants), without building."""

    def _apply(self, fn, *args, **kwargs):
        # .to()/.half()/.cuda(): drop tables built for the old device or dtype now, not at eviction.
        self.tables.clear()
        return super()._apply(fn, *args, **kwargs)

    def cached(self, what: str, q_pos, k_pos, build, *, relative: bool = False, dtype=None):
        """`build()`, looked up in the table cache when both position tensors are marked runs.

        relative=True: the table depends on q - k only, so runs shifted together share an entry."""
        q_run, k_run = run_of(q_pos), run_of(k_pos)
        if q_run is None or k_run is None:
            return build()
        runs = (q_run[0] - k_run[0], q_run[1], k_run[1]) if relative else (q_run, k_run)
        return self.tables.get((what, runs, dtype, q_pos.device), build)

    def embed(self, positions: torch.Tensor) -> torch.Tensor | None:
        """(T,) -> (T, D) or (B, T) -> (B, T, D), added to the token embeddings."""
        return None

    def rotate(self, q, k, q_pos, k_pos) -> tuple[torch.Tensor, torch.Tensor]:
        """q: (B, H, Tq, hd), k: (B, H, Tk, hd); returns transformed (q, k)."""
        return q, k

    def bias(self, q_pos, k_pos) -> torch.Tensor | None:
        """Additive bias on the scaled logits: (H, Tq, Tk), or (B, H, Tq, Tk) for batched positions."""
        return None

    @property
    def adds_bias(self) -> bool:
        """Whether attention must ask for a bias: False (neither `bias` nor `score_mod` overridden)
        lets a causal plan take SDPA's is_causal path without building one."""
        kind = type(self)
        return kind.bias is not PositionScheme.bias or kind.score_mod is not PositionScheme.score_mod

    def score_mod(self, q_pos, k_pos):
        """The additive bias as a FlexAttention score_mod, `fn(score, b, h, q_idx, kv_idx) -> score + bias`,
        where q_idx, kv_idx index q_pos, k_pos ((T,) or (B, T)): `pair_distance` gives q_pos - k_pos.
        It must equal `bias` at every pair. None: no bias, or (a scheme that overrides `bias` but not
        this) none declared, so attention takes the reference path (lenex.model.flex.fallback_reason)."""
        return None

    def span_scale_rows(self, positions: torch.Tensor) -> int | None:
        """None: `rotate` applies the scheme's q/k scales (if any) over the whole sequence. An int:
        one reference for all these positions would take the scales out of float32 range, so
        attention applies `span_scales` per span of at most that many queries (xPos, long inputs),
        to q and k that `rotate_unscaled` turned."""
        return None

    def span_scales(self, q_pos, k_pos) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(q_scale, k_scale) of one span of a plan cut by `span_scale_rows`, broadcastable to its
        (B, H, T, hd) q and k; (None, None): no scales."""
        return None, None

    def rotate_unscaled(self, q, k, q_pos, k_pos) -> tuple[torch.Tensor, torch.Tensor]:
        """`rotate` without the q/k scales that `span_scales` applies per span instead. A scheme
        without scales rotates as always."""
        return self.rotate(q, k, q_pos, k_pos)


def scheme_classes(module, given: str) -> list[type]:
    """The PositionScheme subclasses with a `name` that a scheme file from outside the tree defines
    (it need not know the registry); a name that could not name a preset key or a file is refused."""
    found = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
             if issubclass(cls, PositionScheme) and cls.__module__ == module.__name__ and cls.name]
    if not found:
        raise ValueError(f"position scheme module {given!r} defines no PositionScheme subclass with a `name`")
    for cls in found:
        if not NAME_PATTERN.match(cls.name):
            raise ValueError(f"position scheme {cls.name!r} of module {given!r}: a scheme name is letters, digits, "
                             "'_' and '-' (it names preset keys, variants' schemes and files)")
    return found


#: The position schemes by `name`: each built-in one registers itself (`@POSITIONS.register`) in its
#: module of this package; a scheme of your own is a file named by the config (`position_module`).
POSITIONS = Registry("position scheme", members="lenex.positions.*", collect=scheme_classes)


def make_options(scheme: str, options_cls: type, options: dict | None):
    """Build the scheme's options dataclass; an unknown key raises a ValueError naming it."""
    return build_dataclass(options_cls, dict(options or {}), "option", context=f"position scheme {scheme!r}: ")


def relative_distance(q_pos: torch.Tensor, k_pos: torch.Tensor) -> torch.Tensor:
    """q_pos - k_pos as (..., Tq, Tk); >= 0 for the causal pairs a query may attend."""
    return q_pos.unsqueeze(-1) - k_pos.unsqueeze(-2)


def per_head(values, distance: torch.Tensor) -> torch.Tensor:
    """Per-head constants shaped (H, 1, 1) to broadcast against (..., 1, Tq, Tk)."""
    values = torch.as_tensor(values, dtype=torch.float32, device=distance.device)
    return values.view(-1, 1, 1)


# Flex's kernels work on tiles of 128 queries and keys and may evaluate a score_mod on the padded
# rows of a last, partial tile: position tables are padded to a whole tile so no lookup leaves them.
_TILE = 128


def _position_at(positions: torch.Tensor):
    """fn(b, idx) -> the position id at sequence index idx (of sequence b for batched positions)."""
    pad = -positions.shape[-1] % _TILE
    table = torch.cat((positions, positions[..., -1:].expand(*positions.shape[:-1], pad)), dim=-1)
    if table.dim() == 1:
        return lambda b, idx: table[idx]
    return lambda b, idx: table[b, idx]


def pair_distance(q_pos: torch.Tensor, k_pos: torch.Tensor):
    """fn(b, q_idx, kv_idx) -> q position - k position (int64), the score_mod form of
    `relative_distance`. Marked runs (contiguous_positions) need no lookup: an index difference."""
    q_run, k_run = run_of(q_pos), run_of(k_pos)
    if q_run is not None and k_run is not None:
        shift = q_run[0] - k_run[0]
        return lambda b, q_idx, kv_idx: q_idx - kv_idx + shift
    q_at, k_at = _position_at(q_pos), _position_at(k_pos)
    return lambda b, q_idx, kv_idx: q_at(b, q_idx) - k_at(b, kv_idx)


def largest_distance(q_pos: torch.Tensor, k_pos: torch.Tensor) -> int:
    """max |q - k| over all pairs: the size a table indexed by distance needs (a host sync unless
    both are marked runs)."""
    q_run, k_run = run_of(q_pos), run_of(k_pos)
    if q_run is not None and k_run is not None:
        (q_start, q_len), (k_start, k_len) = q_run, k_run
        return max(q_start + q_len - 1 - k_start, k_start + k_len - 1 - q_start, 0)
    if not q_pos.numel() or not k_pos.numel():
        return 0
    return int(max(q_pos.max() - k_pos.min(), k_pos.max() - q_pos.min(), 0))
