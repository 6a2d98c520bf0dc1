"""The one evaluation mechanism of a perplexity or attention-resolution cell
(lenex.pipeline.evaluation): every cell is a CellSpec made in one place, every job scores a group of
them with `python -m lenex.lex.evaluate_model`, and the preset chooses the group. At a CPU preset
one job per model, measure and corpus (rule lex_eval__<preset>_<variant>_s<seed>_<corpus> or
lex_resolution__...); at a GPU preset one job per cell (rule `evaluate` or `resolution`, the
cell read off its path). For the same cell both granularities plan the same cell and arguments, and
the file a cell's job writes is the one the one-cell entry points (lenex.scoring.evaluate,
lenex.lex.resolution) write for it, whichever group it is in (all but the seconds it took)."""

import json
import re
import shlex
import shutil

import pytest
from corpus_fixture import scored_model

from test_pipeline import pipeline  # noqa: F401 - the module's fixture
from test_workflow import REPO, planned_jobs, scratch_workflow, snakemake

#: A cell of LEX Table 2 (perplexity) and one of Table 3 (attention resolution), both read by the
#: tables at tiny (tests/test_pipeline_papers.py lists those jobs).
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
def both_granularities(tmp_path_factory):
    """The planned commands at tiny as it is (CPU: a job per model, measure and corpus), and at
    tiny whose evaluations run on a GPU (a job per cell)."""
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


def the_cell(options: dict, out: str) -> dict:
    [cell] = [c for c in json.loads(options["--cells"]) if c["out"] == out]
    return cell


@pytest.mark.parametrize("stage", CELLS)
def test_both_granularities_plan_the_same_cell_and_arguments(both_granularities, stage):
    cpu, gpu = (planned[CELLS[stage]] for planned in both_granularities)
    (grouped, module, options), (alone_rule, alone_module, alone) = cpu, gpu
    assert grouped == f"lex_{stage}__tiny_rope_s1_pg22" and alone_rule == {"eval": "evaluate", "resolution": "resolution"}[stage]
    assert module == alone_module == "lenex.lex.evaluate_model"  # one entry point, whatever the group
    assert len(json.loads(options["--cells"])) > 1 and len(json.loads(alone["--cells"])) == 1
    cell = the_cell(options, CELLS[stage])
    assert cell == the_cell(alone, CELLS[stage]) and cell["stage"] == stage
    assert cell["extra"] == {"variant": "rope", "corpus": "pg22", "seed": 1, "paper": "lex", "preset": "tiny"}
    for option in ("--checkpoint", "--span", "--max-tokens", "--batch-tokens", "--threads"):
        assert options[option] == alone[option], option
    assert json.loads(options["--expect"]) == json.loads(alone["--expect"])  # the same model, or an error


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A model and a prepared corpus to run the planned commands on (instead of tiny's trained ones)."""
    root, data = scored_model(tmp_path_factory.mktemp("toy"), "rope")
    return root / "m.pt", data


def run_planned(options: dict, checkpoint, data, outs: dict) -> None:
    """lenex.lex.evaluate_model with a planned job's options, on the toy model and corpus, keeping
    only the cells of `outs` (planned result file -> scratch file); the expectation left out (it
    names tiny's model)."""
    from lenex.lex import evaluate_model

    cells = [{**c, "data": str(data), "out": str(outs[c["out"]])} for c in json.loads(options["--cells"]) if c["out"] in outs]
    assert len(cells) == len(outs)
    planned = {**options, "--checkpoint": str(checkpoint), "--cells": json.dumps(cells)}
    planned.pop("--expect")
    evaluate_model.main([word for pair in planned.items() for word in pair])


@pytest.mark.parametrize("stage", CELLS)
def test_a_cell_writes_the_one_cell_entry_points_file_whichever_group_it_is_in(both_granularities, toy, stage,
                                                                                 tmp_path):
    """The cell alone (GPU's job), the cell with another of its group (CPU's job) and the one-cell
    entry point of its measure given the cell's arguments write the same JSON."""
    from lenex.lex import resolution
    from lenex.scoring import evaluate

    checkpoint, data = toy
    cpu, gpu = (planned[CELLS[stage]][2] for planned in both_granularities)
    other = next(c["out"] for c in json.loads(cpu["--cells"]) if c["out"] != CELLS[stage])
    run_planned(gpu, checkpoint, data, {CELLS[stage]: tmp_path / "alone.json"})
    run_planned(cpu, checkpoint, data, {CELLS[stage]: tmp_path / "grouped.json", other: tmp_path / "other.json"})
    cell = the_cell(gpu, CELLS[stage])
    one_cell = {"eval": evaluate, "resolution": resolution}[stage]
    one_cell.main(["--checkpoint", str(checkpoint), "--data", str(data), "--length", str(cell["length"]),
                   "--mask", cell["mask"], "--extra", json.dumps(cell["extra"]), "--out", str(tmp_path / "entry.json"),
                   *[word for option in ("--span", "--max-tokens", "--batch-tokens", "--threads")
                     for word in (option, gpu[option])]])
    written = [json.loads((tmp_path / name).read_text()) for name in ("alone.json", "grouped.json", "entry.json")]
    assert all(w.pop("seconds") >= 0 for w in written)
    # Each record's digest covers its own timing, so they differ by it alone; the content is compared.
    assert all(len(w.pop("content_sha256")) == 64 for w in written)
    assert written[0] == written[1] == written[2] and {key: written[0][key] for key in cell["extra"]} == cell["extra"]


# -- the mechanism without Snakemake ----------------------------------------------------------------

def test_a_preset_chooses_the_group_every_table_cell_is_scored_in(pipeline):  # noqa: F811
    """Every result file LEX's tables read is written by exactly one group: at a CPU preset one per
    model, measure and corpus, at a GPU preset one per cell, the job of its measure's rule."""
    evaluation, lex = pipeline.evaluation, pipeline.settings.paper("lex")
    assert [evaluation.granularity(p, "lex") for p in ("tiny", "workstation", "gpu", "paper")] == [
        "model", "model", "cell", "cell"]
    for preset in ("tiny", "gpu"):
        groups = evaluation.groups(preset, "lex")
        read = {f for table in pipeline.settings.experiment("lex")["tables"]
                for f in lex.table_recorded(pipeline.paths, preset, table.removeprefix("table"))["results"]}
        written = [out for group in groups for out in group.outputs]
        assert sorted(written) == sorted(read), preset  # each once, none beside them
        assert all(len({cell.model for cell in group.cells}) == 1 for group in groups)
    tiny = {group.rule: group for group in evaluation.groups("tiny", "lex")}
    assert len(tiny) == (18 + 4) * 2 and sum(len(g.cells) for g in tiny.values()) == (102 + 9) * 2  # 2 seeds
    group = tiny["lex_eval__tiny_xpos_s2_pg22"]
    assert group.log == "results/tiny/logs/eval/lex/xpos/seed2/pg22.log" and len(group.cells) > 1
    assert [c.length for c in group.cells if c.mask == "causal"] == sorted(c.length for c in group.cells if c.mask == "causal")
    rules = {group.rule for group in evaluation.groups("gpu", "lex")}
    assert rules == {"evaluate", "resolution"} and len(evaluation.groups("gpu", "lex")) == 102 + 9
    alone = next(g for g in evaluation.groups("gpu", "lex") if g.rule == "resolution")
    assert alone.log == alone.first.out.replace("/resolution/", "/logs/resolution/", 1).replace(".json", ".log")
    # the same cells grouped the other way: the granularity is a parameter, not a second path
    regrouped = evaluation.groups("tiny", "lex", granularity="cell")
    assert sorted(c.out for g in regrouped for c in g.cells) == sorted(c.out for g in tiny.values() for c in g.cells)
    assert {len(g.cells) for g in regrouped} == {1}
    with pytest.raises(ValueError, match="unknown evaluation granularity 'corpus'; known: model, cell"):
        evaluation.groups("tiny", "lex", granularity="corpus")


def test_the_rules_are_each_measures_rule_and_a_rule_per_group_at_cpu_presets(pipeline):  # noqa: F811
    rules = pipeline.evaluation.rules(scorer="lenex.lex.evaluate_model")
    assert [r.name for r in rules[:2]] == ["evaluate", "resolution"] and not any(r.group for r in rules[:2])
    assert rules[0].outputs == ["results/{preset}/eval/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json"]
    assert rules[1].model == "results/{preset}/models/{paper}/{variant}/seed{seed}.pt"
    grouped = rules[2:]
    assert {r.group.first.preset for r in grouped} == {"tiny", "workstation"}  # none at a GPU preset
    assert len({r.name for r in rules}) == len(rules)
    assert pipeline.evaluation.rule_orders() == [(r.name, {"eval": "evaluate", "resolution": "resolution"}[r.stage])
                                                 for r in grouped]
    rule = next(r for r in grouped if r.name == "lex_resolution__tiny_rope_s1_pg22")
    assert rule.model == "results/tiny/models/lex/rope/seed1.pt" and rule.threads == 1
    assert rule.resources["runtime"] == 10 * len(rule.group.cells)  # the preset's runtime bounds one cell
    cells = json.loads(shlex.split(rule.cells(None, None))[0])
    assert [c["out"] for c in cells] == rule.outputs and {c["stage"] for c in cells} == {"resolution"}


def test_a_measures_rule_reads_its_one_cell_off_the_path_and_writes_it_to_its_output(pipeline):  # noqa: F811
    """As the fairseq cross-check, whose rule is `evaluate`'s with its own output, relies on."""
    from types import SimpleNamespace

    evaluate = pipeline.evaluation.rules(scorer="lenex.lex.evaluate_model")[0]
    wildcards = SimpleNamespace(preset="tiny", paper="lex", variant="alibi", seed="2", corpus="pg22", mask="causal",
                                length="48")
    out = "results/tiny/crosscheck/fairseq/s2/eval/lex/alibi/pg22/causal/L48.json"
    [cell] = json.loads(shlex.split(evaluate.cells(wildcards, [out]))[0])
    assert cell == {"stage": "eval", "data": "results/tiny/data/pg22", "mask": "causal", "length": 48, "out": out,
                    "extra": {"variant": "alibi", "corpus": "pg22", "seed": 2, "paper": "lex", "preset": "tiny"}}
    assert evaluate.span(wildcards) == pipeline.evaluation.span("tiny", "lex") == 8 * 64
    assert evaluate.max_tokens(wildcards) == 1024 and evaluate.data(wildcards)[-1] == "results/tiny/data/pg22/meta.json"
    assert json.loads(shlex.split(evaluate.expect(wildcards))[0])["seed"] == 2


def test_a_cell_spec_names_an_unknown_measure_and_a_group_of_two_models(pipeline):  # noqa: F811
    from lenex.pipeline.evaluation import CellGroup

    cell = pipeline.evaluation.cell("tiny", "lex", "rope", "1", "pg22", "causal", "32", "eval")
    assert (cell.seed, cell.length, cell.out) == (1, 32, CELLS["eval"]) and cell.extra["seed"] == 1
    with pytest.raises(ValueError, match="unknown measure 'ppl'; known: eval, resolution"):
        pipeline.evaluation.cell("tiny", "lex", "rope", 1, "pg22", "causal", 32, "ppl")
    other = pipeline.evaluation.cell("tiny", "lex", "rope", 2, "pg22", "causal", 32, "eval")
    with pytest.raises(ValueError, match="cells of one model, measure and corpus"):
        CellGroup((cell, other), "model")
