"""Pretrain one model variant: `python -m lenex.training.train --model-config JSON --train-config JSON
--data DIR --out FILE --workdir DIR`, or the same under `torchrun --nproc_per_node N -m lenex.training.train`.

Resumable and deterministic: batches are drawn from a generator seeded by (seed, step) and
the dropout RNG states (CPU and CUDA, of every rank) are saved in every checkpoint, so a run
interrupted and resumed gives the same final loss, bit for bit on CPU, as an uninterrupted one.

Data-parallel: under torchrun each rank draws the same global batch and trains on its slice
(DistributedDataParallel averages the gradients), so N processes see exactly the sequences one
process sees and the global batch stays the preset's `batch_size`; fewer devices accumulate
more micro-batches. Rank 0 alone writes checkpoints, metrics and logs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from ..records.checkpoint import FORMAT, read_checkpoint, save_checkpoint
from ..cli import run_cli
from ..config import ModelConfig, TrainConfig  # TrainConfig: re-exported for lenex.training.train's callers
from ..data.store import load_split
from . import distributed, resume
from ..device import autocast
from ..model import LanguageModel
from ..model.kernels import add_kernel_option, kernel_record, set_default_kernel
from ..records.provenance import check_labels, training_identity
from .checks import TrainingDiverged, check_finite, check_run_configs, check_split_sizes
from .guards import Guards, Terminated
from .resume import batch_seed, resume_training as _resume, save_state as _save_state, seed_rank as _seed_rank
from .speed import (CompiledForward, IntervalRate, StepStats, configure_device, defers_sync, is_fused,
                    skip_on_device, sync_point)
from .vocabulary import check_vocabulary, model_config_for_corpus

log = logging.getLogger("lenex.training.train")


def sample_windows(tokens: np.ndarray, length: int, count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` random (input, target) windows of `length` tokens, drawn by a generator seeded
    with `seed` alone, so any batch can be reproduced from its seed."""
    if len(tokens) < length + 2:
        raise ValueError(f"training split has {len(tokens)} tokens, fewer than one window of {length + 1}")
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(tokens) - length - 1, (count,), generator=generator).tolist()
    windows = torch.from_numpy(np.stack([np.asarray(tokens[s : s + length + 1], dtype=np.int64) for s in starts]))
    return windows[:, :-1], windows[:, 1:]


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


def learning_rate(step: int, *, lr: float, warmup: int, total: int, end_lr: float = 0.0, power: float = 1.0) -> float:
    """Rate for optimizer step `step` (0-based): linear warmup, then polynomial decay (fairseq's
    `polynomial_decay`, which the LEX paper's TorchScale code uses). lr*(step+1)/warmup during
    warmup, then (lr - end_lr) * (1 - progress)**power + end_lr, reaching end_lr at `total`."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if step >= total:
        return end_lr
    progress = (step - warmup) / max(1, total - warmup)
    return (lr - end_lr) * (1.0 - progress) ** power + end_lr


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


def train(model_cfg: ModelConfig, cfg: TrainConfig, data_dir, out, workdir, stop_after: int | None = None,
          device: str = "auto", *, init_from=None, batches=None, model_factory=None,
          run_identity: dict | None = None, labels: dict | None = None) -> dict | None:
    """Train to `cfg.steps` (or stop early after `stop_after` steps of this run, leaving a
    resumable checkpoint). Returns the summary written into `out`, or None when stopped early.
    Under torchrun every rank calls this; rank 0 writes, every rank returns the summary.

    Optional hooks for continued pretraining (all default to plain pretraining):
    init_from: a checkpoint whose weights start the run (same model config);
    batches: step -> {"x", "y", optional "positions", "loss_mask"}, the global batch of that
    step (a pure function of the step, so resuming stays exact) instead of random windows;
    model_factory: () -> the model to train (e.g. one with an extended position table);
    run_identity: what else makes this run itself (method, source checkpoint), so a resumed
    state written by another run is ignored;
    labels: what the caller calls this model (paper, variant, preset, ...), recorded in the
    checkpoint's identity (lenex.records.provenance) and checked by whoever loads it.

    One trainer per workdir (rank 0 holds its lock); SIGTERM saves the state after the step in
    progress and stops (lenex.training.guards)."""
    ctx = distributed.setup(device)
    configure_device(ctx.device)
    try:
        with Guards(workdir, ctx.is_main) as guards:
            return _train(model_cfg, cfg, data_dir, out, Path(workdir), stop_after, ctx,
                          _Hooks(init_from, batches, model_factory, run_identity, check_labels(labels), guards))
    finally:
        distributed.shutdown(ctx)


@dataclass
class _Hooks:
    init_from: str | None = None
    batches: object = None
    model_factory: object = None
    run_identity: dict | None = None
    labels: dict | None = None
    guards: Guards | None = None

    def build_model(self, model_cfg: ModelConfig):
        if self.model_factory is not None:
            return self.model_factory()
        model = LanguageModel(model_cfg)
        if self.init_from is not None:
            model.load_state_dict(read_checkpoint(self.init_from, expect=FORMAT)["model"])
        return model

    def identity(self) -> dict:
        extra = dict(self.run_identity or {})
        if self.init_from is not None:
            extra["init_from"] = str(Path(self.init_from).resolve())
            extra["init_from_sha256"] = resume.file_sha256(self.init_from)
        return {"run": extra} if extra else {}


@dataclass
class _Run:
    """What one training run holds from set-up to the final checkpoint."""
    model_cfg: ModelConfig
    cfg: TrainConfig
    ctx: distributed.Context
    hooks: _Hooks
    data_dir: object
    workdir: Path
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    identity: dict
    train_tokens: np.ndarray
    valid_tokens: np.ndarray
    per_rank: int  # sequences per rank and step
    micro: int  # sequences per forward pass
    forward: torch.nn.Module | None = None  # the model (or its DDP wrapper), compiled on CUDA (train_speed)
    saved_step: int | None = None  # the step of the state in last.pt, once there is one
    stats: StepStats | None = None  # the step's loss and flags, on the device
    stop_seen: bool = False  # SIGTERM reached some rank (as of the last sync point)
    deferred: bool = False  # non-finite steps skipped on the device, checked at sync points

    @property
    def length(self) -> int:
        return self.model_cfg.train_length


def _train(model_cfg: ModelConfig, cfg: TrainConfig, data_dir, out, workdir: Path, stop_after: int | None,
           ctx: distributed.Context, hooks: _Hooks) -> dict | None:
    run = _set_up(model_cfg, cfg, data_dir, workdir, ctx, hooks)
    step = _resume(workdir, run.model, run.optimizer, run.identity, ctx, cfg.seed)
    run.saved_step = step or None
    metrics_path = workdir / "metrics.jsonl"
    if ctx.is_main:
        resume.truncate_metrics(metrics_path, step)
    distributed.barrier(ctx)
    wrapped = run.model
    if ctx.distributed:
        wrapped = torch.nn.parallel.DistributedDataParallel(
            run.model, device_ids=[ctx.device] if ctx.device.type == "cuda" else None)
    run.forward = CompiledForward(wrapped, ctx.device)
    run.stats = StepStats(ctx.device)
    run.deferred = defers_sync(ctx.device) and is_fused(run.optimizer)
    loss_value, grad_norm, started, run_steps = float("nan"), float("nan"), time.time(), 0
    throughput = IntervalRate()  # tokens/s over each log interval (the metrics' tokens_per_s)
    stop_at = None if stop_after is None else step + stop_after
    seq_len = run.length  # tokens per training sequence (a `batches` hook may use another length)
    progress = tqdm(total=cfg.steps, initial=step, desc=f"train {model_cfg.position}", unit="step", mininterval=5,
                    disable=not ctx.is_main)
    metrics = metrics_path.open("a") if ctx.is_main else contextlib.nullcontext()
    with metrics:
        while step < cfg.steps:
            if stop_after is not None and run_steps >= stop_after:
                progress.close()
                return None
            _stop_if_terminated(run, step)
            rate = learning_rate(step, lr=cfg.lr, warmup=cfg.warmup, total=cfg.steps, end_lr=cfg.end_lr, power=cfg.power)
            for group in run.optimizer.param_groups:
                group["lr"] = rate
            x, y, extra = _global_batch(run, step)
            seq_len = x.shape[1]
            grad_norm_t = _optimizer_step(run, x, y, extra, step + 1)
            step, run_steps = step + 1, run_steps + 1
            throughput.add(cfg.batch_size * seq_len)
            progress.update(1)
            if not sync_point(step, cfg.steps, cfg.log_every, cfg.checkpoint_every, cfg.eval_every, stop_at,
                              run.deferred):
                run.hooks.guards.tick()
                continue
            loss_value, grad_norm = _read_step(run, step, grad_norm_t)
            record = {"step": step, "loss": loss_value, "lr": rate, "grad_norm": grad_norm}
            if cfg.eval_every and step % cfg.eval_every == 0:
                record["valid_loss"] = validation_loss(run.model, run.valid_tokens, cfg, run.length, ctx.device)
            if ctx.is_main and (step % cfg.log_every == 0 or step == cfg.steps or "valid_loss" in record):
                record["tokens_per_s"] = throughput.read()
                resume.append_record(metrics, record)
                progress.set_postfix(loss=f"{loss_value:.3f}")
            if step % cfg.checkpoint_every == 0 and step < cfg.steps:
                _save_state(workdir, ctx, run.identity, step, run.model, run.optimizer)
                run.saved_step = step
            run.hooks.guards.tick()
    progress.close()
    return _finish(run, out, step, loss_value, step * cfg.batch_size * seq_len, started)


def _stop_if_terminated(run: _Run, step: int) -> None:
    """After SIGTERM (on any rank): save the state at `step` unless it is saved, and stop."""
    asked = run.stop_seen if run.ctx.distributed else run.hooks.guards.termination.requested
    if not asked:
        return
    if step and step != run.saved_step:
        _save_state(run.workdir, run.ctx, run.identity, step, run.model, run.optimizer)
    where = f"state at step {step} saved in {run.workdir / 'last.pt'}" if step else "no step done, nothing to save"
    stopped_by = run.hooks.guards.termination.stopped_by
    raise Terminated(f"stopped by {stopped_by}: {where}; rerun the same command to resume")


def _set_up(model_cfg: ModelConfig, cfg: TrainConfig, data_dir, workdir: Path, ctx: distributed.Context,
            hooks: _Hooks) -> _Run:
    """Check the inputs, read the data, build the model and its optimizer (before any resume)."""
    per_rank, micro = distributed.local_batch(cfg.batch_size, ctx.world_size, cfg.micro_batch_size)
    check_run_configs(model_cfg.to_dict(), cfg.to_dict())
    check_vocabulary(model_cfg, data_dir, from_scratch=hooks.model_factory is None and hooks.init_from is None)
    # Windows are drawn from train (unless a batches hook brings its own) and valid: both must hold one.
    check_split_sizes(data_dir, model_cfg.train_length, ("train", "valid") if hooks.batches is None else ("valid",))
    workdir.mkdir(parents=True, exist_ok=True)
    train_tokens = load_split(data_dir, "train").tokens
    valid_tokens = load_split(data_dir, "valid").tokens
    torch.manual_seed(cfg.seed)  # the same initial weights on every rank
    model = hooks.build_model(model_cfg).to(ctx.device)
    model.train()
    if ctx.rank:
        _seed_rank(cfg.seed, ctx.rank)
    optimizer = build_optimizer(model, cfg)
    # What this run depends on, by content: a state saved under another identity is never resumed.
    identity = {"model": model_cfg.to_dict(), "train": cfg.to_dict(), "data": str(Path(data_dir).resolve()),
                "data_sha256": resume.data_fingerprint(data_dir), **hooks.identity()}
    return _Run(model_cfg, cfg, ctx, hooks, data_dir, workdir, model, optimizer, identity, train_tokens,
                valid_tokens, per_rank, micro)


def _global_batch(run: _Run, step: int) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """This rank's slice (x, y, extra inputs) of the step's global batch, on the device. Every
    rank draws the whole global batch from the (seed, step) generator and keeps its slice."""
    mine, device = distributed.rank_slice(run.cfg.batch_size, run.ctx.world_size, run.ctx.rank), run.ctx.device
    if run.hooks.batches is None:
        x, y = sample_windows(run.train_tokens, run.length, run.cfg.batch_size, batch_seed(run.cfg.seed, step))
        extra = {}
    else:
        batch = run.hooks.batches(step)
        x, y = batch["x"], batch["y"]
        extra = {k: batch[k][mine].to(device) for k in ("positions", "loss_mask") if batch.get(k) is not None}
    return x[mine].to(device), y[mine].to(device), extra


def _optimizer_step(run: _Run, x: torch.Tensor, y: torch.Tensor, extra: dict, step: int) -> torch.Tensor:
    """Forward and backward over the micro-batches, clip, step; the loss (averaged over ranks, with
    the SIGTERM flag in the same all-reduce) stays in run.stats; returns the gradient norm tensor.
    A non-finite loss or gradient norm never reaches the weights: on the host path the run stops
    before the optimizer step; on the deferred (CUDA) path fused AdamW skips it on the device and
    the run stops at the next sync point (_read_step)."""
    per_rank, micro, stats = run.per_rank, run.micro, run.stats
    stats.start_step()
    for start in range(0, per_rank, micro):
        last_micro = start + micro >= per_rank
        # DDP all-reduces (averages over ranks) only on the last micro-batch of the step.
        sync = run.forward.no_sync() if run.ctx.distributed and not last_micro else contextlib.nullcontext()
        with sync:
            with autocast(run.ctx.device):
                rows = slice(start, start + micro)
                kwargs = {k: v[rows] for k, v in extra.items()}
                loss = run.forward(x[rows], y[rows], **kwargs)[1] * (micro / per_rank)
            loss.backward()
        stats.add(loss)
    stats.reduce(run.ctx, run.hooks.guards.termination.requested)
    grad_norm = torch.nn.utils.clip_grad_norm_(run.model.parameters(), run.cfg.grad_clip)
    if run.deferred:
        skip_on_device(run.optimizer, stats.mark_non_finite(step, grad_norm))
    else:
        _read_step(run, step, grad_norm)
    run.optimizer.step()
    run.optimizer.zero_grad(set_to_none=True)
    return grad_norm


def _read_step(run: _Run, step: int, grad_norm: torch.Tensor) -> tuple[float, float]:
    """The host's sync point: (loss, grad norm) of `step`; notes a SIGTERM seen by any rank and
    stops on a non-finite step (the first since the last sync, on the deferred path)."""
    seen = run.stats.read()
    run.stop_seen = run.stop_seen or seen["stop"]
    loss_value, norm = seen["loss"], grad_norm.item()
    metrics, last = run.workdir / "metrics.jsonl", run.workdir / "last.pt"
    if seen["bad_step"]:
        try:
            check_finite(seen["bad_step"], seen["bad_loss"], seen["bad_grad_norm"], metrics, last, run.saved_step)
        except TrainingDiverged as err:
            raise TrainingDiverged(f"{err} (fused AdamW skipped it on the device; the run stopped at step {step}, "
                                   "its next sync point)") from None
    check_finite(step, loss_value, norm, metrics, last, run.saved_step)
    return loss_value, norm


def _finish(run: _Run, out, step: int, loss_value: float, tokens_seen: int, started: float) -> dict:
    """The summary, written with the final model into `out` (rank 0); the resumable state goes."""
    cfg, ctx = run.cfg, run.ctx
    summary = {
        "train_config": cfg.to_dict(),
        "step": step,
        "final_loss": loss_value,
        "valid_loss": validation_loss(run.model, run.valid_tokens, cfg, run.length, ctx.device),
        "device": str(ctx.device),
        **kernel_record(run.model),  # reference or flex: which attention computed this training
        "world_size": ctx.world_size,
        "tokens_seen": tokens_seen,
        "params": run.model.num_parameters(),
        "wall_seconds_last_run": time.time() - started,
        "compile": run.forward.record,  # compiled or eager, and why (lenex.training.speed)
        "data": str(run.data_dir),
        # What this model is (lenex.records.provenance): checked by every evaluator that loads it.
        "identity": training_identity(run.model.config.to_dict(), cfg.to_dict(), run.data_dir, run.hooks.labels),
    }
    if ctx.is_main:
        save_checkpoint(out, run.model, **summary)  # in the model's own format (lenex.records.checkpoint.FORMATS)
        log.info("wrote %s: %s", out, {k: summary[k] for k in ("step", "final_loss", "valid_loss", "params")})
        # A finished run leaves no state behind that a later, different run could resume from.
        (run.workdir / "last.pt").unlink(missing_ok=True)
    distributed.barrier(ctx)  # no rank reports success before the checkpoint exists
    return summary


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """What rule `train` passes to every trainer (lenex.training.train, lenex.fairseq_backend.train)."""
    parser.add_argument("--model-config", required=True, help="JSON object of ModelConfig fields; vocab_size "
                        "comes from the corpus's meta.json (naming a different one is an error)")
    parser.add_argument("--train-config", required=True, help="JSON object of TrainConfig fields")
    parser.add_argument("--data", required=True, help="prepared corpus directory (train/valid .bin + meta.json)")
    parser.add_argument("--out", required=True, help="final checkpoint path")
    parser.add_argument("--workdir", required=True, help="resumable state and metrics.jsonl")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch default)")
    parser.add_argument("--identity", default="{}", help="JSON labels recorded in the checkpoint's identity "
                        "(paper, variant, preset, ...: lenex.records.provenance), checked against --expect where it is loaded")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_training_arguments(parser)
    parser.add_argument("--device", default="auto", help="auto (GPU if any), cpu, cuda, cuda:1 ...")
    parser.add_argument("--stop-after", type=int, default=None, help="stop after N steps of this run (resumable)")
    parser.add_argument("--init-from", default=None, help="start from this checkpoint's weights (same model config)")
    add_kernel_option(parser)
    args = parser.parse_args(argv)
    set_default_kernel(args.attention_kernel)
    rank = os.environ.get("RANK", "0")
    level = logging.INFO if rank == "0" else logging.WARNING  # one log: rank 0's
    logging.basicConfig(level=level, format=f"%(asctime)s rank{rank} %(name)s %(levelname)s %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    model_values = json.loads(args.model_config)
    # A bad config is named before the corpus is read.
    cfg = check_run_configs(model_values, json.loads(args.train_config))[1]
    model_cfg = model_config_for_corpus(model_values, args.data)
    train(model_cfg, cfg, args.data, args.out, args.workdir, stop_after=args.stop_after, device=args.device,
          init_from=args.init_from, labels=json.loads(args.identity))


if __name__ == "__main__":
    run_cli(main)
