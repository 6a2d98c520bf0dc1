# Pretraining stage: one model per (preset, paper, variant, seed): seed s trains with the paper's
# training seed + s - 1 (its Paper.train_config), seeds 1..n from the preset (Paper.seeds). The resumable state lives in
# results/<preset>/train/, outside the declared output, so a rerun after a crash (or a SLURM
# job that hit its time limit) resumes.
#
# How a training job starts follows the preset's `resources: train:` (gpus per node, nodes):
#   gpus <= 1, one node : python -m lenex.pipeline.launch lenex.training.train ... (docs/pipeline-speed.md)
#   gpus  > 1, one node : torchrun --standalone --nproc_per_node <gpus> -m lenex.training.train ...
#   nodes > 1           : srun (one task per node) launching torchrun, rendezvous on the
#                         job's first node (rule train_multinode)
# What a job asks a cluster for (GPUs, CPUs per GPU, memory, time) is declared here, from the
# preset (lenex.pipeline.resources), with the training's own sbatch flags (slurm_extra: the SIGTERM
# lead its save needs, whole nodes where the preset says); cluster-specific values (partition,
# account, retries) live in the profile. The launcher and inputs of another backend: lenex.fairseq_backend.workflow.
from lenex.fairseq_backend import workflow as fairseq


rule train:
    input:
        lambda wc: pipeline.paths.data_files(
            wc.preset, pipeline.paths.training_corpus(wc.preset, wc.paper)
        )
        + pipeline.settings.scheme_files(wc.paper, wc.variant)
        + fairseq.backend_inputs(pipeline, wc.preset, wc.paper),
        code=lambda wc: fairseq.train_code(pipeline, wc.preset, wc.paper, wc.variant),
    output:
        "results/{preset}/models/{paper}/{variant}/seed{seed}.pt",
    log:
        "results/{preset}/logs/train/{paper}/{variant}/seed{seed}.log",
    wildcard_constraints:
        preset=pipeline.resources.presets_by_nodes(one_node=True),
    conda:
        ENV
    threads: pipeline.resources.stage_threads("train")
    resources:
        **pipeline.resources.stage_resources("train"),
    params:
        model=lambda wc: quoted_json(
            pipeline.settings.model_config(wc.preset, wc.paper, wc.variant)
        ),
        # checked now (lenex.pipeline.dag_checks): a bad config stops the DAG, the old model stays
        train=lambda wc: pipeline.checks.checked_train(
            wc.preset,
            wc.paper,
            wc.variant,
            pipeline.settings.paper(wc.paper).train_config(
                pipeline.settings, wc.preset, wc.variant, wc.seed
            ),
            pipeline.paths.training_data(wc.preset, wc.paper),
        ),
        identity=lambda wc: pipeline.identities.identity(
            wc.preset, wc.paper, wc.variant
        ),
        data=lambda wc: pipeline.paths.training_data(wc.preset, wc.paper),
        workdir="results/{preset}/train/{paper}/{variant}/seed{seed}",
        threads=pipeline.resources.process_threads(),
        # lenex.training.train, under torchrun for several GPUs, or fairseq-train (fairseq.smk)
        launcher=lambda wc: fairseq.train_launcher(pipeline, wc.preset, wc.paper),
    shell:
        "{params.launcher} --model-config {params.model} --train-config {params.train}"
        " --data {params.data} --out {output} --workdir {params.workdir}"
        " --threads {params.threads} --identity {params.identity} > {log} 2>&1"


# Multi-node data parallelism: SLURM gives `nodes` nodes with `gpus` GPUs each; `mpi` tells
# the SLURM executor not to wrap the command in its own srun, so the launcher's srun starts
# one torchrun per node (multinode_launcher). Resources replace the train rule's (no `gpu`).
use rule train as train_multinode with:
    input:
        lambda wc: pipeline.paths.data_files(
            wc.preset, pipeline.paths.training_corpus(wc.preset, wc.paper)
        )
        + pipeline.settings.scheme_files(wc.paper, wc.variant),
        code=lambda wc: pipeline.code.stamp(
            "lenex.training.train", wc.preset, wc.paper, wc.variant
        ),
    wildcard_constraints:
        preset=pipeline.resources.presets_by_nodes(one_node=False),
    resources:
        mem_mb=pipeline.resources.stage_setting("train", "mem_mb"),
        runtime=pipeline.resources.stage_setting("train", "runtime"),
        nodes=pipeline.resources.stage_setting("train", "nodes", 1),
        tasks=pipeline.resources.stage_setting("train", "nodes", 1),
        tasks_per_gpu=0,
        gres=lambda wc: f"gpu:{pipeline.resources.train_gpus(wc.preset, wc.paper)}",
        cpus_per_gpu=lambda wc: pipeline.resources.stage_resources_at(
            wc.preset, "train", wc.paper
        )["cpus_per_gpu"],
        mpi="srun",
        slurm_extra=lambda wc: pipeline.resources.train_slurm_extra(wc.preset, wc.paper),
    params:
        launcher=lambda wc: pipeline.resources.multinode_launcher(wc.preset, wc.paper),
