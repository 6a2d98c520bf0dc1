"""What can stop a training before its first step, or at the first bad one.

Pure checks a DAG-build check can call too (no torch, no token file read):
- `check_run_configs(model, train)`: the preset's `model` and `train` mappings as lenex.training.train
  takes them (bounds, unknown keys, n_head dividing d_model, micro-batches dividing the batch);
- `check_split_sizes(data_dir, train_length)`: every split a training samples windows from holds
  at least one window, from the corpus's meta.json (n_tokens per split).
And, while training, `check_finite`: a non-finite loss or gradient norm stops the run before the
optimizer step applies it, so nothing non-finite is saved or logged.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..config import ModelConfig, TrainConfig

TRAINING_SPLITS = ("train", "valid")  # the splits lenex.training.train samples windows from


class TrainingDiverged(RuntimeError):
    """A non-finite loss or gradient norm: the run stops (lenex.cli prints the one line)."""


def check_run_configs(model: dict, train: dict) -> tuple[ModelConfig, TrainConfig]:
    """The configs of a training, checked as lenex.training.train checks them before reading any data:
    one ValueError naming the first bad key. The vocabulary comes from the corpus later, so a
    model mapping without vocab_size is checked with the default."""
    model_cfg = ModelConfig.from_dict(model)
    train_cfg = TrainConfig.from_dict(train)
    micro = train_cfg.micro_batch_size or train_cfg.batch_size
    if train_cfg.batch_size % micro:
        raise ValueError(f"train config micro_batch_size: {micro} does not divide batch_size {train_cfg.batch_size}")
    return model_cfg, train_cfg


def window_tokens(train_length: int) -> int:
    """Tokens a split needs to hold one training window: L_tr inputs + the next token, and a
    start to draw (lenex.training.train.sample_windows draws starts in [0, n - L_tr - 1))."""
    return train_length + 2


def check_split_sizes(data_dir, train_length: int, splits=TRAINING_SPLITS) -> None:
    """Each of `splits` of the prepared corpus holds one window of `train_length`, by meta.json's
    n_tokens; one ValueError naming the split, its token file and the sizes."""
    from ..data.store import meta_path, read_meta

    meta = read_meta(data_dir, require=("splits",))
    need = window_tokens(train_length)
    for split in splits:
        entry = meta["splits"].get(split)
        if entry is None:
            raise ValueError(f"{meta_path(data_dir)} has no {split!r} split; training samples windows from it")
        if entry.get("n_tokens", 0) < need:
            raise ValueError(f"{Path(data_dir) / entry.get('file', split + '.bin')}: the {split} split has "
                             f"{entry.get('n_tokens', 0)} tokens, fewer than one training window of {need} "
                             f"(train_length {train_length} + 2): prepare a larger corpus or shorten train_length")


def check_finite(step: int, loss: float, grad_norm: float, metrics, last_state, saved_step: int | None) -> None:
    """Stop at step `step` when its loss or gradient norm is not finite (one line: the step, the
    value, the metrics file and the last good state)."""
    for name, value in (("loss", loss), ("grad_norm", grad_norm)):
        if not math.isfinite(value):
            kept = f"{last_state} (step {saved_step})" if saved_step else "no saved state (none was due yet)"
            raise TrainingDiverged(f"training diverged at step {step}: {name} = {value}; stopped before applying it. "
                                   f"{metrics} holds the steps before it, last good state: {kept}; lower lr or "
                                   "raise warmup, then rerun")
