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


def check_bounds(obj, what: str, bounds: dict) -> None:
    """Enforce the schemas' bounds (workflow/schemas/preset.schema.yaml) on a config dataclass, so
    every entry point rejects what the pipeline would. bounds: key -> (kind, low, high), kind
    `int` or `float`, low/high inclusive; a float low given as (">", x) is exclusive. The first
    bad value is one ValueError naming the key and the value."""
    for key, (kind, low, high) in bounds.items():
        value = getattr(obj, key)
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not numeric or (kind is int and not float(value).is_integer()):
            raise ValueError(f"{what} {key}: {value!r} is not {'an integer' if kind is int else 'a number'}")
        exclusive = isinstance(low, tuple)
        floor = low[1] if exclusive else low
        if (floor is not None and (value <= floor if exclusive else value < floor)) or (high is not None and value > high):
            rule = (f"> {floor}" if exclusive else f">= {floor}") if floor is not None else ""
            rule += (" and " if rule and high is not None else "") + (f"<= {high}" if high is not None else "")
            raise ValueError(f"{what} {key}: {value!r} (must be {rule})")
        if kind is int:
            setattr(obj, key, int(value))  # 100.0 from a JSON file means 100


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
        check_bounds(self, "model config", {
            "n_layer": (int, 1, None), "d_model": (int, 1, None), "n_head": (int, 1, None), "d_ff": (int, 1, None),
            "vocab_size": (int, 1, None), "dropout": (float, 0, 1), "train_length": (int, 4, None)})
        for key in ("position", "mask"):
            if not isinstance(getattr(self, key), str):
                raise ValueError(f"model config {key}: {getattr(self, key)!r} is not a name")
        for key in ("position_options", "mask_options"):
            if not isinstance(getattr(self, key), dict):
                raise ValueError(f"model config {key}: {getattr(self, key)!r} is not a mapping")
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
