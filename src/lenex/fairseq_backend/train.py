"""Pretrain one variant with fairseq: the same arguments as `lenex.training.train` plus `--bin`, the
corpus binarized for fairseq (`lenex.fairseq_backend.binarize`). Runs `fairseq-train` with the
`lenex_lm` architecture, measures lenex's validation loss (`lenex.training.train.validation_loss`, the same
fixed windows lenex's trainer uses) on every saved checkpoint, and writes the last one as a lenex
checkpoint. fairseq resumes from `<workdir>/checkpoints/checkpoint_last.pt` by itself."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import torch

from ..cli import run_cli
from ..config import ModelConfig, TrainConfig
from ..data.store import load_split, read_meta
from ..files import atomic_write_text
from ..records.provenance import training_identity
from ..training.train import add_training_arguments, validation_loss
from . import require_fairseq
from .command import fairseq_train_command
from .convert import convert, lenex_model

log = logging.getLogger("lenex.fairseq_backend.train")
INTERVAL_CHECKPOINT = re.compile(r"checkpoint_\d+_(\d+)\.pt$")


def train_losses(fairseq_log: str) -> list[dict]:
    """fairseq's per-interval training loss (its JSON log lines, loss in bits) in nats."""
    records = []
    for line in fairseq_log.splitlines():
        start = line.find("{")
        if start < 0 or '"train_inner"' not in line and '"num_updates"' not in line:
            continue
        try:
            entry = json.loads(line[start:])
        except json.JSONDecodeError:
            continue
        if "loss" in entry and "num_updates" in entry:
            records.append({"step": int(entry["num_updates"]), "loss": float(entry["loss"]) * math.log(2)})
    return records


def validation_curve(save_dir: Path, valid_tokens, cfg: TrainConfig, length: int) -> list[dict]:
    """lenex's validation loss on every interval checkpoint, oldest first (each removed after)."""
    found = sorted((int(m.group(1)), p) for p in save_dir.iterdir() if (m := INTERVAL_CHECKPOINT.search(p.name)))
    curve = []
    for step, path in found:
        model, _ = lenex_model(path)
        curve.append({"step": step, "valid_loss": validation_loss(model, valid_tokens, cfg, length, torch.device("cpu"))})
        path.unlink()  # optimizer state included, these are 3x the model: keep only checkpoint_last
    return curve


def _stream(argv: list[str], env: dict) -> str:
    """Run fairseq-train, echoing its output live (the rule's log) and returning it."""
    lines = []
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            sys.stderr.write(line)
            lines.append(line)
    if proc.returncode:
        raise RuntimeError(f"fairseq-train failed with status {proc.returncode} (its output is above)")
    return "".join(lines)


def run(model_cfg: ModelConfig, cfg: TrainConfig, data_dir, data_bin, out, workdir, threads: int = 0,
        labels: dict | None = None) -> dict:
    require_fairseq()
    workdir = Path(workdir)
    save_dir = workdir / "checkpoints"
    save_dir.mkdir(parents=True, exist_ok=True)
    eot = int(read_meta(data_dir)["eot_token"])
    gpus = torch.cuda.device_count()  # fairseq-train uses every visible GPU
    argv = fairseq_train_command(model_cfg.to_dict(), vars(cfg), data_bin, save_dir, cpu=not gpus, eot=eot,
                                 world_size=max(1, gpus))
    env = dict(os.environ, **({"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)} if threads else {}))
    log.info("%s", " ".join(argv))
    started = time.time()
    output = _stream([sys.executable, "-m", "fairseq_cli.train", *argv[1:]], env)
    wall = time.time() - started
    valid_tokens = load_split(data_dir, "valid").tokens
    curve = validation_curve(save_dir, valid_tokens, cfg, model_cfg.train_length)
    metrics = train_losses(output) + curve
    atomic_write_text(workdir / "metrics.jsonl", "".join(json.dumps(r) + "\n" for r in sorted(metrics, key=lambda r: r["step"])))
    model, _ = lenex_model(save_dir / "checkpoint_last.pt")
    summary = {
        "train_config": vars(cfg), "valid_loss": validation_loss(model, valid_tokens, cfg, model_cfg.train_length,
                                                                   torch.device("cpu")),
        "tokens_seen": cfg.steps * cfg.batch_size * model_cfg.train_length, "params": model.num_parameters(),
        "wall_seconds_last_run": wall, "data": str(data_dir), "fairseq_command": argv,
        "identity": training_identity(model.config.to_dict(), vars(cfg), data_dir, labels),
    }
    convert(save_dir / "checkpoint_last.pt", out, data_dir, **summary)
    log.info("wrote %s: valid_loss %.4f", out, summary["valid_loss"])
    return summary


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_training_arguments(parser)
    parser.add_argument("--bin", required=True, help="the same corpus binarized for fairseq")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)  # lenex's validation passes in this process
    run(ModelConfig.from_dict(json.loads(args.model_config)), TrainConfig.from_dict(json.loads(args.train_config)),
        args.data, args.bin, args.out, args.workdir, args.threads, json.loads(args.identity))


if __name__ == "__main__":
    run_cli(main)
