"""The format of a released model as a lenex checkpoint, registered in the tree: the checkpoint
registry (lenex.records.checkpoint.FORMATS) imports this module, which names the models' code
(lenex.hf.models) without importing it, so listing the formats loads no model family."""

from __future__ import annotations

from ..records.checkpoint import FORMATS, CheckpointFormat

HF_FORMAT = "lenex-hf-checkpoint-v1"
MODELS = "lenex.hf.models"

FORMATS.register(CheckpointFormat(f"{MODELS}:HFLanguageModel", f"{MODELS}:hf_payload", f"{MODELS}:hf_model"),
                 name=HF_FORMAT)
