"""GPU checks behind the SLURM profile and the paper-scale plan (run on one CUDA GPU):

1. a short training on the GPU: bf16 autocast, and which SDPA kernels the attention ran;
2. `torchrun --nproc_per_node 1` with NCCL (the multi-GPU code path on one device);
3. exact resume on the GPU with dropout (the CUDA RNG state restored from the checkpoint);
4. the `paper` preset model's training throughput (24 x 1024, L_tr 1024, bf16), tokens/s.

    PYTHONPATH=src python scripts/slurm/measure_gpu.py OUT_DIR

Every check writes its result (or its error) into OUT_DIR/gpu_checks.json; nothing here is
hard-coded into the plan: profiles/slurm/MEASURED.md quotes what a run printed.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import torch
import yaml

from lenex.config import ModelConfig, TrainConfig
from lenex.data.store import corpus_draft, corpus_meta
from lenex.device import autocast
from lenex.model import LanguageModel
from lenex.training.train import build_optimizer, train

ROOT = Path(__file__).resolve().parents[2]


def synthetic_corpus(folder: Path, n_tokens: int = 4_000_000, vocab: int = 50257) -> Path:
    """Random GPT-2-sized token ids in the prepared-corpus layout (no tokenizer on the GPU box).
    Throughput does not depend on the text; the loss checks only need it to fall."""
    rng = np.random.default_rng(0)
    # A learnable stream: a repeating pattern with noise, so the loss visibly falls.
    pattern = rng.integers(0, vocab, 997)
    meta = corpus_meta("synthetic", vocab, vocab - 1, source={"source": "synthetic"}, splits={})
    with corpus_draft(folder) as draft:
        for split, size in (("train", n_tokens), ("valid", n_tokens // 20), ("test", n_tokens // 20)):
            tokens = pattern[np.arange(size) % len(pattern)].astype(np.uint16)
            noise = rng.random(size) < 0.1
            tokens[noise] = rng.integers(0, vocab, noise.sum())
            meta["splits"][split] = draft.write_split(split, tokens, np.array([0, size]),
                                                      ["synthetic"], ["synthetic"])
        draft.write_meta(meta)
    return folder


def check(name, results, fn):
    started = time.time()
    try:
        results[name] = {"ok": True, **fn()}
    except Exception as err:  # one failing check must not hide the others
        results[name] = {"ok": False, "error": f"{type(err).__name__}: {err}", "trace": traceback.format_exc()[-2000:]}
    results[name]["seconds"] = round(time.time() - started, 1)
    print(name, json.dumps(results[name], indent=1), flush=True)


def sdpa_kernels(model_cfg: ModelConfig) -> dict:
    """CUDA kernels one bf16 forward+backward launched, filtered to attention kernels."""
    model = LanguageModel(model_cfg).cuda()
    x = torch.randint(0, 50257, (4, model_cfg.train_length), device="cuda")
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        with autocast(torch.device("cuda")):
            loss = model(x, x)[1]
        loss.backward()
        torch.cuda.synchronize()
    names = sorted({e.key for e in prof.key_averages()})
    attention = [n for n in names if any(k in n.lower() for k in ("flash", "fmha", "attention", "efficient", "cudnn"))]
    return {"attention_kernels": attention[:12], "matmul_dtype_bf16": any("bf16" in n.lower() for n in names)}


def short_training(data: Path, work: Path) -> dict:
    model_cfg = ModelConfig(n_layer=4, d_model=256, n_head=4, d_ff=1024, train_length=256, position="rope")
    cfg = TrainConfig(steps=60, batch_size=32, micro_batch_size=16, lr=1e-3, warmup=5, log_every=10,
                      checkpoint_every=1000)
    summary = train(model_cfg, cfg, data, work / "short.pt", work / "short", device="cuda")
    losses = [json.loads(line)["loss"] for line in (work / "short" / "metrics.jsonl").read_text().splitlines()]
    return {"losses_every_10_steps": [round(v, 4) for v in losses], "device": summary["device"],
            "kernels_rope_causal": sdpa_kernels(model_cfg),
            "kernels_alibi_bias": sdpa_kernels(dataclasses.replace(model_cfg, position="alibi"))}


def torchrun_nccl(data: Path, work: Path) -> dict:
    model_cfg = ModelConfig(n_layer=2, d_model=128, n_head=4, d_ff=512, train_length=128, position="xpos")
    cfg = TrainConfig(steps=20, batch_size=16, micro_batch_size=8, lr=1e-3, warmup=2, log_every=5, checkpoint_every=10)
    args = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1", "-m", "lenex.training.train",
            "--model-config", json.dumps(model_cfg.to_dict()), "--train-config", json.dumps(dataclasses.asdict(cfg)),
            "--data", str(data), "--out", str(work / "nccl.pt"), "--workdir", str(work / "nccl"), "--device", "cuda"]
    env = dict(os.environ, NCCL_DEBUG="INFO")
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    nccl_lines = [line.split("NCCL INFO")[-1].strip() for line in done.stderr.splitlines() if "NCCL INFO" in line]
    if done.returncode:
        raise RuntimeError(f"torchrun exited {done.returncode}: {done.stderr[-1500:]}")
    ckpt = torch.load(work / "nccl.pt", map_location="cpu", weights_only=False)
    return {"world_size": ckpt["world_size"], "final_loss": ckpt["final_loss"], "nccl_log": nccl_lines[:6], "nccl_log_lines": len(nccl_lines)}


def gpu_resume(data: Path, work: Path) -> dict:
    model_cfg = ModelConfig(n_layer=2, d_model=128, n_head=4, d_ff=512, train_length=128, position="xpos", dropout=0.1)
    cfg = TrainConfig(steps=30, batch_size=16, micro_batch_size=8, lr=1e-3, warmup=3, log_every=1, checkpoint_every=10)
    run = lambda name, **kw: train(model_cfg, cfg, data, work / f"{name}.pt", work / name, device="cuda", **kw)  # noqa: E731
    whole, again = run("whole"), run("again")
    assert run("part", stop_after=15) is None
    state = torch.load(work / "part" / "last.pt", map_location="cpu", weights_only=False)
    resumed = run("part")
    a = torch.load(work / "whole.pt", map_location="cpu", weights_only=False)["model"]
    b = torch.load(work / "part.pt", map_location="cpu", weights_only=False)["model"]
    c = torch.load(work / "again.pt", map_location="cpu", weights_only=False)["model"]
    return {"final_loss_uninterrupted": whole["final_loss"], "final_loss_second_uninterrupted": again["final_loss"],
            "final_loss_resumed": resumed["final_loss"], "cuda_rng_saved": state["cuda_rng"] is not None,
            "weights_equal_resumed": all(torch.equal(a[k], b[k]) for k in a),
            "weights_equal_rerun": all(torch.equal(a[k], c[k]) for k in a),
            "max_abs_weight_diff_resumed": max((a[k].float() - b[k].float()).abs().max().item() for k in a)}


def paper_throughput() -> dict:
    preset = yaml.safe_load((ROOT / "config/presets/paper.yaml").read_text())
    model_cfg = ModelConfig.from_dict({**preset["model"], "position": "xpos"})
    cfg = TrainConfig.from_dict(preset["train"])
    model = LanguageModel(model_cfg).cuda()
    optimizer = build_optimizer(model, cfg)
    device, length, out = torch.device("cuda"), model_cfg.train_length, {"params": model.num_parameters()}
    for micro in (8, 16, 32):
        x = torch.randint(0, model_cfg.vocab_size, (micro, length), device=device)
        torch.cuda.reset_peak_memory_stats()

        def micro_step():
            with autocast(device):
                loss = model(x, x)[1]
            loss.backward()

        for _ in range(3):
            micro_step()
        torch.cuda.synchronize()
        started, reps = time.time(), 10
        for _ in range(reps):
            micro_step()
        torch.cuda.synchronize()
        per_micro = (time.time() - started) / reps
        started = time.time()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        opt_seconds = time.time() - started
        n_micro = cfg.batch_size // micro
        step_seconds = n_micro * per_micro + opt_seconds
        out[f"micro{micro}"] = {"seconds_per_micro_batch": per_micro, "optimizer_seconds": opt_seconds,
                                "tokens_per_s": cfg.batch_size * length / step_seconds,
                                "peak_gib": torch.cuda.max_memory_allocated() / 2**30}
    return out


def paper_train_path(data: Path, work: Path) -> dict:
    """The real entry point (lenex.training.train.train) on the paper model: tokens/s between steps 2
    and 8 from metrics.jsonl (log_every 1: each record's tokens_per_s is its own step's)."""
    preset = yaml.safe_load((ROOT / "config/presets/paper.yaml").read_text())
    model_cfg = ModelConfig.from_dict({**preset["model"], "position": "xpos"})
    cfg = TrainConfig.from_dict({**preset["train"], "steps": 8, "batch_size": 64, "log_every": 1,
                                 "checkpoint_every": 1000, "eval_every": 0, "eval_batches": 1})
    train(model_cfg, cfg, data, work / "paper.pt", work / "paper", device="cuda")
    records = [json.loads(line) for line in (work / "paper" / "metrics.jsonl").read_text().splitlines()]
    tokens = cfg.batch_size * model_cfg.train_length
    seconds = {r["step"]: tokens / r["tokens_per_s"] for r in records}
    return {"micro_batch_size": cfg.micro_batch_size,
            "tokens_per_s_steps_2_to_8": 6 * tokens / sum(seconds[s] for s in range(3, 9)),
            "losses": [round(r["loss"], 3) for r in records]}


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    work = Path("/tmp/lenex_gpu")
    shutil.rmtree(work, ignore_errors=True)  # a warm machine keeps /tmp: start clean
    data = synthetic_corpus(work / "data")
    results = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda}
    check("short_training_bf16", results, lambda: short_training(data, work))
    check("torchrun_nproc1_nccl", results, lambda: torchrun_nccl(data, work))
    check("resume_on_gpu", results, lambda: gpu_resume(data, work))
    check("paper_throughput", results, paper_throughput)
    check("paper_train_path", results, lambda: paper_train_path(data, work))
    (out / "gpu_checks.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
