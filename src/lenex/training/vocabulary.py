"""The model's vocabulary follows the tokenizer: one source of truth, the corpus's meta.json.

A preset names a tokenizer (`data.tokenizer: gpt2` or `bpe-<vocab>`); the prepare step records
the tokenizer's size as meta.json's `vocab_size`. A model trained from scratch on that corpus
gets exactly that many embedding rows (the tied output layer is the same matrix), so a
`bpe-4096` corpus trains a 4096-wide head instead of GPT-2's 50257. A model config that names
its own, different `vocab_size` is an error naming both; one that agrees, or names none, is fine.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import ModelConfig
from ..data.store import read_meta


def corpus_vocab_size(data_dir: str | os.PathLike) -> int:
    """meta.json's `vocab_size`: how many token ids the corpus's tokenizer has."""
    size = read_meta(data_dir).get("vocab_size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"{Path(data_dir) / 'meta.json'}: vocab_size {size!r} is not a positive integer")
    return size


def _conflict(model_size: int, corpus_size: int, data_dir) -> str:
    return (f"model config vocab_size {model_size} conflicts with the corpus's vocab_size {corpus_size} "
            f"({Path(data_dir) / 'meta.json'}): the vocabulary follows the tokenizer (data.tokenizer); "
            "drop vocab_size from the preset's model")


def model_config_for_corpus(values: dict, data_dir: str | os.PathLike) -> ModelConfig:
    """The ModelConfig of `values` (a preset's model mapping) with the corpus's vocabulary."""
    corpus_size = corpus_vocab_size(data_dir)
    if "vocab_size" in values and values["vocab_size"] != corpus_size:
        raise ValueError(_conflict(values["vocab_size"], corpus_size, data_dir))
    return ModelConfig.from_dict({**values, "vocab_size": corpus_size})


def check_vocabulary(model_cfg: ModelConfig, data_dir: str | os.PathLike, from_scratch: bool) -> None:
    """A model trained from scratch has exactly the corpus's vocabulary; a model continued from
    a checkpoint (a released model's head may be padded, e.g. Pythia's 50304 rows for 50277
    tokens) needs at least a row for every token id of the corpus."""
    corpus_size = corpus_vocab_size(data_dir)
    if from_scratch and model_cfg.vocab_size != corpus_size:
        raise ValueError(_conflict(model_cfg.vocab_size, corpus_size, data_dir))
    if model_cfg.vocab_size < corpus_size:
        raise ValueError(f"model vocab_size {model_cfg.vocab_size} is smaller than the corpus's vocab_size "
                         f"{corpus_size} ({Path(data_dir) / 'meta.json'}): some token ids have no embedding row")
