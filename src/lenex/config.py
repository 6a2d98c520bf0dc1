"""The configs, typed one way: a dataclass whose numeric fields carry their bounds (`bounded`,
checked on construction, so every entry point rejects what the pipeline would; the bounds of
workflow/schemas/preset.schema.yaml are written from them, lenex.experiment.preset_spec) and whose `from_dict` names an unknown key. ModelConfig travels
inside every checkpoint; TrainConfig is a preset's `train` block. Position schemes and masks
type their options the same way (an `Options` dataclass per scheme or mask, `build_dataclass`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


def build_dataclass(cls, values: dict, what: str, context: str = ""):
    """cls(**values), but an unknown key is one ValueError naming it and the known ones, and a
    missing key (a field without a default) one naming it."""
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"{context}unknown {what} {unknown[0]!r}; known: {', '.join(known) or 'none'}")
    missing = [key for key in required_fields(cls) if key not in values]
    if missing:
        raise ValueError(f"{context}missing {what} {missing[0]!r}")
    return cls(**values)


@dataclass(frozen=True)
class NoOptions:
    """The options of a position scheme or mask that takes none."""


def required_fields(cls) -> list[str]:
    """The fields of dataclass `cls` that have no default."""
    return [f.name for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]


def bounded(default=dataclasses.MISSING, low=None, high=None, *, above=None, below=None):
    """A numeric config field with its bounds (inclusive; `above`, `below`: exclusive), which
    `check_bounds` enforces; the annotation (int or float, `| None` where it may be left unset)
    says which numbers it takes. No default: a key the section must hold. The bounds of
    workflow/schemas/preset.schema.yaml are written from these (lenex.experiment.preset_spec)."""
    bounds = ((">", above) if above is not None else low, ("<", below) if below is not None else high)
    return field(default=default, metadata={"bounds": bounds})


def field_kind(f) -> type:
    """int or float: the numbers a `bounded` field takes, from its annotation."""
    written = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    return int if written.split("|")[0].strip() == "int" else float


def bound_rule(low, high) -> str:
    """'>= 1', '> 0 and < 0.5': a field's bounds in words."""
    rules = []
    if low is not None:
        rules.append(f"> {low[1]}" if isinstance(low, tuple) else f">= {low}")
    if high is not None:
        rules.append(f"< {high[1]}" if isinstance(high, tuple) else f"<= {high}")
    return " and ".join(rules)


def bound_problem(value, kind: type, low, high) -> str | None:
    """What is wrong with `value` for a field of `kind` within (low, high), or None."""
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not numeric or (kind is int and not float(value).is_integer()):
        return f"{value!r} is not {'an integer' if kind is int else 'a number'}"
    too_low = low is not None and (value <= low[1] if isinstance(low, tuple) else value < low)
    too_high = high is not None and (value >= high[1] if isinstance(high, tuple) else value > high)
    return f"{value!r} (must be {bound_rule(low, high)})" if too_low or too_high else None


def check_bounds(obj, what: str, sep: str = " ") -> None:
    """Enforce the `bounded` fields' bounds on a config dataclass. The first bad value is one
    ValueError naming the key and the value; an int field given 100.0 (JSON) becomes 100; a
    field annotated `| None` may be left None (unset)."""
    for f in dataclasses.fields(obj):
        if "bounds" not in f.metadata:
            continue
        (low, high), kind, key = f.metadata["bounds"], field_kind(f), f.name
        value = getattr(obj, key)
        if value is None and "None" in str(f.type):
            continue
        problem = bound_problem(value, kind, low, high)
        if problem:
            raise ValueError(f"{what}{sep}{key}: {problem}")
        if kind is int:
            setattr(obj, key, int(value))


#: The scheme of a model config that names none: the one scheme name here is this default value;
#: what a scheme needs (an even head dimension, ...) it declares itself (lenex.positions.base).
DEFAULT_POSITION = "rope"


@dataclass
class ModelConfig:
    n_layer: int = bounded(2, 1)
    d_model: int = bounded(64, 1)
    n_head: int = bounded(4, 1)
    d_ff: int = bounded(256, 1)
    vocab_size: int = bounded(50257, 1)
    dropout: float = bounded(0.0, 0, 1)
    position: str = DEFAULT_POSITION  # a lenex.positions registry name
    position_options: dict = field(default_factory=dict)
    position_module: str | None = None  # imported first: a scheme from outside the registry
    mask: str = "causal"  # the mask used in training (and by default at evaluation)
    mask_options: dict = field(default_factory=dict)
    train_length: int = bounded(64, 4)

    def __post_init__(self):
        check_bounds(self, "model config")
        for key in ("position", "mask"):
            if not isinstance(getattr(self, key), str):
                raise ValueError(f"model config {key}: {getattr(self, key)!r} is not a name")
        for key in ("position_options", "mask_options"):
            if not isinstance(getattr(self, key), dict):
                raise ValueError(f"model config {key}: {getattr(self, key)!r} is not a mapping")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_head {self.n_head}")

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


@dataclass
class TrainConfig:
    steps: int = bounded(100, 1)
    batch_size: int = bounded(8, 1)  # sequences per optimizer step
    micro_batch_size: int = bounded(0, 0)  # sequences per forward pass; 0 = batch_size (no accumulation)
    lr: float = bounded(3e-4, above=0)
    end_lr: float = bounded(0.0, 0)
    warmup: int = bounded(10, 0)
    power: float = bounded(1.0)
    beta1: float = bounded(0.9, 0, 1)
    beta2: float = bounded(0.98, 0, 1)
    eps: float = bounded(1e-6, 0)
    weight_decay: float = bounded(0.01, 0)
    grad_clip: float = bounded(2.0, above=0)
    seed: int = bounded(1)
    log_every: int = bounded(10, 1)
    checkpoint_every: int = bounded(50, 1)
    eval_every: int = bounded(0, 0)  # 0: validation loss only at the end
    eval_batches: int = bounded(4, 1)
    backend: str = "lenex"  # "fairseq": the train rule runs lenex.fairseq_backend.train (docs/fairseq.md)

    def __post_init__(self):
        check_bounds(self, "train config")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        return build_dataclass(cls, values, "train config key")
