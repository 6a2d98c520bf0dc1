"""Self-describing checkpoints: every file records its `format`, and the format says how the
model is rebuilt from the file alone, so one loader (`load_model`) serves every kind of model.
Writes are atomic (temp file + rename), so an interrupted write never leaves a truncated file
that looks complete. Every file carries the digest of its payload (`content_sha256`,
lenex.digests.payload_sha256), compared with its content at every read, and is read with
`torch.load(weights_only=True)`: tensors and plain values only, so no file runs code when read.

Formats (`FORMATS`, format name -> CheckpointFormat, a lenex.registry.Registry):
- `lenex-checkpoint-v1`: the pipeline's own LanguageModel; its ModelConfig travels inside.
- any other model family of the tree registers its own format (`FORMATS.register`) in its package's
  `checkpoint_format` module, which the registry imports the first time the formats are asked for:
  the Hugging Face causal LMs' `lenex-hf-checkpoint-v1` is registered so. A model family outside
  the tree declares the module that registers its format as an entry point of the group
  `lenex.checkpoint_formats` (named by the format).
A format names its code as "module:attribute" strings, imported on first use, so listing the formats
or reading a lenex checkpoint never imports transformers (and this module names no model family)."""

from __future__ import annotations

import importlib
import pickle
from dataclasses import dataclass
from pathlib import Path

import torch

from ..config import ModelConfig
from ..digests import CONTENT_KEY, payload_digest_error, payload_sealed
from ..files import atomic_write
from ..model import LanguageModel
from ..model.kernels import kernel_record
from ..registry import Registry
from .run_facts import run_facts

FORMAT = "lenex-checkpoint-v1"
#: Entry points of model families outside the tree: format name -> the module registering it.
FORMAT_ENTRY_POINTS = "lenex.checkpoint_formats"


@dataclass(frozen=True)
class CheckpointFormat:
    model_class: str  # "module:Class": the models this format stores
    to_payload: str  # "module:function": model -> the file's entries besides `format` and the extras
    from_payload: str  # "module:function": (payload, **config_overrides) -> the model, weights loaded

    def resolve(self, which: str):
        module, _, attribute = getattr(self, which).partition(":")
        return getattr(importlib.import_module(module), attribute)


FORMATS = Registry("checkpoint format", members="lenex.*.checkpoint_format", entry_points=FORMAT_ENTRY_POINTS)
FORMATS.register(CheckpointFormat("lenex.model:LanguageModel", "lenex.records.checkpoint:lenex_payload",
                                  "lenex.records.checkpoint:lenex_model"), name=FORMAT)


def declared_formats() -> list[str]:
    """Every format this installation knows: lenex's own, then the tree's and the entry points'."""
    return list(FORMATS)


def format_named(name: str) -> CheckpointFormat:
    """The format `name` (the tree's formats and the entry points' found on the first lookup)."""
    return FORMATS[name]


def format_of(model) -> str:
    """The format that stores `model`, by its class (formats are tried in FORMATS' order)."""
    for name, fmt in FORMATS.items():
        if isinstance(model, fmt.resolve("model_class")):
            return name
    raise TypeError(f"no checkpoint format stores a {type(model).__name__}; formats: {', '.join(FORMATS)}")


def save_checkpoint(path, model, **extra) -> None:
    """Write `model` in its format, with `extra` entries (step, losses, ...) beside it."""
    name = format_of(model)
    payload = payload_sealed({"format": name, **FORMATS[name].resolve("to_payload")(model), **extra})
    atomic_write(path, lambda tmp: torch.save(payload, tmp))


def rebuild_hint(path) -> str:
    # The target to name: a corrupt file newer than its inputs looks done to Snakemake, so a
    # table target alone would say "nothing to be done"; forcing the file itself rebuilds it.
    return f"delete it and rebuild it with `snakemake --cores 2 --force {path}` (what reads it then reruns)"


def load_plain(path) -> object:
    """torch.load of tensors and plain values only (weights_only=True): a file holding any other
    Python object (a pickled class, a function) is refused before anything of it runs, naming the
    first such object; a truncated or damaged file is an error naming the file."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        if "weights only" not in str(err).lower():
            raise ValueError(f"{path} is corrupt or not a torch file ({_first_line(err)}): {rebuild_hint(path)}") from None
        objects = _unsafe_globals(path)
        raise ValueError(f"{path} holds Python objects besides tensors and plain values ({objects}): a lenex file "
                         f"from before weights-only loading, or not lenex's; it is not unpickled (that could run "
                         f"code): {rebuild_hint(path)}") from None
    except Exception as err:  # torch raises several types for truncated/corrupt files
        raise ValueError(f"{path} is corrupt or not a torch file ({_first_line(err)}): {rebuild_hint(path)}") from None


def _first_line(err: BaseException) -> str:
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def _unsafe_globals(path) -> str:
    try:
        names = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # the listing is only for the message
        return "objects torch will not load as weights"
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "") if names else "unknown"


def read_checkpoint(path, expect: str | None = None) -> dict:
    """The payload of a checkpoint of any known format (or of format `expect` only), its content
    checked against the digest it was saved with."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        payload = load_plain(path)
    except ValueError as err:
        raise ValueError(f"checkpoint {err}") from None
    found = payload.get("format") if isinstance(payload, dict) else None
    wanted = [expect] if expect else declared_formats()
    if found not in wanted:
        raise ValueError(f"checkpoint {path} has format {found!r}, expected {' or '.join(wanted)}")
    why = payload_digest_error(payload)
    if why:
        raise ValueError(f"checkpoint {path} is corrupt: {why}: {rebuild_hint(path)}")
    return payload


def load_model(path, **config_overrides) -> tuple[torch.nn.Module, dict]:
    """(model, payload), the model rebuilt by the file's own format and in evaluation mode.
    Overrides may change evaluation-only options of a lenex model (e.g.
    position_options={'interpolate_to': 4096})."""
    payload = read_checkpoint(path)
    model = format_named(payload["format"]).resolve("from_payload")(payload, **config_overrides)
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
    (revision, device, date, attention kernel) that computed it; with the checkpoint's identity where
    it records one (lenex.records.provenance), which the table builders compare with the cell."""
    identity = {"identity": payload["identity"]} if isinstance(payload.get("identity"), dict) else {}
    digest = {"checkpoint_sha256": payload[CONTENT_KEY]} if payload.get(CONTENT_KEY) else {}
    return {"checkpoint": str(checkpoint), **digest, "model_config": model.config.to_dict(),
            "params": model.num_parameters(), "steps": payload.get("step"), "tokens_seen": payload.get("tokens_seen"), **identity, **run_facts(),
            **kernel_record(model)}
