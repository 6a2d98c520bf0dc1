"""One interface per paper (lenex.pipeline.papers): the registry holds the tree's papers (each
package's paper.py registers its own) and those outside packages declare by entry points, each paper answers the same questions (models, recorded inputs, table arguments, header
facts, figure cells), and the fairseq cross-check's settings (lenex.fairseq_backend.workflow)."""
import json
import re
import shlex

import pytest
import yaml

from lenex.fairseq_backend import workflow as fairseq
from lenex.pipeline import papers
from lenex.pipeline.papers import Paper, check_claims_paper, paper_named, registered, rule_file
from test_pipeline import REPO, TINY, pipeline, repo_config, scratch_config  # noqa: F401 - the module's fixture


def test_the_registry_holds_each_paper_its_package_declares():
    assert {name: type(paper).__module__ for name, paper in registered().items()} == {
        "lex": "lenex.lex.paper", "receptive-field": "lenex.receptive_field.paper",
        "segmented": "lenex.segmented.paper"}
    with pytest.raises(ValueError, match="unknown paper 'sandwich'; registered: lex, receptive-field, segmented "
                                         r"\(a paper registers itself in its package's paper.py, .* a paper outside "
                                         "lenex declares the entry point `lenex.papers`"):
        paper_named("sandwich")


def test_the_trees_papers_are_found_without_an_entry_point(monkeypatch):
    """No reinstall: a paper package of the tree is registered with no entry point in the installed metadata."""
    registered.cache_clear()
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [])
    try:
        assert sorted(registered()) == ["lex", "receptive-field", "segmented"]
    finally:
        monkeypatch.undo()
        registered.cache_clear()


def test_an_entry_point_into_the_tree_is_left_to_the_tree(monkeypatch):
    """An install from before the tree registered its own papers still lists them: such an entry
    point is not loaded (it would name what the tree registers anyway)."""
    class Stale:
        name, value = "lex", "lenex.segmented.paper:PAPER"  # loaded, it would be refused: not the paper named lex

        def load(self):
            raise AssertionError("an entry point into lenex is loaded")

    registered.cache_clear()
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [Stale()])
    try:
        assert registered()["lex"] is paper_named("lex") and type(registered()["lex"]).__module__ == "lenex.lex.paper"
    finally:
        monkeypatch.undo()
        registered.cache_clear()


OUTSIDE_PAPER = '''from lenex.lex.paper import Lex


class Outside(Lex):
    name = "outside"


PAPER = Outside()
'''


def test_a_paper_outside_the_tree_is_registered_by_its_entry_point(tmp_path, monkeypatch):
    (tmp_path / "outside_paper.py").write_text(OUTSIDE_PAPER)
    info = tmp_path / "outside_paper-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: outside-paper\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lenex.papers]\noutside = outside_paper:PAPER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registered.cache_clear()
    try:
        assert sorted(registered()) == ["lex", "outside", "receptive-field", "segmented"]
        assert type(paper_named("outside")).__module__ == "outside_paper"
    finally:
        papers.PAPERS.pop("outside", None)
        monkeypatch.undo()
        registered.cache_clear()
    assert "outside" not in registered()


def test_each_configured_papers_rule_file_is_found_through_the_registry(pipeline):  # noqa: F811
    """The Snakefile includes what paper_rule_files lists, and names no paper itself."""
    assert rule_file("receptive-field") == "workflow/rules/receptive_field.smk"
    assert pipeline.settings.paper_rule_files() == [
        "workflow/rules/lex.smk", "workflow/rules/receptive_field.smk", "workflow/rules/segmented.smk"]
    snakefile = (REPO / "Snakefile").read_text()
    assert "pipeline.settings.paper_rule_files()" in snakefile
    assert not [name for name in registered() if rule_file(name).rpartition("/")[2] in snakefile]


def test_a_claims_file_names_its_own_registered_paper(tmp_path):
    """The claims schema takes any name (no list of papers to edit); the registry decides, when the DAG is built."""
    schema = yaml.safe_load((REPO / "workflow/schemas/claims.schema.yaml").read_text())
    assert "enum" not in schema["properties"]["paper"]
    check_claims_paper("lex", "lex", "config/claims/lex.yaml")
    with pytest.raises(ValueError, match=r"^config/claims/lex.yaml: paper: unknown paper 'lexx'; registered: lex, "):
        check_claims_paper("lexx", "lex", "config/claims/lex.yaml")
    with pytest.raises(ValueError, match="'segmented' is not the paper these claims are read for, 'lex'"):
        check_claims_paper("segmented", "lex", "config/claims/lex.yaml")
    typo = scratch_config(tmp_path, TINY)
    claims = tmp_path / "config/claims/lex.yaml"
    claims.write_text(claims.read_text().replace("paper: lex\n", "paper: lexx\n", 1))
    with pytest.raises(ValueError, match="config/claims/lex.yaml: paper: unknown paper 'lexx'"):
        typo.checks.checked_claims("lex")


def test_a_paper_must_answer_every_question():
    class Half(Paper):
        name, table_renderer = "half", "lenex.tables.render"

        def model_config(self, view, experiment, variant):
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Half()


def test_an_entry_point_that_is_not_its_paper_is_refused(tmp_path, monkeypatch):
    (tmp_path / "other_paper.py").write_text("from lenex.segmented.paper import PAPER\n")  # outside lenex

    class Point:
        name, value = "lex", "other_paper:PAPER"

    monkeypatch.syspath_prepend(str(tmp_path))
    registered.cache_clear()
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [Point()])
    try:
        with pytest.raises(TypeError, match="entry point lex = other_paper:PAPER"):
            papers.registered()
    finally:
        monkeypatch.undo()
        registered.cache_clear()


def test_every_paper_lists_its_recorded_files_as_its_tables_figures_and_headers_read(pipeline):  # noqa: F811
    lex = pipeline.settings.paper("lex")
    table2 = lex.table_recorded(pipeline.paths, "tiny", "2")
    assert set(table2) == {"results", "metas"} and len(table2["results"]) == 48 * 2  # 2 seeds at tiny
    assert table2["metas"] == ["results/tiny/data/pg22/meta.json", "results/tiny/data/qmsum/meta.json"]
    # Figure 1 draws Table 2's PG22 section; Figure 2 is analytic
    assert lex.figure_recorded(pipeline.paths, "tiny", "1") == [p for p in table2["results"] if "/pg22/" in p]
    assert lex.figure_recorded(pipeline.paths, "tiny", "2") == []
    recorded = pipeline.recorded.paper_recorded("tiny", "lex")
    assert "results/tiny/data/train_mix/meta.json" in recorded and set(table2["results"]) < set(recorded)
    assert recorded == sorted(set(recorded))
    rf = pipeline.settings.paper("receptive-field").table_recorded(pipeline.paths, "tiny", "1")
    assert set(rf) == {"results", "erf", "metas"}
    seg = pipeline.settings.paper("segmented")
    assert seg.header_recorded(pipeline.paths, "tiny") == ["results/tiny/data/arxiv/meta.json"]
    assert seg.figure_cells == ("figure3",) and lex.figure_cells == ("figure2",)  # LEX Figure 2: exact numbers
    assert all(p.endswith(".json") for p in pipeline.recorded.paper_recorded("tiny", "segmented"))


def test_table_jobs_inputs_and_arguments(pipeline):  # noqa: F811
    lex, rf, seg = (pipeline.settings.paper(name) for name in ("lex", "receptive-field", "segmented"))
    assert lex.table_inputs(pipeline.paths, "tiny", "3") == {"header": "results/tiny/tables/lex/table3.header.json"}
    arguments = lex.table_arguments(pipeline.paths, "tiny", "3")
    assert arguments.startswith("--results results/tiny/resolution/lex/")
    assert arguments.endswith(" --header results/tiny/tables/lex/table3.header.json")
    header = lex.header_arguments(pipeline.paths, "tiny", "2")
    assert header.startswith("--preset-file config/presets/tiny.yaml --paper lex --corpora '")
    assert " --train-meta results/tiny/data/train_mix/meta.json --train-stands-in-for " in header
    assert rf.table_inputs(pipeline.paths, "tiny", "1") == {"preset_file": "config/presets/tiny.yaml"}
    assert " --erf " in rf.table_arguments(pipeline.paths, "tiny", "1") and " --unavailable '{}'" in rf.table_arguments(
        pipeline.paths, "tiny", "1")
    assert seg.table_arguments(pipeline.paths, "tiny", "2").endswith(" --metas results/tiny/data/arxiv/meta.json ")
    assert seg.table_arguments(pipeline.paths, "paper", "2").endswith(" --hf")  # the released checkpoints at `paper`
    assert [p.table_renderer for p in (lex, rf, seg)] == ["lenex.tables.render", "lenex.receptive_field.table",
                                                           "lenex.segmented.tables"]


def test_lex_scores_its_cells_in_one_job_per_model_only_on_a_cpu_preset(pipeline):  # noqa: F811
    lex = pipeline.settings.paper("lex")
    jobs = {group.rule: group for group in pipeline.evaluation.groups("tiny", "lex")}  # tiny: 2 seeds of every variant
    assert len(jobs) == (18 + 4) * 2 and sum(len(job.cells) for job in jobs.values()) == (102 + 9) * 2
    job = jobs["lex_eval__tiny_xpos_s2_pg22"]
    first = job.first
    assert first.out.startswith("results/tiny/eval/lex/xpos/seed2/pg22/") and first.extra["paper"] == "lex"
    assert first.extra["seed"] == 2 and job.outputs[0] == first.out and first.stage == "eval"
    assert job.log == "results/tiny/logs/eval/lex/xpos/seed2/pg22.log"
    assert jobs["lex_resolution__tiny_xpos_s1_pg22"].first.stage == "resolution"
    # GPUs (gpu, paper): each cell its own job of its measure's rule (evaluate, resolution)
    assert [p for p in pipeline.settings.preset_names if pipeline.evaluation.granularity(p, "lex") == "model"] == [
        "tiny", "workstation"]
    assert lex.paper_head_dim(pipeline.settings) == 64  # 1024 / 16 (Table 7)


def test_a_cells_arguments_come_from_one_place_whatever_its_group(pipeline):  # noqa: F811
    """lenex.pipeline.evaluation: a cell's spec and arguments, whether its job is its alone or its model's."""
    from lenex.pipeline.evaluation import cell_extra

    assert pipeline.evaluation.span("tiny", "lex") == 8 * pipeline.settings.train_length("tiny", "lex")  # span_multiple
    assert pipeline.evaluation.setting("tiny", "lex", "max_tokens") == 1024
    extra = cell_extra("tiny", "lex", "rope", "pg22", "2")
    assert extra == {"variant": "rope", "corpus": "pg22", "seed": 2, "paper": "lex", "preset": "tiny"}
    [job] = [g for g in pipeline.evaluation.groups("tiny", "lex") if g.rule == "lex_eval__tiny_rope_s2_pg22"]
    assert all(cell.extra == extra for cell in job.cells)
    alone = {cell.out: cell for g in pipeline.evaluation.groups("tiny", "lex", granularity="cell") for cell in g.cells}
    assert all(alone[cell.out] == cell for cell in job.cells)


def test_receptive_field_and_segmented_rule_settings(pipeline):  # noqa: F811
    rf, seg = pipeline.settings.paper("receptive-field"), pipeline.settings.paper("segmented")
    assert rf.train_config(pipeline.settings, "tiny", "alibi", "2")["seed"] == pipeline.settings.paper_preset(
        "tiny", "receptive-field")["train"].get("seed", 1) + 1
    assert rf.multiples(pipeline.settings, "cache-window") and rf.window_option() == "--window-multiple 4 "
    assert rf.erf_options(pipeline.settings, "tiny", "alibi", "E.json").startswith("--erf-out E.json --erf-multiple 4 ")
    assert rf.figure_kind(pipeline.settings, "8") == "figure8" and rf.figure_kind(pipeline.settings, "4") == "erf"
    assert seg.presets(pipeline.settings, released=True) == "gpu|paper" and seg.presets(pipeline.settings, released=False) == "tiny|workstation"
    assert seg.hf_checkpoint(pipeline.settings, "paper", "pythia") == "EleutherAI/pythia-1.4b"
    assert seg.domain_data(pipeline.settings, "paper", "pythia") == "results/paper/data/segmented/arxiv-pythia"
    assert seg.domain_data(pipeline.settings, "tiny", "pythia", meta=True) == "results/tiny/data/arxiv/meta.json"
    assert seg.evaluation_extra(pipeline.settings, "tiny", "pythia", "ootb", "1") == {
        "model": "pythia", "run": "ootb", "seed": 1, "base_train_length": 32, "paper": "segmented", "preset": "tiny"}
    assert seg.attention_options(pipeline.settings, "paper", "pythia") == "--train-length 2048 --max-pieces 16"
    # domain adaptation starts from the pretrained model (ootb) or from that seed's OOTB checkpoint (da)
    assert seg.adapted_from("tiny", "gpt2", "ootb", "2") == "results/tiny/models/segmented/pretrained/gpt2.pt"
    assert seg.adapted_from("tiny", "gpt2", "da", "2") == "results/tiny/models/segmented/gpt2/seed2/ootb.pt"


def test_the_crosscheck_is_configuration_laid_under_the_presets_own(pipeline):  # noqa: F811
    spec = fairseq.crosscheck_spec(pipeline, "tiny")
    assert spec == pipeline.settings.config["crosscheck"] and spec["variants"] == ["transformer", "alibi", "rope", "xpos"]
    # 2 backends x 2 seeds x (4 variants x 5 lengths + xPos with BCA at 2 and 4 x L_tr)
    assert len(fairseq.crosscheck_evaluations(pipeline, "tiny")) == 2 * 2 * (4 * 5 + 2)
    assert len(fairseq.crosscheck_models(pipeline, "tiny")) == 16
    # workstation trains its cross-check models on its own budget (its `crosscheck.train` over LEX's)
    own = pipeline.settings.preset("workstation")["crosscheck"]["train"]
    assert fairseq.crosscheck_budget(pipeline, "workstation")["steps"] == own["steps"]
    page = fairseq.crosscheck_page_spec(pipeline, "tiny")
    assert page["preset"] == "tiny" and page["train_length"] == pipeline.settings.train_length("tiny", "lex")


def test_a_presets_crosscheck_train_is_laid_over_lexs_training(tmp_path):
    own = re.sub(r"^crosscheck:\n(  .*\n)*", "", TINY, flags=re.M)  # tiny's own cross-check budget, replaced
    preset = scratch_config(tmp_path, own + "crosscheck:\n  train: {steps: 7, warmup: 1}\n")
    assert fairseq.crosscheck_budget(preset, "p") == {"steps": 7, "batch_size": 8, "lr": 0.003, "warmup": 1}


def test_every_paper_names_its_seeds_and_each_seeds_training_seed(pipeline):  # noqa: F811
    """Seeds 1..n per preset (a receptive-field budget group may set its own n); seed s trains with
    the preset's seed + s - 1, so seed 1 is the run a preset without seeds makes."""
    lex, rf, seg = (pipeline.settings.paper(name) for name in ("lex", "receptive-field", "segmented"))
    view = pipeline.settings.paper_preset("tiny", "lex")
    assert lex.seeds(view, pipeline.settings.experiment("lex"), "rope") == [1, 2] == lex.preset_seeds(pipeline.settings, "tiny")("rope")
    assert [lex.train_config(pipeline.settings, "tiny", "rope", s)["seed"] for s in (1, 2)] == [1, 2]
    assert lex.model_path("tiny", "rope", "2") == "results/tiny/models/lex/rope/seed2.pt"
    assert lex.preset_seeds(pipeline.settings, "paper")("alibi") == [1]  # the paper trains each variant once
    paper_rf = pipeline.settings.paper_preset("paper", "receptive-field")
    experiment = pipeline.settings.experiment("receptive-field")
    assert rf.seeds(paper_rf, experiment, "window-40") == [1]  # Tables 1, 2, 4: one run each in the paper
    assert rf.seeds(paper_rf, experiment, "sandwich") == [1, 2, 3, 4, 5]  # Table 3's budget group `seeds`
    assert rf.seeds(pipeline.settings.paper_preset("tiny", "receptive-field"), experiment, "window-40") == [1, 2]
    tiny_seg = pipeline.settings.paper_preset("tiny", "segmented")
    assert seg.seeds(tiny_seg, pipeline.settings.experiment("segmented"), "gpt2") == [1]
    # the seeds are those of the runs after the one pretrained model: the continued training's seed
    assert seg.train_seed(tiny_seg, 3) == 3 == seg.continued_train_config(pipeline.settings, "tiny", 3)["seed"]


def test_a_budget_group_may_set_its_own_seed_count(pipeline):  # noqa: F811
    rf, experiment = pipeline.settings.paper("receptive-field"), pipeline.settings.experiment("receptive-field")
    view = pipeline.settings.paper_preset("tiny", "receptive-field")
    grouped = {**view, "experiment": {**view["experiment"], "seeds": 2, "groups": {"seeds": {"experiment": {"seeds": 3}}}}}
    assert rf.seeds(grouped, experiment, "alibi") == [1, 2, 3] and rf.seeds(grouped, experiment, "alibi-shift-0") == [1, 2]
    spec = experiment["tables"]["table3"]
    from lenex.receptive_field import targets as rf_targets

    paths = rf_targets.table_results("tiny", spec, grouped, experiment)
    assert len(paths) == 7 * 3 * 3 and "results/tiny/eval/receptive-field/github/t5/seed3/last_token.json" in paths
    table1 = rf_targets.table_erf_results("tiny", experiment["tables"]["table1"], grouped, experiment)
    assert len(table1) == 17 * 2 and "results/tiny/eval/receptive-field/arxiv/window-40/seed2/erf.json" in table1
    with pytest.raises(ValueError, match="experiment.seeds must be a whole number of at least 1, got 0"):
        rf.seeds({**view, "experiment": {"seeds": 0}}, experiment, "window-40")


def test_a_power_rerun_adds_seeds_to_the_variants_it_names_only(pipeline):  # noqa: F811
    """`experiment.power_seeds` (docs/claims.md, "Power"): the named variants train seeds 1..n, the
    others keep the preset's; the tables read every seed of each, so its cells pair over common seeds."""
    from lenex.lex import targets as lex_targets

    lex, experiment = pipeline.settings.paper("lex"), pipeline.settings.experiment("lex")
    view = pipeline.settings.paper_preset("tiny", "lex")
    powered = {**view, "experiment": {**view["experiment"], "seeds": 2, "power_seeds": {"alibi": 4}}}
    assert lex.seeds(powered, experiment, "alibi") == [1, 2, 3, 4] and lex.seeds(powered, experiment, "rope") == [1, 2]
    spec = experiment["tables"]["table5"]
    of = lambda variant: lex.seeds(powered, experiment, variant)  # noqa: E731
    paths = lex_targets.table_results("tiny", spec, 32, of)
    alibi = [p for p in paths if "/lex/alibi/" in p]
    assert {p.split("/")[5] for p in alibi} == {"seed1", "seed2", "seed3", "seed4"}
    assert {p.split("/")[5] for p in paths if "/lex/xpos/" in p} == {"seed1", "seed2"}
    cells = lex_targets.evaluated_cells({"table5": spec}, 32, of)
    assert sorted({seed for _, variant, *_, seed in cells if variant == "alibi"}) == [1, 2, 3, 4]


def test_a_power_rerun_that_names_no_variant_or_drops_seeds_is_refused(pipeline):  # noqa: F811
    from lenex.experiment.presets import check_power_variants, seed_list
    from lenex.segmented import targets as seg_targets

    view = {"name": "p", "experiment": {"seeds": 3, "power_seeds": {"alibi": 2}}}
    with pytest.raises(ValueError, match="power_seeds.alibi = 2 is fewer than experiment.seeds = 3"):
        seed_list(view, "alibi")
    with pytest.raises(ValueError, match="power_seeds.alibi must be a whole number"):
        seed_list({"name": "p", "experiment": {"power_seeds": {"alibi": 0}}}, "alibi")
    with pytest.raises(ValueError, match="power_seeds names 'alibbi', no lex variant; variants: alibi, rope"):
        check_power_variants({"name": "p", "experiment": {"power_seeds": {"alibbi": 4}}}, {"alibi": {}, "rope": {}}, "lex")
    seg_view = {**pipeline.settings.paper_preset("tiny", "segmented")}
    seg_view["experiment"] = {**seg_view["experiment"], "power_seeds": {"gpt2": 3}}
    experiment = pipeline.settings.experiment("segmented")
    paths = seg_targets.table_results("tiny", seg_view, experiment, "table2")
    assert {p.split("/")[5] for p in paths if "/segmented/gpt2/" in p} == {"seed1", "seed2", "seed3"}
    assert {p.split("/")[5] for p in paths if "/segmented/pythia/" in p} == {"seed1"}
    seg_view["experiment"]["power_seeds"] = {"gtp2": 3}
    with pytest.raises(ValueError, match="power_seeds names 'gtp2', no segmented variant"):
        seg_targets.table_results("tiny", seg_view, experiment, "table2")


def test_a_receptive_field_power_rerun_names_the_corpus_of_each_model(pipeline):  # noqa: F811
    """Every corpus trains its own receptive-field models: `arxiv/window-40` adds seeds to arxiv's
    window-40 and to no other corpus's; a key without a corpus, or of no variant, is refused."""
    from lenex.receptive_field import targets as rf_targets

    experiment = pipeline.settings.experiment("receptive-field")
    view = pipeline.settings.paper_preset("tiny", "receptive-field")
    powered = {**view, "experiment": {**view["experiment"], "power_seeds": {"arxiv/window-40": 4}}}
    assert rf_targets.variant_seeds(powered, experiment, "window-40", "arxiv") == [1, 2, 3, 4]
    assert rf_targets.variant_seeds(powered, experiment, "window-40", "openwebtext2") == [1, 2]
    table1 = rf_targets.table_erf_results("tiny", experiment["tables"]["table1"], powered, experiment)
    assert "results/tiny/eval/receptive-field/arxiv/window-40/seed4/erf.json" in table1
    assert not any("/openwebtext2/window-40/seed4/" in p for p in table1)
    for key, message in (("window-40", "is <corpus>/<variant>"), ("arxiv/window-41", "names 'window-41'")):
        bad = {**view, "experiment": {**view["experiment"], "power_seeds": {key: 4}}}
        with pytest.raises(ValueError, match=message):
            rf_targets.variant_seeds(bad, experiment, "window-40", "arxiv")
