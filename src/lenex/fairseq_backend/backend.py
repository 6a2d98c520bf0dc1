"""fairseq as a training backend of the one training rule (lenex.pipeline.specs.BACKENDS):
`train: {backend: fairseq}` trains a model from scratch with fairseq-train on fairseq's binarized
copy of its corpus (rule binarize_fairseq), started as one process that spreads over the node's
GPUs itself (docs/fairseq.md)."""

from __future__ import annotations

from ..pipeline.specs import BACKENDS, Backend
from .workflow import binarized_folder, fairseq_data_files

FAIRSEQ = BACKENDS.register(Backend(
    "fairseq", "lenex.fairseq_backend.train", data_files=fairseq_data_files,
    arguments=lambda preset, corpus: f"--bin {binarized_folder(preset, corpus)}",
    one_process=True))
