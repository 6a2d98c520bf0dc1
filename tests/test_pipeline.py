"""lenex.pipeline: what the rules read (config, presets, experiments, corpora, every job's resources
and launcher, recorded files and targets), without Snakemake, on the repository's own config."""
import shutil
from types import SimpleNamespace

import pytest
import yaml

from lenex.pipeline.resources import launcher
from lenex.pipeline.workflow import Pipeline
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


def test_presets_and_their_views(pipeline):
    assert pipeline.preset_names == ["paper", "tiny", "workstation"]
    assert pipeline.preset_file("tiny") == str(REPO / "config/presets/tiny.yaml")
    with pytest.raises(ValueError, match="unknown preset 'huge'; known: paper, tiny, workstation"):
        pipeline.preset("huge")
    # the receptive-field paper's own block at `paper` (Table 7: 12 x 768 at L_tr = 512), LEX's the shared one
    assert pipeline.train_length("paper", "receptive-field") == 512 and pipeline.train_length("paper", "lex") == 1024
    assert pipeline.paper_preset("paper", "lex")["paper"] == "lex"
    assert pipeline.rule_resources("paper", "train", "gpus", 0, "segmented") == 4
    assert pipeline.rule_resources("tiny", "train", "gpus", 0) == 0
    assert pipeline.eval_length("paper", 0.25, "lex") == 256
    with pytest.raises(ValueError, match="0.3 x L_tr = 307.2 is not a whole number of tokens"):
        pipeline.eval_length("paper", 0.3, "lex")


def test_a_preset_block_for_no_registered_paper_is_one_error(tmp_path):
    shutil.copytree(REPO / "config", tmp_path / "config")
    shutil.copytree(REPO / "workflow/schemas", tmp_path / "workflow/schemas")
    preset = tmp_path / "config/presets/tiny.yaml"
    preset.write_text(preset.read_text().replace("  receptive-field:\n", "  receptive-feld:\n", 1))
    with pytest.raises(ValueError, match="unknown paper 'receptive-feld'"):
        Pipeline(repo_config(), tmp_path, stamps=tmp_path / "stamps").preset("tiny")


def test_experiments_tables_and_model_configs(pipeline):
    assert pipeline.table_spec("lex", 2)["title"].startswith("Perplexity by evaluation length")
    with pytest.raises(ValueError, match="paper 'lex' has no table 9; known: table2"):
        pipeline.table_spec("lex", 9)
    assert pipeline.figure_title("lex", 1) == "'Perplexity against evaluation length on PG22 (LEX Figure 1, from the Table 2 evaluations)'"
    assert pipeline.table_schemes("lex", 2) == "'{}'" and pipeline.scheme_files("lex", "rope") == []
    # LEX: the preset's model with the variant's fields; receptive field: the window scaled with the
    # preset (w = 160 x 12/512 x 32/3 = 40 at tiny)
    tiny = pipeline.preset("tiny")["model"]
    assert pipeline.model_config("tiny", "lex", "rope") == {**tiny, "position": "rope"}
    rf = pipeline.model_config("tiny", "receptive-field", "window-160")
    assert rf["mask"] == "windowed" and rf["mask_options"] == {"window": 40} and "paper_window" not in rf
    # segmented: the large stand-ins (tiny: `large_model`) at the model's own L_t (Pythia's 2048 at `paper`)
    assert pipeline.model_config("tiny", "segmented", "pythia")["n_layer"] == 3
    assert pipeline.model_config("tiny", "segmented", "gpt2-small")["n_layer"] == 2
    assert pipeline.model_config("paper", "segmented", "pythia")["train_length"] == 2048
    with pytest.raises(ValueError, match="unknown variant 'rotary' for paper 'lex'; known: transformer"):
        pipeline.model_config("tiny", "lex", "rotary")


def test_claims_budget_names_only_the_variants_the_claims_name(pipeline):
    budget = pipeline.claims_budget("tiny", "receptive-field")
    assert budget["by_variant"] and set(budget["by_variant"]) <= set(pipeline.experiment("receptive-field")["variants"])
    assert budget["tokens"] == min(v["tokens"] for v in budget["by_variant"].values()) or budget["tokens"] > 0


def test_corpora(pipeline, monkeypatch):
    assert pipeline.data_files("tiny", "pg22")[-1] == "results/tiny/data/pg22/meta.json"
    with pytest.raises(ValueError, match="unknown corpus 'wiki'; configured: pg22, qmsum"):
        pipeline.corpus_spec("wiki")
    assert pipeline.fetched_inputs("pg22") == ["resources/shakespeare/SOURCE.json"]
    # a mix is prepared from its components; tiny's GPT-2 tokenizer is no file of its own
    assert pipeline.corpus_inputs("tiny", "train_mix") == [
        f"results/tiny/data/{c}/meta.json" for c in ("pg22", "openwebtext2", "qmsum", "arxiv")]
    assert pipeline.tokenizer_name("tiny") == "gpt2" and pipeline.tokenizer_files("tiny") == []
    assert pipeline.tokenizer_name("workstation") == "bpe:results/workstation/tokenizer/bpe-4096.json"
    assert pipeline.shortest_eval_length("tiny") == 16  # L_tr / 4
    assert pipeline.corpus_metas("tiny", ["pg22", "arxiv"]) == ["results/tiny/data/pg22/meta.json",
                                                                 "results/tiny/data/arxiv/meta.json"]


def test_a_machine_without_apt_skips_the_debian_stand_ins_and_trains_on_the_fallback(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    bare = Pipeline(repo_config(), REPO, stamps=tmp_path)
    assert "no apt-get/dpkg-deb" in bare.corpus_unavailable("arxiv")
    assert "mix component 'openwebtext2' is unavailable" in bare.corpus_unavailable("train_mix")
    assert bare.available_corpora() == ["pg22", "qmsum", "github"]
    assert bare.training_corpus("lex") == "pg22" and bare.train_meta("tiny", "lex") == "results/tiny/data/pg22/meta.json"


def test_every_job_declares_what_it_asks_a_cluster_for(pipeline):
    # `paper`: LEX trains on 8 GPUs with 64 threads (8 CPUs per GPU), segmented evaluates on 1 GPU with 8
    assert pipeline.stage_resources_at("paper", "train", "lex") == {"mem_mb": 128000, "runtime": 1080, "gpu": 8,
                                                                     "cpus_per_gpu": 8}
    assert pipeline.stage_resources_at("paper", "evaluate", "segmented")["cpus_per_gpu"] == 8
    # a CPU job asks for no GPU (SLURM gives it `threads` CPUs per task); runs multiply the time limit
    assert pipeline.stage_resources_at("tiny", "evaluate", "lex", runs=3) == {"mem_mb": 2000, "runtime": 30, "gpu": 0,
                                                                               "cpus_per_gpu": 0}
    resources = pipeline.stage_resources("train", "receptive-field")
    assert {key: f(wc(preset="paper")) for key, f in resources.items()} == {"mem_mb": 64000, "runtime": 240, "gpu": 1,
                                                                            "cpus_per_gpu": 8}
    assert pipeline.stage_threads("train")(wc(preset="paper", paper="lex")) == 64
    assert pipeline.stage_setting("train", "runtime")(wc(preset="tiny", paper="lex")) == 20
    assert pipeline.process_threads()(wc(preset="paper", paper="lex"), 64) == 8
    assert pipeline.gpu_stage("paper", "evaluate", "lex") and not pipeline.gpu_stage("tiny", "evaluate", "lex")
    assert pipeline.presets_by_nodes(one_node=True) == "paper|tiny|workstation"
    assert pipeline.presets_by_nodes(one_node=False) == "-"


def test_launchers():
    assert launcher("lenex.train", 1) == "python -m lenex.pipeline.launch lenex.train"
    assert launcher("lenex.train", 8) == "torchrun --standalone --nproc_per_node 8 -m lenex.train"


def test_multinode_launcher_starts_one_torchrun_per_node(pipeline):
    command = pipeline.multinode_launcher("paper", "lex")
    assert "srun --nodes 1 --ntasks-per-node 1 torchrun --nnodes 1 --nproc_per_node 8" in command
    assert command.endswith("--rdzv_endpoint $head_node:29500 -m lenex.train")


def test_recorded_inputs_are_the_raw_results_under_from_raw(pipeline, tmp_path):
    paths = pipeline.recorded(lambda w: ["a.json", "b.json"], "lex")
    assert paths(wc(preset="tiny")) == ["a.json", "b.json"] and pipeline.raw_env("lex")(wc(preset="tiny")) == ""
    raw = Pipeline(repo_config(from_raw=True), REPO, stamps=tmp_path)
    assert raw.recorded(lambda w: ["a.json"], "lex")(wc(preset="tiny")) == "results/tiny/raw/lex.jsonl"
    assert raw.raw_env()(wc(preset="tiny", paper="segmented")) == "LENEX_RAW=results/tiny/raw/segmented.jsonl "
    assert raw.all_targets("tiny") is not None
    with pytest.raises(ValueError, match="from_raw: no raw results for preset 'nowhere'"):
        raw.all_targets("nowhere")(None)


def test_whole_paper_targets(pipeline):
    assert pipeline.paper_tables("tiny", "segmented")[:2] == ["results/tiny/tables/segmented/table2.md",
                                                               "results/tiny/tables/segmented/table2.tex"]
    assert pipeline.paper_figures("tiny", "lex") == [f"results/tiny/figures/lex/figure{n}.{ext}"
                                                      for n in (1, 2) for ext in ("png", "pdf")]
    # Figure 3's numbers are in no table: its own cells file is one of the segmented claims' inputs
    assert pipeline.paper_cells("tiny", "segmented")[-1] == "results/tiny/figures/segmented/figure3.cells.json"
    assert pipeline.paper_cells("tiny", "lex") == [f"results/tiny/tables/lex/table{n}.cells.json" for n in (2, 6, 3, 4, 5)]
    assert pipeline.paper_targets("tiny") == [
        "results/tiny/lex.md", "results/tiny/receptive-field.md", "results/tiny/segmented.md",
        "results/tiny/claims/lex.json", "results/tiny/claims/receptive-field.json", "results/tiny/claims/segmented.json",
        "results/tiny/claims.md"]
    assert pipeline.raw_files("tiny")[0] == "results/tiny/raw/lex.jsonl"
    every = pipeline.all_targets("tiny")
    assert every[-3:] == pipeline.raw_files("tiny") and "results/tiny/data/pg22/CARD.md" in every


def test_the_reports_labels_and_contents(pipeline, tmp_path, monkeypatch):
    assert pipeline.result_label("lex", "table", "table3").startswith("Table 3: ")
    options = pipeline.figure_report("figure{figure}", "receptive-field")
    assert options["subcategory"] == "Figures" and options["category"] == pipeline.paper_title("receptive-field")
    assert options["labels"](wc(figure="4"))["figure"].startswith("Figure 4: ")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results/tiny/tables/lex").mkdir(parents=True)
    (tmp_path / "results/tiny/tables/lex/table2.md").write_text("|")
    (tmp_path / "results/tiny/data/pg22").mkdir(parents=True)
    (tmp_path / "results/tiny/data/pg22/CARD.md").write_text("#")
    assert pipeline.report_files("tiny") == ["results/tiny/report/tables/lex/table2.html",
                                             "results/tiny/report/data/pg22.html"]


def test_hf_profile_settings(pipeline):
    assert pipeline.hf_scale("tiny")["threads"] == 2 and pipeline.hf_scale("tiny")["resolution_tokens"] == 1024
    assert pipeline.hf_eot_option("smollm2-135m") == "--eot-token '<|endoftext|>'"
    with pytest.raises(ValueError, match="unknown Hugging Face model 'gpt5' in models; known: smollm2-135m"):
        pipeline.hf_model("gpt5")
