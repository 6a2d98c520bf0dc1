"""Issue 36, provenance: a checkpoint records what it is (lenex.records.provenance) and every entry point
that reads one refuses, before scoring, a model that is not the one its target names
(`--expect`) or that was trained on another tokenizer than its corpus's (meta.json)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from corpus_fixture import make_corpus

from lenex.records.checkpoint import read_checkpoint, save_checkpoint
from lenex.config import ModelConfig
from lenex.data.bpe import train_bpe
from lenex.data.prepare import prepare
from lenex.model import LanguageModel
from lenex.training.train import TrainConfig, train

SRC = Path(__file__).resolve().parents[1] / "src"
SHAPE = dict(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32)
TRAIN = TrainConfig(steps=2, batch_size=2, lr=1e-3, warmup=1, log_every=1, checkpoint_every=5)
LABELS = {"paper": "lex", "preset": "tiny"}
ROPE_TARGET = {**LABELS, "variant": "rope", "position": "rope", "position_options": {}, "seed": 1, **SHAPE}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A GPT-2 corpus and a BPE-300 corpus of the same texts; models trained on each, and one
    saved without an identity (a checkpoint from before identities were recorded)."""
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("provenance")
    gpt2 = make_corpus(root / "g", n_docs=6, words_per_doc=400)
    texts = [p.read_text() for p in sorted((root / "g" / "texts").iterdir())]
    (root / "bpe.json").write_text(train_bpe(texts, 300).to_str())
    bpe = root / "b" / "data"
    prepare({"source": "text_dir", "path": str(root / "g" / "texts")}, root / "resources", bpe,
            tokenizer=f"bpe:{root / 'bpe.json'}", seed=1, valid_fraction=0.2, test_fraction=0.2)
    models = {}
    for name, position, data, vocab, extra in (("alibi", "alibi", gpt2, 50257, {}), ("rope", "rope", gpt2, 50257, {}),
                                               ("deep", "rope", gpt2, 50257, {"n_layer": 2}),
                                               ("bpe_model", "rope", bpe, 300, {})):
        cfg = ModelConfig(**{**SHAPE, **extra}, position=position, vocab_size=vocab)
        models[name] = root / f"{name}.pt"
        variant = "rope" if name == "deep" else name
        train(cfg, TRAIN, data, models[name], root / f"w-{name}", labels={**LABELS, "variant": variant})
    models["old"] = root / "old.pt"
    save_checkpoint(models["old"], LanguageModel(ModelConfig(**SHAPE, position="alibi", vocab_size=50257)))
    return {"gpt2": gpt2, "bpe": bpe, **models}


def test_training_records_the_identity(world):
    identity = read_checkpoint(world["bpe_model"])["identity"]
    assert {k: identity[k] for k in ("paper", "variant", "preset", "seed", "steps", "position", "n_layer",
                                     "train_length", "mask", "vocab_size", "corpus_vocab_size")} == {
        "paper": "lex", "variant": "bpe_model", "preset": "tiny", "seed": 1, "steps": 2, "position": "rope", "n_layer": 1,
        "train_length": 32, "mask": "causal", "vocab_size": 300, "corpus_vocab_size": 300}
    assert identity["tokenizer"].startswith("bpe-300-") and len(identity["corpus_meta_sha256"]) == 64


def _evaluate(checkpoint, data, out, expect=None):
    args = [sys.executable, "-m", "lenex.scoring.evaluate", "--checkpoint", str(checkpoint), "--data", str(data),
            "--length", "32", "--span", "64", "--max-tokens", "128", "--out", str(out), "--threads", "1"]
    args += ["--expect", json.dumps(expect)] if expect is not None else []
    return subprocess.run(args, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"})


def _refused(done, out, *named):
    assert done.returncode == 2 and not Path(out).exists(), done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 or not lines[-1].startswith("Traceback"), done.stderr
    last = lines[-1]
    assert last.startswith("error: ") and all(str(n) in last for n in named), last
    return last


def test_swapped_checkpoint_of_the_same_shape_is_refused(world, tmp_path):
    """`cp alibi.pt rope.pt`: same shape, same corpus; the RoFormer cell must not show ALiBi's number."""
    swapped = tmp_path / "rope.pt"
    shutil.copy(world["alibi"], swapped)
    out = tmp_path / "L32.json"
    said = _refused(_evaluate(swapped, world["gpt2"], out, ROPE_TARGET), out, swapped, out)
    assert "variant is 'alibi', expected 'rope'" in said


def test_checkpoint_of_another_shape_is_refused(world, tmp_path):
    out = tmp_path / "L32.json"
    said = _refused(_evaluate(world["deep"], world["gpt2"], out, ROPE_TARGET), out, world["deep"])
    assert "n_layer is 2, expected 1" in said


def test_the_right_checkpoint_passes_its_expectation(world, tmp_path):
    out = tmp_path / "L32.json"
    done = _evaluate(world["rope"], world["gpt2"], out, {**ROPE_TARGET, "tokenizer": "gpt2", "steps": 2})
    assert done.returncode == 0 and json.loads(out.read_text())["ppl"] > 0, done.stderr


@pytest.mark.parametrize("model, corpus", [("rope", "bpe"), ("bpe_model", "gpt2"), ("old", "bpe")])
def test_tokenizer_or_vocabulary_mismatch_is_refused(world, tmp_path, model, corpus):
    """A GPT-2-vocabulary model on a BPE corpus (today ppl 1372, rc 0) and the reverse (today a bare
    IndexError); an old checkpoint without an identity is still refused by its vocabulary."""
    out = tmp_path / "L32.json"
    said = _refused(_evaluate(world[model], world[corpus], out), out, world[model], world[corpus] / "meta.json")
    assert ("tokenizer differs" if model != "old" else "vocab_size differs") in said


def test_old_checkpoint_answers_model_fields_and_refuses_identity_fields(world, tmp_path):
    out = tmp_path / "L32.json"
    said = _refused(_evaluate(world["old"], world["gpt2"], out, {"variant": "alibi"}), out, world["old"])
    assert "records no identity" in said and "retrain" in said
    assert "position is 'alibi', expected 'rope'" in _refused(
        _evaluate(world["old"], world["gpt2"], out, {"position": "rope"}), out)
    assert _evaluate(world["old"], world["gpt2"], out, {"position": "alibi", **SHAPE}).returncode == 0


def _fairseq_checkpoint(lenex_checkpoint, path):
    """A fairseq `lenex_lm` checkpoint holding a lenex model's weights (what fairseq-train writes)."""
    payload = read_checkpoint(lenex_checkpoint)
    cfg = payload["model_config"]
    model = {"_name": "lenex_lm", "decoder_layers": cfg["n_layer"], "decoder_embed_dim": cfg["d_model"],
             "decoder_attention_heads": cfg["n_head"], "decoder_ffn_embed_dim": cfg["d_ff"], "dropout": 0.0,
             "lenex_position": cfg["position"], "lenex_position_options": "{}", "lenex_mask": "causal",
             "lenex_mask_options": "{}", "tokens_per_sample": cfg["train_length"]}
    torch.save({"model": {f"decoder.lm.{k}": v for k, v in payload["model"].items()}, "cfg": {"model": model},
                "optimizer_history": [{"num_updates": 2}]}, path)
    return path


def _entry_points(checkpoint, data, out, tmp_path, expect):
    cell = [{"stage": "eval", "data": str(data), "mask": "causal", "length": 32, "out": str(out)}]
    rf = ["--train-length", "32", "--multiples", "1", "--span-multiple", "2", "--segments", "2"]
    common = ["--data", str(data), "--out", str(out), "--expect", json.dumps(expect)]
    return {
        "lenex.scoring.evaluate": ["--checkpoint", checkpoint, "--length", "32", "--span", "64", *common],
        "lenex.lex.evaluate_model": ["--checkpoint", checkpoint, "--cells", json.dumps(cell), "--span", "64",
                                     "--expect", json.dumps(expect)],
        "lenex.lex.resolution": ["--checkpoint", checkpoint, "--length", "32", "--span", "64", *common],
        "lenex.receptive_field.evaluate": ["--checkpoint", checkpoint, *rf, "--erf-out", str(out) + ".erf", *common],
        "lenex.receptive_field.cache_eval": ["--checkpoint", checkpoint, *rf, *common],
        "lenex.segmented.evaluate": ["--checkpoint", checkpoint, "--length", "32", *common],
        "lenex.segmented.attention": ["--checkpoint", checkpoint, "--length", "32", "--train-length", "16", *common],
        "lenex.segmented.continued": ["--init", checkpoint, "--method", "full", "--extend", "1", "--train-config",
                                      '{"batch_size": 2}', "--workdir", str(tmp_path / "w"), *common],
        "lenex.fairseq_backend.convert": ["--checkpoint", _fairseq_checkpoint(checkpoint, tmp_path / "fs.pt"),
                                          "--out", str(out), "--data", str(data), "--expect", json.dumps(expect)],
    }


ENTRY_POINTS = ["lenex.scoring.evaluate", "lenex.lex.evaluate_model", "lenex.lex.resolution", "lenex.receptive_field.evaluate",
                "lenex.receptive_field.cache_eval", "lenex.segmented.evaluate", "lenex.segmented.attention",
                "lenex.segmented.continued", "lenex.fairseq_backend.convert"]
CONVERT = "lenex.fairseq_backend.convert"


@pytest.mark.parametrize("module", ENTRY_POINTS)
@pytest.mark.parametrize("fault", ["swapped", "tokenizer"])
def test_every_entry_point_checks_before_scoring(world, tmp_path, module, fault):
    """A fairseq checkpoint records no identity: its conversion is checked on the model fields
    and the vocabulary."""
    import importlib

    swapped = tmp_path / "rope.pt"
    shutil.copy(world["alibi"] if fault == "swapped" else world["rope"], swapped)
    data = world["gpt2" if fault == "swapped" else "bpe"]
    out = tmp_path / "out.json"
    expect = ROPE_TARGET if module != CONVERT else {"position": "rope", **SHAPE}
    argv = [str(a) for a in _entry_points(swapped, data, out, tmp_path, expect)[module]]
    with pytest.raises(ValueError) as refused:
        importlib.import_module(module).main(argv)
    said = str(refused.value)
    checked = tmp_path / "fs.pt" if module == CONVERT else swapped
    if fault == "swapped":
        wrong = "position is 'alibi', expected 'rope'" if module == CONVERT else "variant is 'alibi', expected 'rope'"
        assert said.startswith(f"{checked} is not the model {out} expects: {wrong}"), said
    else:
        assert said.startswith(f"{checked} cannot score {data / 'meta.json'}: "
                               + ("vocab_size differs" if module == CONVERT else "tokenizer differs")), said
    assert not out.exists() and not (tmp_path / "w" / "metrics.jsonl").exists()
