"""The `fairseq-train` command line for a lenex model and train config (pure: no fairseq import).

Mapping (lenex TrainConfig / ModelConfig -> fairseq): steps -> --max-update and the polynomial
schedule's --total-num-update; batch_size -> --batch-size x --update-freq (micro_batch_size
sequences per forward pass); lr, warmup, end_lr, power -> --lr-scheduler polynomial_decay (the
schedule lenex.schedule copies); beta1/beta2/eps/weight_decay -> fairseq's Adam, which decays
weights decoupled like AdamW (but every parameter, where lenex spares norms, biases and position
parameters); grad_clip -> --clip-norm; train_length -> --tokens-per-sample with
--sample-break-mode none (one stream, blocks of L_tr); checkpoint_every (or eval_every) -> --save-interval-updates.
"""

from __future__ import annotations

import json
from pathlib import Path

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "fairseq_plugin"


def _json(value: dict) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def model_arguments(model: dict, eot: int = 50256) -> list[str]:
    return [
        "--arch", "lenex_lm",
        "--decoder-layers", str(model["n_layer"]),
        "--decoder-embed-dim", str(model["d_model"]),
        "--decoder-ffn-embed-dim", str(model["d_ff"]),
        "--decoder-attention-heads", str(model["n_head"]),
        "--dropout", str(model.get("dropout", 0.0)),
        "--lenex-position", model["position"],
        "--lenex-position-options", _json(model.get("position_options", {})),
        "--lenex-mask", model.get("mask", "causal"),
        "--lenex-mask-options", _json(model.get("mask_options", {})),
        "--lenex-eot", str(eot),
    ]


def train_arguments(train: dict, train_length: int, save_dir, cpu: bool) -> list[str]:
    batch, micro = train["batch_size"], train.get("micro_batch_size") or train["batch_size"]
    if batch % micro:
        raise ValueError(f"train config: batch_size {batch} is not divisible by micro_batch_size {micro}")
    steps = train["steps"]
    args = [
        "--task", "language_modeling",
        "--tokens-per-sample", str(train_length),
        "--sample-break-mode", "none",
        "--criterion", "cross_entropy",
        "--batch-size", str(micro),
        "--update-freq", str(batch // micro),
        "--required-batch-size-multiple", "1",
        "--optimizer", "adam",
        "--adam-betas", f"({train.get('beta1', 0.9)}, {train.get('beta2', 0.98)})",
        "--adam-eps", str(train.get("eps", 1e-6)),
        "--weight-decay", str(train.get("weight_decay", 0.01)),
        "--clip-norm", str(train.get("grad_clip", 2.0)),
        "--lr-scheduler", "polynomial_decay",
        "--lr", str(train["lr"]),
        "--warmup-updates", str(train.get("warmup", 0)),
        "--end-learning-rate", str(train.get("end_lr", 0.0)),
        "--power", str(train.get("power", 1.0)),
        "--total-num-update", str(steps),
        "--max-update", str(steps),
        "--seed", str(train.get("seed", 1)),
        "--log-format", "json",
        "--log-interval", str(train.get("log_every", 10)),
        "--save-dir", str(save_dir),
        # eval_every, when set, saves the checkpoints the validation curve is measured on.
        "--save-interval-updates", str(train.get("eval_every") or train.get("checkpoint_every", steps)),
        "--keep-interval-updates", "-1",
        "--no-epoch-checkpoints",
        "--disable-validation",  # validation loss: lenex's own measurement on every saved checkpoint
        "--num-workers", "0",
    ]
    return args + (["--cpu"] if cpu else [])


def fairseq_train_command(model: dict, train: dict, data_bin, save_dir, cpu: bool, eot: int = 50256) -> list[str]:
    """argv of `fairseq-train` (run as `python -m fairseq_cli.train`) for lenex's model `model`."""
    return (["fairseq-train", str(data_bin), "--user-dir", str(PLUGIN_DIR)]
            + model_arguments(model, eot) + train_arguments(train, model["train_length"], save_dir, cpu))
