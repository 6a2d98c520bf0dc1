# Pretraining stage: the one rule that trains a model of any paper. A model is named by its
# checkpoint's path under results/<preset>/models/<paper>/ (LEX: <variant>/seed<s>; the
# receptive-field paper: <corpus>/<variant>/seed<s>; the segmented paper: pretrained/<model> and
# <model>/seed<s>/<run>); its paper turns the path into its spec (lenex.pipeline.specs.ModelSpec:
# configs, data, labels, backend, launcher, GPUs, nodes), which gives the job's inputs and command.
# The scale study's and the sweeps' points train here too, at results/scale-study/models/study/<point>
# and models/sweeps/<sweep>/<point> (specs: lenex.scale_study.studies; only with their config flags).
# Seed s trains with the paper's training seed + s - 1 (Paper.train_config). The resumable state
# lives in results/<preset>/train/, outside the declared output, so a rerun after a crash (or a
# SLURM job that hit its time limit) resumes. The same job then writes the model's training curve
# (lenex.training.curve, docs/curves.md: its loss against the tokens it has seen, from the
# metrics.jsonl its trainer left in its work folder, tokens per step from its checkpoint), read by
# its paper's diagnostics (Recorded.curve_files) and kept in its raw results; one job a model, not
# two: a curve is a few milliseconds of work, and a job of its own costs Snakemake more than that.
#
# How a training starts follows the preset's `resources: train:` and `train: backend:`, for every
# paper alike (lenex.pipeline.specs.Specs.launch):
#   gpus <= 1, one node : python -m lenex.pipeline.launch <trainer> ... (docs/pipeline-speed.md)
#   gpus  > 1, one node : torchrun --standalone --nproc_per_node <gpus> -m <trainer> ...
#   nodes > 1           : srun (one task per node) launching torchrun, rendezvous on the
#                         job's first node (rule train_multinode)
#   backend fairseq     : lenex.fairseq_backend.train, on one node (docs/fairseq.md)
# What a job asks a cluster for (GPUs, CPUs per GPU, memory, time, nodes) is declared here, from
# the preset (lenex.pipeline.resources), with the training's own sbatch flags (slurm_extra: the
# SIGTERM lead its save needs, whole nodes where the preset says); cluster-specific values
# (partition, account, retries) live in the profile.
from lenex.fairseq_backend import workflow as fairseq


rule train:
    input:
        unpack(lambda wc: pipeline.specs.inputs(pipeline.specs.of(wc))),
    output:
        model="results/{preset}/models/{paper}/{model}.pt",
        curve="results/{preset}/curves/{paper}/{model}/curve.json",
    log:
        "results/{preset}/logs/train/{paper}/{model}.log",
    wildcard_constraints:
        preset=pipeline.resources.presets_by_nodes(one_node=True),
        model=r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*",
    conda:
        ENV
    threads: pipeline.resources.stage_threads("train")
    resources:
        **pipeline.resources.stage_resources("train"),
    params:
        # checked now (lenex.pipeline.dag_checks): a bad config stops the DAG, the old model stays
        command=lambda wc, threads: pipeline.specs.of(wc).command(threads),
        curve=lambda wc: pipeline.specs.of(wc).curve_command(),
    shell:
        "{params.command} > {log} 2>&1 && {params.curve} >> {log} 2>&1"


# Multi-node data parallelism: SLURM gives `nodes` nodes with `gpus` GPUs each; `mpi` tells
# the SLURM executor not to wrap the command in its own srun, so the launcher's srun starts
# one torchrun per node.
use rule train as train_multinode with:
    wildcard_constraints:
        preset=pipeline.resources.presets_by_nodes(one_node=False),
        model=r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*",
    resources:
        **pipeline.resources.multinode_resources(),
