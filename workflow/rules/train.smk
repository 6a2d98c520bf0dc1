# Pretraining stage: one model per (preset, paper, variant). The resumable state lives in
# results/<preset>/train/, outside the declared output, so a rerun after a crash (or a SLURM
# job that hit its time limit) resumes.
#
# How a training job starts follows the preset's `resources: train:` (gpus per node, nodes):
#   gpus <= 1, one node : python -m lenex.train ...
#   gpus  > 1, one node : torchrun --standalone --nproc_per_node <gpus> -m lenex.train ...
#   nodes > 1           : srun (one task per node) launching torchrun, rendezvous on the
#                         job's first node (rule train_multinode)
# Cluster-specific values (partition, account, cpus per GPU, slurm_extra) live in the profile.


def train_gpus(preset_name):
    return rule_resources(preset_name, "train", "gpus", 0)


def train_nodes(preset_name):
    return rule_resources(preset_name, "train", "nodes", 1)


def presets_where(test):
    names = sorted(p.stem for p in (CONFIG_DIR / "presets").glob("*.yaml"))
    return "|".join(n for n in names if test(n)) or "no-preset-matches"


def train_threads_per_process(wc, threads):
    # torch CPU threads of each training process: the job's cores shared among its processes.
    return max(1, threads // max(1, train_gpus(wc.preset)))


def train_launcher(wc):
    gpus = train_gpus(wc.preset)
    if gpus > 1:
        return f"torchrun --standalone --nproc_per_node {gpus} -m lenex.train"
    return "python -m lenex.train"


TRAIN_ARGS = (
    " --model-config {params.model} --train-config {params.train}"
    " --data {params.data} --out {output} --workdir {params.workdir}"
)


rule train:
    input:
        lambda wc: data_files(wc.preset, experiment(wc.paper)["train_corpus"]),
    output:
        "results/{preset}/models/{paper}/{variant}.pt",
    log:
        "results/{preset}/logs/train/{paper}/{variant}.log",
    wildcard_constraints:
        preset=presets_where(lambda name: train_nodes(name) == 1),
    conda:
        ENV
    threads: lambda wc: rule_resources(wc.preset, "train", "threads", 1)
    resources:
        mem_mb=lambda wc: rule_resources(wc.preset, "train", "mem_mb", 2000),
        runtime=lambda wc: rule_resources(wc.preset, "train", "runtime", 60),
        gpu=lambda wc: train_gpus(wc.preset),
    params:
        model=lambda wc: quoted_json(model_config(wc.preset, wc.paper, wc.variant)),
        train=lambda wc: quoted_json(preset(wc.preset)["train"]),
        data=lambda wc: f"results/{wc.preset}/data/{experiment(wc.paper)['train_corpus']}",
        workdir="results/{preset}/train/{paper}/{variant}",
        launcher=train_launcher,
        threads=train_threads_per_process,
    shell:
        "{params.launcher}" + TRAIN_ARGS + " --threads {params.threads} > {log} 2>&1"


# Multi-node data parallelism: SLURM gives `nodes` nodes with `gpus` GPUs each; `mpi` tells
# the SLURM executor not to wrap the command in its own srun, so the command's srun starts
# one torchrun per node, and the torchruns meet at the first node of the allocation.
rule train_multinode:
    input:
        lambda wc: data_files(wc.preset, experiment(wc.paper)["train_corpus"]),
    output:
        "results/{preset}/models/{paper}/{variant}.pt",
    log:
        "results/{preset}/logs/train/{paper}/{variant}.log",
    wildcard_constraints:
        preset=presets_where(lambda name: train_nodes(name) > 1),
    conda:
        ENV
    threads: lambda wc: rule_resources(wc.preset, "train", "threads", 1)
    resources:
        mem_mb=lambda wc: rule_resources(wc.preset, "train", "mem_mb", 2000),
        runtime=lambda wc: rule_resources(wc.preset, "train", "runtime", 60),
        nodes=lambda wc: train_nodes(wc.preset),
        tasks=lambda wc: train_nodes(wc.preset),
        tasks_per_gpu=0,
        gres=lambda wc: f"gpu:{train_gpus(wc.preset)}",
        mpi="srun",
    params:
        model=lambda wc: quoted_json(model_config(wc.preset, wc.paper, wc.variant)),
        train=lambda wc: quoted_json(preset(wc.preset)["train"]),
        data=lambda wc: f"results/{wc.preset}/data/{experiment(wc.paper)['train_corpus']}",
        workdir="results/{preset}/train/{paper}/{variant}",
        nodes=lambda wc: train_nodes(wc.preset),
        gpus=lambda wc: train_gpus(wc.preset),
        threads=train_threads_per_process,
    shell:
        "head_node=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1);"
        " srun --nodes {params.nodes} --ntasks-per-node 1 torchrun --nnodes {params.nodes}"
        " --nproc_per_node {params.gpus} --rdzv_backend c10d --rdzv_id $SLURM_JOB_ID"
        " --rdzv_endpoint $head_node:29500 -m lenex.train"
        + TRAIN_ARGS
        + " --threads {params.threads} > {log} 2>&1"
