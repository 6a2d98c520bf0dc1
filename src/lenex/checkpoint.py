"""Self-describing checkpoints: every file records its `format`, and the format says how the
model is rebuilt from the file alone, so one loader (`load_model`) serves every kind of model.
Writes are atomic (temp file + rename), so an interrupted write never leaves a truncated file
that looks complete.

Formats (`FORMATS`, format name -> CheckpointFormat):
- `lenex-checkpoint-v1`: the pipeline's own LanguageModel; its ModelConfig travels inside.
- `lenex-hf-checkpoint-v1`: a Hugging Face causal LM behind lenex's interface (lenex.hf.models),
  its transformers config inside.
A format names its code as "module:attribute" strings, imported on first use, so reading a
lenex checkpoint never imports transformers (and this module imports no model family)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

import torch

from .config import ModelConfig
from .files import atomic_write
from .model import LanguageModel
from .run_facts import run_facts

FORMAT = "lenex-checkpoint-v1"
HF_FORMAT = "lenex-hf-checkpoint-v1"


@dataclass(frozen=True)
class CheckpointFormat:
    model_class: str  # "module:Class": the models this format stores
    to_payload: str  # "module:function": model -> the file's entries besides `format` and the extras
    from_payload: str  # "module:function": (payload, **config_overrides) -> the model, weights loaded

    def resolve(self, which: str):
        module, _, attribute = getattr(self, which).partition(":")
        return getattr(importlib.import_module(module), attribute)


FORMATS: dict[str, CheckpointFormat] = {
    FORMAT: CheckpointFormat("lenex.model:LanguageModel", "lenex.checkpoint:lenex_payload", "lenex.checkpoint:lenex_model"),
    HF_FORMAT: CheckpointFormat("lenex.hf.models:HFLanguageModel", "lenex.hf.models:hf_payload",
                                "lenex.hf.models:hf_model"),
}


def format_of(model) -> str:
    """The format that stores `model`, by its class (formats are tried in FORMATS' order)."""
    for name, fmt in FORMATS.items():
        if isinstance(model, fmt.resolve("model_class")):
            return name
    raise TypeError(f"no checkpoint format stores a {type(model).__name__}; formats: {', '.join(FORMATS)}")


def save_checkpoint(path, model, **extra) -> None:
    """Write `model` in its format, with `extra` entries (step, losses, ...) beside it."""
    name = format_of(model)
    payload = {"format": name, **FORMATS[name].resolve("to_payload")(model), **extra}
    atomic_write(path, lambda tmp: torch.save(payload, tmp))


def read_checkpoint(path, expect: str | None = None) -> dict:
    """The payload of a checkpoint of any known format (or of format `expect` only)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # torch raises several types for truncated/corrupt files
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"checkpoint {path} is corrupt or not a torch file ({first}): delete it and rerun "
                         "the step that writes it") from None
    found = payload.get("format") if isinstance(payload, dict) else None
    wanted = [expect] if expect else list(FORMATS)
    if found not in wanted:
        raise ValueError(f"checkpoint {path} has format {found!r}, expected {' or '.join(wanted)}")
    return payload


def load_model(path, **config_overrides) -> tuple[torch.nn.Module, dict]:
    """(model, payload), the model rebuilt by the file's own format and in evaluation mode.
    Overrides may change evaluation-only options of a lenex model (e.g.
    position_options={'interpolate_to': 4096})."""
    payload = read_checkpoint(path)
    model = FORMATS[payload["format"]].resolve("from_payload")(payload, **config_overrides)
    model.eval()
    return model, payload


def lenex_payload(model: LanguageModel) -> dict:
    return {"model_config": model.config.to_dict(), "model": model.state_dict()}


def lenex_model(payload: dict, **config_overrides) -> LanguageModel:
    stored = payload["model_config"]
    merged = dict(stored)
    for key, value in config_overrides.items():  # option dicts are merged, not replaced
        merged[key] = {**stored[key], **value} if isinstance(value, dict) and isinstance(stored.get(key), dict) else value
    model = LanguageModel(ModelConfig.from_dict(merged))
    model.load_state_dict(payload["model"])
    return model


def provenance(checkpoint, model, payload: dict) -> dict:
    """What every result file records about the model that produced it, so a table cell can
    be traced back to its checkpoint, configuration, size and training length, and to the run
    (revision, device, date) that computed it; with the checkpoint's identity where it records
    one (lenex.provenance), which the table builders compare with the cell."""
    identity = {"identity": payload["identity"]} if isinstance(payload.get("identity"), dict) else {}
    return {"checkpoint": str(checkpoint), "model_config": model.config.to_dict(), "params": model.num_parameters(),
            "steps": payload.get("step"), "tokens_seen": payload.get("tokens_seen"), **identity, **run_facts()}
