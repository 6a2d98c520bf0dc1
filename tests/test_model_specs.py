"""One typed spec per trained model (lenex.pipeline.specs): each paper turns its checkpoint paths
into specs, the preset's backend, GPUs and nodes are laid over them in one function for every paper
alike, and the one training rule reads its inputs and command from them. A setting no trainer can
honour (fairseq continuing a checkpoint, fairseq on several GPUs) is refused when the DAG is built."""

import re

import pytest

import lenex.fairseq_backend.workflow as fairseq_workflow
from lenex.pipeline.resources import launcher, train_command
from lenex.pipeline.specs import ModelSpec
from test_pipeline import TINY, pipeline, scratch_config  # noqa: F401 - the module's fixture
from test_workflow import REPO, planned_jobs, scratch_workflow, snakemake, trained_models

RF_FAIRSEQ = TINY.replace("    train: {steps: 8, batch_size: 4, warmup: 2, log_every: 4, checkpoint_every: 8}",
                          "    train: {steps: 8, batch_size: 4, warmup: 2, log_every: 4, checkpoint_every: 8, backend: fairseq}")
SEGMENTED_FAIRSEQ = TINY.replace("    train: {steps: 16, batch_size: 8, lr: 0.003, warmup: 2, log_every: 8, checkpoint_every: 8}",
                                 "    train: {steps: 16, batch_size: 8, lr: 0.003, warmup: 2, log_every: 8, checkpoint_every: 8,"
                                 " backend: fairseq}")


def test_each_paper_names_its_models_by_their_checkpoint_paths(pipeline):  # noqa: F811
    lex = pipeline.specs.model("tiny", "lex", "xpos/seed2")
    assert (lex.variant, lex.seed, lex.corpus, lex.data) == ("xpos", 2, "train_mix", "results/tiny/data/train_mix")
    assert lex.train["seed"] == 2 and lex.model == pipeline.settings.model_config("tiny", "lex", "xpos")
    assert lex.output == "results/tiny/models/lex/xpos/seed2.pt" and lex.workdir == "results/tiny/train/lex/xpos/seed2"
    assert lex.labels == {"paper": "lex", "preset": "tiny", "variant": "xpos"} and lex.trained_from_scratch

    rf = pipeline.specs.model("tiny", "receptive-field", "arxiv/alibi/seed1")
    assert (rf.variant, rf.seed, rf.corpus, rf.data) == ("alibi", 1, "arxiv", "results/tiny/data/arxiv")
    assert rf.labels["corpus"] == "arxiv" and rf.data_inputs[-1] == "results/tiny/data/arxiv/meta.json"

    pretrained = pipeline.specs.model("tiny", "segmented", "pretrained/bloom")
    assert (pretrained.variant, pretrained.seed, pretrained.run, pretrained.labels["run"]) == ("bloom", None, "pretrained",
                                                                                                "pretrained")
    continued = pipeline.specs.model("tiny", "segmented", "bloom/seed1/chunk-0.25-x2")
    assert continued.model is None and continued.module == "lenex.segmented.continued"
    assert (continued.continued.init, continued.continued.method, continued.continued.extend_by) == (
        "results/tiny/models/segmented/bloom/seed1/ootb.pt", "chunk-0.25", 2)
    assert continued.continued.expect["run"] == "ootb" and continued.data_inputs == ("results/tiny/data/arxiv/meta.json",)
    ootb = pipeline.specs.model("tiny", "segmented", "bloom/seed1/ootb")
    assert (ootb.continued.init, ootb.continued.method, ootb.continued.extend_by) == (
        "results/tiny/models/segmented/pretrained/bloom.pt", "full", 1)
    assert pipeline.settings.paper("segmented").trains_from_scratch("pretrained/bloom")
    assert not pipeline.settings.paper("segmented").trains_from_scratch("bloom/seed1/ootb")


def test_a_path_no_paper_trains_is_one_error_naming_its_layouts(pipeline):  # noqa: F811
    with pytest.raises(ValueError, match=r"^no receptive-field model is trained at models/receptive-field/alibi/seed1.pt; "
                                         r"its models lie at <corpus>/<variant>/seed<s>.pt$"):
        pipeline.specs.model("tiny", "receptive-field", "alibi/seed1")
    with pytest.raises(ValueError, match=r"unknown variant 'xpoz' for paper 'lex'; known: "):
        pipeline.specs.model("tiny", "lex", "xpoz/seed1")
    with pytest.raises(ValueError, match=r"its models lie at pretrained/<model>.pt or <model>/seed<s>/<run>.pt"):
        pipeline.specs.model("tiny", "segmented", "bloom/seed1/half")


def test_the_launcher_follows_the_presets_gpus_and_nodes_for_every_paper(pipeline):  # noqa: F811
    # a GPU training's shell leaves SIGTERM to the trainer (lenex.pipeline.resources.KEEP_SHELL)
    assert pipeline.specs.model("paper", "lex", "alibi/seed1").launcher() == (
        "trap '' TERM; torchrun --standalone --nproc_per_node 8 -m lenex.training.train")
    assert pipeline.specs.model("tiny", "lex", "alibi/seed1").launcher() == (
        "python -m lenex.pipeline.launch lenex.training.train")
    assert pipeline.specs.model("paper", "segmented", "bloom/seed1/da").launcher() == (
        "trap '' TERM; torchrun --standalone --nproc_per_node 4 -m lenex.segmented.continued")
    # torch threads: the job's cores shared among its GPUs
    assert pipeline.specs.model("paper", "lex", "alibi/seed1").process_threads(64) == 8
    assert pipeline.specs.model("tiny", "lex", "alibi/seed1").process_threads(2) == 2
    spread = ModelSpec(paper="receptive-field", preset="p", variant="alibi", seed=1, corpus="arxiv", data="d", output="o.pt",
                       workdir="w", labels={}, train={}, model={}, module="lenex.training.train", gpus=8, nodes=2)
    command = spread.launcher()
    assert "srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc_per_node 8" in command
    assert command.endswith("--rdzv_endpoint $head_node:29500 -m lenex.training.train")
    assert launcher("lenex.training.train", 8) == "torchrun --standalone --nproc_per_node 8 -m lenex.training.train"
    assert train_command("lenex.training.train", 0) == "python -m lenex.pipeline.launch lenex.training.train"


def test_the_launch_reads_the_view_the_paper_was_given(pipeline):  # noqa: F811
    """Specs.launch lays GPUs, nodes and the backend over a spec from the one typed view it is
    handed, not from another read of the settings: a view asking for 2 nodes of 4 GPUs launches so."""
    import dataclasses

    from lenex.experiment.preset_spec import ResourcesSpec, StageResources

    spec = pipeline.specs.completed(pipeline.specs.model("tiny", "lex", "alibi/seed1"))
    view = pipeline.settings.paper_spec("tiny", "lex")
    assert (spec.gpus, spec.nodes, spec.backend) == (0, 1, "lenex")
    wider = dataclasses.replace(view, resources=StageResources(train=ResourcesSpec(gpus=4, nodes=2)))
    launched = pipeline.specs.launch(spec, wider)
    assert (launched.gpus, launched.nodes, launched.module) == (4, 2, "lenex.training.train")
    assert pipeline.settings.rule_resources("tiny", "train", "nodes", 1, "lex") == 1  # the settings' own view unchanged


def test_fairseq_under_the_receptive_field_preset_trains_through_fairseq(tmp_path, monkeypatch):
    """`papers.receptive-field.train.backend: fairseq` is honoured: its models train with fairseq on
    fairseq's binarized copy of their own corpus, the fairseq trainer's code stamp as input."""
    monkeypatch.setattr(fairseq_workflow, "require_fairseq", lambda: None)
    pipeline = scratch_config(tmp_path, RF_FAIRSEQ)
    spec = pipeline.specs.model("p", "receptive-field", "arxiv/alibi/seed1")
    assert (spec.backend, spec.module) == ("fairseq", "lenex.fairseq_backend.train")
    assert spec.launcher() == "python -m lenex.pipeline.launch lenex.fairseq_backend.train --bin results/p/data-fairseq/arxiv"
    inputs = pipeline.specs.inputs(spec)
    assert "results/p/data-fairseq/arxiv/train.bin" in inputs["data"] and "fairseq_backend.train" in inputs["code"]
    assert '"backend": "fairseq"' in spec.command(1)
    # its training job's curve file says it has none: fairseq's metrics are not lenex's trainer's
    assert not spec.records_curve
    assert spec.curve_command() == ("python -m lenex.pipeline.launch lenex.training.curve "
                                    "results/p/train/receptive-field/arxiv/alibi/seed1/metrics.jsonl "
                                    "results/p/curves/receptive-field/arxiv/alibi/seed1/curve.json --none "
                                    "'trained by the fairseq backend, whose metrics are not lenex'\"'\"'s trainer'\"'\"'s'")
    assert pipeline.specs.model("p", "lex", "alibi/seed1").backend == "lenex"  # the other papers as they were


def test_fairseq_continuing_a_checkpoint_is_refused_in_one_line(tmp_path):
    pipeline = scratch_config(tmp_path, SEGMENTED_FAIRSEQ)
    with pytest.raises(ValueError, match=r"config/presets/p.yaml: segmented bloom: train.backend 'fairseq' trains models "
                                         r"from scratch only; continued pretraining \(ootb\) runs lenex's trainer"):
        pipeline.specs.model("p", "segmented", "bloom/seed1/ootb")


def test_a_fairseq_backend_no_rule_can_honour_stops_the_dag_before_any_job(tmp_path):
    """The dry run of the segmented paper with `backend: fairseq` stops at once, naming the setting."""
    workdir = scratch_workflow(tmp_path)
    (workdir / "config").unlink()
    import shutil

    shutil.copytree(REPO / "config", workdir / "config")
    (workdir / "config/presets/tiny.yaml").write_text(SEGMENTED_FAIRSEQ.replace("name: p", "name: tiny"))
    run = snakemake("-n", "results/tiny/tables/segmented/table2.md", cwd=workdir)
    assert run.returncode != 0
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert errors and "train.backend 'fairseq' trains models from scratch only" in errors[0], run.stderr[-2000:]


def test_on_several_nodes_every_papers_trainings_ask_for_gpus_in_one_form(tmp_path):
    """The paper preset with every paper's trainings on 2 nodes (of its own GPUs a node): each is the
    multi-node variant of the one rule, asking SLURM for its GPUs in all (2 x a node's), each node's
    share, one task a node, and srun launching torchrun."""
    workdir = scratch_workflow(tmp_path)
    (workdir / "config").unlink()
    import shutil

    shutil.copytree(REPO / "config", workdir / "config")
    paper = (REPO / "config/presets/paper.yaml").read_text()
    text = paper.replace("nodes: 1", "nodes: 2")
    assert text.count("nodes: 2") == 3
    (workdir / "config/presets/paper.yaml").write_text(text)
    targets = ["results/paper/models/lex/alibi/seed1.pt", "results/paper/models/receptive-field/arxiv/alibi/seed1.pt",
               "results/paper/models/segmented/gpt2/seed1/ootb.pt"]
    run = snakemake("-n", "-p", "--forceall", *targets, cwd=workdir)
    assert run.returncode == 0, run.stderr[-3000:]
    trainings = [(rule, files, words) for rule, files, words in planned_jobs(run.stdout) if files[0] in targets]
    assert sorted(files[0] for _, files, _ in trainings) == sorted(targets)
    for rule, files, words in trainings:
        assert rule == "train_multinode", files
        assert "srun" in words and words[words.index("--nnodes") + 1] == "2", files
    blocks = {files[0]: block for block in run.stdout.split("\n\n") for files in [re.findall(r"output: (\S+)", block)]
              if files and files[0] in targets}
    for target, block in blocks.items():
        assert "gpu=" in block and "mpi=srun" in block and "nodes=2" in block, block
        gpus = int(re.search(r"gpu=(\d+)", block)[1])
        per_node = int(re.search(r"--gpus-per-node=(\d+)", block)[1])
        assert gpus == 2 * per_node and "gres=" not in block, block
    assert trained_models(run.stdout)


def test_each_paper_goes_to_the_rule_of_its_own_node_count(tmp_path):
    """A preset whose LEX trains on 2 nodes while the receptive-field paper keeps one: the training
    rule's constraint sends each (preset, paper) to its own rule, though a constraint sees one wildcard."""
    text = TINY.replace("  train: {threads: 1, mem_mb: 2000, runtime: 20}", "  train: {threads: 1, mem_mb: 2000, runtime: 20, gpus: 8, nodes: 2}", 1).replace(
        "  receptive-field:\n", "  receptive-field:\n    resources: {train: {gpus: 1, nodes: 1}}\n", 1)
    pipeline = scratch_config(tmp_path, text)
    several = re.compile(rf"results/(?:{pipeline.resources.presets_by_nodes(one_node=False)})/models/[a-z-]+/")
    one = re.compile(rf"results/(?:{pipeline.resources.presets_by_nodes(one_node=True)})/models/[a-z-]+/")
    assert several.match("results/p/models/lex/alibi/seed1.pt") and not one.match("results/p/models/lex/alibi/seed1.pt")
    rf = "results/p/models/receptive-field/arxiv/alibi/seed1.pt"
    assert one.match(rf) and not several.match(rf)
    assert one.match("results/tiny/models/lex/alibi/seed1.pt") and not several.match("results/tiny/models/lex/a/seed1.pt")
    assert pipeline.specs.model("p", "lex", "alibi/seed1").nodes == 2
    assert pipeline.specs.model("p", "receptive-field", "arxiv/alibi/seed1").nodes == 1
