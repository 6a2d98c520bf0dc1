"""The GPU side of the cost model (docs/gpu.md, "The gpu preset"): a training's tokens/s on one GPU
from the recorded H100 throughput, by model FLOPs, without measuring anything new.

Recorded points: every lenex training rate at a shape in `benchmarks/results/cuda-h100/train.json`
(each position scheme, and lenex's own peer row) and every `tokens_per_second_per_gpu` a preset
states at its own shape (`config/presets/paper.yaml`: LEX 24 x 1024 and the receptive-field paper's
T5, the slowest scheme measured). Each becomes a model-FLOPs utilisation,
MFU = tokens/s x flops_per_token / peak (the peak bf16 matmul rate of the same record). A shape is
then costed at the lowest MFU recorded at the recorded shape nearest to it in FLOPs per token (log
scale): no credit for anything faster that was not measured (torch.compile, fused attention).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks/results/cuda-h100/train.json"


def non_embedding_params(n_layer: int, d_model: int, d_ff: int) -> int:
    """Attention (4 d^2) and feed-forward (2 d d_ff) weights of every layer (norms and biases left out)."""
    return n_layer * (4 * d_model * d_model + 2 * d_model * d_ff)


def flops_per_token(n_layer: int, d_model: int, d_ff: int, vocab: int, train_length: int) -> int:
    """Training FLOPs per token: 6 N (N = non-embedding + one vocab x d embedding, tied as lenex
    ties it) plus attention's 12 n_layer d L (scores and weighted values, forward and backward)."""
    params = non_embedding_params(n_layer, d_model, d_ff) + vocab * d_model
    return 6 * params + 12 * n_layer * d_model * train_length


def mfu(tokens_per_s: float, flops: float, peak: float) -> float:
    return tokens_per_s * flops / peak


def recorded_points(record: dict, presets: list[dict]) -> list[dict]:
    """{flops, mfu, what} of every recorded rate: the benchmark's shapes and the presets' own."""
    result, peak = record["result"], record["result"]["peak_flops"]
    points = []
    for name, shape in result["shapes"].items():
        layers, width, _, length = shape["layers_width_heads_tokens"]
        flops = flops_per_token(layers, width, 4 * width, 50257, length)
        rates = {f"scheme {k}": v["tokens_per_s"]["median"] for k, v in shape["schemes"].items()}
        rates["lenex"] = shape["peers"]["lenex"]["tokens_per_s"]["median"]
        points += [{"flops": flops, "mfu": mfu(rate, flops, peak), "what": f"train.json {name}: {what}"}
                   for what, rate in rates.items()]
    for preset in presets:
        for paper, view in [(None, preset), *sorted((preset.get("papers") or {}).items())]:
            train = (view.get("resources") or {}).get("train") or {}
            if "tokens_per_second_per_gpu" not in train or "model" not in view:
                continue
            model = {**preset["model"], **view["model"]}
            flops = flops_per_token(model["n_layer"], model["d_model"], model["d_ff"], 50257, model["train_length"])
            points.append({"flops": flops, "mfu": mfu(train["tokens_per_second_per_gpu"], flops, peak),
                           "what": f"preset {preset['name']} {paper or 'lex'}: {train.get('throughput_source', '')}"})
    return points


def costed_mfu(flops: float, points: list[dict]) -> dict:
    """The lowest MFU recorded at the recorded shape nearest to `flops` (log distance)."""
    if not points:
        raise ValueError("no recorded GPU throughput to cost a shape with")
    nearest = min(abs(math.log(p["flops"] / flops)) for p in points)
    same = [p for p in points if abs(abs(math.log(p["flops"] / flops)) - nearest) < 1e-9]
    return min(same, key=lambda p: p["mfu"])


def tokens_per_s(shape: dict, points: list[dict], peak: float) -> tuple[float, dict]:
    """(tokens/s on one recorded GPU, the point it was costed from) of a training shape."""
    flops = flops_per_token(shape["n_layer"], shape["d_model"], shape["d_ff"], shape["vocab"], shape["train_length"])
    point = costed_mfu(flops, points)
    return point["mfu"] * peak / flops, point


def load_record(path=RECORD) -> dict:
    return json.loads(Path(path).read_text())
