"""The training mixture built from prepared corpora (lenex.data.mix)."""
import json

import numpy as np
import pytest

from corpus_fixture import make_corpus
from lenex.data import mix
from lenex.data.prepare import main as prepare_main
from lenex.data.store import load_split


def test_normalised_weights_and_errors():
    assert mix.normalised_weights({"a": 3, "b": 1}) == {"a": 0.75, "b": 0.25}
    with pytest.raises(ValueError, match="positive"):
        mix.normalised_weights({"a": 1, "b": 0})
    with pytest.raises(ValueError, match="at least one"):
        mix.normalised_weights({})


def test_budget_is_set_by_the_scarcest_component():
    # a has 1000 tokens for a 75% share (-> 1333 total), b 1000 for 25% (-> 4000 total).
    assert mix.mix_budget({"a": 1000, "b": 1000}, {"a": 0.75, "b": 0.25}) == 1333
    assert mix.mix_budget({"a": 1000, "b": 1000}, {"a": 0.75, "b": 0.25}, cap=500) == 500


def test_pick_documents_reaches_target_without_repeats():
    lengths = [10, 20, 30, 40, 50]
    chosen = mix.pick_documents(lengths, 60, seed=3)
    assert len(set(chosen)) == len(chosen)
    total = sum(lengths[i] for i in chosen)
    assert total >= 60 and total - lengths[chosen[-1]] < 60  # stops at the crossing document
    assert chosen == mix.pick_documents(lengths, 60, seed=3)  # seeded
    assert sorted(mix.pick_documents(lengths, 10**6, seed=3)) == list(range(5))


@pytest.fixture(scope="module")
def components(tmp_path_factory):
    root = tmp_path_factory.mktemp("mix")
    (root / "data").mkdir()
    for name, words in (("books", 600), ("code", 300)):  # laid out as results/<preset>/data/<role>
        make_corpus(root / name, n_docs=20, words_per_doc=words, seed=len(name)).rename(root / "data" / name)
    return root / "data"


def test_mix_keeps_splits_and_follows_weights(components, tmp_path):
    spec = {"source": "mix", "components": {"books": 1, "code": 1}}
    meta = mix.build_mix(spec, components, tmp_path / "mixed", seed=5)
    for split in ("train", "valid", "test"):
        got = load_split(tmp_path / "mixed", split)
        assert got.meta["n_tokens"] == len(got.tokens)
        # every mixed document comes from the same split of its component
        for doc_id in got.meta["doc_ids"]:
            name, inner = doc_id.split("/", 1)
            assert inner in load_split(components / name, split).meta["doc_ids"]
        by = meta["splits"][split]["tokens_by_component"]
        share = by["books"] / sum(by.values())
        assert 0.3 < share < 0.7  # equal weights; whole documents make it inexact
    train = load_split(tmp_path / "mixed", "train")
    assert np.all(train.tokens[train.doc_offsets[1:] - 1] == meta["eot_token"])


def test_mix_cli_and_missing_component(components, tmp_path):
    spec = {"source": "mix", "components": {"books": 2, "code": 1}}
    prepare_main(["--source-spec", json.dumps(spec), "--out", str(tmp_path / "m"),
                  "--data-root", str(components), "--role", "train_mix"])
    meta = json.loads((tmp_path / "m" / "meta.json").read_text())
    assert meta["role"] == "train_mix" and meta["source"]["weights"]["books"] == pytest.approx(2 / 3)
    with pytest.raises(FileNotFoundError, match="component 'web' is not prepared"):
        mix.build_mix({"components": {"web": 1}}, components, tmp_path / "x")
    assert not (tmp_path / "x").exists()
