"""lenex.data.bpe (corpus-trained byte-level BPE) and get_tokenizer("bpe:<path>")."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lenex.data.bpe import main as bpe_main
from lenex.data.bpe import train_bpe
from lenex.data.prepare import prepare, split_groups
from lenex.data.tokenizer import get_tokenizer
from lenex.data.store import load_split

TEXTS = ["the king and queen of the realm spoke to their people in the hall " * 20,
         "while the wind blew over the hills and the rivers ran to the sea " * 20,
         "naïve café — 1848! 'quotes'\n\n  indented\twith tab " * 5]
TRICKY = "Hello world <|endoftext|> naïve café — 1848!\n\n  x\t€ 日本"


def _save(tok, path):
    path.write_text(tok.to_str())
    return f"bpe:{path}"


def test_train_is_deterministic_and_sized():
    a, b = train_bpe(TEXTS, 300), train_bpe(list(reversed(TEXTS)), 300)
    assert a.to_str() == b.to_str()  # document order does not matter either
    assert a.get_vocab_size() == 300 and a.token_to_id("<|endoftext|>") == 0
    assert train_bpe(TEXTS, 320).to_str() != a.to_str()


@pytest.mark.parametrize("size", [256, 65537])
def test_vocab_size_out_of_range(size):
    with pytest.raises(ValueError, match=f"vocab size {size}"):
        train_bpe(TEXTS, size)


def test_bpe_tokenizer_interface(tmp_path):
    tok = get_tokenizer(_save(train_bpe(TEXTS, 300), tmp_path / "t.json"))
    ids = tok.encode(TRICKY)
    assert tok.decode(ids) == TRICKY  # bytes never seen in training still round-trip
    assert tok.eot_token == 0 and tok.eot_token not in ids  # the literal marker is text
    assert tok.decode([tok.eot_token]) == "<|endoftext|>"
    assert tok.encode_batch([TRICKY, "the king"]) == [ids, tok.encode("the king")]
    assert len(tok.encode("the king and queen")) < len("the king and queen")  # merges used
    content = (tmp_path / "t.json").read_bytes()
    assert tok.name == f"bpe-300-{hashlib.sha256(content).hexdigest()[:12]}"
    assert tok.vocab_size == 300 and max(ids) < 300


def test_name_follows_file_content(tmp_path):
    spec = _save(train_bpe(TEXTS, 300), tmp_path / "t.json")
    first = get_tokenizer(spec)
    _save(train_bpe(TEXTS, 320), tmp_path / "t.json")  # same path, new file
    second = get_tokenizer(spec)
    assert second.name.startswith("bpe-320-") and second.name != first.name


def test_gpt2_unchanged():
    assert get_tokenizer("gpt2").encode("Hello world") == [15496, 995]


@pytest.mark.parametrize("content, match", [
    (b"{not json", "corrupt"),
    (b'{"model": {"type": "BPE", "vocab": 3}}', "corrupt"),
    (b'["a list"]', "corrupt"),
    (b'{"model": {"type": "WordLevel"}}', "WordLevel model, not BPE"),
])
def test_bad_tokenizer_files(tmp_path, content, match):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match) as err:
        get_tokenizer(f"bpe:{path}")
    assert str(path) in str(err.value)


def test_missing_eot_and_missing_file_and_unknown_name(tmp_path):
    tok = train_bpe(TEXTS, 300)
    data = json.loads(tok.to_str())
    data["added_tokens"] = []
    del data["model"]["vocab"]["<|endoftext|>"]
    (tmp_path / "noeot.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="no <|endoftext|> token"):
        get_tokenizer(f"bpe:{tmp_path / 'noeot.json'}")
    with pytest.raises(FileNotFoundError, match="absent.json not found"):
        get_tokenizer(f"bpe:{tmp_path / 'absent.json'}")
    with pytest.raises(ValueError, match="names no file"):
        get_tokenizer("bpe:")
    with pytest.raises(ValueError, match="'sentencepiece'"):
        get_tokenizer("sentencepiece")


@pytest.fixture
def books(tmp_path):
    """Ten one-book groups; each book repeats its own made-up word, so the vocabulary
    shows which books the tokenizer saw."""
    root = tmp_path / "books"
    root.mkdir()
    for i in range(10):
        word = (chr(97 + 2 * i) + chr(98 + 2 * i)) * 3  # ababab, cdcdcd, ...,ststst
        (root / f"book{i}.txt").write_text((f"{word} the hall " * 200) + "\n")
    return root


def test_cli_sees_only_train_and_prepare_uses_it(tmp_path, books):
    spec = {"source": "text_dir", "path": str(books)}
    out = tmp_path / "tok.json"
    args = ["--source-spec", json.dumps(spec), "--resources", str(tmp_path), "--seed", "3",
            "--valid-fraction", "0.2", "--test-fraction", "0.2", "--vocab-size", "400",  # more than the corpus has: stops at 288
            "--out", str(out)]
    bpe_main(args)
    vocab = json.loads(out.read_text())["model"]["vocab"]
    assign = split_groups([f"book{i}" for i in range(10)], 3, 0.2, 0.2)
    for split, groups in assign.items():
        for group in groups:
            word = (books / f"{group}.txt").read_text().split()[0]
            seen = any(word in token for token in vocab)
            assert seen == (split == "train"), (split, word)

    # same file from a fresh process (different hash seeds)
    again = tmp_path / "again.json"
    env = dict(os.environ, PYTHONHASHSEED="123")
    subprocess.run([sys.executable, "-m", "lenex.data.bpe", *args[:-1], str(again)],
                   check=True, env=env, capture_output=True)
    assert again.read_bytes() == out.read_bytes()

    meta = prepare(spec, tmp_path, tmp_path / "data", tokenizer=f"bpe:{out}", seed=3,
                   valid_fraction=0.2, test_fraction=0.2)
    tok = get_tokenizer(f"bpe:{out}")
    assert meta["tokenizer"] == tok.name and meta["vocab_size"] == tok.vocab_size == 288
    test = load_split(tmp_path / "data", "test")
    first = next(test.documents())
    assert tok.decode(first) == (books / f"{test.meta['doc_ids'][0]}.txt").read_text().strip()
    assert test.tokens[test.doc_offsets[1] - 1] == tok.eot_token == 0
    assert np.all(test.tokens < 288)


def test_cli_bad_spec_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "lenex.data.bpe", "--source-spec", "{oops", "--vocab-size",
         "300", "--out", str(tmp_path / "x.json")], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("error: --source-spec is not valid JSON")
    assert not (tmp_path / "x.json").exists()
