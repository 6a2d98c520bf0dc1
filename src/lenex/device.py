"""Where to run: the GPU when there is one (bf16 autocast, as the receptive-field paper
trained), else the CPU in fp32, where results are bit-for-bit reproducible."""

from __future__ import annotations

import contextlib

import torch


def pick_device(name: str = "auto") -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} asked for, but torch sees no CUDA device")
    return torch.device(name)


def autocast(device: torch.device):
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()
