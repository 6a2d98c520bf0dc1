"""The one model config dataclass. It travels inside every checkpoint."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


def build_dataclass(cls, values: dict, what: str, context: str = ""):
    """cls(**values), but an unknown key is one ValueError naming it and the known ones."""
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"{context}unknown {what} {unknown[0]!r}; known: {', '.join(known) or 'none'}")
    return cls(**values)


@dataclass
class ModelConfig:
    n_layer: int = 2
    d_model: int = 64
    n_head: int = 4
    d_ff: int = 256
    vocab_size: int = 50257
    dropout: float = 0.0
    position: str = "rope"  # a lenex.positions registry name
    position_options: dict = field(default_factory=dict)
    position_module: str | None = None  # imported first: a scheme from outside the registry
    mask: str = "causal"  # the mask used in training (and by default at evaluation)
    mask_options: dict = field(default_factory=dict)
    train_length: int = 64

    def __post_init__(self):
        if self.d_model % self.n_head:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_head {self.n_head}")
        if self.head_dim % 2 and self.position in ("rope", "xpos"):
            raise ValueError(f"position {self.position!r} needs an even head dimension, got {self.head_dim}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    def to_dict(self) -> dict:
        values = dataclasses.asdict(self)
        if values["position_module"] is None:  # built-in schemes keep the configs they always had
            del values["position_module"]
        return values

    @classmethod
    def from_dict(cls, values: dict) -> "ModelConfig":
        return build_dataclass(cls, values, "model config key")
