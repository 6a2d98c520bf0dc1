"""fairseq `lenex_lm` checkpoint -> lenex checkpoint (lenex.records.checkpoint's format), so lenex's
evaluators, tables and claims read fairseq-trained models unchanged:
`python -m lenex.fairseq_backend.convert --checkpoint checkpoint_last.pt --out model.pt`
[--data DIR] [--expect JSON]: the converted model is checked against the corpus it will score
and the identity expected of it before anything is written (lenex.records.provenance)."""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import torch

from ..records.checkpoint import FORMAT, load_plain, save_checkpoint
from ..cli import run_cli
from ..config import ModelConfig
from ..model import LanguageModel
from ..records.provenance import add_expect_argument, check_payload

PREFIX = "decoder.lm."
N_SPECIAL = 4


def model_config(fairseq_model_cfg: dict, vocab_size: int) -> ModelConfig:
    """The lenex config a fairseq checkpoint's `cfg.model` describes (mirror of the plugin's
    `lenex_model_config`, kept free of the fairseq import)."""
    cfg = SimpleNamespace(**fairseq_model_cfg)
    if getattr(cfg, "_name", "lenex_lm") != "lenex_lm":
        raise ValueError(f"fairseq checkpoint holds model {cfg._name!r}, not lenex_lm")
    return ModelConfig(
        n_layer=cfg.decoder_layers, d_model=cfg.decoder_embed_dim, n_head=cfg.decoder_attention_heads,
        d_ff=cfg.decoder_ffn_embed_dim, vocab_size=vocab_size, dropout=cfg.dropout,
        position=cfg.lenex_position, position_options=json.loads(cfg.lenex_position_options),
        mask=cfg.lenex_mask, mask_options=json.loads(cfg.lenex_mask_options), train_length=cfg.tokens_per_sample,
    )


def _fairseq_globals() -> list:
    """The non-tensor objects a fairseq checkpoint holds besides plain values: its legacy `args`
    (an argparse Namespace) and numpy scalars in its extra state (a best loss). Rebuilding these
    runs no code of the file's choosing; anything else is still refused."""
    import argparse

    import numpy as np

    core = getattr(np, "_core", None) or np.core
    allowed = [argparse.Namespace, np.dtype, core.multiarray.scalar]
    allowed += [getattr(np.dtypes, name) for name in dir(getattr(np, "dtypes", None)) if name.endswith("DType")]
    return allowed


def read_fairseq_state(path) -> dict:
    """A fairseq checkpoint, loaded with torch.load(weights_only=True) and the few fairseq objects
    allowed (`_fairseq_globals`): a file holding anything else is one error naming it."""
    with torch.serialization.safe_globals(_fairseq_globals()):
        try:
            state = load_plain(path)
        except ValueError as err:
            raise ValueError(f"fairseq checkpoint {err}") from None
    if not isinstance(state, dict) or "model" not in state:
        raise ValueError(f"{path}: not a fairseq checkpoint (no `model` entry)")
    return state


def lenex_model(fairseq_checkpoint) -> tuple[LanguageModel, dict]:
    """(lenex model with the fairseq weights, the fairseq checkpoint dict)."""
    state = read_fairseq_state(fairseq_checkpoint)
    weights = {k[len(PREFIX):]: v for k, v in state["model"].items() if k.startswith(PREFIX)}
    if not weights:
        raise ValueError(f"{fairseq_checkpoint}: no `{PREFIX}*` weights; not a lenex_lm fairseq checkpoint")
    model_cfg = state["cfg"]["model"]
    model_cfg = dict(model_cfg.items()) if not isinstance(model_cfg, dict) else model_cfg
    model = LanguageModel(model_config(model_cfg, weights["tok_emb.weight"].shape[0]))
    model.load_state_dict(weights)  # strict: a missing or extra tensor is an error naming it
    return model.eval(), state


def convert(fairseq_checkpoint, out, scored_data=(), expect=None, **extra) -> dict:
    model, state = lenex_model(fairseq_checkpoint)
    updates = state.get("optimizer_history", [{}])[-1].get("num_updates")
    summary = {"step": updates, "backend": "fairseq", "fairseq_checkpoint": str(fairseq_checkpoint), **extra}
    check_payload(fairseq_checkpoint, {"format": FORMAT, "model_config": model.config.to_dict(), **summary}, scored_data,
                  expect, out)
    save_checkpoint(out, model, **summary)
    return {k: v for k, v in summary.items() if k != "identity"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", required=True, help="fairseq checkpoint of a lenex_lm model")
    parser.add_argument("--out", required=True, help="lenex checkpoint to write")
    parser.add_argument("--data", nargs="*", default=[], help="prepared corpora the model will score (meta.json)")
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    print(json.dumps(convert(args.checkpoint, args.out, args.data, args.expect)))

if __name__ == "__main__":
    run_cli(main)
