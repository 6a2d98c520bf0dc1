"""Extend a model of either kind (the pipeline's own, or a Hugging Face model from
`lenex.hf.models`; `lenex.records.checkpoint.load_model` loads both) to a longer context before
continued pretraining."""

from __future__ import annotations

from ..config import ModelConfig
from ..model import LanguageModel
from ..positions import interpolate_position_table



def train_length_of(model) -> int:
    return model.config.train_length


def extended(model, new_length: int):
    """The model made ready for an extended context L_e = new_length (a multiple of its L_t).

    Own models: a new model whose `train_length` is L_e, with every weight copied; a learned
    position table is stretched to L_e rows by the paper's interpolation (Section 3.2), so the
    continued run trains E' itself. RoPE and ALiBi have nothing to extend. Hugging Face GPT-2:
    its table is interpolated in place."""
    if not isinstance(model, LanguageModel):  # lenex.hf.models.HFLanguageModel
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
