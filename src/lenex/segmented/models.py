"""Load a checkpoint of either kind (the pipeline's own, or a Hugging Face model saved by
`lenex.hf.models`) and extend it to a longer context before continued pretraining."""

from __future__ import annotations

import torch

from ..checkpoint import FORMAT as LENEX_FORMAT
from ..checkpoint import read_checkpoint
from ..config import ModelConfig
from ..hf.models import FORMAT as HF_FORMAT
from ..hf.models import load_hf_checkpoint
from ..model import LanguageModel
from ..positions import interpolate_position_table


def checkpoint_format(path) -> str:
    payload = torch.load(path, map_location="cpu", weights_only=False, mmap=True)
    fmt = payload.get("format") if isinstance(payload, dict) else None
    if fmt not in (LENEX_FORMAT, HF_FORMAT):
        raise ValueError(f"checkpoint {path} is neither a {LENEX_FORMAT} nor a {HF_FORMAT} file")
    return fmt


def train_length_of(model) -> int:
    return model.config.train_length


def load_any(path):
    """(model, payload) in evaluation mode, whichever format `path` has."""
    if checkpoint_format(path) == HF_FORMAT:
        return load_hf_checkpoint(path)
    payload = read_checkpoint(path)
    model = LanguageModel(ModelConfig.from_dict(payload["model_config"]))
    model.load_state_dict(payload["model"])
    model.eval()
    return model, payload


def extended(model, new_length: int):
    """The model made ready for an extended context L_e = new_length (a multiple of its L_t).

    Own models: a new model whose `train_length` is L_e, with every weight copied; a learned
    position table is stretched to L_e rows by the paper's interpolation (Section 3.2), so the
    continued run trains E' itself. RoPE and ALiBi have nothing to extend. Hugging Face GPT-2:
    its table is interpolated in place."""
    if not hasattr(model, "tok_emb"):  # lenex.hf.models.HFLanguageModel
        model.extend_positions(new_length)
        return model
    cfg = model.config
    if new_length == cfg.train_length:
        return model
    options = {k: v for k, v in cfg.position_options.items() if k != "interpolate_to"}
    new = LanguageModel(ModelConfig.from_dict({**cfg.to_dict(), "train_length": new_length,
                                               "position_options": options}))
    state = dict(model.state_dict())
    if cfg.position == "learned":
        state["position.table.weight"] = interpolate_position_table(state["position.table.weight"], new_length)
    new.load_state_dict(state)
    return new
