"""Tables that depend only on positions, built once per shape and reused across layers and steps.

Rotary cos/sin (with xPos's scales folded in) and fixed biases (ALiBi, Sandwich, smoothed
Sandwich; T5's buckets, KERPLE's distances) are functions of the position ids, the dtype and the
device alone. Rebuilding them in every layer of every step is pure overhead (float64 exps for
xPos), so schemes look them up here when the positions are a known contiguous run.

Which positions are cached: only tensors made by `contiguous_positions` (the model's default
0..T-1 and the cache-window scorer's steps), recognised by a mark set at creation, never by
comparing values (that would synchronise a GPU every forward). Explicit position ids, with
gaps or not, take the general path and are computed afresh, as before.

Keys hold the dtype, the device and whether inference mode is on (an inference tensor must
not leak into training), so nothing stale is returned after `.to(...)`, a dtype change or a
switch between evaluation and training. The cache is a small LRU and refuses tables above
`max_elements` (a full (H, L, L) bias at evaluation lengths would otherwise stay resident).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch

_RUN = "_lenex_run"  # attribute on a positions tensor: (start, length) of the run it holds


def contiguous_positions(start: int, end: int, device=None) -> torch.Tensor:
    """arange(start, end) marked as a contiguous run, so position tables for it are cached."""
    positions = torch.arange(start, end, device=device)
    setattr(positions, _RUN, (int(start), int(end) - int(start)))
    return positions


def run_of(positions: torch.Tensor) -> tuple[int, int] | None:
    """(start, length) for a tensor from `contiguous_positions`, None for any other tensor."""
    return getattr(positions, _RUN, None)


def _numel(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (tuple, list)):
        return sum(_numel(v) for v in value)
    return sum(_numel(v) for v in vars(value).values()) if hasattr(value, "__dict__") else 0


class TableCache:
    """A small LRU of position tables. `enabled = False` turns it into a pass-through."""

    def __init__(self, capacity: int = 8, max_elements: int = 2**24):
        self.capacity, self.max_elements = capacity, max_elements
        self.enabled = True
        self._entries: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def get(self, key: tuple, build: Callable[[], Any]) -> Any:
        """The table for `key`, built by `build()` (without autograd) on the first request."""
        if not self.enabled or torch.compiler.is_compiling():
            return build()
        key = (*key, torch.is_inference_mode_enabled())
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        with torch.no_grad():
            value = build()
        if _numel(value) <= self.max_elements:
            self._entries[key] = value
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return value
