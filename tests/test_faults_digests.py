"""Content, not size: every artefact lenex writes and reads again carries the digest of its content
(lenex.digests), compared where it is read; tables are bound to the corpus their evaluations scored;
records are complete (a seed or a metric missing is named with its file, not a shrunk mean); files
are unpickled with weights_only=True. Small synthetic files only."""

import hashlib
import json
import logging
import math
import os

import numpy as np
import pytest
import torch
from test_faults_tables import _result, _table_args

from lenex.claims.render import load_cells
from lenex.cli import run_cli
from lenex.config import ModelConfig
from lenex.data import store
from lenex.digests import CONTENT_KEY, DigestMismatch, json_sha256, payload_sealed, payload_sha256
from lenex.files import atomic_write_result
from lenex.model import LanguageModel
from lenex.records.checkpoint import read_checkpoint, save_checkpoint
from lenex.records.checks import check_record
from lenex.tables.raw_results import check_collected, collect, read_recorded
from lenex.tables.render import main as render_main
from lenex.training import resume

MODEL = ModelConfig(n_layer=1, d_model=16, n_head=2, d_ff=32, train_length=16, position="rope", vocab_size=64)


def _checkpoint(tmp_path, name="m.pt"):
    torch.manual_seed(0)
    model = LanguageModel(MODEL)
    with torch.no_grad():  # a pattern the test can find among the file's bytes
        model.tok_emb.weight.fill_(1.2345)
    path = tmp_path / name
    save_checkpoint(path, model, step=3)
    return path


def _corpus(folder, seed=0, n_tokens=60, docs=3):
    """A corpus of `docs` documents per split, ids 1..49 with EOT 0, written through corpus_draft."""
    rng = np.random.default_rng(seed)
    meta = store.corpus_meta("toy", 50, 0, source={"source": "toy"}, splits={})
    with store.corpus_draft(folder) as draft:
        for split in store.SPLITS:
            offsets = np.linspace(0, n_tokens, docs + 1).astype(np.int64)
            tokens = rng.integers(1, 50, n_tokens).astype(store.DTYPE)
            tokens[offsets[1:] - 1] = 0
            meta["splits"][split] = draft.write_split(split, tokens, offsets, [f"d{i}" for i in range(docs)], ["g"])
        draft.write_meta(meta)
    return folder


# --- checkpoints ------------------------------------------------------------------------------


def test_a_checkpoint_with_16_bytes_changed_in_its_weights_is_refused(tmp_path):
    """Before (issue 60's trial): it loaded and was scored (the RoFormer row of LEX Table 2 moved, rc 0).
    Here torch's zip reader (CRC-32 of the record) or the payload digest refuses it, one line with the fix."""
    path = _checkpoint(tmp_path)
    data = bytearray(path.read_bytes())
    pattern = np.full(4, 1.2345, dtype=np.float32).tobytes() * 4  # 16 bytes of the embedding
    at = data.find(pattern, len(data) // 4)
    assert at > 0
    data[at:at + 16] = np.full(4, 2.5, dtype=np.float32).tobytes() * 4
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError) as refused:
        read_checkpoint(path)
    said = str(refused.value)
    assert "\n" not in said and said.startswith(f"checkpoint {path} is corrupt")
    assert f"delete it and rebuild it with `snakemake --cores 2 --force {path}`" in said


def test_a_checkpoint_resaved_with_other_weights_fails_its_digest(tmp_path):
    """A payload whose tensors changed but kept the digest it was saved with (re-saved by hand)."""
    path = _checkpoint(tmp_path)
    payload = read_checkpoint(path)
    assert payload[CONTENT_KEY] == payload_sha256({k: v for k, v in payload.items() if k != CONTENT_KEY})
    payload["model"]["tok_emb.weight"][3, 5] += 1e-3
    torch.save(payload, path)
    with pytest.raises(ValueError, match=rf"^checkpoint {path} is corrupt: its content does not match the digest"):
        read_checkpoint(path)


def test_the_payload_digest_is_of_values_not_of_the_zip_layout():
    a = {"model": {"w": torch.arange(6.0).reshape(2, 3)}, "step": 3, "betas": (0.9, 0.95)}
    same = {"step": 3, "betas": (0.9, 0.95), "model": {"w": torch.arange(6.0).reshape(2, 3).t().contiguous().t()}}
    assert payload_sha256(a) == payload_sha256(same)
    for other in ({**a, "step": 4}, {**a, "betas": [0.9, 0.95]}, {**a, "model": {"w": torch.arange(6.0)}},
                  {**a, "model": {"w": torch.arange(6.0).reshape(2, 3).double()}}):
        assert payload_sha256(other) != payload_sha256(a)


class _RunsCode:
    """What a crafted checkpoint could hold: unpickling it calls os.system."""
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_crafted_checkpoint_runs_nothing_and_is_named(tmp_path):
    """Before: torch.load(weights_only=False) ran the file's code before lenex said it was no checkpoint."""
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    torch.save({"format": "lenex-checkpoint-v1", "x": _RunsCode(marker)}, path)
    with pytest.raises(ValueError) as refused:
        read_checkpoint(path)
    assert not marker.exists()
    said = str(refused.value)
    assert said.startswith(f"checkpoint {path} holds Python objects besides tensors and plain values (posix.system")
    assert "it is not unpickled" in said and "\n" not in said
    torch.load(path, weights_only=False)  # what the loaders did before: the file's command runs
    assert marker.exists()


# --- resume states ----------------------------------------------------------------------------


def _state(identity):
    model = LanguageModel(MODEL)
    return payload_sealed({"identity": identity, "step": 5, "model": model.state_dict(),
                           "rng": torch.get_rng_state(), "cuda_rng": None,
                           "rng_by_rank": [{"cpu": torch.get_rng_state(), "cuda": None}], "world_size": 1})


def test_a_resume_state_with_changed_content_is_set_aside_as_corrupt(tmp_path, caplog):
    """Before: a last.pt with 64 bytes changed was resumed without a word, and the final model differed."""
    identity = {"model": MODEL.to_dict(), "seed": 1}
    last = tmp_path / "last.pt"
    torch.save(_state(identity), last)
    assert resume.load_state(last, identity)["step"] == 5  # intact: resumed
    state = torch.load(last, weights_only=True)
    state["model"]["tok_emb.weight"][0, :16] += 1.0  # 64 bytes of float32
    torch.save(state, last)
    with caplog.at_level(logging.WARNING, logger="lenex.training.train"):
        assert resume.load_state(last, identity) is None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith(f"set aside {last} as last.pt.corrupt: corrupt: its content does "
                                                 "not match the digest") and said[0].endswith("training starts fresh")
    assert not last.exists() and (tmp_path / "last.pt.corrupt").exists()


def test_a_resume_state_from_before_digests_resumes_and_one_with_objects_is_set_aside(tmp_path):
    identity = {"seed": 1}
    last = tmp_path / "last.pt"
    state = _state(identity)
    del state[CONTENT_KEY]  # saved before digests: a run interrupted across the upgrade keeps its steps
    torch.save(state, last)
    assert resume.load_state(last, identity)["step"] == 5
    marker = tmp_path / "ran"
    torch.save({"identity": identity, "x": _RunsCode(marker)}, last)
    assert resume.load_state(last, identity) is None and not marker.exists()
    assert (tmp_path / "last.pt.corrupt").exists()


def test_the_data_fingerprint_takes_the_recorded_digests(tmp_path):
    """The resume identity's token-file digests equal the files' own sha256 (so states written
    before meta.json carried digests still match), read from meta.json without hashing again."""
    data = _corpus(tmp_path / "c")
    fingerprint = resume.data_fingerprint(data)
    for name in ("train.bin", "valid.bin"):
        assert fingerprint[name] == hashlib.sha256((data / name).read_bytes()).hexdigest()


# --- prepared corpora -------------------------------------------------------------------------


def test_a_split_overwritten_in_place_at_the_same_size_is_refused(tmp_path):
    """Before: in-vocabulary tokens from another split, same size: every row of a table changed, rc 0."""
    data = _corpus(tmp_path / "c")
    assert store.load_split(data, "test").n_docs == 3
    (data / "test.bin").write_bytes((data / "train.bin").read_bytes())  # same size, other tokens
    with pytest.raises(DigestMismatch) as refused:
        store.load_split(data, "test")
    assert str(refused.value).startswith(f"{data / 'test.bin'} is not the file {data / 'meta.json'} describes")
    assert "delete the corpus folder and prepare it again" in str(refused.value)


def test_a_meta_json_with_shifted_offsets_is_refused(tmp_path):
    """Before: shifted document offsets (still consistent with n_docs and n_tokens) changed what was scored."""
    data = _corpus(tmp_path / "c")
    meta = json.loads((data / "meta.json").read_text())
    meta["splits"]["test"]["doc_offsets"][1] += 7
    (data / "meta.json").write_text(json.dumps(meta, indent=1))
    with pytest.raises(DigestMismatch, match=rf"^{data / 'meta.json'} was changed after it was written"):
        store.load_split(data, "test")


def test_a_corpus_from_before_digests_still_reads(tmp_path):
    data = _corpus(tmp_path / "c")
    meta = json.loads((data / "meta.json").read_text())
    del meta["meta_sha256"]
    for info in meta["splits"].values():
        del info["sha256"]
    (data / "meta.json").write_text(json.dumps(meta))
    assert store.load_split(data, "test").n_docs == 3


# --- evaluation records and the tables bound to them ------------------------------------------


def test_an_evaluation_record_edited_after_it_was_written_fails_the_table(tmp_path, capsys):
    """ppl and nll edited together (consistent, in their domains): only the digest tells."""
    path, record = _result(tmp_path)
    atomic_write_result(path, {**record, "nll": math.log(123.4)})
    written = json.loads(path.read_text())
    assert written[CONTENT_KEY] == json_sha256({k: v for k, v in written.items() if k != CONTENT_KEY})
    path.write_text(json.dumps({**written, "ppl": 99.0, "nll": math.log(99.0)}))
    with pytest.raises(SystemExit) as stop:
        run_cli(render_main, _table_args(tmp_path, path))
    said = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(said) == 1, said
    assert said[0].startswith(f"error: {path}: its content does not match the digest it was written with")
    assert not (tmp_path / "t.md").exists()


def _record_of(tmp_path, data, name="rope"):
    """An evaluation of `data`'s test split recording the corpus digests, as lenex.scoring.evaluate does."""
    path, record = _result(tmp_path, name)
    meta = json.loads((data / "meta.json").read_text())
    record["data_sha256"] = {f"{data}/meta.json": meta["meta_sha256"], f"{data}/test.bin": meta["splits"]["test"]["sha256"]}
    atomic_write_result(path, record)
    return path


def test_a_corpus_prepared_again_or_restored_after_its_evaluation_is_noticed(tmp_path):
    """Before: the corpus restored (with its old mtime) after the tables were made of another one:
    "Nothing to be done", the wrong table in place. Now the table job (read_recorded) and, at DAG
    build, rule raw_results' input function (check_collected) compare each evaluation's corpus
    digests with the corpus's meta.json, reading no token file."""
    data = _corpus(tmp_path / "c")
    original = {p.name: p.read_bytes() for p in data.iterdir()}
    result = _record_of(tmp_path, data)
    assert read_recorded(result)["ppl"] == 123.4
    raw = tmp_path / "raw.jsonl"
    raw.write_text(collect([str(result)]))
    check_collected(str(raw))
    # The corpus prepared again (other tokens), its evaluation rerun, raw results collected ...
    _corpus(data, seed=1)
    result = _record_of(tmp_path, data)
    raw.write_text(collect([str(result)]))
    # ... then the original restored with its old mtime (cp -p): Snakemake sees nothing to do.
    for name, content in original.items():
        (data / name).write_bytes(content)
        os.utime(data / name, (1_000_000, 1_000_000))
    for check in (lambda: read_recorded(result), lambda: check_collected(str(raw))):
        with pytest.raises(ValueError) as refused:
            check()
        said = str(refused.value)
        assert said.startswith(f"{result} was computed from {data}/meta.json with sha256 ") and "\n" not in said
        assert f"but {data}/meta.json now records" in said and f"snakemake --cores 2 --force {result}" in said


# --- records complete and consistent ----------------------------------------------------------


def _seeds(tmp_path, *records):
    paths = []
    for index, fields in enumerate(records):
        path, record = _result(tmp_path, f"rope-{index}")
        record.pop("ppl")
        path.write_text(json.dumps({**record, **fields}))
        paths.append(path)
    return paths


def _render_error(tmp_path, capsys, paths):
    with pytest.raises(SystemExit) as stop:
        run_cli(render_main, _table_args(tmp_path, *paths))
    said = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(said) == 1, said
    assert not (tmp_path / "t.md").exists()
    return said[0]


def test_two_seeds_render_their_mean(tmp_path):
    run_cli(render_main, _table_args(tmp_path, *_seeds(tmp_path, {"seed": 1, "ppl": 100.0}, {"seed": 2, "ppl": 120.0})))
    assert "110.00 ± 14.14" in (tmp_path / "t.md").read_text()  # mean 110, sample std sqrt(200)


def test_a_record_without_its_metric_is_named_not_dropped_from_the_mean(tmp_path, capsys):
    """Before: an evaluation JSON without `ppl` turned a two-seed mean into a one-seed one, marked ok."""
    one, two = _seeds(tmp_path, {"seed": 1, "ppl": 100.0}, {"seed": 2})
    said = _render_error(tmp_path, capsys, [one, two])
    assert said.startswith(f"error: {two}: no 'ppl' field (seed 2), which the mean over seeds of its cell")
    assert f"seed 1: {one}" in said


def test_a_record_without_its_seed_is_named_with_the_files(tmp_path, capsys):
    """Before: "conflicting results for rope/pg22/causal@64: [100.0, 120.0]", no file named."""
    one, two = _seeds(tmp_path, {"seed": 1, "ppl": 100.0}, {"ppl": 120.0})
    said = _render_error(tmp_path, capsys, [one, two])
    assert said.startswith(f"error: {two}: no 'seed' field, but the other results of its cell") and str(one) in said


def test_a_cell_with_fewer_seeds_than_its_model_is_named(tmp_path, capsys):
    """Seed 2's evaluation at length 128 missing: that cell would be a one-seed mean among two-seed ones."""
    paths = _seeds(tmp_path, {"seed": 1, "ppl": 100.0}, {"seed": 2, "ppl": 120.0},
                   {"seed": 1, "ppl": 130.0, "length": 128})
    said = _render_error(tmp_path, capsys, paths)
    assert "'length': 128" in said and "has no result of seed(s) [2], which its model's other cells have" in said


def test_a_mean_is_checked_against_its_parts(tmp_path):
    spans = [6.0, 7.0, 8.0]
    check_record({"nll": 7.0, "ppl": math.exp(7.0), "span_nll": spans, "span": 32, "tokens": 96}, "r.json")
    with pytest.raises(ValueError, match=r"^r.json: nll is 7.5: the mean of its 3 span_nll values is 7.000000$"):
        check_record({"nll": 7.5, "ppl": math.exp(7.5), "span_nll": spans, "span": 32, "tokens": 96}, "r.json")
    cells = tmp_path / "table2.cells.json"
    cell = {"row": "RoFormer", "corpus": "pg22", "our_length": 64, "ours": 110.0, "ours_std": math.sqrt(200),
            "n_seeds": 2, "ours_seeds": {"1": 100.0, "2": 120.0}}
    cells.write_text(json.dumps({"table": "2", "cells": [cell]}))
    assert load_cells([cells])["2"]["cells"][0]["ours"] == 110.0
    for edit, named in (({"ours": 115.0}, "ours is 115.0: the mean of its seeds' values"),
                        ({"ours_std": 1.0}, "ours_std is 1.0: the sample std of its seeds' values is 14.14"),
                        ({"n_seeds": 3}, "n_seeds is 3: it lists 2 seeds' values")):
        cells.write_text(json.dumps({"table": "2", "cells": [{**cell, **edit}]}))
        with pytest.raises(ValueError, match=rf"^cells file {cells}: cell 0 \(RoFormer, pg22, length 64\) {named}"):
            load_cells([cells])



def test_a_fairseq_checkpoint_loads_weights_only_with_its_own_objects(tmp_path):
    """fairseq's legacy `args` Namespace and a numpy best loss are allowed; any other object is refused."""
    import argparse

    from lenex.fairseq_backend.convert import read_fairseq_state

    path = tmp_path / "checkpoint_last.pt"
    torch.save({"model": {"decoder.lm.w": torch.ones(2)}, "args": argparse.Namespace(arch="lenex_lm"),
                "extra_state": {"best": np.float64(3.5)}}, path)
    state = read_fairseq_state(path)
    assert state["args"].arch == "lenex_lm" and state["extra_state"]["best"] == 3.5
    marker = tmp_path / "ran"
    torch.save({"model": {}, "extra_state": {"x": _RunsCode(marker)}}, path)
    with pytest.raises(ValueError, match=rf"^fairseq checkpoint {path} holds Python objects besides tensors"):
        read_fairseq_state(path)
    assert not marker.exists()


def test_a_training_whose_resume_state_is_corrupt_restarts_from_scratch(tmp_path, caplog):
    """Through lenex.training.train: one line, the state kept as last.pt.corrupt, and the final model
    that of a run never interrupted (not one resumed from changed weights)."""
    from corpus_fixture import make_corpus

    from lenex.training.train import TrainConfig, train

    torch.set_num_threads(1)
    model = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="xpos", vocab_size=50257)
    config = TrainConfig(steps=8, batch_size=4, lr=1e-3, warmup=2, log_every=1, checkpoint_every=3)
    data = make_corpus(tmp_path / "corpus")
    assert train(model, config, data, tmp_path / "m.pt", tmp_path / "w", stop_after=5) is None
    last = tmp_path / "w" / "last.pt"
    state = torch.load(last, weights_only=True)
    state["model"]["tok_emb.weight"][0, :16] += 1.0  # 64 bytes changed, the digest kept
    torch.save(state, last)
    with caplog.at_level(logging.WARNING, logger="lenex.training.train"):
        resumed = train(model, config, data, tmp_path / "m.pt", tmp_path / "w")
    said = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
    assert len(said) == 1 and "last.pt.corrupt" in said[0] and "does not match the digest" in said[0], said
    fresh = train(model, config, data, tmp_path / "fresh.pt", tmp_path / "w_fresh")
    assert resumed["final_loss"] == fresh["final_loss"]
    a, b = read_checkpoint(tmp_path / "m.pt")["model"], read_checkpoint(tmp_path / "fresh.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_corpus_prepared_again_before_its_evaluations_rerun_is_left_to_snakemake(tmp_path):
    """At DAG build a meta.json newer than the evaluation is no error: Snakemake reruns the evaluation
    for it (a corpus prepared by an earlier, separate command); only the table job would refuse it."""
    data = _corpus(tmp_path / "c")
    result = _record_of(tmp_path, data)
    raw = tmp_path / "raw.jsonl"
    raw.write_text(collect([str(result)]))
    os.utime(result, (1_000_000, 1_000_000))
    os.utime(raw, (1_000_001, 1_000_001))
    _corpus(data, seed=1)  # newer than the record
    check_collected(str(raw))
    with pytest.raises(ValueError, match="the corpus was prepared again or restored after the evaluation"):
        read_recorded(result)
