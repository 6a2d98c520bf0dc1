"""The Python stages of scripts/gpu/check.sh (docs/gpu.md): each writes one JSON file to --out and
stops itself before --seconds are spent (the shell's `timeout` is the backstop). `--dry-run`
runs a stage on the CPU at toy sizes in seconds (tests/test_gpu_check.py), to prove it runs.

    python scripts/gpu/check.py env|bench|train-eval|segmented-memory --out DIR [--seconds S] [--dry-run]

- env: torch, CUDA, the GPU, and its measured bf16 matmul peak (the MFU denominator);
- bench: the trainer's step at the two papers' shapes (receptive field 12 x 768, L 512; LEX
  24 x 1024, L 1024) for every position scheme, beside Hugging Face GPT-2 with SDPA; each scheme
  first under fused SDPA kernels only (`fused_only`: whether it trains without the math kernel);
  tokens/s and MFU;
- train-eval: a short training through lenex.training.train.train (compile and all: its record), then the
  loss and peak memory at 1, 2, 4 and 8 x L_tr;
- segmented-memory: one continued-pretraining step of each released 1.x-billion model (random
  weights of its published shape, nothing downloaded) at the gpu preset's micro-batch with its
  memory savings, peak memory beside lenex.segmented.memory's estimate.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from lenex.config import ModelConfig, TrainConfig  # noqa: E402
from lenex.device import autocast  # noqa: E402
from lenex.files import read_yaml  # noqa: E402

SCHEMES = ["learned", "sinusoidal", "rope", "xpos", "alibi", "kerple", "t5", "sandwich", "smoothed_sandwich", "none"]
SHAPES = {  # (layers, width, heads, L, batch): the papers' models
    "receptive-field": (12, 768, 12, 512, 16),
    "lex": (24, 1024, 16, 1024, 8),
}
DRY_SHAPES = {"toy": (1, 32, 2, 16, 2)}
VOCAB = 50257


class Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def _write(out: Path, name: str, record: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(json.dumps({"stage": name, "written": str(out / f"{name}.json")}))


def matmul_peak(device, size: int, reps: int) -> float:
    """FLOP/s of a square bf16 (CPU: fp32) matmul, the best of `reps` timings."""
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))
    best = float("inf")
    for _ in range(reps + 1):
        _sync(device)
        start = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best


def stage_env(device, dry: bool, deadline: Deadline) -> dict:
    record = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
              "device": str(device)}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        record.update(gpu=props.name, memory_gib=props.total_memory / 2**30, capability=[props.major, props.minor])
    try:
        import transformers
        record["transformers"] = transformers.__version__
    except ImportError as err:
        record["transformers"] = f"missing: {err}"
    record["peak_flops"] = matmul_peak(device, 256 if dry else 8192, 2 if dry else 10)
    return record


def _fused_only(device):
    """SDPA restricted to its fused kernels (flash, memory-efficient, cuDNN): the math fallback raises."""
    if device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION])


def _timed_steps(step, device, warmup: int, steps: int) -> float:
    for _ in range(warmup):
        step()
    _sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    return (time.perf_counter() - start) / steps


def _lenex_step(shape, position, device):
    from lenex.model import LanguageModel
    from lenex.training.train import build_optimizer

    layers, width, heads, length, batch = shape
    cfg = ModelConfig(n_layer=layers, d_model=width, n_head=heads, d_ff=4 * width, vocab_size=VOCAB, dropout=0.0,
                      position=position, train_length=length)
    model = LanguageModel(cfg).to(device).train()
    optimizer = build_optimizer(model, TrainConfig(lr=1e-4, grad_clip=2.0))
    x = torch.randint(0, VOCAB, (batch, length), device=device)

    def step():
        with autocast(device):
            loss = model(x, x)[1]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def _hf_step(shape, device):
    from transformers import GPT2Config, GPT2LMHeadModel

    layers, width, heads, length, batch = shape
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=length, n_embd=width, n_layer=layers, n_head=heads,
                     n_inner=4 * width, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel._from_config(cfg, attn_implementation="sdpa").to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    x = torch.randint(0, VOCAB, (batch, length), device=device)

    def step():
        with autocast(device):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def stage_bench(device, dry: bool, deadline: Deadline, peak: float | None) -> dict:
    from benchmarks.gpu_cost import flops_per_token

    warmup, steps = (1, 1) if dry else (2, 5)
    peak = peak or matmul_peak(device, 256 if dry else 8192, 2 if dry else 5)
    shapes = DRY_SHAPES if dry else SHAPES
    record = {"peak_flops": peak, "warmup": warmup, "steps": steps, "shapes": {}}
    for name, shape in shapes.items():
        layers, width, heads, length, batch = shape
        flops = flops_per_token(layers, width, 4 * width, VOCAB, length)
        rows = record["shapes"][name] = {"layers_width_heads_L_batch": list(shape), "flops_per_token": flops}
        for contender in ["hf_gpt2_sdpa", *SCHEMES]:
            if deadline.left() < (2 if dry else 15):
                rows[contender] = {"skipped": "the stage's time box"}
                continue
            row = rows[contender] = {}
            try:
                make = (lambda: _hf_step(shape, device)) if contender == "hf_gpt2_sdpa" else \
                    (lambda: _lenex_step(shape, contender, device))
                try:
                    with _fused_only(device):
                        seconds = _timed_steps(make(), device, warmup, steps)
                    row["fused_only"] = True
                except RuntimeError as err:  # no fused kernel took it: time it as it would train
                    row["fused_only"], row["fused_only_error"] = False, str(err).splitlines()[0][:300]
                    seconds = _timed_steps(make(), device, warmup, steps)
                tokens = batch * length / seconds
                row.update(tokens_per_s=tokens, mfu=tokens * flops / peak)
            except Exception as err:  # noqa: BLE001 - one scheme's failure is a finding, not the end
                row["error"] = f"{type(err).__name__}: {str(err)[:300]}"
            finally:
                if device.type == "cuda":
                    torch.cuda.empty_cache()
        hf = rows.get("hf_gpt2_sdpa", {}).get("tokens_per_s")
        for contender in SCHEMES:
            if hf and "tokens_per_s" in rows.get(contender, {}):
                rows[contender]["over_hf_gpt2"] = rows[contender]["tokens_per_s"] / hf
    return record


def synthetic_corpus(out: Path, n_tokens: int, seed: int = 0) -> Path:
    """A prepared corpus of a learnable stream (each document a repeated random phrase), GPT-2's
    vocabulary size, written as lenex.data.store writes one."""
    from lenex.data.store import DTYPE, corpus_draft, corpus_meta

    rng = np.random.default_rng(seed)
    with corpus_draft(out) as draft:
        splits = {}
        for split, size in (("train", n_tokens), ("valid", n_tokens // 4), ("test", n_tokens // 4)):
            docs = [np.tile(rng.integers(0, VOCAB - 1, 17), 256)[:4096] for _ in range(max(1, size // 4096))]
            tokens = np.concatenate([np.append(d, VOCAB - 1) for d in docs]).astype(DTYPE)
            offsets = np.cumsum([0] + [len(d) + 1 for d in docs])
            splits[split] = draft.write_split(split, tokens, offsets, [f"{split}{i}" for i in range(len(docs))],
                                              ["synthetic"] * len(docs))
        draft.write_meta(corpus_meta("synthetic", VOCAB, VOCAB - 1, source={"source": "synthetic"}, splits=splits))
    return out


def stage_train_eval(device, dry: bool, deadline: Deadline) -> dict:
    from lenex.training.train import train

    layers, width, heads, length = (1, 32, 2, 16) if dry else (6, 384, 6, 256)
    steps, batch = (3, 4) if dry else (60, 32)
    record = {"shape": [layers, width, heads, length], "steps": steps, "batch": batch, "schemes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        data = synthetic_corpus(Path(tmp) / "data", 20_000 if dry else 2_000_000)
        for index, position in enumerate(("alibi", "t5", "rope")):
            if index == 1 and "LENEX_COMPILE" not in os.environ:
                os.environ["LENEX_COMPILE"] = "0"  # the first run shows compiling; the others save its minute
            if deadline.left() < (2 if dry else 30):
                record["schemes"][position] = {"skipped": "the stage's time box"}
                continue
            model_cfg = ModelConfig(n_layer=layers, d_model=width, n_head=heads, d_ff=4 * width, vocab_size=VOCAB,
                                    dropout=0.0, position=position, train_length=length)
            cfg = TrainConfig(steps=steps, batch_size=batch, lr=1e-3, warmup=steps // 10, log_every=max(1, steps // 3),
                              checkpoint_every=steps, eval_batches=1)
            row = record["schemes"][position] = {}
            try:
                started = time.perf_counter()
                summary = train(model_cfg, cfg, data, Path(tmp) / f"{position}.pt", Path(tmp) / position, device=str(device))
                row.update(seconds=time.perf_counter() - started, final_loss=summary["final_loss"],
                           valid_loss=summary["valid_loss"], compile=summary.get("compile"))
                row["eval"] = _eval_lengths(Path(tmp) / f"{position}.pt", length, device)
            except Exception as err:  # noqa: BLE001
                row["error"] = f"{type(err).__name__}: {str(err)[:400]}"
    return record


def _eval_lengths(checkpoint: Path, length: int, device) -> list[dict]:
    """Loss and CUDA peak memory of one sequence at 1, 2, 4, 8 x L_tr (no grad, autocast)."""
    from lenex.records.checkpoint import load_model

    model = load_model(checkpoint)[0].to(device).eval()
    rows = []
    for multiple in (1, 2, 4, 8):
        x = torch.randint(0, VOCAB - 1, (1, multiple * length), device=device)
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
        with torch.no_grad(), autocast(device):
            loss = model(x, x)[1].item()
        peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
        rows.append({"multiple": multiple, "tokens": multiple * length, "loss": loss, "peak_mib": peak})
    return rows


def stage_segmented_memory(device, dry: bool, deadline: Deadline) -> dict:
    from lenex.hf.models import HFLanguageModel, tiny_random
    from lenex.segmented.memory import RELEASED, MemorySettings, peak_gib

    seg = read_yaml(ROOT / "config/presets/gpu.yaml")["papers"]["segmented"]["experiment"]
    continued = seg["continued"]
    micro = 1 if dry else continued["micro_batch_size"]
    savings = {"activation_checkpointing": continued["activation_checkpointing"],
               "loss_chunk_tokens": continued["loss_chunk_tokens"]}
    record = {"micro_batch": micro, "savings": savings, "models": {}}
    for model_name in ("bloom", "pythia", "gpt2"):
        name = seg["hf_checkpoints"][model_name]
        length = 16 if dry else seg["train_lengths"].get(model_name, 1024)
        for saved in (True, False):
            key = f"{model_name}{'' if saved else ' (no savings)'}"
            if deadline.left() < (2 if dry else 25) or (not saved and model_name != "bloom"):
                continue
            row = record["models"][key] = {"checkpoint": name, "length": length}
            try:
                if dry:
                    model = tiny_random({"bloom": "bloom", "pythia": "gpt_neox", "gpt2": "gpt2"}[model_name])
                else:
                    model = HFLanguageModel(_released_shape(name, device), name)
                model = model.to(device).train()
                if saved:
                    model.save_memory(**savings)
                row["estimate_gib"] = peak_gib(RELEASED[name], MemorySettings(
                    micro, length, saved and savings["activation_checkpointing"],
                    savings["loss_chunk_tokens"] if saved else None))
                row.update(_one_step_peak(model, micro, length, device))
            except torch.cuda.OutOfMemoryError as err:
                row["error"] = f"out of memory: {str(err).splitlines()[0][:200]}"
            except Exception as err:  # noqa: BLE001
                row["error"] = f"{type(err).__name__}: {str(err)[:300]}"
            finally:
                model = None
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    return record


def _released_shape(name: str, device):
    """A randomly initialised model of the released checkpoint's published shape, built on `device`."""
    import transformers

    from lenex.segmented.memory import RELEASED

    arch = RELEASED[name]
    if "gpt2" in name:
        config = transformers.GPT2Config(n_layer=arch.n_layer, n_embd=arch.d_model, n_head=arch.n_head,
                                         n_inner=arch.d_ff, vocab_size=arch.vocab, n_positions=1024)
    elif "pythia" in name:
        config = transformers.GPTNeoXConfig(num_hidden_layers=arch.n_layer, hidden_size=arch.d_model,
                                            num_attention_heads=arch.n_head, intermediate_size=arch.d_ff,
                                            vocab_size=arch.vocab, tie_word_embeddings=False, rotary_pct=0.25)
    else:
        config = transformers.BloomConfig(n_layer=arch.n_layer, hidden_size=arch.d_model, n_head=arch.n_head,
                                          vocab_size=arch.vocab)
    with torch.device(device):
        return transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)


def _one_step_peak(model, micro: int, length: int, device) -> dict:
    """Peak memory (GiB) and time of one training step: forward and backward under autocast,
    fused AdamW step (its state allocated), as lenex.training.train does."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=device.type == "cuda")
    vocab = model.hf.config.vocab_size
    x = torch.randint(0, vocab, (micro, length), device=device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    with autocast(device):
        loss = model(x, x)[1]
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    _sync(device)
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
    return {"peak_gib": peak, "step_seconds": time.perf_counter() - start, "loss": float(loss.detach())}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stage", choices=["env", "bench", "train-eval", "segmented-memory"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=120.0, help="this stage's own time box")
    parser.add_argument("--dry-run", action="store_true", help="CPU, toy sizes: proves the stage runs")
    args = parser.parse_args(argv)
    deadline = Deadline(args.seconds)
    if args.dry_run:
        device = torch.device("cpu")
    elif torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        raise SystemExit("no CUDA device: run with --dry-run on a CPU machine")
    out = Path(args.out)
    started = time.perf_counter()
    if args.stage == "env":
        record = stage_env(device, args.dry_run, deadline)
    elif args.stage == "bench":
        env = out / "env.json"
        peak = json.loads(env.read_text()).get("peak_flops") if env.is_file() else None
        record = stage_bench(device, args.dry_run, deadline, peak)
    elif args.stage == "train-eval":
        record = stage_train_eval(device, args.dry_run, deadline)
    else:
        record = stage_segmented_memory(device, args.dry_run, deadline)
    record.update(stage=args.stage, dry_run=args.dry_run, seconds=time.perf_counter() - started)
    _write(out, args.stage.replace("-", "_"), record)


if __name__ == "__main__":
    main()
