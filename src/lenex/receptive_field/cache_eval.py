"""Table 5: cache-window inference (receptive-field paper, Appendix B) under the last-token
protocol, and its entry point:

    python -m lenex.receptive_field.cache_eval --checkpoint M.pt --data DIR --train-length 512 \
        --multiples 8 16 32 --window-multiple 4 --span-multiple 32 --segments 1000 --out R.json

Each segment of L_ex tokens is read left to right with a per-layer key/value cache of the last
w̄ tokens (oldest dropped, cached ones reused: O(w̄ · L_ex)), and its last token is scored.
Two checks go into the result, on the model itself:
- equality: the cache window is mathematically the `sliding` mask of width w̄ over the whole
  segment (every layer's token attends to the same w̄ hidden states, same position ids); the
  largest |Δ NLL| between the two on the first segments is recorded. (It equals re-encoding the
  last w̄ tokens only for one layer with a relative scheme: tested in tests/test_cache_window.py.)
- speed: scoring every token after the first w̄ of a stretch of text with the cache (read `chunk`
  tokens per step, as the evaluation does; the numbers equal token-by-token reading, tested),
  against re-encoding each token's last w̄ tokens from scratch (what an absolute-position model
  must do), O(w̄ · T) against O(w̄² · T).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time

import numpy as np
import torch
from tqdm import tqdm

from ..scoring.cache_window import score_by_reencoding, score_with_cache
from ..records.checkpoint import provenance
from ..cli import add_run_options, run_cli, start_run
from ..data.store import load_split
from ..device import autocast, pick_device
from ..files import atomic_write_result
from ..records.provenance import add_expect_argument, load_checked
from ..masks import build_mask
from .last_token import last_token_nll, last_token_segments, segment_ends, tokens_digest

log = logging.getLogger("lenex.receptive_field.cache_eval")


def next_tokens(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-position targets (N, L - 1) of segments read as `inputs` whose last token is `targets`."""
    return torch.cat([inputs[:, 1:], targets[:, None]], dim=1)


@torch.no_grad()
def cache_last_token_nll(model, inputs, targets, window: int, chunk: int, batch_tokens: int) -> np.ndarray:
    """-log p of each segment's last token, read through a cache window of `window` tokens."""
    device = next(model.parameters()).device
    batch = max(1, batch_tokens // max(1, min(inputs.shape[1], window + chunk)))
    out = np.empty(len(inputs), dtype=np.float64)
    last = inputs.shape[1] - 1
    for start in range(0, len(inputs), batch):
        rows = slice(start, start + batch)
        idx = inputs[rows].to(device)
        with autocast(device):
            nll = score_with_cache(model, idx, next_tokens(inputs[rows], targets[rows]).to(device), window,
                                   chunk=chunk, score_from=last)
        out[rows] = nll[:, last].double().cpu().numpy()
    return out


def check_against_sliding_mask(model, inputs, targets, window: int, chunk: int) -> float:
    """max |cache-window NLL - sliding-mask NLL| of the last tokens of these segments."""
    cached = cache_last_token_nll(model, inputs, targets, window, chunk, batch_tokens=10**9)
    dense = last_token_nll(model, inputs, targets, build_mask("sliding", {"window": window}), batch_tokens=10**9)
    return float(np.abs(cached - dense).max())


def _synchronize(device) -> None:
    if device.type == "cuda":  # GPU work is asynchronous: wait for it before reading the clock
        torch.cuda.synchronize(device)


def time_scoring(model, tokens: torch.Tensor, window: int, scored: int, chunk: int = 1) -> dict:
    """Seconds to score the `scored` tokens after the first `window` of one stretch of text: with
    the cache window (`chunk` tokens per step), and by re-encoding each token's last w̄ tokens."""
    tokens = tokens.to(next(model.parameters()).device)
    idx, targets = tokens[None, :-1], tokens[None, 1:]
    started = time.perf_counter()
    cached = score_with_cache(model, idx, targets, window, chunk=chunk, score_from=window)
    _synchronize(tokens.device)
    cache_seconds = time.perf_counter() - started
    started = time.perf_counter()
    reencoded = score_by_reencoding(model, idx, targets, window)
    _synchronize(tokens.device)
    reencode_seconds = time.perf_counter() - started
    return {"timed_tokens": scored, "timed_chunk": chunk, "cache_seconds": cache_seconds, "reencode_seconds": reencode_seconds,
            "speedup": reencode_seconds / cache_seconds,
            "timed_mean_nll_cache": float(cached[0, window:].mean()),
            "timed_mean_nll_reencode": float(reencoded[0, window:].mean())}


def evaluate(model, tokens: np.ndarray, lengths: list[int], span: int, segments: int, window: int, chunk: int,
             batch_tokens: int) -> list[dict]:
    ends = segment_ends(len(tokens), span, segments)
    records = []
    for length in tqdm(lengths, desc="cache-window L_ex", unit="length"):
        inputs, targets = last_token_segments(tokens, ends, length)
        started = time.time()
        nll = cache_last_token_nll(model, inputs, targets, window, chunk, batch_tokens)
        mean = float(nll.mean())
        records.append({"length": int(length), "nll": mean, "ppl": math.exp(mean), "tokens": int(len(nll)),
                        "segments": int(len(nll)), "segment_nll": [round(float(v), 6) for v in nll],
                        "scored_tokens_sha256": tokens_digest(targets), "seconds": time.time() - started})
        log.info("cache window %d, L_ex=%d: ppl=%.3f", window, length, records[-1]["ppl"])
    return records


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--train-length", type=int, required=True, help="the preset's L_tr")
    parser.add_argument("--multiples", type=float, nargs="+", required=True, help="L_ex / L_tr")
    parser.add_argument("--window-multiple", type=float, default=4.0, help="w̄ / L_tr (paper: 2048 / 512)")
    parser.add_argument("--span-multiple", type=float, required=True)
    parser.add_argument("--segments", type=int, required=True)
    parser.add_argument("--chunk", type=int, default=0, help="tokens read per cache step (0: L_tr)")
    parser.add_argument("--check-segments", type=int, default=2, help="segments compared with the sliding mask")
    parser.add_argument("--timing-tokens", type=int, default=64, help="tokens scored in the speed comparison")
    parser.add_argument("--batch-tokens", type=int, default=16384)
    add_run_options(parser)
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    start_run(args)
    from .targets import lengths as to_lengths

    model, payload = load_checked(args.checkpoint, args.data, args.expect, args.out)
    model.to(pick_device(args.device))
    cfg = model.config
    if cfg.mask != "causal":
        raise ValueError(f"cache-window inference reads a causal model; this one was trained with {cfg.mask!r}")
    window, span = to_lengths([args.window_multiple, args.span_multiple], args.train_length)
    lengths = to_lengths(args.multiples, args.train_length)
    chunk = args.chunk or args.train_length
    tokens = load_split(args.data, args.split).tokens
    records = evaluate(model, tokens, lengths, span, args.segments, window, chunk, args.batch_tokens)
    ends = segment_ends(len(tokens), span, args.segments)[: args.check_segments]
    check_inputs, check_targets = last_token_segments(tokens, ends, lengths[0])
    check = {"max_abs_diff_vs_sliding_mask": check_against_sliding_mask(model, check_inputs, check_targets, window, chunk),
             "checked_segments": len(ends), "checked_length": lengths[0]}
    stretch = torch.from_numpy(np.asarray(tokens[: window + args.timing_tokens + 1], dtype=np.int64))
    check.update(time_scoring(model, stretch, window, args.timing_tokens, chunk))
    log.info("check: %s", check)
    common = {"protocol": "cache-window", "mask": "cache-window", "window": window, "chunk": chunk,
              "split": args.split, "span": span, "train_length": cfg.train_length,
              "base_train_length": args.train_length, **provenance(args.checkpoint, model, payload),
              "attention_kernel": "reference",  # the key/value cache step always takes the reference spans
              "check": check, **json.loads(args.extra)}
    atomic_write_result(args.out, [{**r, **common} for r in records])


if __name__ == "__main__":
    run_cli(main)
