"""A corpus prepared again against the committed run's record of it (lenex.data.rebuild_check)."""
import json

import pytest

from lenex.data.rebuild_check import check, shared_differences
from lenex.tables.raw_results import collect

COMMITTED = {"tokenizer": "bpe-4096-1000c7e0e8a5", "role": "train_mix",
             "source": {"fetched": {"perl-doc": {"version": "5.36.0-7+deb12u4", "sha256": "c" * 64,
                                                 "fetched_at": "2026-11-27T20:56:04+00:00"}}},
             "splits": {"train": {"file": "train.bin", "n_docs": 3072, "n_tokens": 27825422,
                                  "tokens_by_component": {"arxiv": 1765796, "openwebtext2": 15518310}}}}


def rebuilt(**changes):
    meta = json.loads(json.dumps(COMMITTED))
    meta["splits"]["train"].update(changes)
    meta["source"]["fetched"]["perl-doc"]["fetched_at"] = "2026-12-03T12:07:00+00:00"  # another day: not a fact
    meta["splits"]["train"]["sha256"] = "f" * 64  # recorded by today's code alone
    meta["meta_sha256"] = "e" * 64
    return meta


def test_facts_both_record_are_compared_and_the_rest_listed():
    differences, one_sided, compared = shared_differences(rebuilt(), COMMITTED)
    # tokenizer, role, the package's version and sha256, the split's file, n_docs, n_tokens, two components
    assert differences == [] and compared == 9
    assert one_sided == ["meta_sha256 (only the rebuilt meta)", "splits.train.sha256 (only the rebuilt meta)"]
    other = rebuilt(tokens_by_component={"arxiv": 1765796, "openwebtext2": 15411207}, n_tokens=27718319)
    differences, _, _ = shared_differences(other, COMMITTED)
    assert differences == ["splits.train.n_tokens: 27718319 rebuilt, 27825422 committed",
                           "splits.train.tokens_by_component.openwebtext2: 15411207 rebuilt, 15518310 committed"]


def test_each_rebuilt_meta_is_checked_against_every_committed_copy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = "results/w/data/train_mix/meta.json"
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text(json.dumps(COMMITTED, indent=1) + "\n")
    (tmp_path / "a.jsonl").write_text(collect([path]))
    (tmp_path / path).write_text(json.dumps(rebuilt(n_docs=3071), indent=1) + "\n")
    result = check([path], ["a.jsonl"])
    assert result["same"] is False and result["corpora"][path]["against"]["a.jsonl"]["differences"] == [
        "splits.train.n_docs: 3071 rebuilt, 3072 committed"]
    (tmp_path / path).write_text(json.dumps(rebuilt(), indent=1) + "\n")
    assert check([path], ["a.jsonl"])["same"] is True
    with pytest.raises(ValueError, match=r"none of the committed raw results holds results/w/data/pg22/meta\.json"):
        check(["results/w/data/pg22/meta.json"], ["a.jsonl"])
