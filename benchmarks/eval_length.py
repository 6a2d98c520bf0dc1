"""Evaluation cost against length: time and peak memory of perplexity evaluation of one
sequence at 1, 2, 4, 8, 16 x L_tr, and the growth exponent fitted to the points (log-log).

Methods: full causal attention, blockwise (BCA, blocks of L_tr/2), sliding window (W = L_tr),
cache-window scoring (lenex.scoring.cache_window, w = L_tr, 64 new tokens per step: each step's queries
attend to the cached window plus the step's own tokens under the banded mask, which gives the
same numbers as one token at a time, tested in tests/test_cache_window.py) and,
for comparison with the cache, re-encoding every token's last L_tr tokens. Two schemes: ALiBi
(a bias: full attention materialises (H, L, L)) and xPos (rotary: full attention uses SDPA's
causal kernel). The model is untrained: cost does not depend on the weights.
"""

from __future__ import annotations

import logging
import time

import torch
from tqdm import tqdm

from lenex.scoring.cache_window import score_by_reencoding, score_with_cache
from lenex.config import ModelConfig
from lenex.masks import build_mask, default_mask_options
from lenex.model import LanguageModel

from .common import PeakMemory, fit_exponent, markdown_table, summary, sync

log = logging.getLogger("benchmarks.eval")

MULTIPLES = [1, 2, 4, 8, 16]


VOCAB_CHUNK = 256  # tokens projected to the vocabulary at a time: keeps the head's share of memory small


def _methods(train_length: int, cache_chunk: int) -> dict:
    masks = {name: build_mask(name, default_mask_options(name, train_length)) for name in ("causal", "blockwise", "sliding")}

    def nll_with(mask):
        return lambda m, x, y: m.token_nll(x, y, mask=mask, vocab_chunk=VOCAB_CHUNK)

    return {"full causal": nll_with(masks["causal"]),
            "blockwise (BCA)": nll_with(masks["blockwise"]),
            "sliding window": nll_with(masks["sliding"]),
            "cache window": lambda m, x, y: score_with_cache(m, x, y, window=train_length, chunk=cache_chunk),
            "re-encoding": lambda m, x, y: score_by_reencoding(m, x, y, window=train_length)}


MIN_MEASURABLE_BYTES = 2**20  # below a MiB, RSS peaks are page noise: an exponent fitted to them means nothing


def _memory_exponent(lengths: list[int], peaks: list[int]) -> float | None:
    """Growth exponent of the memory peaks, or None when some peak is too small to measure."""
    return fit_exponent(lengths, peaks) if min(peaks) >= MIN_MEASURABLE_BYTES else None


def _exponent_text(exponent: float | None) -> str:
    return "n/a (< 1 MiB)" if exponent is None else f"{exponent:.2f}"


def run(device: torch.device, quick: bool) -> dict:
    # cache_chunk: tokens read per cache step (1 would be the paper's token-by-token generation, same
    # numbers). One-token steps measure per-step overhead (Python on CPU, kernel launches on GPU):
    # with them the cache lost to re-encoding on this CPU (0.5-0.6x, commit 0cf614f), so 64 per step.
    if quick:
        shape, train_length, multiples, reps, cache_chunk = dict(n_layer=2, d_model=64, n_head=4), 32, [1, 2, 4], 1, 1
    elif device.type == "cuda":
        shape, train_length, multiples, reps, cache_chunk = dict(n_layer=12, d_model=768, n_head=12), 512, MULTIPLES, 2, 64
    else:
        # L_tr 256 so that 16 x L_tr reaches 4096, where full attention's (H, L, L) terms outweigh
        # the fixed costs (weights, vocabulary chunks) that hide them at L <= 1024.
        shape, train_length, multiples, reps, cache_chunk = dict(n_layer=2, d_model=256, n_head=8), 256, MULTIPLES, 1, 64
    results = {"model": {**shape, "train_length": train_length, "vocab": 50257}, "cache_chunk": cache_chunk,
               "vocab_chunk": VOCAB_CHUNK, "schemes": {}}
    generator = torch.Generator().manual_seed(0)
    for position in ["alibi", "xpos"]:
        torch.manual_seed(0)
        cfg = ModelConfig(**shape, d_ff=4 * shape["d_model"], position=position, train_length=train_length)
        model = LanguageModel(cfg).to(device).eval()
        per_method = {}
        methods = _methods(train_length, cache_chunk)
        with tqdm(total=len(methods) * len(multiples), desc=f"eval {position}", leave=False) as progress:
            for name, method in methods.items():
                points = []
                for multiple in multiples:
                    length = multiple * train_length
                    tokens = torch.randint(0, 50257, (1, length + 1), generator=generator).to(device)
                    x, y = tokens[:, :-1], tokens[:, 1:]
                    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
                        if multiple == multiples[0] or device.type == "cuda":
                            method(model, x, y)  # warm-up (kernels, allocator)
                        seconds, peak = [], 0
                        for _ in range(reps):
                            with PeakMemory(device) as memory:
                                sync(device)
                                start = time.perf_counter()
                                method(model, x, y)
                                sync(device)
                                seconds.append(time.perf_counter() - start)
                            peak = max(peak, memory.bytes)
                    points.append({"length": length, "seconds": summary(seconds), "peak_bytes": peak})
                    progress.update(1)
                lengths = [p["length"] for p in points]
                memory = [p["peak_bytes"] for p in points]
                per_method[name] = {
                    "points": points,
                    "time_exponent": fit_exponent(lengths, [p["seconds"]["median"] for p in points]),
                    "memory_exponent": _memory_exponent(lengths, memory),
                    # The growth once fixed costs no longer dominate: the fit over the three longest lengths.
                    "memory_exponent_longest": _memory_exponent(lengths[-3:], memory[-3:]),
                }
                log.info("%s %s: time ~ L^%.2f, memory ~ L^%s (longest three: L^%s)", position, name,
                         per_method[name]["time_exponent"], _exponent_text(per_method[name]["memory_exponent"]),
                         _exponent_text(per_method[name]["memory_exponent_longest"]))
        longest = {name: r["points"][-1]["seconds"]["median"] for name, r in per_method.items()}
        results["schemes"][position] = {
            "methods": per_method,
            "cache_speedup_over_reencoding_at_longest": longest["re-encoding"] / longest["cache window"],
        }
        del model
    return results


def table(result: dict) -> str:
    out = [f"Evaluation cost against length (model {result['model']})"]
    for position, entry in result["schemes"].items():
        methods = entry["methods"]
        lengths = [p["length"] for p in next(iter(methods.values()))["points"]]
        header = ["scheme", "method"] + [f"L={n}: s / MiB" for n in lengths] + ["time exp", "mem exp", "mem exp (3 longest)"]
        rows = []
        for name, r in methods.items():
            cells = [f"{p['seconds']['median']:.3g} / {p['peak_bytes'] / 2**20:.0f}" for p in r["points"]]
            rows.append([position, name, *cells, f"{r['time_exponent']:.2f}", _exponent_text(r["memory_exponent"]),
                         _exponent_text(r["memory_exponent_longest"]) if "memory_exponent_longest" in r else "-"])
        out.append(markdown_table(header, rows))
        out.append(f"cache window vs re-encoding at L={lengths[-1]}: "
                   f"{entry['cache_speedup_over_reencoding_at_longest']:.1f}x faster")
    return "\n".join(out)
