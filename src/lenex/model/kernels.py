"""The attention-kernel switch: which implementation computes attention in a run.

`reference`: SDPA over a plan of spans with materialised additive masks (`attention.py`), the
path every result so far was computed with, and the CPU default (fastest there). `flex`:
FlexAttention with each scheme's bias as a `score_mod` and each mask as a block mask
(`flex.py`), fused on CUDA. `auto` picks flex on CUDA and reference elsewhere.

The setting comes from, first to last: a model's own `attention_kernel` attribute, the process
default (`set_default_kernel`, the `--attention-kernel` option of every model-running entry
point), the environment variable LENEX_ATTENTION_KERNEL, else `auto`. The kernel a run used is
recorded beside its device (`kernel_record`), so a result says which path computed it.
"""

from __future__ import annotations

import os

import torch

KERNELS = ("auto", "reference", "flex")
ENVIRONMENT = "LENEX_ATTENTION_KERNEL"
_default: str | None = None


def check_kernel(name: str) -> str:
    if name not in KERNELS:
        raise ValueError(f"attention kernel {name!r} is not one of {', '.join(KERNELS)}")
    return name


def set_default_kernel(name: str | None) -> None:
    """The process-wide setting (None: back to the environment's, else auto)."""
    global _default
    _default = None if name is None else check_kernel(name)


def default_kernel() -> str:
    if _default is not None:
        return _default
    value = os.environ.get(ENVIRONMENT) or "auto"
    if value not in KERNELS:
        raise ValueError(f"{ENVIRONMENT}={value!r} is not one of {', '.join(KERNELS)}")
    return value


def resolve_kernel(name: str | None, device: torch.device | str) -> str:
    """`reference` or `flex` for a setting (None: the default) on a device: auto is flex on CUDA only."""
    name = check_kernel(name or default_kernel())
    if name != "auto":
        return name
    return "flex" if torch.device(device).type == "cuda" else "reference"


def kernel_record(model) -> dict:
    """What a run record says about its attention: {"attention_kernel": reference|flex} for a lenex
    model (on the device of its parameters), nothing for a model without the switch."""
    if not hasattr(model, "attention_kernel"):
        return {}
    device = next(model.parameters()).device
    return {"attention_kernel": resolve_kernel(model.attention_kernel, device)}


def add_kernel_option(parser) -> None:
    parser.add_argument("--attention-kernel", default=None, choices=KERNELS,
                        help=f"attention implementation (default: ${ENVIRONMENT}, else auto: flex on CUDA, "
                             "reference on CPU; docs/attention-kernels.md)")
