# Pretraining stage: one model per (preset, paper, variant). The resumable state lives in
# results/<preset>/train/, outside the declared output, so a rerun after a crash (or a SLURM
# job that hit its time limit) resumes.
#
# How a training job starts follows the preset's `resources: train:` (gpus per node, nodes):
#   gpus <= 1, one node : python -m lenex.pipeline.launch lenex.train ... (lenex.pipeline.launch: docs/pipeline-speed.md)
#   gpus  > 1, one node : torchrun --standalone --nproc_per_node <gpus> -m lenex.train ...
#   nodes > 1           : srun (one task per node) launching torchrun, rendezvous on the
#                         job's first node (rule train_multinode)
# Cluster-specific values (partition, account, cpus per GPU, slurm_extra) live in the profile.

# Presets whose trainings span one node / several nodes (each preset goes to one rule).
PRESETS_BY_NODES = {
    name: preset(name)["resources"].get("train", {}).get("nodes", 1)
    for name in PRESET_NAMES
}
ONE_NODE_PRESETS = "|".join(n for n, k in PRESETS_BY_NODES.items() if k == 1) or "-"
MULTI_NODE_PRESETS = "|".join(n for n, k in PRESETS_BY_NODES.items() if k > 1) or "-"


rule train:
    input:
        lambda wc: data_files(wc.preset, training_corpus(wc.paper))
        + scheme_files(wc.paper, wc.variant)
        + backend_inputs(wc.preset, wc.paper, train_backend(wc.preset, wc.paper)),
    output:
        "results/{preset}/models/{paper}/{variant}.pt",
    log:
        "results/{preset}/logs/train/{paper}/{variant}.log",
    wildcard_constraints:
        preset=ONE_NODE_PRESETS,
    conda:
        ENV
    threads: stage_threads("train")
    resources:
        **stage_resources("train"),
    params:
        model=lambda wc: quoted_json(model_config(wc.preset, wc.paper, wc.variant)),
        train=lambda wc: quoted_json(paper_preset(wc.preset, wc.paper)["train"]),
        data=lambda wc: f"results/{wc.preset}/data/{training_corpus(wc.paper)}",
        workdir="results/{preset}/train/{paper}/{variant}",
        threads=process_threads(),
        # lenex.train, under torchrun for several GPUs, or fairseq-train (fairseq.smk)
        launcher=lambda wc: train_launcher(
            wc.preset, wc.paper, train_backend(wc.preset, wc.paper)
        ),
    shell:
        "{params.launcher} --model-config {params.model} --train-config {params.train}"
        " --data {params.data} --out {output} --workdir {params.workdir}"
        " --threads {params.threads} > {log} 2>&1"


# Multi-node data parallelism: SLURM gives `nodes` nodes with `gpus` GPUs each; `mpi` tells
# the SLURM executor not to wrap the command in its own srun, so the launcher's srun starts
# one torchrun per node (multinode_launcher). Resources replace the train rule's (no `gpu`).
use rule train as train_multinode with:
    input:
        lambda wc: data_files(wc.preset, training_corpus(wc.paper))
        + scheme_files(wc.paper, wc.variant),
    wildcard_constraints:
        preset=MULTI_NODE_PRESETS,
    resources:
        mem_mb=stage_setting("train", "mem_mb", STAGE_DEFAULTS["train"]["mem_mb"]),
        runtime=stage_setting("train", "runtime", STAGE_DEFAULTS["train"]["runtime"]),
        nodes=stage_setting("train", "nodes", 1),
        tasks=stage_setting("train", "nodes", 1),
        tasks_per_gpu=0,
        gres=lambda wc: f"gpu:{train_gpus(wc.preset, wc.paper)}",
        mpi="srun",
    params:
        launcher=lambda wc: multinode_launcher(wc.preset, wc.paper),
