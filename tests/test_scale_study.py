"""Scale study (issue 16): grid expansion and ratios by hand; a second invocation trains nothing;
its points are Snakemake targets only with `--config scale_study=True`."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from corpus_fixture import make_corpus
from subprocess_env import env_with_venv
from test_workflow import REPO, job_counts, snakemake

from lenex.scale_study import study as scale_study
from lenex.training import train as trainer
from lenex.scale_study.points import gather_points, length_ratios, read_points, with_added_scores
from lenex.scale_study import study_rules
from lenex.scale_study.points import merged_record
from lenex.scale_study.report import first_showing_rows, scheme_order_rows, write_report, writeup
from lenex.scale_study.study import estimated_cost, expand_grid, load_study, point_name, receptive_field, steps_for
from lenex.scale_study.study_rules import pending_points
from lenex.pipeline.specs import STUDIES
from lenex.scale_study.studies import study_point_spec

GRID = {"tokenizers": ["gpt2", "bpe-4096"], "train_tokens": [4096, 1024],
        "shapes": {"2x64": {"n_layer": 2, "d_model": 64}, "4x128": {"n_layer": 4, "d_model": 128}},
        "phenomena": {"rope": {"model": {"position": "rope", "train_length": 64}, "multiples": [8, 1, 4]},
                      "wide-rope": {"model": {"position": "rope", "d_model": 32, "train_length": 32},
                                    "multiples": [1, 2]}}}


def test_grid_expansion_by_hand():
    points = expand_grid(GRID)
    assert len(points) == 2 * 2 * 2 * 2  # tokens x shapes x tokenizers x phenomena
    # Cheapest budget first, then shape, tokenizer, phenomenon in config order.
    assert [p["key"] for p in points[:4]] == ["rope/gpt2/2x64/1024", "wide-rope/gpt2/2x64/1024",
                                              "rope/bpe-4096/2x64/1024", "wide-rope/bpe-4096/2x64/1024"]
    assert points[-1]["key"] == "wide-rope/bpe-4096/4x128/4096"
    # The phenomenon's model fields win over the shape's; multiples are sorted.
    assert points[1]["model"] == {"n_layer": 2, "d_model": 32, "position": "rope", "train_length": 32}
    assert points[0]["multiples"] == [1, 4, 8]


def test_a_phenomenon_may_run_on_part_of_the_grid_with_its_own_budgets():
    grid = {**GRID, "phenomena": {**GRID["phenomena"], "window": {
        "model": {"position": "none", "mask": "windowed", "mask_options": {"window": 7}, "train_length": 64},
        "multiples": [1, 8], "shapes": ["4x128"], "tokenizers": ["bpe-4096"], "train_tokens": [1024, 16384]}}}
    keys = [p["key"] for p in expand_grid(grid)]
    assert [k for k in keys if k.startswith("window/")] == ["window/bpe-4096/4x128/1024", "window/bpe-4096/4x128/16384"]
    assert len(keys) == 16 + 2  # the other phenomena keep the whole grid, and no 16384 budget
    assert not any(k.endswith("/16384") for k in keys if not k.startswith("window/"))


def test_an_extended_part_adds_budget_only_where_it_names():
    rope = {**GRID["phenomena"]["rope"], "extended": [{"train_tokens": [16384], "tokenizers": ["bpe-4096"],
                                                        "shapes": ["2x64"]}]}
    keys = [p["key"] for p in expand_grid({**GRID, "phenomena": {**GRID["phenomena"], "rope": rope}})]
    assert [k for k in keys if k.endswith("/16384")] == ["rope/bpe-4096/2x64/16384"]
    assert len(keys) == 16 + 1 and keys[-1] == "rope/bpe-4096/2x64/16384"  # the largest budget last


def test_an_extended_part_naming_an_unknown_tokenizer_is_one_error(tmp_path):
    study = yaml.safe_load(open(scale_study.CONFIG, encoding="utf-8"))
    study["phenomena"]["rope-blowup"]["extended"] = [{"train_tokens": [2**22], "tokenizers": ["bpe-9"]}]
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    with pytest.raises(ValueError, match=r"phenomena/rope-blowup/extended/0/tokenizers: 'bpe-9' is not one"):
        load_study(path)


def test_a_phenomenon_naming_an_unknown_shape_is_one_error(tmp_path):
    study = yaml.safe_load(open(scale_study.CONFIG, encoding="utf-8"))
    study["phenomena"]["rope-blowup"]["shapes"] = ["16x1024"]
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study), encoding="utf-8")
    with pytest.raises(ValueError, match=r"phenomena/rope-blowup/shapes: '16x1024' is not one of the study's shapes"):
        load_study(path)


def test_sweep_order_by_estimated_cost():
    points = {p["key"]: p for p in expand_grid(GRID)}
    # 1024 tokens x (50257 x 64 head + 12 x 2 x 64^2 blocks) = 1024 x 3,314,752
    assert estimated_cost(points["rope/gpt2/2x64/1024"]) == 1024 * (50257 * 64 + 12 * 2 * 64 * 64) == 3_394_306_048
    # 4096 tokens x (4096 x 64 + 12 x 2 x 64^2) = 4096 x 360,448: 4x the tokens, cheaper than GPT-2's head
    assert estimated_cost(points["rope/bpe-4096/2x64/4096"]) == 4096 * 360_448 == 1_476_395_008
    assert estimated_cost(points["rope/bpe-4096/4x128/4096"]) == 4096 * 1_310_720 == 5_368_709_120


def test_ratios_and_steps_by_hand():
    ppl = {64: 20.0, 256: 30.0, 512: 50.0}
    assert length_ratios(ppl, 64, [1, 4, 8]) == {"1": 1.0, "4": 1.5, "8": 2.5}
    with pytest.raises(ValueError, match=r"no perplexity at \[1024\] tokens \(L_tr 64\)"):
        length_ratios(ppl, 64, [1, 16])
    assert steps_for(65536, 16, 64) == 64 and steps_for(1000, 4, 64) == 3
    with pytest.raises(ValueError, match="less than one step of 16 x 64"):
        steps_for(512, 16, 64)
    assert receptive_field({"mask": "windowed", "mask_options": {"window": 60}, "n_layer": 8}) == 480
    assert receptive_field({"mask": "causal", "n_layer": 8}) is None


def test_the_shipped_config_is_valid_and_a_bad_one_names_the_key(tmp_path):
    study = load_study(scale_study.CONFIG)
    assert {"sinusoidal-blowup", "rope-blowup"} <= set(study["phenomena"])
    bad = dict(study, phenomena={"x": {"model": {"train_length": 64, "vocab_size": 4096}, "multiples": [1, 4]}})
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match="bad.yaml: phenomena/x/model"):
        load_study(path)


def _tiny_study(tmp_path, **fields) -> dict:
    """A one-phenomenon study of a 1 x 16 RoPE model on a made-up corpus (seconds to run);
    `fields` replace the study's own."""
    corpus_root = tmp_path / "corpus"
    make_corpus(corpus_root)
    return {"corpus": {"source": "text_dir", "path": str(corpus_root / "texts")},
            "data": {"seed": 1, "valid_fraction": 0.2, "test_fraction": 0.2}, "tokenizers": ["bpe-300"],
            "shapes": {"1x16": {"n_layer": 1, "d_model": 16, "n_head": 2, "d_ff": 32}},
            "train_tokens": [128, 256], "train": {"batch_size": 4, "lr": 0.003, "warmup_fraction": 0.25},
            "eval": {"max_tokens": 256, "batch_tokens": 256},
            "phenomena": {"rope-blowup": {"model": {"position": "rope", "train_length": 16}, "multiples": [1, 4]}},
            **fields}


def train_point(point: dict, study: dict, files, data_dir) -> None:
    """Rule train's job for a study point: lenex.training.train with the configs of its spec
    (lenex.scale_study.studies.point_spec, from study.point_settings)."""
    model, train = scale_study.point_settings(point, study)
    trainer.main(["--model-config", json.dumps(model), "--train-config", json.dumps(train), "--data", str(data_dir),
                  "--out", str(files.model), "--workdir", str(files.workdir), "--threads", "1", "--device", "cpu"])


def run_study(study: dict, out, only: str = "") -> list[str]:
    """What `snakemake results/scale-study/README.md --config scale_study=True` runs, job by job:
    for each pending point (study_rules.pending_points) whose key contains `only`, the training
    unless its model is kept (Snakemake's decision: the model is rule train's output), the point
    job, then the gather and the report. The keys it scored."""
    records = []
    for point in pending_points(study, out / "points.jsonl"):
        if only not in point["key"]:
            continue
        data_dir = out / "data" / point["tokenizer"]
        if not (data_dir / "meta.json").exists():
            scale_study.prepared_data(study, point["tokenizer"], out, "resources")
        files = scale_study.point_files(out, point["key"])
        if not files.model.exists():
            train_point(point, study, files, data_dir)
        records.append(scale_study.score_point(point, study, files, data_dir, "cpu", "test", {"git_rev": "t"}))
    out.mkdir(parents=True, exist_ok=True)
    gather_points(out / "points.jsonl", records)
    write_report(read_points(out / "points.jsonl"), expand_grid(study), out)
    return [r["key"] for r in records]


def test_second_invocation_trains_nothing(tmp_path, monkeypatch):
    study = _tiny_study(tmp_path)
    out = tmp_path / "study"
    assert run_study(study, out) == ["rope-blowup/bpe-300/1x16/128", "rope-blowup/bpe-300/1x16/256"]
    points = read_points(out / "points.jsonl")
    first = points["rope-blowup/bpe-300/1x16/128"]
    assert first["steps"] == 2 and first["tokens_seen"] == 128 and first["vocab_size"] == 300
    ppl = first["ppl"]
    assert first["ratio"] == {"1": 1.0, "4": pytest.approx(ppl["64"] / ppl["16"])}
    assert first["train_tokens_per_s"] > 0
    assert (out / "ratio.png").stat().st_size > 0
    assert "complete: every grid point recorded" in (out / "README.md").read_text()

    def no_training(*args, **kwargs):
        raise AssertionError("a recorded point was trained again")

    monkeypatch.setattr(trainer, "train", no_training)
    assert run_study(study, out) == []
    # An interrupted point (its line lost, its model kept) is finished without retraining.
    lines = (out / "points.jsonl").read_text().splitlines()
    (out / "points.jsonl").write_text(lines[0] + "\n")
    assert run_study(study, out) == ["rope-blowup/bpe-300/1x16/256"]
    finished = json.loads((out / "points.jsonl").read_text().splitlines()[1])
    assert finished["ppl"] == points["rope-blowup/bpe-300/1x16/256"]["ppl"]

    # A multiple added to the config later: measured on the kept model, nothing retrained; the
    # record keeps its training facts and says what was added.
    study["phenomena"]["rope-blowup"]["multiples"] = [1, 2, 4]
    assert "lack a multiple or protocol the config now asks for" in writeup(list(read_points(out / "points.jsonl").values()),
                                                                 expand_grid(study))
    assert run_study(study, out) == ["rope-blowup/bpe-300/1x16/128", "rope-blowup/bpe-300/1x16/256"]
    grown = read_points(out / "points.jsonl")["rope-blowup/bpe-300/1x16/128"]
    assert grown["multiples"] == [1, 2, 4] and grown["ratio"]["4"] == first["ratio"]["4"]
    assert grown["ratio"]["2"] == pytest.approx(grown["ppl"]["32"] / grown["ppl"]["16"])
    assert grown["finished_utc"] == first["finished_utc"] and grown["added"][0]["multiples"] == [2]
    assert run_study(study, out) == []

    # A new largest multiple widens the scored span: every length is scored again, on the kept
    # model (still no training).
    study["phenomena"]["rope-blowup"]["multiples"] = [1, 2, 4, 8]
    assert run_study(study, out, only="/256") == ["rope-blowup/bpe-300/1x16/256"]
    wider = read_points(out / "points.jsonl")["rope-blowup/bpe-300/1x16/256"]
    assert "added" not in wider and set(wider["ratio"]) == {"1", "2", "4", "8"}
    assert json.loads((out / "eval" / "rope-blowup__bpe-300__1x16__256" / "L16.json").read_text())["span"] == 128

    # With its model gone, a point lacking a multiple trains again, and the scores of the former
    # model are not reused.
    (out / "models" / "study" / "rope-blowup__bpe-300__1x16__128.pt").unlink()
    stale = out / "eval" / "rope-blowup__bpe-300__1x16__128" / "L16.json"
    stale.write_text(json.dumps({**json.loads(stale.read_text()), "span": 128, "ppl": 1e9}))
    monkeypatch.undo()
    assert run_study(study, out, only="/128") == ["rope-blowup/bpe-300/1x16/128"]
    retrained = read_points(out / "points.jsonl")["rope-blowup/bpe-300/1x16/128"]
    assert "added" not in retrained and retrained["ppl"]["16"] < 1e9 and set(retrained["ratio"]) == {"1", "2", "4", "8"}


def test_a_protocol_added_later_is_scored_on_the_kept_model(tmp_path, monkeypatch):
    study = _tiny_study(tmp_path, train_tokens=[128], last_token={"segments": 8})
    out = tmp_path / "study"
    assert run_study(study, out) == ["rope-blowup/bpe-300/1x16/128"]
    first = read_points(out / "points.jsonl")["rope-blowup/bpe-300/1x16/128"]
    assert "last_token" not in first

    def no_training(*args, **kwargs):
        raise AssertionError("a recorded point was trained again")

    monkeypatch.setattr(trainer, "train", no_training)
    study["phenomena"]["rope-blowup"]["protocols"] = ["lex", "last-token"]
    assert run_study(study, out) == ["rope-blowup/bpe-300/1x16/128"]
    scored = read_points(out / "points.jsonl")["rope-blowup/bpe-300/1x16/128"]
    last = scored["last_token"]
    assert last["segments"] == 8 and last["span"] == 64 and set(last["ppl"]) == {"16", "64"}
    assert last["ratio"] == {"1": 1.0, "4": pytest.approx(last["ppl"]["64"] / last["ppl"]["16"])}
    assert scored["ppl"] == first["ppl"] and scored["added"][-1]["protocols"] == ["last-token"]
    assert scored["added"][-1]["multiples"] == []
    assert run_study(study, out) == []  # complete now: nothing scored again


def test_last_token_needs_its_settings():
    study = {"tokenizers": ["gpt2"], "shapes": {"2x64": {}}, "train_tokens": [1024],
             "phenomena": {"rope": {"model": {"train_length": 64}, "multiples": [1, 2], "protocols": ["lex", "last-token"]}}}
    with pytest.raises(ValueError, match="phenomena/rope/protocols: last-token needs the study's last_token"):
        scale_study.check_grid(study)


def test_a_kept_model_that_is_not_the_recorded_one_is_refused():
    record = {"key": "k", "train_length": 16, "multiples": [1, 2], "ppl": {"16": 10.0, "32": 12.0},
              "ratio": {"1": 1.0, "2": 1.2}}
    measured = {"multiples": [1, 2, 4], "ppl": {"16": 10.0, "32": 12.0, "64": 15.0},
                "ratio": {"1": 1.0, "2": 1.2, "4": 1.5}}
    grown = with_added_scores(record, measured, {"git_rev": "abc"})
    assert grown["ratio"]["4"] == 1.5 and grown["added"] == [{"multiples": [4], "git_rev": "abc"}]
    with pytest.raises(ValueError, match="k: ppl.L_tr. 11.0000 is not the recorded 10.0000"):
        with_added_scores(record, {**measured, "ppl": {**measured["ppl"], "16": 11.0}}, {})


def test_first_showing_rows_by_hand():
    def point(tokens, ratio8, shape="2x64"):
        return {"phenomenon": "rope", "tokenizer": "bpe-4096", "shape": shape, "tokens_seen": tokens, "params": 1,
                "multiples": [1, 4, 8], "ratio": {"1": 1.0, "4": 1.0, "8": ratio8}}
    # 1.25 is the claims' `explodes`: 1.20 does not reach it, 1.30 does; a shape that never does
    # says its largest budget and ratio.
    rows = first_showing_rows([point(4096, 1.30), point(1024, 1.20), point(1024, 1.1, "4x128")])
    assert rows == ["| rope | bpe-4096 | 2x64 | 4,096 (8x ratio 1.300) | 1,024: 1.200, 4,096: 1.300 |",
                    "| rope | bpe-4096 | 4x128 | not within 1,024 (8x ratio 1.100) | 1,024: 1.100 |"]
    # At a given multiple, only the points measured there.
    at2 = point(16384, 1.5)
    at2["ratio"]["2"] = 1.26
    assert first_showing_rows([point(4096, 1.30), at2], multiple=2) == [
        "| rope | bpe-4096 | 2x64 | 16,384 (2x ratio 1.260) | 16,384: 1.260 |"]
    # The last-token protocol: only the points scored with it, and its ratios, not the LEX ones.
    last = point(4096, 0.9) | {"last_token": {"ratio": {"1": 1.0, "2": 1.4, "8": 2.5}}}
    assert first_showing_rows([last, point(1024, 1.30)], protocol="last-token") == [
        "| rope | bpe-4096 | 2x64 | 4,096 (8x ratio 2.500) | 4,096: 2.500 |"]
    assert first_showing_rows([last], multiple=2, protocol="last-token") == [
        "| rope | bpe-4096 | 2x64 | 4,096 (2x ratio 1.400) | 4,096: 1.400 |"]


def test_scheme_order_rows_by_hand():
    def point(position, ppl, tokens=4096, options=None, mask="causal"):
        config = {"position": position, "mask": mask, "position_options": options or {}, "mask_options": {}}
        return {"tokenizer": "bpe-4096", "shape": "2x64", "tokens_seen": tokens, "train_length": 64,
                "model_config": config, "ppl": {"64": ppl, "512": 2 * ppl}}
    rows = scheme_order_rows([point("rope", 90.5), point("alibi", 87.25), point("xpos", 88.0),
                              point("alibi", 50.0, options={"shift": 6}),  # a changed scheme: not compared
                              point("alibi", 51.0, options={"same_h": 8}),
                              point("sandwich", 89.0, options={"dbar": 128}),  # its published setting
                              point("none", 10.0, mask="windowed"),
                              point("rope", 120.0, tokens=1024)])  # alone at its budget: no row
    assert rows == ["| bpe-4096 | 2x64 | 4,096 | alibi 87.25 < xpos 88.00 < sandwich 89.00 < rope 90.50 |"]


def _record_many(path, prefix):
    for i in range(25):
        gather_points(path, [{"key": f"{prefix}{i}"}])


def test_two_gathers_side_by_side_lose_no_recorded_point(tmp_path):
    import multiprocessing
    path = tmp_path / "points.jsonl"
    workers = [multiprocessing.get_context("fork").Process(target=_record_many, args=(path, p)) for p in "ab"]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(read_points(path)) == 50


def test_short_multiples_and_a_phenomenons_own_last_token_settings():
    from lenex.scale_study.study import scored_lengths
    # L_tr 256, multiples 1..8: the span is 2,048 and L_tr / 2 = 128 divides it.
    assert scored_lengths([1, 2, 8], [0.5], 256) == [128, 256, 512, 2048]
    with pytest.raises(ValueError, match="short multiple 0.3"):
        scored_lengths([1, 2], [0.3], 64)  # 19.2 tokens
    study = {"train_tokens": [1024], "shapes": {"2x64": {"n_layer": 2}}, "tokenizers": ["gpt2"],
             "last_token": {"segments": 1024, "batch_tokens": 16384},
             "phenomena": {"p": {"model": {"train_length": 64}, "multiples": [1, 2], "short_multiples": [0.5],
                                 "last_token": {"segments": 64}}}}
    (point,) = expand_grid(study)
    assert point["short_multiples"] == [0.5]
    assert point["last_token"] == {"segments": 64, "batch_tokens": 16384}


def test_three_readings_of_a_probe_by_hand():
    from lenex.scale_study.report import three_readings_rows
    point = {"phenomenon": "rope", "tokenizer": "bpe-4096", "shape": "4x128", "train_length": 4, "tokens_seen": 10,
             "multiples": [1, 2], "ppl": {"2": 30.0, "4": 20.0, "8": 40.0}, "ratio": {"1": 1.0, "2": 2.0},
             "last_token": {"ratio": {"1": 1.0, "2": 3.0}}}
    # D = ln(30/20); beyond L_tr: 40^2 / 20 = 80, i.e. 4 x ppl(L_tr).
    (row,) = three_readings_rows([point])
    assert row == "| rope | bpe-4096 | 4x128 | 4 | 10 | 0.405 | 2x 2.000 | 2x 4.000 | 2x 3.000 |"
    assert three_readings_rows([{**point, "ppl": {"4": 20.0, "8": 40.0}}]) == []  # no L_tr / 2 score


COMMITTED = REPO / "results" / "scale-study"


def test_the_pending_points_are_those_the_store_lacks_cheapest_first():
    study = load_study(scale_study.CONFIG)
    pending = pending_points(study, COMMITTED / "points.jsonl")
    assert pending and pending == sorted(pending, key=estimated_cost)
    recorded = read_points(COMMITTED / "points.jsonl")
    readme = (COMMITTED / "README.md").read_text(encoding="utf-8")
    assert f"{len(pending)} recorded point(s) lack a multiple or protocol" in readme  # the write-up's own count
    assert {p["key"] for p in pending} <= set(recorded)  # every grid point is recorded, some lack a multiple
    files = study_rules.gather_inputs(study, REPO)
    assert files == [f"results/scale-study/records/{point_name(p['key'])}.json" for p in pending]
    assert study_rules.gather_inputs(study, REPO, train=False) == []
    only = study_rules.gather_inputs(study, REPO, only="rope-blowup/gpt2")
    assert only and all("rope-blowup__gpt2" in f for f in only) and len(only) < len(files)


def test_gathering_no_record_writes_the_committed_store_and_plot_back_byte_for_byte(tmp_path):
    shutil.copy(COMMITTED / "points.jsonl", tmp_path / "points.jsonl")
    gather_points(tmp_path / "points.jsonl", [])
    assert (tmp_path / "points.jsonl").read_bytes() == (COMMITTED / "points.jsonl").read_bytes()
    write_report(read_points(tmp_path / "points.jsonl"), expand_grid(load_study(scale_study.CONFIG)), tmp_path)
    assert (tmp_path / "ratio.png").read_bytes() == (COMMITTED / "ratio.png").read_bytes()


def test_a_point_measured_again_is_merged_only_when_it_is_the_recorded_model_over_the_same_span():
    recorded = {"key": "k", "multiples": [1, 4], "train_length": 16, "ppl": {"16": 10.0, "64": 20.0},
                "ratio": {"1": 1.0, "4": 2.0}, "steps": 2, "tokens_seen": 128, "final_loss": 3.5, "valid_loss": 3.6,
                "finished_utc": "then", "command": "first"}
    again = {**recorded, "multiples": [1, 2, 4], "ppl": {"16": 10.0, "32": 15.0, "64": 20.0},
             "ratio": {"1": 1.0, "2": 1.5, "4": 2.0}, "finished_utc": "now", "command": "second", "git_rev": "abc"}
    merged = merged_record(recorded, again)
    assert merged["finished_utc"] == "then" and merged["ratio"]["2"] == 1.5
    assert merged["added"] == [{"multiples": [2], "command": "second", "finished_utc": "now", "git_rev": "abc"}]
    retrained = {**again, "final_loss": 3.4}  # another model: its record replaces the recorded one
    assert merged_record(recorded, retrained) is retrained
    wider = {**again, "multiples": [1, 2, 8]}  # another span: every length was scored again
    assert merged_record(recorded, wider) is wider
    assert merged_record(None, again) is again


def test_a_points_inputs_and_unknown_names_by_hand():
    study = load_study(scale_study.CONFIG)
    name = "rope-blowup__bpe-4096__2x64__65536"
    assert study_rules.point_inputs(study, name) == {"model": f"results/scale-study/models/study/{name}.pt",
                                                     "data": "results/scale-study/data/bpe-4096/meta.json"}
    corpus = study_rules.corpus_inputs(study)
    assert corpus and all(f.startswith("resources/") and f.endswith("/SOURCE.json") for f in corpus)
    assert study_rules.data_inputs(study, "bpe-4096") == [*corpus, "results/scale-study/tokenizer/bpe-4096.json"]
    assert study_rules.data_inputs(study, "gpt2") == corpus
    with pytest.raises(ValueError, match="no scale-study point 'rope-blowup__bpe-4096__2x64__1'"):
        study_rules.point_inputs(study, "rope-blowup__bpe-4096__2x64__1")
    with pytest.raises(ValueError, match="no tokenizer 'bpe-300'; its tokenizers: gpt2, bpe-4096"):
        study_rules.data_inputs(study, "bpe-300")
    with pytest.raises(ValueError, match="gpt2 is not trained by the study"):
        study_rules.tokenizer_inputs(study, "gpt2")
    assert study_rules.snakemake_command(2, ["-n"]) == ["snakemake", "--cores", "2", "scale_study", "-n",
                                                        "--config", "scale_study=True"]
    assert study_rules.snakemake_command(1, [], only="alibi/")[-2:] == ["scale_study=True", "scale_study_only=alibi/"]
    assert study_rules.study_targets(study, REPO, train=False) == ["results/scale-study/README.md",
                                                                    "results/scale-study/ratio.png"]


def test_a_study_points_model_is_a_spec_of_the_one_training_rule():
    study = load_study(scale_study.CONFIG)
    name = "rope-blowup__bpe-4096__2x64__65536"
    point = scale_study.find_point(study, name)
    spec = study_point_spec(name, REPO)
    assert (spec.output, spec.workdir, spec.data_inputs, spec.threads) == (
        f"results/scale-study/models/study/{name}.pt", f"results/scale-study/train/{name}",
        ("results/scale-study/data/bpe-4096/meta.json",), 1)
    assert spec.model == point["model"] and "vocab_size" not in spec.model  # the trainer takes the corpus's
    steps = steps_for(65536, study["train"]["batch_size"], point["model"]["train_length"])
    assert (spec.train["steps"], spec.train["seed"]) == (steps, study["train"]["seed"])
    assert spec.curve == f"results/scale-study/curves/study/{name}/curve.json"
    command = spec.command(2)
    assert command.startswith("python -m lenex.pipeline.launch lenex.training.train ") and "--threads 1 " in command
    with pytest.raises(ValueError, match="no scale-study point 'rope-blowup__bpe-4096__2x64__1'"):
        study_point_spec("rope-blowup__bpe-4096__2x64__1", REPO)
    # the training rule's spec of results/scale-study/models/<study>/... is its study's
    assert STUDIES["study"].spec(name, REPO) == spec
    with pytest.raises(ValueError, match="unknown study of its own models 'nope'; known: study, sweeps"):
        STUDIES["nope"]


@pytest.fixture(scope="module")
def study_workdir(tmp_path_factory):
    """A scratch workflow with a copy of the committed store (so a planted model stays out of the repository)."""
    path = tmp_path_factory.mktemp("study")
    for name in ("Snakefile", "workflow", "config"):
        (path / name).symlink_to(REPO / name)
    (path / "results" / "scale-study").mkdir(parents=True)
    for name in ("points.jsonl", "README.md", "ratio.png"):
        shutil.copy(COMMITTED / name, path / "results" / "scale-study" / name)
    return path


def test_the_study_points_plan_only_with_the_flag(study_workdir):
    pending = pending_points(load_study(scale_study.CONFIG), COMMITTED / "points.jsonl")
    name = point_name(pending[0]["key"])
    record = f"results/scale-study/records/{name}.json"
    without = snakemake("-n", record, cwd=study_workdir)
    assert without.returncode != 0 and "No rule to produce" in without.stdout + without.stderr
    with_flag = snakemake("-n", record, "--config", "scale_study=True", cwd=study_workdir)
    assert with_flag.returncode == 0, with_flag.stdout[-2000:] + with_flag.stderr[-2000:]
    assert {r: n for r, n in job_counts(with_flag.stdout).items() if r.startswith("scale_study_") or r == "train"} == {
        "scale_study_tokenizer": 1, "scale_study_data": 1, "train": 1, "scale_study_point": 1}


@pytest.mark.slow  # two dry runs of the whole study: a minute or two on a shared machine
def test_the_study_target_plans_every_pending_point_and_with_train_off_none(study_workdir):
    pending = pending_points(load_study(scale_study.CONFIG), COMMITTED / "points.jsonl")
    # `python -m lenex.scale_study` is `snakemake scale_study --config scale_study=True`.
    whole = subprocess.run([sys.executable, "-m", "lenex.scale_study", "-n"], cwd=study_workdir, env=env_with_venv(),
                           capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr[-2000:]
    counts = job_counts(whole.stdout)
    assert counts["scale_study_point"] == counts["train"] == len(pending)
    assert counts["scale_study_points"] == counts["scale_study_report"] == counts["scale_study"] == 1
    again = snakemake("-n", "scale_study", "--forcerun", "scale_study_points", "scale_study_report",
                      "--config", "scale_study=True", "scale_study_train=False", cwd=study_workdir)
    assert again.returncode == 0, again.stderr[-2000:]
    assert job_counts(again.stdout) == {"scale_study": 1, "scale_study_points": 1, "scale_study_report": 1}


def test_a_kept_model_is_scored_not_trained_again(study_workdir):
    name = point_name(pending_points(load_study(scale_study.CONFIG), COMMITTED / "points.jsonl")[0]["key"])
    out = study_workdir / "results" / "scale-study"
    planted = [out / "tokenizer" / "bpe-4096.json", out / "data" / "bpe-4096" / "meta.json", out / "models" / "study" / f"{name}.pt"]
    for when, path in enumerate(planted):  # each newer than what it is made from
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
        os.utime(path, (2e9 + when, 2e9 + when))
    run = snakemake("-n", f"results/scale-study/records/{name}.json", "--config", "scale_study=True", cwd=study_workdir)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert job_counts(run.stdout) == {"scale_study_point": 1}


def test_the_rules_jobs_run_one_point_end_to_end(tmp_path):
    # The commands of workflow/rules/scale_study.smk, in the order Snakemake runs them.
    study = _tiny_study(tmp_path, train_tokens=[128])
    config, out = tmp_path / "study.yaml", tmp_path / "study"
    config.write_text(yaml.safe_dump(study))
    name = "rope-blowup__bpe-300__1x16__128"
    common = ["--config", str(config), "--out", str(out)]
    scale_study.main(["tokenizer", "bpe-300", *common])
    scale_study.main(["data", "bpe-300", *common])
    assert (out / study_rules.data_meta("bpe-300", ".")).is_file()
    train_point(scale_study.find_point(study, name), study, scale_study.point_files(out, "rope-blowup/bpe-300/1x16/128"),
                out / "data" / "bpe-300")
    record = out / "records" / f"{name}.json"
    scale_study.main(["point", name, "--record", str(record), *common])
    assert json.loads(record.read_text())["command"].startswith(f"python -m lenex.scale_study.study point {name}")
    scale_study.main(["gather", "--records", str(record), *common])
    assert list(read_points(out / "points.jsonl")) == ["rope-blowup/bpe-300/1x16/128"]
    assert pending_points(study, out / "points.jsonl") == []
    scale_study.main(["report", *common])
    assert "complete: every grid point recorded" in (out / "README.md").read_text()
    with pytest.raises(ValueError, match="no scale-study point 'rope-blowup__bpe-300__1x16__64'"):
        scale_study.main(["point", "rope-blowup__bpe-300__1x16__64", "--record", str(record), *common])
