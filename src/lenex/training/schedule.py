"""Learning-rate schedule: linear warmup, then polynomial decay (fairseq's
`polynomial_decay`, which the LEX paper's TorchScale code uses)."""

from __future__ import annotations


def learning_rate(step: int, *, lr: float, warmup: int, total: int, end_lr: float = 0.0, power: float = 1.0) -> float:
    """Rate for optimizer step `step` (0-based): lr*(step+1)/warmup during warmup, then
    (lr - end_lr) * (1 - progress)**power + end_lr, reaching end_lr at `total`."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if step >= total:
        return end_lr
    progress = (step - warmup) / max(1, total - warmup)
    return (lr - end_lr) * (1.0 - progress) ** power + end_lr
