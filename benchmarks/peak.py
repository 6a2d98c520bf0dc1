"""Peak: the machine's sustained dense matmul FLOP/s (fp32 on CPU, bf16 on GPU).

Everything else is measured against this number: model-FLOP utilisation = achieved model
FLOP/s / peak. Square matmuls of several sizes; the peak is the best size's median over a
sustained run, so one lucky sample does not set it.
"""

from __future__ import annotations

import logging
import time

import torch

from .common import markdown_table, summary, sync

log = logging.getLogger("benchmarks.peak")


def matmul_rate(n: int, dtype: torch.dtype, device: torch.device, seconds: float) -> dict:
    """FLOP/s of (n x n) @ (n x n) repeated for about `seconds`, one sample per call."""
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    torch.matmul(a, b, out=out)
    sync(device)
    samples, stop = [], time.perf_counter() + seconds
    while time.perf_counter() < stop or len(samples) < 3:
        start = time.perf_counter()
        for _ in range(8 if device.type == "cuda" else 1):  # GPU calls are too short to time singly
            torch.matmul(a, b, out=out)
        sync(device)
        samples.append((8 if device.type == "cuda" else 1) * 2 * n**3 / (time.perf_counter() - start))
    return summary(samples)


def run(device: torch.device, quick: bool) -> dict:
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    if device.type == "cuda":
        sizes, seconds = ([2048] if quick else [2048, 4096, 8192]), (0.3 if quick else 3.0)
    else:
        sizes, seconds = ([256] if quick else [256, 512, 1024, 2048]), (0.3 if quick else 4.0)
    rows = {}
    for n in sizes:
        rows[n] = matmul_rate(n, dtype, device, seconds)
        log.info("matmul n=%d %s: %.1f GFLOP/s median", n, dtype, rows[n]["median"] / 1e9)
    best = max(rows, key=lambda n: rows[n]["median"])
    result = {"dtype": str(dtype).replace("torch.", ""), "sizes": {str(n): r for n, r in rows.items()},
              "peak_flops": rows[best]["median"], "peak_size": best}
    if device.type == "cuda":  # for reference: what fp32 (TF32 off) matmuls reach on the same GPU
        result["fp32_flops"] = matmul_rate(4096, torch.float32, device, 0.3 if quick else 1.0)["median"]
    return result


def table(result: dict) -> str:
    rows = [[n, r["median"] / 1e9, r["min"] / 1e9, r["max"] / 1e9, r["n"]] for n, r in result["sizes"].items()]
    return (f"Peak {result['dtype']} matmul: {result['peak_flops'] / 1e9:.0f} GFLOP/s (n={result['peak_size']})\n"
            + markdown_table(["n", "GFLOP/s median", "min", "max", "samples"], rows))
