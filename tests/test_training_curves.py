"""Training curves in the pipeline (docs/curves.md): the diagnostics section and figure
(lenex.tables.training_curves), curves kept in the raw results and read back from them (a run with
no curves says so), and where the training job reads and writes them (ModelSpec, Recorded)."""

import json

import pytest
from test_diagnostics import cell, record
from test_pipeline import pipeline  # noqa: F401 (the fixture)

from lenex.pipeline.specs import curve_path
from lenex.tables.diagnostics import main
from lenex.tables.raw_results import RAW_ENV, collect, holds_recorded, parse
from lenex.tables.training_curves import NO_CURVE, by_model, model_and_seed, read_curves, section
from lenex.training.curve import curve_of, write_curve


def curve(final_train, valids, tokens_per_step=100):
    """A curve of 4 records, validations `valids` at steps 2 and 4."""
    records = [{"step": 1, "loss": 9.0}, {"step": 2, "loss": 7.0, "valid_loss": valids[0]},
               {"step": 3, "loss": 6.0}, {"step": 4, "loss": final_train, "valid_loss": valids[1]}]
    return curve_of(records, tokens_per_step, "argument")


def test_model_and_seed_of_each_papers_layout():
    assert model_and_seed("results/tiny/curves/lex/alibi/seed2/curve.json") == ("alibi", 2)
    assert model_and_seed("results/tiny/curves/receptive-field/arxiv/alibi-same-h0/seed1/curve.json") == (
        "arxiv/alibi-same-h0", 1)
    assert model_and_seed("results/tiny/curves/segmented/bloom/seed3/chunk-0.25-x2/curve.json") == (
        "bloom/chunk-0.25-x2", 3)
    assert model_and_seed("results/tiny/curves/segmented/pretrained/bloom/curve.json") == ("pretrained/bloom", None)
    with pytest.raises(ValueError, match="not a training curve's path"):
        model_and_seed("results/tiny/eval/lex/alibi/seed1/L64.json")


def test_the_section_has_a_table_per_model_and_a_row_per_seed():
    curves = {"results/t/curves/lex/rope/seed2/curve.json": curve(4.0, [5.0, 4.5]),
              "results/t/curves/lex/rope/seed1/curve.json": curve(4.2, [5.0, 5.0]),
              "results/t/curves/lex/alibi/seed1/curve.json": curve(3.9, [5.0, 4.0])}
    assert list(by_model(curves)) == ["alibi", "rope"] and list(by_model(curves)["rope"]) == [1, 2]
    lines = section(curves, ["results/t/curves/lex/xpos/seed1/curve.json"], "lex.curves.png")
    text = "\n".join(lines)
    assert lines[0] == "## Training curves" and "![training curves](lex.curves.png)" in text
    assert "1 of its 4 models have no curve recorded" in text
    assert text.index("### alibi") < text.index("### rope")
    # tokens 200 -> 400 is one doubling: 5.0 -> 4.5 is -0.5 a doubling (still falling), 5.0 -> 5.0 flat
    assert "| 2 | 4 | 400 | 4.000 | 4.500 | 4.500 | -0.500 (still falling) |" in text
    assert "| 1 | 4 | 400 | 4.200 | 5.000 | 5.000 | +0.000 |" in text
    assert "| 1 | 4 | 400 | 3.900 | 4.000 | 4.000 | -1.000 (still falling) |" in text
    nothing = section({}, ["a", "b"], "lex.curves.png")
    assert nothing == ["## Training curves", "", f"{NO_CURVE} (its results hold none of its 2 models' curves: "
                       "see docs/curves.md).", ""]


def diagnostics_inputs(root):
    results = root / "results/t/eval/lex/rope/seed1/pg22/causal/L8.json"
    results.parent.mkdir(parents=True)
    results.write_text(json.dumps([record(1, [4.0, 3.0, 5.0, 7.0])]))
    cells = root / "table2.cells.json"
    cells.write_text(json.dumps({"metric": "ppl", "table": "2",
                                 "cells": [cell("RoPE", 1, 10.0, 26.68), cell("RoPE", 2, 20.0, 68.86)]}))
    return "results/t/eval/lex/rope/seed1/pg22/causal/L8.json", str(cells)


def run_diagnostics(curves, cells, results, out="results/t/diagnostics/lex.md"):
    main(["--paper", "lex", "--preset", "t", "--protocol", "whole-piece", "--cells", cells, "--results", results,
          "--curves", *curves, "--out-md", out, "--out-png", out.replace(".md", ".png"),
          "--out-pdf", out.replace(".md", ".pdf"), "--out-curves-png", out.replace(".md", ".curves.png")])
    return open(out).read()


def test_the_page_and_figure_from_curves_on_disk_and_from_raw_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(RAW_ENV, raising=False)
    results, cells = diagnostics_inputs(tmp_path)
    curves = ["results/t/curves/lex/rope/seed1/curve.json", "results/t/curves/lex/rope/seed2/curve.json"]
    for path, c in zip(curves, (curve(4.0, [5.0, 4.5]), curve(4.1, [5.2, 4.6]))):
        (tmp_path / path).parent.mkdir(parents=True)
        write_curve(c, path)
    page = run_diagnostics(curves, cells, results)
    assert "| 1 | 4 | 400 | 4.000 | 4.500 | 4.500 | -0.500 (still falling) |" in page
    assert "| 2 | 4 | 400 | 4.100 | 4.600 | 4.600 | -0.600 (still falling) |" in page
    assert page.index("## Training curves") > page.index("![loss by position](lex.png)")
    png = tmp_path / "results/t/diagnostics/lex.curves.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000  # panels, not the notice

    # The raw results keep the curves: collected with the evaluation, read back exactly from them alone.
    raw = tmp_path / "results/t/raw/lex-with.jsonl"
    raw.parent.mkdir(parents=True)
    raw.write_text(collect([results, *curves]))
    held = parse(raw.read_text())
    assert set(held) == {results, *curves} and held[curves[0]] == json.loads((tmp_path / curves[0]).read_text())
    for path in curves:
        (tmp_path / path).unlink()
    monkeypatch.setenv(RAW_ENV, "results/t/raw/lex-with.jsonl")
    assert holds_recorded(curves[0]) and read_curves(curves)[1] == []
    assert run_diagnostics(curves, cells, results) == page

    # A run whose raw results were recorded before curves: its page says so, in one sentence.
    old = tmp_path / "results/t/raw/lex-without.jsonl"
    old.write_text(collect([results]))
    monkeypatch.setenv(RAW_ENV, "results/t/raw/lex-without.jsonl")
    assert not holds_recorded(curves[0])
    without = run_diagnostics(curves, cells, results)
    assert without.endswith(f"## Training curves\n\n{NO_CURVE} (its results hold none of its 2 models' curves: "
                            "see docs/curves.md).\n")
    assert without.count("## Training curves") == 1 and "### rope" not in without
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 10_000  # the notice alone


def test_the_curve_files_the_pipeline_plans(pipeline):  # noqa: F811
    lex = pipeline.recorded.curve_files("tiny", "lex")
    assert "results/tiny/curves/lex/alibi/seed1/curve.json" in lex and len(lex) == len(set(lex))
    # one curve a model its diagnostics' evaluations score: tiny's 2 seeds of every variant
    variants = {model_and_seed(p)[0] for p in lex}
    assert {model_and_seed(p)[1] for p in lex} == {1, 2} and len(lex) == 2 * len(variants)
    rf = pipeline.recorded.curve_files("tiny", "receptive-field")
    assert all(len(model_and_seed(p)[0].split("/")) == 2 for p in rf)  # <corpus>/<variant>
    seg = pipeline.recorded.curve_files("tiny", "segmented")
    assert "results/tiny/curves/segmented/bloom/seed1/ootb/curve.json" in seg
    assert not any("/pretrained/" in p for p in seg)  # no evaluation scores a pretrained stand-in itself
    # they are the paper's raw results too, beside its evaluations
    recorded = pipeline.recorded.paper_recorded("tiny", "lex")
    assert set(lex) <= set(recorded) and recorded == sorted(set(recorded))
    # each is its model's: the rule reads the checkpoint and the metrics its trainer left
    spec = pipeline.specs.model("tiny", "segmented", "bloom/seed1/ootb")
    assert spec.curve == "results/tiny/curves/segmented/bloom/seed1/ootb/curve.json" and spec.records_curve
    assert spec.metrics == "results/tiny/train/segmented/bloom/seed1/ootb/metrics.jsonl"
    assert curve_path("results/tiny/models/lex/alibi/seed1.pt") == "results/tiny/curves/lex/alibi/seed1/curve.json"
    assert (curve_path("results/tiny/crosscheck/fairseq/s2/models/lex/alibi.pt")
            == "results/tiny/crosscheck/fairseq/s2/curves/lex/alibi/curve.json")
    with pytest.raises(ValueError, match="not a model of the pipeline"):
        curve_path("results/tiny/eval/lex/alibi/seed1.pt")


def test_the_training_job_makes_its_models_curve(tmp_path, pipeline):  # noqa: F811 (the fixture)
    """The training job's outputs are the checkpoint and its curve (no job of the curve's own), and
    the curve command it runs after the training makes the curve: here on a model trained where the
    rule puts it (checkpoint and work folder, trained directly to keep the test short)."""
    import subprocess

    import torch
    from corpus_fixture import make_corpus
    from test_workflow import planned_jobs, scratch_workflow, snakemake

    from lenex.config import ModelConfig
    from lenex.training.train import TrainConfig, train

    workdir = scratch_workflow(tmp_path / "w")
    target = "results/tiny/curves/lex/alibi/seed1/curve.json"
    dry = snakemake("-n", "-p", "--cores", "1", target, cwd=workdir)
    assert dry.returncode == 0, (dry.stdout + dry.stderr)[-3000:]
    jobs = {rule: outputs for rule, outputs, _ in planned_jobs(dry.stdout)}
    assert "training_curve" not in jobs
    assert sorted(jobs["train"]) == ["results/tiny/curves/lex/alibi/seed1/curve.json",
                                     "results/tiny/models/lex/alibi/seed1.pt"]
    torch.set_num_threads(1)
    model = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="alibi")
    cfg = TrainConfig(steps=8, batch_size=2, lr=3e-3, warmup=1, log_every=2, checkpoint_every=100)
    train(model, cfg, make_corpus(tmp_path / "corpus"), workdir / "results/tiny/models/lex/alibi/seed1.pt",
          workdir / "results/tiny/train/lex/alibi/seed1")
    spec = pipeline.specs.model("tiny", "lex", "alibi/seed1")
    assert spec.curve == target
    run = subprocess.run(["bash", "-c", spec.curve_command()], cwd=workdir, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    made = json.loads((workdir / target).read_text())
    assert made["tokens_per_step"] == 2 * 32 and [p["step"] for p in made["points"]] == [2, 4, 6, 8]
    assert made["tokens_per_step_from"] == "checkpoint results/tiny/models/lex/alibi/seed1.pt"
    assert made["summary"]["final_valid_from_checkpoint"] and made["summary"]["tokens"] == 8 * 2 * 32


def test_a_trainer_without_lenexs_metrics_gets_a_curve_file_saying_so(tmp_path):
    from lenex.training.curve import main as curve_main

    out = tmp_path / "curve.json"
    curve_main([str(tmp_path / "absent.jsonl"), str(out), "--none", "trained by the fairseq backend"])
    assert json.loads(out.read_text())["none"] == "trained by the fairseq backend"
    with pytest.raises(ValueError, match="says why"):
        curve_main([str(tmp_path / "absent.jsonl"), str(out), "--none", " "])


def test_a_none_curve_is_read_as_a_model_without_a_curve(tmp_path):
    none = tmp_path / "results/t/curves/lex/rope/seed1/curve.json"
    write_curve({"format": "lenex-training-curve-v1", "none": "trained by the fairseq backend"}, none)
    real = tmp_path / "results/t/curves/lex/rope/seed2/curve.json"
    write_curve(curve(4.0, [5.0, 4.5]), real)
    found, missing = read_curves([str(none), str(real)])
    assert list(found) == [str(real)] and missing == [str(none)]
