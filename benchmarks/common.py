"""Timing, memory and reporting helpers shared by the benchmark sections."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from lenex.files import atomic_write_text


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def interleaved(contenders: dict, reps: int, warmup: int, device: torch.device, progress=None) -> dict[str, list[float]]:
    """Seconds per call of each contender, measured round-robin (A B C A B C ...) so that
    background load on a shared machine hits all of them alike."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    sync(device)
    seconds = {name: [] for name in contenders}
    for _ in range(reps):
        for name, fn in contenders.items():
            sync(device)
            start = time.perf_counter()
            fn()
            sync(device)
            seconds[name].append(time.perf_counter() - start)
            if progress is not None:
                progress.update(1)
    return seconds


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def fit_exponent(xs, ys) -> float:
    """Least-squares slope of log(y) against log(x): y ~ x^slope."""
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-12)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def _proc_status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field} line")


class PeakMemory:
    """Peak memory of the enclosed block above what was in use when it started.

    CUDA: the allocator's peak. CPU: the process's peak RSS (VmHWM) after resetting it through
    /proc/self/clear_refs; run_all starts the process with a fixed glibc mmap threshold so large
    frees go back to the kernel and each block's peak is its own."""

    def __init__(self, device: torch.device):
        self.device, self.bytes = device, 0

    def __enter__(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
        else:
            Path("/proc/self/clear_refs").write_text("5")
            self.base = _proc_status("VmRSS")
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.bytes = torch.cuda.max_memory_allocated(self.device) - self.base
        else:
            self.bytes = _proc_status("VmHWM") - self.base
        return False


def machine(device: torch.device) -> dict:
    info = {
        "device": str(device),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "load_average_1_5_15": list(os.getloadavg()),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }
    try:
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                           if line.startswith("model name"))
    except (OSError, StopIteration):
        info["cpu"] = platform.processor()
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
    return info


def write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(payload, indent=2) + "\n")


def markdown_table(header: list[str], rows: list[list]) -> str:
    def cell(value):
        return f"{value:.3g}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
