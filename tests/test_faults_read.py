"""Issue 51, read side: every recorded number is checked where a table, figure, claim or page
reads it (lenex.records.checks, through lenex.tables.raw_results.read_recorded), from the
evaluation file and from raw results alike; raw lines are bound to the record they were collected
from (`record_sha256`) and to the evaluation file on disk; a name the pipeline does not know is
one line, not a traceback. Small synthetic files only."""

import json
import math

import pytest
from test_faults_tables import _result, _table_args

from lenex.cli import run_cli
from lenex.claims.render import load_cells
from lenex.pipeline.user_errors import one_line_errors, refuse
from lenex.records.checks import check_consistent, check_domains, check_finite, check_record
from lenex.tables.raw_results import RAW_ENV, check_collected, collect, read_recorded
from lenex.tables.render import main as render_main

NLL = 6.968


def _render_fails(tmp_path, capsys, record_fields):
    path, record = _result(tmp_path)
    path.write_text(json.dumps({**record, "nll": NLL, "ppl": math.exp(NLL), **record_fields}))
    with pytest.raises(SystemExit) as stop:
        run_cli(render_main, _table_args(tmp_path, path))
    said = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(said) == 1, said
    assert not (tmp_path / "t.md").exists()  # no table with the bad cell
    return path, said[0]


def test_a_nan_perplexity_fails_the_table_naming_file_and_field(tmp_path, capsys):
    """Before: rc 0, the cell read `nan ± nan`, the cells file held NaN (Python's json reads NaN)."""
    path, said = _render_fails(tmp_path, capsys, {"ppl": math.nan})
    assert said == f"error: {path}: ppl is nan: not a finite number"


def test_an_impossible_perplexity_fails_the_table(tmp_path, capsys):
    """Before: `"ppl": -1059.5` beside its nll 6.97 rendered `-22.72 ± 1466`, rc 0."""
    path, said = _render_fails(tmp_path, capsys, {"ppl": -1059.5})
    assert said == f"error: {path}: ppl is -1059.5: a perplexity is at least 1"


def test_a_perplexity_disagreeing_with_its_nll_fails_the_table(tmp_path, capsys):
    path, said = _render_fails(tmp_path, capsys, {"ppl": 500.0})
    assert said.startswith(f"error: {path}: ppl is 500.0: its record's nll is {NLL}, so ppl should be exp(nll) = 1062.1")


@pytest.mark.parametrize("record, named", [
    ({"erf": 70, "length": 64}, "erf is 70: an effective receptive field lies within [0, length = 64]"),
    ({"erf": -1, "length": 64}, "erf is -1"),
    ({"resolution": 1.5}, "resolution is 1.5: attention resolution R(s) (Eq. 4) is at most 1"),
    ({"resolution_per_head": [[0.1, 2.0]]}, "resolution_per_head[0][1] is 2.0"),
    ({"segment_nll": [1.0, -0.5]}, "segment_nll[1] is -0.5: a negative log-likelihood is at least 0"),
    ({"c": [0.5, 1.2]}, "c[1] is 1.2: a cumulative receptive-field share lies within [0, 1]"),
    ({"tokens": -3}, "tokens is -3: a count or length is at least 0"),
])
def test_each_domain_is_named_with_field_and_value(record, named):
    with pytest.raises(ValueError) as err:
        check_domains(record, "r.json")
    assert str(err.value).startswith(f"r.json: {named}")


def test_resolution_has_no_lower_bound_and_a_segmented_ppl_is_a_mean():
    """R(s) of Eq. 4 can be negative (a head attending away from the nearest key); a segmented
    record's ppl is the mean of per-piece perplexities, >= its corpus_ppl = exp(nll) (Jensen)."""
    check_record({"resolution": -16.5, "resolution_per_head": [-3.0, 0.9]}, "r.json")
    check_record({"nll": 2.0, "corpus_ppl": math.exp(2.0), "ppl": 9.5}, "r.json")
    with pytest.raises(ValueError, match=r"r.json: ppl is 5.0: a mean of per-piece perplexities is at least"):
        check_consistent({"nll": 2.0, "corpus_ppl": math.exp(2.0), "ppl": 5.0}, "r.json")


def test_a_nested_non_finite_number_is_named_by_its_path():
    with pytest.raises(ValueError, match=r"^x: check.rows\[1\].d is inf: not a finite number$"):
        check_finite({"check": {"rows": [{"d": 1.0}, {"d": math.inf}]}}, "x")


def _raw(tmp_path, monkeypatch):
    """An evaluation file and its raw results, collected now (with digests)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(RAW_ENV, raising=False)
    _, record = _result(tmp_path)
    (tmp_path / "results/t/eval").mkdir(parents=True)
    (tmp_path / "results/t/eval/L64.json").write_text(json.dumps({**record, "nll": NLL, "ppl": math.exp(NLL)}))
    raw = tmp_path / "results/t/raw/lex.jsonl"
    raw.parent.mkdir(parents=True)
    raw.write_text(collect(["results/t/eval/L64.json"]))
    return raw


def _edit_ppl(raw, ppl, keep_digest=True):
    line = json.loads(raw.read_text())
    line["ppl"] = ppl
    if not keep_digest:
        line.pop("record_sha256")
    raw.write_text(json.dumps(line, separators=(",", ":")) + "\n")


def test_an_edited_raw_line_fails_the_render_from_raw(tmp_path, monkeypatch):
    """Before: a raw line's ppl changed to 500 rendered `757.03 ± 363.49`, rc 0."""
    raw = _raw(tmp_path, monkeypatch)
    _edit_ppl(raw, 500.0)
    (tmp_path / "results/t/eval/L64.json").unlink()  # make tables: only the raw results there
    monkeypatch.setenv(RAW_ENV, "results/t/raw/lex.jsonl")
    with pytest.raises(ValueError, match=r"^results/t/raw/lex.jsonl line 1 \(results/t/eval/L64.json\) was edited "
                                         "after it was collected"):
        read_recorded("results/t/eval/L64.json")


def test_a_raw_line_without_digest_is_compared_with_its_file_on_disk(tmp_path, monkeypatch):
    """Raw results from before the digest still render; where the evaluation file is on disk a line
    that differs from it is an error naming both files and the field."""
    raw = _raw(tmp_path, monkeypatch)
    _edit_ppl(raw, 500.0, keep_digest=False)
    monkeypatch.setenv(RAW_ENV, "results/t/raw/lex.jsonl")
    with pytest.raises(ValueError) as err:
        read_recorded("results/t/eval/L64.json")
    assert str(err.value).startswith("results/t/raw/lex.jsonl holds another results/t/eval/L64.json than the file on "
                                     "disk (ppl: 500.0 in the raw results, 1062.")


def test_a_normal_run_refuses_raw_results_edited_after_collection(tmp_path, monkeypatch, capsys):
    """Before: a normal run kept the edited raw file (newer than its inputs). Now rule
    raw_results' input function checks it (lenex.pipeline.recorded.raw_inputs): one line."""
    raw = _raw(tmp_path, monkeypatch)
    check_collected(str(raw))  # as collected: nothing to say
    _edit_ppl(raw, 500.0, keep_digest=False)
    with pytest.raises(ValueError, match="holds another results/t/eval/L64.json than the file on disk"):
        check_collected(str(raw))
    (tmp_path / "results/t/eval/L64.json").write_text("{}")  # newer than the raw results: recollected, no error
    import os
    os.utime(tmp_path / "results/t/eval/L64.json", (raw.stat().st_mtime + 10,) * 2)
    check_collected(str(raw))


def test_a_nan_in_a_cells_file_fails_the_claims(tmp_path):
    cells = tmp_path / "table2.cells.json"
    cells.write_text('{"table": 2, "cells": [{"ours": NaN}]}')
    with pytest.raises(ValueError, match=r"cells file .*table2.cells.json: cells\[0\].ours is nan"):
        load_cells([cells])


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    from lenex.pipeline.workflow import Pipeline
    from test_pipeline import REPO, repo_config

    return Pipeline(repo_config(), REPO, stamps=tmp_path_factory.mktemp("stamps"))


def test_an_unknown_name_is_one_line_under_snakemake(capsys, pipeline):
    """Before: `snakemake -n` of an unknown table printed the right sentence inside an
    InputFunctionException and a traceback; the known tables unsorted."""
    one_line_errors()
    try:
        for ask in (lambda: pipeline.settings.table_spec("lex", 99), lambda: pipeline.hf.model("gpt5")):
            with pytest.raises(SystemExit) as stop:
                ask()
            assert stop.value.code == 1
        said = capsys.readouterr().err.splitlines()
    finally:
        one_line_errors(False)
    assert said[0] == ("error: paper 'lex' has no table 99; known: table2, table3, table4, table5, table6 "
                       "(config/experiments/lex.yaml)")
    assert said[1].startswith("error: config/hf_models.yaml: unknown Hugging Face model 'gpt5' in models; known: ")
    known = said[1].split("known: ")[1].split(", ")
    assert known == sorted(known) and len(said) == 2
    with pytest.raises(ValueError, match="outside Snakemake"):
        refuse("outside Snakemake: an exception like any other")


# -- errors in the user's terms: the preset file, the key, the allowed range ------------------------

import yaml  # noqa: E402

from lenex.pipeline.dag_checks import documents_problem, longest_document  # noqa: E402
from lenex.pipeline.settings import Settings, validate  # noqa: E402
from test_pipeline import REPO, repo_config  # noqa: E402

TINY = REPO / "config/presets/tiny.yaml"


@pytest.mark.parametrize("change, said", [
    (lambda p: p["train"].update(steps=0), "train.steps: 0 (must be >= 1)"),
    (lambda p: p["train"].update(lr=-0.1), "train.lr: -0.1 (must be > 0)"),
    (lambda p: p["papers"]["lex"]["experiment"].update(seeds=0), "papers.lex.experiment.seeds: 0 (must be >= 1)"),
    (lambda p: p["model"].update(train_length=64.5), "model.train_length: 64.5 (must be a whole number)"),
    (lambda p: p["papers"]["segmented"]["experiment"].update(figure2_multiples=[1, 2.5]),
     "papers.segmented.experiment.figure2_multiples[1]: 2.5 (must be a whole number)"),
])
def test_a_schema_error_names_the_preset_file_key_and_range(change, said):
    """Before: jsonschema's message pointing at `train.smk line 30`, naming no preset file."""
    preset = yaml.safe_load(TINY.read_text())
    change(preset)
    with pytest.raises(ValueError) as err:
        validate(preset, REPO / "workflow/schemas/preset.schema.yaml", "config/presets/mine.yaml")
    assert str(err.value) == f"config/presets/mine.yaml: {said}"


def test_a_broken_sibling_preset_is_a_warning_not_the_end(tmp_path, capsys):
    """Before: one bad file in config/presets/ broke every preset, the default's dry run included."""
    (tmp_path / "config/presets").mkdir(parents=True)
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow/schemas").symlink_to(REPO / "workflow/schemas")
    (tmp_path / "config/presets/tiny.yaml").write_text(TINY.read_text())
    (tmp_path / "config/presets/broken.yaml").write_text(TINY.read_text().replace("name: tiny", "name: broken")
                                                         .replace("\n  steps:", "\n  steps: 0 #", 1))
    settings = Settings(repo_config(preset="tiny"), tmp_path, stamps=tmp_path / "stamps")
    assert settings.preset_names == ["tiny"]
    assert settings.preset_names == ["tiny"]  # warned once
    warned = capsys.readouterr().err.strip().splitlines()
    assert len(warned) == 1 and warned[0].startswith("lenex: warning: preset 'broken' left out (")
    assert "config/presets/broken.yaml: train.steps: 0 (must be >= 1)" in warned[0]
    with pytest.raises(ValueError, match=r"broken.yaml: train.steps: 0 \(must be >= 1\)"):
        settings.preset("broken")  # a run that asks for it fails naming it


def _meta(folder, lengths):
    offsets = [sum(lengths[:i]) for i in range(len(lengths))]
    split = {"file": "train.bin", "n_docs": len(lengths), "n_tokens": sum(lengths), "doc_offsets": offsets}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").write_text(json.dumps({"format_version": 1, "tokenizer": "gpt2", "splits": {
        "train": split, "valid": {**split, "doc_offsets": [0], "n_tokens": 7}}}))
    return folder


def test_a_train_length_no_prepared_document_serves_fails_the_dry_run(tmp_path):
    """Before: `train_length: 400000` passed the dry run; the first job failed naming neither the
    preset nor train_length. A corpus prepared before (with other settings) tells how long its
    documents are: keeping only those of train_length / 4 tokens or more would keep none."""
    data = _meta(tmp_path / "data/pg22", [30, 900, 12])
    assert longest_document(data) == 900
    assert documents_problem(900, 100) is None
    assert documents_problem(900, 100000) == (
        "its longest document has 900 tokens, and documents shorter than train_length / 4 = 100000 are "
        "left out, so no document would remain: shorten model.train_length")


def test_the_train_rule_refuses_a_train_length_no_document_serves(tmp_path, pipeline, monkeypatch):
    """The wiring: the train rules' params (DagChecks.checked_train) name the preset file and key."""
    monkeypatch.setattr(type(pipeline.paths), "shortest_eval_length", lambda self, preset: 100000)  # train_length 400000
    data = _meta(tmp_path / "data/pg22", [30, 900, 12])
    train = pipeline.settings.paper_preset("tiny", "lex")["train"]
    with pytest.raises(ValueError, match=r"^config/presets/tiny.yaml: model.train_length \d+ \(paper lex\): "
                                         rf"{data}/meta.json: its longest document has 900 tokens"):
        pipeline.checks.checked_train("tiny", "lex", "rope", train, str(data))


# -- no data lost by a failed job --------------------------------------------------------------------

def test_a_cut_component_meta_stops_the_dag_before_the_mix_is_removed(tmp_path, pipeline, monkeypatch):
    """Before: with a component's meta.json cut short, the train_mix prepare job ran, failed, and
    Snakemake removed the train_mix corpus (it removes a job's outputs before it runs and when it
    fails); restoring the file then planned 184 jobs, 12 trainings among them. Now the mix's input
    function reads each component meta.json when the DAG is built: one line, no job starts, and a
    file restored byte for byte is, by Snakemake's input checksums, no change at all."""
    monkeypatch.chdir(tmp_path)
    meta = _meta(tmp_path / "results/tiny/data/pg22", [30, 900]) / "meta.json"
    good = meta.read_text()
    assert "results/tiny/data/pg22/meta.json" in pipeline.paths.corpus_inputs("tiny", "train_mix")
    meta.write_text(good[: len(good) // 2])
    with pytest.raises(ValueError) as err:
        pipeline.paths.corpus_inputs("tiny", "train_mix")
    said = str(err.value)
    assert said.startswith("results/tiny/data/pg22/meta.json: line 1 column ") and "\n" not in said
    assert ("results/tiny/data/train_mix is prepared from it and is kept as it is: rebuild "
            "results/tiny/data/pg22/meta.json with `snakemake --cores 2 --force results/tiny/data/pg22/meta.json`"
            ) in said


def test_a_truncated_checkpoint_names_the_target_that_rebuilds_it(tmp_path):
    """Before: "rerun the step that writes it", and the table target then said nothing to do (the
    cut file is newer than its inputs). Now the message names the command that rebuilds it."""
    from lenex.records.checkpoint import read_checkpoint

    path = tmp_path / "results/tiny/models/lex/rope/seed1.pt"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(ValueError) as err:
        read_checkpoint(path)
    assert str(err.value).endswith(f"delete it and rebuild it with `snakemake --cores 2 --force {path}` "
                                   "(what reads it then reruns)")


# -- a bring-your-own scheme of the wrong shape -------------------------------------------------------

def test_a_scheme_whose_bias_has_the_wrong_shape_is_named_with_the_shape_it_should_return(tmp_path, monkeypatch):
    """Before: the training failed at step 1 with a raw tensor-size message naming neither the
    scheme nor (H, Tq, Tk). Now resolving `extra_schemes` (at DAG build) tries the bias on a toy model."""
    from lenex.positions import POSITIONS
    from lenex.experiment.schemes import bias_shape_problem, resolve_entries
    from docs_scheme import example_code

    saved = dict(POSITIONS)
    flat = "return bias.unsqueeze(-3).expand(*bias.shape[:-2], self.n_heads, *bias.shape[-2:])"
    assert flat in example_code()
    wrong = example_code().replace('"log-distance"', '"test-flat-bias"').replace(flat, "return bias")
    (tmp_path / "flat.py").write_text(wrong)
    monkeypatch.chdir(tmp_path)
    try:
        with pytest.raises(ValueError) as err:
            resolve_entries({"mine": {"position": "test-flat-bias", "module": "flat.py"}})
    finally:
        POSITIONS.clear()
        POSITIONS.update(saved)
    assert str(err.value).startswith("extra_schemes.mine: position scheme 'test-flat-bias' (")
    assert str(err.value).endswith("its bias(q_pos, k_pos) returned shape (3, 5); it should return (H, Tq, Tk) = "
                                   "(2, 3, 5) for 2 heads, 3 query and 5 key positions")
    assert bias_shape_problem((2, 3, 5), 2, 3, 5) is None


# -- plans that cost what they run --------------------------------------------------------------------

from lenex.pipeline.plan import Job, build_plan, render_markdown, training_cpu_hours  # noqa: E402
from lenex.pipeline.targets import plan_pointer  # noqa: E402

CPU_PRESET = {"name": "ws", "model": {"train_length": 512}, "train": {"steps": 1024, "batch_size": 8},
              "resources": {"train": {"threads": 1, "runtime": 120}}}
# Two shapes: 6 LEX models of 4,194,304 tokens at 2,000 tokens/s for two jobs (1,000 each), and
# one segmented group that must not count for LEX.
COST = {"preset": "ws", "seconds": 20, "machine": {"cpu": "test cpu"}, "groups": [
    {"paper": "lex", "count": 6, "tokens": 4194304, "tokens_per_s_two_jobs": 2000.0},
    {"paper": "segmented", "count": 3, "tokens": 1000, "tokens_per_s_two_jobs": 10.0}]}


def test_cpu_hours_of_trainings_by_hand():
    # 6 x 4,194,304 tokens / 1,000 tokens/s = 25,165.8 s = 6.990 CPU-hours.
    assert training_cpu_hours(COST["groups"], "lex") == (6, pytest.approx(6 * 4194304 / 1000 / 3600))
    assert training_cpu_hours(COST["groups"], "receptive-field") == (0, 0)


def test_a_cpu_preset_plan_estimates_cpu_hours_not_zero_gpu_hours():
    """Before: the workstation plan said "Estimated 0 GPU-hours" for a CPU preset, no CPU-hours."""
    jobs = [Job("train", f"m{i}.pt", 1, {"runtime": 120}) for i in range(6)] + [
        Job("lex_evaluate__ws_rope_s1_pg22", "e.json", 1, {"runtime": 30})]
    plan = build_plan(jobs, CPU_PRESET, "lex", COST)
    assert plan["device"] == "cpu" and plan["declared_cpu_hours"] == pytest.approx(6 * 2 + 0.5)
    assert plan["estimated_cpu_hours"] == pytest.approx(6 * 4194304 / 1000 / 3600 + 0.5)
    text = render_markdown(plan)
    assert "GPU-hours" not in text and "Estimated **7.5 CPU-hours**" in text
    assert "**7.0 CPU-hours** by the cost model (6 models" in text and "python -m benchmarks.preset_cost --preset ws" in text
    unmeasured = render_markdown(build_plan(jobs, CPU_PRESET, "lex"))
    assert "Estimated **12.5 CPU-hours**" in unmeasured and "has not measured this preset" in unmeasured


def test_a_whole_preset_run_points_at_its_plan():
    """Before: `snakemake -n` listed 1,210 jobs and no cost."""
    assert plan_pointer("ws", ["lex", "segmented"]) == (
        "lenex: what preset 'ws' costs before it runs (CPU-hours at a CPU preset, from the cost model; GPU-hours at "
        "a GPU one): snakemake --cores 1 results/ws/plan/lex.md results/ws/plan/segmented.md")


def test_a_scale_study_point_and_a_profile_are_checked_where_the_claims_and_page_read_them(tmp_path):
    from lenex.claims.scale import load_points
    from lenex.hf.profile_report import load_profile

    points = tmp_path / "points.jsonl"
    points.write_text('{"ppl": 12.0}\n{"ppl": 0.5}\n')
    with pytest.raises(ValueError, match=r"points.jsonl:2: ppl is 0.5: a perplexity is at least 1"):
        load_points(points)
    profile = tmp_path / "profile.json"
    profile.write_text('{"model": "m", "context_length": 8, "rows": [{"ppl": Infinity}], "check": {}}')
    with pytest.raises(ValueError, match=r"profile.json: rows\[0\].ppl is inf: not a finite number"):
        load_profile(profile)
