"""Scoring models trained again as the committed run scored them (lenex.scoring.reproduce)."""
import shutil

import pytest
from corpus_fixture import scored_model

from lenex.scoring.evaluate import run
from lenex.scoring.reproduce import compared, reproduce, rule_of


def test_the_rule_a_record_was_scored_by():
    assert rule_of({"nll": 1.0}) == "first-documents"
    assert rule_of({"scored": {"rule": "across-documents"}}) == "across-documents"


def test_a_cell_reproduces_only_on_the_same_tokens_within_the_tolerance():
    committed = {"nll": 4.0, "scored_tokens_sha256": "a"}
    assert compared(committed, {"nll": 4.0004, "scored_tokens_sha256": "a"}, 1e-3)["reproduced"]
    assert not compared(committed, {"nll": 4.002, "scored_tokens_sha256": "a"}, 1e-3)["reproduced"]
    moved = compared(committed, {"nll": 4.0, "scored_tokens_sha256": "b"}, 1e-3)
    assert not moved["reproduced"] and not moved["same_tokens"]
    assert compared(committed, {"nll": 4.25, "scored_tokens_sha256": "a"}, 1e-3)["delta_nll"] == pytest.approx(0.25)


def test_a_committed_cell_scored_again_on_its_model(tmp_path, monkeypatch):
    build, data = scored_model(tmp_path / "build", "rope")
    (tmp_path / "results/ws/data").mkdir(parents=True)
    shutil.move(data, tmp_path / "results/ws/data/corpus")  # where a preset's corpus lies
    shutil.move(build / "m.pt", tmp_path / "results/ws/data/m.pt")
    monkeypatch.chdir(tmp_path)
    cell = "results/ws/eval/lex/rope/seed1/corpus/causal/L32.json"
    record = run("results/ws/data/m.pt", "results/ws/data/corpus", 32, 128, tmp_path / "cell.json",
                 max_tokens=512, scored_rule="first-documents")
    record.pop("scored")  # as the committed runs recorded it: before the rule was recorded
    record["corpus"] = "corpus"
    out = reproduce({cell: record}, [cell])
    assert out["reproduced"] and out["cells"][cell]["delta_nll"] == 0.0
    assert out["cells"][cell]["rule"] == "first-documents"
    # which models were scored: each one's training corpus digest, from its record's identity (the
    # fixture's checkpoint records none, so the re-trained side says None rather than a guess)
    committed_model = {cell: {**record, "identity": {"corpus_meta_sha256": "e" * 64}}}
    scored = reproduce(committed_model, [cell])["cells"][cell]
    assert scored["committed_corpus_meta_sha256"] == "e" * 64
    assert scored["reproduced_corpus_meta_sha256"] == (record.get("identity") or {}).get("corpus_meta_sha256")
    shifted = {cell: {**record, "nll": record["nll"] + 0.01}}
    assert not reproduce(shifted, [cell])["reproduced"]
    with pytest.raises(ValueError, match="not among the committed"):
        reproduce({cell: record}, ["results/ws/eval/other.json"])
