"""Self-describing checkpoints: the model config travels inside, so a model is rebuilt
from the file alone. Writes are atomic (temp file + rename), so an interrupted write
never leaves a truncated file that looks complete."""

from __future__ import annotations

from pathlib import Path

import torch

from .config import ModelConfig
from .files import atomic_write
from .model import LanguageModel
from .run_facts import run_facts

FORMAT = "lenex-checkpoint-v1"


def save_checkpoint(path, model: LanguageModel, **extra) -> None:
    payload = {"format": FORMAT, "model_config": model.config.to_dict(), "model": model.state_dict(), **extra}
    atomic_write(path, lambda tmp: torch.save(payload, tmp))


def read_checkpoint(path) -> dict:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # torch raises several types for truncated/corrupt files
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"checkpoint {path} is corrupt or not a torch file ({first}): delete it and rerun "
                         "the step that writes it") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"checkpoint {path} is not a {FORMAT} file")
    return payload


def load_model(path, **config_overrides) -> tuple[LanguageModel, dict]:
    """Rebuild the model from the config stored in the checkpoint. Overrides may change
    evaluation-only options (e.g. position_options={'interpolate_to': 4096})."""
    payload = read_checkpoint(path)
    stored = payload["model_config"]
    merged = dict(stored)
    for key, value in config_overrides.items():  # option dicts are merged, not replaced
        merged[key] = {**stored[key], **value} if isinstance(value, dict) and isinstance(stored.get(key), dict) else value
    config = ModelConfig.from_dict(merged)
    model = LanguageModel(config)
    model.load_state_dict(payload["model"])
    model.eval()
    return model, payload


def provenance(checkpoint, model: LanguageModel, payload: dict) -> dict:
    """What every result file records about the model that produced it, so a table cell can
    be traced back to its checkpoint, configuration, size and training length, and to the run
    (revision, device, date) that computed it."""
    return {"checkpoint": str(checkpoint), "model_config": model.config.to_dict(), "params": model.num_parameters(),
            "steps": payload.get("step"), "tokens_seen": payload.get("tokens_seen"), **run_facts()}
