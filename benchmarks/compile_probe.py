"""Does `torch.compile` speed up lenex's training step? Eager vs compiled, round-robin, one shape.

Not part of the default run (`--only compile` asks for it): the issue allows torch.compile only
where it measurably helps, and this is the measurement. Both contenders are the benchmark's lenex
step (learned positions, fused AdamW, grad clipping); the compiled one wraps the model in
`torch.compile` (default inductor backend). The first compiled step, which compiles, is timed
apart and excluded from the throughput.
"""

from __future__ import annotations

import time

import torch

from . import train_throughput as tt
from .common import interleaved, markdown_table, summary


def run(device: torch.device, quick: bool, shape: str = "small") -> dict:
    shape = "tiny" if quick else shape
    batch = 4 if quick else (tt.GPU_BATCH if device.type == "cuda" else tt.CPU_BATCH)[shape]
    reps = 2 if quick else 4
    x, y = tt._batch(shape, batch, device)
    torch.manual_seed(0)
    _, eager_step = tt.lenex_contender(shape, "learned", x, y, device)
    torch.manual_seed(0)
    model, _ = tt.lenex_contender(shape, "learned", x, y, device)
    compiled = torch.compile(model)
    optimizer = tt.build_optimizer(model, tt.TrainConfig(lr=tt.LR, grad_clip=tt.CLIP))
    compiled_step = tt._step_fn(model, optimizer, lambda: compiled(x, y)[1], device)
    start = time.perf_counter()
    compiled_step()
    compile_seconds = time.perf_counter() - start
    seconds = interleaved({"eager": eager_step, "compiled": compiled_step}, reps, 1, device)
    tokens = {name: summary([x.numel() / s for s in values]) for name, values in seconds.items()}
    return {"shape": shape, "batch": batch, "first_compiled_step_seconds": compile_seconds, "tokens_per_s": tokens,
            "compiled_over_eager": tokens["compiled"]["median"] / tokens["eager"]["median"]}


def table(result: dict) -> str:
    rows = [[name, f"{t['median']:.0f} [{t['min']:.0f}-{t['max']:.0f}]"] for name, t in result["tokens_per_s"].items()]
    return (f"torch.compile, lenex training step, shape {result['shape']} (batch {result['batch']}); first compiled "
            f"step {result['first_compiled_step_seconds']:.0f} s\n"
            + markdown_table(["step", "tokens/s median [min-max]"], rows)
            + f"\ncompiled / eager: {result['compiled_over_eager']:.2f}")
