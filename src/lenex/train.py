"""Pretrain one model variant: `python -m lenex.train --model-config JSON --train-config JSON
--data DIR --out FILE --workdir DIR`.

Resumable and deterministic: batches are drawn from a generator seeded by (seed, step) and
the dropout RNG state is saved in every checkpoint, so a run interrupted and resumed gives
the same final loss, bit for bit on CPU, as an uninterrupted one.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from .checkpoint import save_checkpoint
from .cli import run_cli
from .config import ModelConfig, build_dataclass
from .data.tokens import load_split
from .device import autocast, pick_device
from .files import atomic_write
from .model import LanguageModel
from .schedule import learning_rate

log = logging.getLogger("lenex.train")


@dataclass
class TrainConfig:
    steps: int = 100
    batch_size: int = 8  # sequences per optimizer step
    micro_batch_size: int = 0  # sequences per forward pass; 0 = batch_size (no accumulation)
    lr: float = 3e-4
    end_lr: float = 0.0
    warmup: int = 10
    power: float = 1.0
    beta1: float = 0.9
    beta2: float = 0.98
    eps: float = 1e-6
    weight_decay: float = 0.01
    grad_clip: float = 2.0
    seed: int = 1
    log_every: int = 10
    checkpoint_every: int = 50
    eval_every: int = 0  # 0: validation loss only at the end
    eval_batches: int = 4

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        return build_dataclass(cls, values, "train config key")


def sample_windows(tokens: np.ndarray, length: int, count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` random (input, target) windows of `length` tokens, drawn by a generator seeded
    with `seed` alone, so any batch can be reproduced from its seed."""
    if len(tokens) < length + 2:
        raise ValueError(f"training split has {len(tokens)} tokens, fewer than one window of {length + 1}")
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(tokens) - length - 1, (count,), generator=generator).tolist()
    windows = torch.from_numpy(np.stack([np.asarray(tokens[s : s + length + 1], dtype=np.int64) for s in starts]))
    return windows[:, :-1], windows[:, 1:]


def batch_seed(seed: int, step: int) -> int:
    return seed * 1_000_003 + step


def build_optimizer(model: LanguageModel, cfg: TrainConfig) -> torch.optim.Optimizer:
    # Decay matrices only; norms, biases and position parameters (KERPLE, T5) are not decayed.
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (decay if param.dim() >= 2 and not name.startswith("position.") else no_decay).append(param)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    kwargs = dict(lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps)
    try:
        return torch.optim.AdamW(groups, fused=True, **kwargs)
    except (RuntimeError, TypeError):  # fused kernels are missing on some builds/devices
        return torch.optim.AdamW(groups, **kwargs)


@torch.no_grad()
def validation_loss(model: LanguageModel, tokens: np.ndarray, cfg: TrainConfig, length: int, device) -> float:
    model.eval()
    losses = []
    for i in range(cfg.eval_batches):
        x, y = sample_windows(tokens, length, cfg.micro_batch_size or cfg.batch_size, seed=10_000_019 + i)
        with autocast(device):
            losses.append(model(x.to(device), y.to(device))[1].item())
    model.train()
    return float(np.mean(losses))


def _resume(workdir: Path, model, optimizer, identity: dict) -> int:
    last = workdir / "last.pt"
    if not last.exists():
        return 0
    state = torch.load(last, map_location="cpu", weights_only=False)
    if state.get("identity") != identity:
        log.warning("ignoring %s: it was written for a different model/train config or data", last)
        return 0
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    log.info("resumed from %s at step %d", last, state["step"])
    return int(state["step"])


def _truncate_metrics(path: Path, step: int) -> None:
    if path.exists():
        kept = [line for line in path.read_text().splitlines() if line and json.loads(line).get("step", 0) <= step]
        path.write_text("".join(line + "\n" for line in kept))


def train(model_cfg: ModelConfig, cfg: TrainConfig, data_dir, out, workdir, stop_after: int | None = None,
          device: str = "auto") -> dict | None:
    """Train to `cfg.steps` (or stop early after `stop_after` steps of this run, leaving a
    resumable checkpoint). Returns the summary written into `out`, or None when stopped early."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    train_tokens = load_split(data_dir, "train").tokens
    valid_tokens = load_split(data_dir, "valid").tokens
    torch.manual_seed(cfg.seed)
    device = pick_device(device)
    model = LanguageModel(model_cfg).to(device)
    model.train()
    optimizer = build_optimizer(model, cfg)
    identity = {"model": model_cfg.to_dict(), "train": dataclasses.asdict(cfg), "data": str(Path(data_dir).resolve())}
    step = _resume(workdir, model, optimizer, identity)
    metrics_path = workdir / "metrics.jsonl"
    _truncate_metrics(metrics_path, step)
    micro = cfg.micro_batch_size or cfg.batch_size
    if cfg.batch_size % micro:
        raise ValueError(f"batch_size {cfg.batch_size} is not divisible by micro_batch_size {micro}")
    length, loss_value, started, run_steps = model_cfg.train_length, float("nan"), time.time(), 0
    progress = tqdm(total=cfg.steps, initial=step, desc=f"train {model_cfg.position}", unit="step", mininterval=5)
    with metrics_path.open("a") as metrics:
        while step < cfg.steps:
            if stop_after is not None and run_steps >= stop_after:
                progress.close()
                return None
            rate = learning_rate(step, lr=cfg.lr, warmup=cfg.warmup, total=cfg.steps, end_lr=cfg.end_lr, power=cfg.power)
            for group in optimizer.param_groups:
                group["lr"] = rate
            x, y = sample_windows(train_tokens, length, cfg.batch_size, batch_seed(cfg.seed, step))
            x, y = x.to(device), y.to(device)
            loss_value = 0.0
            for start in range(0, cfg.batch_size, micro):
                with autocast(device):
                    loss = model(x[start : start + micro], y[start : start + micro])[1] * (micro / cfg.batch_size)
                loss.backward()
                loss_value += loss.item()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip).item()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step, run_steps = step + 1, run_steps + 1
            progress.update(1)
            record = {"step": step, "loss": loss_value, "lr": rate, "grad_norm": grad_norm}
            if cfg.eval_every and step % cfg.eval_every == 0:
                record["valid_loss"] = validation_loss(model, valid_tokens, cfg, length, device)
            if step % cfg.log_every == 0 or step == cfg.steps or "valid_loss" in record:
                record["tokens_per_s"] = run_steps * cfg.batch_size * length / (time.time() - started)
                metrics.write(json.dumps(record) + "\n")
                metrics.flush()
                progress.set_postfix(loss=f"{loss_value:.3f}")
            if step % cfg.checkpoint_every == 0 and step < cfg.steps:
                state = {"identity": identity, "step": step, "model": model.state_dict(),
                         "optimizer": optimizer.state_dict(), "rng": torch.get_rng_state()}
                atomic_write(workdir / "last.pt", lambda tmp: torch.save(state, tmp))
    progress.close()
    summary = {
        "train_config": dataclasses.asdict(cfg),
        "step": step,
        "final_loss": loss_value,
        "valid_loss": validation_loss(model, valid_tokens, cfg, length, device),
        "device": str(device),
        "tokens_seen": step * cfg.batch_size * length,
        "params": model.num_parameters(),
        "wall_seconds_last_run": time.time() - started,
        "data": str(data_dir),
    }
    save_checkpoint(out, model, **summary)
    log.info("wrote %s: %s", out, {k: summary[k] for k in ("step", "final_loss", "valid_loss", "params")})
    return summary


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-config", required=True, help="JSON object of ModelConfig fields")
    parser.add_argument("--train-config", required=True, help="JSON object of TrainConfig fields")
    parser.add_argument("--data", required=True, help="prepared corpus directory (train/valid .bin + meta.json)")
    parser.add_argument("--out", required=True, help="final checkpoint path")
    parser.add_argument("--workdir", required=True, help="resumable state and metrics.jsonl")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch default)")
    parser.add_argument("--device", default="auto", help="auto (GPU if any), cpu, cuda, cuda:1 ...")
    parser.add_argument("--stop-after", type=int, default=None, help="stop after N steps of this run (resumable)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    model_cfg = ModelConfig.from_dict(json.loads(args.model_config))
    cfg = TrainConfig.from_dict(json.loads(args.train_config))
    train(model_cfg, cfg, args.data, args.out, args.workdir, stop_after=args.stop_after, device=args.device)


if __name__ == "__main__":
    run_cli(main)
