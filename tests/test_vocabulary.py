"""The model's vocabulary follows the tokenizer (meta.json's vocab_size): its size, its
conflicts, and a checkpoint that records it."""

import json

import numpy as np
import pytest
import torch

from lenex.records.checkpoint import read_checkpoint
from lenex.config import ModelConfig
from lenex.training.train import TrainConfig, main as train_main, train
from lenex.training.vocabulary import check_vocabulary, corpus_vocab_size, model_config_for_corpus

WIDE = {"n_layer": 4, "d_model": 128, "n_head": 4, "d_ff": 512, "position": "rope", "train_length": 16}


def write_corpus(folder, vocab_size, n_tokens=4000, docs=4):
    """Token files in prepare's format whose ids lie below `vocab_size` (the model only needs ids and
    meta.json here, not real text)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    splits = {}
    for split in ("train", "valid", "test"):
        tokens = rng.integers(1, vocab_size, n_tokens).astype(np.uint16)
        offsets = np.linspace(0, n_tokens, docs + 1).astype(np.int64)
        tokens[offsets[1:] - 1] = 0  # EOT closes every document
        tokens.tofile(folder / f"{split}.bin")
        splits[split] = {"file": f"{split}.bin", "n_docs": docs, "n_tokens": n_tokens, "doc_offsets": offsets.tolist()}
    meta = {"tokenizer": f"bpe-{vocab_size}-test", "vocab_size": vocab_size, "eot_token": 0, "dtype": "uint16",
            "splits": splits}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def expected_parameters(vocab, n_layer, d, d_ff):
    """By hand: tied embedding/head (vocab x d); per block two LayerNorms (2 x 2d), qkv (d x 3d + 3d),
    output projection (d x d + d), MLP (d x d_ff + d_ff, d_ff x d + d); a final LayerNorm (2d).
    RoPE has no parameters."""
    block = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * d_ff + d_ff) + (d_ff * d + d)
    return vocab * d + n_layer * block + 2 * d


def test_hand_count_matches_the_issue_figure():
    # Issue 16 measured 7,226,240 parameters for a 4x128 model with GPT-2's vocabulary.
    assert expected_parameters(50257, 4, 128, 512) == 7_226_240
    assert expected_parameters(4096, 4, 128, 512) == 4096 * 128 + 793_088 + 256 == 1_317_632


def test_bpe_4096_corpus_trains_a_4096_row_model_and_the_checkpoint_records_it(tmp_path):
    data = write_corpus(tmp_path / "bpe", 4096)
    out = tmp_path / "m.pt"
    train_cfg = {"steps": 2, "batch_size": 2, "warmup": 1, "log_every": 1, "checkpoint_every": 10, "eval_batches": 1}
    train_main(["--model-config", json.dumps(WIDE), "--train-config", json.dumps(train_cfg), "--data", str(data),
                "--out", str(out), "--workdir", str(tmp_path / "w"), "--device", "cpu"])
    payload = read_checkpoint(out)
    assert payload["model_config"]["vocab_size"] == 4096
    assert payload["params"] == expected_parameters(4096, 4, 128, 512) == 1_317_632
    assert payload["model"]["tok_emb.weight"].shape == torch.Size([4096, 128])


def test_gpt2_corpus_keeps_the_default_config(tmp_path):
    data = write_corpus(tmp_path / "gpt2", 50257)
    assert model_config_for_corpus(WIDE, data) == ModelConfig.from_dict(WIDE)  # 50257, the default


def test_a_conflicting_vocab_size_names_both(tmp_path):
    data = write_corpus(tmp_path / "bpe", 4096)
    with pytest.raises(ValueError, match=r"vocab_size 50257 conflicts with the corpus's vocab_size 4096 .*meta\.json"):
        model_config_for_corpus({**WIDE, "vocab_size": 50257}, data)
    assert model_config_for_corpus({**WIDE, "vocab_size": 4096}, data).vocab_size == 4096  # agreeing is fine
    # The Python API: a from-scratch model must match; a continued one needs a row per token id.
    with pytest.raises(ValueError, match="vocab_size 50257 conflicts with the corpus's vocab_size 4096"):
        train(ModelConfig.from_dict(WIDE), TrainConfig(steps=1), data, tmp_path / "m.pt", tmp_path / "w")
    check_vocabulary(ModelConfig.from_dict({**WIDE, "vocab_size": 4200}), data, from_scratch=False)
    with pytest.raises(ValueError, match="vocab_size 4000 is smaller than the corpus's vocab_size 4096"):
        check_vocabulary(ModelConfig.from_dict({**WIDE, "vocab_size": 4000}), data, from_scratch=False)


def test_missing_or_bad_meta_is_one_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="meta.json not found"):
        corpus_vocab_size(tmp_path)
    (tmp_path / "meta.json").write_text(json.dumps({"vocab_size": "many"}))
    with pytest.raises(ValueError, match="vocab_size 'many' is not a positive integer"):
        corpus_vocab_size(tmp_path)
