"""Bad input to an entry point ends in one line naming the bad value, and no output file."""

import json
import subprocess
import sys

import pytest
from corpus_fixture import make_corpus


def run(module, *args):
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("cli"), n_docs=6, words_per_doc=300)


def train_args(tmp_path, corpus, **model):
    config = {"n_layer": 1, "d_model": 16, "n_head": 2, "d_ff": 32, "train_length": 16, **model}
    return ["--model-config", json.dumps(config), "--train-config", json.dumps({"steps": 1, "batch_size": 2}),
            "--data", str(corpus), "--out", str(tmp_path / "m.pt"), "--workdir", str(tmp_path / "w")]


@pytest.mark.parametrize(
    "model,expected",
    [
        ({"position": "rotary"}, "unknown position scheme 'rotary'"),
        ({"mask": "banded"}, "unknown attention mask 'banded'"),
        ({"position": "xpos", "position_options": {"gama": 0.4}}, "unknown option 'gama'"),
        ({"heads": 2}, "unknown model config key 'heads'"),
    ],
)
def test_bad_model_config_is_one_line(tmp_path, corpus, model, expected):
    result = run("lenex.training.train", *train_args(tmp_path, corpus, **model))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: ") and expected in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "m.pt").exists()


def test_missing_corpus_is_one_line(tmp_path):
    result = run("lenex.training.train", *train_args(tmp_path, tmp_path / "no-such-corpus", position="rope"))
    assert result.returncode == 2 and "no-such-corpus/meta.json not found" in result.stderr
    assert "Traceback" not in result.stderr


def test_corrupt_token_file_is_one_line(tmp_path, corpus):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(corpus, broken)
    (broken / "train.bin").write_bytes(b"\x00\x01\x02")
    result = run("lenex.training.train", *train_args(tmp_path, broken, position="rope"))
    assert result.returncode == 2 and "train.bin is corrupt" in result.stderr
