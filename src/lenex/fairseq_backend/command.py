"""The `fairseq-train` command line for a lenex model and train config (pure: no fairseq import).

Mapping (lenex TrainConfig / ModelConfig -> fairseq): steps -> --max-update and the polynomial
schedule's --total-num-update; batch_size -> --batch-size x --update-freq x GPUs (micro_batch_size
sequences per forward pass); lr, warmup, end_lr, power -> --lr-scheduler polynomial_decay (the
schedule lenex.training.train.learning_rate copies); beta1/beta2/eps/weight_decay -> fairseq's Adam, which decays
weights decoupled like AdamW (but every parameter, where lenex spares norms, biases and position
parameters); grad_clip -> --clip-norm; train_length -> --tokens-per-sample with
--sample-break-mode none (one stream, blocks of L_tr); checkpoint_every (or eval_every) -> --save-interval-updates.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from ..files import read_yaml
from .workflow import binarized_folder

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


def train_arguments(train: dict, train_length: int, save_dir, cpu: bool, world_size: int = 1) -> list[str]:
    """fairseq's batch is --batch-size x --update-freq x GPUs: the preset's batch_size is split the
    way lenex.training.train splits it (micro_batch_size sequences per pass, the rest accumulated)."""
    batch, micro = train["batch_size"], train.get("micro_batch_size") or train["batch_size"]
    per_gpu = batch // world_size
    micro = min(micro, per_gpu)
    if batch % world_size or per_gpu % micro:
        raise ValueError(f"train config: batch_size {batch} does not split into {world_size} GPU(s) x "
                         f"micro-batches of {micro} (micro_batch_size)")
    steps = train["steps"]
    args = [
        "--task", "language_modeling",
        "--tokens-per-sample", str(train_length),
        "--sample-break-mode", "none",
        "--criterion", "cross_entropy",
        "--batch-size", str(micro),
        "--update-freq", str(per_gpu // micro),
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
    # On GPU lenex trains under bf16 autocast; fairseq's --bf16 is its mixed-precision counterpart.
    device = ["--cpu"] if cpu else ["--bf16", "--distributed-world-size", str(world_size)]
    return args + device


def fairseq_train_command(model: dict, train: dict, data_bin, save_dir, cpu: bool, eot: int = 50256,
                          world_size: int = 1) -> list[str]:
    """argv of `fairseq-train` (run as `python -m fairseq_cli.train`) for lenex's model `model`."""
    return (["fairseq-train", str(data_bin), "--user-dir", str(PLUGIN_DIR)] + model_arguments(model, eot)
            + train_arguments(train, model["train_length"], save_dir, cpu, world_size))


def preset_command(preset: str, paper: str, variant: str, config_dir="config", cpu: bool = False) -> list[str]:
    """The command a preset and an experiment variant map to (data and save paths as the rules use)."""
    from ..experiment.presets import paper_view

    view = paper_view(read_yaml(Path(config_dir) / "presets" / f"{preset}.yaml"), paper)
    variants = read_yaml(Path(config_dir) / "experiments" / f"{paper}.yaml")["variants"]
    if variant not in variants:
        raise ValueError(f"unknown variant {variant!r} of paper {paper!r}; known: {', '.join(variants)}")
    corpus = "train_mix" if paper == "lex" else "<corpus>"
    gpus = view["resources"].get("train", {}).get("gpus", 0)
    argv = fairseq_train_command({**view["model"], **variants[variant]}, view["train"],
                                 binarized_folder(preset, corpus),
                                 f"results/{preset}/train/{paper}/{variant}/checkpoints", cpu=cpu or not gpus,
                                 world_size=max(1, gpus))
    argv[argv.index("--user-dir") + 1] = "src/lenex/fairseq_plugin"  # as run from the repository root
    return argv


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="print the fairseq-train command line of a preset's variant")
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--paper", default="lex")
    parser.add_argument("--variant", default="xpos")
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args(argv)
    print(shlex.join(preset_command(args.preset, args.paper, args.variant, cpu=args.cpu)))


if __name__ == "__main__":
    from ..cli import run_cli

    run_cli(main)
