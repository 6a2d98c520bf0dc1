"""The two evaluation paths of a LEX table cell (lenex.pipeline.evaluation) as one contract. At a
CPU preset a cell is written by the per-model rule of its model, measure and corpus
(lex_eval__<preset>_<variant>_s<seed>_<corpus> or lex_resolution__..., `python -m
lenex.lex.evaluate_model`); at a GPU preset by the one-cell rule of its measure (`evaluate`, `python -m
lenex.scoring.evaluate`; `resolution`, `python -m lenex.lex.resolution`). For the same cell both
plan the same arguments, and their planned commands, run on the same model and corpus, write the
same result file (all but the seconds it took)."""

import json
import re
import shutil

import pytest
from corpus_fixture import scored_model

from test_workflow import REPO, planned_jobs, scratch_workflow, snakemake

#: A cell of LEX Table 2 (perplexity) and one of Table 3 (attention resolution), both on the
#: tables' path at tiny (tests/test_pipeline_papers.py lists those jobs).
CELLS = {"eval": "results/tiny/eval/lex/rope/seed1/pg22/causal/L32.json",
         "resolution": "results/tiny/resolution/lex/rope/seed1/pg22/causal/L64.json"}


def planned_commands(workdir) -> dict[str, tuple[str, str, dict]]:
    """Cell -> (rule, module, options) of the job a forced dry run plans for it."""
    run = snakemake("-n", "--forceall", "-p", *CELLS.values(), cwd=workdir)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    planned = {}
    for rule, outputs, words in planned_jobs(run.stdout):
        for cell in set(CELLS.values()) & set(outputs):
            assert words[:3] == ["python", "-m", "lenex.pipeline.launch"], words[:4]
            options = words[4:words.index(">")]
            planned[cell] = rule, words[3], dict(zip(options[::2], options[1::2]))
    assert set(planned) == set(CELLS.values()), run.stdout[-2000:]
    return planned


@pytest.fixture(scope="module")
def both_paths(tmp_path_factory):
    """The planned commands at tiny as it is (CPU: the per-model path), and at tiny whose
    evaluations run on a GPU (the one-cell path)."""
    cpu = scratch_workflow(tmp_path_factory.mktemp("cpu"))
    gpu = scratch_workflow(tmp_path_factory.mktemp("gpu"))
    (gpu / "config").unlink()
    shutil.copytree(REPO / "config", gpu / "config")
    preset = gpu / "config/presets/tiny.yaml"
    text, n = re.subn(r"^(  evaluate: \{threads: 1, mem_mb: 2000, runtime: 10)\}$", r"\1, gpus: 1}", preset.read_text(),
                      flags=re.M)
    assert n == 1, "config/presets/tiny.yaml no longer declares its evaluate resources on one line"
    preset.write_text(text)
    return planned_commands(cpu), planned_commands(gpu)


@pytest.mark.parametrize("stage", CELLS)
def test_both_paths_plan_the_same_arguments_for_a_cell(both_paths, stage):
    cpu, gpu = (planned[CELLS[stage]] for planned in both_paths)
    (per_model, module, options), (one_cell, cell_module, alone) = cpu, gpu
    assert per_model == f"lex_{stage}__tiny_rope_s1_pg22" and module == "lenex.lex.evaluate_model"
    assert (one_cell, cell_module) == {"eval": ("evaluate", "lenex.scoring.evaluate"),
                                       "resolution": ("resolution", "lenex.lex.resolution")}[stage]
    [cell] = [c for c in json.loads(options["--cells"]) if c["out"] == CELLS[stage]]
    assert cell["stage"] == stage
    assert (cell["data"], cell["mask"], str(cell["length"]), cell["out"]) == (
        alone["--data"], alone["--mask"], alone["--length"], alone["--out"])
    assert cell["extra"] == json.loads(alone["--extra"])
    for option in ("--checkpoint", "--span", "--max-tokens", "--batch-tokens", "--threads"):
        assert options[option] == alone[option], option
    assert json.loads(options["--expect"]) == json.loads(alone["--expect"])  # the same model, or an error


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A model and a prepared corpus to run the planned commands on (instead of tiny's trained ones)."""
    root, data = scored_model(tmp_path_factory.mktemp("toy"), "rope")
    return root / "m.pt", data


@pytest.mark.parametrize("stage", CELLS)
def test_both_paths_write_the_same_result_file_for_a_cell(both_paths, toy, stage, tmp_path):
    """The planned commands, their model, corpus and result file swapped for the toy's and a scratch
    file (the expectation left out: it names tiny's model), write the same JSON."""
    from lenex.lex import evaluate_model, resolution
    from lenex.scoring import evaluate

    checkpoint, data = toy
    cpu, gpu = (planned[CELLS[stage]] for planned in both_paths)
    options = {**cpu[2], "--checkpoint": str(checkpoint)}
    [cell] = [c for c in json.loads(options.pop("--cells")) if c["out"] == CELLS[stage]]
    options["--cells"] = json.dumps([{**cell, "data": str(data), "out": str(tmp_path / "per_model.json")}])
    alone = {**gpu[2], "--checkpoint": str(checkpoint), "--data": str(data), "--out": str(tmp_path / "one_cell.json")}
    for planned in (options, alone):
        planned.pop("--expect")
    evaluate_model.main([word for pair in options.items() for word in pair])
    one_cell = {"eval": evaluate, "resolution": resolution}[stage]
    one_cell.main([word for pair in alone.items() for word in pair])
    written = [json.loads((tmp_path / name).read_text()) for name in ("per_model.json", "one_cell.json")]
    assert written[0].pop("seconds") >= 0 and written[1].pop("seconds") >= 0
    # Each record's digest covers its own timing, so the two differ by it alone; the content is compared.
    assert all(len(w.pop("content_sha256")) == 64 for w in written)
    assert written[0] == written[1] and {key: written[0][key] for key in cell["extra"]} == cell["extra"]
